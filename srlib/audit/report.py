"""The audit's self-contained HTML report: what ran, how to read it, the heat map, the
flag rates against their null, and the summary table (figures embedded, no other files)."""

from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt

from srlib.plots import audit_heatmap, audit_rates

READING = """
<p>A model is flagged on a sample when it finds the original <em>easier</em> than every
semantics-preserving variant (gray-box: lower perplexity; black-box: more n-gram overlap of
its continuation with the true one). A clean model already does so more often than the
nominal chance level 1/(n+1), because an original's own names are usually the most natural.
So the rate that matters is the <strong>excess over the empirical null</strong>: the same
samples under a reference model that never saw them, or the same model on control samples it
cannot have seen.</p>
<p>An excess whose interval clears zero says the model prefers this benchmark's originals more
than the null does: consistent with memorised samples, but also with familiarity with the
benchmark's <em>style</em> (its naming habits, its prompt format) picked up from similar text.
It does not say which samples leaked: per-sample flags have false positives at the null's rate.
No excess is not proof of absence: after few exposures the per-sample signal is weak, and the
pooled test (a p-value for the whole set) is the more sensitive one.</p>
"""


def _figure(fig: plt.Figure, alt: str) -> str:
    """A figure as an embedded PNG with alt text."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}"></figure>'


def render(result) -> str:
    """The report of an ``Audit`` as one HTML page."""
    spec, summary = result.spec, result.summary
    ran = "".join(
        f"<li><code>{html.escape(label)}</code>: {', '.join(s) or 'nothing'}</li>"
        for label, s in result.settings.items()
    )
    null = (
        f"reference model <code>{html.escape(spec.reference)}</code>"
        if spec.reference
        else f"control samples <code>{html.escape(spec.control)}</code>"
        if spec.control
        else "none given: rates are compared with the nominal chance level only"
    )
    shown = summary.drop(columns=[c for c in summary.columns if c.startswith("null_undecided")])
    table = shown.to_html(index=False, float_format=lambda x: f"{x:.3g}", border=0)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>srlib audit</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;"
        "border-bottom:1px solid #ddd}img{max-width:100%}</style></head><body>",
        "<h1>Leakage audit</h1>",
        f"<p>Benchmarks: {', '.join(map(html.escape, spec.benchmarks))}; {spec.n} variants "
        f"per sample (kinds {', '.join(spec.kinds)}, seed {spec.seed})"
        + _limits(spec)
        + f". Empirical null: {null}.</p>",
        f"<p>Settings each model ran:</p><ul>{ran}</ul>",
        _undecided_html(result.failures),
        (
            f"<p>Left out by the setting ({html.escape(spec.setting)}): "
            f"{html.escape(', '.join(result.left_out))}.</p>"
            if result.left_out
            else ""
        ),
        "<h2>How to read this</h2>",
        READING,
    ]
    if not summary.empty:
        parts += [
            "<h2>Where the models prefer originals</h2>",
            _figure(
                audit_heatmap(summary),
                "Heat map of models by benchmarks: flag rate minus the empirical null per cell",
            ),
            "<h2>Flag rates against the null</h2>",
            _figure(
                audit_rates(summary),
                "Per model and benchmark, the flag rate with the 95% interval of its excess "
                "over the null rate",
            ),
        ]
    parts += ["<h2>Summary</h2>", table, "</body></html>"]
    return "\n".join(parts)


def write_report(result) -> None:
    """``report.html`` in the audit's folder."""
    (result.out / "report.html").write_text(render(result), encoding="utf-8")


def _undecided_html(failures) -> str:
    """A list of the calls each plug-in could not score, and why; empty where none failed."""
    items = "".join(
        f"<li><code>{html.escape(str(r.detector))}</code> on {html.escape(str(r.model))} / "
        f"{html.escape(str(r.benchmark))}: {r.calls} calls {html.escape(str(r.reason))}</li>"
        for r in failures.itertuples()
    )
    return f"<p>Your detectors could not score every sample:</p><ul>{items}</ul>" if items else ""


def _limits(spec) -> str:
    """How many samples of each set the audit read, as the report says it."""
    if isinstance(spec.limit, tuple):
        cut = ", ".join(f"first {n} of {html.escape(name)}" for name, n in spec.limit)
        return f"; {cut} (the other sets whole)"
    return f"; first {spec.limit} samples of each" if spec.limit else ""
