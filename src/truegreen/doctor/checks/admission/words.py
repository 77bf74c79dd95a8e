"""The admission check's reason codes and the plain words of each: headline and remedy templates,
filled in with names and plain amounts."""

from typing import Final

from truegreen.doctor.checks.base import Words
from truegreen.doctor.findings import CheckId
from truegreen.plain_words import Wording
from truegreen.quantity import CPU, MEMORY

OK: Final = "admission.ok"
PODS_REFUSED: Final = "admission.pods-refused"
NAMESPACE_TERMINATING: Final = "admission.namespace-terminating"
NAMESPACE_MISSING: Final = "admission.namespace-missing"
QUOTA_EXCEEDED: Final = "admission.quota-exceeded"
QUOTA_HELD_BY_RUNNING_JOB: Final = "admission.quota-held-by-running-job"
QUOTA_NEEDS_SIZES: Final = "admission.quota-needs-sizes"
QUOTA_NOT_COUNTED: Final = "admission.quota-not-counted"
SECURITY_LEVEL: Final = "admission.security-level"
WEBHOOK_DOWN: Final = "admission.webhook-down"
WEBHOOK_DOWN_IGNORED: Final = "admission.webhook-down-ignored"
WEBHOOK_UNVERIFIABLE: Final = "admission.webhook-unverifiable"
TRIAL_REFUSED: Final = "admission.trial-refused"
TRIAL_NOT_ALLOWED: Final = "admission.trial-not-allowed"
TRIAL_FAILED: Final = "admission.trial-failed"
TRIAL_OFFLINE: Final = "admission.trial-offline"
"""A snapshot read with `admission-dry-run: true`: the trial start is a create only the live
server answers."""
LIMIT_RANGE_REFUSED: Final = "admission.limit-range-refused"
DEFAULT_LIMIT_BELOW_REQUEST: Final = "admission.default-limit-below-request"
OPERATOR_CONTAINER_REFUSED: Final = "admission.operator-container-refused"
OPERATOR_CONTAINER_UNVERIFIED: Final = "admission.operator-container-unverified"
OPERATOR_NOT_SEEN: Final = "admission.operator-not-seen"
PRIORITY_MISSING: Final = "admission.priority-missing"
ACCOUNT_MISSING: Final = "admission.account-missing"
RUNTIME_MISSING: Final = "admission.runtime-class-missing"
RUNTIME_CONFLICT: Final = "admission.runtime-class-conflict"
CANT_READ: Final = "admission.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("New training work would be let in.", ""),
    PODS_REFUSED: Wording(
        "The cluster refuses to create the programs of the training job {job}: {cause}.",
        "{todo}.",
    ),
    NAMESPACE_TERMINATING: Wording(
        "The environment's space '{name}' is being deleted, so nothing new can start there.",
        "Wait for the deletion to finish and set the environment up again, or ask your cluster "
        "admin why it is being deleted.",
    ),
    NAMESPACE_MISSING: Wording(
        "The environment's space '{name}' doesn't exist, so nothing can start there.",
        "Check the name (from -n, else the job file, else the connection's default; {command} "
        "lists the ones that exist), or set the environment up there.",
    ),
    QUOTA_EXCEEDED: Wording(
        "A training job can't start: the usage limit '{quota}' is reached ({shortfall}).",
        "{free}, or ask your cluster admin to raise the limit '{quota}'.",
    ),
    QUOTA_HELD_BY_RUNNING_JOB: Wording(
        "Training can run, but the running training job {jobs} uses up the limit '{quota}'; "
        "the next one waits for it to finish.",
        "Wait for {jobs} to finish, or ask your cluster admin to raise the limit '{quota}'.",
    ),
    QUOTA_NEEDS_SIZES: Wording(
        "A training job can't start: the usage limit '{quota}' requires every program to state "
        "its {sizes}, and {containers} doesn't.",
        "Set {sizes} for {containers} in the training job's settings, or give this environment "
        "default sizes.",
    ),
    QUOTA_NOT_COUNTED: Wording(
        "New work is refused until the cluster has counted what the usage limit '{quota}' holds.",
        "Wait a minute and run again; if it stays, ask your cluster admin to check why the "
        "limit is not counted.",
    ),
    SECURITY_LEVEL: Wording(
        "The training job is refused by the environment's security level {level}: it asks "
        "for {problems}.",
        "Change {fields} in the training job's settings, or ask your cluster admin for a lower "
        "security level.",
    ),
    WEBHOOK_DOWN: Wording(
        "Nothing new can start: the cluster's approval hook '{hook}' has no server running "
        "behind it ({service}).",
        "Bring {service} back, or ask your cluster admin to fix or remove the approval hook "
        "'{hook}'.",
    ),
    WEBHOOK_DOWN_IGNORED: Wording(
        "The cluster's approval hook '{hook}' has no server running behind it ({service}); "
        "new work starts without its approval.",
        "Bring {service} back, or ask your cluster admin to remove the approval hook '{hook}'.",
    ),
    WEBHOOK_UNVERIFIABLE: Wording(
        "Couldn't check whether the approval hook '{hook}' can answer: {why}.",
        "Run with --admission-dry-run to have the cluster try a start without keeping it.",
    ),
    TRIAL_REFUSED: Wording(
        "The cluster refused a trial start of the training job: {reason}",
        "Fix what the cluster names; doctor's other lines may already explain it.",
    ),
    TRIAL_NOT_ALLOWED: Wording(
        "Couldn't make a trial start of the training job: no permission.",
        "Grant the optional trial role from deploy/doctor, or run without --admission-dry-run.",
    ),
    TRIAL_FAILED: Wording(
        "Couldn't make a trial start of the training job: the cluster gave no usable answer.",
        "Run again; if it stays, ask your cluster admin to check the cluster's health ({command}).",
    ),
    TRIAL_OFFLINE: Wording(
        "Couldn't make a trial start of the training job: a snapshot cannot ask the cluster.",
        "Run {command} against the live cluster: only it can answer.",
    ),
    LIMIT_RANGE_REFUSED: Wording(
        "A training job can't start: the environment's size limits '{limit}' refuse it "
        "({problem}).",
        "Change the sizes in the training job's settings to fit ({command} shows the limits), "
        "or ask your cluster admin to change '{limit}'.",
    ),
    DEFAULT_LIMIT_BELOW_REQUEST: Wording(
        "A training job can't start: {problem}, below what it asks for.",
        "Set the most {containers} may use ({sizes}) in the training job's settings, at least "
        "what it asks for, or ask your cluster admin to raise the default sizes '{limit}' "
        "({command} shows them).",
    ),
    OPERATOR_CONTAINER_REFUSED: Wording(
        "A training job can't start: the training operator adds its own start-up program "
        "'{container}' to the job's {sets} programs, and it breaks {gate} ({problem}).",
        "Ask your cluster admin to give the training operator a start-up program that {fits} "
        "(its `--pytorch-init-container-template-file` setting), or to {relax}; a PyTorch job "
        "without a Master gets no such program.",
    ),
    OPERATOR_CONTAINER_UNVERIFIED: Wording(
        "Couldn't check the start-up program the training operator adds to the job's {sets} "
        "programs: none of them exists yet, and its settings can't be read; its default one, "
        "'{container}', breaks {gate} ({problem}).",
        "Ask your cluster admin whether the training operator is given a start-up program that "
        "{fits} (its `--pytorch-init-container-template-file` setting), and if not, for one, or "
        "to {relax}; once the job's {sets} programs exist, doctor checks theirs.",
    ),
    OPERATOR_NOT_SEEN: Wording(
        "Couldn't check the start-up program a training operator adds to the job's {sets} "
        "programs: no training operator has taken up a PyTorch job here yet; the default one, "
        "'{container}', breaks {gate} ({problem}).",
        "Ask your cluster admin whether a training operator runs for PyTorch jobs, and whether "
        "the start-up program it adds {fits} (its `--pytorch-init-container-template-file` "
        "setting); if not, ask for one that does, or to {relax}.",
    ),
    ACCOUNT_MISSING: Wording(
        "A training job can't start: the identity '{name}' its programs run as doesn't exist in "
        "the environment.",
        "Create it with {command}, or name an identity that exists in the training job's settings.",
    ),
    RUNTIME_MISSING: Wording(
        "A training job can't start: it asks for the container runtime '{name}', which isn't set "
        "up in the cluster.",
        "Ask your cluster admin to set up '{name}' ({command} lists the ones that exist), or name "
        "one that exists in the training job's settings.",
    ),
    RUNTIME_CONFLICT: Wording(
        "A training job can't start: the container runtime '{name}' runs only on machines "
        "marked {key}={wanted}, but the job asks for machines marked {key}={stated}.",
        "Stop asking for machines marked {key}={stated} in the training job's settings, or name "
        "a runtime meant for the machines it wants.",
    ),
    PRIORITY_MISSING: Wording(
        "A training job can't start: it asks for the priority '{name}', which doesn't exist.",
        "Name an existing priority in the training job's settings ({command} lists them), or ask "
        "your cluster admin to create '{name}'.",
    ),
    CANT_READ: Wording(
        "Couldn't check whether new training work would be let in: {why}.", "{remedy}"
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CheckId.ADMISSION, WORDS)
"""The check's findings, in these words."""

NOUNS: Final = {
    "pods": "running programs",
    "count/pods": "programs (finished ones count until deleted)",
    CPU: "CPU",
    MEMORY: "memory",
    "ephemeral-storage": "scratch disk",
}
"""Plain names of the resources quotas and size limits name."""
