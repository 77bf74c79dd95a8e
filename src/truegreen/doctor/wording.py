"""Every headline and remedy doctor can print, keyed by finding code.

One catalogue, so that a test can hold every sentence against the jargon list and a golden file
can show each wording change in review. Placeholders are filled with names and plain amounts.
"""

from typing import Final

from truegreen.doctor.knowledge.image_presence import Presence
from truegreen.plain_words import CLUSTER_WORDING, Wording, fill

WORDING: Final[dict[str, Wording]] = {
    **CLUSTER_WORDING,
    "ready": Wording("Ready: training can run.", ""),
    "monitor-stale": Wording(
        "Couldn't keep the verdict current: nothing was confirmed for {age} seconds.",
        "Check that truegreen monitor is running and can reach the cluster; its log says why.",
    ),
    # -- credentials ----------------------------------------------------------------------
    "credentials.ok": Wording("The backend login details are in place.", ""),
    "credentials.missing": Wording(
        "Training can't reach its backend: the stored login '{name}' doesn't exist.",
        "Create it with {command}, then restart the environment's workloads.",
    ),
    "credentials.keys-missing": Wording(
        "Training can't reach its backend: the stored login '{name}' lacks {keys}.",
        "Add {keys} with {command}, then restart the environment's workloads.",
    ),
    "credentials.keys-empty": Wording(
        "Training can't reach its backend: the stored login '{name}' has empty {keys}.",
        "Fill in {keys} with {command}, then restart the environment's workloads.",
    ),
    "credentials.cant-read": Wording(
        "Couldn't check the backend login details: {why}.",
        "{remedy}",
    ),
    # -- image pull -----------------------------------------------------------------------
    "image-pull.ok": Wording("Every training image has the registry login it needs.", ""),
    "image-pull.login-missing": Wording(
        "Training images can't be downloaded: the registry login '{name}' doesn't exist.",
        "Create it for {registries} with {command}, or stop referring to it.",
    ),
    "image-pull.login-wrong-type": Wording(
        "Training images can't be downloaded: '{name}' is not a registry login.",
        "Delete it with {delete} and create it again with {command}.",
    ),
    "image-pull.login-damaged": Wording(
        "Training images can't be downloaded: the registry login '{name}' is damaged.",
        "Delete it with {delete} and create it again with {command}.",
    ),
    "image-pull.no-login-for-registry": Wording(
        "Training images from {registry} can't be downloaded: no registry login covers it.",
        "Add a login for {registry} to one of the registry logins in use ({names}), or create "
        "one with {command} and name it in the workload's settings.",
    ),
    "image-pull.cant-read": Wording(
        "Couldn't check whether training images can be downloaded: {why}.",
        "{remedy}",
    ),
    "image-pull.image-missing": Wording(
        "The image {image} of {owners} doesn't exist in its registry, so it can't be downloaded.",
        "Push {image} to {registry}, or correct its name or tag in the settings of {owners}.",
    ),
    "image-pull.login-refused": Wording(
        "The registry {registry} refuses the registry login {names}, so {image} can't be "
        "downloaded.",
        "Check the user name and password in {names} (they may have expired), then create the "
        "login again with {command}.",
    ),
    "image-pull.login-needed": Wording(
        "The registry {registry} won't hand out {image} without a login, and {owners} has no "
        "registry login for it.",
        "If the image is private, create a registry login with {command} and name it in the "
        "settings of {owners}; if it should be public, check its name: a registry may answer "
        "this way for an image that doesn't exist.",
    ),
    "image-pull.image-unchecked": Wording(
        "Couldn't check whether the image {image} is in its registry: {why}.",
        "{remedy}",
    ),
    # -- storage --------------------------------------------------------------------------
    "storage.ok": Wording("Every dataset volume is ready.", ""),
    "storage.volume-missing": Wording(
        "The dataset volume '{name}' doesn't exist, so what uses it can't start.",
        "Create the volume '{name}', or fix its name in the environment's settings; "
        "{command} lists the volumes there are.",
    ),
    "storage.volume-unbound": Wording(
        "The dataset volume '{name}' has no storage behind it yet ({state}).",
        "See why with {command}; check that the storage type '{storage_type}' can provide "
        "it, and ask your cluster admin whether storage has run out.",
    ),
    "storage.volume-lost": Wording(
        "The dataset volume '{name}' lost its storage.",
        "Restore the volume from a backup or recreate it; {command} shows what it was bound "
        "to. Ask your cluster admin.",
    ),
    "storage.type-missing": Wording(
        "The dataset volume '{name}' asks for a storage type '{storage_type}' that doesn't exist.",
        "Use an existing storage type for '{name}' ({command} lists them), or ask your cluster "
        "admin to add it.",
    ),
    "storage.attached-elsewhere": Wording(
        "A volume of the training job {job} is in use on another machine, and can be attached "
        "to one machine at a time: its programs can't start.",
        "Stop what uses the volume on the other machine, or run the job on that machine; "
        "{command} shows which volume.",
    ),
    "storage.attach-failed": Wording(
        "A volume of the training job {job} can't be attached to its machine.",
        "See why with {command}, and ask your cluster admin about the storage.",
    ),
    "storage.cant-read": Wording("Couldn't check the dataset volumes: {why}.", "{remedy}"),
    # -- queue ----------------------------------------------------------------------------
    "queue.not-used": Wording("Training jobs here start without waiting in a queue.", ""),
    "queue.admitted": Wording("The queue '{queue}' has let the training job {job} start.", ""),
    "queue.fits": Wording("The queue '{queue}' has room for the training job {job}.", ""),
    "queue.fits-borrowing": Wording(
        "The queue '{queue}' has room for the training job {job} by borrowing quota that the "
        "queues of '{cohort}' share and do not use now.",
        "",
    ),
    "queue.missing": Wording(
        "The training job {job} waits for the queue '{queue}', which doesn't exist: it will "
        "never start.",
        "Create the queue '{queue}' here, or hand the job to a queue that exists ({command} "
        "lists them).",
    ),
    "queue.none-named": Wording(
        "The queue system holds the training job {job}, which names no queue: it will never start.",
        "Hand it to a queue with `kueue.x-k8s.io/queue-name: NAME` in its settings; {command} "
        "lists the queues.",
    ),
    "queue.inactive": Wording(
        "The queue '{queue}' can't let the training job {job} start: {why}.",
        "Ask your cluster admin to fix the shared queue '{cluster_queue}'; {command} shows why.",
    ),
    "queue.stopped": Wording(
        "The queue '{queue}' is stopped, so the training job {job} can't start: {why}.",
        "{todo}.",
    ),
    "queue.not-allowed": Wording(
        "The queue '{queue}' feeds the shared queue '{cluster_queue}', which doesn't take work "
        "from this environment: the training job {job} will never start.",
        "Ask your cluster admin to open the shared queue '{cluster_queue}' to this environment; "
        "{command} shows which environments it takes.",
    ),
    "queue.never-fits": Wording(
        "The training job {job} can never start from the queue '{queue}': {why}.",
        "{todo}; {command} shows what the queue offers.",
    ),
    "queue.held": Wording(
        "The training job {job} waits in the queue '{queue}': its quota of {resources} is in "
        "use by {holders}{position}.",
        "Nothing to do but wait for {holders} to finish, or ask your cluster admin for more "
        "quota in '{cluster_queue}' ({command} shows it).",
    ),
    "queue.check-pending": Wording(
        "The training job {job} has its place in the queue '{queue}' and waits for the start "
        "check '{step}'{does}: {message}.",
        "Nothing to do while it waits; if it waits long, {command} shows the check's progress.",
    ),
    "queue.check-rejected": Wording(
        "The start check '{step}'{does} of the queue '{queue}' turned the training job {job} "
        "away: {message}.",
        "Fix what the check names, then submit the job again; {command} shows the check.",
    ),
    "queue.deactivated": Wording(
        "The queue turned the training job {job} off, so it will not start again: {message}.",
        "Once the cause is fixed, turn it back on with {command}.",
    ),
    "queue.cant-read": Wording(
        "Couldn't check whether the queue lets the training job start: {why}.", "{remedy}"
    ),
    # -- admission ------------------------------------------------------------------------
    "admission.ok": Wording("New training work would be let in.", ""),
    "admission.pods-refused": Wording(
        "The cluster refuses to create the programs of the training job {job}: {cause}.",
        "{todo}.",
    ),
    "admission.namespace-terminating": Wording(
        "The environment's space '{name}' is being deleted, so nothing new can start there.",
        "Wait for the deletion to finish and set the environment up again, or ask your cluster "
        "admin why it is being deleted.",
    ),
    "admission.namespace-missing": Wording(
        "The environment's space '{name}' doesn't exist, so nothing can start there.",
        "Check the name passed with -n ({command} lists them), or set the environment up there.",
    ),
    "admission.quota-exceeded": Wording(
        "A training job can't start: the usage limit '{quota}' is reached ({shortfall}).",
        "{free}, or ask your cluster admin to raise the limit '{quota}'.",
    ),
    "admission.quota-held-by-running-job": Wording(
        "Training can run, but the running training job {jobs} uses up the limit '{quota}'; "
        "the next one waits for it to finish.",
        "Wait for {jobs} to finish, or ask your cluster admin to raise the limit '{quota}'.",
    ),
    "admission.quota-needs-sizes": Wording(
        "A training job can't start: the usage limit '{quota}' requires every program to state "
        "its {sizes}, and {containers} doesn't.",
        "Set {sizes} for {containers} in the training job's settings, or give this environment "
        "default sizes.",
    ),
    "admission.quota-not-counted": Wording(
        "New work is refused until the cluster has counted what the usage limit '{quota}' holds.",
        "Wait a minute and run again; if it stays, ask your cluster admin to check why the "
        "limit is not counted.",
    ),
    "admission.security-level": Wording(
        "The training job is refused by the environment's security level {level}: it asks "
        "for {problems}.",
        "Change {fields} in the training job's settings, or ask your cluster admin for a lower "
        "security level.",
    ),
    "admission.webhook-down": Wording(
        "Nothing new can start: the cluster's approval hook '{hook}' has no server running "
        "behind it ({service}).",
        "Bring {service} back, or ask your cluster admin to fix or remove the approval hook "
        "'{hook}'.",
    ),
    "admission.webhook-down-ignored": Wording(
        "The cluster's approval hook '{hook}' has no server running behind it ({service}); "
        "new work starts without its approval.",
        "Bring {service} back, or ask your cluster admin to remove the approval hook '{hook}'.",
    ),
    "admission.webhook-unverifiable": Wording(
        "Couldn't check whether the approval hook '{hook}' can answer: {why}.",
        "Run with --admission-dry-run to have the cluster try a start without keeping it.",
    ),
    "admission.trial-refused": Wording(
        "The cluster refused a trial start of the training job: {reason}",
        "Fix what the cluster names; doctor's other lines may already explain it.",
    ),
    "admission.trial-not-allowed": Wording(
        "Couldn't make a trial start of the training job: no permission.",
        "Grant the optional trial role from deploy/doctor, or run without --admission-dry-run.",
    ),
    "admission.trial-failed": Wording(
        "Couldn't make a trial start of the training job: the cluster gave no usable answer.",
        "Run again; if it stays, ask your cluster admin to check the cluster's health ({command}).",
    ),
    "admission.limit-range-refused": Wording(
        "A training job can't start: the environment's size limits '{limit}' refuse it "
        "({problem}).",
        "Change the sizes in the training job's settings to fit ({command} shows the limits), "
        "or ask your cluster admin to change '{limit}'.",
    ),
    "admission.priority-missing": Wording(
        "A training job can't start: it asks for the priority '{name}', which doesn't exist.",
        "Name an existing priority in the training job's settings ({command} lists them), or ask "
        "your cluster admin to create '{name}'.",
    ),
    "admission.cant-read": Wording(
        "Couldn't check whether new training work would be let in: {why}.", "{remedy}"
    ),
    # -- workloads ------------------------------------------------------------------------
    "workloads.ok": Wording("Every workload of the environment is running and ready.", ""),
    "workloads.none-found": Wording(
        "Found no training environment in '{namespace}'.",
        "Check the name passed with -n, or install the environment there; {command} lists "
        "what runs there.",
    ),
    "workloads.crash-loop": Wording(
        "{workload} keeps crashing and restarting.",
        "Read its error output with {command} and fix what it reports.",
    ),
    "workloads.out-of-memory": Wording(
        "{workload} runs out of memory and is restarted.",
        "Give it more memory in the environment's settings, or make it use less; {command} "
        "shows its last run.",
    ),
    "workloads.image-download-failing": Wording(
        "{workload} can't download its image {image}.",
        "Check that the image name and tag exist and that a registry login covers them; "
        "{command} shows the download error.",
    ),
    "workloads.setting-missing": Wording(
        "{workload} can't start: a stored setting or login it needs is missing.",
        "See which one with {command}, then create it.",
    ),
    "workloads.update-stuck": Wording(
        "The latest update of {workload} stopped making progress.",
        "See why its new copies don't become ready with {command}, or go back to the "
        "version before with {undo}.",
    ),
    "workloads.updating": Wording(
        "{workload} is being updated: {progress}.",
        "Wait for the update to finish ({command} follows it), then run this check again.",
    ),
    "workloads.not-ready": Wording(
        "{workload} is running but has not been ready for {age}.",
        "It fails its own readiness check; {command} shows why.",
    ),
    "workloads.starting": Wording(
        "{workload} is still starting ({age} so far).",
        "Wait a few minutes and run this check again.",
    ),
    "workloads.waiting-too-long": Wording(
        "{workload} has been waiting {age} to start.",
        "See why with {command}; usually no machine has room for it, so free some capacity "
        "or add a machine.",
    ),
    "workloads.no-shared-memory": Wording(
        "The training job {job} has the container default of 64 MiB of shared memory, too "
        "little for its programs ({signal}): they stop with a bus error when it fills.",
        "Give its programs a memory-backed /dev/shm in the job's settings (the details show "
        "the lines to add).",
    ),
    "workloads.job-paused": Wording(
        "The training job {job} is paused, and nothing will start it.",
        "If nobody paused it on purpose, start it with {command}.",
    ),
    "workloads.job-queued": Wording(
        "The training job {job} waits for {queue} to let it start.",
        "Nothing to do while {queue} has room for it; check its place there if it waits long.",
    ),
    "workloads.last-job-out-of-memory": Wording(
        "The last training job {job} ran out of memory and was stopped; the next one with "
        "the same settings will be too.",
        "Give its training program more memory (its memory limit), or make it use less (a "
        "smaller batch); {command} shows which program.",
    ),
    "workloads.last-job-image": Wording(
        "The last training job {job} failed: its image couldn't be downloaded.",
        "Fix the image's name or its registry login; {command} shows the error.",
    ),
    "workloads.last-job-evicted": Wording(
        "The last training job {job} was stopped by its machine, which ran short; it may run "
        "when started again.",
        "Ask for the memory and disk the job really uses, so that its machine keeps room for "
        "it; {command} shows what ran short.",
    ),
    "workloads.last-job-deadline": Wording(
        "The last training job {job} ran out of time: it was stopped at its deadline.",
        "Give it a longer deadline, or make the work shorter; {command} shows the deadline.",
    ),
    "workloads.last-job-failed": Wording(
        "The last training job {job} failed: its program ended with an error.",
        "See why with {command}; the next job with the same settings fails the same way "
        "until that is fixed.",
    ),
    "workloads.cant-read": Wording(
        "Couldn't check whether the environment's workloads are healthy: {why}.", "{remedy}"
    ),
    # -- capacity -------------------------------------------------------------------------
    "capacity.fits": Wording("A training job of {size} fits now.", ""),
    "capacity.free-only": Wording(
        "Free capacity was measured, but no training job size is known to compare it with.",
        "Pass --job-requests (for example cpu=4,memory=16Gi,nvidia.com/gpu=1) for a verdict.",
    ),
    "capacity.held-by-running-job": Wording(
        "Training can run, but the free capacity is held by {jobs} ({held}); the next "
        "training job waits for it.",
        "Wait for {jobs} to finish, or add capacity.",
    ),
    "capacity.partly-fits": Wording(
        "Only {placed} of the {wanted} programs of the training job {job} can run at once now; "
        "the others wait for room.",
        "Wait, or free room or add a machine for them to run side by side.",
    ),
    "capacity.blocked-by-other-work": Wording(
        "A training job of {size} can't start: {holders}.",
        "Free room on {machine} by stopping what holds it when it is done, or add a machine "
        "({closest}).",
    ),
    "capacity.preempts": Wording(
        "A training job of {size} can start only by stopping work of a lower priority: {victims}.",
        "If that work may be stopped, nothing to do; otherwise free room or add a machine, or "
        "give the training job a priority that stops nothing (`preemptionPolicy: Never`).",
    ),
    "capacity.reservation-unknown": Wording(
        "Couldn't tell whether the training job may use {machines}, kept for work that asks "
        "for {resources}: the cluster may let it in on its own, or not.",
        "Run again with --admission-dry-run to see what the cluster does, or let the job onto "
        "them in its settings with {toleration}.",
    ),
    "capacity.too-large": Wording(
        "A training job of {size} doesn't fit on the machines, even empty ones.",
        "Ask for less ({closest}), or add machines big enough.",
    ),
    "capacity.no-eligible-machine": Wording(
        "No machine may run a training job: {why}.",
        "{todo}.",
    ),
    "capacity.machine-kept-out": Wording(
        "The machines big enough for a training job of {size} can't take it: {why}.",
        "{todo}.",
    ),
    "capacity.unschedulable": Wording(
        "The cluster found no machine for {what}: {reasons}.",
        "{todo}; {command} shows the cluster's own words.",
    ),
    "capacity.gpu-software-down": Wording(
        "The GPU software on {machines} is not running, so its {count} GPUs can't be used.",
        "Look at the GPU software on {machines} (the driver, the container toolkit and the "
        "device plugin must all run; {command} shows their state).",
    ),
    "capacity.gpus-unhealthy": Wording(
        "Only {usable} of the {count} GPUs on {machines} can be used: the others are reported "
        "unhealthy.",
        "Look at the GPUs of {machines} ({command} shows the GPU software there); the machine "
        "may need a restart or a repair.",
    ),
    "capacity.no-such-gpu": Wording(
        "No machine offers {asked}, which the training job asks for; the machines offer {offered}.",
        "Ask for {offered} in the job's settings, or ask your cluster admin to offer {asked} "
        "(how the GPUs are split, MIG).",
    ),
    "capacity.machine-coming": Wording(
        "A machine is being added for the training job {job}: {how}.",
        "Nothing to do: the job starts once the machine is ready (a few minutes).",
    ),
    "capacity.no-machine-can-be-added": Wording(
        "No machine can be added for {what}: {why}.",
        "Raise the machine groups' limits, ask for less, or free room; {command} shows the "
        "autoscaler's own words.",
    ),
    "capacity.autoscaler-unhealthy": Wording(
        "The cluster's autoscaler says it is unhealthy, so it may not add machines for waiting "
        "training.",
        "Ask your cluster admin to look at the autoscaler ({command} shows its status).",
    ),
    "capacity.rules-block": Wording(
        "A training job of {size} can't start: {why}.",
        "{todo}.",
    ),
    "capacity.rule-unchecked": Wording(
        "Couldn't check {rule}: {why}.",
        "{todo}.",
    ),
    "capacity.job-stuck": Wording(
        "A training job ({job}) has waited {age} for a machine, and free capacity doesn't "
        "explain it.",
        "See what the cluster says about it with {command}.",
    ),
    "capacity.job-unshaped": Wording(
        "The training job {job} can't start: {why}.",
        "Create the runtime it names, or point it at one that exists ({command} lists them).",
    ),
    "capacity.bad-job-size": Wording(
        "The training job's size can't be read: {problem}.",
        "Fix the resource amounts in the training job's settings.",
    ),
    "capacity.cant-read": Wording(
        "Couldn't check whether there is room for a training job: {why}.", "{remedy}"
    ),
    # -- probes ---------------------------------------------------------------------------
    "probes.ok": Wording("Every workload's health checks can be trusted.", ""),
    "probes.no-readiness": Wording(
        "Updates of {workload} can report success before it works: it has no readiness check.",
        "Add a readiness check on {port}.",
    ),
    "probes.restarts-training": Wording(
        "{workload} can be restarted by its own health check while it keeps training running.",
        "Remove the checks that restart '{container}' when they fail; keep the one that only "
        "pauses its traffic.",
    ),
    "probes.wrong-port": Wording(
        "{workload}'s health check looks at port {port}, which '{container}' doesn't serve.",
        "Point the check at a port the program listens on.",
    ),
    "probes.checks-disabled-server": Wording(
        "{workload} can never become ready: its health check targets a server that its "
        "settings turn off.",
        "Drop the check when {setting} is set, or leave the server on.",
    ),
    "probes.liveness-same-as-readiness": Wording(
        "{workload} restarts '{container}' on the same signal that only should pause its traffic.",
        "Make the check that restarts it more lenient than the one that pauses its traffic, "
        "or remove it.",
    ),
    "probes.cannot-fail": Wording(
        "{workload}'s health check on '{container}' always passes, so it tells nothing.",
        "Check something that fails when the program is broken.",
    ),
    "probes.cant-read": Wording(
        "Couldn't check the environment's health checks: {why}.", "{remedy}"
    ),
    # -- freshness ------------------------------------------------------------------------
    "freshness.ok": Wording("Automatic image refresh has nothing to report.", ""),
    "freshness.stale-pin": Wording(
        "{workload} runs a pinned image of '{container}' that is behind the tag {tag}.",
        "Move the pin to the newest image, or stop following {tag}.",
    ),
    "freshness.dangling-pin": Wording(
        "{workload} is pinned to an image of '{container}' that the registry no longer has; "
        "it can't start again.",
        "Pin '{container}' to an image that exists.",
    ),
    "freshness.refresh-stopped": Wording(
        "Automatic image refresh of {workload} has stopped after {tries} to update it.",
        "See why with {describe}; once that is fixed, let refresh try again with {command}.",
    ),
    "freshness.refresh-failed": Wording(
        "Automatic image refresh of {workload} could not update it ({tries} so far); the next "
        "run tries again.",
        "See why its new copies did not become ready with {command}.",
    ),
    "freshness.refresh-unfinished": Wording(
        "An automatic image refresh of {workload} started {age} ago and has not finished.",
        "Run {refresh} to finish it, and check that the scheduled refresh still runs ({command}).",
    ),
    "freshness.cant-read": Wording("Couldn't check image freshness: {why}.", "{remedy}"),
}

OFFLINE_REMEDY: Final = (
    "The snapshot holds no answer from the cluster: take a new one with {snapshot} where the "
    "cluster answers ({check} shows whether it does), and check that one."
)
"""What to do when a snapshot's cluster could not be read: no address can be fixed offline."""

NOT_ASKED_HINTS: Final[dict[str, str]] = {
    "credentials": "name the backend login with `--credentials-secret NAME:KEY1,KEY2` to check it",
}
"""How to ask for a check that was not asked for, by check id."""

_SKIP_LOOK_UP = "--no-registry skips this look-up"
REGISTRY_WHY: Final[dict[Presence, str]] = {
    Presence.UNREACHABLE: "couldn't connect to {registry}",
    Presence.TIMEOUT: "{registry} did not answer in time",
    Presence.SERVER_ERROR: "{registry} answered with an error",
    Presence.RATE_LIMITED: "{registry} is limiting how often it may be asked",
    Presence.GARBLED: "{registry}'s answer could not be understood",
    Presence.TOO_LARGE: "{registry}'s answer was too large to read",
    Presence.INSECURE: "{registry} would have to be asked without encryption",
    Presence.LOGIN_UNUSABLE: "the registry login {names} holds a kind of login doctor can't use",
    Presence.NOT_ASKED: "doctor asks about at most {limit} images a run",
    Presence.NOT_CAPTURED: "the snapshot doesn't include the registry's answer about it",
    Presence.REFUSED: "the machines log in to {registry} on their own, and doctor can't use "
    "that login",
}
"""Why the registry could not say whether an image is there, in plain words (a refusal is
a reason only at a registry whose machines log in on their own)."""
REGISTRY_REMEDIES: Final[dict[Presence, str]] = {
    Presence.UNREACHABLE: "Check that this computer reaches {registry} as the machines do, "
    f"then run again; {_SKIP_LOOK_UP}.",
    Presence.TIMEOUT: "Run again, or allow each answer more time with --request-timeout 30; "
    f"{_SKIP_LOOK_UP}.",
    Presence.SERVER_ERROR: f"Run again later; if it stays, check {{registry}}'s status; "
    f"{_SKIP_LOOK_UP}.",
    Presence.RATE_LIMITED: "Run again later; a registry login often raises the limit; "
    f"{_SKIP_LOOK_UP}.",
    Presence.GARBLED: "Check for a proxy between you and {registry} that changes its answers, "
    f"then run again; {_SKIP_LOOK_UP}.",
    Presence.TOO_LARGE: f"Check what {{registry}} serves for {{image}}; {_SKIP_LOOK_UP}.",
    Presence.INSECURE: "If {registry} is meant to be reached without encryption, check the "
    f"image from a machine of the cluster; {_SKIP_LOOK_UP}.",
    Presence.LOGIN_UNUSABLE: "Nothing to do if the image downloads on the machines; "
    f"{_SKIP_LOOK_UP}.",
    Presence.NOT_ASKED: "Check the image from a machine of the cluster, or check fewer "
    "images at once.",
    Presence.NOT_CAPTURED: "Take a new snapshot with {snapshot} and check that one.",
    Presence.REFUSED: f"Nothing to do if the image downloads on the machines; {_SKIP_LOOK_UP}.",
}
"""What to do when the registry could not say, per reason."""


def render(code: str, **fields: object) -> tuple[str, str]:
    """The headline and remedy for `code`, filled in, each starting as a sentence does;
    KeyError when a field is missing."""
    return fill(WORDING[code], **fields)
