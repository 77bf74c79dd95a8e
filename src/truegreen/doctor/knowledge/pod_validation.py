"""The API server's refusals of a planned job's pod templates, before it is ever submitted.

A job file doctor is asked about has not met the API server yet. Where its pods could never be
created, no placement, quota or image matters: kube-apiserver refuses a Job (and a Job made
from a CronJob) whose template breaks these rules, and a training operator's pods from any
other kind meet the same pod validation when its controller creates them
(pkg/apis/core/validation/validation.go `ValidatePodTemplateSpec`, `validateContainers`,
`ValidateResourceRequirements`; pkg/apis/batch/validation/validation.go `validateJobSpec`):
- a pod has at least one container; each has a name and an image;
- each container's resources follow truegreen.container_resources;
- a pod that names its machine (`nodeName`) holds no scheduling gate: `ValidatePodCreate`
  refuses the pod itself ("cannot be set until all schedulingGates have been cleared"), so a
  Job's template with both is stored, and its controller's every pod is refused;
- a Job's `parallelism` and `completions` are at least 0, and its template names the restart
  policy `OnFailure` or `Never` (none named is refused too: a Job has no default).
Everything here is pure: a function of the file, unit-tested value by value.
"""

from collections.abc import Mapping
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import Kind
from truegreen.container_resources import requirement_problems
from truegreen.doctor.knowledge.training import TrainingJob

_JOB_RESTART_POLICIES = ("OnFailure", "Never")


def _container_problems(spec: Mapping[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    listed = spec.get("containers")
    if not isinstance(listed, list) or not listed:
        problems.append(f"{path}.containers: Required value")
    for field in ("initContainers", "containers"):
        for index, container in enumerate(o.sequence(spec.get(field))):
            where = f"{path}.{field}[{index}]"
            if not isinstance(container, Mapping):
                problems.append(f"{where}: Invalid value: must be an object")
                continue
            for required in ("name", "image"):
                if not container.get(required):
                    problems.append(f"{where}.{required}: Required value")
            problems += requirement_problems(container.get("resources"), f"{where}.resources")
    if spec.get("nodeName") and o.sequence(spec.get("schedulingGates")):
        problems.append(
            f"{path}.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
        )
    return problems


def _job_spec_problems(job_spec: Mapping[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    for field in ("parallelism", "completions"):
        value = job_spec.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            problems.append(
                f"{path}.{field}: Invalid value: {value}: must be greater than or equal to 0"
            )
    # validateJobSpec says "Required" for any other policy too, `Always` included.
    policy = o.pod_spec(o.mapping(job_spec.get("template"))).get("restartPolicy")
    if policy not in _JOB_RESTART_POLICIES:
        problems.append(
            f'{path}.template.spec.restartPolicy: Required value: valid values: "OnFailure", '
            '"Never"'
        )
    return problems


def refusals(kind: Kind, document: Mapping[str, Any], job: TrainingJob) -> list[str]:
    """What the API server would refuse in `document` (a job of `kind`, read as `job`), each in
    its words with the field's path; empty when nothing."""
    spec = o.mapping(document.get("spec"))
    if kind is Kind.JOB:
        return _job_spec_problems(spec, "spec") + _container_problems(
            o.pod_spec(o.pod_template(document)), "spec.template.spec"
        )
    if kind is Kind.CRON_JOB:
        job_spec = o.mapping(o.mapping(spec.get("jobTemplate")).get("spec"))
        path = "spec.jobTemplate.spec"
        return _job_spec_problems(job_spec, path) + _container_problems(
            o.pod_spec(o.mapping(job_spec.get("template"))), f"{path}.template.spec"
        )
    problems: list[str] = []
    for pod_set in job.pod_sets:
        problems += [
            f"the template of {pod_set.name}: {problem}"
            for problem in _container_problems(pod_set.spec, "spec")
        ]
    return problems
