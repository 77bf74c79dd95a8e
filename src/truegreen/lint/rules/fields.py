"""Field rules: a field the API server does not know is refused, not ignored.

Strict field validation (kubectl's default, `--validate=strict`) refuses an object with an
unknown field (`unknown field "spec.template.spec.containers[0].readinesProbe"`); with lenient
decoding the field is dropped silently, so a misspelled probe is no probe at all.
"""

from collections.abc import Iterator

from truegreen.lint.probes import WorkloadModel
from truegreen.lint.rules.base import Context, Rule, RuleHit, Severity


def _unknown_field(workload: WorkloadModel, _: Context) -> Iterator[RuleHit]:
    for container in workload.containers:
        for unknown in container.unknown:
            meant = f" (did you mean {unknown.suggestion}?)" if unknown.suggestion else ""
            yield RuleHit(
                container.name,
                f"container {container.name} has a field {unknown.path}, which Kubernetes does "
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
    reads="The keys of each container, its probes, their handlers (exec, httpGet, tcpSocket, "
    "grpc) and its ports, against k8s.io/api core/v1.",
    limits="Fields newer than the API lint knows are reported as unknown; other parts of the "
    "pod spec are not checked.",
)
