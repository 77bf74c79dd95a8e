"""Findings about what a job's controller adds to the pods it creates (the init container the
Kubeflow training operator gives a PyTorchJob's Workers: knowledge/training.py INIT_PYTORCH):
the job's own settings cannot change it, so neither can a remedy that points at them.

What the operator adds is measured on a pod it created: the judged job's own Worker or another
PyTorchJob's of the namespace (one operator, one template for every job it runs). With
no such pod, its template is not visible through the API (a file the operator reads, and its
version): the default one is then an assumption, and a gate refusing it is what doctor could
not check, never a measured refusal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import Kind, KubeObject, Listed
from truegreen.doctor.checks.admission.words import (
    OPERATOR_CONTAINER_REFUSED,
    OPERATOR_CONTAINER_UNVERIFIED,
    OPERATOR_NOT_SEEN,
    SAY,
)
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.training import INIT_PYTORCH_ASSUMED, TrainingJob, pod_set_of

if TYPE_CHECKING:
    from truegreen.doctor.checks.admission.podsecurity import Violation as PodSecurityViolation
    from truegreen.doctor.checks.admission.podsecurity_api import Policy

_NOT_SEEN = "no PyTorchJob here has a status condition (an operator sets `Created` on each it sees)"


def added_names(job: TrainingJob) -> frozenset[str]:
    """The containers the job's controller adds to its pods."""
    return frozenset(str(c.get("name")) for s in job.pod_sets for c in s.added)


def _added_to(env: Environment, pod: KubeObject) -> tuple[Mapping[str, Any], ...] | None:
    """The init containers the training operator added to `pod`, a Worker of a PyTorchJob with
    a Master (what its set's template does not hold); None for any other pod."""
    job = env.work().job_of(pod)
    if job is None or job.kind is not Kind.PYTORCH_JOB:
        return None
    name = pod_set_of(job, pod)
    pod_set = next((s for s in job.pod_sets if s.name == name and s.added), None)
    if pod_set is None:
        return None
    own = {str(c.get("name")) for c in o.init_containers(pod_set.spec)}
    return tuple(c for c in o.init_containers(o.pod_spec(pod)) if str(c.get("name")) not in own)


def as_created(env: Environment, job: TrainingJob) -> TrainingJob:
    """`job` with what the operator adds to its sets' pods read from the newest pod that shows
    it (the job's own Worker or another PyTorchJob's: the newest shows the operator's template
    as it is now). Without such a pod, the assumed default stays (`PodSet.added_from` "")."""
    if not any(s.added for s in job.pod_sets) or not isinstance(env.pods, Listed):
        return job
    shown = [
        (str(o.created_at(pod) or ""), o.name_of(pod), added)
        for pod in env.pods.items
        if (added := _added_to(env, pod)) is not None
    ]
    if not shown:
        return job
    _, name, added = max(shown, key=lambda seen: seen[:2])
    sets = tuple(replace(s, added=added, added_from=name) if s.added else s for s in job.pod_sets)
    return replace(job, pod_sets=sets)


def _operator_seen(env: Environment) -> bool:
    """Whether a training operator has handled a PyTorchJob here: one's status holds a
    condition (the `Created` it sets first, before any pod)."""
    return any(j.kind is Kind.PYTORCH_JOB and j.taken_up for j in env.work().jobs)


def operator_finding(
    env: Environment,
    job: TrainingJob,
    sets: Sequence[str],
    gate: str,
    problem: str,
    details: list[str],
    **words: str,
) -> Finding:
    """A gate's refusal of the init container the training operator adds to the pods of
    `sets`: measured where a pod showed it; else the default template's, which doctor could
    not check (the operator seen at work here, or not)."""
    chosen = [s for s in job.pod_sets if s.name in sets]
    container = next(str(c.get("name")) for s in chosen for c in s.added)
    fields = {"container": container, "sets": ", ".join(sets), "gate": gate, "problem": problem}
    if all(s.added_from for s in chosen):
        shown = [f"{container}: as the training operator added it to pod {chosen[0].added_from}"]
        return SAY.finding(
            Status.FAIL,
            Basis.MEASURED,
            OPERATOR_CONTAINER_REFUSED,
            details=[*details, *shown],
            objects=[job.ref],
            **fields,
            **words,
        )
    seen = _operator_seen(env)
    unknown = SAY.finding(
        Status.UNKNOWN,
        Basis.CANT_CHECK,
        OPERATOR_CONTAINER_UNVERIFIED if seen else OPERATOR_NOT_SEEN,
        details=[*details, INIT_PYTORCH_ASSUMED, *([] if seen else [_NOT_SEEN])],
        objects=[job.ref],
        **fields,
        **words,
    )
    return replace(unknown, why="the training operator's start-up program is not visible")


def operator_security_finding(
    env: Environment,
    job: TrainingJob,
    policy: Policy,
    found: Sequence[PodSecurityViolation],
    sets: Sequence[str],
) -> Finding:
    """Pod Security's refusal of the added init container of the pods of `sets`."""
    problems = list(dict.fromkeys(v.plain for v in found))
    whose = f"the pods of {job.ref} ({', '.join(sets)})"
    finding = operator_finding(
        env,
        job,
        sets,
        f"the environment's security level '{policy.level}'",
        "it asks for " + problems[0] + (f" and {len(problems) - 1} more" if problems[1:] else ""),
        [f'{whose}: violates PodSecurity "{policy}": {v.check} ({v.detail})' for v in found],
        fits="meets the security level",
        relax="lower the security level",
    )
    return replace(finding, objects=[f"Namespace/{env.namespace}", *finding.objects])
