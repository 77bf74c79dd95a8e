"""Which containers the Services in the input route traffic to (Kubernetes selector semantics)."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen.lint.probes import ContainerModel, Port, WorkloadModel, port_of


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class ServiceModel(Struct, frozen=True):
    """A Service: where it lives, what it selects and which ports it targets."""

    name: str
    namespace: str | None
    selector: Mapping[str, str]
    """Empty when the Service has no selector (endpoints are manual) or is an ExternalName (a
    DNS name elsewhere): it then selects nothing."""
    target_ports: tuple[Port, ...]
    source: str = ""
    """The folder of files, chart or kustomization it came from."""

    @classmethod
    def parse(cls, obj: Mapping[str, Any], source: str = "") -> "ServiceModel":
        """The model of a Service object."""
        meta = _mapping(obj.get("metadata"))
        spec = _mapping(obj.get("spec"))
        # pkg/controller/endpointslice/endpointslice_controller.go syncService: an ExternalName
        # Service gets no endpoints, whatever pods its selector matches.
        external = spec.get("type") == "ExternalName"
        selector = {} if external else _mapping(spec.get("selector"))
        targets: list[Port] = []
        ports = spec.get("ports")
        for entry in ports if isinstance(ports, list) else []:
            if not isinstance(entry, Mapping):
                continue
            target = port_of(entry.get("targetPort", entry.get("port")))
            if target is not None:
                targets.append(target)
        namespace = meta.get("namespace")
        return cls(
            str(meta.get("name", "")),
            str(namespace) if namespace else None,
            {str(k): str(v) for k, v in selector.items()},
            tuple(targets),
            source,
        )

    def selects(self, workload: WorkloadModel, source: str = "") -> bool:
        """Every selector key matches the pod template's labels, in the same namespace.

        When neither names a namespace (as `helm template` often renders them), they meet only
        when they come from the same source: the same folder of files, chart or kustomization
        (Manifest.source). One that names a namespace is compared with one that does not by
        labels alone.
        """
        if not self.selector:
            return False
        if self.namespace and workload.namespace and self.namespace != workload.namespace:
            return False
        if not self.namespace and not workload.namespace and self.source != source:
            return False
        return all(workload.labels.get(k) == v for k, v in self.selector.items())


class ServiceIndex:
    """The Services of the input, found by one pair of their selector: a workload is compared
    only with the Services that could select it, not with every Service in the input."""

    def __init__(self, services: Sequence[ServiceModel]) -> None:
        self._services = list(services)
        self._by_pair: dict[tuple[str, str], list[int]] = {}
        for position, service in enumerate(self._services):
            if service.selector:
                self._by_pair.setdefault(min(service.selector.items()), []).append(position)

    def candidates(self, workload: WorkloadModel) -> list[ServiceModel]:
        """Services whose selector shares a label pair with the workload, in input order."""
        positions = {p for pair in workload.labels.items() for p in self._by_pair.get(pair, ())}
        return [self._services[p] for p in sorted(positions)]


def _owners(workload: WorkloadModel, target: Port) -> tuple[ContainerModel, ...]:
    """The containers a Service's targetPort reaches: the ones that declare it.

    A named target is looked up in the main containers, then in the native sidecars
    (pkg/api/v1/pod/util.go FindPort); a number needs no lookup: the endpoints send traffic to
    the pod's IP on it, where the container that declares it listens, a sidecar as much as a
    main container. A number no container declares reaches whichever process listens there:
    the pod's one long-running container when it has one, else none that lint can name.
    """
    mains = workload.main_containers
    sidecars = tuple(c for c in workload.containers if c.is_sidecar)
    if isinstance(target, str):
        named = tuple(c for c in mains if c.declares(target))
        return named or tuple(c for c in sidecars if c.declares(target))
    declared = tuple(c for c in workload.containers if c.declares(target))
    if not declared and len(workload.containers) == 1:
        return workload.containers  # a numeric target in a one-container pod can only be it
    return declared


def routed_containers(
    workload: WorkloadModel, services: Iterable[ServiceModel], source: str = ""
) -> dict[str, tuple[str, ...]]:
    """Container name -> the Services that send it traffic (`source`: where the workload came
    from)."""
    routed: dict[str, list[str]] = {}
    for service in services:
        if not service.selects(workload, source):
            continue
        for target in service.target_ports:
            for container in _owners(workload, target):
                names = routed.setdefault(container.name, [])
                if service.name not in names:
                    names.append(service.name)
    return {name: tuple(services) for name, services in routed.items()}
