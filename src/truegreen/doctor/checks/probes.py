"""Probe honesty: the live workloads, checked with the same rules as `truegreen lint`.

In a running environment these are warnings: they make rollouts and restarts untrustworthy,
but they do not by themselves stop training from running now.
"""

from typing import Final

from truegreen.doctor.checks.base import Words, workloads_of
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.lint.probes import WorkloadModel, workload_models
from truegreen.lint.rules import Context, Severity, evaluate
from truegreen.plain_words import Wording

CHECK = CheckId.PROBES

OK: Final = "probes.ok"
NO_READINESS: Final = "probes.no-readiness"
RESTARTS_TRAINING: Final = "probes.restarts-training"
WRONG_PORT: Final = "probes.wrong-port"
CHECKS_DISABLED_SERVER: Final = "probes.checks-disabled-server"
LIVENESS_SAME_AS_READINESS: Final = "probes.liveness-same-as-readiness"
CANNOT_FAIL: Final = "probes.cannot-fail"
CANNOT_PASS: Final = "probes.cannot-pass"
CANT_READ: Final = "probes.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("Every workload's health checks can be trusted.", ""),
    NO_READINESS: Wording(
        "Updates of {workload} can report success before it works: it has no readiness check "
        "that can fail.",
        "Add a readiness check on {port}.",
    ),
    RESTARTS_TRAINING: Wording(
        "{workload} can be restarted by its own health check while it keeps training running.",
        "Remove the checks that restart '{container}' when they fail; keep the one that only "
        "pauses its traffic.",
    ),
    WRONG_PORT: Wording(
        "{workload}'s health check looks at port {port}, which '{container}' doesn't serve.",
        "Point the check at a port the program listens on.",
    ),
    CHECKS_DISABLED_SERVER: Wording(
        "{workload} can never become ready: its health check targets a server that its "
        "settings turn off.",
        "Drop the check when {setting} is set, or leave the server on.",
    ),
    LIVENESS_SAME_AS_READINESS: Wording(
        "{workload} restarts '{container}' on the same signal that only should pause its traffic.",
        "Make the check that restarts it more lenient than the one that pauses its traffic, "
        "or remove it.",
    ),
    CANNOT_FAIL: Wording(
        "{workload}'s health check on '{container}' always passes, so it tells nothing.",
        "Check something that fails when the program is broken.",
    ),
    CANNOT_PASS: Wording(
        "{workload}'s health check on '{container}' can never pass: it runs a command only a "
        "shell knows, with no shell to run it.",
        "Check something that fails when the program is broken, through a shell if it needs one.",
    ),
    CANT_READ: Wording("Couldn't check the environment's health checks: {why}.", "{remedy}"),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CHECK, WORDS)
_CODES = {
    "readiness-missing": NO_READINESS,
    "restart-probe-on-keep-running": RESTARTS_TRAINING,
    "probe-port-undeclared": WRONG_PORT,
    "probe-targets-disabled-server": CHECKS_DISABLED_SERVER,
    "liveness-same-as-readiness": LIVENESS_SAME_AS_READINESS,
    "probe-cannot-fail": CANNOT_FAIL,
    "probe-cannot-pass": CANNOT_PASS,
    "probe-port-unlisted": WRONG_PORT,
}
# What a live object cannot show or doctor has no words for: the API server has already
# dropped unknown fields and refused wrong types, and a startup-only gate is a lint-time hint.
_LINT_ONLY = frozenset({"unknown-field", "wrong-field-type", "readiness-missing-after-startup"})


def check(env: Environment) -> list[Finding]:
    """Findings from the probe rules on the environment's workloads."""
    items, findings = workloads_of(env, SAY)
    for obj in items:
        for model in workload_models(obj) or ():
            findings += _findings(model)
    return findings or [SAY.ok()]


def _findings(model: WorkloadModel) -> list[Finding]:
    findings = []
    for rule, hit in evaluate(model, Context()):
        if rule.severity is Severity.INFO or rule.id in _LINT_ONLY:
            continue
        fields = {"port": "", "setting": "", **hit.values}
        findings.append(
            SAY.finding(
                Status.WARN,
                Basis.MEASURED,
                _CODES[rule.id],
                details=(f"{model.kind}/{model.name} [{rule.id}] {hit.message}",),
                objects=(f"{model.kind}/{model.name}",),
                workload=f"the workload '{model.name}'",
                container=hit.container or "",
                **fields,
            )
        )
    return findings
