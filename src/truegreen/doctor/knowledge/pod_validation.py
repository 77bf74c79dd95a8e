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

And the job's own name (`name_refusals`), as each kind's rules hold it at create:
- every kind has a name or a `generateName`, a DNS-1123 subdomain (apimachinery
  pkg/api/validation/objectmeta.go `ValidateObjectMetaAccessor`, `NameIsDNSSubdomain`; a custom
  resource's too: apiextensions-apiserver pkg/registry/customresource/validator.go). A
  `generateName` is a prefix the server completes with five characters of its own, the prefix
  cut to 58 (apiserver pkg/storage/names/generate.go `SimpleNameGenerator`), before it validates
  the name so made;
- a Job's name goes into its template's `job-name` and `batch.kubernetes.io/job-name` labels
  unless it selects its pods itself (pkg/registry/batch/job/strategy.go `generateSelector`), and
  a label's value is at most 63 characters; an Indexed Job's last pod is named
  `<name>-<completions - 1>`, a DNS-1123 label (pkg/apis/batch/validation `ValidateJob`);
- a CronJob's name leaves room for the `-<time>` its Jobs' names add: at most 52 characters
  (pkg/apis/batch/validation `ValidateCronJobCreate`);
- a PyTorchJob's, TFJob's, XGBoostJob's, PaddleJob's or JAXJob's is a DNS-1035 label, which the
  training operator's validating webhook holds it to (training-operator pkg/webhooks, utils
  `ValidateJobName`; the Services it names after the job are DNS-1035 labels too).
The other operators' own limits (JobSet's, LeaderWorkerSet's, KubeRay's, Trainer's) are not
judged.
Everything here is pure: a function of the file, unit-tested value by value.
"""

from collections.abc import Mapping
from typing import Any

from truegreen import kubeobjects as o
from truegreen.apinames import DNS_1035_LABEL, DNS_LABEL, DNS_SUBDOMAIN, NAME_LIMIT, PREFIX_LIMIT
from truegreen.cluster import Kind
from truegreen.container_resources import requirement_problems
from truegreen.doctor.knowledge.training import (
    JOB_NAME_LABELS,
    PREFIX_KEPT,
    TrainingJob,
    shown_name,
)

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


_GENERATED = "xxxxx"
"""Stands for the five characters the API server adds to a `generateName`
(apiserver pkg/storage/names/generate.go `randomLength`); said as `…`."""
_SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    r"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_DNS_1035_RULE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_CRON_JOB_NAME_LIMIT = 52
"""63 less the 11 characters of `-<time>` its Jobs' names add (ValidateCronJobCreate)."""
_WEBHOOK_NAMED = frozenset(
    {Kind.PYTORCH_JOB, Kind.TF_JOB, Kind.XGBOOST_JOB, Kind.PADDLE_JOB, Kind.JAX_JOB}
)
"""The kinds whose validating webhook (training-operator) holds their name to a DNS-1035
label."""


def _subdomain_problems(value: str, path: str, *, prefix: bool = False) -> list[str]:
    """`NameIsDNSSubdomain`: a prefix may end in `-` (its `maskTrailingDash`)."""
    judged = value[:-2] + "a" if prefix and len(value) > 1 and value.endswith("-") else value
    problems = []
    if len(judged) > PREFIX_LIMIT:
        problems.append(f"must be no more than {PREFIX_LIMIT} characters")
    if not DNS_SUBDOMAIN.fullmatch(judged):
        problems.append(_SUBDOMAIN_RULE)
    return [f'{path}: Invalid value: "{value}": {problem}' for problem in problems]


def _job_name_problems(document: Mapping[str, Any], name: str) -> list[str]:
    spec = o.mapping(document.get("spec"))
    problems = []
    labels = o.mapping(o.mapping(o.pod_template(document).get("metadata")).get("labels"))
    # generateSelector sets each label the template does not set already, to the Job's name.
    values = (
        [str(labels.get(key, name)) for key in JOB_NAME_LABELS]
        if spec.get("manualSelector") is not True
        else []
    )
    problems += [
        f'spec.template.labels: Invalid value: "{value}": must be no more than {NAME_LIMIT} '
        "characters"
        for value in dict.fromkeys(values)
        if len(value) > NAME_LIMIT
    ]
    completions = spec.get("completions")
    if (
        spec.get("completionMode") == "Indexed"
        and isinstance(completions, int)
        and not isinstance(completions, bool)
        and completions > 0
    ):
        hostname = f"{name}-{completions - 1}"
        if len(hostname) > NAME_LIMIT or not DNS_LABEL.fullmatch(hostname):
            problems.append(
                f'metadata.name: Invalid value: "{name}": will not able to create pod with '
                f"invalid DNS label: {hostname}"
            )
    return problems


def name_refusals(kind: Kind, document: Mapping[str, Any]) -> list[str]:
    """What the API server (or the kind's validating webhook) would refuse in the job's name,
    each in its words with the field's path; a generated name's own characters said as `…`."""
    metadata = o.mapping(document.get("metadata"))
    given = str(metadata.get("name") or "")
    prefix = str(metadata.get("generateName") or "")
    if not given and not prefix:
        return ["metadata.name: Required value: name or generateName is required"]
    problems = []
    if prefix:
        problems += _subdomain_problems(prefix, "metadata.generateName", prefix=True)
    # The server makes the name before it validates it: judge one it could make.
    name = given or prefix[:PREFIX_KEPT] + _GENERATED
    problems += _subdomain_problems(name, "metadata.name")
    if kind is Kind.JOB:
        problems += _job_name_problems(document, name)
    if kind is Kind.CRON_JOB and len(name) > _CRON_JOB_NAME_LIMIT:
        problems.append(
            f'metadata.name: Invalid value: "{name}": must be no more than '
            f"{_CRON_JOB_NAME_LIMIT} characters"
        )
    if kind in _WEBHOOK_NAMED:
        rules = [f"must be no more than {NAME_LIMIT} characters"] if len(name) > NAME_LIMIT else []
        rules += [] if DNS_1035_LABEL.fullmatch(name) else [_DNS_1035_RULE]
        if rules:
            problems.append(
                f'metadata.name: Invalid value: "{name}": should match: {",".join(rules)}'
            )
    if given:
        return problems
    return [p.replace(name, shown_name(document)) for p in problems]
