"""Rendering a run over many namespaces (docs/fleet.md).

Text: one line per namespace (its verdict, its name, its headline), the worst first; then the
whole report of each namespace that is not ready or could not be checked (`--verbose`: of
every namespace); then one line counting them. JSON (`schema_version` 1): `verdict` and
`exit_code` of the fleet, `counts` {ready, not-ready, unknown}, and `namespaces`
[{`namespace`, `report`}], each `report` the document `doctor -n NAMESPACE -o json` prints.
"""

from typing import Any

from truegreen.doctor.fleet import FleetReport
from truegreen.doctor.render import (
    GLYPHS,
    SCHEMA_VERSION,
    VERDICT_WORDS,
    escape_markup,
    to_json,
    to_text,
    wrapped,
)
from truegreen.doctor.rollup import Verdict


def fleet_json(fleet: FleetReport) -> dict[str, Any]:
    """The fleet's document: its verdict, counts, and every namespace's own document."""
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": fleet.verdict.value,
        "exit_code": int(fleet.exit_code),
        "counts": {verdict.value: fleet.count(verdict) for verdict in Verdict},
        "namespaces": [
            {"namespace": entry.namespace, "report": to_json(entry.report)}
            for entry in fleet.namespaces
        ],
    }


def fleet_text(fleet: FleetReport, *, verbose: bool, width: int | None = None) -> list[str]:
    """Rich markup lines: the table, the details, the count."""
    words = max(len(VERDICT_WORDS[e.report.verdict][1]) for e in fleet.namespaces)
    names = max(len(e.namespace) for e in fleet.namespaces)
    lines: list[str] = []
    for entry in fleet.namespaces:
        headline = entry.report.headline
        markup, plain = VERDICT_WORDS[entry.report.verdict]
        prefix = (
            f"{GLYPHS[headline.status]} {markup}{' ' * (words - len(plain))}  "
            f"{escape_markup(entry.namespace.ljust(names))}  "
        )
        lines += wrapped(prefix, 2 + words + 2 + names + 2, headline.text, width, 4)
    for entry in fleet.namespaces:
        if verbose or entry.report.verdict is not Verdict.READY:
            lines += ["", f"[bold]{escape_markup(entry.namespace)}[/]:"]
            lines += [
                "  " + line if line else ""
                for line in to_text(
                    entry.report, verbose=verbose, width=None if width is None else width - 2
                )
            ]
    counts = [
        f"{fleet.count(Verdict.NOT_READY)} not ready",
        f"{fleet.count(Verdict.UNKNOWN)} could not be checked",
        f"{fleet.count(Verdict.READY)} ready",
    ]
    total = len(fleet.namespaces)
    lines += ["", f"{total} namespace{'s' if total != 1 else ''}: {', '.join(counts)}."]
    return lines
