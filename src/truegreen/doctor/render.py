"""Rendering a doctor report: text for people (rich markup), a JSON document for machines."""

from typing import Any

from truegreen.doctor.findings import Finding, Status
from truegreen.doctor.rollup import Report, Verdict


def _escape(text: str) -> str:
    """Rich markup escaped; rich is imported only when text is rendered (not for JSON)."""
    from rich.markup import escape

    return escape(text)


SCHEMA_VERSION = 1
_GLYPHS = {
    Status.OK: "[green]✓[/]",
    Status.WARN: "[yellow]![/]",
    Status.FAIL: "[red]✗[/]",
    Status.UNKNOWN: "[magenta]?[/]",
}
_VERDICT_WORDS = {
    Verdict.READY: "[bold green]READY[/]",
    Verdict.NOT_READY: "[bold red]NOT READY[/]",
    Verdict.UNKNOWN: "[bold magenta]COULD NOT CHECK[/]",
}


def to_json(report: Report) -> dict[str, Any]:
    """The documented JSON document (`schema_version` 1)."""
    headline = report.headline
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": report.verdict.value,
        "exit_code": int(report.exit_code),
        "headline": {
            "check": headline.check.value if headline.check else None,
            "code": headline.code,
            "status": headline.status.value,
            "rule": headline.rule,
            "text": headline.text,
            "remedy": headline.remedy,
        },
        "findings": [_finding_json(f) for f in report.findings],
        "coverage": {
            "checked": [c.value for c in report.checked],
            "not_checked": [
                {"check": n.check.value, "reason": n.reason} for n in report.not_checked
            ],
        },
    }


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "check": finding.check.value,
        "status": finding.status.value,
        "basis": finding.basis.value,
        "code": finding.code,
        "headline": finding.headline,
        "remedy": finding.remedy,
        "details": list(finding.details),
        "objects": list(finding.objects),
    }


def to_text(report: Report, *, verbose: bool) -> list[str]:
    """Rich markup lines: headline, remedy, also-lines, coverage; details when verbose."""
    headline = report.headline
    lines = [
        f"{_GLYPHS[headline.status]} {_VERDICT_WORDS[report.verdict]}  {_escape(headline.text)}"
    ]
    if headline.remedy:
        lines.append(f"  → {_escape(headline.remedy)}")
    if verbose and headline.finding is not None:
        lines += _detail_lines(headline.finding, indent="    ")
    if report.also:
        lines.append("")
        lines.append("Also:")
        for finding in report.also:
            lines.append(f"  {_GLYPHS[finding.status]} {_escape(finding.headline)}")
            if verbose:
                lines.append(f"      → {_escape(finding.remedy)}")
                lines += _detail_lines(finding, indent="      ")
    lines.append("")
    lines.append(_escape(coverage_line(report)))
    if verbose:
        lines.append("")
        lines.append("Checks:")
        for finding in report.findings:
            lines.append(
                f"  {_GLYPHS[finding.status]} {finding.check.value:<11} {finding.code:<36} "
                f"{finding.basis.value}"
            )
    return lines


def _detail_lines(finding: Finding, indent: str) -> list[str]:
    lines = [f"{indent}[dim]{_escape(d)}[/]" for d in finding.details]
    if finding.objects:
        lines.append(f"{indent}[dim]objects: {_escape(', '.join(finding.objects))}[/]")
    return lines


def coverage_line(report: Report) -> str:
    """`6 checks measured, 1 could not be checked (capacity: no permission to read ...).`"""
    measured = len(report.checked)
    text = f"{measured} check{'s' if measured != 1 else ''} measured"
    unknown = [n for n in report.not_checked if n.asked]
    if unknown:
        by_reason: dict[str, list[str]] = {}
        for entry in unknown:
            by_reason.setdefault(entry.reason, []).append(entry.check.value)
        reasons = "; ".join(f"{', '.join(checks)}: {why}" for why, checks in by_reason.items())
        text += f", {len(unknown)} could not be checked ({reasons})"
    text += "."
    not_asked = [n.check.value for n in report.not_checked if not n.asked]
    if not_asked:
        text += f" Not asked for: {', '.join(not_asked)}."
    return text
