"""`--job-file`: a training job's manifest, checked before it is submitted.

The file (or `-`, standard input) goes through the one bounded YAML loader; its first document
of a training kind (a Job, CronJob, JobSet, TrainJob, Kubeflow, Ray or LeaderWorkerSet object)
is the job doctor judges, as the job it would become. Any other document is passed over, so a
Helm chart's whole output or a kustomization's build can be given as it is.
"""

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from truegreen.cluster import Kind
from truegreen.doctor.knowledge.training import OPTIONAL_KINDS
from truegreen.errors import UsageError

_TRAINING_KINDS = {
    (kind.spec.api_version, kind.spec.name): kind
    for kind in (Kind.JOB, Kind.CRON_JOB, *OPTIONAL_KINDS)
}


def load_job_file(path: Path) -> tuple[Kind, Mapping[str, Any]]:
    """The first training job in `path` (`-` reads standard input); UsageError naming the file
    and what is wrong with it."""
    from truegreen.yamlsafe import Refusal, load_all, read_file, read_stream

    named = "standard input" if str(path) == "-" else str(path)
    text = read_stream(sys.stdin.buffer) if str(path) == "-" else read_file(path)
    if isinstance(text, Refusal):
        raise UsageError(f"cannot read the job file {named}", text.detail)
    others = 0
    for loaded in load_all(text, lines=False):
        if isinstance(loaded, Refusal):
            where = f" at line {loaded.line}" if loaded.line is not None else ""
            raise UsageError(f"the job file {named} is not valid YAML{where}", loaded.detail)
        document = loaded.data
        if not isinstance(document, Mapping):
            continue
        key = (str(document.get("apiVersion")), str(document.get("kind")))
        kind = _TRAINING_KINDS.get(key)
        if kind is not None:
            return kind, document
        others += 1
    found = f" (its {others} document{'s are' if others != 1 else ' is'} of other kinds)"
    raise UsageError(
        f"the job file {named} holds no training job{found if others else ''}",
        todo="give a Job, CronJob, JobSet, TrainJob, PyTorchJob, TFJob, MPIJob, XGBoostJob, "
        "PaddleJob, JAXJob, RayJob, RayCluster or LeaderWorkerSet",
    )
