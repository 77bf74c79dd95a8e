"""`--job-file`: a training job's manifest, checked before it is submitted.

The file (or `-`, standard input) goes through the one bounded YAML loader; its one document of
a training kind (a Job, CronJob, JobSet, TrainJob, Kubeflow, Ray or LeaderWorkerSet object) is
the job doctor judges, as the job it would become (`as_created`: with the labels the API
server gives it); a file of several is refused, since a verdict on one would say nothing of the
others. Any other document is passed over, so a Helm chart's whole output or a kustomization's
build can be given as it is. A job the API server
would refuse (doctor/knowledge/pod_validation.py) is bad input, in the server's words: no
verdict about its placement would mean anything.

The job's own `metadata.namespace` is where kubectl would create it: with no namespace given,
doctor checks that one; a namespace given that differs is refused, as kubectl refuses it
(k8s.io/cli-runtime pkg/resource/visitor.go `SetNamespace`, `RequireNamespace`).
"""

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from truegreen.cluster import Kind
from truegreen.doctor.knowledge.pod_validation import name_refusals, refusals
from truegreen.doctor.knowledge.training import OPTIONAL_KINDS, TrainingJob, as_created, shape
from truegreen.errors import UsageError

_TRAINING_KINDS = {
    (kind.spec.api_version, kind.spec.name): kind
    for kind in (Kind.JOB, Kind.CRON_JOB, *OPTIONAL_KINDS)
}


def load_job_file(path: Path) -> tuple[Kind, Mapping[str, Any]]:
    """The one training job in `path` (`-` reads standard input); UsageError naming the file
    and what is wrong with it (none, or several)."""
    from truegreen.yamlsafe import Refusal, load_all, read_file, read_stream

    named = "standard input" if str(path) == "-" else str(path)
    text = read_stream(sys.stdin.buffer) if str(path) == "-" else read_file(path)
    if isinstance(text, Refusal):
        raise UsageError(f"cannot read the job file {named}", text.detail)
    others = 0
    jobs: list[tuple[Kind, Mapping[str, Any]]] = []
    for loaded in load_all(text, lines=False):
        if isinstance(loaded, Refusal):
            where = f" at line {loaded.line}" if loaded.line is not None else ""
            raise UsageError(f"the job file {named} is not valid YAML{where}", loaded.detail)
        document = loaded.data
        if not isinstance(document, Mapping):
            continue
        key = (str(document.get("apiVersion")), str(document.get("kind")))
        kind = _TRAINING_KINDS.get(key)
        if kind is None:
            others += 1
        else:
            jobs.append((kind, document))
    if len(jobs) > 1:
        # One job is judged: a verdict on the first would say nothing of the others.
        names = ", ".join(_name(kind, document) for kind, document in jobs[:_SHOWN])
        more = f" and {len(jobs) - _SHOWN} more" if len(jobs) > _SHOWN else ""
        raise UsageError(
            f"the job file {named} holds {len(jobs)} training jobs ({names}{more}); doctor "
            "judges one",
            todo="give a file that holds the one to judge, and run doctor once for each",
        )
    if jobs:
        kind, document = jobs[0]
        _refuse_invalid(named, kind, document)
        return kind, as_created(kind, document)
    found = f" (its {others} document{'s are' if others != 1 else ' is'} of other kinds)"
    raise UsageError(
        f"the job file {named} holds no training job{found if others else ''}",
        todo="give a Job, CronJob, JobSet, TrainJob, PyTorchJob, TFJob, MPIJob, XGBoostJob, "
        "PaddleJob, JAXJob, RayJob, RayCluster or LeaderWorkerSet",
    )


def _name(kind: Kind, document: Mapping[str, Any]) -> str:
    """`PyTorchJob/bert`, as kubectl names an object; a job without a name by its kind."""
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return f"{kind.spec.name}/{name}" if isinstance(name, str) and name else kind.spec.name


def job_namespace(document: Mapping[str, Any]) -> str | None:
    """The namespace the job's `metadata.namespace` names, if any."""
    metadata = document.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    return namespace if isinstance(namespace, str) and namespace else None


def other_namespace(path: Path, named: str, checked: str, todo: str | None = None) -> UsageError:
    """The refusal of a job file for namespace `named` where doctor checks another (`checked`
    says which, in words), naming both and the -n that checks the job's own."""
    file = "standard input" if str(path) == "-" else str(path)
    return UsageError(
        f"the job file {file} is for the namespace '{named}', but {checked}",
        todo=todo or f"pass -n {named} to check the namespace the job would be created in",
    )


_SHOWN = 5
"""The API server's refusals quoted on the one line; more are counted."""


def _refuse_invalid(named: str, kind: Kind, document: Mapping[str, Any]) -> None:
    job = shape(kind, document)
    problems = name_refusals(kind, document)
    if isinstance(job, TrainingJob):
        problems += refusals(kind, document, job)
    if not problems:
        return
    more = len(problems) - _SHOWN
    shown = "; ".join(problems[:_SHOWN]) + (f"; and {more} more" if more > 0 else "")
    raise UsageError(
        f"the cluster would refuse the training job in the job file {named}",
        shown,
        todo="fix these settings; `kubectl apply --dry-run=server -f FILE` shows the cluster's "
        "own answer",
    )
