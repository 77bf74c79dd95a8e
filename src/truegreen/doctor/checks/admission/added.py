"""Findings about what a job's controller adds to the pods it creates (the init container the
Kubeflow training operator gives a PyTorchJob's Workers: knowledge/training.py INIT_PYTORCH):
the job's own settings cannot change it, so neither can a remedy that points at them."""

from collections.abc import Sequence

from msgspec.structs import replace

from truegreen.doctor.checks.admission.podsecurity import Policy
from truegreen.doctor.checks.admission.podsecurity import Violation as PodSecurityViolation
from truegreen.doctor.checks.admission.words import OPERATOR_CONTAINER_REFUSED, SAY
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, Finding, Status
from truegreen.doctor.knowledge.training import INIT_PYTORCH_ASSUMED, TrainingJob


def added_names(job: TrainingJob) -> frozenset[str]:
    """The containers the job's controller adds to its pods."""
    return frozenset(str(c.get("name")) for s in job.pod_sets for c in s.added)


def operator_finding(
    job: TrainingJob, sets: Sequence[str], gate: str, problem: str, details: list[str], **words: str
) -> Finding:
    """A gate's refusal of the init container the training operator adds to the pods of
    `sets`: the job's own settings cannot change it."""
    container = next(str(c.get("name")) for s in job.pod_sets if s.name in sets for c in s.added)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        OPERATOR_CONTAINER_REFUSED,
        details=[*details, INIT_PYTORCH_ASSUMED],
        objects=[job.ref],
        container=container,
        sets=", ".join(sets),
        gate=gate,
        problem=problem,
        **words,
    )


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
        job,
        sets,
        f"the environment's security level '{policy.level}'",
        "it asks for " + problems[0] + (f" and {len(problems) - 1} more" if problems[1:] else ""),
        [f'{whose}: violates PodSecurity "{policy}": {v.check} ({v.detail})' for v in found],
        fits="meets the security level",
        relax="lower the security level",
    )
    return replace(finding, objects=[f"Namespace/{env.namespace}", *finding.objects])
