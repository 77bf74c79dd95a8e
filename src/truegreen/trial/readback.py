"""What a trial pod says afterwards, read back into findings.

Three sources, each in the shape its producer writes:
- the probe's one JSON line in the pod log (`probe.py`, schema `probe_schema` 1, docs/trial.md);
- the kubelet's Events for the pod. Reasons from kubernetes pkg/kubelet/events/event.go
  (Pulling, Pulled, Failed, BackOff, FailedMount, FailedCreatePodSandBox); the messages from
  pkg/kubelet/images/image_manager.go: `Pulling image %q`, `Successfully pulled image %q in %v
  (%v including waiting). Image size: %v bytes.` (1.28 and 1.29 without the size, before 1.28
  only `... in %v`),
  `Container image %q already present on machine`, `Failed to pull image %q: %v`,
  `Back-off pulling image %q`; pkg/kubelet/kuberuntime/kuberuntime_manager.go: `Failed to create
  pod sandbox: %v`, `Back-off restarting failed container %s in pod %s`;
- the container statuses (core/v1 ContainerStatus: `state.waiting.reason`,
  `state.terminated.exitCode`).

The image findings (pulled, slow, already there, failed, still downloading) are the training
image's alone: a pull Event counts where the image its message names is the trainer's (the
kubelet names the container's image as the pod states it: image_manager.go
EnsureImageExists), else, naming none (`Error: ErrImagePull`), where it is on the trainer's
container (`involvedObject.fieldPath` `spec.containers{NAME}`, not `spec.initContainers{NAME}`:
pkg/kubelet/container/ref.go GenerateContainerRef, fieldPath). The job's init containers and
native sidecars pull their own images first (kuberuntime_manager.go computePodActions starts
no main container before them): their download is not the training image's, and one that
fails keeps the training program from starting.

The kubelet retries each step of a pod's start in the pod's next sync (a refused pull, the
volumes' mount, the sandbox) and its Warning Events stay: a failure Event of a step it got past
on a later try (`_cleared`) is a note (`start-retried`), never a failure that contradicts the
start measured after it.

A container of the job's own that the job lets write to a claim, which the trial mounts
read-only (truegreen.trial.pods.TRIAL_READ_ONLY), and that ended with an error or was restarted
after one may have failed only for that: unknown, never a failure of the job, which may write
there, and never a pass.

The container runtime's words for a program the image does not have (runc's `exec: "sh":
executable file not found in $PATH`, crun's "executable file `sh` not found in $PATH") about the
trial's own command say the probe could not run in that image: unknown, never a failure of the
job's program, which the trial replaced and never started.

The libraries' error texts recognised are their own words: CUDA's cudaErrorInsufficientDriver
(`CUDA driver version is insufficient for CUDA runtime version`), PyTorch's
c10/cuda/CUDAFunctions.cpp (`The NVIDIA driver on your system is too old (found version %d)`,
`Found no NVIDIA driver on your system`), torch/cuda/__init__.py (`No CUDA GPUs are
available`), NCCL's `Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60`, c10d's
TCPStore (`DistStoreError: Timed out after 9 seconds waiting for clients. 1/2 clients joined.`),
and the kernel's ENOSPC (`OSError: [Errno 28] No space left on device`), as a real H200 machine
printed them (/work/shared/evidence/gpu-h200-first-seconds.json).
"""

import math
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, KubeObject
from truegreen.goduration import go_duration
from truegreen.patterns import LazyPattern
from truegreen.pull_reasons import FAILED_PULL_REASONS
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.pods import PROBE_SHELL, TRIAL_READ_ONLY

PROBE_SCHEMA = 1
PULL_SLOW_SECONDS = 120.0
"""An image pull (waiting included) past two minutes is worth a warning: every new machine the
job lands on pays it before the first step."""
DATA_SLOW_MIB_PER_S = 50.0
"""A dataset read below this rate starves a GPU's input pipeline."""
SHM_DEFAULT_BYTES = 64 << 20
"""The container runtimes' default /dev/shm (Docker's and containerd's 64 MiB): too small for a
DataLoader with workers, whatever the job states."""
LOG_LIMIT = 1 << 20
"""Characters of a pod log looked at (the probe's line is at most 16 KiB)."""
WORDS_LIMIT = 600


class TrialFinding(msgspec.Struct, frozen=True):
    """One measurement of one trial pod: the outcome, how it reads, and the source's own words
    (the kubelet's message, the library's error), with the number measured and its bound."""

    outcome: Outcome
    level: Level
    pod: str
    words: str = ""
    value: float | None = None
    limit: float | None = None
    size_bytes: int | None = None
    at_least: bool = False
    """The bound is the fewest GPUs the job's device claims may give (TrialPod.gpus_at_least):
    how many they give is not fixed ahead."""


class KubeletEvent(msgspec.Struct, frozen=True):
    """The fields of a core/v1 Event the trial reads."""

    pod: str
    reason: str
    message: str
    type: str = "Normal"
    init: bool = False
    """About one of the job's init containers (`involvedObject.fieldPath`
    `spec.initContainers{…}`, pkg/kubelet/container/ref.go GenerateContainerRef), which the
    trial pod keeps: the job's own, never the probe's."""
    container: str = ""
    """The container it is about (the name in `involvedObject.fieldPath`); '' for the pod."""


class ContainerState(msgspec.Struct, frozen=True):
    """A container's state from the pod's status: waiting (reason, message) or terminated
    (reason, exit code, message); running has neither."""

    pod: str
    container: str
    waiting: str = ""
    terminated: str = ""
    exit_code: int | None = None
    message: str = ""
    init: bool = False
    """One of the job's init containers (`status.initContainerStatuses`), never the probe's."""
    started_at: float | None = None
    """When its program started, as the kubelet reports it (`state.running.startedAt`, else
    `state.terminated.startedAt`: pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses),
    in POSIX seconds; None while it never ran."""
    finished_at: float | None = None
    """When it ended (`state.terminated.finishedAt`), in POSIX seconds; None while it runs."""
    sidecar: bool = False
    """One of the job's native sidecars: an init container with `restartPolicy: Always`
    (KEP-753), which the kubelet keeps running beside the main containers and stops once they
    have ended."""
    made_read_only: bool = False
    """One of the job's containers that the job lets write to a claim and the trial mounts it
    read-only (the pod's TRIAL_READ_ONLY): its failure may be the trial's doing."""


# The probe's line, schema 1 (docs/trial.md; src/truegreen/trial/probe.schema.json).


class Device(msgspec.Struct, frozen=True):
    """One GPU as the library sees it."""

    index: int = 0
    name: str = ""
    memory_mib: int | None = None
    capability: str | None = None


class Library(msgspec.Struct, frozen=True):
    """One GPU library's import and CUDA start."""

    name: str
    status: str
    version: str | None = None
    import_s: float | None = None
    init_s: float | None = None
    cuda_version: str | None = None
    hip_version: str | None = None
    """A ROCm build's HIP version (PyTorch's `torch.version.hip`)."""
    driver_cuda_version: str | None = None
    nccl_version: str | None = None
    device_count: int | None = None
    devices: tuple[Device, ...] = ()
    error: str | None = None


class Driver(msgspec.Struct, frozen=True):
    """The NVIDIA driver as the container sees it."""

    version: str | None = None
    nvidia_smi: bool = False
    nvidia_smi_gpus: tuple[str, ...] = ()


class GpuPart(msgspec.Struct, frozen=True):
    """The GPU part: the first library that imported, and the driver."""

    status: str
    requested: int = 0
    library: str | None = None
    libraries: tuple[Library, ...] = ()
    driver: Driver | None = None
    why: str | None = None
    """Why no library was tried (probe.sh's `unavailable`): no Python in the image, or one too
    old for probe.py (pods.py `_LAUNCHER`)."""


class ShmPart(msgspec.Struct, frozen=True):
    """The shared-memory mount."""

    status: str
    path: str = ""
    size_bytes: int | None = None
    free_bytes: int | None = None
    need_bytes: int = 0
    error: str | None = None


class DataPart(msgspec.Struct, frozen=True):
    """The dataset mount's first bytes, read."""

    status: str
    path: str = ""
    bytes_read: int = 0
    files: int = 0
    seconds: float | None = None
    mib_per_s: float | None = None
    limit_bytes: int | None = None
    stopped_at_deadline: bool = False
    error: str | None = None


class Peer(msgspec.Struct, frozen=True):
    """A worker that reached rank 0."""

    rank: int
    address: str = ""
    bytes: int = 0
    mib_per_s: float | None = None


class TcpPart(msgspec.Struct, frozen=True):
    """The plain TCP exchange with rank 0."""

    status: str
    role: str | None = None
    address: str | None = None
    port: int | None = None
    expected: int | None = None
    joined: int | None = None
    peers: tuple[Peer, ...] = ()
    connect_s: float | None = None
    tried_s: float | None = None
    bytes: int | None = None
    seconds: float | None = None
    mib_per_s: float | None = None
    error: str | None = None
    why: str | None = None


class CollectivePart(msgspec.Struct, frozen=True):
    """The one all-reduce."""

    status: str
    backend: str | None = None
    world: int | None = None
    init_s: float | None = None
    allreduce_ms: float | None = None
    correct: bool | None = None
    error: str | None = None
    after_s: float | None = None
    why: str | None = None


_SKIPPED_TCP = TcpPart(status="skipped")
_SKIPPED_COLLECTIVE = CollectivePart(status="skipped")


class ProbeReport(msgspec.Struct, frozen=True):
    """The probe's one line."""

    probe_schema: int
    runtime: str = "python"
    python: str | None = None
    rank: int = 0
    world: int = 1
    gpu: GpuPart = GpuPart(status="skipped")
    shm: ShmPart = ShmPart(status="skipped")
    data: DataPart = DataPart(status="skipped")
    tcp: TcpPart = _SKIPPED_TCP
    collective: CollectivePart = _SKIPPED_COLLECTIVE
    elapsed_s: float | None = None
    truncated: bool = False


class TurnedAway(msgspec.Struct, frozen=True):
    """The kubelet's own words on a pod it failed: `status.reason` and `status.message`."""

    reason: str
    message: str = ""


class TrialPod(msgspec.Struct, frozen=True):
    """Everything read back about one trial pod."""

    pod: str
    events: tuple[KubeletEvent, ...] = ()
    states: tuple[ContainerState, ...] = ()
    log: str = ""
    ended_by_timeout: bool = False
    """The trial's time ran out before the pod finished."""
    unplaced: str = ""
    """The message of the pod's `PodScheduled` condition where it is False when last read
    (kube-scheduler's words for `Unschedulable`, the API server's for `SchedulingGated`); ''
    once placed."""
    gates: tuple[str, ...] = ()
    """The pod's `spec.schedulingGates` when last read: what still holds it back."""
    unassigned: bool = False
    """The pod had no machine (`spec.nodeName` empty) when last read: nothing bound it, with
    or without the scheduler's words."""
    unread: str = ""
    """Why the pod itself could not be read back ('' when it was): it disappeared, or the read
    failed. Nothing it measured can then be read."""
    log_unread: str = ""
    """Why its log could not be read ('' when it was, or was not asked for): the probe's line
    may be there, unread."""
    turned_away: TurnedAway | None = None
    """The machine's kubelet failed the pod itself (rejected it at admission, or evicted it),
    in its words; None when it did not."""
    wait_seconds: int | None = None
    """How long its probe waited for its peers from its own start (the pod's
    TRUEGREEN_PROBE_INIT_TIMEOUT_S: rank 0's listen, a worker's tries); None when not told."""
    wait_until: int | None = None
    """Until when its probe went on waiting for its peers where that was later than its wait
    (the pod's TRUEGREEN_PROBE_WAIT_UNTIL, POSIX seconds on the API server's clock); None when
    not told."""
    run_seconds: int | None = None
    """How long its probe's run could take from its own start (the pod's
    TRUEGREEN_PROBE_TIMEOUT_S); None when not told."""
    end_at: int | None = None
    """The moment its probe's run ended by where that came sooner (the pod's
    TRUEGREEN_PROBE_END_AT, POSIX seconds on the API server's clock); None when not told."""
    gpus_at_least: bool = False
    """The probe was told the fewest GPUs the job's device claims may give (the pod's
    `truegreen.io/trial-gpus-at-least` annotation): every GPU of a kind on the machine, or one
    of alternatives of different sizes."""
    image: str = ""
    """The training image: the trainer's `image` as the pod states it (the probe's container,
    the pod's only regular one); '' when the pod was not read back. The pull Events that name
    it are the training image's."""
    dropped_class: str = ""
    """The job's PriorityClass the pod was made without, because it may preempt (the pod's
    `truegreen.io/trial-priority-class-dropped` annotation): it waited at the cluster's default
    priority, not the job's. '' when it kept the job's priority."""
    evicting_on: str = ""
    """The machine kube-scheduler nominated the pod for (`status.nominatedNodeName`) where the
    pod as stored may preempt (its `preemptionPolicy` is not `Never`: a webhook changed it, or
    a snapshot of a run before trial pods never preempted): the scheduler deletes lower-priority
    pods there to make room for it, then nominates it
    (pkg/scheduler/framework/preemption/preemption.go `Evaluator.Preempt`, `prepareCandidate`);
    '' otherwise."""


class Thresholds(msgspec.Struct, frozen=True):
    """The bounds past which a measurement is a warning."""

    pull_slow_seconds: float = PULL_SLOW_SECONDS
    data_slow_mib_per_s: float = DATA_SLOW_MIB_PER_S


DEFAULT_THRESHOLDS = Thresholds()


# Reading the sources.

_PULLED = LazyPattern(
    r'^Successfully pulled image "(?P<image>[^"]*)" in (?P<pull>\S+)'
    r"(?: \((?P<total>\S+) including waiting\)(?:\. Image size: (?P<size>\d+) bytes\.)?)?$"
)
"""The kubelet's Pulled message in each shape it has had (pkg/kubelet/images/image_manager.go
EnsureImageExists): since 1.30 `Successfully pulled image %q in %v (%v including waiting). Image
size: %v bytes.`; 1.28 and 1.29 the same without the size; before, `... in %v` alone (the pull,
waiting not counted)."""
_PRESENT = LazyPattern(r'^Container image "[^"]*" already present on machine')
_PULL_IMAGE = LazyPattern(
    r"^(?:Pulling image|Successfully pulled image|Container image|Failed to pull image"
    r'|Back-off pulling image) "(?P<image>[^"]*)"'
)
"""The image a pull Event names (image_manager.go: `Pulling image %q`, `Successfully pulled
image %q ...`, `Container image %q already present on machine`, `Failed to pull image %q: %v`,
`Back-off pulling image %q`)."""
KUEUE_GATE = "kueue.x-k8s.io/admission"
"""The scheduling gate Kueue's pod webhook puts on a pod it manages, removed once the pod's
Workload is admitted (kueue pkg/controller/jobs/pod/constants `SchedulingGateName`)."""
_CLIENTS_JOINED = LazyPattern(r"(\d+)/(\d+) clients joined")
_NOT_IN_IMAGE = LazyPattern(
    r'exec: "(?P<runc>[^"]*)": executable file not found in \$PATH'
    r"|executable file `(?P<crun>[^`]*)` not found in \$PATH"
)
"""The container runtime's words for a command the image does not have: runc's (its
`exec.LookPath` in libcontainer/standard_init_linux.go, Go os/exec ErrNotFound) and crun's
(src/libcrun/container.c)."""
_SPACE = "No space left on device"
_BUS = "Bus error"
_SIGBUS_EXIT = 128 + 7
"""A process killed by SIGBUS (7 on Linux): what a full /dev/shm does to a DataLoader."""
_DRIVER_OLD = (
    "CUDA driver version is insufficient for CUDA runtime version",
    "driver on your system is too old",
)
_NO_GPU = ("No CUDA GPUs are available", "Found no NVIDIA driver on your system")
_FIELD_PATH = LazyPattern(r"^spec\.(?:initContainers|containers)\{(?P<name>[^}]*)\}$")
"""A container's reference in an Event (pkg/kubelet/container/ref.go GenerateContainerRef)."""
_CRASH_LOOP = "CrashLoopBackOff"
_RESTARTING = "Back-off restarting failed container"
"""The kubelet's Event on a container it restarts after it ended with an error
(kuberuntime_manager.go doBackOff: `Back-off restarting failed container %s in pod %s`)."""
_NOT_STARTED_WAITING = (
    "InvalidImageName",
    "ErrImageNeverPull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "CrashLoopBackOff",
)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WORDS_LIMIT else text[: WORDS_LIMIT - 1] + "…"


def kubelet_events(objects: Sequence[KubeObject]) -> list[KubeletEvent]:
    """core/v1 Events as the trial reads them (involvedObject.name is the pod)."""
    found = []
    for event in objects:
        involved = o.mapping(event.get("involvedObject"))
        container = _FIELD_PATH.match(str(involved.get("fieldPath", "")))
        found.append(
            KubeletEvent(
                pod=str(involved.get("name", "")),
                reason=str(event.get("reason", "")),
                message=str(event.get("message", "")),
                type=str(event.get("type", "Normal")),
                init=str(involved.get("fieldPath", "")).startswith("spec.initContainers{"),
                container=container["name"] if container else "",
            )
        )
    return found


def container_states(pod: KubeObject) -> list[ContainerState]:
    """The pod's containers' states, from its status; its native sidecars named from its spec
    (a container status does not say), and those the trial made read-only from its
    TRIAL_READ_ONLY annotation."""
    found = []
    read_only = set(str(o.annotations_of(pod).get(TRIAL_READ_ONLY, "")).split(",")) - {""}
    sidecars = {
        str(o.mapping(c).get("name", ""))
        for c in o.sequence(o.pod_spec(pod).get("initContainers"))
        if o.mapping(c).get("restartPolicy") == "Always"
    }
    status_of = o.mapping(pod.get("status"))
    statuses = [
        *((o.mapping(s), True) for s in o.sequence(status_of.get("initContainerStatuses"))),
        *((o.mapping(s), False) for s in o.sequence(status_of.get("containerStatuses"))),
    ]
    for status, init in statuses:
        state = o.mapping(status.get("state"))
        waiting = o.mapping(state.get("waiting"))
        terminated = o.mapping(state.get("terminated"))
        code = terminated.get("exitCode")
        started = o.parse_time(o.mapping(state.get("running") or terminated).get("startedAt"))
        finished = o.parse_time(terminated.get("finishedAt"))
        name = str(status.get("name", ""))
        found.append(
            ContainerState(
                pod=o.name_of(pod),
                container=name,
                waiting=str(waiting.get("reason", "")),
                terminated=str(terminated.get("reason", "")) if terminated else "",
                exit_code=o.integer(code) if isinstance(code, int) else None,
                message=str(waiting.get("message") or terminated.get("message") or ""),
                init=init,
                started_at=started.timestamp() if started is not None else None,
                finished_at=finished.timestamp() if finished is not None else None,
                sidecar=init and name in sidecars,
                made_read_only=name in read_only,
            )
        )
    return found


def probe_report(log: str) -> ProbeReport | None:
    """The probe's line in a pod log: the last line that decodes as schema 1; None when there
    is none (the program never ran, or its output was lost)."""
    for line in reversed(log[-LOG_LIMIT:].splitlines()):
        text = line.strip()
        if not (text.startswith("{") and '"probe_schema"' in text):
            continue
        try:
            report = msgspec.json.decode(text, type=ProbeReport)
        except msgspec.DecodeError:  # a ValidationError is one
            continue
        if report.probe_schema == PROBE_SCHEMA:
            return report
    return None


# Judging.


def _pull_failed(event: KubeletEvent) -> bool:
    """Whether an Event says a pull failed: `Failed to pull image`, `Back-off pulling image`,
    or the kubelet's `Error: REASON` after each (kuberuntime_container.go startContainer's
    "Error: %v", REASON one of truegreen/pull_reasons.py's)."""
    return (
        event.reason in ("Failed", "BackOff")
        and event.message.startswith(("Failed to pull image", "Back-off pulling image"))
    ) or (event.reason == "Failed" and event.message.removeprefix("Error: ") in FAILED_PULL_REASONS)


def _training_image(pod: TrialPod, event: KubeletEvent) -> bool:
    """Whether a pull Event is the training image's: the image it names is the trainer's (an
    init container of the same image pulls it first, and that is the training image coming);
    one naming none, or of a pod not read back, by the container it is on (the module's
    docstring): an init container's or a native sidecar's is theirs."""
    named = _PULL_IMAGE.match(event.message)
    if named is not None and pod.image:
        return named["image"] == pod.image
    return not event.init


def _event_findings(
    pod: TrialPod, limits: Thresholds, report: ProbeReport | None
) -> list[TrialFinding]:
    found: list[TrialFinding] = []
    retried: dict[str, str] = {}
    pulling = pulled = came = False
    for event in pod.events:
        if event.pod != pod.pod:
            continue
        words = _clip(event.message)
        if _start_failure(event) and _cleared(pod, event, report):
            # The first words of each step, once: the kubelet repeats a pull's cause in its
            # back-off and "Error: ErrImagePull" Events.
            retried.setdefault(_step(pod, event), words)
            continue
        pull = event.reason in ("Pulling", "Pulled") or _pull_failed(event)
        if pull and not _training_image(pod, event):
            # Another container's image: its failure is `_their_pull_failed`'s.
            continue
        if event.reason == "Pulling":
            pulling = True
        elif event.reason == "Pulled":
            pulled = True
            # The first says how the image came; a later container of the same image finds
            # it already there, the same download.
            if not came:
                found.append(_pulled(pod.pod, event.message, limits))
            came = True
        elif _pull_failed(event):
            pulled = True
            found.append(TrialFinding(Outcome.IMAGE_PULL_FAILED, Level.FAIL, pod.pod, words))
        elif event.reason == "Failed" and _probe_not_in_image(event.message, event.init):
            continue
        elif _restarted(event) and event.container in _made_read_only(pod):
            continue  # _read_only_failures
        elif event.reason in ("Failed", "FailedMount", "FailedCreatePodSandBox", "BackOff"):
            found.append(TrialFinding(Outcome.NOT_STARTED, Level.FAIL, pod.pod, words))
    if pulling and not pulled and pod.ended_by_timeout:
        found.append(TrialFinding(Outcome.STILL_PULLING, Level.FAIL, pod.pod))
    found += [TrialFinding(Outcome.START_RETRIED, Level.OK, pod.pod, w) for w in retried.values()]
    return found


_BEFORE_ANY_CONTAINER = ("FailedMount", "FailedCreatePodSandBox")
"""The kubelet's Events for the steps before any container of the pod starts: the volumes'
mount (pkg/kubelet/kubelet.go SyncPod waits for them, WaitForAttachAndMount; the volume
manager's `MountVolume.… failed` words, pkg/volume/util/operationexecutor/
operation_generator.go) and the sandbox (pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod,
`Failed to create pod sandbox: %v`)."""


def _start_failure(event: KubeletEvent) -> bool:
    """Whether an Event says a step of the pod's start failed: a pull, the volumes' mount, the
    sandbox, a container's create or start ("Error: %v"). Not the kubelet's back-off after a
    container that started and ended with an error (`Back-off restarting failed container`):
    that is a crash after a start, never a step the start got past."""
    return _pull_failed(event) or event.reason in ("Failed", *_BEFORE_ANY_CONTAINER)


def _cleared(pod: TrialPod, event: KubeletEvent, report: ProbeReport | None) -> bool:
    """Whether the kubelet got past the step a failure Event is about, on a later try: it
    retries each in the pod's next sync (a pull with back-off, pkg/kubelet/images/
    image_manager.go EnsureImageExists; the mount, kubelet.go SyncPod; the sandbox,
    kuberuntime_manager.go SyncPod), and its Warning stays among the pod's Events. What it did
    at last is the measurement: the training program started (every step before it went
    through), the image the pull was for came, or a container started (the sandbox ran and
    the volumes were mounted). A failure it never got past stays one."""
    if _program_started(pod, report):
        return True
    if _pull_failed(event):
        key = _image_key(pod, event)
        return any(
            e.pod == pod.pod and e.reason == "Pulled" and _image_key(pod, e) == key
            for e in pod.events
        )
    return event.reason in _BEFORE_ANY_CONTAINER and _a_container_started(pod)


def _program_started(pod: TrialPod, report: ProbeReport | None) -> bool:
    """Whether the trial's program started: its probe line, the kubelet's start time on its
    container (`startedAt`), or the kubelet's `Started` Event on it (pkg/kubelet/kuberuntime/
    kuberuntime_container.go startContainer, `Started container %s`). The kubelet starts it
    only after the sandbox, the volumes, its image and the job's init containers
    (kuberuntime_manager.go computePodActions)."""
    return (
        report is not None
        or _started(pod) is not None
        or any(e.pod == pod.pod and e.reason == "Started" and not e.init for e in pod.events)
    )


def _a_container_started(pod: TrialPod) -> bool:
    """Whether any container of the pod started (one of the job's init containers included):
    the pod's sandbox ran and its volumes were mounted by then."""
    return any(s.started_at for s in pod.states) or any(
        e.pod == pod.pod and e.reason == "Started" for e in pod.events
    )


def _image_key(pod: TrialPod, event: KubeletEvent) -> str:
    """The image a pull Event is about: the one it names; one naming none (`Error:
    ErrImagePull`) is the training image's where it is on the trainer (`_training_image`),
    else its container's."""
    named = _PULL_IMAGE.match(event.message)
    if named is not None:
        return named["image"]
    if _training_image(pod, event) and pod.image:
        return pod.image
    return f"{'init' if event.init else 'container'} {event.container}"


def _step(pod: TrialPod, event: KubeletEvent) -> str:
    """Which step of the start an Event is about: a pull by its image, else its reason."""
    return f"pull {_image_key(pod, event)}" if _pull_failed(event) else event.reason


def _their_pull_failed(pod: TrialPod, report: ProbeReport | None) -> list[TrialFinding]:
    """Another container's image (an init container's, a native sidecar's) that could not be
    downloaded: the kubelet starts the main container only after them (kuberuntime_manager.go
    computePodActions), so the training program could not start. One cause, said once in the
    first words (those of the `Failed to pull image` Event, which carry the registry's); never
    as the training image's."""
    words = [
        e.message
        for e in pod.events
        if e.pod == pod.pod
        and _pull_failed(e)
        and not _training_image(pod, e)
        and not _cleared(pod, e, report)
    ]
    words += [
        f"{s.container}: {s.waiting}: {s.message}" if s.message else f"{s.container}: {s.waiting}"
        for s in pod.states
        if s.init and s.waiting in FAILED_PULL_REASONS
    ]
    return (
        [TrialFinding(Outcome.NOT_STARTED, Level.FAIL, pod.pod, _clip(words[0]))] if words else []
    )


def _pulled(pod: str, message: str, limits: Thresholds) -> TrialFinding:
    """A Pulled event: already present, or pulled in a time (waiting included) and a size."""
    if _PRESENT.match(message):
        return TrialFinding(Outcome.IMAGE_PRESENT, Level.OK, pod, _clip(message))
    match = _PULLED.match(message.strip())
    if match is None:
        return TrialFinding(Outcome.IMAGE_PULLED, Level.OK, pod, _clip(message))
    seconds = go_duration(match.group("total") or match.group("pull"))
    size = int(match.group("size")) if match.group("size") else None
    slow = seconds is not None and seconds > limits.pull_slow_seconds
    return TrialFinding(
        Outcome.IMAGE_PULL_SLOW if slow else Outcome.IMAGE_PULLED,
        Level.WARNING if slow else Level.OK,
        pod,
        _clip(message),
        value=seconds,
        limit=limits.pull_slow_seconds,
        size_bytes=size,
    )


def _probe_not_in_image(words: str, init: bool) -> bool:
    """Whether the runtime's words say the image lacks the program the trial pod's own command
    starts (pods.PROBE_SHELL): the probe could not run there, and the job's program, which the
    trial replaced, was not measured. The job's own init containers are never the probe."""
    found = _NOT_IN_IMAGE.search(words)
    return not init and found is not None and PROBE_SHELL in (found["runc"], found["crun"])


def _probe_could_not_run(pod: TrialPod) -> str:
    """The runtime's words where the probe's command could not start in the image ('' when it
    could): the container's state, else the kubelet's Failed event ("Error: %v")."""
    for state in pod.states:
        if _probe_not_in_image(state.message, state.init):
            return state.message
    for event in pod.events:
        if (
            event.pod == pod.pod
            and event.reason == "Failed"
            and _probe_not_in_image(event.message, event.init)
        ):
            return event.message.removeprefix("Error: ")
    return ""


def _said(pod: TrialPod, message: str, report: ProbeReport | None) -> bool:
    """Whether an Event of the pod already gave these words as a failure: the kubelet's "Error:
    %v" Event carries the message it leaves on the waiting container (kuberuntime_container.go
    startContainer returns the same message it records), one cause said twice. An Event of a
    step got past on a later try (`_cleared`) said no failure."""
    return bool(message.strip()) and any(
        e.pod == pod.pod and message in e.message and not _cleared(pod, e, report)
        for e in pod.events
    )


def _stopped_by_the_kubelet(state: ContainerState, states: Sequence[ContainerState]) -> bool:
    """Whether a native sidecar ended because the kubelet stopped it: every main container had
    ended, and it ended no earlier than the last of them. The kubelet stops the sidecars once
    no main container is left (kuberuntime_manager.go computePodActions: KillPod, none
    restarted) and only after every main container has exited
    (kuberuntime_termination_order.go newTerminationOrdering), with SIGTERM (exit code 143, or
    137 past the grace period), whatever the sidecar's own health. One that ended while a main
    container still ran crashed on its own."""
    mains = [s for s in states if not s.init]
    # A main container still running or waiting has no end yet.
    ends = [s.finished_at for s in mains if s.finished_at is not None]
    if not (state.sidecar and state.terminated and state.finished_at is not None):
        return False
    return bool(mains) and len(ends) == len(mains) and state.finished_at >= max(ends)


def _restarted(event: KubeletEvent) -> bool:
    return event.reason == "BackOff" and event.message.startswith(_RESTARTING)


def _ended_badly(state: ContainerState, states: Sequence[ContainerState]) -> bool:
    """A container that ended with an error (not stopped by the kubelet) or waits to be
    restarted after one."""
    if state.waiting == _CRASH_LOOP:
        return True
    return bool(state.exit_code) and not _stopped_by_the_kubelet(state, states)


def _made_read_only(pod: TrialPod) -> set[str]:
    return {s.container for s in pod.states if s.made_read_only}


def _read_only_failures(pod: TrialPod) -> list[TrialFinding]:
    """The job's containers the trial made read-only that ended with an error, or that the
    kubelet restarts after one: each may fail only because it could not write to a claim the
    job lets it write, so what it would do for the job was not measured (unknown, in its words,
    once per container)."""
    said: dict[str, str] = {}
    for state in pod.states:
        if state.made_read_only and _ended_badly(state, pod.states):
            how = f"{state.terminated} (exit code {state.exit_code})" if state.terminated else ""
            said.setdefault(state.container, f"{how or state.waiting} {state.message}")
    for event in pod.events:
        if event.pod == pod.pod and _restarted(event) and event.container in _made_read_only(pod):
            said.setdefault(event.container, event.message)
    return [
        TrialFinding(Outcome.READ_ONLY_FOR_TRIAL, Level.UNKNOWN, pod.pod, _clip(f"{name}: {words}"))
        for name, words in said.items()
    ]


def _state_findings(pod: TrialPod, report: ProbeReport | None) -> list[TrialFinding]:
    found: list[TrialFinding] = []
    for state in pod.states:
        if _probe_not_in_image(state.message, state.init) or _stopped_by_the_kubelet(
            state, pod.states
        ):
            continue
        if state.made_read_only and _ended_badly(state, pod.states):
            continue  # _read_only_failures
        words = _clip(f"{state.waiting}: {state.message}" if state.message else state.waiting)
        if state.waiting in FAILED_PULL_REASONS and state.init:
            continue  # another container's image: `_their_pull_failed`
        if state.waiting in FAILED_PULL_REASONS:
            found.append(TrialFinding(Outcome.IMAGE_PULL_FAILED, Level.FAIL, pod.pod, words))
        elif state.waiting in _NOT_STARTED_WAITING and not _said(pod, state.message, report):
            found.append(TrialFinding(Outcome.NOT_STARTED, Level.FAIL, pod.pod, words))
        elif state.exit_code == _SIGBUS_EXIT:
            found.append(
                TrialFinding(Outcome.BUS_ERROR, Level.FAIL, pod.pod, _BUS, value=_SIGBUS_EXIT)
            )
        elif state.exit_code and report is None:
            words = _clip(f"{state.terminated} (exit code {state.exit_code}) {state.message}")
            last = _last_line(pod.log)
            if last and not state.init and last not in state.message:
                # The pod's log is the probe's container's (its only regular one), and the
                # kubelet keeps a message only where the image writes one
                # (terminationMessagePath) or the policy takes the log's tail
                # (FallbackToLogsOnError): the last line it printed names why it ended.
                words = _clip(f"{words.rstrip()}; its last line: {last}")
            found.append(
                TrialFinding(
                    Outcome.CONTAINER_ENDED, Level.FAIL, pod.pod, words, value=state.exit_code
                )
            )
    return found


def log_findings(pod: str, log: str) -> list[TrialFinding]:
    """The kernel's and the C library's words in a log: a write that ran out of space, a
    process killed by a bus error (both what a /dev/shm too small does to a DataLoader)."""
    found: list[TrialFinding] = []
    for outcome, needle in ((Outcome.SPACE_RAN_OUT, _SPACE), (Outcome.BUS_ERROR, _BUS)):
        for line in log[-LOG_LIMIT:].splitlines():
            if needle in line:
                found.append(TrialFinding(outcome, Level.FAIL, pod, _clip(line)))
                break
    return found


def _gpu_findings(pod: str, gpu: GpuPart, at_least: bool = False) -> list[TrialFinding]:
    """What the GPU part measured against the GPUs asked for (`at_least`: the fewest the job's
    device claims may give)."""
    found = _gpus_against_asked(pod, gpu)
    return [replace(f, at_least=True) for f in found] if at_least else found


def _gpus_against_asked(pod: str, gpu: GpuPart) -> list[TrialFinding]:
    if gpu.status == "skipped" or gpu.requested == 0:
        return []
    driver = gpu.driver or Driver()
    if gpu.status == "timed-out":
        words = "the GPU library did not answer before the probe's deadline"
        return [TrialFinding(Outcome.GPU_LIBRARY_FAILED, Level.UNKNOWN, pod, words)]
    library = next((lib for lib in gpu.libraries if lib.name == gpu.library), None)
    if library is None:
        seen = float(len(driver.nvidia_smi_gpus)) if driver.nvidia_smi else None
        words = f"driver {driver.version}" if driver.version else "no NVIDIA driver seen"
        words = _clip(f"{gpu.why}; {words}") if gpu.why else words
        return [
            TrialFinding(
                Outcome.NO_GPU_LIBRARY, Level.UNKNOWN, pod, words, seen, float(gpu.requested)
            )
        ]
    if library.status == "no-cuda-build":
        words = f"{library.name} {library.version} was built without CUDA or ROCm"
        return [TrialFinding(Outcome.GPU_LIBRARY_FAILED, Level.FAIL, pod, words)]
    if library.status != "ok":
        error = library.error or library.status
        outcome = Outcome.GPU_LIBRARY_FAILED
        if any(text in error for text in _DRIVER_OLD):
            outcome = Outcome.DRIVER_TOO_OLD
        elif any(text in error for text in _NO_GPU):
            outcome = Outcome.NO_GPU
        return [TrialFinding(outcome, Level.FAIL, pod, _clip(error), 0.0, float(gpu.requested))]
    count = library.device_count or 0
    names = ", ".join(sorted({d.name for d in library.devices}))
    if count == 0:
        outcome, level = Outcome.NO_GPU, Level.FAIL
    elif count < gpu.requested:
        outcome, level = Outcome.FEWER_GPUS, Level.FAIL
    else:
        outcome, level = Outcome.GPUS_SEEN, Level.OK
    return [TrialFinding(outcome, level, pod, names, float(count), float(gpu.requested))]


def _shm_findings(pod: str, shm: ShmPart) -> list[TrialFinding]:
    if shm.status == "absent":
        return [TrialFinding(Outcome.SHM_MISSING, Level.WARNING, pod, shm.path)]
    if shm.status != "ok" or shm.size_bytes is None:
        return []
    size = float(shm.size_bytes)
    if shm.need_bytes and shm.size_bytes < shm.need_bytes:
        return [
            TrialFinding(
                Outcome.SHM_TOO_SMALL, Level.FAIL, pod, shm.path, size, float(shm.need_bytes)
            )
        ]
    if not shm.need_bytes and shm.size_bytes <= SHM_DEFAULT_BYTES:
        return [
            TrialFinding(
                Outcome.SHM_DEFAULT_SIZE,
                Level.WARNING,
                pod,
                shm.path,
                size,
                float(SHM_DEFAULT_BYTES),
            )
        ]
    return [TrialFinding(Outcome.SHM_ENOUGH, Level.OK, pod, shm.path, size, float(shm.need_bytes))]


def _data_findings(pod: str, data: DataPart, limits: Thresholds) -> list[TrialFinding]:
    slow = limits.data_slow_mib_per_s
    if data.status == "absent":
        return [TrialFinding(Outcome.DATA_MISSING, Level.FAIL, pod, data.path)]
    if data.status == "unreadable":
        words = _clip(data.error or data.path)
        return [TrialFinding(Outcome.DATA_UNREADABLE, Level.FAIL, pod, words)]
    if data.status == "empty":
        return [TrialFinding(Outcome.DATA_EMPTY, Level.WARNING, pod, data.path)]
    if data.status == "timed-out":
        return [TrialFinding(Outcome.DATA_SLOW, Level.WARNING, pod, data.path, None, slow)]
    if data.status != "ok":
        return []
    rate = data.mib_per_s
    if data.stopped_at_deadline and (rate is None or rate < slow):
        # Fewer bytes than asked when the probe's deadline came, at a rate below the bound
        # (the bytes read over the whole time it read): the read did not finish in the time
        # the trial had. One cut at a rate above it was fast, its time short (a probe that
        # started near the trial's end): that rate is what was measured.
        return [
            TrialFinding(
                Outcome.DATA_SLOW, Level.WARNING, pod, data.path, rate, slow, data.bytes_read
            )
        ]
    if rate is not None and rate < slow:
        return [TrialFinding(Outcome.DATA_SLOW, Level.WARNING, pod, data.path, rate, slow)]
    return [TrialFinding(Outcome.DATA_READ, Level.OK, pod, data.path, rate, slow)]


def _tcp_findings(pod: str, tcp: TcpPart) -> list[TrialFinding]:
    if tcp.status == "unavailable":
        words = tcp.why or "the probe could not open a connection"
        return [TrialFinding(Outcome.NOT_MEASURED, Level.UNKNOWN, pod, words)]
    if tcp.status in ("unreachable", "error") and tcp.role != "rank0":
        # An IPv6 address in brackets, as a URL writes it: its last group is not the port.
        host = f"[{tcp.address}]" if tcp.address and ":" in tcp.address else tcp.address
        where = f"{host}:{tcp.port}"
        words = _clip(f"{where}: {tcp.error}" if tcp.error else where)
        return [TrialFinding(Outcome.RANK0_UNREACHABLE, Level.FAIL, pod, words)]
    if tcp.status in ("incomplete", "error"):
        joined = float(tcp.joined or 0)
        expected = float(tcp.expected) if tcp.expected is not None else None
        return [
            TrialFinding(
                Outcome.WORKERS_MISSING, Level.FAIL, pod, _clip(tcp.error or ""), joined, expected
            )
        ]
    if tcp.status == "timed-out":
        return [TrialFinding(Outcome.RANK0_UNREACHABLE, Level.FAIL, pod, "no answer in time")]
    if tcp.status != "ok":
        return []
    rates = [p.mib_per_s for p in tcp.peers if p.mib_per_s is not None]
    rate = tcp.mib_per_s if tcp.role != "rank0" else (min(rates) if rates else None)
    return [TrialFinding(Outcome.WORKERS_REACHED, Level.OK, pod, value=rate)]


def _collective_findings(pod: str, collective: CollectivePart) -> list[TrialFinding]:
    backend = collective.backend or ""
    if collective.status == "timed-out":
        return [TrialFinding(Outcome.COLLECTIVE_TIMED_OUT, Level.FAIL, pod, backend)]
    if collective.status == "error":
        error = collective.error or ""
        joined = _CLIENTS_JOINED.search(error)
        if "Duplicate GPU detected" in error:
            return [TrialFinding(Outcome.DUPLICATE_GPU, Level.FAIL, pod, _last_error(error))]
        if joined:
            return [
                TrialFinding(
                    Outcome.COLLECTIVE_TIMED_OUT,
                    Level.FAIL,
                    pod,
                    _clip(error),
                    float(joined.group(1)),
                    float(joined.group(2)),
                )
            ]
        return [TrialFinding(Outcome.COLLECTIVE_FAILED, Level.FAIL, pod, _clip(error))]
    if collective.status != "ok":
        return []
    if collective.correct is False:
        words = f"{backend}: the sum came back wrong"
        return [TrialFinding(Outcome.COLLECTIVE_FAILED, Level.FAIL, pod, words)]
    return [TrialFinding(Outcome.COLLECTIVE_OK, Level.OK, pod, backend, collective.allreduce_ms)]


def _last_error(error: str) -> str:
    """NCCL's message ends with the line that names the cause (`Last error:` then it)."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    return _clip(lines[-1]) if lines else ""


def report_findings(
    pod: str, report: ProbeReport, limits: Thresholds, *, gpus_at_least: bool = False
) -> list[TrialFinding]:
    """What one probe line measured (`gpus_at_least`: TrialPod.gpus_at_least)."""
    if report.truncated:
        words = "the probe's report was too long and was cut"
        return [TrialFinding(Outcome.NO_PROBE_LINE, Level.UNKNOWN, pod, words)]
    return [
        *_gpu_findings(pod, report.gpu, gpus_at_least),
        *_shm_findings(pod, report.shm),
        *_data_findings(pod, report.data, limits),
        *_tcp_findings(pod, report.tcp),
        *_collective_findings(pod, report.collective),
    ]


def _placement(pod: TrialPod) -> TrialFinding | None:
    """A pod never placed on a machine within the trial's time: held back by a scheduling gate
    (Kueue's, waiting for its queue to admit it, or another's), or refused by the scheduler
    (its words on the pod's condition, else its FailedScheduling Event). That is the
    measurement of the gate that held it, never of the program, which did not run."""
    if not (pod.ended_by_timeout and (pod.gates or pod.unplaced or pod.unassigned)):
        return None
    if pod.gates:
        outcome = Outcome.WAITED_FOR_QUEUE if KUEUE_GATE in pod.gates else Outcome.HELD_BACK
        return TrialFinding(outcome, Level.UNKNOWN, pod.pod, _clip(", ".join(pod.gates)))
    # The condition holds the scheduler's latest words; its Events are the fallback.
    refusals = [
        e.message for e in pod.events if e.pod == pod.pod and e.reason == "FailedScheduling"
    ]
    words = _clip(pod.unplaced or (refusals[-1] if refusals else NOT_PLACED_IN_TIME))
    if pod.evicting_on:
        # Never "try again" alone: someone's running programs were stopped for this pod.
        words += f"; {EVICTED_FOR_IT.format(machine=pod.evicting_on)}"
    if pod.dropped_class:
        words += f"; {WITHOUT_CLASS.format(name=pod.dropped_class)}"
    return TrialFinding(Outcome.NOT_PLACED, Level.UNKNOWN, pod.pod, words)


EVICTED_FOR_IT = (
    "the scheduler was stopping lower-priority programs on {machine} to make room for it "
    "(status.nominatedNodeName)"
)
"""A not-placed pod that may preempt and was nominated for a machine (TrialPod.evicting_on)."""
WITHOUT_CLASS = (
    "it waited without the job's priority class '{name}', which may push other programs off "
    "their machines (the trial never does): a machine the job would free that way was not "
    "free for it"
)
"""A not-placed pod made without the job's preempting class (TrialPod.dropped_class): its
placement was measured at the cluster's default priority, not the job's."""


def _turned_away(pod: str, said: TurnedAway) -> TrialFinding:
    """A pod its machine's kubelet failed itself: a measured refusal by the machine, in the
    kubelet's words (kubelet.go `rejectPod`: "Pod was rejected: ..."; an eviction's message)."""
    words = f"the machine's kubelet failed the trial pod ({said.reason})"
    words += f": {said.message}" if said.message.strip() else ""
    return TrialFinding(Outcome.NOT_STARTED, Level.FAIL, pod, _clip(words))


NOT_PLACED_IN_TIME = "the trial pod was not placed on a machine in time"
"""A pod nothing bound to a machine, where no scheduler left words (none took it)."""
_TIME_RAN_OUT = "when the trial's time ran out"


def _last_line(log: str) -> str:
    """The last line a log holds ('' when it holds none)."""
    return log.strip().splitlines()[-1] if log.strip() else ""


def _not_reported(pod: TrialPod) -> str:
    """How far a pod that left no probe line got: what was not measured, and why."""
    last = _last_line(pod.log)
    waiting = next((s.waiting for s in pod.states if s.waiting), "")
    running = any(not (s.waiting or s.terminated) for s in pod.states)
    if pod.unread:
        return pod.unread
    could_not_run = _probe_could_not_run(pod)
    if could_not_run:
        return f"the probe could not run in this image: {could_not_run}"
    if pod.log_unread:
        return pod.log_unread
    if running and pod.ended_by_timeout:
        said = f"; its last line: {last}" if last else ""
        return f"the probe had not reported {_TIME_RAN_OUT}{said}"
    if last:
        return last
    if pod.states and not (waiting or running):
        return "the program ended and printed nothing"
    reason = f" ({waiting})" if waiting else ""
    if pod.ended_by_timeout:
        return f"the trial pod was still being created{reason} {_TIME_RAN_OUT}"
    if waiting:
        return f"the trial pod ended before its program started{reason}"
    return "the trial pod ended without a report"


def _one_pull(found: list[TrialFinding]) -> list[TrialFinding]:
    """The pod's findings with its failed pull said once, in the first words (those of the
    `Failed to pull image` Event, which carry the registry's): the kubelet repeats that one
    cause in its back-off Event, its "Error: ErrImagePull" Events and the container's waiting
    reason."""
    pulls = [f for f in found if f.outcome is Outcome.IMAGE_PULL_FAILED]
    return [f for f in found if f.outcome is not Outcome.IMAGE_PULL_FAILED or f is pulls[0]]


def pod_findings(pod: TrialPod, limits: Thresholds = DEFAULT_THRESHOLDS) -> list[TrialFinding]:
    """Every finding of one trial pod: whether it was placed, how its image came, whether its
    container started, and what the probe measured inside it. A pod that left no probe line
    and no failure is unknown, in words that say how far it got: green is measured green."""
    placement = _placement(pod)
    if placement is not None:
        return [placement]
    report = probe_report(pod.log)
    found = _one_pull(
        [
            *_event_findings(pod, limits, report),
            *_state_findings(pod, report),
            *_read_only_failures(pod),
        ]
    )
    if not any(f.outcome is Outcome.IMAGE_PULL_FAILED for f in found):
        # An init container of the training image that failed to pull it is that failure.
        found += _their_pull_failed(pod, report)
    if report is not None:
        found += report_findings(pod.pod, report, limits, gpus_at_least=pod.gpus_at_least)
    else:
        found += log_findings(pod.pod, pod.log)
        if pod.turned_away is not None and not any(f.level is Level.FAIL for f in found):
            found.append(_turned_away(pod.pod, pod.turned_away))
        # A container the trial made read-only that failed is why nothing was measured.
        if not any(
            f.level is Level.FAIL or f.outcome is Outcome.READ_ONLY_FOR_TRIAL for f in found
        ):
            words = _clip(_not_reported(pod))
            found.append(TrialFinding(Outcome.NO_PROBE_LINE, Level.UNKNOWN, pod.pod, words))
    return found


PEER_OUTCOMES = frozenset(
    {Outcome.WORKERS_MISSING, Outcome.RANK0_UNREACHABLE, Outcome.COLLECTIVE_TIMED_OUT}
)
"""What a worker measures when a peer does not come: a measurement of the network only where
that peer's program was there to reach while it waited."""


def _started(pod: TrialPod) -> float | None:
    """When the pod's probe started (its container's `startedAt`); None when it never ran (a
    container that failed to start shows the zero time, 1970-01-01T00:00:00Z)."""
    return next((s.started_at for s in pod.states if not s.init and s.started_at), None)


def _waited_together(one: TrialPod, other: TrialPod) -> bool:
    """Whether the two probes' waits for each other overlapped, by the kubelet's start times:
    each started before the other gave up (its start plus its wait). A peer still running is
    started; one never started, or one that started only after the other had stopped waiting,
    was not there to reach, and the wait measured no network."""
    first, second = _started(one), _started(other)
    first_end, second_end = _wait_end(one, first), _wait_end(other, second)
    if first is None or second is None or first_end is None or second_end is None:
        return False
    return second < first_end and first < second_end


def _wait_end(pod: TrialPod, start: float | None) -> float | None:
    """When the pod's probe stopped waiting for its peers: its start plus its wait, or the
    moment it was told to wait until where that is later (probe.py `wait_seconds`), but no
    later than its run's end (`_run_end`), which cuts every wait."""
    if start is None or pod.wait_seconds is None:
        return None
    return min(max(start + pod.wait_seconds, float(pod.wait_until or 0)), _run_end(pod, start))


def _run_end(pod: TrialPod, start: float) -> float:
    """When the pod's probe had to end its run: its time from its start, or the moment it was
    told where that came sooner, at least a second after its start (probe.py `run_seconds`);
    never, where it was told neither. From the kubelet's start of its container, a little
    before the program's own: an end no later than the probe's."""
    ends = [start + pod.run_seconds] if pod.run_seconds is not None else []
    if pod.end_at is not None:
        ends.append(max(start + 1.0, float(pod.end_at)))
    return min(ends, default=math.inf)


def _waits_measured(pod: TrialPod, pods: Sequence[TrialPod], world: int) -> bool:
    """Whether the pod's wait for its peers measured the network: every worker the probes
    were told of was created, and each waited while this one did."""
    peers = [p for p in pods if p is not pod]
    return len(pods) >= world and all(_waited_together(pod, p) for p in peers)


def _apart(pods: Sequence[TrialPod]) -> str:
    """When every pod's program started but their waits for each other missed: the start
    times and waits, in words; '' otherwise (a peer that never started says why itself)."""
    starts = [_started(pod) for pod in pods]
    if None in starts:
        return ""
    return "; ".join(
        f"{pod.pod} started at {_clock(start)} and waited {_waited(pod, start)}"
        for pod, start in zip(pods, starts, strict=True)
    )


def _waited(pod: TrialPod, start: float | None) -> str:
    end = _wait_end(pod, start)
    if end is not None and start is not None and end != start + (pod.wait_seconds or 0):
        return f"until {_clock(end)}"
    return f"{pod.wait_seconds} s"


def _clock(posix: float | None) -> str:
    return datetime.fromtimestamp(posix or 0.0, UTC).strftime("%H:%M:%S")


def run_findings(
    pods: Sequence[TrialPod], limits: Thresholds = DEFAULT_THRESHOLDS
) -> list[tuple[TrialPod, list[TrialFinding]]]:
    """Each trial pod's findings; a wait for a peer (workers missing, rank 0 unreachable, the
    all-reduce timed out) stands only where the peers' programs were there to reach while it
    waited, by the kubelet's start times; otherwise it is left out, and the peer's own finding
    (never placed, still downloading, ended early) says why, or, where every program ran but
    not at the same time, `not-together` does: the network was not measured."""
    reports = [probe_report(pod.log) for pod in pods]
    world = max((r.world for r in reports if r is not None), default=1)
    found: list[tuple[TrialPod, list[TrialFinding]]] = []
    apart = ""
    for pod in pods:
        findings = pod_findings(pod, limits)
        kept = [f for f in findings if f.outcome not in PEER_OUTCOMES]
        if len(kept) < len(findings) and not _waits_measured(pod, pods, world):
            findings = kept
            apart = apart or (_apart(pods) if len(pods) >= world else "")
        found.append((pod, findings))
    if apart:
        found[0][1].append(TrialFinding(Outcome.NOT_TOGETHER, Level.UNKNOWN, pods[0].pod, apart))
    return found


class TrialRun(msgspec.Struct, frozen=True):
    """What one trial measured, or the answer that stopped it."""

    pods: tuple[TrialPod, ...] = ()
    refused: CantRead | None = None
    """A create the server did not accept, or did not answer: its words, for the gate's own
    check."""
    refused_pod: str = ""
    """The pod that create was for: a refusal that names it is the pod's (admission), one that
    names none the login's (authorization)."""
    removed_leftovers: tuple[str, ...] = ()
    not_deleted: tuple[tuple[str, CantRead], ...] = ()
    """Trial pods a delete did not remove, or whose create had no answer and that could not be
    confirmed gone (the operator is told their names)."""
    run: str = ""
    """This run's id, its pods' `truegreen.io/trial-run` label: what removes them all ('' in a
    snapshot taken before it was kept)."""
