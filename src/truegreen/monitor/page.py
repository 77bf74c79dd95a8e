"""The status page at `/`: the verdict, its remedy, every other finding and every check with
its status and age, in plain HTML.

No script and no outside resource: it reads in any browser, a terminal browser included. Every
piece of text from the cluster is escaped; a command in backticks is shown as code, as it is
pasted.
"""

import re
from collections.abc import Sequence
from datetime import datetime
from html import escape

from truegreen.doctor.findings import CheckId, Finding, Status
from truegreen.doctor.present.report import coverage_line
from truegreen.doctor.rollup import Report, Verdict
from truegreen.monitor.engine import Evaluation

_WORDS = {
    Verdict.READY: ("READY", "#1a7f37"),
    Verdict.NOT_READY: ("NOT READY", "#cf222e"),
    Verdict.UNKNOWN: ("COULD NOT CHECK", "#8250df"),
}
_MARKS = {Status.OK: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.UNKNOWN: "?"}
_STATUS_WORDS = {
    Status.OK: "good",
    Status.WARN: "warning",
    Status.FAIL: "failing",
    Status.UNKNOWN: "could not check",
}
# The worst status of a check's findings is its own, in the order of the check's code on
# /metrics (metrics.check_codes): a failure, then could not check, then a warning.
_SEVERITY = {Status.OK: 0, Status.WARN: 1, Status.UNKNOWN: 2, Status.FAIL: 3}
_COMMAND = re.compile(r"`([^`]+)`")


def status_page(namespace: str, evaluation: Evaluation | None, now: datetime) -> str:
    """The whole page for the current evaluation (None: the first is still running)."""
    if evaluation is None:
        body = "<p>The first check is still running.</p>"
    else:
        body = _report(evaluation, now)
    return _page(f"truegreen: {escape(namespace)}", body)


# Worst first, as doctor's fleet table orders them: a measured failure, could not check, not
# yet checked, ready.
_ORDER = {Verdict.NOT_READY: 0, Verdict.UNKNOWN: 1, None: 2, Verdict.READY: 3}


def fleet_page(
    where: str, evaluations: Sequence[tuple[str, Evaluation | None]], now: datetime
) -> str:
    """The page of a fleet's monitor: one line per namespace (verdict, headline), worst first,
    then each namespace that is not ready in full."""
    ranked = sorted(
        evaluations,
        key=lambda pair: (_ORDER[pair[1].report.verdict if pair[1] else None], pair[0]),
    )
    rows = []
    for name, evaluation in ranked:
        if evaluation is None:
            word, colour, text = "CHECKING", "#57606a", "The first check is still running."
        else:
            word, colour = _WORDS[evaluation.report.verdict]
            text = _headline_text(word, evaluation.report.headline.text)
        rows.append(
            f'<tr><td><a href="#ns-{escape(name)}">{escape(name)}</a></td>'
            f'<td class="verdict" style="color:{colour}">{word}</td><td>{shown(text)}</td></tr>'
        )
    if not rows:
        body = "<p>No namespace is selected: the selection matches none.</p>"
    else:
        body = (
            "<table><tr><th>namespace</th><th>verdict</th><th>headline</th></tr>"
            + "".join(rows)
            + "</table>"
        )
    details = [
        f'<h2 id="ns-{escape(name)}">{escape(name)}</h2>\n{_report(evaluation, now)}'
        for name, evaluation in ranked
        if evaluation is not None and evaluation.report.verdict is not Verdict.READY
    ]
    return _page(f"truegreen: {escape(where)}", "\n".join([body, *details]))


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="refresh" content="15">'
        f"<title>{title}</title>"
        "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto;padding:0 1em}"
        ".verdict{font-weight:bold}.remedy{margin-left:1.5em}small{color:#57606a}"
        "code{background:#f6f8fa;padding:0 .2em}td{padding:.1em .6em;vertical-align:top}"
        "td:nth-child(2),td:nth-child(4){white-space:nowrap}"
        "</style>"
        f"</head><body><h1>{title}</h1>\n{body}\n</body></html>\n"
    )


def shown(text: str) -> str:
    """Plain text as HTML: escaped, and each command in backticks as code (without them)."""
    parts = _COMMAND.split(text)
    return "".join(
        f"<code>{escape(part)}</code>" if odd else escape(part)
        for odd, part in ((i % 2 == 1, p) for i, p in enumerate(parts))
    )


def _headline_text(word: str, text: str) -> str:
    """The headline without a repeat of the verdict beside it (`READY` and `Ready: training
    can run.` read `READY Training can run.`)."""
    said, sep, rest = text.partition(": ")
    if sep and said.upper() == word:
        return rest[:1].upper() + rest[1:]
    return text


def _report(evaluation: Evaluation, now: datetime) -> str:
    report = evaluation.report
    word, colour = _WORDS[report.verdict]
    headline = report.headline
    text = _headline_text(word, headline.text)
    parts = [f'<p><span class="verdict" style="color:{colour}">{word}</span> {shown(text)}</p>']
    if headline.remedy:
        parts.append(f'<p class="remedy">→ {shown(headline.remedy)}</p>')
    if report.also:
        parts.append("<h2>Also</h2><ul>")
        for finding in report.also:
            parts.append(
                f"<li>{_MARKS[finding.status]} {shown(finding.headline)}"
                f'<div class="remedy">→ {shown(finding.remedy)}</div></li>'
            )
        parts.append("</ul>")
    age = max(0, int((now - evaluation.at).total_seconds()))
    parts.append(_checks_table(report, age))
    parts.append(f"<p>{shown(coverage_line(report))}</p>")
    checked = evaluation.at.strftime("%Y-%m-%d %H:%M:%S UTC")
    changed = evaluation.changed_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    parts.append(
        f"<p><small>Checked {escape(checked)} ({age} s ago); "
        f"the answer last changed {escape(changed)}.</small></p>"
    )
    return "\n".join(parts)


def _checks_table(report: Report, age: int) -> str:
    """One row per check, in check order: its status, what it found, and how long ago."""
    by_check: dict[CheckId, list[Finding]] = {}
    for finding in report.findings:
        by_check.setdefault(finding.check, []).append(finding)
    not_asked = {n.check: n for n in report.not_checked if not n.asked}
    rows = []
    for check in CheckId:
        findings = by_check.get(check, [])
        if findings:
            worst = max(findings, key=lambda f: _SEVERITY[f.status])
            status = f"{_MARKS[worst.status]} {_STATUS_WORDS[worst.status]}"
            said, when = shown(worst.headline), f"{age} s ago"
        elif check in not_asked:
            status, said, when = "-", "not asked for", "-"
        else:
            continue
        rows.append(
            f"<tr><td>{escape(check.value)}</td><td>{status}</td><td>{said}</td>"
            f"<td>{when}</td></tr>"
        )
    return (
        "<h2>Checks</h2><table><tr><th>check</th><th>status</th><th>found</th>"
        "<th>checked</th></tr>" + "".join(rows) + "</table>"
    )
