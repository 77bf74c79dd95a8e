"""Readiness rules: a long-running container without a readiness probe makes rollouts lie.

A startup probe also holds a container not Ready until it first passes (the kubelet reports
Ready false while it runs), so it gates the rollout; after it passes, nothing takes a container
without a readiness probe out of its Service.

A probe whose command cannot fail gates nothing: the kubelet sets its result to Success at its
first run (pkg/kubelet/prober/worker.go doProbe), so the container is Ready as soon as it runs,
exactly as with no readiness probe (prober_manager.go UpdatePodStatus: a started container with
no readiness worker is ready). Such a probe counts here as no probe at all.
"""

from collections.abc import Iterator

from truegreen.lint.kinds import Work
from truegreen.lint.probes import (
    ContainerModel,
    Probe,
    ProbeKind,
    WorkloadModel,
    disabled_ports,
    same_port,
)
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity
from truegreen.lint.rules.exec_probes import shown


def _served_ports(container: ContainerModel, workload: WorkloadModel) -> list[str]:
    """Declared ports whose servers the container's env does not turn off."""
    off = disabled_ports(container, workload.intent)
    return [
        f"port {p.number}" + (f" ({p.name})" if p.name else "")
        for p in container.ports
        if not any(same_port(container, d.port, p.number) for d in off)
    ]


def _gate(container: ContainerModel, kind: ProbeKind) -> Probe | None:
    """The container's probe of `kind` when it can hold the container not Ready; None when it
    has none, or one whose command cannot fail (it passes at its first run: worker.go doProbe)."""
    probe = container.probe(kind)
    return None if probe is None or probe.cannot_fail else probe


def _ungated(workload: WorkloadModel) -> Iterator[ContainerModel]:
    """Main containers of long-running pods that nothing holds not-Ready: no readiness probe
    that can fail, none from their controller."""
    if workload.is_batch:
        return  # Jobs and what is built of them run to completion; readiness means nothing
    for container in workload.main_containers:
        if not container.ready_by_controller and _gate(container, ProbeKind.READINESS) is None:
            yield container


def _cannot_fail_text(container: ContainerModel, kind: ProbeKind) -> str:
    """`its readinessProbe runs 'true', which always succeeds`, or "" when it has no such probe."""
    probe = container.probe(kind)
    if probe is None or not probe.cannot_fail:
        return ""
    return f"its {kind} runs {shown(probe.command)!r}, which always succeeds"


def _serving(
    container: ContainerModel, workload: WorkloadModel, context: Context
) -> tuple[list[str], tuple[str, ...]]:
    return _served_ports(container, workload), context.services_by_container.get(container.name, ())


def _port_text(ports: list[str]) -> str:
    return ", ".join(ports) if ports else "the port its Service targets"


def _routed_text(services: tuple[str, ...]) -> str:
    return f" Service {', '.join(services)} routes to it, and" if services else ""


def _missing(workload: WorkloadModel, context: Context) -> Iterator[RuleHit]:
    for container in _ungated(workload):
        if _gate(container, ProbeKind.STARTUP) is not None:
            continue  # readiness-missing-after-startup
        ports, services = _serving(container, workload, context)
        if not ports and not services:
            continue
        outcome = (
            "a rollout over a crash loop reports success"
            if workload.work is Work.ROLLED_OUT
            else "traffic reaches it before it listens and a crash loop looks like a working server"
        )
        # A probe that cannot fail is why it has no gate: say so, not "no probe".
        lacks = _cannot_fail_text(container, ProbeKind.READINESS) or "has no readinessProbe"
        if startup := _cannot_fail_text(container, ProbeKind.STARTUP):
            lacks += f", and {startup}"
        yield RuleHit(
            container.name,
            f"container {container.name} serves {_port_text(ports)} but {lacks}:"
            f"{_routed_text(services)} it counts as Ready as soon as it runs, so {outcome}.",
            {"port": _port_text(ports)},
        )


def _after_startup(workload: WorkloadModel, context: Context) -> Iterator[RuleHit]:
    for container in _ungated(workload):
        if _gate(container, ProbeKind.STARTUP) is None:
            continue  # readiness-missing: nothing gates it at all
        ports, services = _serving(container, workload, context)
        if not ports and not services:
            continue  # the startup probe is all the gating a port-less worker has to give
        held = "holds the rollout" if workload.work is Work.ROLLED_OUT else "holds it not Ready"
        readiness = _cannot_fail_text(container, ProbeKind.READINESS)
        yield RuleHit(
            container.name,
            f"container {container.name} serves {_port_text(ports)} with a startupProbe but "
            + (f"{readiness}:" if readiness else "no readinessProbe:")
            + f"{_routed_text(services)} the startupProbe {held} until it first "
            "passes (and restarts the container when it fails), but after that nothing takes "
            "the container out of its Service when it stops answering.",
            {"port": _port_text(ports)},
        )


def _no_listener(workload: WorkloadModel, context: Context) -> Iterator[RuleHit]:
    for container in _ungated(workload):
        if container.gated_until_ready:
            continue  # a readiness probe that cannot fail: probe-cannot-fail says so
        if container.probe(ProbeKind.STARTUP) is not None or workload.keeps_work(container):
            continue  # a startup probe gates it; work that runs is no server to gate
        if _served_ports(container, workload) or context.services_by_container.get(container.name):
            continue
        meaning = (
            "rollout status only means the process started"
            if workload.work is Work.ROLLED_OUT
            else "Ready only means the process started"
        )
        yield RuleHit(
            container.name,
            f"container {container.name} declares no port and has no readinessProbe: {meaning}.",
        )


READINESS_MISSING = Rule(
    id="readiness-missing",
    severity=Severity.ERROR,
    summary="A long-running container that serves a port has no readiness probe that can fail.",
    rationale=(
        "Without a readiness probe a container is Ready as soon as its process runs. A rollout "
        "then reports success over a crash loop, and a Service sends traffic to a server that is "
        "not listening yet. Liveness probes are no substitute: they restart, they do not gate. "
        "A readiness probe whose command cannot fail (`true`, `cmd || true`), or a startup "
        "probe that cannot fail as the only gate, passes at its first run "
        "(pkg/kubelet/prober/worker.go doProbe) and gates exactly as much as none."
    ),
    fix=(
        "Add a readinessProbe on the port the container serves (a tcpSocket probe is enough when "
        "the port only opens once startup succeeded), or make the one it has check something "
        "that fails when the server is broken. Do not add a liveness probe to get one."
    ),
    check=_missing,
    reads="Each main container of a long-running pod: its declared ports (minus those its env "
    "turns off) and the Services of the same source that select the pod (an ExternalName "
    "Service routes to none: endpointslice_controller.go syncService); its readiness and "
    "startup probes (one whose exec command cannot fail, as probe-cannot-fail reads it, counts "
    "as none), and the readiness probe its controller adds (KubeRay, Knative).",
    limits="A port is taken as served when declared; a server listening on an undeclared port "
    "with no Service is not seen.",
)

READINESS_MISSING_AFTER_STARTUP = Rule(
    id="readiness-missing-after-startup",
    severity=Severity.WARNING,
    summary="A container that serves a port has a startup probe but no readiness probe.",
    rationale=(
        "A startup probe holds the container not Ready until it first passes, so the rollout "
        "waits for it; it also restarts the container when it fails. Once it has passed, the "
        "container stays Ready whatever happens, and its Service keeps sending it traffic."
    ),
    fix="Add a readinessProbe next to the startupProbe; keep the startupProbe's budget for the "
    "slow start.",
    check=_after_startup,
    reads="As readiness-missing, for containers whose only gate is a startupProbe that can fail.",
)

READINESS_MISSING_NO_PORT = Rule(
    id="readiness-missing-no-port",
    severity=Severity.INFO,
    summary="A long-running container declares no port and has no readiness probe.",
    rationale=(
        "With no port and no readiness probe, rollout status only says the process started, not "
        "that it works."
    ),
    fix="If the process can say it is ready (a file, a command), add an exec readinessProbe.",
    check=_no_listener,
    reads="Main containers of long-running pods with no declared port, no Service, no "
    "readiness or startup probe; work that must not be restarted (training) is left out.",
)
