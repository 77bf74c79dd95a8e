"""Rendering a run over many namespaces (docs/fleet.md).

Text: one line per namespace (its verdict, its name, its headline), the worst first; then the
whole report of each namespace that is not ready or could not be checked (`--verbose`: of
every namespace); then one line counting them. JSON (`schema_version` 1): `verdict` and
`exit_code` of the fleet, `counts` {ready, not-ready, unknown}, and `namespaces`
[{`namespace`, `report`}], each `report` the document `doctor -n NAMESPACE -o json` prints.
Over clusters (`--contexts`, `--all-contexts`): the same table with a cluster column, and a
document with `clusters` [{`context`, `verdict`, `exit_code`, `failure`, `namespaces`}].
"""

from typing import Any, NamedTuple

from truegreen.doctor.command.clusters import ClustersReport
from truegreen.doctor.command.fleet import FleetReport
from truegreen.doctor.findings import Status
from truegreen.doctor.present.report import (
    GLYPHS,
    SCHEMA_VERSION,
    VERDICT_WORDS,
    to_json,
    to_text,
    wrapped,
)
from truegreen.doctor.rollup import Verdict
from truegreen.markup import escape as escape_markup
from truegreen.textsafe import terminal_safe


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
    """Rich markup lines: the table, the details, the count. A namespace's name is the
    server's text: its control characters are made visible (terminal_safe) before it is padded,
    as kubectl's tables show them (cli-runtime printers/terminal.go `EscapeTerminal`), so a
    name cannot recolour the terminal, retitle it or start a line of its own."""
    words = max(len(VERDICT_WORDS[e.report.verdict][1]) for e in fleet.namespaces)
    names = max(len(terminal_safe(e.namespace)) for e in fleet.namespaces)
    lines: list[str] = []
    for entry in fleet.namespaces:
        headline = entry.report.headline
        markup, plain = VERDICT_WORDS[entry.report.verdict]
        prefix = (
            f"{GLYPHS[headline.status]} {markup}{' ' * (words - len(plain))}  "
            f"{escape_markup(terminal_safe(entry.namespace).ljust(names))}  "
        )
        lines += wrapped(prefix, 2 + words + 2 + names + 2, headline.text, width, 4)
    for entry in fleet.namespaces:
        if verbose or entry.report.verdict is not Verdict.READY:
            lines += ["", f"[bold]{escape_markup(terminal_safe(entry.namespace))}[/]:"]
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


def clusters_json(run: ClustersReport) -> dict[str, Any]:
    """The document of a run over clusters: its verdict, and per cluster (by context) its
    verdict, exit code, why it could not be checked (`failure`, else null) and its
    namespaces, each as in the fleet document."""
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": run.verdict.value,
        "exit_code": int(run.exit_code),
        "clusters": [
            {
                "context": cluster.context,
                "verdict": (
                    Verdict.UNKNOWN.value if cluster.fleet is None else cluster.fleet.verdict.value
                ),
                "exit_code": int(cluster.exit_code),
                "failure": None
                if cluster.failure is None
                else {
                    "code": cluster.failure.code,
                    "text": cluster.failure.text,
                    "remedy": cluster.failure.remedy,
                },
                "namespaces": []
                if cluster.fleet is None
                else fleet_json(cluster.fleet)["namespaces"],
            }
            for cluster in run.clusters
        ],
    }


class _Row(NamedTuple):
    verdict: Verdict
    status: Status
    cluster: str
    namespace: str
    headline: str


def clusters_text(run: ClustersReport, *, verbose: bool, width: int | None = None) -> list[str]:
    """The fleet's table with a cluster column, worst first across clusters; then the details
    of what is not ready (a cluster that could not be checked: what to do); then the count.
    Names are shown as `fleet_text` shows them."""
    rows: list[_Row] = []
    for cluster in run.clusters:
        if cluster.fleet is None:
            text = cluster.failure.text if cluster.failure is not None else ""
            rows.append(_Row(Verdict.UNKNOWN, Status.UNKNOWN, cluster.context, "-", text))
            continue
        for entry in cluster.fleet.namespaces:
            report = entry.report
            rows.append(
                _Row(
                    report.verdict,
                    report.headline.status,
                    cluster.context,
                    entry.namespace,
                    report.headline.text,
                )
            )
    rows.sort(key=lambda r: (_RANK[r.verdict], r.cluster, r.namespace))
    words = max(len(VERDICT_WORDS[r.verdict][1]) for r in rows)
    clusters = max(len(terminal_safe(r.cluster)) for r in rows)
    names = max(len(terminal_safe(r.namespace)) for r in rows)
    lines: list[str] = []
    for row in rows:
        markup, plain = VERDICT_WORDS[row.verdict]
        prefix = (
            f"{GLYPHS[row.status]} {markup}{' ' * (words - len(plain))}  "
            f"{escape_markup(terminal_safe(row.cluster).ljust(clusters))}  "
            f"{escape_markup(terminal_safe(row.namespace).ljust(names))}  "
        )
        lines += wrapped(prefix, 2 + words + 2 + clusters + 2 + names + 2, row.headline, width, 4)
    inner = None if width is None else width - 2
    for cluster in run.clusters:
        if cluster.failure is not None:
            lines += ["", f"[bold]{escape_markup(terminal_safe(cluster.context))}[/]:"]
            lines += wrapped("  → ", 4, cluster.failure.remedy, width, 4)
            continue
        assert cluster.fleet is not None
        for entry in cluster.fleet.namespaces:
            if verbose or entry.report.verdict is not Verdict.READY:
                title = escape_markup(terminal_safe(f"{cluster.context}/{entry.namespace}"))
                lines += ["", f"[bold]{title}[/]:"]
                lines += [
                    "  " + line if line else ""
                    for line in to_text(entry.report, verbose=verbose, width=inner)
                ]
    lines += ["", _clusters_count(run)]
    return lines


def _clusters_count(run: ClustersReport) -> str:
    """The closing count: the clusters (those not reached said apart), then the namespaces
    checked in the others, each verdict counted over those namespaces."""
    verdicts = [
        entry.report.verdict
        for cluster in run.clusters
        if cluster.fleet is not None
        for entry in cluster.fleet.namespaces
    ]
    counted = {v: verdicts.count(v) for v in Verdict}
    total = len(run.clusters)
    unreached = sum(1 for cluster in run.clusters if cluster.fleet is None)
    apart = f" ({unreached} could not be checked)" if unreached else ""
    return (
        f"{total} cluster{'s' if total != 1 else ''}{apart}, "
        f"{len(verdicts)} namespace{'s' if len(verdicts) != 1 else ''}: "
        f"{counted[Verdict.NOT_READY]} not ready, "
        f"{counted[Verdict.UNKNOWN]} could not be checked, {counted[Verdict.READY]} ready."
    )


_RANK = {Verdict.NOT_READY: 0, Verdict.UNKNOWN: 1, Verdict.READY: 2}
