"""Probe semantics shared by lint and doctor: what a workload's containers serve and check.

The model is built from a workload object (manifest or live) and the intent its annotations
declare, which a manifest alone cannot show:
  truegreen.io/keep-running: "api,worker"        never restart these containers by probe
  truegreen.io/disabled-by:  "8080=SOME_ENV"     that server is off when SOME_ENV is non-empty
  truegreen.io/ignore:       "RULE,RULE"         suppress rules for this object
"""

import shlex
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from msgspec import Struct

KEEP_RUNNING = "truegreen.io/keep-running"
DISABLED_BY = "truegreen.io/disabled-by"
IGNORE = "truegreen.io/ignore"

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "Job", "CronJob")
BATCH_KINDS = ("Job", "CronJob")


class ProbeKind(StrEnum):
    """The three probes; liveness and startup restart the container when they fail."""

    READINESS = "readinessProbe"
    LIVENESS = "livenessProbe"
    STARTUP = "startupProbe"

    @property
    def restarts_container(self) -> bool:
        """Whether a failing probe of this kind makes the kubelet kill the container."""
        return self is not ProbeKind.READINESS


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


Port = int | str


def _port(value: object) -> Port | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value:
        return int(value) if value.isdigit() else value
    return None


class Probe(Struct, frozen=True):
    """One probe: its kind, handler and what it targets."""

    kind: ProbeKind
    handler: str
    """`httpGet`, `tcpSocket`, `grpc`, `exec`, or `` when none is set."""
    port: Port | None = None
    path: str = ""
    command: tuple[str, ...] = ()

    @classmethod
    def parse(cls, kind: ProbeKind, spec: Mapping[str, Any]) -> "Probe":
        """The probe a container spec declares under `kind`."""
        for handler in ("httpGet", "tcpSocket", "grpc"):
            if handler in spec:
                target = _mapping(spec[handler])
                return cls(kind, handler, _port(target.get("port")), str(target.get("path") or ""))
        if "exec" in spec:
            command = tuple(str(c) for c in _sequence(_mapping(spec["exec"]).get("command")))
            return cls(kind, "exec", command=command)
        return cls(kind, "")

    @property
    def cannot_fail(self) -> bool:
        """An exec probe whose command always succeeds (`true`, `exit 0`, `sh -c true`)."""
        return self.handler == "exec" and command_always_succeeds(self.command)


_ALWAYS_TRUE = {("true",), ("/bin/true",), ("/usr/bin/true",), (":",), ("exit", "0"), ("exit",)}
_SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/sh", "/usr/bin/bash", "ash", "/bin/ash"}


def command_always_succeeds(command: Sequence[str]) -> bool:
    """Whether an exec command can never fail."""
    words = tuple(command)
    if words in _ALWAYS_TRUE:
        return True
    if len(words) == 3 and words[0] in _SHELLS and words[1] in ("-c", "-ec", "-ce"):
        try:
            inner = tuple(shlex.split(words[2]))
        except ValueError:
            return False
        return inner in _ALWAYS_TRUE
    return False


class DeclaredPort(Struct, frozen=True):
    """A containerPort entry."""

    number: int
    name: str | None


class EnvSetting(Struct, frozen=True):
    """One env var of a container: its literal value, or None when it comes from elsewhere."""

    name: str
    value: str | None


class ContainerModel(Struct, frozen=True):
    """What one container serves and how it is probed."""

    name: str
    ports: tuple[DeclaredPort, ...]
    probes: tuple[Probe, ...]
    env: tuple[EnvSetting, ...]
    is_sidecar: bool
    """A native sidecar: an init container with restartPolicy Always."""

    @classmethod
    def parse(cls, spec: Mapping[str, Any], *, is_sidecar: bool) -> "ContainerModel":
        """The model of one container spec."""
        ports = []
        for entry in (_mapping(p) for p in _sequence(spec.get("ports"))):
            number = _port(entry.get("containerPort"))
            if isinstance(number, int):
                name = entry.get("name")
                ports.append(DeclaredPort(number, str(name) if name else None))
        # `readinessProbe: null` (or a bare `readinessProbe:` in YAML) declares no probe at all.
        probes = tuple(
            Probe.parse(kind, spec[kind])
            for kind in ProbeKind
            if isinstance(spec.get(kind), Mapping)
        )
        env = []
        for entry in (_mapping(e) for e in _sequence(spec.get("env"))):
            if "name" in entry:
                literal = "valueFrom" not in entry
                value = str(entry.get("value") or "") if literal else None
                env.append(EnvSetting(str(entry["name"]), value))
        return cls(str(spec.get("name", "")), tuple(ports), probes, tuple(env), is_sidecar)

    def probe(self, kind: ProbeKind) -> Probe | None:
        """The probe of `kind`, if declared."""
        return next((p for p in self.probes if p.kind is kind), None)

    def resolve(self, port: Port | None) -> int | None:
        """A probe's port as a number: named ports are looked up among the declared ones."""
        if isinstance(port, int):
            return port
        return next((p.number for p in self.ports if p.name is not None and p.name == port), None)

    def declares(self, port: Port | None) -> bool:
        """Whether the container declares this port (by number, or by name)."""
        if isinstance(port, int):
            return any(p.number == port for p in self.ports)
        return any(p.name == port for p in self.ports)

    def env_value(self, name: str) -> str | None:
        """The literal value of env var `name` ("" when unset); None when it comes from elsewhere.

        When a name is repeated, the last entry wins, as in the kubelet.
        """
        value: str | None = ""
        for setting in self.env:
            if setting.name == name:
                value = setting.value
        return value


class DisabledServer(Struct, frozen=True):
    """`port=ENV`: the server on `port` is off when ENV holds any non-empty value."""

    port: Port
    env_var: str


class Intent(Struct, frozen=True):
    """What the workload's annotations declare."""

    keep_running: frozenset[str] = frozenset()
    disabled_by: tuple[DisabledServer, ...] = ()
    ignore: frozenset[str] = frozenset()


def _names(value: object) -> frozenset[str]:
    return frozenset(n.strip() for n in str(value or "").split(",") if n.strip())


def parse_intent(*annotation_maps: Mapping[str, Any]) -> Intent:
    """Intent from the workload's and its pod template's annotations (both count)."""
    keep: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    disabled: list[DisabledServer] = []
    for annotations in annotation_maps:
        keep |= _names(annotations.get(KEEP_RUNNING))
        ignore |= _names(annotations.get(IGNORE))
        for entry in _names(annotations.get(DISABLED_BY)):
            # `port=ENV`, once: neither a port nor an env var name can hold "=".
            port, sep, env_var = entry.partition("=")
            parsed = _port(port.strip())
            if sep and parsed is not None and env_var.strip() and "=" not in env_var:
                disabled.append(DisabledServer(parsed, env_var.strip()))
    return Intent(keep, tuple(dict.fromkeys(disabled)), ignore)


class DisabledPort(Struct, frozen=True):
    """A port whose server the container's own env turns off."""

    port: Port
    env_var: str
    value: str


def disabled_ports(container: ContainerModel, intent: Intent) -> tuple[DisabledPort, ...]:
    """The ports whose servers this container's env disables (non-empty value = disabled).

    A value from elsewhere (valueFrom) cannot be judged from the manifest, so it disables nothing.
    """
    found = []
    for server in intent.disabled_by:
        value = container.env_value(server.env_var)
        if value:
            found.append(DisabledPort(server.port, server.env_var, value))
    return tuple(found)


def same_port(container: ContainerModel, a: Port | None, b: Port | None) -> bool:
    """Whether two port references (numbers or names) mean the same port of this container."""
    if a is None or b is None:
        return False
    if a == b:
        return True
    resolved_a, resolved_b = container.resolve(a), container.resolve(b)
    return resolved_a is not None and resolved_a == resolved_b


def same_check(container: ContainerModel, a: Probe, b: Probe) -> bool:
    """Whether two probes check the same thing (handler, port, path, command)."""
    if a.handler != b.handler or a.path != b.path or a.command != b.command:
        return False
    if a.handler in ("httpGet", "tcpSocket", "grpc"):
        return same_port(container, a.port, b.port)
    return True


class WorkloadModel(Struct, frozen=True):
    """A workload's pod template, as the probe rules see it."""

    kind: str
    name: str
    namespace: str | None
    labels: Mapping[str, str]
    """The pod template's labels (what Services select)."""
    containers: tuple[ContainerModel, ...]
    """Main containers, then native sidecars."""
    intent: Intent
    is_batch: bool

    @property
    def main_containers(self) -> tuple[ContainerModel, ...]:
        """The containers that are not sidecars."""
        return tuple(c for c in self.containers if not c.is_sidecar)


def pod_template_of(obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """(template metadata, pod spec) of a workload object; None when it has no pod template."""
    kind = obj.get("kind")
    spec = _mapping(obj.get("spec"))
    if kind == "Pod":
        return _mapping(obj.get("metadata")), spec
    if kind == "CronJob":
        spec = _mapping(_mapping(spec.get("jobTemplate")).get("spec"))
    template = _mapping(spec.get("template"))
    if not template:
        return None
    return _mapping(template.get("metadata")), _mapping(template.get("spec"))


def workload_model(obj: Mapping[str, Any]) -> WorkloadModel | None:
    """The probe model of a workload object; None for kinds without a pod template."""
    kind = str(obj.get("kind", ""))
    if kind not in WORKLOAD_KINDS:
        return None
    template = pod_template_of(obj)
    if template is None:
        return None
    template_meta, spec = template
    meta = _mapping(obj.get("metadata"))
    containers = [
        ContainerModel.parse(_mapping(c), is_sidecar=False)
        for c in _sequence(spec.get("containers"))
    ]
    containers += [
        ContainerModel.parse(_mapping(c), is_sidecar=True)
        for c in _sequence(spec.get("initContainers"))
        if _mapping(c).get("restartPolicy") == "Always"
    ]
    run_to_completion = kind == "Pod" and spec.get("restartPolicy") in ("Never", "OnFailure")
    namespace = meta.get("namespace")
    return WorkloadModel(
        kind=kind,
        name=str(meta.get("name", "")),
        namespace=str(namespace) if namespace else None,
        labels={str(k): str(v) for k, v in _mapping(template_meta.get("labels")).items()},
        containers=tuple(containers),
        intent=parse_intent(
            _mapping(meta.get("annotations")), _mapping(template_meta.get("annotations"))
        ),
        is_batch=kind in BATCH_KINDS or run_to_completion,
    )
