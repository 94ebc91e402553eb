"""Splitting code into units, and reading which lines a git diff changed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from seams.lint.diff import parse_diff
from seams.lint.units import block_units, hunk_units, python_units

SOURCE = textwrap.dedent('''\
    """Module docstring."""
    import os

    LIMIT = 10
    NAME = "x"


    @decorator
    def top(a):
        def inner():
            return a
        return inner()


    class Store:
        """A store."""

        size = 3

        def get(self, key):
            return key

        async def put(self, key, value):
            await self.write(key, value)

        class Meta:
            def nested(self):
                pass


    if __name__ == "__main__":
        top(1)
    ''')


def by_name(units):
    return {u.name: u for u in units}


def test_python_units_names_kinds_and_lines() -> None:
    units = by_name(python_units("pkg/m.py", SOURCE))
    assert units["top"].kind == "function" and (units["top"].start, units["top"].end) == (8, 12)
    assert units["top"].text.startswith("@decorator\ndef top(a):")
    assert "inner" not in units  # a nested function is part of what its function does
    assert units["Store.get"].kind == "method" and (units["Store.get"].start, units["Store.get"].end) == (20, 21)
    assert units["Store.put"].text.startswith("async def put")
    assert units["Store.Meta.nested"].kind == "method"
    assert units["Store"].kind == "class" and units["<module>"].kind == "module"
    stmts = [u for u in units.values() if u.kind == "statements"]
    assert [(u.start, u.end) for u in stmts] == [(4, 5), (31, 32)]
    assert all(u.path == "pkg/m.py" for u in units.values())


def test_class_unit_elides_method_bodies_but_keeps_lines_aligned() -> None:
    store = by_name(python_units("m.py", SOURCE))["Store"]
    assert "return key" not in store.text and "size = 3" in store.text
    assert len(store.text.split("\n")) == store.end - store.start + 1
    # a diff touching a method body does not touch the class; its own field does
    assert not store.touched_by({21}) and store.touched_by({18})
    assert "\n\n\n" not in store.state()["code"]


def test_kinds_filter_and_syntax_error_fallback() -> None:
    only = python_units("m.py", SOURCE, kinds=("function",))
    assert [u.name for u in only] == ["top"]
    broken = python_units("m.py", "def f(:\n    pass\n", kinds=("function", "hunk"))
    assert [u.kind for u in broken] == ["hunk"]
    assert python_units("m.py", "def f(:\n", kinds=("function",)) == []


def test_hunks_merge_with_context_and_blocks_cover_a_file() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101))
    hunks = hunk_units("conf.yaml", text, {10, 14, 60})
    assert [(u.start, u.end) for u in hunks] == [(7, 17), (57, 63)]
    blocks = block_units("conf.yaml", text)
    assert [(u.start, u.end) for u in blocks] == [(1, 40), (41, 80), (81, 100)]


DIFF = '''\
diff --git a/app/a.py b/app/a.py
index 1..2 100644
--- a/app/a.py
+++ b/app/a.py
@@ -3,0 +4,2 @@ def f():
+    x = 1
+    y = 2
@@ -10 +12 @@ def g():
-    old
+    new
@@ -20,3 +21,0 @@ def h():
-    gone
-    gone
-    gone
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
diff --git a/old.py b/new name.py
similarity index 90%
rename from old.py
rename to new name.py
--- a/old.py
+++ b/new name.py
@@ -1 +1 @@
-a
+b
diff --git "a/na\\303\\257ve.py" "b/na\\303\\257ve.py"
--- "a/na\\303\\257ve.py"
+++ "b/na\\303\\257ve.py"
@@ -5 +5,0 @@
-x
'''


def test_parse_diff(tmp_path: Path) -> None:
    got = parse_diff(DIFF, tmp_path)
    assert got[(tmp_path / "app/a.py").resolve()] == {4, 5, 12, 21, 22}
    assert (tmp_path / "gone.py").resolve() not in got
    assert got[(tmp_path / "new name.py").resolve()] == {1}
    assert got[(tmp_path / "naïve.py").resolve()] == {5, 6}


def test_line_numbers_count_newlines_only() -> None:
    """A form feed is not a line break for Python or git; `str.splitlines` would say it is."""
    src = "x = 1\n\x0c\ndef f():\n    return 'a\x0cb'\n"
    (u,) = python_units("m.py", src, kinds=("function",))
    assert (u.start, u.end) == (3, 4) and u.text.startswith("def f():")
