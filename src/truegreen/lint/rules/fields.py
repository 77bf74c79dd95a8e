"""Field rules: a field the API server does not know, or cannot decode, is refused.

Strict field validation (kubectl's default, `--validate=strict`) refuses an object with an
unknown field (`unknown field "spec.template.spec.containers[0].readinesProbe"`); with lenient
decoding the field is dropped silently, so a misspelled probe is no probe at all. A value of the
wrong JSON type is refused whatever the validation (`json: cannot unmarshal number into Go
struct field EnvVar.spec.template.spec.containers.env.value of type string`).
"""

from collections.abc import Iterator
from typing import Final

from truegreen.lint.fieldtypes import JsonType, WrongType
from truegreen.lint.probes import WorkloadModel
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity


def _unknown_field(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    found = [(c.name, unknown) for c in workload.containers for unknown in c.unknown]
    for name, unknown in [*found, *workload.init_unknown]:
        meant = f" (did you mean {unknown.suggestion}?)" if unknown.suggestion else ""
        yield RuleHit(
            name,
            f"container {name} has a field {unknown.path}, which Kubernetes does "
            f"not know{meant}: the API server refuses the object, or drops the field.",
            {"field": unknown.path},
        )


UNKNOWN_FIELD = Rule(
    id="unknown-field",
    severity=Severity.ERROR,
    summary="A container or probe has a field Kubernetes does not know.",
    rationale=(
        "The API server's strict field validation refuses an object with an unknown field; with "
        "lenient validation it drops the field without a word. A misspelled `readinesProbe` "
        "is then no probe at all, and whatever it was meant to guard goes unguarded."
    ),
    fix="Spell the field as the Kubernetes API does (the finding suggests the closest one), or "
    "remove it.",
    check=_unknown_field,
    reads="The keys of each container (main, sidecar and regular init containers alike), its "
    "probes, their handlers (exec, httpGet, tcpSocket, grpc) and its ports, against "
    "k8s.io/api core/v1.",
    limits="Fields newer than the API lint knows are reported as unknown; other parts of the "
    "pod spec are not checked.",
)


_TYPE_ONLY: Final = {
    JsonType.STRING: "a string",
    JsonType.NUMBER: "a number",
    JsonType.BOOL: "a true/false value",
    JsonType.ARRAY: "a list",
    JsonType.OBJECT: "an object",
}


def _found(wrong: WrongType) -> str:
    """What the field holds: its value where that is never a secret (fieldtypes.py), else only
    its type, so an unquoted numeric password is named by its field and never printed."""
    if wrong.value is None:
        return _TYPE_ONLY[wrong.found]
    if wrong.found is JsonType.BOOL:
        return wrong.value
    return f"the {wrong.found} {wrong.value}"


def _wrong_field_type(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for wrong in workload.wrong_types:
        # A pod spec's own paths start at its fields; `spec` and below is the way to it.
        on_the_way = wrong.path.partition(".")[0] == "spec"
        owner = "the object" if on_the_way else "the pod spec"
        owner = owner if wrong.container is None else f"container {wrong.container}"
        yield RuleHit(
            wrong.container,
            f"{owner}: {wrong.path} is {_found(wrong)}, but Kubernetes takes "
            f"{wrong.expected.words} there: the API server cannot decode it and refuses the "
            "object.",
            {"field": wrong.path},
        )


WRONG_FIELD_TYPE = Rule(
    id="wrong-field-type",
    severity=Severity.ERROR,
    summary="A pod-spec field holds a value of the wrong type (a number where a string goes).",
    rationale=(
        "The API server decodes an object into its Go types and refuses one whose value has "
        "the wrong type, so the change never reaches the cluster: an unquoted `value: 8080` "
        'in an env entry, a port written as `"80"`, `containers: 5`. A reader that takes any '
        "value would judge a pod the cluster never runs; lint reports the field instead, and "
        "judges the rest of the object as far as it can be read. The finding quotes the value "
        "only where Kubernetes takes a number or true/false (a port, seconds, a threshold, "
        "hostNetwork); elsewhere (an env value, a word of command or args, an image) it names "
        "the type alone, since the value may be a password."
    ),
    fix="Write the value as Kubernetes declares it: quote a number meant as a string "
    '(`value: "8080"`), write ports, thresholds and seconds as bare whole numbers, and lists '
    "as lists.",
    check=_wrong_field_type,
    reads="The way to a built-in kind's pod spec (`spec`, `spec.template`, `spec.jobTemplate`: "
    "an object each); the pod spec's containers and initContainers (and hostNetwork); each "
    "container's name, image, command, args, ports, env, resources, restartPolicy, probes "
    "and their handlers, against the types of k8s.io/api core/v1.",
    limits="Other parts of the pod spec, and values of the right type that the API server's "
    "validation refuses (a port above 65535), are not checked.",
)
