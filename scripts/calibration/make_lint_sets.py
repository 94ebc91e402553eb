"""Write the labelled sets of the built-in lint rules: `calibration/lint/<rule>.jsonl`.

Hand-written templates, varied deterministically (seeded): for each rule, code units that break
it and units that look alike but do not (same names, same shapes, the one difference that
matters). Every unit is cut out of a file by `seams.lint.units`, so each state is exactly what
`seams lint` sends to the judge (kind, name, path, code). Some positives are ones the
deterministic checks catch and the judge never sees; `evaluate.py` reports the judge on every
item and the whole pipeline (checks, prefilter, judge) separately.

Run: `python scripts/calibration/make_lint_sets.py` (rewrites the four files; same output every time).
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

from seams.lint.units import hunk_units, python_units

HERE = Path(__file__).resolve().parents[2] / "calibration" / "lint"  # the lint sets
SEED = 7


def unit_state(path: str, code: str, kind: str) -> dict[str, str]:
    code = textwrap.dedent(code).strip("\n") + "\n"
    if path.endswith(".py"):
        units = [u for u in python_units(path, code, (kind,)) if u.kind == kind]
    else:
        units = hunk_units(path, code, range(1, len(code.splitlines()) + 1), context=0)
    assert len(units) == 1, (path, code, units)
    return units[0].state()


def write(name: str, items: list[dict]) -> None:
    with open(HERE / f"{name}.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    pos = sum(any(item["labels"].values()) for item in items)
    print(f"{name}: {len(items)} items, {pos} positive, {len(items) - pos} negative")


# --------------------------------------------------------------------------- swallowed-error

SWALLOW_FUNCS = [
    ("load_config", "path", "return yaml.safe_load(open(path))", "OSError"),
    ("send_invoice", "invoice", "return mailer.send(invoice.to, invoice.render())", "SMTPException"),
    ("charge_card", "order", "return gateway.charge(order.card, order.total)", "PaymentError"),
    ("parse_row", "row", "return Record(int(row[0]), row[1].strip())", "ValueError"),
    ("fetch_user", "user_id", "return api.get(f'/users/{user_id}').json()", "HTTPError"),
    ("write_cache", "key, value", "redis.set(key, pickle.dumps(value))", "RedisError"),
    ("delete_account", "account", "db.session.delete(account)\n        db.session.commit()", "SQLAlchemyError"),
    ("sync_inventory", "store", "return warehouse.push(store.stock())", "TimeoutError"),
    ("upload_report", "report", "bucket.upload(report.path, report.key)", "ClientError"),
    ("refresh_token", "session", "session.token = auth.refresh(session.refresh_token)", "AuthError"),
    ("import_orders", "csv_path", "return [Order.from_row(r) for r in read_csv(csv_path)]", "KeyError"),
    ("notify_admin", "event", "slack.post(channel='#ops', text=event.summary)", "SlackApiError"),
]

SWALLOW_POS = [
    "except Exception:\n        pass",
    "except:\n        pass",
    "except {exc}:\n        pass",
    "except Exception as e:\n        return None",
    "except ({exc}, Exception):\n        ...",
    "except Exception as err:\n        err = None",
    "except {exc} as e:\n        del e",
    "except Exception:\n        return []",
    "except BaseException:\n        return False",
    "except {exc}:\n        return",
]

SWALLOW_NEG = [
    "except {exc} as e:\n        raise RuntimeError('{name} failed') from e",
    "except {exc}:\n        logger.exception('{name} failed')\n        raise",
    "except {exc} as e:\n        logger.error('{name} failed: %s', e)\n        return Result.failure(str(e))",
    "except {exc} as e:\n        metrics.increment('{name}.errors')\n        raise ServiceError('{name}') from e",
    "except {exc} as e:\n        log.warning('{name}: retrying after %s', e)\n        time.sleep(1)\n        return {name}_with_retry()",
    "except {exc} as e:\n        alert.page(oncall, f'{name} failed: {{e}}')\n        raise",
    "except {exc} as e:\n        raise HTTPException(status_code=502, detail=str(e))",
    "except {exc} as e:\n        errors.append(('{name}', e))\n        return errors",
    "except {exc}:\n        rollback()\n        raise",
    "except {exc} as e:\n        sentry_sdk.capture_exception(e)\n        raise",
]


def swallowed_items(rng: random.Random) -> list[dict]:
    items = []
    for label, variants in ((True, SWALLOW_POS), (False, SWALLOW_NEG)):
        for i in range(30):
            name, args, body, exc = SWALLOW_FUNCS[(i * 5 + (0 if label else 3)) % len(SWALLOW_FUNCS)]
            handler = variants[i % len(variants)].format(exc=exc, name=name)
            method = rng.random() < 0.3
            code = f"def {name}({'self, ' if method else ''}{args}):\n    try:\n        {body}\n    {handler}\n"
            if method:
                code = "class Service:\n" + textwrap.indent(code, "    ")
            path = f"app/services/{name.split('_')[-1]}.py"
            state = unit_state(path, code, "method" if method else "function")
            items.append({"id": f"swallowed-{'pos' if label else 'neg'}-{i:02d}", "state": state,
                          "labels": {"swallowed": label}})
    return items


# --------------------------------------------------------------------------- name-mismatch

# (name, args, body that does what the name says, body that does something else)
NAME_PAIRS = [
    ("get_user", "user_id", "return db.query(User).get(user_id)",
     "user = db.query(User).get(user_id)\n    db.delete(user)\n    db.commit()\n    return user"),
    ("is_valid_email", "address", "return EMAIL_RE.fullmatch(address) is not None",
     "mailer.send(address, 'Welcome!')\n    return True"),
    ("calculate_total", "cart", "return sum(item.price * item.qty for item in cart.items)",
     "total = sum(item.price * item.qty for item in cart.items)\n    cart.items.clear()\n    cart.save()\n    return total"),
    ("save_settings", "settings, path", "with open(path, 'w') as fh:\n        json.dump(settings, fh)",
     "with open(path) as fh:\n        return json.load(fh)"),
    ("sort_by_date", "events", "return sorted(events, key=lambda e: e.date)",
     "return [e for e in events if e.date > today()]"),
    ("count_active_users", "users", "return sum(1 for u in users if u.active)",
     "return [u.name for u in users if u.active]"),
    ("close_connection", "conn", "conn.close()",
     "return psycopg.connect(conn.dsn)"),
    ("to_uppercase", "text", "return text.upper()",
     "return text.lower()"),
    ("read_log", "path", "with open(path) as fh:\n        return fh.read()",
     "with open(path, 'w') as fh:\n        fh.write('')"),
    ("has_permission", "user, action", "return action in user.role.permissions",
     "user.role.permissions.add(action)\n    return True"),
    ("list_files", "folder", "return sorted(p.name for p in Path(folder).iterdir())",
     "for p in Path(folder).iterdir():\n        p.unlink()"),
    ("average", "values", "return sum(values) / len(values)",
     "return max(values)"),
    ("format_price", "cents", "return f'${cents / 100:.2f}'",
     "db.execute('UPDATE prices SET cents = ?', (cents,))"),
    ("disable_account", "account", "account.enabled = False\n    account.save()",
     "account.enabled = True\n    account.save()"),
    ("validate_order", "order", "if order.qty <= 0:\n        raise ValueError('quantity must be positive')\n    return order",
     "order.status = 'shipped'\n    shipping.dispatch(order)\n    return order"),
    ("parse_date", "text", "return datetime.strptime(text, '%Y-%m-%d').date()",
     "return requests.post(WEBHOOK, json={'date': text})"),
]


def name_items(rng: random.Random) -> list[dict]:
    items = []
    for label in (True, False):
        for i in range(32):
            name, args, good, bad = NAME_PAIRS[i % len(NAME_PAIRS)]
            body = bad if label else good
            method = i >= len(NAME_PAIRS)  # the second pass puts each as a method
            code = f"def {name}({'self, ' if method else ''}{args}):\n    {body}\n"
            if method:
                code = "class Manager:\n" + textwrap.indent(code, "    ")
            state = unit_state(f"app/{name.split('_')[0]}.py", code, "method" if method else "function")
            items.append({"id": f"name-{'pos' if label else 'neg'}-{i:02d}", "state": state,
                          "labels": {"mismatch": label}})
    return items


# --------------------------------------------------------------------------- irreversible-migration

TABLES = [("users", "email"), ("orders", "coupon_code"), ("invoices", "tax_id"), ("products", "legacy_sku"),
          ("sessions", "ip_address"), ("payments", "card_last4"), ("teams", "slack_webhook")]

ALEMBIC_HEAD = 'from alembic import op\nimport sqlalchemy as sa\n\nrevision = "{rev}"\ndown_revision = "{down}"\n\n\n'

MIG_POS = [
    "def upgrade():\n    op.drop_column('{t}', '{c}')\n\n\ndef downgrade():\n    pass\n",
    "def upgrade():\n    op.drop_table('{t}')\n\n\ndef downgrade():\n    raise NotImplementedError('cannot restore {t}')\n",
    "def upgrade():\n    op.execute(\"DELETE FROM {t} WHERE created_at < now() - interval '1 year'\")\n\n\ndef downgrade():\n    pass\n",
    "def upgrade():\n    op.execute('UPDATE {t} SET {c} = NULL')\n\n\ndef downgrade():\n    pass\n",
    "def upgrade():\n    op.execute('TRUNCATE TABLE {t}')\n\n\ndef downgrade():\n    pass\n",
    "def upgrade():\n    op.drop_column('{t}', '{c}')\n\n\ndef downgrade():\n    op.add_column('{t}', sa.Column('{c}', sa.String(), nullable=True))\n",
    "def upgrade():\n    op.execute('DROP TABLE {t} CASCADE')\n",
]
MIG_NEG = [
    "def upgrade():\n    op.add_column('{t}', sa.Column('{c}', sa.String(), nullable=True))\n\n\ndef downgrade():\n    op.drop_column('{t}', '{c}')\n",
    "def upgrade():\n    op.create_table('{t}_archive', sa.Column('id', sa.Integer(), primary_key=True))\n\n\ndef downgrade():\n    op.drop_table('{t}_archive')\n",
    "def upgrade():\n    op.alter_column('{t}', '{c}', new_column_name='{c}_old')\n\n\ndef downgrade():\n    op.alter_column('{t}', '{c}_old', new_column_name='{c}')\n",
    "def upgrade():\n    op.create_index('ix_{t}_{c}', '{t}', ['{c}'])\n\n\ndef downgrade():\n    op.drop_index('ix_{t}_{c}', table_name='{t}')\n",
    "def upgrade():\n    op.execute('CREATE TABLE {t}_backup AS SELECT * FROM {t}')\n    op.drop_column('{t}', '{c}')\n\n\ndef downgrade():\n    op.add_column('{t}', sa.Column('{c}', sa.String()))\n    op.execute('UPDATE {t} SET {c} = b.{c} FROM {t}_backup b WHERE b.id = {t}.id')\n",
    "def upgrade():\n    op.alter_column('{t}', '{c}', nullable=True)\n\n\ndef downgrade():\n    op.alter_column('{t}', '{c}', nullable=False)\n",
]
SQL_POS = ["DROP TABLE {t};", "ALTER TABLE {t} DROP COLUMN {c};", "DELETE FROM {t} WHERE {c} IS NULL;",
           "UPDATE {t} SET {c} = lower({c});", "TRUNCATE {t};"]
SQL_NEG = ["ALTER TABLE {t} ADD COLUMN {c} TEXT;", "CREATE INDEX ix_{t}_{c} ON {t} ({c});",
           "CREATE TABLE {t}_audit (id SERIAL PRIMARY KEY, changed_at TIMESTAMP);",
           "ALTER TABLE {t} RENAME COLUMN {c} TO {c}_v2;", "ALTER TABLE {t} ALTER COLUMN {c} DROP NOT NULL;"]
DJANGO_POS = [
    "operations = [\n    migrations.RemoveField(model_name='{m}', name='{c}'),\n]",
    "operations = [\n    migrations.DeleteModel(name='{M}'),\n]",
    "operations = [\n    migrations.RunPython(clear_{c}),\n]",
]
DJANGO_NEG = [
    "operations = [\n    migrations.AddField(model_name='{m}', name='{c}', field=models.CharField(max_length=64, null=True)),\n]",
    "operations = [\n    migrations.RunPython(fill_{c}, reverse_code=clear_{c}),\n]",
    "operations = [\n    migrations.RenameField(model_name='{m}', old_name='{c}', new_name='{c}_v2'),\n]",
]
DJANGO_HEAD = "from django.db import migrations, models\n\n\nclass Migration(migrations.Migration):\n    dependencies = [('shop', '{down}')]\n\n"


def migration_items(rng: random.Random) -> list[dict]:
    items = []
    n = 0
    for label, alembic, sql, django in ((True, MIG_POS, SQL_POS, DJANGO_POS), (False, MIG_NEG, SQL_NEG, DJANGO_NEG)):
        for i in range(30):
            t, c = TABLES[(i + (0 if label else 3)) % len(TABLES)]
            rev, down = f"{rng.randrange(16**12):012x}", f"{rng.randrange(16**12):012x}"
            style = i % 3
            if style == 0:
                code = ALEMBIC_HEAD.format(rev=rev, down=down) + alembic[i // 3 % len(alembic)].format(t=t, c=c)
                state = unit_state(f"migrations/versions/{rev}_{t}.py", code, "module")
            elif style == 1:
                stmt = sql[i // 3 % len(sql)].format(t=t, c=c)
                code = f"-- migrate: {t}\nBEGIN;\n{stmt}\nCOMMIT;\n"
                state = unit_state(f"db/migrations/{i + 10:04d}_{t}.up.sql", code, "hunk")
            else:
                m = t.rstrip("s")
                ops = django[i // 3 % len(django)].format(m=m, M=m.title(), c=c)
                code = DJANGO_HEAD.format(down=f"00{i:02d}_auto") + textwrap.indent(ops, "    ") + "\n"
                state = unit_state(f"shop/migrations/00{i + 10:02d}_{m}.py", code, "module")
            items.append({"id": f"migration-{'pos' if label else 'neg'}-{i:02d}", "state": state,
                          "labels": {"irreversible": label}})
            n += 1
    return items


# --------------------------------------------------------------------------- secret-or-debug

SECRET_POS = [  # (code, kind, path, secret, debug)   seams: ignore[secret-or-debug] (fake secrets, on purpose)
    ("DATABASE_URL = 'postgresql://admin:Pr0d-Passw0rd@db.internal:5432/app'\n", "statements", "app/settings.py", True, False),
    ("def client():\n    return Client(username='deploy', password='w1nter-Is-C0ming')\n", "function", "app/clients.py", True, False),
    ("HEADERS = {'Authorization': 'Bearer 9f8e7d6c5b4a39281726354433221100ffeeddcc'}\n", "statements", "app/api.py", True, False),
    ("def s3():\n    return boto3.client('s3', aws_access_key_id='AKIAIOSFODNN7EXAMPLE',\n                        aws_secret_access_key='wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')\n", "function", "app/storage.py", True, False),
    ("STRIPE_KEY = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'\n", "statements", "app/billing.py", True, False),
    ("def connect():\n    return pymysql.connect(host='db', user='root', passwd='toor1234!', db='shop')\n", "function", "app/db.py", True, False),
    ("smtp:\n  host: smtp.example.org\n  password: Tr0ub4dor&3\n", "hunk", "config/mail.yaml", True, False),
    ('{"service": "search", "api_key": "8f14e45fceea167a5a36dedd4bea2543"}\n', "hunk", "config/search.json", True, False),
    ("def sign(payload):\n    return jwt.encode(payload, 'my-very-secret-signing-key-123', algorithm='HS256')\n", "function", "app/auth.py", True, False),
    ("SLACK_WEBHOOK = 'https://hooks.slack.com/services/T000/B000/XXXXabcdEFGH1234ijkl'\n", "statements", "app/notify.py", True, False),
    ("DEBUG = True\nALLOWED_HOSTS = ['*']\n", "statements", "app/settings.py", False, True),
    ("if __name__ == '__main__':\n    app.run(host='0.0.0.0', debug=True)\n", "statements", "app/main.py", False, True),
    ("def handle(request):\n    import pdb; pdb.set_trace()\n    return process(request)\n", "function", "app/views.py", False, True),
    ("def total(items):\n    breakpoint()\n    return sum(i.price for i in items)\n", "function", "app/cart.py", False, True),
    ("logging:\n  level: DEBUG\ndebug: true\n", "hunk", "config/prod.yaml", False, True),
    ("def login(user, password):\n    print('DEBUG login', user, password)\n    return auth.check(user, password)\n", "function", "app/auth.py", False, True),
    ("app.config['DEBUG'] = True\napp.config['PROPAGATE_EXCEPTIONS'] = True\n", "statements", "app/factory.py", False, True),
    ("FLASK_ENV=development\nFLASK_DEBUG=1\n", "hunk", "deploy/.env.prod", False, True),
]
SECRET_NEG = [
    ("DATABASE_URL = os.environ['DATABASE_URL']\n", "statements", "app/settings.py"),
    ("def client():\n    return Client(username=os.environ['DEPLOY_USER'], password=os.environ['DEPLOY_PASSWORD'])\n", "function", "app/clients.py"),
    ("def headers(token):\n    return {'Authorization': f'Bearer {token}'}\n", "function", "app/api.py"),
    ("def s3():\n    return boto3.client('s3')  # credentials from the instance role\n", "function", "app/storage.py"),
    ("STRIPE_KEY = settings.STRIPE_KEY\n", "statements", "app/billing.py"),
    ("def connect():\n    return pymysql.connect(host='db', user='app', passwd=keyring.get_password('shop', 'app'), db='shop')\n", "function", "app/db.py"),
    ("smtp:\n  host: smtp.example.org\n  password: ${SMTP_PASSWORD}\n", "hunk", "config/mail.yaml"),
    ('{"service": "search", "api_key_env": "SEARCH_API_KEY"}\n', "hunk", "config/search.json"),
    ("def sign(payload):\n    return jwt.encode(payload, current_app.config['JWT_SECRET'], algorithm='HS256')\n", "function", "app/auth.py"),
    ("def hash_password(password):\n    return bcrypt.hashpw(password.encode(), bcrypt.gensalt())\n", "function", "app/auth.py"),
    ("DEBUG = os.environ.get('DEBUG') == '1'\nALLOWED_HOSTS = os.environ['ALLOWED_HOSTS'].split(',')\n", "statements", "app/settings.py"),
    ("if __name__ == '__main__':\n    app.run(host='127.0.0.1', debug=False)\n", "statements", "app/main.py"),
    ("def handle(request):\n    logger.debug('handling %s', request.path)\n    return process(request)\n", "function", "app/views.py"),
    ("def debug_info():\n    return {'python': sys.version, 'app': __version__}\n", "function", "app/about.py"),
    ("logging:\n  level: INFO\ndebug: false\n", "hunk", "config/prod.yaml"),
    ("def login(user, password):\n    logger.info('login attempt for %s', user)\n    return auth.check(user, password)\n", "function", "app/auth.py"),
    ("PASSWORD_MIN_LENGTH = 12\nTOKEN_TTL_SECONDS = 3600\n", "statements", "app/policy.py"),
    ("def read_token(request):\n    return request.headers.get('X-Api-Token')\n", "function", "app/api.py"),
]


def secret_items(rng: random.Random) -> list[dict]:
    items = []
    for i in range(36):
        code, kind, path, secret, debug = SECRET_POS[i % len(SECRET_POS)]
        if i >= len(SECRET_POS):  # a second, lightly varied copy: another folder, a comment above
            path = path.replace("app/", "service/").replace("config/", "conf/")
            if kind != "hunk":
                code = "# loaded at start-up\n" + code if kind == "statements" else code
        items.append({"id": f"secret-pos-{i:02d}", "state": unit_state(path, code, kind),
                      "labels": {"secret": secret, "debug": debug}})
    for i in range(36):
        code, kind, path = SECRET_NEG[i % len(SECRET_NEG)]
        if i >= len(SECRET_NEG):
            path = path.replace("app/", "service/").replace("config/", "conf/")
            if kind == "statements":
                code = "# loaded at start-up\n" + code
        items.append({"id": f"secret-neg-{i:02d}", "state": unit_state(path, code, kind),
                      "labels": {"secret": False, "debug": False}})
    return items


def main() -> None:
    rng = random.Random(SEED)
    write("swallowed-error", swallowed_items(rng))
    write("name-mismatch", name_items(rng))
    write("irreversible-migration", migration_items(rng))
    write("secret-or-debug", secret_items(rng))


if __name__ == "__main__":
    main()
