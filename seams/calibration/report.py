"""Reliability diagrams (PNG, matplotlib's Agg backend) and a self-contained HTML report.

A reliability diagram bins items by the probability the judge stated and plots, per bin, how
often it was right: a calibrated judge lies on the diagonal. The HTML report embeds the images,
so the one file can be attached to a review. Needs the `report` extra (matplotlib).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ConfigError
from .extract import QuestionData, Transform

if TYPE_CHECKING:
    from ..rubric import Rubric
    from .dataset import LabelledSet
    from .fit import CalibrationResult

DIAGRAM_BINS = 10


def reliability_points(conf: ArrayLike, hit: ArrayLike, n_bins: int = DIAGRAM_BINS
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per non-empty equal-width bin: mean stated probability, observed frequency, item count."""
    conf, hit = np.asarray(conf, float), np.asarray(hit, float)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    cnt = np.bincount(bins, minlength=n_bins)
    sc = np.bincount(bins, weights=conf, minlength=n_bins)
    sh = np.bincount(bins, weights=hit, minlength=n_bins)
    keep = cnt > 0
    return sc[keep] / cnt[keep], sh[keep] / cnt[keep], cnt[keep]


def confidence_and_hits(qd: QuestionData, transform: Transform | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(stated probability, right or not): p and the label for a Noul; the winner's probability
    and whether it is the label for a Choice or Score."""
    if qd.kind == "noul":
        p, y = qd.noul(transform)
        return p, y.astype(float)
    dists, _, idx = qd.dists(transform)
    win = np.array([int(np.argmax(d)) for d in dists])
    conf = np.array([d[w] for d, w in zip(dists, win)])
    return conf, (win == np.array(idx)).astype(float)


def _pyplot():
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - the [report] extra
        raise ConfigError("reliability diagrams need matplotlib: pip install 'seams[report]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def reliability_diagram(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: str | Path, *,
                        title: str = "", eces: Mapping[str, float | None] | None = None) -> Path:
    """Draw one reliability curve per entry of `curves` (label → (stated p, right)) into a PNG."""
    plt = _pyplot()
    fig, (ax, hx) = plt.subplots(2, 1, figsize=(5.2, 6.0), gridspec_kw={"height_ratios": [3, 1]}, sharex=True)
    ax.plot([0, 1], [0, 1], ls="--", c="grey", lw=1, label="perfectly calibrated")
    colours = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"]
    for (label, (conf, hit)), colour in zip(curves.items(), colours):
        x, y, n = reliability_points(conf, hit)
        e = (eces or {}).get(label)
        name = f"{label} (ECE {e:.3f})" if e is not None else label
        ax.plot(x, y, marker="o", c=colour, label=name)
        ax.scatter(x, y, s=10 + 90 * n / max(n.max(), 1), c=colour, alpha=0.35)
        hx.hist(conf, bins=DIAGRAM_BINS, range=(0, 1), alpha=0.45, color=colour)
    ax.set_ylabel("observed frequency")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    hx.set_xlabel("stated probability")
    hx.set_ylabel("items")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}.note{color:#8a5a00}
.q{display:flex;gap:2em;flex-wrap:wrap;align-items:flex-start}.muted{color:#777}img{border:1px solid #eee}
"""


def _fmt(m: Mapping[str, Any] | None, key: str) -> str:
    if not m or m.get(key) is None:
        return "—"
    v = m[key]
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if not isinstance(v, (int, float)):
        return html.escape(str(v))
    ci = m.get(f"{key}_ci")
    s = f"{v:.4f}"
    if ci and None not in ci:
        s += f' <span class="muted">[{ci[0]:.4f}, {ci[1]:.4f}]</span>'
    return s


def _table(rows: Sequence[str], cols: Mapping[str, Mapping[str, Any] | None]) -> str:
    head = "<tr><th>metric</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
    body = "".join(
        f"<tr><td>{html.escape(r)}</td>" + "".join(f"<td>{_fmt(m, r)}</td>" for m in cols.values()) + "</tr>"
        for r in rows if any(m and m.get(r) is not None for m in cols.values())
    )
    return f"<table>{head}{body}</table>"


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="reliability diagram" width="420" src="data:image/png;base64,{data}">'


QUESTION_ROWS = ("n", "accuracy", "top1", "precision", "recall", "f1", "brier", "log_loss", "ece", "ece_adaptive",
                 "auroc", "mae", "kappa", "kappa_quadratic", "macro_f1")
ZONE_ROWS = ("n", "high", "low", "automation_rate", "review_rate", "automated", "errors", "error_rate",
             "wrong_act", "wrong_refuse", "cost_per_item")


def _cutpoints(rubric: Any, calibrated: bool, calibration: Any = None) -> str:
    """The rules' cut-points as written in the file and as fitted, the applied ones in bold."""
    from .cutpoints import fmt_cut, rule_cutpoints

    rows = []
    for c in rule_cutpoints(rubric, calibrated, calibration):
        w, f = html.escape(fmt_cut(c.written)), html.escape(fmt_cut(c.fitted))
        w, f = (f"<b>{w}</b>", f) if c.source == "written" else (w, f"<b>{f}</b>")
        rule, reads = html.escape(c.rule), html.escape(c.reads)
        rows.append(f"<tr><td>{rule}</td><td>{reads}</td><td>{w}</td><td>{f}</td></tr>")
    reads = "calibrated" if calibrated else "raw"
    return (f"<h2>Cut-points</h2><p class='muted'>in bold: the cut-points in force; the rules read {reads} "
            "probabilities</p><table><tr><th>rule</th><th>reads</th><th>written in the rubric</th>"
            "<th>fitted</th></tr>" + "".join(rows) + "</table>")


def _page(title: str, parts: list[str]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"
            f"<p class='muted'>generated {when} by seams; intervals are 95 % (bootstrap for metrics, "
            f"Clopper–Pearson for rates of automated decisions)</p>" + "".join(parts) + "</body></html>")


def calibration_report(result: CalibrationResult, rubric: Rubric, dataset: LabelledSet, out_dir: str | Path) -> Path:
    """Write `index.html` and one PNG per question for a `CalibrationResult`; return the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    block = result.block
    parts = [(
        "<table>"
        f"<tr><td>rubric</td><td>{html.escape(rubric.name)} v{html.escape(rubric.version)} "
        f"({html.escape(str(rubric.path or ''))})</td></tr>"
        f"<tr><td>model</td><td>{html.escape(block.model)}</td></tr>"
        f"<tr><td>labelled set</td><td>{html.escape(str(dataset.path))} · {block.n} items · hash {block.data_hash}</td></tr>"
        f"<tr><td>split</td><td>{len(result.fit_ids)} fit · {len(result.report_ids)} held out "
        f"(seed {block.metrics.split.seed if block.metrics.split else '-'})</td></tr>"
        f"<tr><td>threshold method</td><td>{html.escape(block.metrics.method or '-')}</td></tr></table>"
    )]
    if result.notes:
        parts.append("<ul>" + "".join(f"<li class='note'>{html.escape(n)}</li>" for n in result.notes) + "</ul>")
    parts.append(_cutpoints(rubric, calibrated=True, calibration=block))
    parts.append("<h2>Questions (held-out split)</h2>")
    for qid, res in result.questions.items():
        qd = res.data
        cal = res.calibrator
        before = confidence_and_hits(qd)
        after = confidence_and_hits(qd, block.transform)
        png = reliability_diagram({"before": before, "after": after}, out / f"reliability-{_safe(qid)}.png",
                                  title=f"{qid} ({res.kind}), held-out n={len(qd)}",
                                  eces={"before": res.before.get("ece"), "after": res.after.get("ece")})
        how = "none" if cal is None else cal.method + (
            f" a={cal.a}, b={cal.b}" if cal.method == "platt" else
            f" T={cal.temperature}" if cal.method == "temperature" else f" ({len(cal.x or [])} breakpoints)")
        parts.append(f"<h3>{html.escape(qid)} <span class='muted'>{res.kind} · recalibration: "
                     f"{html.escape(how)} · fitted on {res.fit_n}</span></h3><div class='q'>"
                     + _table(QUESTION_ROWS, {"before": res.before, "after": res.after}) + _img(png) + "</div>")
    if result.rules:
        parts.append("<h2>Rules (thresholds fitted on the fit split, measured on the held-out split)</h2>")
    for rid, rr in result.rules.items():
        params = ", ".join(f"{k}={v}" for k, v in rr.params.items())
        t = rr.thresholds
        target = ""
        if t.method == "target-error":
            h = rr.heldout
            over = " over all decisions (reviewed ones by the teacher)" if t.params.get("error_over") == "all" else ""
            target = (f"<p>target error {t.params['target_error']}{over} at {t.params['confidence']:.0%} confidence"
                      f"{'' if t.params.get('guaranteed', True) else ' (not guaranteed: capacity overrode it)'}: ")
            if h.get("error_rate_ci"):
                ci = h["error_rate_ci"]
                target += (f"held-out error rate on automated decisions <b>{h['error_rate']:.4f}</b> "
                           f"[{ci[0]:.4f}, {ci[1]:.4f}] over {h['automated']} automated items "
                           f"({h['automation_rate']:.1%} automated)</p>")
            else:
                target += "no held-out item was automated (the labels cannot support the target)</p>"
        parts.append(f"<h3>rule {html.escape(rid)} <span class='muted'>{t.method}: high {t.high}, low {t.low}"
                     f"</span></h3><p class='muted'>{html.escape(params)}</p>{target}"
                     + _table(ZONE_ROWS, {"as written (raw, held out)": rr.as_written, "fit split": rr.fit,
                                          "held out": rr.heldout}))
    path = out / "index.html"
    path.write_text(_page(f"Calibration of {rubric.name}", parts), encoding="utf-8")
    return path


def eval_report(evaluation: Mapping[str, Any], qdata: Mapping[str, tuple[QuestionData, Transform | None]],
                out_dir: str | Path, title: str, rubric: Any = None) -> Path:
    """Write `index.html` and one PNG per question for `seams eval`; return the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    parts = [(f"<p>model {html.escape(evaluation['model'])} · {evaluation['n_items']} items · data hash "
              f"{evaluation['data_hash']} · calibration applied: {evaluation['calibrated']}</p>")]
    if rubric is not None:
        parts.append(_cutpoints(rubric, bool(evaluation["calibrated"])))
    for qid, m in evaluation["questions"].items():
        qd, transform = qdata[qid]
        curves = {"judge": confidence_and_hits(qd)}
        cols: dict[str, Any] = {"judge": m.get("raw", m)}
        if transform is not None:
            curves["calibrated"] = confidence_and_hits(qd, transform)
            cols["calibrated"] = m
        png = reliability_diagram(curves, out / f"reliability-{_safe(qid)}.png", title=f"{qid}, n={len(qd)}",
                                  eces={k: v.get("ece") for k, v in cols.items()})
        parts.append(f"<h2>{html.escape(qid)} <span class='muted'>{m.get('type')}</span></h2><div class='q'>"
                     + _table(QUESTION_ROWS, cols) + _img(png) + "</div>")
    if evaluation.get("rules"):
        parts.append("<h2>Rules at the thresholds in force</h2>" + _table(ZONE_ROWS, evaluation["rules"]))
    path = out / "index.html"
    path.write_text(_page(title, parts), encoding="utf-8")
    return path


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


__all__ = ["calibration_report", "confidence_and_hits", "eval_report", "reliability_diagram", "reliability_points"]
