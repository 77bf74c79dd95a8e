"""The status page at `/`: the headline, its remedy and every other finding, in plain HTML.

No script and no outside resource: it reads in any browser, a terminal browser included. Every
piece of text from the cluster is escaped.
"""

from datetime import datetime
from html import escape

from truegreen.doctor.findings import Status
from truegreen.doctor.render import coverage_line
from truegreen.doctor.rollup import Verdict
from truegreen.monitor.engine import Evaluation

_WORDS = {
    Verdict.READY: ("READY", "#1a7f37"),
    Verdict.NOT_READY: ("NOT READY", "#cf222e"),
    Verdict.UNKNOWN: ("COULD NOT CHECK", "#8250df"),
}
_MARKS = {Status.OK: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.UNKNOWN: "?"}


def status_page(namespace: str, evaluation: Evaluation | None, now: datetime) -> str:
    """The whole page for the current evaluation (None: the first is still running)."""
    title = f"truegreen: {escape(namespace)}"
    if evaluation is None:
        body = "<p>The first check is still running.</p>"
    else:
        body = _report(evaluation, now)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="refresh" content="15">'
        f"<title>{title}</title>"
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}"
        ".verdict{font-weight:bold}.remedy{margin-left:1.5em}small{color:#57606a}</style>"
        f"</head><body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )


def _report(evaluation: Evaluation, now: datetime) -> str:
    report = evaluation.report
    word, colour = _WORDS[report.verdict]
    headline = report.headline
    parts = [
        f'<p><span class="verdict" style="color:{colour}">{word}</span> {escape(headline.text)}</p>'
    ]
    if headline.remedy:
        parts.append(f'<p class="remedy">→ {escape(headline.remedy)}</p>')
    if report.also:
        parts.append("<h2>Also</h2><ul>")
        for finding in report.also:
            parts.append(
                f"<li>{_MARKS[finding.status]} {escape(finding.headline)}"
                f'<div class="remedy">→ {escape(finding.remedy)}</div></li>'
            )
        parts.append("</ul>")
    parts.append(f"<p>{escape(coverage_line(report))}</p>")
    checked = evaluation.at.strftime("%Y-%m-%d %H:%M:%S UTC")
    changed = evaluation.changed_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    age = max(0, int((now - evaluation.at).total_seconds()))
    parts.append(
        f"<p><small>Checked {escape(checked)} ({age} s ago); "
        f"the answer last changed {escape(changed)}.</small></p>"
    )
    return "\n".join(parts)
