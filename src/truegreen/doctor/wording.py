"""Every headline and remedy doctor can print, keyed by finding code.

One catalogue, so that a test can hold every sentence against the jargon list and a golden file
can show each wording change in review. Placeholders are filled with names and plain amounts.
"""

from dataclasses import dataclass
from string import Formatter
from typing import Final

from truegreen.cluster import CantRead, Kind, ReadFailure


@dataclass(frozen=True)
class Wording:
    """The plain headline and remedy templates for one finding code."""

    headline: str
    remedy: str

    @property
    def placeholders(self) -> frozenset[str]:
        """The names the templates need."""
        return frozenset(
            name
            for template in (self.headline, self.remedy)
            for _, name, _, _ in Formatter().parse(template)
            if name
        )


_VERBOSE = "Run with --verbose for the details."
_PERMISSION = "Run with --verbose to see which read failed; check your access or the network."

WORDING: Final[dict[str, Wording]] = {
    # -- the whole cluster ----------------------------------------------------------------
    "cluster-unreachable": Wording(
        "Couldn't reach the cluster: {why}.",
        "Check the cluster address in {source} and your network, then run again.",
    ),
    "ready": Wording("Ready: training can run.", ""),
    "monitor-stale": Wording(
        "Couldn't keep the verdict current: nothing was confirmed for {age} seconds.",
        "Check that truegreen monitor is running and can reach the cluster; its log says why.",
    ),
    # -- credentials ----------------------------------------------------------------------
    "credentials.ok": Wording("The backend login details are in place.", ""),
    "credentials.missing": Wording(
        "Training can't reach its backend: the stored login '{name}' doesn't exist.",
        "Create '{name}' with the keys {keys}, then restart the environment's services.",
    ),
    "credentials.keys-missing": Wording(
        "Training can't reach its backend: the stored login '{name}' lacks {keys}.",
        "Add {keys} to '{name}', then restart the environment's services.",
    ),
    "credentials.keys-empty": Wording(
        "Training can't reach its backend: the stored login '{name}' has empty {keys}.",
        "Fill in {keys} in '{name}', then restart the environment's services.",
    ),
    "credentials.cant-read": Wording(
        "Couldn't check the backend login details: {why}.",
        _PERMISSION,
    ),
    # -- image pull -----------------------------------------------------------------------
    "image-pull.ok": Wording("Every training image has the registry login it needs.", ""),
    "image-pull.login-missing": Wording(
        "Training images can't be downloaded: the registry login '{name}' doesn't exist.",
        "Create the registry login '{name}' for {registries}, or stop referring to it.",
    ),
    "image-pull.login-wrong-type": Wording(
        "Training images can't be downloaded: '{name}' is not a registry login.",
        "Recreate '{name}' with the type kubernetes.io/dockerconfigjson.",
    ),
    "image-pull.login-damaged": Wording(
        "Training images can't be downloaded: the registry login '{name}' is damaged.",
        "Recreate '{name}' from a working docker login.",
    ),
    "image-pull.no-login-for-registry": Wording(
        "Training images from {registry} can't be downloaded: no registry login covers it.",
        "Add login details for {registry} to one of the registry logins in use ({names}).",
    ),
    "image-pull.cant-read": Wording(
        "Couldn't check whether training images can be downloaded: {why}.",
        _PERMISSION,
    ),
    # -- storage --------------------------------------------------------------------------
    "storage.ok": Wording("Every dataset volume is ready.", ""),
    "storage.volume-missing": Wording(
        "The dataset volume '{name}' doesn't exist, so what uses it can't start.",
        "Create the volume '{name}', or fix its name in the environment's settings.",
    ),
    "storage.volume-unbound": Wording(
        "The dataset volume '{name}' has no storage behind it yet ({state}).",
        "Check that the storage type '{storage_type}' can provide it; ask your cluster "
        "admin whether storage has run out.",
    ),
    "storage.volume-lost": Wording(
        "The dataset volume '{name}' lost its storage.",
        "Restore the volume from a backup or recreate it; ask your cluster admin.",
    ),
    "storage.type-missing": Wording(
        "The dataset volume '{name}' asks for a storage type '{storage_type}' that doesn't exist.",
        "Use an existing storage type for '{name}', or ask your cluster admin to add it.",
    ),
    "storage.cant-read": Wording("Couldn't check the dataset volumes: {why}.", _PERMISSION),
    # -- admission ------------------------------------------------------------------------
    "admission.ok": Wording("New training work would be let in.", ""),
    "admission.namespace-terminating": Wording(
        "The environment's space '{name}' is being deleted, so nothing new can start there.",
        "Wait for the deletion to finish and set the environment up again, or ask your cluster "
        "admin why it is being deleted.",
    ),
    "admission.namespace-missing": Wording(
        "The environment's space '{name}' doesn't exist, so nothing can start there.",
        "Check the name passed with -n, or set the environment up there.",
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
        _VERBOSE,
    ),
    "admission.cant-read": Wording(
        "Couldn't check whether new training work would be let in: {why}.", _PERMISSION
    ),
    # -- workloads ------------------------------------------------------------------------
    "workloads.ok": Wording("Every service of the environment is running and ready.", ""),
    "workloads.none-found": Wording(
        "Found no training environment in '{namespace}'.",
        "Check the name passed with -n, or install the environment there.",
    ),
    "workloads.crash-loop": Wording(
        "{workload} keeps crashing and restarting.",
        "Read its error output ({hint}) and fix what it reports.",
    ),
    "workloads.out-of-memory": Wording(
        "{workload} runs out of memory and is restarted.",
        "Give it more memory in the environment's settings, or make it use less.",
    ),
    "workloads.image-download-failing": Wording(
        "{workload} can't download its image {image}.",
        "Check that the image name and tag exist and that a registry login covers them.",
    ),
    "workloads.setting-missing": Wording(
        "{workload} can't start: a stored setting or login it needs is missing.",
        _VERBOSE,
    ),
    "workloads.update-stuck": Wording(
        "{workload}'s latest update stopped making progress.",
        "Look at why its new copies don't become ready. " + _VERBOSE,
    ),
    "workloads.updating": Wording(
        "{workload} is being updated: {progress}.",
        "Wait for the update to finish, then run this check again.",
    ),
    "workloads.not-ready": Wording(
        "{workload} is running but has not been ready for {age}.",
        "It fails its own readiness check; read its output. " + _VERBOSE,
    ),
    "workloads.starting": Wording(
        "{workload} is still starting ({age} so far).",
        "Wait a few minutes and run this check again.",
    ),
    "workloads.waiting-too-long": Wording(
        "{workload} has been waiting {age} to start.",
        "Usually no machine has room for it; free some capacity or add a machine. " + _VERBOSE,
    ),
    "workloads.cant-read": Wording(
        "Couldn't check whether the environment's services are healthy: {why}.", _PERMISSION
    ),
    # -- capacity -------------------------------------------------------------------------
    "capacity.fits": Wording("A training job of {size} fits now.", ""),
    "capacity.free-only": Wording(
        "Free capacity was measured, but no training job size is known to compare it with.",
        "Pass --job-requests (for example cpu=4,memory=16Gi,nvidia.com/gpu=1) for a verdict.",
    ),
    "capacity.held-by-running-job": Wording(
        "Training can run, but a running training job is using the free capacity; "
        "the next one waits for it to finish.",
        "Wait for {jobs} to finish, or add capacity.",
    ),
    "capacity.blocked-by-other-work": Wording(
        "A training job of {size} can't start: other programs use the room it needs.",
        "Free capacity on a machine that can host it ({closest}), or add a machine.",
    ),
    "capacity.too-large": Wording(
        "A training job of {size} doesn't fit on any machine, even an empty one.",
        "Ask for less ({closest}), or add a machine big enough.",
    ),
    "capacity.no-eligible-machine": Wording(
        "No machine may run a training job: {why}.",
        "Make a machine available for training jobs, or change where they may run.",
    ),
    "capacity.job-stuck": Wording(
        "A training job ({job}) has waited {age} for a machine, and free capacity doesn't "
        "explain it.",
        _VERBOSE,
    ),
    "capacity.bad-job-size": Wording(
        "The training job's size can't be read: {problem}.",
        "Fix the resource amounts in the training job's settings.",
    ),
    "capacity.cant-read": Wording(
        "Couldn't check whether there is room for a training job: {why}.", _PERMISSION
    ),
    # -- probes ---------------------------------------------------------------------------
    "probes.ok": Wording("Every service's health checks can be trusted.", ""),
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
        "Couldn't check the environment's health checks: {why}.", _PERMISSION
    ),
    # -- freshness ------------------------------------------------------------------------
    "freshness.ok": Wording("Image refresh has nothing to report.", ""),
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
        "Automatic image refresh of {workload} stopped after repeated failed updates.",
        "Fix the failing update, then clear the stop marker {marker}.",
    ),
    "freshness.cant-read": Wording("Couldn't check image freshness: {why}.", _PERMISSION),
}


# Plain nouns for what a read was after, used in "couldn't check" lines.
_KIND_NOUNS = {
    Kind.POD: "the running programs",
    Kind.NODE: "the machines",
    Kind.SECRET: "the stored logins",
    Kind.SERVICE_ACCOUNT: "the environment's identities",
    Kind.PERSISTENT_VOLUME_CLAIM: "the dataset volumes",
    Kind.LIMIT_RANGE: "the default sizes",
    Kind.DEPLOYMENT: "the services",
    Kind.STATEFUL_SET: "the services",
    Kind.DAEMON_SET: "the services",
    Kind.REPLICA_SET: "the services",
    Kind.JOB: "the training jobs",
    Kind.STORAGE_CLASS: "the storage types",
    Kind.EVENT: "the activity log",
    Kind.NAMESPACE: "the environment's space",
    Kind.RESOURCE_QUOTA: "the usage limits",
    Kind.ENDPOINT_SLICE: "the servers behind the approval hooks",
    Kind.VALIDATING_WEBHOOK_CONFIGURATION: "the approval hooks",
    Kind.MUTATING_WEBHOOK_CONFIGURATION: "the approval hooks",
}

_FAILURE_WORDS = {
    ReadFailure.UNAUTHORIZED: "the cluster did not accept the login when reading {noun}",
    ReadFailure.FORBIDDEN: "no permission to read {noun}",
    ReadFailure.TIMEOUT: "the cluster did not answer in time when reading {noun}",
    ReadFailure.UNREACHABLE: "the connection broke while reading {noun}",
    ReadFailure.SERVER_ERROR: "the cluster answered with an error when reading {noun}",
    ReadFailure.MALFORMED: "the cluster's answer about {noun} was garbled",
    ReadFailure.TOO_LARGE: "the cluster's answer about {noun} was too large to read",
    ReadFailure.NOT_CAPTURED: "the snapshot doesn't include {noun}",
    ReadFailure.NOT_FOUND: "{noun} were not found",
}


def plain_why(kind: Kind, cant: CantRead) -> str:
    """Why a read could not look, in plain words (`no permission to read the machines`)."""
    return _FAILURE_WORDS[cant.failure].format(noun=_KIND_NOUNS[kind])


def plain_connection_why(cant: CantRead) -> str:
    """Why the cluster could not be reached at all, from the classified reason."""
    detail = cant.reason.rpartition("(")[2].rstrip(")") if "(" in cant.reason else ""
    if cant.failure is ReadFailure.TIMEOUT:
        return "it did not answer in time"
    if cant.failure is ReadFailure.UNAUTHORIZED:
        return cant.reason  # no login could be obtained: the plugin's or the file's own line
    return detail or "could not connect"


def render(code: str, **fields: object) -> tuple[str, str]:
    """The headline and remedy for `code`, filled in; KeyError when a field is missing."""
    wording = WORDING[code]
    values = {k: str(v) for k, v in fields.items()}
    return wording.headline.format(**values), wording.remedy.format(**values)
