"""Port rules: probes must target a port the container declares, and a server that is on."""

from collections.abc import Iterator

from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity
from truegreen.probes import WorkloadModel, disabled_ports, same_port


def _undeclared(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for probe in container.probes:
            if probe.port is None or container.declares(probe.port):
                continue
            what = "named port" if isinstance(probe.port, str) else "port"
            yield RuleHit(
                container.name,
                f"container {container.name}'s {probe.kind} targets {what} {probe.port}, which the "
                "container does not declare.",
                {"port": str(probe.port)},
            )


def _disabled_server(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for off in disabled_ports(container, workload.intent):
            setting = f"{off.env_var}={off.value!r}"
            for probe in container.probes:
                if same_port(container, probe.port, off.port):
                    yield RuleHit(
                        container.name,
                        f"container {container.name}'s {probe.kind} targets port {probe.port}, but "
                        f"{setting} turns that server off: the pod never becomes Ready.",
                        {"setting": off.env_var, "port": str(probe.port)},
                    )
            for port in container.ports:
                if same_port(container, port.number, off.port):
                    yield RuleHit(
                        container.name,
                        f"container {container.name} declares port {port.name or port.number}, but "
                        f"{setting} turns that server off.",
                        {"setting": off.env_var, "port": str(port.name or port.number)},
                    )


PROBE_PORT_UNDECLARED = Rule(
    id="probe-port-undeclared",
    severity=Severity.ERROR,
    summary="A probe targets a port the container does not declare.",
    rationale=(
        "A probe on an undeclared port is usually a typo or a stale port number: it fails forever "
        "(the pod never becomes Ready) or, for a named port, the pod is rejected outright."
    ),
    fix="Point the probe at a port listed in the container's ports (by number or name).",
    check=_undeclared,
)

PROBE_TARGETS_DISABLED_SERVER = Rule(
    id="probe-targets-disabled-server",
    severity=Severity.ERROR,
    summary="A probe or port targets a server that the container's own env turns off.",
    rationale=(
        "The annotation truegreen.io/disabled-by says the server on that port is off when the "
        "env var is non-empty. A probe on it then fails forever, so the pod never becomes Ready."
    ),
    fix="Render the probe (and the port) only when the server is on, gated on the same env var.",
    check=_disabled_server,
)
