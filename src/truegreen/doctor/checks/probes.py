"""Probe honesty: the live workloads, checked with the same rules as `truegreen lint`.

In a running environment these are warnings: they make rollouts and restarts untrustworthy,
but they do not by themselves stop training from running now.
"""

from truegreen.doctor.checks.base import finding, ok, workloads_of
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.lint.rules import Context, Severity, evaluate
from truegreen.probes import workload_model

CHECK = CheckId.PROBES
_CODES = {
    "readiness-missing": "probes.no-readiness",
    "restart-probe-on-keep-running": "probes.restarts-training",
    "probe-port-undeclared": "probes.wrong-port",
    "probe-targets-disabled-server": "probes.checks-disabled-server",
    "liveness-same-as-readiness": "probes.liveness-same-as-readiness",
    "probe-cannot-fail": "probes.cannot-fail",
}


def check(env: Environment) -> list[Finding]:
    """Findings from the probe rules on the environment's workloads."""
    items, findings = workloads_of(env, CHECK)
    for obj in items:
        model = workload_model(obj)
        if model is None:
            continue
        for rule, hit in evaluate(model, Context()):
            if rule.severity is Severity.INFO:
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
    return findings or [ok(CHECK)]
