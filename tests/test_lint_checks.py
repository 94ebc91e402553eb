"""Deterministic checks: what they are sure of, and what they leave to the judge."""

from __future__ import annotations

import textwrap

import pytest

from seams.lint.checks import SECRET_PATTERNS, irreversible_migration, secret_or_debug, swallowed_error
from seams.lint.units import Unit, hunk_units


def unit(code: str, *, path: str = "m.py", start: int = 1, kind: str = "function") -> Unit:
    code = textwrap.dedent(code).strip("\n")
    return Unit(path, kind, "f", start, start + len(code.splitlines()) - 1, code)


@pytest.mark.parametrize("handler", ["except:", "except Exception:", "except (ValueError, Exception) as e:",
                                     "except builtins.BaseException:"])
def test_broad_except_doing_nothing_is_certain(handler: str) -> None:
    hits = swallowed_error(unit(f"""
        def f():
            try:
                go()
            {handler}
                pass
        """, start=10))
    assert [(h.line, h.end_line) for h in hits] == [(13, 14)]


@pytest.mark.parametrize(("handler", "body", "why"), [
    ("except Exception:", "return None", "returns None"),
    ("except Exception as exc:", "return", "returns None"),
    ("except:", "pass\n        return None", "returns None"),
    ("except (ValueError, KeyError):", "...", "swallows all of them"),
    ("except (OSError, json.JSONDecodeError) as e:", "pass", "swallows all of them"),
])
def test_silent_none_and_several_types_dropped_are_certain(handler: str, body: str, why: str) -> None:
    hits = swallowed_error(unit(f"def f():\n    try:\n        go()\n    {handler}\n        {body}\n", start=5))
    assert len(hits) == 1 and hits[0].line == 8 and why in hits[0].message, hits


def test_several_types_dropped_with_a_reason_written_down_are_left() -> None:
    said = "def f():\n    try:\n        go()\n    except (OSError, ValueError):\n        pass  # a damaged entry is asked again\n"
    assert swallowed_error(unit(said)) == []
    pragma = said.replace("# a damaged entry is asked again", "# pragma: no cover")
    assert len(swallowed_error(unit(pragma))) == 1  # a pragma says nothing about why
    broad = said.replace("(OSError, ValueError)", "Exception")
    assert len(swallowed_error(unit(broad))) == 1  # a broad handler that does nothing is flagged regardless


@pytest.mark.parametrize("body", [
    "except KeyError:\n        pass",               # narrow: may be the point; the judge reads it
    "except (ValueError, KeyError):\n        return None",  # narrow parse-or-None: the judge reads it
    "except Exception:\n        return default",
    "except Exception:\n        log.exception('x')\n        return None",
    "except Exception:\n        log.exception('x')",
    "except Exception:\n        raise",
    "except Exception as e:\n        return Err(e)",
])
def test_what_the_check_leaves_to_the_judge(body: str) -> None:
    assert swallowed_error(unit(f"def f():\n    try:\n        go()\n    {body}\n")) == []


def test_secret_shapes_and_names() -> None:  # seams: ignore[secret-or-debug] (fake secrets, on purpose)
    code = '''
        def connect():
            key = "AKIAABCDEFGHIJKLMNOP"
            password = "hunter2hunter2"
            db = Client(api_key="sk_live_0123456789abcdefgh", timeout=3)
            cfg = {"secret": "s3cr3t-v4lue-99"}
            return db
        '''
    hits = secret_or_debug(unit(code))
    assert [h.line for h in hits] == [2, 3, 4, 5]
    assert "AWS access key id" in hits[0].message and "`password`" in hits[1].message


def test_lint_and_the_memory_gate_share_one_table_of_key_formats():  # seams: ignore[secret-or-debug] (fake secrets, on purpose)
    # one place for each concept: a key format added for the memory gate is one lint catches too
    from seams.secrets import KEY_FORMATS, find_secrets

    assert {f.label for f in KEY_FORMATS} == set(SECRET_PATTERNS)
    text = "GH = \"ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\""
    assert [f.kind for f in find_secrets(text)] == ["github_token"]
    assert "GitHub token" in secret_or_debug(unit(text))[0].message


@pytest.mark.parametrize("line", [
    'password = os.environ["DB_PASSWORD"]',
    'token = ""',
    'PASSWORD_ENV = "DB_PASSWORD_VALUE"',   # holds a variable's name, not a secret
    'api_key = "<your key here>"',
    'secret = "changeme"',
    'token = get_token()',
    'password_field = "password_input_1"',
])
def test_not_secrets(line: str) -> None:
    assert secret_or_debug(unit(line, kind="statements")) == []


def test_credentials_in_urls_and_bearer_tokens() -> None:  # seams: ignore[secret-or-debug]
    hits = secret_or_debug(unit('''
        DB = "postgresql://admin:Pr0d-Passw0rd@db.internal/app"
        OK = "postgresql://app@db.internal/app"
        TEMPLATE = "postgresql://${USER}:${PASSWORD}@db/app"
        H = {"Authorization": "Bearer 9f8e7d6c5b4a39281726354433221100"}
        F = {"Authorization": f"Bearer {token}"}
        ''', kind="statements"))
    assert [h.line for h in hits] == [1, 4]


def test_debug_switches_and_debuggers() -> None:
    code = '''
        import pdb
        DEBUG = True
        APP_DEBUG = False
        app.run(debug=True)
        breakpoint()
        pdb.set_trace()
        '''
    hits = secret_or_debug(unit(code, kind="statements"))
    assert [h.line for h in hits] == [1, 2, 4, 5, 6]


def test_text_files_by_pattern() -> None:
    text = "name: app\ndebug: true\ndb:\n  password: Pr0dPassw0rd!\n  user: app\nkey: ${API_KEY}\n"
    (u,) = hunk_units("config.yaml", text, {2, 4, 6})
    assert [h.line for h in secret_or_debug(u)] == [2, 4]


def test_alembic_drop_with_empty_downgrade_and_django_runpython() -> None:
    mod = '''
        from alembic import op

        def upgrade():
            op.drop_column("users", "email")

        def downgrade():
            pass
        '''
    hits = irreversible_migration(unit(mod, path="migrations/versions/1.py", kind="module"))
    assert len(hits) == 1 and "drop_column" in hits[0].message and hits[0].line == 6
    reversible = mod.replace("pass", 'op.add_column("users", sa.Column("email", sa.String()))')
    assert irreversible_migration(unit(reversible, path="migrations/versions/1.py", kind="module")) == []
    django = "operations = [migrations.RunPython(forwards)]\n"
    assert len(irreversible_migration(unit(django, kind="module"))) == 1
    assert irreversible_migration(unit("operations = [migrations.RunPython(forwards, backwards)]", kind="module")) == []
