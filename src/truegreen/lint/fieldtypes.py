"""The JSON types of the pod-spec fields lint reads, as the API server decodes them.

The API server decodes an object into its Go types (k8s.io/api core/v1 types.go) and refuses
one whose value has the wrong JSON type: `json: cannot unmarshal number into Go struct field
EnvVar.spec.template.spec.containers.env.value of type string` is what `helm upgrade` printed
for an unquoted `value: 8080` (wandb/helm-charts pull request 168). Lenient readers (lint's own
`str(value)`) would take such a manifest and judge a pod the cluster never runs. A JSON null is
every type's zero value to Go's decoder, so null is never a wrong type.
"""

import json
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Any, Final

from msgspec import Struct


class JsonType(StrEnum):
    """A JSON value's type, in the words Go's decoder uses for what it found."""

    STRING = "string"
    NUMBER = "number"
    BOOL = "bool"
    ARRAY = "array"
    OBJECT = "object"


class Expected(StrEnum):
    """The Go type of a field, as k8s.io/api declares it."""

    STRING = "string"
    INT32 = "int32"
    INT64 = "int64"
    BOOL = "bool"
    PORT = "IntOrString"
    STRINGS = "[]string"
    OBJECT = "struct"
    OBJECTS = "[]struct"

    @property
    def words(self) -> str:
        """What the field holds, in plain words for the finding."""
        return _WORDS[self]


_WORDS: Final = {
    Expected.STRING: "a string",
    Expected.INT32: "a whole number",
    Expected.INT64: "a whole number",
    Expected.BOOL: "true or false",
    Expected.PORT: "a port number or a port name",
    Expected.STRINGS: "a list of strings",
    Expected.OBJECT: "an object (key: value pairs)",
    Expected.OBJECTS: "a list of objects",
}


_SHOWN: Final = 40
# The fields whose value a finding may quote: ports, seconds, thresholds and hostNetwork hold a
# number or true/false, never a secret. Every other field's value may be one (an env value, an
# argument after `--password`, an image, a path; a string where a list of env entries goes), and
# lint's findings land in CI logs and code scanning, where no password belongs (docs/ci.md), so
# for those the finding names the type alone.
_QUOTED: Final = frozenset({Expected.INT32, Expected.INT64, Expected.PORT, Expected.BOOL})
_INT32: Final = 2**31
_INT64: Final = 2**63


class WrongType(Struct, frozen=True):
    """A field whose value the API server cannot decode into the field's type."""

    path: str
    """From the pod spec: `containers[0].env[1].value`."""
    found: JsonType
    expected: Expected
    container: str | None
    """The container the field belongs to (by its name), None for the pod spec's own fields."""
    value: str | None = None
    """A scalar as JSON writes it (`8080`, `true`, `"80"`), at most 40 characters, in a field that
    holds a number or true/false; None for a list, an object, or a field whose value may be a
    secret."""


# k8s.io/api core/v1 types.go, for the fields lint reads and the objects around them.
_PROBE: Final[Mapping[str, Expected]] = {
    "exec": Expected.OBJECT,
    "httpGet": Expected.OBJECT,
    "tcpSocket": Expected.OBJECT,
    "grpc": Expected.OBJECT,
    "initialDelaySeconds": Expected.INT32,
    "timeoutSeconds": Expected.INT32,
    "periodSeconds": Expected.INT32,
    "successThreshold": Expected.INT32,
    "failureThreshold": Expected.INT32,
    "terminationGracePeriodSeconds": Expected.INT64,
}
_HANDLERS: Final[Mapping[str, Mapping[str, Expected]]] = {
    "exec": {"command": Expected.STRINGS},
    "httpGet": {
        "path": Expected.STRING,
        "port": Expected.PORT,
        "host": Expected.STRING,
        "scheme": Expected.STRING,
        "httpHeaders": Expected.OBJECTS,
    },
    "tcpSocket": {"port": Expected.PORT, "host": Expected.STRING},
    "grpc": {"port": Expected.INT32, "service": Expected.STRING},
}
_PORT: Final[Mapping[str, Expected]] = {
    "name": Expected.STRING,
    "hostPort": Expected.INT32,
    "containerPort": Expected.INT32,
    "protocol": Expected.STRING,
    "hostIP": Expected.STRING,
}
_ENV: Final[Mapping[str, Expected]] = {
    "name": Expected.STRING,
    "value": Expected.STRING,
    "valueFrom": Expected.OBJECT,
}
_CONTAINER: Final[Mapping[str, Expected]] = {
    "name": Expected.STRING,
    "image": Expected.STRING,
    "command": Expected.STRINGS,
    "args": Expected.STRINGS,
    "workingDir": Expected.STRING,
    "ports": Expected.OBJECTS,
    "env": Expected.OBJECTS,
    "envFrom": Expected.OBJECTS,
    "resources": Expected.OBJECT,
    "restartPolicy": Expected.STRING,
    "livenessProbe": Expected.OBJECT,
    "readinessProbe": Expected.OBJECT,
    "startupProbe": Expected.OBJECT,
    "lifecycle": Expected.OBJECT,
    "securityContext": Expected.OBJECT,
    "imagePullPolicy": Expected.STRING,
}
_POD: Final[Mapping[str, Expected]] = {
    "containers": Expected.OBJECTS,
    "initContainers": Expected.OBJECTS,
    "hostNetwork": Expected.BOOL,
}


def json_type(value: object) -> JsonType | None:
    """The JSON type of a value read from YAML; None for null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return JsonType.BOOL
    if isinstance(value, int | float):
        return JsonType.NUMBER
    if isinstance(value, str):
        return JsonType.STRING
    return JsonType.ARRAY if isinstance(value, list) else JsonType.OBJECT


def _whole(value: object, bound: int) -> bool:
    """A number Go decodes into a signed integer of that size: whole and in range (a YAML
    `8080.0` reaches the API server as the JSON number 8080)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and float(value).is_integer()
        and -bound <= value < bound
    )


def _fits(value: object, expected: Expected) -> bool:
    found = json_type(value)
    if found is None:
        return True
    if expected is Expected.STRING:
        return found is JsonType.STRING
    if expected is Expected.INT32:
        return _whole(value, _INT32)
    if expected is Expected.INT64:
        return _whole(value, _INT64)
    if expected is Expected.BOOL:
        return found is JsonType.BOOL
    if expected is Expected.PORT:  # intstr.IntOrString: a number or a string
        return found is JsonType.STRING or _whole(value, _INT32)
    if expected is Expected.OBJECT:
        return found is JsonType.OBJECT
    if found is not JsonType.ARRAY:
        return False
    assert isinstance(value, list)
    item = JsonType.STRING if expected is Expected.STRINGS else JsonType.OBJECT
    return all(json_type(entry) in (None, item) for entry in value)


def _item(expected: Expected) -> tuple[JsonType, Expected] | None:
    """The type of each entry of a list field, and its plain words."""
    if expected is Expected.STRINGS:
        return JsonType.STRING, Expected.STRING
    if expected is Expected.OBJECTS:
        return JsonType.OBJECT, Expected.OBJECT
    return None


def _fields(
    obj: Mapping[str, Any], table: Mapping[str, Expected], where: str, container: str | None
) -> Iterator[WrongType]:
    for key, expected in table.items():
        value = obj.get(key)
        if _fits(value, expected):
            continue
        item = _item(expected)
        if item is not None and isinstance(value, list):  # the list is right, an entry is not
            number, entry = next(
                (n, e) for n, e in enumerate(value) if json_type(e) not in (None, item[0])
            )
            yield _wrong(f"{where}{key}[{number}]", entry, item[1], container)
        else:
            yield _wrong(f"{where}{key}", value, expected, container)


def _wrong(path: str, value: object, expected: Expected, container: str | None) -> WrongType:
    found = json_type(value)
    assert found is not None  # null fits every field
    scalar = found not in (JsonType.ARRAY, JsonType.OBJECT)
    shown = json.dumps(value)[:_SHOWN] if scalar and expected in _QUOTED else None
    return WrongType(path, found, expected, container, shown)


def _objects(value: object) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if isinstance(value, list):
        for number, entry in enumerate(value):
            if isinstance(entry, Mapping):
                yield number, entry


def _container(spec: Mapping[str, Any], where: str) -> Iterator[WrongType]:
    name = spec.get("name")
    container = name if isinstance(name, str) else None
    yield from _fields(spec, _CONTAINER, where, container)
    for number, port in _objects(spec.get("ports")):
        yield from _fields(port, _PORT, f"{where}ports[{number}].", container)
    for number, env in _objects(spec.get("env")):
        yield from _fields(env, _ENV, f"{where}env[{number}].", container)
    for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
        probe = spec.get(kind)
        if not isinstance(probe, Mapping):
            continue
        yield from _fields(probe, _PROBE, f"{where}{kind}.", container)
        for handler, table in _HANDLERS.items():
            target = probe.get(handler)
            if isinstance(target, Mapping):
                yield from _fields(target, table, f"{where}{kind}.{handler}.", container)


def not_an_object(path: str, value: object) -> WrongType:
    """A field on the way to the pod spec (`spec`, `spec.template`) that holds no object."""
    return _wrong(path, value, Expected.OBJECT, None)


def wrong_types(pod_spec: Mapping[str, Any]) -> tuple[WrongType, ...]:
    """Every field lint reads in a pod spec whose value has a type the API server refuses."""
    found = list(_fields(pod_spec, _POD, "", None))
    for group in ("containers", "initContainers"):
        for number, spec in _objects(pod_spec.get(group)):
            found += _container(spec, f"{group}[{number}].")
    return tuple(found)
