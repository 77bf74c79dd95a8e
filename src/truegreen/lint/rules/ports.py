"""Port rules: probes must target a port the kubelet can find, and a server that is on.

The kubelet looks a probe's named port up in the probed container's own `ports`
(pkg/kubelet/prober/prober.go runProbe, findPortByName) and reports the probe as errored when the
name is not there (kubernetes/kubernetes#139283); worker.go doProbe throws an errored try away,
so the probe never runs: it never passes, and never fails either. A numeric port needs no entry at
all: `ports` is informational, and containers of a pod share one network.
"""

from collections.abc import Iterator

from truegreen.lint.probes import WorkloadModel, disabled_ports, same_port
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity
from truegreen.lint.rules.exec_probes import NEVER_RUNS


def _named_undeclared(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for probe in container.probes:
            if not isinstance(probe.port, str) or not container.cannot_resolve(probe):
                continue
            others = [c.name for c in workload.containers if c.declares(probe.port)]
            elsewhere = (
                f" (container {', '.join(others)} declares it, but the kubelet looks a probe's "
                "named port up in the probed container only)"
                if others
                else ""
            )
            yield RuleHit(
                container.name,
                f"container {container.name}'s {probe.kind} targets named port {probe.port}, which "
                f"the container does not declare{elsewhere}: the kubelet cannot run it, and "
                f"{NEVER_RUNS[probe.kind]}",
                {"port": probe.port},
                probe=probe.kind,
            )


def _number_unlisted(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    if workload.host_network:
        return  # the pod uses the machine's network: its ports need not be listed at all
    for container in workload.containers:
        for probe in container.probes:
            # A probe with a host dials that host, not the pod (pkg/kubelet/prober/prober.go
            # runProbe: the pod's IP only when host is empty), so no container lists its port.
            if not isinstance(probe.port, int) or probe.host:
                continue
            if workload.declares_anywhere(probe.port):
                continue
            yield RuleHit(
                container.name,
                f"container {container.name}'s {probe.kind} targets port {probe.port}, which no "
                "container of the pod lists: the probe works if the server listens there, but "
                "nothing in the manifest says it does.",
                {"port": str(probe.port)},
                probe=probe.kind,
            )


def _disabled_server(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for off in disabled_ports(container, workload.intent):
            # The env var by name only: its value may be a secret, and any non-empty one is off.
            turned_off = f"its env sets {off.env_var}, which turns that server off"
            for probe in container.probes:
                if same_port(container, probe.port, off.port):
                    yield RuleHit(
                        container.name,
                        f"container {container.name}'s {probe.kind} targets port {probe.port}, but "
                        f"{turned_off}: the pod never becomes Ready.",
                        {"setting": off.env_var, "port": str(probe.port)},
                        probe=probe.kind,
                    )
            for port in container.ports:
                if same_port(container, port.number, off.port):
                    yield RuleHit(
                        container.name,
                        f"container {container.name} declares port {port.name or port.number}, but "
                        f"{turned_off}.",
                        {"setting": off.env_var, "port": str(port.name or port.number)},
                    )


PROBE_PORT_UNDECLARED = Rule(
    id="probe-port-undeclared",
    severity=Severity.ERROR,
    summary="A probe targets a named port the container does not declare.",
    rationale=(
        "The kubelet resolves a probe's named port from the probed container's own ports. When "
        "the name is not there it cannot run the probe, reports it as errored and throws the "
        "try away, every time (pkg/kubelet/prober/prober.go runProbe, worker.go doProbe): a "
        "readiness or startup probe never passes, so the pod stays out of service forever; a "
        "liveness probe never acts, so it restarts nothing and checks nothing."
    ),
    fix="Declare the port under that name in this container's ports, or point the probe at the "
    "name (or number) the container does declare.",
    check=_named_undeclared,
    reads="Every container's probes (sidecars too) with a named httpGet, tcpSocket or grpc port, "
    "against that container's ports.",
)

PROBE_PORT_UNLISTED = Rule(
    id="probe-port-unlisted",
    severity=Severity.WARNING,
    summary="A probe targets a port number no container of the pod lists.",
    rationale=(
        "A probe on a port number works whether or not the port is listed: `ports` is "
        "informational, and operators built with kubebuilder probe :8081 without listing it. "
        "An unlisted number is still the usual shape of a typo or a port that moved."
    ),
    fix="List the port in the container's ports (with a name, then probe by the name), or "
    "check that the server really listens on that number.",
    check=_number_unlisted,
    reads="Numeric probe ports against the ports of every container of the pod.",
    limits="Pods on the machine's network (`hostNetwork: true`) are not judged: their ports "
    "are the machine's; nor is a probe with a `host`, which the kubelet dials instead of the "
    "pod (prober.go runProbe; even `127.0.0.1` is then the machine's own address).",
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
    reads="The truegreen.io/disabled-by annotation, each container's literal env values, its "
    "probes and ports.",
    limits="A value from elsewhere (valueFrom, envFrom) cannot be judged and disables nothing.",
)
