"""The trial (`--trial`): what the training job's own pods measured in their first seconds.

The trial itself ran before the checks (doctor/reads/gather.py, truegreen.trial.run); this
check only words what it read back (truegreen.trial.readback): one finding per warning or
failure, the source's own words (the kubelet's message, the library's error) kept as details,
and one ok finding listing what went right (the pods of interrupted trials this run removed
first among them, or, where nothing went right, in the first finding's details). A trial the
API server refused to start is the measurement of that gate, said as such, never as a failure
of the probe: a refusal of the trial pod itself (admission, by the rule doctor's trial start
judges its own create by: doctor/knowledge/pod_refusal.py) in the server's words, a refusal of
the login (authorization) as the permission it lacks, and no usable answer as that.
"""

from typing import TYPE_CHECKING, Final

from msgspec.structs import replace

from truegreen.cluster import CantRead, ReadFailure
from truegreen.doctor.checks.base import Words
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.pod_refusal import refusal
from truegreen.plain_words import Wording
from truegreen.trial.outcomes import Level, Outcome

if TYPE_CHECKING:
    from truegreen.trial.readback import TrialFinding, TrialRun

CHECK = CheckId.TRIAL
OK: Final = "trial.ok"
REFUSED: Final = "trial.refused"
"""The cluster turned the trial pod away: its create's refusal names the pod (admission)."""
WOULD_PREEMPT: Final = "trial.would-preempt"
"""The cluster refused the trial pod's `preemptionPolicy: Never`: the priority it would get
(the cluster's default class, where the job's own was dropped) may preempt, and a trial pod
never does (truegreen.trial.pods)."""
PREEMPTION_REFUSED: Final = "must not be provided in pod spec; priority admission controller"
"""The Priority admission plugin's words refusing a pod whose stated preemptionPolicy differs
from its class's (plugin/pkg/admission/priority/admission.go `admitPod`: "the string value of
PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller
computed PreemptLowerPriority from the given PriorityClass name")."""
NOT_ALLOWED: Final = "trial.not-allowed"
"""The login may not create pods there: a refusal that names no pod (authorization)."""
NO_ANSWER: Final = "trial.no-answer"
"""The create had no usable answer: a timeout, a reset, an error of the server's own."""
NOT_DELETED: Final = "trial.not-deleted"
NOT_SAVED: Final = "trial.not-saved"
"""A snapshot taken with the trial that holds no readable record of it."""
CANT_READ: Final = "trial.cant-read"
"""A list of training jobs not read: which job to try was not known, and no pod was made."""
NO_JOB: Final = "no training job to try"
"""The coverage's reason where the trial asked for found no training job: no pod was made."""

_MIB = 1 << 20

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("The trial start of the training job measured: {what}.", ""),
    REFUSED: Wording(
        "Couldn't start the trial of the training job: the cluster turned its program away.",
        "The details give the cluster's words (a usage limit, a security level, an approval "
        "hook): fix what they name, or ask your cluster admin; doctor's other lines may "
        "already explain it, and --admission-dry-run tries the job's own program.",
    ),
    WOULD_PREEMPT: Wording(
        "Couldn't start the trial of the training job: the cluster would give it the right to "
        "push other people's programs off their machines, and the trial never takes that.",
        "Ask your cluster admin for a default priority that never pushes others off (the "
        "details give the cluster's words), or run without --trial; the other findings stand.",
    ),
    NOT_ALLOWED: Wording(
        "Couldn't start the trial of the training job: this login may not start programs here.",
        "Grant the rights docs/trial.md lists (deploy/doctor/trial-run-role.yaml), or run "
        "without --trial.",
    ),
    NO_ANSWER: Wording(
        "Couldn't start the trial of the training job: the cluster gave no usable answer.",
        "The details say what happened; run again, with a longer --request-timeout if the "
        "cluster is slow to answer.",
    ),
    NOT_SAVED: Wording(
        "Couldn't read what the trial measured: the snapshot's record of it is missing or damaged.",
        "Take a new snapshot with --trial and check that one.",
    ),
    CANT_READ: Wording("Couldn't run the trial of the training job: {why}.", "{remedy}"),
    NOT_DELETED: Wording(
        "The trial left {count} of its programs behind ({names}).",
        "Delete them with {command}.",
    ),
    f"trial.{Outcome.NOT_PLACED}": Wording(
        "Couldn't run the trial: it was not placed on a machine in the trial's time.",
        "The details give the cluster's words (the other findings say why the job would wait "
        "too), or say it gave none (then check that whatever places the job's work runs); try "
        "again when a machine has room, or with more time (--trial-timeout).",
    ),
    f"trial.{Outcome.WAITED_FOR_QUEUE}": Wording(
        "Couldn't run the trial: the queue (Kueue) did not let it start in the trial's time.",
        "The trial waits in the job's queue like the job itself (docs/trial.md): try again "
        "when the queue has room, or with more time (--trial-timeout).",
    ),
    f"trial.{Outcome.HELD_BACK}": Wording(
        "Couldn't run the trial: something held it back from starting for the whole trial.",
        "The details name what held it (a hold another tool put on it); ask that tool's owner "
        "when it lets such work through.",
    ),
    f"trial.{Outcome.IMAGE_PULL_SLOW}": Wording(
        "The training image took {seconds} to download{size} on a machine without it.",
        "Make the image smaller, or keep it on the machines ahead of time.",
    ),
    f"trial.{Outcome.IMAGE_PULL_FAILED}": Wording(
        "The training image could not be downloaded on the machine the trial ran on.",
        "Check the image name and the registry login; the details say what the machine saw.",
    ),
    f"trial.{Outcome.STILL_PULLING}": Wording(
        "The training image was still downloading when the trial's time ran out.",
        "Make the image smaller, keep it on the machines, or give the trial more time "
        "(--trial-timeout).",
    ),
    f"trial.{Outcome.NOT_STARTED}": Wording(
        "The training program could not start on its machine.",
        "The details give the machine's own words; fix what they name and try again.",
    ),
    f"trial.{Outcome.CONTAINER_ENDED}": Wording(
        "The trial's program ended with an error before it could measure anything.",
        "The details give the exit code and the last words it printed.",
    ),
    f"trial.{Outcome.READ_ONLY_FOR_TRIAL}": Wording(
        "Couldn't measure the trial: a program of the job's own ended with an error where the "
        "trial keeps the job's data read-only.",
        "The trial never writes to the job's data, so a step of the job that writes there "
        "cannot run in it; the details name that step and give its words. The job's own run "
        "shows whether it works.",
    ),
    f"trial.{Outcome.NO_PROBE_LINE}": Wording(
        "The trial's program left no measurement.",
        "The details say how far it got: the last line it printed, or what it was still doing "
        "when the trial's time ran out (more time: --trial-timeout).",
    ),
    f"trial.{Outcome.NOT_MEASURED}": Wording(
        "The trial could not measure the network between workers: the image has no Python 3.8 "
        "or later.",
        "",
    ),
    f"trial.{Outcome.NOT_TOGETHER}": Wording(
        "The trial could not measure the network between workers: they did not run at the "
        "same time.",
        "The details say when each started; try again, with more time if a machine was still "
        "downloading the image (--trial-timeout).",
    ),
    f"trial.{Outcome.NO_GPU_LIBRARY}": Wording(
        "Couldn't check the GPUs from inside the training image: it has no PyTorch, JAX or CuPy "
        "(or no Python 3.8 or later to try them with).",
        "",
    ),
    f"trial.{Outcome.NO_GPU}": Wording(
        "The training program sees no GPU, though it asked for {limit}.",
        "Check the machine's GPU driver and device plugin; the details give the library's words.",
    ),
    f"trial.{Outcome.FEWER_GPUS}": Wording(
        "The training program sees {value} GPUs, though it asked for {limit}.",
        "Check the machine's GPU driver and device plugin.",
    ),
    f"trial.{Outcome.DRIVER_TOO_OLD}": Wording(
        "The machine's GPU driver is too old for the CUDA in the training image.",
        "Update the driver on the GPU machines, or build the image on an older CUDA.",
    ),
    f"trial.{Outcome.GPU_LIBRARY_FAILED}": Wording(
        "The GPU library in the training image failed to start.",
        "The details give the library's own words.",
    ),
    f"trial.{Outcome.SHM_TOO_SMALL}": Wording(
        "The shared memory of the training program is {value}, below the {limit} it needs.",
        "Mount a memory-backed volume at /dev/shm in the training job, as large as it needs "
        "and within the job's memory limit (the machine makes it no larger than that).",
    ),
    f"trial.{Outcome.SHM_DEFAULT_SIZE}": Wording(
        "The shared memory of the training program is only {value}, the default size: a data "
        "loader with workers fills it.",
        "Mount a memory-backed volume at /dev/shm in the training job.",
    ),
    f"trial.{Outcome.SHM_MISSING}": Wording(
        "The training program has no shared memory at /dev/shm.",
        "Mount a memory-backed volume at /dev/shm in the training job.",
    ),
    f"trial.{Outcome.SPACE_RAN_OUT}": Wording(
        "A write in the trial ran out of space.",
        "Give the training job a larger /dev/shm or scratch volume.",
    ),
    f"trial.{Outcome.BUS_ERROR}": Wording(
        "The trial's program died of a bus error (a full shared memory does that).",
        "Give the training job a larger /dev/shm.",
    ),
    f"trial.{Outcome.DATA_SLOW}": Wording(
        "The dataset could not be read fast enough: {how}.",
        "Check the storage behind the dataset volume.",
    ),
    f"trial.{Outcome.DATA_EMPTY}": Wording(
        "The dataset volume holds no files at {path}.", "Check that the right volume is used."
    ),
    f"trial.{Outcome.DATA_MISSING}": Wording(
        "The dataset is not where the training job reads it ({path}).",
        "Check the training job's volume and where it is mounted.",
    ),
    f"trial.{Outcome.DATA_UNREADABLE}": Wording(
        "The dataset could not be read.", "The details give the system's own words."
    ),
    f"trial.{Outcome.RANK0_UNREACHABLE}": Wording(
        "A worker of the training job could not reach the first worker.",
        "Let the training job's machines reach each other on its port (network rules, "
        "security groups); the details give what the connection said.",
    ),
    f"trial.{Outcome.WORKERS_MISSING}": Wording(
        "The first worker heard from {value} of {limit} other workers.",
        "Let the training job's machines reach each other on its port.",
    ),
    f"trial.{Outcome.DUPLICATE_GPU}": Wording(
        "Two workers of the training job landed on the same GPU.",
        "Give each worker its own GPU; the details give the library's words.",
    ),
    f"trial.{Outcome.COLLECTIVE_TIMED_OUT}": Wording(
        "The workers' first exchange timed out: {value} of {limit} joined.",
        "Let the training job's machines reach each other on its port.",
    ),
    f"trial.{Outcome.COLLECTIVE_FAILED}": Wording(
        "The workers' first exchange failed.", "The details give the library's own words."
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CHECK, WORDS)

_STATUS = {
    Level.OK: Status.OK,
    Level.WARNING: Status.WARN,
    Level.FAIL: Status.FAIL,
    Level.UNKNOWN: Status.UNKNOWN,
}
_SAID_OK = {
    Outcome.IMAGE_PULLED: "the image came in {seconds}",
    Outcome.IMAGE_PRESENT: "the image was already on the machine",
    Outcome.GPUS_SEEN: "{value} GPUs seen",
    Outcome.SHM_ENOUGH: "shared memory {value}",
    Outcome.DATA_READ: "the dataset reads at {value} MiB/s",
    Outcome.WORKERS_REACHED: "the workers reach each other",
    Outcome.COLLECTIVE_OK: "one exchange between the workers in {value} ms",
    Outcome.START_RETRIED: (
        "a step of its start failed at first and went through when the machine retried it"
    ),
}


_GPUS_SEEN_OF_AT_LEAST = (
    "{value} GPUs seen (the job asks for {limit}: how many it gets is not fixed ahead)"
)
"""GPUs seen where the job's device claims give a number not fixed ahead (every GPU of a kind on
its machine, or one of alternatives of different sizes)."""


def _size(value: float | None) -> str:
    if value is None:
        return "an unknown size"
    return f"{value / (1 << 30):.1f} GiB" if value >= 1 << 30 else f"{value / _MIB:.0f} MiB"


def _seconds(value: float | None) -> str:
    if value is None:
        return "an unknown time"
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{value:.1f} s"


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


def _how_slow(found: "TrialFinding") -> str:
    """A slow dataset read: cut by the probe's deadline (the bytes read are given), below the
    rate, or no answer at all."""
    if found.size_bytes is not None:
        return (
            f"the probe's deadline came after {_size(found.size_bytes)} "
            f"({_number(found.value)} MiB/s)"
        )
    if found.value is None:
        return "no answer before the probe's deadline"
    return f"{_number(found.value)} MiB/s, below {_number(found.limit)} MiB/s"


def _fields(found: "TrialFinding") -> dict[str, object]:
    shm = found.outcome in (Outcome.SHM_TOO_SMALL, Outcome.SHM_DEFAULT_SIZE, Outcome.SHM_ENOUGH)
    number = _size if shm else _number
    limit = number(found.limit)
    return {
        "value": number(found.value),
        "limit": f"at least {limit}" if found.at_least else limit,
        "seconds": _seconds(found.value),
        # A kubelet before 1.30 gives no size: none is said.
        "size": "" if found.size_bytes is None else f" ({_size(found.size_bytes)})",
        "path": found.words,
        "how": _how_slow(found),
    }


def untried(env: Environment) -> str:
    """Why the trial asked for made no pod where no finding says it ('' otherwise): no training
    job to try (none in the namespace, and no --job-file; reads/trial.py `trial_of`). Nothing
    was measured: the coverage says so, never that the trial was checked (doctor/diagnose.py
    `report_of`)."""
    return NO_JOB if env.trial_run is None and not env.work().judged_unknown else ""


def check(env: Environment) -> list[Finding]:
    """The trial's findings; none when there was no training job to try (`untried`: the
    coverage says so); unknown naming the read when a list of training jobs was not read, so
    that which job to try was not known (reads/trial.py makes no pod then)."""
    run = env.trial_run
    if run is None:
        return [SAY.cant_check(env, kind, cant) for kind, cant in env.work().judged_unknown]
    if isinstance(run, CantRead):
        return [SAY.finding(Status.UNKNOWN, Basis.CANT_CHECK, NOT_SAVED, details=(run.reason,))]
    if run.refused is not None:
        return _with_leftovers([_not_started(run.refused, run.refused_pod), *_left(env, run)], run)
    # Imported here: only a run with --trial (or its snapshot) has measurements to read back.
    from truegreen.trial.readback import run_findings

    findings: list[Finding] = []
    went_right: list[str] = []
    retried: list[str] = []
    for pod, found_here in run_findings(run.pods):
        for found in found_here:
            if found.outcome is Outcome.START_RETRIED:
                # A note, never a failure: what the kubelet did at last was measured. Its
                # first words say what slowed the start (a registry's limit, a slow attach).
                retried.append(f"{pod.pod}: retried: {found.words}")
            if found.level is Level.OK:
                said = _SAID_OK[found.outcome]
                if found.outcome is Outcome.GPUS_SEEN and found.at_least:
                    said = _GPUS_SEEN_OF_AT_LEAST
                went_right.append(said.format(**_fields(found)))
                continue
            findings.append(
                SAY.finding(
                    _STATUS[found.level],
                    Basis.CANT_CHECK if found.level is Level.UNKNOWN else Basis.MEASURED,
                    f"trial.{found.outcome}",
                    details=(f"{pod.pod}: {found.words}",) if found.words else (),
                    objects=(f"Pod/{pod.pod}",),
                    **_fields(found),
                )
            )
    findings += _left(env, run)
    if not went_right:
        return _with_leftovers(findings, run)
    if run.removed_leftovers:
        # Beside what the trial measured, in the headline: the operator may wonder where
        # those runs went.
        went_right.append(_leftovers_removed(run))
    findings.insert(0, SAY.ok(what="; ".join(dict.fromkeys(went_right)), details=retried))
    return findings


def _leftovers_removed(run: "TrialRun") -> str:
    """The pods an interrupted trial left that this run deleted before its own (trial/run.py
    `remove_leftovers`), in one clause."""
    removed = run.removed_leftovers
    return f"{len(removed)} left by an interrupted trial removed first ({', '.join(removed)})"


def _with_leftovers(findings: list[Finding], run: "TrialRun") -> list[Finding]:
    """`findings`, the first naming the leftovers this run deleted, as a detail: a trial where
    nothing went right has no `trial.ok` to name them in, and a cleanup is no measurement to
    make one of (green is measured green). Each pod read back has a finding
    (readback.py `pod_findings`), and so has a create that ended the trial."""
    if not run.removed_leftovers or not findings:
        return findings
    first, *rest = findings
    said = replace(first, details=(*first.details, _leftovers_removed(run)))
    return [said, *rest]


def _not_started(answer: CantRead, pod: str) -> Finding:
    """The create that ended the trial, judged as doctor's trial start judges its own
    (doctor/knowledge/pod_refusal.py): a refusal naming the trial pod is the cluster's word on
    the pod, quoted (the Priority plugin's refusal of its `preemptionPolicy: Never` as
    WOULD_PREEMPT); a 403 naming none is the permission the login lacks; anything else is no
    usable answer, never worded as a refusal."""
    refused = refusal(answer, pod) if pod else None
    if refused is not None:
        # The trial pod's own `preemptionPolicy: Never` refused: no gate of the job's.
        code = WOULD_PREEMPT if PREEMPTION_REFUSED in refused else REFUSED
        return SAY.finding(Status.UNKNOWN, Basis.CANT_CHECK, code, details=(answer.server_message,))
    code = NOT_ALLOWED if answer.failure is ReadFailure.FORBIDDEN else NO_ANSWER
    details = (answer.reason, answer.server_message)
    return SAY.finding(Status.UNKNOWN, Basis.CANT_CHECK, code, details=tuple(filter(None, details)))


def _left(env: Environment, run: "TrialRun") -> list[Finding]:
    """The pods a delete did not remove or that could not be confirmed gone, with the
    command that removes them (`removal`); none when none were left."""
    if not run.not_deleted:
        return []
    return [
        SAY.finding(
            Status.WARN,
            Basis.MEASURED,
            NOT_DELETED,
            details=tuple(f"{name}: {cant.reason}" for name, cant in run.not_deleted),
            count=len(run.not_deleted),
            names=", ".join(name for name, _ in run.not_deleted),
            command=removal(env, run),
        )
    ]


def removal(env: Environment, run: "TrialRun") -> str:
    """The command that deletes the pods `run` left: by this run's label, which every pod it
    made carries and no other run's does (never the trial label: another run's live trial pods
    carry that too), so a pod the cluster stored after the trial stopped looking goes too; by
    name where the run's id is not known (a snapshot taken before it was kept)."""
    if run.run:
        # Imported here: only a run with --trial (or its snapshot) has pods to remove.
        from truegreen.trial.pods import TRIAL_RUN_LABEL

        return env.settings.kubectl.here("delete", "pod", "-l", f"{TRIAL_RUN_LABEL}={run.run}")
    return env.settings.kubectl.here("delete", "pod", *(name for name, _ in run.not_deleted))


def left_behind(env: Environment, run: "TrialRun") -> tuple[str, str]:
    """What a trial a signal stopped left, and what removes it, as the line a stopped run ends
    with says them (truegreen.left_behind): `trial.not-deleted` in one clause each."""
    names = ", ".join(name for name, _ in run.not_deleted)
    what = f"the trial left {len(run.not_deleted)} of its programs behind ({names})"
    return what, f"delete them with {removal(env, run)}"
