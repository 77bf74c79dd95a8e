"""Probe honesty: the live workloads, checked with the same rules as `truegreen lint`.

In a running environment these are warnings: they make rollouts and restarts untrustworthy,
but they do not by themselves stop training from running now.
"""

from truegreen.doctor.checks.base import finding, ok, workloads_of
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.lint.probes import WorkloadModel, workload_models
from truegreen.lint.rules import Context, Severity, evaluate

CHECK = CheckId.PROBES
_CODES = {
    "readiness-missing": "probes.no-readiness",
    "restart-probe-on-keep-running": "probes.restarts-training",
    "probe-port-undeclared": "probes.wrong-port",
    "probe-targets-disabled-server": "probes.checks-disabled-server",
    "liveness-same-as-readiness": "probes.liveness-same-as-readiness",
    "probe-cannot-fail": "probes.cannot-fail",
    "probe-port-unlisted": "probes.wrong-port",
}
# What a live object cannot show or doctor has no words for: the API server has already
# dropped unknown fields, and a startup-only gate is a lint-time hint.
_LINT_ONLY = frozenset({"unknown-field", "readiness-missing-after-startup"})


def check(env: Environment) -> list[Finding]:
    """Findings from the probe rules on the environment's workloads."""
    items, findings = workloads_of(env, CHECK)
    for obj in items:
        for model in workload_models(obj) or ():
            findings += _findings(model)
    return findings or [ok(CHECK)]


def _findings(model: WorkloadModel) -> list[Finding]:
    findings = []
    for rule, hit in evaluate(model, Context()):
        if rule.severity is Severity.INFO or rule.id in _LINT_ONLY:
            continue
        fields = {"port": "", "setting": "", **hit.values}
        findings.append(
            finding(
                CHECK,
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
