"""The queue check's reason codes and the plain words of each: headline and remedy templates,
filled in with names and plain amounts."""

from typing import Final

from truegreen.doctor.checks.base import Words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.plain_words import Wording

NOT_USED: Final = "queue.not-used"
ADMITTED: Final = "queue.admitted"
FITS: Final = "queue.fits"
FITS_BORROWING: Final = "queue.fits-borrowing"
MISSING: Final = "queue.missing"
NONE_NAMED: Final = "queue.none-named"
INACTIVE: Final = "queue.inactive"
STOPPED: Final = "queue.stopped"
NOT_ALLOWED: Final = "queue.not-allowed"
NEVER_FITS: Final = "queue.never-fits"
HELD: Final = "queue.held"
CHECK_PENDING: Final = "queue.check-pending"
CHECK_REJECTED: Final = "queue.check-rejected"
DEACTIVATED: Final = "queue.deactivated"
KUEUE_REPORTED: Final = "queue.kueue-reported"
DEFAULT_UNCONFIRMED: Final = "queue.default-unconfirmed"
NOT_TAKEN: Final = "queue.not-taken"
CANT_READ: Final = "queue.cant-read"
SCHEDULER_MISSING: Final = "queue.scheduler-missing"
SCHEDULER_DOWN: Final = "queue.scheduler-down"
SCHEDULER_UNCONFIRMED: Final = "queue.scheduler-unconfirmed"
GANG_REFUSED: Final = "queue.gang-refused"
GANG_TOO_FEW_PODS: Final = "queue.gang-too-few-pods"
GANG_MISSING: Final = "queue.gang-missing"
GANG_NO_GROUP: Final = "queue.gang-no-group"
GANG_QUEUE_MISSING: Final = "queue.gang-queue-missing"
GANG_QUEUE_CLOSED: Final = "queue.gang-queue-closed"
GANG_NEVER_FITS: Final = "queue.gang-never-fits"
GANG_PLACED: Final = "queue.gang-placed"
GANG_QUEUE_ORPHANED: Final = "queue.gang-queue-parent-missing"
GANG_QUEUE_NOT_LEAF: Final = "queue.gang-queue-not-leaf"
GANG_QUEUE_NO_ROOM: Final = "queue.gang-queue-no-room"
GANG_QUEUE_FULL: Final = "queue.gang-queue-full"
GANG_USER_QUOTA_NO_ROOM: Final = "queue.gang-user-quota-no-room"
GANG_USER_LIMIT_NEVER_FITS: Final = "queue.gang-user-limit-never-fits"

WORDS: Final[dict[str, Wording]] = {
    NOT_USED: Wording("Training jobs here start without waiting in a queue.", ""),
    ADMITTED: Wording("The queue '{queue}' has let the training job {job} start.", ""),
    FITS: Wording("The queue '{queue}' has room for the training job {job}.", ""),
    FITS_BORROWING: Wording(
        "The queue '{queue}' has room for the training job {job} by borrowing quota that the "
        "queues of '{cohort}' share and do not use now.",
        "",
    ),
    MISSING: Wording(
        "The training job {job} waits for the queue '{queue}', which doesn't exist: it will "
        "never start.",
        "Create the queue '{queue}' here, or hand the job to a queue that exists ({command} "
        "lists them).",
    ),
    NONE_NAMED: Wording(
        "The queue system holds the training job {job}, which names no queue: it will never start.",
        "Hand it to a queue with `kueue.x-k8s.io/queue-name: NAME` in its settings; {command} "
        "lists the queues.",
    ),
    INACTIVE: Wording(
        "The queue '{queue}' can't let the training job {job} start: {why}.",
        "Ask your cluster admin to fix the shared queue '{cluster_queue}'; {command} shows why.",
    ),
    STOPPED: Wording(
        "The queue '{queue}' is stopped, so the training job {job} can't start: {why}.",
        "{todo}.",
    ),
    NOT_ALLOWED: Wording(
        "The queue '{queue}' feeds the shared queue '{cluster_queue}', which doesn't take work "
        "from this environment: the training job {job} will never start.",
        "Ask your cluster admin to open the shared queue '{cluster_queue}' to this environment; "
        "{command} shows which environments it takes.",
    ),
    NEVER_FITS: Wording(
        "The training job {job} can never start from the queue '{queue}': {why}.",
        "{todo}; {command} shows what the queue offers.",
    ),
    HELD: Wording(
        "The training job {job} waits in the queue '{queue}': its quota of {resources} is in "
        "use by {holders}{position}.",
        "Nothing to do but wait for {holders} to finish, or ask your cluster admin for more "
        "quota in '{cluster_queue}' ({command} shows it).",
    ),
    CHECK_PENDING: Wording(
        "The training job {job} has its place in the queue '{queue}' and waits for the start "
        "check '{step}'{does}: {message}.",
        "Nothing to do while it waits; if it waits long, {command} shows the check's progress.",
    ),
    CHECK_REJECTED: Wording(
        "The start check '{step}'{does} of the queue '{queue}' turned the training job {job} "
        "away: {message}.",
        "Fix what the check names, then submit the job again; {command} shows the check.",
    ),
    DEACTIVATED: Wording(
        "The queue turned the training job {job} off, so it will not start again: {message}.",
        "Once the cause is fixed, turn it back on with {command}.",
    ),
    KUEUE_REPORTED: Wording(
        "Kueue holds the training job {job} in the queue '{queue}': it says “{reason}: {message}”.",
        "{todo}; {command} shows Kueue's full account.",
    ),
    CANT_READ: Wording(
        "Couldn't check whether the queue lets the training job start: {why}.", "{remedy}"
    ),
    DEFAULT_UNCONFIRMED: Wording(
        "Couldn't tell whether the training job {job}, which names no queue, will wait in the "
        "queue 'default': this Kueue release (older than v0.15) hands such a job there only "
        "where a setting of its own that doctor can't read is on.",
        "Hand the job to the queue for certain with `kueue.x-k8s.io/queue-name: default` in "
        "{where}; {command} lists the queues.",
    ),
    NOT_TAKEN: Wording(
        "Couldn't tell whether Kueue will ever start the training job {job}: it has waited "
        "{age} for the queue '{queue}', and Kueue, which takes up a job it manages within "
        "seconds, has not taken it up.",
        "Ask your cluster admin whether Kueue manages this environment and this kind of job "
        "(its settings `managedJobsNamespaceSelector` and `integrations.frameworks`; for a "
        "Kueue installed with its defaults, {command} shows them) and whether Kueue is "
        "running; until Kueue takes the job up, it stays paused.",
    ),
    SCHEDULER_MISSING: Wording(
        "The training job {job} waits to be placed by `{scheduler}`, which doesn't run in this "
        "cluster: it will never start.",
        "Start `{scheduler}` in the cluster, or let the cluster place the job itself by "
        "removing `schedulerName: {scheduler}` from its settings; {command} shows what runs.",
    ),
    SCHEDULER_UNCONFIRMED: Wording(
        "Couldn't confirm that `{scheduler}`, which places the training job {job}, runs in this "
        "cluster: nothing visible is it, and the cluster's control machines may run it unseen.",
        "Ask your cluster admin whether `{scheduler}` is one of the cluster's own schedulers; "
        "{command} shows what runs visibly.",
    ),
    SCHEDULER_DOWN: Wording(
        "The training job {job} waits to be placed by `{scheduler}`, whose program {state}: "
        "nothing places the job until it is up again.",
        "Find out why `{scheduler}` stops and fix it; {command} shows its last words.",
    ),
    GANG_REFUSED: Wording(
        "`{scheduler}` can't start the training job {job} as one group: {message}.",
        "Free or add what `{scheduler}` names, or ask for less; {command} shows its account.",
    ),
    GANG_TOO_FEW_PODS: Wording(
        "`{scheduler}` can't start the training job {job} as one group: {message}.",
        "The group waits for {wanted} while {has}, and no amount of room starts it: {todo}; "
        "{command} shows the job's own account.",
    ),
    GANG_NO_GROUP: Wording(
        "The training job {job} waits to be placed by `{scheduler}`, which places only programs "
        "that belong to one of its groups, and {count} of the job's belong to none: it will "
        "never start.",
        "Start `{scheduler}`'s controllers, which make a group for each program, or turn on "
        "gang scheduling in the operator that runs the job; {command} lists what runs.",
    ),
    GANG_MISSING: Wording(
        "The training job {job} waits to start as the group '{group}' of `{scheduler}`, which "
        "doesn't exist{why}: it will never start.",
        "Check that `{scheduler}` is installed and made the group; {command} lists them.",
    ),
    GANG_QUEUE_MISSING: Wording(
        "The training job {job} waits in the queue '{queue}' of `{scheduler}`, which doesn't "
        "exist: it will never start.",
        "Create the queue '{queue}', or hand the job to one that exists; {command} lists them.",
    ),
    GANG_QUEUE_ORPHANED: Wording(
        "The training job {job} waits in the queue '{queue}' of `{scheduler}`, whose parent "
        "queue '{parent}' doesn't exist: it will never start.",
        "Create the queue '{parent}', or put '{queue}' under one that exists; {command} lists "
        "them.",
    ),
    GANG_QUEUE_NOT_LEAF: Wording(
        "The training job {job} waits in the queue '{queue}' of `{scheduler}`, which has other "
        "queues under it ({children}): only a queue with none under it starts jobs, so it will "
        "never start.",
        "Hand the job to one of the queues under '{queue}'; {command} lists them.",
    ),
    GANG_QUEUE_CLOSED: Wording(
        "The queue '{queue}' of `{scheduler}` is {state}: the training job {job} will not "
        "start from it.",
        "Ask your cluster admin to open the queue '{queue}' again; {command} shows it.",
    ),
    GANG_NEVER_FITS: Wording(
        "The training job {job} needs {needs}, more than the queue '{queue}' of `{scheduler}` "
        "can ever hold ({holds}): it will never start.",
        "Ask for less, or ask your cluster admin to raise the queue's limit; {command} shows it.",
    ),
    GANG_PLACED: Wording("`{scheduler}` has started the training job {job} as one group.", ""),
    GANG_QUEUE_NO_ROOM: Wording(
        "`{scheduler}` holds the training job {job} in its queue '{queue}', which has no room "
        "for it now: {message}.",
        "Wait for the running work in '{queue}' (or, where no limit of the queue stops it, in "
        "the cluster) to finish, or ask your cluster admin for more room; {command} shows "
        "`{scheduler}`'s words.",
    ),
    GANG_QUEUE_FULL: Wording(
        "The training job {job} needs {needs}, and the queue '{queue}' of `{scheduler}` "
        "already holds {held} of its limit of {holds}: the job waits until running work there "
        "finishes.",
        "Wait for the running work in '{queue}' to finish, or ask your cluster admin to raise "
        "the queue's limit; {command} shows it.",
    ),
    GANG_USER_QUOTA_NO_ROOM: Wording(
        "`{scheduler}` holds the training job {job}: the user's quota has no room for it now: "
        "{message}.",
        "Wait for the user's running work to finish, or ask your cluster admin about the "
        "user's and group's limits; {command} shows `{scheduler}`'s words.",
    ),
    GANG_USER_LIMIT_NEVER_FITS: Wording(
        "The training job {job} needs {needs}, more than {who} may ever use in the queue "
        "'{queue}' of `{scheduler}` ({holds}): it will never start.",
        "Ask for less, or ask your cluster admin to raise that limit in `{scheduler}`'s "
        "settings; {command} shows them.",
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CheckId.QUEUE, WORDS)
"""The check's findings, in these words."""


def not_used(why: str) -> Finding:
    """No queue holds the judged job back, and why."""
    return SAY.finding(Status.OK, Basis.MEASURED, NOT_USED, details=(why,))
