"""`training.two_tower`'s interaction head on tiny synthetic embeddings (no model, no data set)."""

import numpy as np

from training.two_tower import (
    FEATURES,
    Head,
    Row,
    blend_fit,
    blend_scores,
    domain_folds,
    features,
    set_reference,
)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _rows(n: int, kind: str, seed: int) -> list[Row]:
    """States whose answer is the option sharing a hidden direction with them (dims 0-3 only:
    the rest is noise a cosine over all dims is blurred by, and a weighted product is not)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        u = rng.normal(size=16)
        k = 1 if kind == "noul" else 4
        opts = rng.normal(size=(k, 16))
        gold = int(rng.integers(k))
        if kind == "noul":
            yes = bool(rng.random() < 0.5)
            opts[0, :4] = u[:4] * (1 if yes else -1)
            y: object = yes
        else:
            opts[gold, :4] = u[:4] * 2
            y = gold
        opts = _unit(opts)
        rows.append(Row(kind, f"f{i % 6}", f"f{i % 6}/g{i}", y, _unit(u), opts, opts))
    return rows


def _auroc(ys: list[bool], s: list[float]) -> float:
    pos = [x for y, x in zip(ys, s, strict=True) if y]
    neg = [x for y, x in zip(ys, s, strict=True) if not y]
    return float(np.mean([[p > q for q in neg] for p in pos]))


def test_features_shape_per_kind():
    r = _rows(1, "choice", 0)[0]
    x = features(r, FEATURES["sbert"])
    assert x.shape == (4, 16 + 16 + 2 + 2 + 3)
    n = _rows(1, "noul", 0)[0]
    assert features(n, FEATURES["cos"]).shape == (1, 2 + 2 + 3)
    set_reference(_rows(50, "noul", 9), n=20)
    centred = features(r, FEATURES["ctr"])
    assert centred.shape == (4, 2 + 2 + 3 + 3) and np.isfinite(centred).all()


def test_noul_head_learns_the_direction_and_generalises():
    train, test = _rows(600, "noul", 1), _rows(300, "noul", 2)
    spec = FEATURES["prod"]
    for hidden in (0, 8):
        head = Head(hidden=hidden, epochs=15).fit([(features(r, spec), r.y) for r in train], "noul")
        s = [float(head.predict(features(r, spec))[0]) for r in test]
        assert _auroc([bool(r.y) for r in test], s) > 0.9


def test_listwise_and_binary_choice_heads_beat_chance():
    train, test = _rows(400, "choice", 3), _rows(200, "choice", 4)
    spec = FEATURES["prod"]
    for loss in ("listwise", "binary"):
        head = Head(loss=loss, epochs=15).fit([(features(r, spec), r.y) for r in train], "choice")
        top1 = np.mean([int(np.argmax(head.predict(features(r, spec)))) == r.y for r in test])
        assert top1 > 0.7  # chance 0.25


def test_domain_folds_hold_whole_files_out():
    rows = _rows(60, "noul", 5)
    folds = domain_folds(rows, k=3)
    assert sorted(i for _, va in folds for i in va) == list(range(60))
    for tr, va in folds:
        assert not {rows[i].file for i in tr} & {rows[i].file for i in va}


def test_blend_fit_weights_the_informative_signal():
    rows = _rows(200, "noul", 6)
    rng = np.random.default_rng(0)
    for r in rows:
        r.logit = np.array([(2.0 if r.y else -2.0) + rng.normal()])
    w = blend_fit(rows, "noul", signals=("logit", "cos"))
    assert w[0] > 0.5
    z = blend_scores(rows, w, ("logit", "cos"))
    assert _auroc([bool(r.y) for r in rows], [float(x[0]) for x in z]) > 0.9
