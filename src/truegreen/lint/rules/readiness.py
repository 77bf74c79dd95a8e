"""Readiness rules: a long-running container without a readiness probe makes rollouts lie."""

from collections.abc import Iterator

from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity
from truegreen.probes import ContainerModel, ProbeKind, WorkloadModel, disabled_ports, same_port


def _served_ports(container: ContainerModel, workload: WorkloadModel) -> list[str]:
    """Declared ports whose servers the container's env does not turn off."""
    off = disabled_ports(container, workload.intent)
    return [
        f"port {p.number}" + (f" ({p.name})" if p.name else "")
        for p in container.ports
        if not any(same_port(container, d.port, p.number) for d in off)
    ]


def _needs_readiness(workload: WorkloadModel) -> Iterator[ContainerModel]:
    if workload.is_batch:
        return  # Jobs and CronJobs run to completion; readiness means nothing for them
    for container in workload.main_containers:
        if container.probe(ProbeKind.READINESS) is None:
            yield container


def _missing(workload: WorkloadModel, context: Context) -> Iterator[RuleHit]:
    for container in _needs_readiness(workload):
        ports = _served_ports(container, workload)
        services = context.services_by_container.get(container.name)
        if not ports and not services:
            continue
        routed = f" Service {', '.join(services)} routes to it, and" if services else ""
        port_text = ", ".join(ports) if ports else "the port its Service targets"
        yield RuleHit(
            container.name,
            f"container {container.name} serves {port_text} but has no readinessProbe:{routed} "
            "it counts as Ready as soon as it runs, so a rollout over a crash loop reports "
            "success.",
            {"port": port_text},
        )


def _no_listener(workload: WorkloadModel, context: Context) -> Iterator[RuleHit]:
    for container in _needs_readiness(workload):
        if _served_ports(container, workload) or context.services_by_container.get(container.name):
            continue
        yield RuleHit(
            container.name,
            f"container {container.name} listens on nothing and has no readinessProbe: "
            "rollout status only means the process started.",
        )


READINESS_MISSING = Rule(
    id="readiness-missing",
    severity=Severity.ERROR,
    summary="A long-running container that serves a port has no readiness probe.",
    rationale=(
        "Without a readiness probe a container is Ready as soon as its process runs. A rollout "
        "then reports success over a crash loop, and a Service sends traffic to a server that is "
        "not listening yet. Liveness probes are no substitute: they restart, they do not gate."
    ),
    fix=(
        "Add a readinessProbe on the port the container serves (a tcpSocket probe is enough when "
        "the port only opens once startup succeeded). Do not add a liveness probe to get one."
    ),
    check=_missing,
)

READINESS_MISSING_NO_PORT = Rule(
    id="readiness-missing-no-port",
    severity=Severity.INFO,
    summary="A long-running container listens on nothing and has no readiness probe.",
    rationale=(
        "With no port and no readiness probe, rollout status only says the process started, not "
        "that it works."
    ),
    fix="If the process can say it is ready (a file, a command), add an exec readinessProbe.",
    check=_no_listener,
)
