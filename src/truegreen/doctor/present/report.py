"""Rendering a doctor report: text for people (truegreen.markup), a JSON document for machines.

The JSON document (`schema_version` 1): `verdict` (ready, not-ready, unknown), `exit_code`,
`headline` {check, code, status, rule, text, remedy}, `findings` [{check, status, basis, code,
headline, remedy, details, objects}] and `coverage` {checked, not_checked [{check, reason}]}.
`job` names the training job judged (null when there is none): `kind`, `name`, `source` (where
the sizes judged came from: `newest`, the newest training job's template; `job-file`,
`--job-file`'s; `job-requests`, `--job-requests`, given to each pod of the judged job's pod
sets), `together` (every pod must run at once) and `pod_sets` [{name, count, requests}], each
pod's requests as judged: as the API server would store it, or as `--job-requests` gives them,
in scheduler units (CPU in millicores, memory in bytes).
`check` is one of, in root-cause order: credentials, image-pull, storage, queue (Kueue and
the gang schedulers), admission (the API server's gates: namespace state, service account,
ResourceQuota, webhooks, Pod Security, the trial start; codes `admission.*`,
docs/admission.md), workloads, evidence (what the cluster reported that no other check reads),
capacity (the scheduler's fit rules), probes, freshness, trial (`--trial`). `status` is ok,
warn, fail or unknown; `basis` is measured, inferred or cant-check.
A run that could not start checking (kubeconfig unusable, a bad setting) still prints one
document, the shared failure document (docs/failure.schema.json) in this shape: verdict
`unknown`, its exit code, the failure's code (`setup-failed`, `bad-usage` for exit 64,
`internal-error` for 1) as headline code and rule, the reason as its text, and no findings.
`objects` name what a finding looked at as `Kind/name`, or `Kind/namespace/name` for an object
in another namespace than the one checked (a webhook's Service).
A `not_checked` entry whose reason starts `not asked for:` is a check, or a part of one, the
operator did not ask for (`credentials` without `--credentials-secret`; `image-pull`'s registry
look-ups with `--no-registry`: that check is also in `checked` for the rest of it).
In text, `--verbose` shows each finding's details: a finding that is not ok under its line,
an ok one under its row of the checks table.
"""

from typing import TYPE_CHECKING, Any

from truegreen.doctor.findings import Finding, Status
from truegreen.doctor.rollup import Report, Verdict
from truegreen.markup import escape as escape_markup
from truegreen.textsafe import terminal_safe
from truegreen.wrapping import wrap

if TYPE_CHECKING:
    from truegreen.failure import Failure


SCHEMA_VERSION = 1
GLYPHS = {
    Status.OK: "[green]✓[/]",
    Status.WARN: "[yellow]![/]",
    Status.FAIL: "[red]✗[/]",
    Status.UNKNOWN: "[magenta]?[/]",
}
VERDICT_WORDS = {
    Verdict.READY: ("[bold green]READY[/]", "READY"),
    Verdict.NOT_READY: ("[bold red]NOT READY[/]", "NOT READY"),
    Verdict.UNKNOWN: ("[bold magenta]COULD NOT CHECK[/]", "COULD NOT CHECK"),
}
"""Each verdict as markup, and as the plain words whose width the markup takes."""


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
        "job": _job_json(report),
        "coverage": {
            "checked": [c.value for c in report.checked],
            "not_checked": [
                {"check": n.check.value, "reason": n.reason} for n in report.not_checked
            ],
        },
    }


def _job_json(report: Report) -> dict[str, Any] | None:
    job = report.job
    if job is None:
        return None
    return {
        "kind": job.kind,
        "name": job.name,
        "source": job.source,
        "together": job.together,
        "pod_sets": [
            {"name": s.name, "count": s.count, "requests": dict(s.requests)} for s in job.pod_sets
        ],
    }


def failure_json(failure: "Failure") -> dict[str, Any]:
    """The document of a run that could not start checking (a kubeconfig that cannot be used,
    a bad setting, a bug): the shared failure document (truegreen.failure) with a report's
    fields, verdict `unknown` and no findings, so a machine reads one shape per run. `rule`
    is the failure's code: no rule of the rollup chose this headline."""
    from truegreen.failure import failure_document

    document = failure_document(
        failure,
        verdict=Verdict.UNKNOWN.value,
        findings=[],
        job=None,
        coverage={"checked": [], "not_checked": []},
    )
    document["headline"] = {
        "check": None,
        "code": failure.code,
        "status": Status.UNKNOWN.value,
        "rule": failure.code,
        "text": failure.text,
        "remedy": failure.remedy,
    }
    return {key: document[key] for key in _REPORT_ORDER}


_REPORT_ORDER = (
    "schema_version",
    "verdict",
    "exit_code",
    "headline",
    "findings",
    "job",
    "coverage",
)
"""The keys of `to_json`'s document, in its order."""


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


def to_text(report: Report, *, verbose: bool, width: int | None = None) -> list[str]:
    """Markup lines (truegreen.markup): headline, remedy, also-lines, coverage; details when
    verbose. With `width` (a terminal's), every line is wrapped at word boundaries to fit it."""
    headline = report.headline
    verdict = VERDICT_WORDS[report.verdict]
    lines = wrapped(
        f"{GLYPHS[headline.status]} {verdict[0]}  ", 4 + len(verdict[1]), headline.text, width, 2
    )
    if headline.remedy:
        lines += wrapped("  → ", 4, headline.remedy, width, 4)
    if verbose and headline.finding is not None:
        lines += _detail_lines(headline.finding, 4, width)
    if report.also:
        lines.append("")
        lines.append("Also:")
        for finding in report.also:
            lines += wrapped(f"  {GLYPHS[finding.status]} ", 4, finding.headline, width, 4)
            if verbose:
                lines += wrapped("      → ", 8, finding.remedy, width, 8)
                lines += _detail_lines(finding, 6, width)
    lines.append("")
    lines += wrapped("", 0, coverage_line(report), width, 2)
    if verbose:
        lines.append("")
        lines.append("Checks:")
        # columns as wide as their longest entry, so that the table fits narrow terminals
        checks = max((len(f.check.value) for f in report.findings), default=0)
        codes = max((len(f.code) for f in report.findings), default=0)
        for finding in report.findings:
            row = f"{finding.check.value:<{checks}}  {finding.code:<{codes}}  {finding.basis.value}"
            if width is None or 4 + len(row) <= width:
                lines.append(f"  {GLYPHS[finding.status]} {escape_markup(row)}")
            else:  # too narrow for the columns: the row's words, wrapped
                lines += wrapped(f"  {GLYPHS[finding.status]} ", 4, row, width, 6)
            if finding.status is Status.OK:  # a finding that is not ok showed them above
                lines += _detail_lines(finding, 6, width, objects=False)
    return lines


def wrapped(prefix: str, taken: int, text: str, width: int | None, indent: int) -> list[str]:
    """`prefix` (markup, `taken` columns wide) then `text`, wrapped and shown safely."""
    first, *rest = wrap(terminal_safe(text), width, first=taken, indent=indent)
    return [prefix + escape_markup(first), *(escape_markup(line) for line in rest)]


def _detail_lines(
    finding: Finding, indent: int, width: int | None, *, objects: bool = True
) -> list[str]:
    texts = [*finding.details]
    if objects and finding.objects:
        texts.append(f"objects: {', '.join(finding.objects)}")
    lines = []
    for text in texts:
        first, *rest = wrap(terminal_safe(text), width, first=indent, indent=indent + 2)
        lines += [
            f"{' ' * indent}[dim]{escape_markup(first)}[/]",
            *(f"[dim]{escape_markup(r)}[/]" for r in rest),
        ]
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
        said = report.headline.finding.why if report.headline.finding is not None else ""
        reasons = "; ".join(
            f"{', '.join(checks)}: {'as said above' if why == said else why}"
            for why, checks in by_reason.items()
        )
        text += f", {len(unknown)} could not be checked ({reasons})"
    text += "."
    not_asked = [n for n in report.not_checked if not n.asked]
    if not_asked:
        from truegreen.doctor.catalogue import NOT_ASKED_HINTS

        # A part of a check is named with it; a whole check with how to ask for it.
        named = [
            f"{n.check.value} ({n.part or NOT_ASKED_HINTS[n.check.value]})"
            if n.part or n.check.value in NOT_ASKED_HINTS
            else n.check.value
            for n in not_asked
        ]
        text += f" Not asked for: {'; '.join(named)}."
    return text
