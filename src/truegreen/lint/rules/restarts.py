"""Restart rules: probes that kill work they should leave running, or restart on traffic signals."""

from collections.abc import Iterator

from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity
from truegreen.probes import ProbeKind, WorkloadModel, same_check


def _keep_running(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        if container.name not in workload.intent.keep_running:
            continue
        for probe in container.probes:
            if probe.kind.restarts_container:
                yield RuleHit(
                    container.name,
                    f"container {container.name} is declared keep-running but has a {probe.kind}: "
                    "when it fails the kubelet kills the container and the work it keeps running.",
                )


def _liveness_is_readiness(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        liveness = container.probe(ProbeKind.LIVENESS)
        readiness = container.probe(ProbeKind.READINESS)
        if (
            liveness
            and readiness
            and liveness.handler
            and same_check(container, liveness, readiness)
        ):
            yield RuleHit(
                container.name,
                f"container {container.name}'s livenessProbe checks exactly what its "
                "readinessProbe checks: a moment of overload restarts the container instead of "
                "pausing its traffic.",
            )


RESTART_PROBE_ON_KEEP_RUNNING = Rule(
    id="restart-probe-on-keep-running",
    severity=Severity.ERROR,
    summary="A liveness or startup probe on a container declared to keep running work.",
    rationale=(
        "Liveness and startup probes both restart the container when they fail. A container "
        "declared keep-running (truegreen.io/keep-running) holds work, such as training runs, "
        "that must survive its server failing; a restart reverses that decision."
    ),
    fix=(
        "Remove the livenessProbe and startupProbe from this container and keep a readinessProbe: "
        "readiness takes it out of the Service without restarting anything."
    ),
    check=_keep_running,
)

LIVENESS_SAME_AS_READINESS = Rule(
    id="liveness-same-as-readiness",
    severity=Severity.WARNING,
    summary="The liveness probe is identical to the readiness probe.",
    rationale=(
        "When both probes check the same thing, every time the container is briefly not ready it "
        "is also restarted, which turns load spikes into restart storms."
    ),
    fix="Make the liveness probe check only that the process is alive, or remove it.",
    check=_liveness_is_readiness,
)
