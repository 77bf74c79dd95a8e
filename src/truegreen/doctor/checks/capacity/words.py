"""The capacity check's reason codes and the plain words of each: headline and remedy templates,
filled in with names and plain amounts."""

from typing import Final

from truegreen.doctor.checks.base import Words
from truegreen.doctor.findings import CheckId
from truegreen.plain_words import Wording

FITS: Final = "capacity.fits"
FREE_ONLY: Final = "capacity.free-only"
HELD_BY_RUNNING_JOB: Final = "capacity.held-by-running-job"
VOLUME_HELD_BY_RUNNING_JOB: Final = "capacity.volume-held-by-running-job"
PARTLY_FITS: Final = "capacity.partly-fits"
BLOCKED_BY_OTHER_WORK: Final = "capacity.blocked-by-other-work"
PREEMPTS: Final = "capacity.preempts"
PREEMPTION_UNDER_WAY: Final = "capacity.preemption-under-way"
RESERVATION_UNKNOWN: Final = "capacity.reservation-unknown"
TOO_LARGE: Final = "capacity.too-large"
NO_ELIGIBLE_MACHINE: Final = "capacity.no-eligible-machine"
MACHINE_KEPT_OUT: Final = "capacity.machine-kept-out"
NAMED_MACHINE_UNFIT: Final = "capacity.named-machine-unfit"
UNSCHEDULABLE: Final = "capacity.unschedulable"
GPU_SOFTWARE_DOWN: Final = "capacity.gpu-software-down"
GPU_SOFTWARE_STARTING: Final = "capacity.gpu-software-starting"
GPUS_UNHEALTHY: Final = "capacity.gpus-unhealthy"
NO_SUCH_GPU: Final = "capacity.no-such-gpu"
MACHINE_COMING: Final = "capacity.machine-coming"
NO_MACHINE_CAN_BE_ADDED: Final = "capacity.no-machine-can-be-added"
POOLS_NOT_READY: Final = "capacity.machine-pools-not-ready"
AUTOSCALER_UNHEALTHY: Final = "capacity.autoscaler-unhealthy"
RULES_BLOCK: Final = "capacity.rules-block"
RULE_UNCHECKED: Final = "capacity.rule-unchecked"
JOB_STUCK: Final = "capacity.job-stuck"
JOB_UNSHAPED: Final = "capacity.job-unshaped"
BAD_JOB_SIZE: Final = "capacity.bad-job-size"
MACHINES_DOWN: Final = "capacity.machines-down"
CANT_READ: Final = "capacity.cant-read"

WORDS: Final[dict[str, Wording]] = {
    FITS: Wording("A training job of {size} fits now.", ""),
    MACHINES_DOWN: Wording(
        "{job} needs {resource}, and every machine that has {it} is down: {machines}.",
        "Look at {machines} ({command} shows why) and bring {them} back or replace {them}; the "
        "cluster lets work onto a machine again by itself once it is ready. No setting of the "
        "job changes this.",
    ),
    FREE_ONLY: Wording(
        "Free capacity was measured, but no training job size is known to compare it with.",
        "Pass --job-requests (for example cpu=4,memory=16Gi,nvidia.com/gpu=1) for a verdict.",
    ),
    HELD_BY_RUNNING_JOB: Wording(
        "Training can run, but the free capacity is held by {jobs} ({held}); the next "
        "training job waits for it.",
        "Wait for {jobs} to finish, or add capacity.",
    ),
    VOLUME_HELD_BY_RUNNING_JOB: Wording(
        "Training can run, but its volume '{claim}' may be used by one program at a time and "
        "is in use by {jobs}; the next training job waits for it.",
        "Wait for {jobs} to finish, or give the training job a volume of its own.",
    ),
    PARTLY_FITS: Wording(
        "Only {placed} of the {wanted} programs of the training job {job} can run at once now; "
        "the others wait for room.",
        "Wait, or free room or add a machine for them to run side by side.",
    ),
    BLOCKED_BY_OTHER_WORK: Wording(
        "A training job of {size} can't start: {holders}.",
        "Free room on {machine} by stopping what holds it when it is done, or add a machine "
        "({closest}).",
    ),
    PREEMPTS: Wording(
        "A training job of {size} can start only by stopping work of a lower priority: {victims}.",
        "If that work may be stopped, nothing to do; otherwise free room or add a machine, or "
        "give the training job a priority that stops nothing (`preemptionPolicy: Never`).",
    ),
    PREEMPTION_UNDER_WAY: Wording(
        "The cluster is stopping work of a lower priority on {machines} to make room for the "
        "training job {job}; the job starts there once that work is gone.",
        "Nothing to do: the job waits for the stopped work to end ({command} shows what still "
        "runs there).",
    ),
    RESERVATION_UNKNOWN: Wording(
        "Couldn't tell whether the training job may use {machines}, kept for work that asks "
        "for {resources}: the cluster may let it in on its own, or not.",
        "Run again with --admission-dry-run to see what the cluster does, or let the job onto "
        "them in its settings with {toleration}.",
    ),
    TOO_LARGE: Wording(
        "A training job of {size} doesn't fit on the machines, even empty ones.",
        "Ask for less ({closest}), or add machines big enough.",
    ),
    NO_ELIGIBLE_MACHINE: Wording(
        "No machine may run a training job: {why}.",
        "{todo}.",
    ),
    MACHINE_KEPT_OUT: Wording(
        "The machines big enough for a training job of {size} can't take it: {why}.",
        "{todo}.",
    ),
    NAMED_MACHINE_UNFIT: Wording(
        "The training job names the machine {machine} to run on, and {why}.",
        "{todo}.",
    ),
    UNSCHEDULABLE: Wording(
        "The cluster found no machine for {what}: {reasons}.",
        "{todo}; {command} shows the cluster's own words.",
    ),
    GPU_SOFTWARE_DOWN: Wording(
        "The GPU software on {machines} is not running, so its {count} GPUs can't be used.",
        "Look at the GPU software on {machines} (the driver, the container toolkit and the "
        "device plugin must all run; {command} shows their state).",
    ),
    GPU_SOFTWARE_STARTING: Wording(
        "The GPU software on {machines} is still starting, {age} after joining the cluster, "
        "so its {count} GPUs can't be used yet.",
        "Nothing to do yet: a new machine's GPU software takes a few minutes to start. If it "
        "still isn't running {limit} after the machine joined, look at it ({command} shows "
        "its state).",
    ),
    GPUS_UNHEALTHY: Wording(
        "Only {usable} of the {count} GPUs on {machines} can be used: the others are reported "
        "unhealthy.",
        "Look at the GPUs of {machines} ({command} shows the GPU software there); the machine "
        "may need a restart or a repair.",
    ),
    NO_SUCH_GPU: Wording(
        "No machine offers {asked}, which the training job asks for; the machines offer {offered}.",
        "Ask for {offered} in the job's settings, or ask your cluster admin to offer {asked} "
        "(how the GPUs are split, MIG).",
    ),
    MACHINE_COMING: Wording(
        "A machine is being added for the training job {job}: {how}.",
        "Nothing to do: the job starts once the machine is ready (a few minutes).",
    ),
    NO_MACHINE_CAN_BE_ADDED: Wording(
        "No machine can be added for {what}: {why}.",
        "{todo}; {command} shows the autoscaler's own words.",
    ),
    POOLS_NOT_READY: Wording(
        "No machine can be added for {what}: no machine pool of Karpenter is ready "
        "({pool}: {why}).",
        "Fix what {command} names; Karpenter adds machines again from a pool once it is "
        "ready. Until then only the machines already there can take the job.",
    ),
    AUTOSCALER_UNHEALTHY: Wording(
        "The cluster's autoscaler says it is unhealthy, so it may not add machines for waiting "
        "training.",
        "Ask your cluster admin to look at the autoscaler ({command} shows its status).",
    ),
    RULES_BLOCK: Wording(
        "A training job of {size} can't start: {why}.",
        "{todo}.",
    ),
    RULE_UNCHECKED: Wording(
        "Couldn't check {rule}: {why}.",
        "{todo}.",
    ),
    JOB_STUCK: Wording(
        "A training job ({job}) has waited {age} for a machine, and free capacity doesn't "
        "explain it.",
        "See what the cluster says about it with {command}.",
    ),
    JOB_UNSHAPED: Wording(
        "The training job {job} can't start: {why}.",
        "Create the runtime it names, or point it at one that exists ({command} lists them).",
    ),
    BAD_JOB_SIZE: Wording(
        "The training job's size can't be read: {problem}.",
        "Fix the resource amounts in the training job's settings.",
    ),
    CANT_READ: Wording(
        "Couldn't check whether there is room for a training job: {why}.", "{remedy}"
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CheckId.CAPACITY, WORDS)
"""The check's findings, in these words."""
