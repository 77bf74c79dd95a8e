"""The trial start (`--admission-dry-run`): the training job's pod, created with `dryRun=All`, and
what the server's answer means.

The server runs every admission step on a dry-run create and stores nothing
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go), so its answer is the
measurement. Which answers are refusals of the pod follows the shapes the API builds them in
(doctor/knowledge/pod_refusal.py, the rule `--trial` judges its own creates by too); a webhook
that cannot take a dry run (NewDryRunUnsupportedErr, `… does not support dry run`) means the
trial could not be made.
"""

from enum import StrEnum
from typing import Any

from msgspec import Struct, structs

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Created, CreateResult, ReadFailure
from truegreen.doctor.knowledge.pod_refusal import refusal
from truegreen.doctor.knowledge.training import TrainingJob
from truegreen.redaction.text import redact_text

TRIAL_PREFIX = "truegreen-trial-"
_LONGEST_REASON = 400


def trial_name(job: TrainingJob) -> str:
    """The fixed name of the trial pod, so that the server's refusal names it."""
    return f"{TRIAL_PREFIX}{job.name}"


def trial_pod(job: TrainingJob) -> dict[str, Any]:
    """The pod the job's controller would create from its largest pod set's template."""
    template = job.primary.template
    template_meta = o.mapping(template.get("metadata"))
    metadata: dict[str, Any] = {
        "name": trial_name(job),
        "labels": dict(o.mapping(template_meta.get("labels"))),
        "annotations": dict(o.mapping(template_meta.get("annotations"))),
    }
    if job.uid:
        # Policies that treat a job's pods differently see the same owner as the real ones.
        metadata["ownerReferences"] = [
            {
                "apiVersion": job.kind.spec.api_version,
                "kind": job.kind.spec.name,
                "name": job.name,
                "uid": job.uid,
                "controller": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": dict(job.primary.spec),
    }


class TrialOutcome(StrEnum):
    """What the trial start showed."""

    ADMITTED = "admitted"
    REFUSED = "refused"
    """Admission refused the pod: a measurement, quoted."""
    NOT_ALLOWED = "not-allowed"
    """Our credentials may not create pods, even as a dry run."""
    FAILED = "failed"
    """No answer about the pod: a timeout, an error, a webhook that can't take a dry run."""


class Trial(Struct, frozen=True):
    """The trial's outcome and, for a refusal or a failure, the reason in the server's words,
    redacted."""

    outcome: TrialOutcome
    reason: str = ""
    cant: CantRead | None = None


def _bounded(text: str) -> str:
    return text if len(text) <= _LONGEST_REASON else text[: _LONGEST_REASON - 1] + "…"


def judge(result: CreateResult, pod_name: str) -> Trial:
    """The meaning of the server's answer to the trial create of `pod_name`, the server's words
    redacted (docs/snapshot.md rule 6)."""
    if isinstance(result, Created):
        return Trial(TrialOutcome.ADMITTED)
    # The API server passes a webhook's message on word for word (apiserver
    # pkg/admission/plugin/webhook/errors/statuserror.go ToStatusErr: `admission webhook %q
    # denied the request: %s`), so a policy that echoes the value it refuses (`env
    # DB_PASSWORD=… is not allowed`) puts a secret in it: the server's words are redacted as
    # `--trial`'s are (trial/record.py), once `refusal` has read the prefix naming the pod.
    refused = refusal(result, pod_name)
    message = redact_text(result.server_message)
    said = structs.replace(result, server_message=message)
    if refused is not None:
        return Trial(TrialOutcome.REFUSED, _bounded(redact_text(refused)), said)
    if result.failure is ReadFailure.FORBIDDEN:
        return Trial(TrialOutcome.NOT_ALLOWED, _bounded(message or result.reason), said)
    return Trial(TrialOutcome.FAILED, _bounded(message or result.reason), said)
