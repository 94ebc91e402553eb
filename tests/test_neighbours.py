"""The neighbours' vote (`seams.judges.local.neighbours`): what a `flag+text+vote` head reads last.

Small int8 tables whose nearest rows are known: the vote is the share of positives among the k
nearest labelled rows, unlabelled rows never vote, ties go to the earlier row, a query's own group
can be hidden (how fitting leaves out a text's own set); the dot products are exact integers in
float32 whatever the summation order; and a table file is checked against the sha256 its config
records, its shape against its flags, before any vote.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from seams.errors import ConfigError
from seams.judges.local.neighbours import SCALE, Neighbours, quantised, votes


def _unit(*rows: list[float]) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


TABLE = quantised(_unit([1, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0], [0, 1, 0], [0, 0.9, 0.1], [0, 0, 1]))


def test_quantised_rows_are_int8_unit_vectors_times_the_scale() -> None:
    q = quantised(_unit([3, 4, 0]))
    assert q.dtype == np.int8 and q.tolist() == [[round(0.6 * SCALE), round(0.8 * SCALE), 0]]
    assert quantised(np.array([1.5, -1.5])).tolist() == [SCALE, -SCALE]  # clipped, never wrapped


def test_the_vote_is_the_share_of_positives_among_the_nearest_labelled_rows() -> None:
    labels = np.array([1, 1, 0, 0, 0, 1], dtype=np.int8)
    query = quantised(_unit([1, 0.05, 0]))
    assert votes(query, TABLE, labels, 1).tolist() == [1.0]
    assert votes(query, TABLE, labels, 3).tolist() == pytest.approx([2 / 3])
    # an unlabelled row (-1) is never a neighbour: the third-nearest labelled row is now row 3 (a 0)
    assert votes(query, TABLE, np.array([1, -1, 0, 0, 0, 1], dtype=np.int8), 2).tolist() == [0.5]
    with pytest.raises(ValueError, match="2 labelled rows; a vote over 3 neighbours needs at least 3"):
        votes(query, TABLE, np.array([1, -1, -1, -1, -1, 0], dtype=np.int8), 3)


def test_ties_go_to_the_earlier_row_and_a_group_can_be_hidden() -> None:
    table = quantised(_unit([1, 0], [1, 0], [1, 0], [0, 1]))
    query = quantised(_unit([1, 0]))
    assert votes(query, table, np.array([1, 0, 0, 1], dtype=np.int8), 1).tolist() == [1.0]
    assert votes(query, table, np.array([0, 1, 1, 1], dtype=np.int8), 1).tolist() == [0.0]
    assert votes(query, table, np.array([1, 1, 0, 1], dtype=np.int8), 2).tolist() == [1.0]
    groups = (np.array(["a"]), np.array(["a", "b", "b", "c"]))
    # row 0 is the query's own group: the nearest others are rows 1 and 2
    assert votes(query, table, np.array([1, 0, 0, 1], dtype=np.int8), 2, groups).tolist() == [0.0]


def test_int8_dot_products_are_exact_in_float32_in_any_order() -> None:
    rng = np.random.default_rng(30)
    a = rng.integers(-SCALE, SCALE + 1, (64, 384)).astype(np.int8)
    b = rng.integers(-SCALE, SCALE + 1, (256, 384)).astype(np.int8)
    exact = a.astype(np.int64) @ b.astype(np.int64).T
    assert np.array_equal((a.astype(np.float32) @ b.astype(np.float32).T).astype(np.int64), exact)
    assert np.array_equal((a[:, ::-1].astype(np.float32) @ b[:, ::-1].astype(np.float32).T).astype(np.int64), exact)
    assert np.abs(exact).max() < 2 ** 24


def _table(tmp_path: Path, **arrays: np.ndarray) -> tuple[Path, str]:
    path = tmp_path / "neighbours.npz"
    np.savez(path, **arrays)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_table_file_is_checked_before_any_vote(tmp_path: Path) -> None:
    labels = np.array([[1, 0], [0, -1], [0, 1], [1, 1], [0, 0], [-1, 0]], dtype=np.int8)
    path, sha = _table(tmp_path, vectors=TABLE, labels=labels, names=np.array(["poison", "secret"]))
    table = Neighbours(path, sha, ["poison", "secret"])
    assert table.identity == f"neighbours@{sha[:16]}" and table.dim == 3
    assert table.vote(_unit([1, 0.05, 0])[0], "poison", 1) == 1.0
    assert table.vote(_unit([1, 0.05, 0])[0], "secret", 2) == 0.5  # rows 0 and 2 (row 1 is not labelled)
    with pytest.raises(ValueError, match="a 2-dimensional vector; the table holds 3 dimensions"):
        table.vote(np.array([1.0, 0.0]), "poison", 1)
    with pytest.raises(ConfigError, match="the model's config records 0000000000000000"):
        Neighbours(path, "0" * 64, ["poison", "secret"])
    with pytest.raises(ConfigError, match=r"for flags \['poison', 'secret'\]; expected \[6, 1\] for the classifier's flags \['poison'\]"):
        Neighbours(path, sha, ["poison"])
    path, sha = _table(tmp_path, vectors=TABLE.astype(np.float32), labels=labels, names=np.array(["poison", "secret"]))
    with pytest.raises(ConfigError, match="vectors are float32"):
        Neighbours(path, sha, ["poison", "secret"])
    path, sha = _table(tmp_path, vectors=TABLE)
    with pytest.raises(ConfigError, match="not a neighbour table"):
        Neighbours(path, sha, ["poison", "secret"])
    with pytest.raises(ConfigError, match="cannot be read"):
        Neighbours(tmp_path / "gone.npz", sha, ["poison"])
