"""The workloads check's reason codes and the plain words of each: headline and remedy templates,
filled in with names and plain amounts."""

from typing import Final

from truegreen.doctor.checks.base import Words
from truegreen.doctor.findings import CheckId
from truegreen.plain_words import Wording

OK: Final = "workloads.ok"
NONE_FOUND: Final = "workloads.none-found"
CRASH_LOOP: Final = "workloads.crash-loop"
OUT_OF_MEMORY: Final = "workloads.out-of-memory"
OUT_OF_MEMORY_ONCE: Final = "workloads.out-of-memory-once"
TRY_OUT_OF_MEMORY: Final = "workloads.try-out-of-memory"
IMAGE_DOWNLOAD_FAILING: Final = "workloads.image-download-failing"
IMAGE_DOWNLOAD_ERROR: Final = "workloads.image-download-error"
IMAGE_NOT_IN_REGISTRY: Final = "workloads.image-not-in-registry"
IMAGE_LOGIN_REFUSED: Final = "workloads.image-login-refused"
IMAGE_LOGIN_NEEDED: Final = "workloads.image-login-needed"
IMAGE_LOGIN_EMPTY: Final = "workloads.image-login-empty"
IMAGE_MACHINE_LOGIN_FAILED: Final = "workloads.image-machine-login-failed"
IMAGE_PULL_LIMIT: Final = "workloads.image-pull-limit"
REGISTRY_UNREACHABLE: Final = "workloads.registry-unreachable"
REGISTRY_FAILING: Final = "workloads.registry-failing"
REGISTRY_NOT_TRUSTED: Final = "workloads.registry-not-trusted"
IMAGE_WRONG_PLATFORM: Final = "workloads.image-wrong-platform"
IMAGE_COPY_DAMAGED: Final = "workloads.image-copy-damaged"
IMAGE_SIGNATURE_REFUSED: Final = "workloads.image-signature-refused"
SETTING_MISSING: Final = "workloads.setting-missing"
SETTING_NAMED_MISSING: Final = "workloads.named-setting-missing"
WONT_START: Final = "workloads.container-wont-start"
UPDATE_STUCK: Final = "workloads.update-stuck"
UPDATING: Final = "workloads.updating"
NOT_READY: Final = "workloads.not-ready"
STARTING: Final = "workloads.starting"
WAITING_TOO_LONG: Final = "workloads.waiting-too-long"
STUCK_ON_MACHINE: Final = "workloads.stuck-on-machine"
PREPARING: Final = "workloads.preparing"
NO_SHARED_MEMORY: Final = "workloads.no-shared-memory"
JOB_PAUSED: Final = "workloads.job-paused"
SCHEDULE_PAUSED: Final = "workloads.schedule-paused"
JOB_EMPTY: Final = "workloads.job-empty"
JOB_QUEUED: Final = "workloads.job-queued"
KIND_NOT_INSTALLED: Final = "workloads.kind-not-installed"
KIND_VERSION_NOT_SERVED: Final = "workloads.kind-version-not-served"
LAST_JOB_OUT_OF_MEMORY: Final = "workloads.last-job-out-of-memory"
LAST_JOB_IMAGE: Final = "workloads.last-job-image"
LAST_JOB_EVICTED: Final = "workloads.last-job-evicted"
LAST_JOB_OVER_DISK_LIMIT: Final = "workloads.last-job-over-disk-limit"
LAST_JOB_DEADLINE: Final = "workloads.last-job-deadline"
LAST_JOB_FAILED: Final = "workloads.last-job-failed"
LAST_JOB_REFUSED: Final = "workloads.last-job-refused"
LAST_JOB_NOT_PLACED: Final = "workloads.last-job-not-placed"
LAST_JOB_GROUP_NO_ROOM: Final = "workloads.last-job-group-no-room"
LAST_JOB_MACHINE_REFUSED: Final = "workloads.last-job-machine-refused"
CANT_READ: Final = "workloads.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("Every workload of the environment is running and ready.", ""),
    NONE_FOUND: Wording(
        "Found no training environment in '{namespace}'.",
        "Check the name (from -n, else the job file, else the connection's default), or "
        "install the environment there; {command} lists what runs there.",
    ),
    CRASH_LOOP: Wording(
        "{workload} keeps crashing and restarting.",
        "Read its error output with {command} and fix what it reports.",
    ),
    OUT_OF_MEMORY: Wording(
        "{workload} runs out of memory and is restarted.",
        "Give it more memory in the environment's settings, or make it use less; {command} "
        "shows its last run.",
    ),
    OUT_OF_MEMORY_ONCE: Wording(
        "{workload} ran out of memory once and was restarted right away; it runs again.",
        "Nothing to do while it keeps running; if it runs out again, give it more memory in "
        "the environment's settings, or make it use less; {command} shows the run that ran "
        "out.",
    ),
    TRY_OUT_OF_MEMORY: Wording(
        "A try of the training job {job} ran out of memory {age} ago and was stopped; the job "
        "is trying again.",
        "Give its training program more memory (its memory limit), or make it use less (a "
        "smaller batch), before its tries run out; {command} shows the try that ran out.",
    ),
    IMAGE_DOWNLOAD_FAILING: Wording(
        "{workload} can't download its image {image}.",
        "Check that the image name and tag exist and that a registry login covers them; "
        "{command} shows the download error.",
    ),
    IMAGE_DOWNLOAD_ERROR: Wording(
        "{workload} can't download its image {image}: its machine says “{message}”.",
        "Fix what that names (often the image's name or tag, its registry login, or the way "
        "to its registry); {command} shows the whole error.",
    ),
    IMAGE_NOT_IN_REGISTRY: Wording(
        "{workload} can't download its image {image}: {registry} says there is no such image.",
        "Check the image's name and tag, and push it if it was never pushed; {command} shows "
        "the download error.",
    ),
    IMAGE_LOGIN_REFUSED: Wording(
        "{workload} can't download its image {image}: {registry} refused the login.",
        "Check that the registry login it uses holds valid credentials for {registry}; "
        "{command} shows the registry's words.",
    ),
    IMAGE_LOGIN_NEEDED: Wording(
        "{workload} can't download its image {image}: {registry} wants a login, and the "
        "download sent none.",
        "Create a registry login for {registry} and name it in the workload's settings, or "
        "add {registry} to the login it names; {command} shows the registry's words.",
    ),
    IMAGE_LOGIN_EMPTY: Wording(
        "{workload} can't download its image {image}: the registry login {names} it names for "
        "{registry} holds no user name and password, so the download sent none.",
        "Put the user name and password (or an access token) for {registry} in {names}: a "
        "login made from a computer's Docker settings often has them kept in that computer's "
        "credential store, not in the login; {command} shows the registry's words.",
    ),
    IMAGE_MACHINE_LOGIN_FAILED: Wording(
        "{workload} can't download its image {image}: the machines log in to {registry} by "
        "their own means, and that login was not made or not accepted (its machine says "
        "“{message}”).",
        "Check the machines' own login to {registry}: the cloud's credential helper on them, "
        "the cloud role or identity they download with (allowed to read {registry}), and "
        "their network path to it (a private link's name resolution); {command} shows the "
        "whole error.",
    ),
    IMAGE_PULL_LIMIT: Wording(
        "{workload} can't download its image {image}: {registry} allows only so many downloads, "
        "and the limit is reached.",
        "Download with a registry login (a logged-in account is allowed more) or from a mirror "
        "of {registry}; the limit also lifts after a while. {command} shows the registry's "
        "words.",
    ),
    IMAGE_WRONG_PLATFORM: Wording(
        "{workload} can't download its image {image}: the image has no build for the kind of "
        "processor the machine {machine} has.",
        "Build the image for that processor too and push it under the same name (one image "
        "for several processors), or keep the work off such machines; {command} shows the "
        "download error.",
    ),
    IMAGE_COPY_DAMAGED: Wording(
        "{workload} can't download its image {image}: the machine {machine} is missing a piece of "
        "its own copy of it (the registry has the image).",
        "Remove that machine's copy of the image (`crictl rmi {image}` on it) so that it "
        "downloads it whole again, or keep the work off that machine; {command} shows the "
        "machine's words.",
    ),
    IMAGE_SIGNATURE_REFUSED: Wording(
        "{workload} can't download its image {image}: the machine {machine} refused it, as "
        "its rules for image signatures don't accept it.",
        "Sign the image as the machines' signature rules ask, or change those rules for "
        "{registry}; {command} shows the machine's words.",
    ),
    REGISTRY_UNREACHABLE: Wording(
        "{workload} can't download its image {image}: the machines can't reach {registry}.",
        "Check that the machines reach {registry} (its name resolves, no firewall or proxy in "
        "the way); {command} shows the error.",
    ),
    REGISTRY_FAILING: Wording(
        "{workload} can't download its image {image}: {registry} answers with a server error.",
        "Check the status of {registry}, or ask whoever runs it: it, or a proxy in front of "
        "it, is failing; the machines try again by themselves. {command} shows the registry's "
        "words.",
    ),
    REGISTRY_NOT_TRUSTED: Wording(
        "{workload} can't download its image {image}: the machine {machine} doesn't trust the "
        "certificate of {registry}.",
        "Give {registry} a valid certificate the machines trust, or add the authority that "
        "signed it to the machines' trusted authorities (or to the container runtime's "
        "settings for {registry}); {command} shows the machine's words.",
    ),
    SETTING_MISSING: Wording(
        "{workload} can't start: a stored setting or login it needs is missing.",
        "See which one with {command}, then create it.",
    ),
    SETTING_NAMED_MISSING: Wording(
        "{workload} can't start: {setting} it needs can't be found.",
        "Create {setting} where it runs, or correct the name in its settings; {command} shows "
        "the error.",
    ),
    WONT_START: Wording(
        "{workload} can't start its program: its machine says “{message}”.",
        "Fix what that names (often the image's command, or a file or device the job asks "
        "for); {command} shows the whole error.",
    ),
    UPDATE_STUCK: Wording(
        "The latest update of {workload} stopped making progress.",
        "See why its new copies don't become ready with {command}, or go back to the "
        "version before with {undo}.",
    ),
    UPDATING: Wording(
        "{workload} is being updated: {progress}.",
        "Wait for the update to finish ({command} follows it), then run this check again.",
    ),
    NOT_READY: Wording(
        "{workload} is running but has not been ready for {age}.",
        "It fails its own readiness check; {command} shows why.",
    ),
    STARTING: Wording(
        "{workload} is still starting ({age} so far).",
        "Wait a few minutes and run this check again.",
    ),
    WAITING_TOO_LONG: Wording(
        "{workload} has been waiting {age} to start.",
        "See why with {command}; usually no machine has room for it, so free some capacity "
        "or add a machine.",
    ),
    STUCK_ON_MACHINE: Wording(
        "{workload} was given a machine {age} ago and still hasn't started there.",
        "See what holds it up on that machine with {command}.",
    ),
    PREPARING: Wording(
        "{workload} is still preparing: {step} for {age}.",
        "Nothing has failed; wait for it. {command} shows what it does.",
    ),
    NO_SHARED_MEMORY: Wording(
        "The training job {job} has the container default of 64 MiB of shared memory, too "
        "little for its programs ({signal}): they stop with a bus error when it fills.",
        "Give its programs a memory-backed /dev/shm in the job's settings (the details show "
        "the lines to add).",
    ),
    JOB_PAUSED: Wording(
        "The training job {job} is paused, and nothing will start it.",
        "If nobody paused it on purpose, start it with {command}.",
    ),
    SCHEDULE_PAUSED: Wording(
        "The training schedule {job} is paused: it starts no new training job until it is resumed.",
        "If nobody paused it on purpose, resume it with {command}.",
    ),
    JOB_EMPTY: Wording(
        "The training job {job} asks for no programs, so none of it will run.",
        "If nobody set its size to zero on purpose, give it its programs again; {command} "
        "shows its settings.",
    ),
    JOB_QUEUED: Wording(
        "The training job {job} waits for {queue} to let it start.",
        "Nothing to do while {queue} has room for it; check its place there if it waits long.",
    ),
    KIND_NOT_INSTALLED: Wording(
        "The training job {job} can't be created: nothing installed in this cluster runs {a_kind}.",
        "Install {controller}, which adds the kind {kind} ({api_version}), or ask your "
        "cluster admin to; then check again.",
    ),
    KIND_VERSION_NOT_SERVED: Wording(
        "The training job {job} can't be created: this cluster runs {kind}s only at {served}, "
        "not {api_version}.",
        "Write the job for {served} (its apiVersion and the fields that version has); "
        "installing something else to run {kind}s can't work beside what runs them here. "
        "Then check again.",
    ),
    LAST_JOB_OUT_OF_MEMORY: Wording(
        "The last training job {job} ran out of memory and was stopped; the next one with "
        "the same settings will be too.",
        "Give its training program more memory (its memory limit), or make it use less (a "
        "smaller batch); {command} shows which program.",
    ),
    LAST_JOB_IMAGE: Wording(
        "The last training job {job} failed: its image couldn't be downloaded.",
        "Fix the image's name or its registry login; {command} shows the error.",
    ),
    LAST_JOB_EVICTED: Wording(
        "The last training job {job} was stopped by its machine, which ran short; it may run "
        "when started again.",
        "Ask for the memory and disk the job really uses, so that its machine keeps room for "
        "it; {command} shows what ran short.",
    ),
    LAST_JOB_OVER_DISK_LIMIT: Wording(
        "The last training job {job} was stopped for going over {limit}; the next one with "
        "the same settings will be too.",
        "{change}, or make it write less to the machine's disk; {command} shows what the "
        "machine said.",
    ),
    LAST_JOB_DEADLINE: Wording(
        "The last training job {job} ran out of time: it was stopped at its deadline.",
        "Give it a longer deadline (`activeDeadlineSeconds`), or make the work shorter; "
        "{command} shows what stopped it.",
    ),
    LAST_JOB_FAILED: Wording(
        "The last training job {job} failed: its program ended with an error.",
        "See why with {command}; the next job with the same settings fails the same way "
        "until that is fixed.",
    ),
    LAST_JOB_REFUSED: Wording(
        "The last training job {job} was refused for its settings, so none of it ran: “{said}”.",
        "Correct the settings it names and submit the job again; the same settings are "
        "refused every time. {command} shows the job.",
    ),
    LAST_JOB_NOT_PLACED: Wording(
        "The last training job {job} was refused by `{scheduler}`, which places it, before any "
        "of its programs ran: “{said}”.",
        "Fix what `{scheduler}` names (often the queue the job asks for) and submit the job "
        "again; {command} shows what it said.",
    ),
    LAST_JOB_GROUP_NO_ROOM: Wording(
        "The last training job {job} failed before any of its programs ran: `{scheduler}`, "
        "which places it, could not find room for all of them together in time: “{said}”.",
        "Free room for the whole job, ask for less, or let `{scheduler}` wait longer for room, "
        "then submit the job again; {command} shows what it said.",
    ),
    LAST_JOB_MACHINE_REFUSED: Wording(
        "The last training job {job} failed before any of its programs ran: the machine "
        "{machine} refused to run it: “{said}”.",
        "Fix what the machine names (often room or a device it did not have) and submit the "
        "job again; {command} shows the whole refusal.",
    ),
    CANT_READ: Wording(
        "Couldn't check whether the environment's workloads are healthy: {why}.", "{remedy}"
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CheckId.WORKLOADS, WORDS)
"""The check's findings, in these words."""
