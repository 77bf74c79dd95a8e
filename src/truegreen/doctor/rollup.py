"""The rollup: one ordered, declarative rule table picks the headline; all findings set the exit.

Measured beats inferred; a root cause beats its symptom; an inference that explains a symptom
(a running job holds the capacity) beats the failure it explains but never a measured failure.
Every other non-ok finding is still shown: nothing is shadowed.
"""

from collections.abc import Sequence
from enum import StrEnum

from msgspec import Struct
from msgspec.structs import replace

from truegreen.doctor.catalogue import render
from truegreen.doctor.checks.admission import words as admission
from truegreen.doctor.checks.capacity import words as capacity
from truegreen.doctor.checks.queue import words as queue
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.training import JobSummary
from truegreen.exitcodes import ExitCode

_CHECK_ORDER = {check: index for index, check in enumerate(CheckId)}


class HeadlineRule(Struct, frozen=True):
    """Matches findings by status, and optionally by basis, check and code."""

    id: str
    status: Status
    basis: Basis | None = None
    checks: frozenset[CheckId] | None = None
    codes: frozenset[str] | None = None
    every_check: bool = False
    """The finding speaks for every check (nothing could be read): the headline names none."""

    def matches(self, finding: Finding) -> bool:
        """Whether `finding` can be the headline under this rule."""
        return (
            finding.status is self.status
            and (self.basis is None or finding.basis is self.basis)
            and (self.checks is None or finding.check in self.checks)
            and (self.codes is None or finding.code in self.codes)
        )


# Admission is a root cause: a refused pod never exists, so the pods and rollouts waiting for it
# are its symptoms; so is the queue: a job it does not admit never gets pods.
ROOT_CAUSE_CHECKS = frozenset(
    {CheckId.CREDENTIALS, CheckId.IMAGE_PULL, CheckId.STORAGE, CheckId.QUEUE, CheckId.ADMISSION}
)
WAIT_FOR_RUNNING_JOB = frozenset(
    {
        capacity.HELD_BY_RUNNING_JOB,
        capacity.VOLUME_HELD_BY_RUNNING_JOB,
        admission.QUOTA_HELD_BY_RUNNING_JOB,
        capacity.MACHINE_COMING,
        capacity.PREEMPTION_UNDER_WAY,
        queue.HELD,
    }
)
# No read could be made at all: the cluster was not reached, or no login was made or accepted.
NOTHING_READ = frozenset(
    {
        "cluster-unreachable",
        "cluster-login-failed",
        "cluster-login-no-answer",
        "cluster-login-refused",
    }
)
# A namespace being deleted (or gone) refuses everything; nothing else is worth fixing first.
NAMESPACE_CLOSED = frozenset({admission.NAMESPACE_TERMINATING, admission.NAMESPACE_MISSING})

HEADLINE_RULES: tuple[HeadlineRule, ...] = (
    HeadlineRule("nothing-read", Status.UNKNOWN, codes=NOTHING_READ, every_check=True),
    HeadlineRule("namespace-closed", Status.FAIL, Basis.MEASURED, codes=NAMESPACE_CLOSED),
    HeadlineRule("root-cause-failure", Status.FAIL, Basis.MEASURED, checks=ROOT_CAUSE_CHECKS),
    HeadlineRule("measured-failure", Status.FAIL, Basis.MEASURED),
    HeadlineRule("inferred-failure", Status.FAIL, Basis.INFERRED),
    HeadlineRule("waiting-for-running-job", Status.WARN, codes=WAIT_FOR_RUNNING_JOB),
    HeadlineRule("could-not-check", Status.UNKNOWN),
    HeadlineRule("warning", Status.WARN),
)
"""The headline is the first finding, in check order, matched by the first rule that matches."""


class Verdict(StrEnum):
    """The one-word answer."""

    READY = "ready"
    NOT_READY = "not-ready"
    UNKNOWN = "unknown"


class Headline(Struct, frozen=True):
    """What the operator reads first."""

    rule: str
    check: CheckId | None
    code: str
    status: Status
    text: str
    remedy: str
    finding: Finding | None


class NotChecked(Struct, frozen=True):
    """A check that did not measure, and why."""

    check: CheckId
    reason: str
    asked: bool = True
    """False for a check the operator did not ask for (credentials without a secret name)."""
    part: str = ""
    """The part of the check not asked for, when the rest of it ran (the registry look-ups of
    image-pull with `--no-registry`); "" for the whole check."""


class Report(Struct, frozen=True):
    """doctor's whole answer."""

    verdict: Verdict
    exit_code: ExitCode
    headline: Headline
    findings: tuple[Finding, ...]
    checked: tuple[CheckId, ...]
    not_checked: tuple[NotChecked, ...]
    job: JobSummary | None = None
    """The training job the report judged, with its pod sets."""

    @property
    def also(self) -> tuple[Finding, ...]:
        """Every other non-ok finding, in check order; a repeat of the headline's words is not
        shown twice (an unreachable cluster makes every check say the same thing)."""
        said = (self.headline.status, self.headline.text)
        return tuple(
            f
            for f in self.findings
            if f.status is not Status.OK
            and f is not self.headline.finding
            and (f.status, f.headline) != said
        )


def exit_code_for(findings: Sequence[Finding]) -> ExitCode:
    """From ALL findings, never the headline: any fail → 2; else any unknown → 3; else 0."""
    statuses = {f.status for f in findings}
    if Status.FAIL in statuses:
        return ExitCode.FAILED
    if Status.UNKNOWN in statuses:
        return ExitCode.UNKNOWN
    return ExitCode.GOOD


def pick_headline(findings: Sequence[Finding]) -> Headline:
    """The first rule of the table that matches any finding; all ok otherwise."""
    for rule in HEADLINE_RULES:
        for finding in findings:
            if rule.matches(finding):
                return Headline(
                    rule.id,
                    None if rule.every_check else finding.check,
                    finding.code,
                    finding.status,
                    finding.headline,
                    finding.remedy,
                    finding,
                )
    text, remedy = render("ready")
    return Headline("ready", None, "ready", Status.OK, text, remedy, None)


def merge_duplicates(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per distinct statement; the details and objects of repeats are kept."""
    merged: dict[tuple[CheckId, Status, Basis, str, str], Finding] = {}
    for finding in findings:
        key = (finding.check, finding.status, finding.basis, finding.code, finding.headline)
        first = merged.get(key)
        if first is None:
            merged[key] = finding
            continue
        merged[key] = replace(
            first,
            details=tuple(dict.fromkeys((*first.details, *finding.details))),
            objects=tuple(dict.fromkeys((*first.objects, *finding.objects))),
        )
    return list(merged.values())


def roll_up(
    findings: Sequence[Finding], ran: Sequence[CheckId], skipped: Sequence[NotChecked] = ()
) -> Report:
    """Order the findings, pick the headline, and say what was and was not measured."""
    ordered = tuple(sorted(merge_duplicates(findings), key=lambda f: _CHECK_ORDER[f.check]))
    exit_code = exit_code_for(ordered)
    verdict = {
        ExitCode.FAILED: Verdict.NOT_READY,
        ExitCode.UNKNOWN: Verdict.UNKNOWN,
        ExitCode.GOOD: Verdict.READY,
    }[exit_code]
    not_checked = list(skipped)
    checked = []
    for check in sorted(ran, key=_CHECK_ORDER.__getitem__):
        unknown = next(
            (f for f in ordered if f.check is check and f.status is Status.UNKNOWN), None
        )
        if unknown is None:
            checked.append(check)
        else:
            not_checked.append(NotChecked(check, unknown.why or unknown.headline))
    return Report(
        verdict,
        exit_code,
        pick_headline(ordered),
        ordered,
        tuple(checked),
        tuple(sorted(not_checked, key=lambda n: _CHECK_ORDER[n.check])),
    )
