"""Probe semantics shared by lint and doctor: what a workload's containers serve and check.

One model is built per pod template of an object (manifest or live; `truegreen.lint.kinds`
says where each kind keeps them), with the intent its annotations declare, which a manifest
alone cannot show:
  truegreen.io/keep-running: "api,worker"        never restart these containers by probe;
                                                 "" says none of them keeps work running
  truegreen.io/disabled-by:  "8080=SOME_ENV"     that server is off when SOME_ENV is non-empty
  truegreen.io/ignore:       "RULE,RULE"         suppress rules for this object
Without keep-running, work that must not be restarted is recognised from the kind (a Job, a
training job) and from the container itself (`truegreen.lint.training`).
"""

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from msgspec import Struct, field
from msgspec.structs import replace

from truegreen.lint.fieldtypes import WrongType, not_an_object, wrong_types
from truegreen.lint.kinds import PodTemplate, Work, understand
from truegreen.lint.shells import names_no_program
from truegreen.lint.training import training_signal
from truegreen.redacted import REDACTED

KEEP_RUNNING = "truegreen.io/keep-running"
DISABLED_BY = "truegreen.io/disabled-by"
IGNORE = "truegreen.io/ignore"


class ProbeKind(StrEnum):
    """The three probes; liveness and startup restart the container when they fail."""

    READINESS = "readinessProbe"
    LIVENESS = "livenessProbe"
    STARTUP = "startupProbe"

    @property
    def restarts_container(self) -> bool:
        """Whether a failing probe of this kind makes the kubelet kill the container."""
        return self is not ProbeKind.READINESS


_PROBE_KINDS = tuple(ProbeKind)  # iterating the enum itself costs a call per member


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


Port = int | str


_PORT_DIGITS = 10
"""More digits than any int32 has: such a text is no port number, and stays the text it is."""


def port_of(value: object) -> Port | None:
    """A port as a manifest writes it: a number, a number written as text (ASCII digits, as
    few as a port can have), or a name; None when there is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value:
        # str.isdigit() also takes `²`, which int() refuses; and int() refuses a text of more
        # than 4,300 digits (sys.get_int_max_str_digits).
        number = value.isascii() and value.isdigit() and len(value) <= _PORT_DIGITS
        return int(value) if number else value
    return None


_PROBE_DEFAULTS = {
    "initialDelaySeconds": 0,
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 3,
}
"""k8s.io/api core/v1 Probe: what the API server fills in for a field left out."""


def _seconds(spec: Mapping[str, Any], key: str) -> int:
    value = spec.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return _PROBE_DEFAULTS[key]


def _canonical(name: str) -> str:
    """A header name as the kubelet sends it: it builds the request with Go's http.Header.Add
    (pkg/probe/http/request.go v1HeaderToHTTPHeader), which writes each name in canonical form
    (textproto.CanonicalMIMEHeaderKey: `x-probe` goes out as `X-Probe`). For the names the API
    server takes (letters, digits and `-`: IsHTTPHeaderName) that is each word's first letter
    upper case and the rest lower case."""
    return "-".join(word[:1].upper() + word[1:].lower() for word in name.split("-"))


def _headers(target: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """httpGet's httpHeaders as (name, value) pairs, each name as it is sent (a value is sent
    as written), in a stable order."""
    return tuple(
        sorted(
            (_canonical(str(h.get("name"))), str(h.get("value", "")))
            for h in _sequence(target.get("httpHeaders"))
            if isinstance(h, Mapping)
        )
    )


class Probe(Struct, frozen=True):
    """One probe: its kind, handler, what it targets and how soon it gives up."""

    kind: ProbeKind
    handler: str
    """`httpGet`, `tcpSocket`, `grpc`, `exec`, or `` when none is set."""
    port: Port | None = None
    path: str = ""
    command: tuple[str, ...] = ()
    period: int = 10
    timeout: int = 1
    failures: int = 3
    """failureThreshold: consecutive failures before the probe acts."""
    scheme: str = ""
    host: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    """httpGet's httpHeaders as (canonical name, value), sorted."""
    service: str = ""
    """grpc's service ("" when left out: the kubelet asks for the server's overall health)."""

    @classmethod
    def parse(cls, kind: ProbeKind, spec: Mapping[str, Any]) -> "Probe":
        """The probe a container spec declares under `kind`, with the API server's defaults."""
        period = _seconds(spec, "periodSeconds")
        timeout = _seconds(spec, "timeoutSeconds")
        failures = _seconds(spec, "failureThreshold")
        # A handler written with no value (`httpGet:`) is JSON null, which decodes to a nil
        # pointer: no handler at all. pkg/apis/core/validation validateHandler counts only the
        # non-nil ones, so the probe's handler is the one that holds an object.
        for network in ("httpGet", "tcpSocket", "grpc"):
            target = spec.get(network)
            if isinstance(target, Mapping):
                http = network == "httpGet"
                return cls(
                    kind,
                    network,
                    port_of(target.get("port")),
                    # pkg/apis/core/v1/defaults.go SetDefaults_HTTPGetAction: path "/", scheme HTTP
                    path=str(target.get("path") or "/") if http else "",
                    period=period,
                    timeout=timeout,
                    failures=failures,
                    scheme=str(target.get("scheme") or "HTTP") if http else "",
                    host=str(target.get("host") or ""),
                    headers=_headers(target) if http else (),
                    service=str(target.get("service") or "") if network == "grpc" else "",
                )
        handler = ""
        command: tuple[str, ...] = ()
        if isinstance(spec.get("exec"), Mapping):
            handler = "exec"
            command = tuple(str(c) for c in _sequence(spec["exec"].get("command")))
        return cls(kind, handler, None, "", command, period, timeout, failures)

    @property
    def gives_up_after(self) -> int:
        """Seconds of failing before the probe acts: failureThreshold x periodSeconds."""
        return self.failures * self.period

    @property
    def cannot_fail(self) -> bool:
        """An exec probe whose command always succeeds (`true`, `echo ok`, `cmd || true`)."""
        if self.handler != "exec":
            return False
        # Imported on use: only an exec probe's command is read as the shell reads it (doctor's
        # start-up on a small namespace, bench/imports.py).
        from truegreen.lint.commands import always_succeeds

        return always_succeeds(self.command)

    @property
    def cannot_pass(self) -> bool:
        """An exec probe whose command is a shell's own (`exit 0`, `:`) run without a shell:
        the runtime finds no such program, so the probe never passes. (Only an exec probe
        has a command.)"""
        return names_no_program(self.command)


# k8s.io/api core/v1 types.go: the fields the API server knows; strict field validation refuses
# any other (`unknown field "spec.containers[0].readinesProbe"`), and so does lint.
CONTAINER_FIELDS = frozenset(
    [
        "name",
        "image",
        "command",
        "args",
        "workingDir",
        "ports",
        "envFrom",
        "env",
        "resources",
        "resizePolicy",
        "restartPolicy",
        "restartPolicyRules",
        "volumeMounts",
        "volumeDevices",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "imagePullPolicy",
        "securityContext",
        "stdin",
        "stdinOnce",
        "tty",
    ]
)
PROBE_FIELDS = frozenset(
    [
        "exec",
        "httpGet",
        "tcpSocket",
        "grpc",
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
        "terminationGracePeriodSeconds",
    ]
)
HANDLER_FIELDS = {
    "exec": frozenset({"command"}),
    "httpGet": frozenset({"path", "port", "host", "scheme", "httpHeaders", "protocol"}),
    "tcpSocket": frozenset({"port", "host"}),
    "grpc": frozenset({"port", "service", "mode"}),
}
PORT_FIELDS = frozenset({"name", "hostPort", "containerPort", "protocol", "hostIP"})


class UnknownField(Struct, frozen=True):
    """A field the API server does not know, where it is, and the field it most resembles."""

    path: str
    """From the container: `readinesProbe`, `livenessProbe.httpGet.paht`, `ports[0].name_`."""
    suggestion: str | None


def _unknown(spec: Mapping[str, Any], known: frozenset[str], where: str) -> list[UnknownField]:
    found = []
    for key in spec:
        if key not in known:
            import difflib  # only for a field that is wrong: lint's start-up stays without it

            close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.75)
            found.append(UnknownField(f"{where}{key}", close[0] if close else None))
    return found


def unknown_fields(spec: Mapping[str, Any]) -> tuple[UnknownField, ...]:
    """The unknown fields of a container spec, its probes, their handlers and its ports."""
    found = _unknown(spec, CONTAINER_FIELDS, "")
    for kind in _PROBE_KINDS:
        probe = spec.get(kind)
        if not isinstance(probe, Mapping):
            continue
        found += _unknown(probe, PROBE_FIELDS, f"{kind}.")
        for handler, known in HANDLER_FIELDS.items():
            if isinstance(probe.get(handler), Mapping):
                found += _unknown(probe[handler], known, f"{kind}.{handler}.")
    for number, port in enumerate(_sequence(spec.get("ports"))):
        if isinstance(port, Mapping):
            found += _unknown(port, PORT_FIELDS, f"ports[{number}].")
    return tuple(found)


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
    training: str | None = None
    """Why the container looks like training work (`its env sets WORLD_SIZE`), else None."""
    unknown: tuple[UnknownField, ...] = ()
    ready_by_controller: bool = False
    """Its controller gives it a readiness probe when it has none (KubeRay, Knative)."""
    restarted_by_controller: bool = False
    """Its controller gives it a liveness probe when it has none (KubeRay)."""
    training_when_routed: str | None = None
    """Why it looks like training work even when a Service routes to it (GPUs alone do not say so
    there), else None."""

    @classmethod
    def parse(
        cls, spec: Mapping[str, Any], *, is_sidecar: bool, default_name: str = ""
    ) -> "ContainerModel":
        """The model of one container spec."""
        ports = []
        for entry in (_mapping(p) for p in _sequence(spec.get("ports"))):
            number = port_of(entry.get("containerPort"))
            if isinstance(number, int):
                name = entry.get("name")
                ports.append(DeclaredPort(number, str(name) if name else None))
        # `readinessProbe: null` (or a bare `readinessProbe:` in YAML) declares no probe at all.
        probes = tuple(
            Probe.parse(kind, spec[kind])
            for kind in _PROBE_KINDS
            if isinstance(spec.get(kind), Mapping)
        )
        env = []
        for entry in (_mapping(e) for e in _sequence(spec.get("env"))):
            if "name" in entry:
                literal = "valueFrom" not in entry
                value = str(entry.get("value") or "") if literal else None
                env.append(EnvSetting(str(entry["name"]), value))
        training = training_signal(spec)
        return cls(
            str(spec.get("name") or default_name),
            tuple(ports),
            probes,
            tuple(env),
            is_sidecar,
            training,
            unknown_fields(spec),
            training_when_routed=training and training_signal(spec, routed=True),
        )

    def probe(self, kind: ProbeKind) -> Probe | None:
        """The probe of `kind`, if declared."""
        return next((p for p in self.probes if p.kind is kind), None)

    @property
    def gated_until_ready(self) -> bool:
        """Something decides when it is Ready: its readiness probe, or its controller's."""
        return self.ready_by_controller or self.probe(ProbeKind.READINESS) is not None

    def resolve(self, port: Port | None) -> int | None:
        """A probe's port as a number: named ports are looked up among the declared ones."""
        if isinstance(port, int):
            return port
        return next((p.number for p in self.ports if p.name is not None and p.name == port), None)

    def cannot_resolve(self, probe: Probe) -> bool:
        """Whether the probe names a port this container does not declare: the kubelet looks a
        named port up in the probed container's own ports only (pkg/kubelet/prober/prober.go
        runProbe, probe.ResolveContainerPort), fails to, and throws every try's result away
        (worker.go doProbe), so the probe never runs."""
        return isinstance(probe.port, str) and not self.declares(probe.port)

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

    keep_running: frozenset[str] | None = None
    """The containers declared keep-running; None when no annotation says (signals decide)."""
    disabled_by: tuple[DisabledServer, ...] = ()
    ignore: frozenset[str] = frozenset()


def _names(value: object) -> frozenset[str]:
    return frozenset(n.strip() for n in str(value or "").split(",") if n.strip())


def parse_intent(*annotation_maps: Mapping[str, Any]) -> Intent:
    """Intent from the workload's and its pod template's annotations (both count)."""
    keep: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    disabled: list[DisabledServer] = []
    for annotations in annotation_maps:
        if KEEP_RUNNING in annotations:
            keep = (keep or frozenset()) | _names(annotations.get(KEEP_RUNNING))
        ignore |= _names(annotations.get(IGNORE))
        for entry in _names(annotations.get(DISABLED_BY)):
            # `port=ENV`, once: neither a port nor an env var name can hold "=".
            port, sep, env_var = entry.partition("=")
            parsed = port_of(port.strip())
            if sep and parsed is not None and env_var.strip() and "=" not in env_var:
                disabled.append(DisabledServer(parsed, env_var.strip()))
    return Intent(keep, tuple(dict.fromkeys(disabled)), ignore)


class DisabledPort(Struct, frozen=True):
    """A port whose server the container's own env turns off.

    Its value is not kept: any non-empty one turns the server off, so the name says all, and a
    finding that printed it could print a secret (docs/ci.md)."""

    port: Port
    env_var: str


def disabled_ports(container: ContainerModel, intent: Intent) -> tuple[DisabledPort, ...]:
    """The ports whose servers this container's env disables (non-empty value = disabled).

    A value from elsewhere (valueFrom) cannot be judged from the manifest, so it disables nothing.
    """
    found = []
    for server in intent.disabled_by:
        if container.env_value(server.env_var):
            found.append(DisabledPort(server.port, server.env_var))
    return tuple(found)


def same_port(container: ContainerModel, a: Port | None, b: Port | None) -> bool:
    """Whether two port references (numbers or names) mean the same port of this container."""
    if a is None or b is None:
        return False
    if a == b:
        return True
    resolved_a, resolved_b = container.resolve(a), container.resolve(b)
    return resolved_a is not None and resolved_a == resolved_b


def _header_unknown(probe: Probe) -> bool:
    """Whether a header value of the probe was redacted (doctor reads live objects through
    cluster/redact.py, which replaces a secret-named header's value): that value is unknown."""
    return any(value == REDACTED for _, value in probe.headers)


def same_check(container: ContainerModel, a: Probe, b: Probe) -> bool:
    """Whether two probes check the same thing: handler, port, path, scheme, host, headers, grpc
    service and command. Never on a header value read redacted: the kubelet sends each probe's
    own values (kubernetes pkg/probe/http/request.go NewRequestForHTTPGetAction,
    v1HeaderToHTTPHeader), and two secrets both read `<redacted>` may differ."""
    if _header_unknown(a) or _header_unknown(b):
        return False
    if (a.handler, a.path, a.command, a.scheme, a.host, a.headers, a.service) != (
        b.handler,
        b.path,
        b.command,
        b.scheme,
        b.host,
        b.headers,
        b.service,
    ):
        return False
    if a.handler in ("httpGet", "tcpSocket", "grpc"):
        return same_port(container, a.port, b.port)
    return True


class WorkloadModel(Struct, frozen=True):
    """One pod template of a workload, as the probe rules see it."""

    kind: str
    name: str
    namespace: str | None
    labels: Mapping[str, str]
    """The pod's labels, the template's and the controller's (what Services select)."""
    containers: tuple[ContainerModel, ...]
    """Main containers, then native sidecars."""
    intent: Intent
    work: Work = Work.ROLLED_OUT
    role: str = ""
    """Which of the object's pod templates (`worker`, `head`); "" when it has one."""
    by_kind: str = ""
    """Why the kind itself is batch or training work ("a PyTorchJob"), else ""."""
    host_network: bool = False
    controller: str = ""
    """Who adds probes of its own (`KubeRay`, `Knative`), for the messages."""
    group_restart: str = ""
    """The restart policy under which its controller recreates the whole group of pods when any
    container restarts (a LeaderWorkerSet's `RecreateGroupOnPodRestart, the default`), else ""."""
    pod_spec: Mapping[str, Any] = field(default_factory=dict)
    """The pod spec the model was read from, to find a container's line."""
    wrong_types: tuple[WrongType, ...] = ()
    """Fields of the pod spec whose values the API server cannot decode."""
    init_unknown: tuple[tuple[str, UnknownField], ...] = ()
    """(container, field): the unknown fields of the regular init containers. No probe rule
    reads those containers (they run to completion before the others start), but the API
    server validates each as a Container, as it does the rest."""

    @property
    def is_batch(self) -> bool:
        """The pods run to completion (a Job and what is built of Jobs): no readiness to ask."""
        return self.work is Work.BATCH

    @property
    def main_containers(self) -> tuple[ContainerModel, ...]:
        """The containers that are not sidecars."""
        return tuple(c for c in self.containers if not c.is_sidecar)

    def keeps_work(self, container: ContainerModel, *, routed: bool = False) -> str | None:
        """Why a restart of this container would kill work it keeps running; None if it would
        not. An annotation decides when there is one; else the kind, then the container
        (`routed`: a Service sends it traffic)."""
        if self.intent.keep_running is not None:
            return (
                "it is declared keep-running"
                if container.name in self.intent.keep_running
                else None
            )
        if container.is_sidecar:
            return None  # a sidecar's restart leaves the main containers' work alone
        if self.by_kind:
            return f"the workload is {self.by_kind}"
        return container.training_when_routed if routed else container.training

    def declares_anywhere(self, port: int) -> bool:
        """A port number is declared by some container of the pod (they share one network)."""
        return any(container.declares(port) for container in self.containers)


def group_work(models: Sequence[tuple[WorkloadModel, Mapping[str, tuple[str, ...]]]]) -> str:
    """Why a restart of any container of an object's pods kills work, when its controller then
    recreates the whole group (`models`: each pod template's model, with the Services that route
    to its containers by name): the policy and the first container that keeps work, in words
    for a finding; "" when the group is not recreated or no container of it keeps work."""
    for model, routed in models:
        if not model.group_restart:
            continue
        for container in model.containers:
            reason = model.keeps_work(container, routed=bool(routed.get(container.name)))
            if reason is not None:
                where = f" of the {model.role}" if model.role else ""
                return (
                    f"a restart of any container makes the {model.kind} recreate the whole "
                    f"group (restartPolicy {model.group_restart}), killing the work of container "
                    f"{container.name}{where} ({reason})"
                )
    return ""


def workload_models(obj: Mapping[str, Any]) -> tuple[WorkloadModel, ...] | None:
    """One probe model per pod template of an object; None for a kind lint does not understand
    (a kind known to run no pods has none)."""
    understood = understand(obj)
    if understood is None:
        return None
    return tuple(_model(obj, template) for template in understood.templates)


def _model(obj: Mapping[str, Any], template: PodTemplate) -> WorkloadModel:
    spec, meta = template.spec, _mapping(obj.get("metadata"))
    knative = template.controller == "Knative"
    containers = []
    # An entry that is no mapping is no container: wrong-field-type reports it.
    for entry in (c for c in _sequence(spec.get("containers")) if isinstance(c, Mapping)):
        model = ContainerModel.parse(
            entry, is_sidecar=False, default_name="user-container" if knative else ""
        )
        added = tuple(
            DeclaredPort(number, name)
            for owner, name, number in template.ports_by_controller
            if owner == model.name and not model.declares(name)
        )
        # A container its controller sends traffic to serves a port, listed or not: only the
        # signals that hold for a server (a launcher, torch.distributed's env) make it training.
        routed = model.name in template.routed_by_controller
        containers.append(
            replace(
                model,
                ports=model.ports + added,
                training=model.training_when_routed if routed else model.training,
                ready_by_controller=model.name in template.ready_by_controller,
                restarted_by_controller=model.name in template.restarted_by_controller,
            )
        )
    containers += [
        ContainerModel.parse(c, is_sidecar=True)
        for c in _sequence(spec.get("initContainers"))
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always"
    ]
    namespace = meta.get("namespace")
    labels = {str(k): str(v) for k, v in _mapping(template.metadata.get("labels")).items()}
    return WorkloadModel(
        kind=str(obj.get("kind", "")),
        name=str(meta.get("name", "")),
        namespace=str(namespace) if namespace else None,
        labels={**labels, **template.labels},
        containers=tuple(containers),
        intent=parse_intent(
            _mapping(meta.get("annotations")), _mapping(template.metadata.get("annotations"))
        ),
        work=template.work,
        role=template.role,
        by_kind=template.by_kind,
        host_network=spec.get("hostNetwork") is True,
        controller=template.controller,
        group_restart=template.group_restart,
        pod_spec=spec,
        wrong_types=(
            *(not_an_object(path, value) for path, value in template.not_objects),
            *wrong_types(spec),
        ),
        init_unknown=tuple(
            (str(entry.get("name") or ""), unknown)
            for entry in _sequence(spec.get("initContainers"))
            if isinstance(entry, Mapping) and entry.get("restartPolicy") != "Always"
            for unknown in unknown_fields(entry)
        ),
    )
