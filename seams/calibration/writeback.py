"""Writing a fitted `CalibrationBlock` into its rubric file, leaving everything else as it was.

The rest of the file is kept byte for byte: the old `calibration:` block's lines (if any) are
found with the round-trip parser's positions and replaced by the new block's text, or the block
is appended at the end. The result is re-validated as a rubric before it replaces the file, and
the file is replaced atomically (written beside it, then renamed), so a crash never leaves half
a rubric.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..rubric import Rubric
from ..rubric.calibration import CalibrationBlock
from ..rubric.loader import parse_yaml, read_text

HEADER = "# Fitted by `seams calibrate` against labelled data; re-run it rather than editing by hand.\n"


def _node(value: Any) -> Any:
    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[k] = _node(v)
        return m
    if isinstance(value, list):
        s = CommentedSeq(_node(v) for v in value)
        if all(not isinstance(v, (dict, list)) for v in value):
            s.fa.set_flow_style()
        return s
    return value


def block_yaml(block: CalibrationBlock) -> str:
    """The `calibration:` block as YAML text (short lists inline, so the file stays readable)."""
    data = block.model_dump(mode="json", exclude_none=True)
    if not data.get("gates"):  # most rubrics have no gate: keep their blocks as they were
        data.pop("gates", None)
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(CommentedMap([("calibration", _node(data))]), buf)
    return buf.getvalue()


def _block_span(text: str, path: str | None) -> tuple[int, int] | None:
    """0-based [start, end) line range of the top-level `calibration:` block, if there is one."""
    doc = parse_yaml(text, path)
    if "calibration" not in doc:
        return None
    keys = list(doc.keys())
    start = doc.lc.key("calibration")[0]
    lines = text.splitlines()
    pos = keys.index("calibration")
    end = doc.lc.key(keys[pos + 1])[0] if pos + 1 < len(keys) else len(lines)
    # comment and blank lines just before the next key belong to it, not to this block
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return start, end


def with_block(text: str, block: CalibrationBlock, path: str | None = None) -> str:
    """`text` with its calibration block replaced by (or extended with) `block`."""
    new = block_yaml(block)
    span = _block_span(text, path)
    if span is None:
        sep = "" if text.endswith("\n") or not text else "\n"
        return text + sep + "\n" + HEADER + new
    lines = text.splitlines(keepends=True)
    start, end = span
    tail = "".join(lines[end:])
    if tail and not new.endswith("\n"):
        new += "\n"
    return "".join(lines[:start]) + new + tail


def write_calibration(path: str | Path, block: CalibrationBlock) -> Rubric:
    """Write `block` into the rubric at `path`; return the re-loaded rubric."""
    path = Path(path)
    text = read_text(path)
    new_text = with_block(text, block, str(path))
    rubric = Rubric.loads(new_text, path=str(path))  # never write a rubric that does not load
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(new_text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return rubric


__all__ = ["block_yaml", "with_block", "write_calibration"]
