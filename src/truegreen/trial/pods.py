"""The trial pods: the training job's pod as the API server would store it, made to run the probe
for a few seconds instead of the training program.

From the job's pod (its metadata and spec, as doctor's admission trial sends it), each trial pod
keeps what decides where and how the pod starts: the image, requests and limits (GPUs included),
node selector, affinity, tolerations, runtime class, priority class (unless it may preempt:
below), service account, pull secrets, init containers, the env (references kept, so a missing
setting shows as the kubelet shows it) and the volumes. It changes only what a trial needs:
- named `truegreen-trial-<job>-<run>-<rank>`, labelled `truegreen.io/trial: "true"` and
  `truegreen.io/trial-run: <run>` (and with the job's queue labels, `TrialSettings`), owned
  by nothing (no ownerReferences) and without the labels a controller selects pods by (those
  controllers stamp, and those the job's selector names): the job's controller must not adopt
  or count it;
- in none of the job's gangs (truegreen.gang_membership: the labels, annotations and
  `spec.workloadRef` that tie a pod to a gang scheduler's or a queue's group): a gang
  scheduler would hold it for siblings that never come, or count it as one of the job's own
  (scheduler-plugins pkg/coscheduling/core/core.go PreFilter, Permit). It keeps the job's
  `schedulerName`, which places it as a single pod;
- `restartPolicy: Never` and `activeDeadlineSeconds`: the kubelet ends it by itself
  (pkg/kubelet/active_deadline.go) if truegreen cannot;
- `preemptionPolicy: Never`, so the scheduler never deletes another's running pod to place it
  (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
  `PodEligibleToPreemptOthers`): a probe deleted seconds later must not cost anyone their run.
  The Priority admission plugin refuses a pod whose policy differs from its class's
  (plugin/pkg/admission/priority/admission.go `admitPod`), so the job's class is dropped where
  it may preempt (`TrialSettings.preempting_class`, named in TRIAL_CLASS_DROPPED): the pod then
  waits at the cluster's default priority. Where the default class itself preempts, the server
  refuses the pod: the trial never runs rather than preempts;
- the trainer container (the one asking for GPUs, else the first) runs the probe
  (`sh -c` starting `python3 -c <probe.py>`, or `sh -c <probe.sh>` in an image without a
  Python 3.8 or later: PROBE_PYTHON), with its settings as env; its probes
  (liveness, readiness, startup) and lifecycle hooks are dropped (they would judge the training
  program); the other regular containers are dropped (a sidecar that never ends would hold the
  GPUs until the deadline);
- every mount of a persistentVolumeClaim volume, the probe's and those of the job's init
  containers and native sidecars, is read-only (`volumeMounts[].readOnly`): no program of the
  trial pod writes to the job's data. The volumes stay as the job states them, so the kubelet
  attaches and prepares them as for the job's pods; a pod-level
  `persistentVolumeClaim.readOnly` would force every mount read-only as well
  (pkg/apis/core/types.go PersistentVolumeClaimVolumeSource.ReadOnly), and also refuse the
  kubelet the subPath folders and fsGroup it prepares for the job's pods
  (pkg/kubelet/kubelet_pods.go makeMounts; pkg/volume/csi/csi_mounter.go supportsFSGroup).
  The job's containers the job lets write to a claim are named in TRIAL_READ_ONLY: one that
  fails may fail only for that;
- for a distributed job, workers are kept off rank 0's machine (a required podAntiAffinity on
  `kubernetes.io/hostname`) where the job's pods would use more than one machine, and given rank
  0's address; rank 0 is given loopback, never the job's MASTER_ADDR; a job pinned to one
  machine (`spec.nodeName`) is tried on it, bypassing the scheduler as its pods do (the kubelet
  admits them: pkg/kubelet/lifecycle/predicate.go), its workers together there.
"""

import secrets
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.gang_membership import GANG_ANNOTATIONS, GANG_FIELDS, GANG_LABELS
from truegreen.gpu_resources import ClaimedGpus, is_gpu_resource
from truegreen.quantity import QuantityError, parse_quantity

TRIAL_LABEL = "truegreen.io/trial"
"""On every trial pod, value `true`: how the next run finds an interrupted one's pods."""
GPUS_AT_LEAST = "truegreen.io/trial-gpus-at-least"
"""On a trial pod whose probe was told the fewest GPUs the job's device claims may give, value
`true`: how many they give is not fixed ahead (truegreen.gpu_resources.ClaimedGpus.exact)."""
TRIAL_READ_ONLY = "truegreen.io/trial-read-only"
"""On a trial pod, the job's own containers (init containers, native sidecars) that mount a
claim the job lets them write and the trial mounts read-only, comma-separated: one that fails
may fail only because of that (truegreen.trial.readback)."""
TRIAL_CLASS_DROPPED = "truegreen.io/trial-priority-class-dropped"
"""On a trial pod made without the job's PriorityClass because that class may preempt, its
name: the pod was placed at the cluster's default priority, not the job's
(truegreen.trial.readback says so where it was not placed)."""
NEVER_PREEMPT = "Never"
"""Every trial pod's `preemptionPolicy`: it never takes a running pod's room."""
TRIAL_RUN_LABEL = "truegreen.io/trial-run"
"""This run's id: the workers' anti-affinity names only this run's pods."""
PROBE_PREFIX = "TRUEGREEN_PROBE_"
WAIT_VARIABLE = PROBE_PREFIX + "INIT_TIMEOUT_S"
"""How long a probe waits for its peers, from its own start (probe.py `init_timeout_s`)."""
WAIT_UNTIL_VARIABLE = PROBE_PREFIX + "WAIT_UNTIL"
"""A moment (POSIX seconds) until which a worker's probe waits for rank 0 where that is later
than its own wait (probe.py `wait_seconds`)."""
RUN_VARIABLE = PROBE_PREFIX + "TIMEOUT_S"
"""How long the probe's whole run may take, from its own start (probe.py `run_seconds`)."""
END_AT_VARIABLE = PROBE_PREFIX + "END_AT"
"""A moment (POSIX seconds) by which the probe's run ends where that is sooner than its own
time (probe.py `run_seconds`)."""
HOSTNAME = "kubernetes.io/hostname"
LOOPBACK = "127.0.0.1"
"""Rank 0's rendezvous address for itself: it hosts the store, and PyTorch's rank 0 connects
to its own init method's host (torch/distributed/rendezvous.py `_tcp_rendezvous_handler`).
Never the job's MASTER_ADDR, which names the job's own pod 0."""
_NAME_LIMIT = 63
"""A pod's name is also its hostname: one DNS label (RFC 1123)."""
_DROPPED = ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "command", "args")
CONTROLLER_LABELS = frozenset(
    {
        # The Job controller's (pkg/apis/batch/types.go: ControllerUidLabel, JobNameLabel and
        # their legacy names; the completion index under the batch.kubernetes.io prefix).
        "controller-uid",
        "job-name",
        # ReplicaSets' (DefaultDeploymentUniqueLabelKey), StatefulSets' and DaemonSets'
        # (ControllerRevisionHashLabelKey, StatefulSetPodNameLabel, PodIndexLabel).
        "pod-template-hash",
        "controller-revision-hash",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
    }
)
"""Label keys controllers stamp on the pods they create and select them by."""
CONTROLLER_PREFIXES = (
    "batch.kubernetes.io/",
    "jobset.sigs.k8s.io/",
    "training.kubeflow.org/",
    "trainer.kubeflow.org/",
    "ray.io/",
    "leaderworkerset.sigs.k8s.io/",
)
"""The domains of the labels the Job controller, JobSet, the training operator and Kubeflow
Trainer, KubeRay and LeaderWorkerSet stamp on their pods and list, count or adopt them by."""


class TrialSettings(Struct, frozen=True):
    """What the probe is told and how long the pod may live."""

    run: str
    """This trial run's id: in every pod's name and in the label."""
    deadline_seconds: int
    rendezvous_port: int = 29500
    shm_need_mib: int = 0
    read_mib: int = 64
    init_timeout_seconds: int = 10
    """How long a worker tries to reach rank 0, from its own start: short, so that its report
    is read back within the trial's time even where its image took long to download. A worker
    that starts first is also told to go on until near the trial's end (WAIT_UNTIL_VARIABLE,
    truegreen.trial.run), so a rank 0 whose image came later is still reached."""
    listen_seconds: int = 10
    """How long rank 0 listens for the workers, from its own start: a worker starts only once
    its machine has the image, which may take far longer there than on rank 0's (the job's own
    workers wait minutes for each other: PyTorch's default_pg_timeout, 30 min)."""
    selector_keys: tuple[str, ...] = ()
    """The label keys the job's controller selects its pods by (a Job's `spec.selector`):
    never on a trial pod, which that controller would adopt."""
    claimed_gpus: tuple[ClaimedGpus, ...] = ()
    """The GPUs the job's pod asks for through its device claims (dynamic resource allocation),
    by claim and request: a container that names them gets them, as it gets the GPUs of its
    resources."""
    preempting_class: str = ""
    """The job's PriorityClass where its pods may preempt, or where the classes could not be
    read to tell: never on a trial pod, which never preempts (a pod stating
    `preemptionPolicy: Never` under a preempting class is refused)."""
    queue_labels: tuple[tuple[str, str], ...] = ()
    """Labels the job carries on itself rather than on its pod template that decide which queue
    admits its work (Kueue's `kueue.x-k8s.io/queue-name`): a trial pod, owned by nothing, is
    queued by its own labels, so it is given the job's (the template's own win)."""


PROBE_SHELL = "sh"
"""The program the trial pod's command starts, found in nearly every image: it runs probe.py
under the image's `python3` where that is PROBE_PYTHON or later, else probe.sh."""
PROBE_PYTHON = (3, 8)
"""The oldest Python probe.py runs under (tests/unit/test_trial_probe.py runs it under 3.8);
3.6, still the `python3` of CentOS 7, Ubuntu 18.04 and older NGC images, cannot even compile
it (`from __future__ import annotations`)."""
_OLDEST = ".".join(map(str, PROBE_PYTHON))
_LAUNCHER = (
    "if command -v python3 >/dev/null 2>&1; then\n"
    '  version=$(python3 -c \'import sys; print("%d.%d.%d" % tuple(sys.version_info[:3]));'
    f' sys.exit(sys.version_info < {PROBE_PYTHON})\' 2>/dev/null) && exec python3 -c "$1"\n'
    '  why="the image\'s python3 did not start"\n'
    f'  [ -n "$version" ] && why="the image\'s python3 is $version, older than {_OLDEST}"\n'
    "fi\n"
    'exec sh -c "$2" truegreen-probe "${why:-no Python in the image}"\n'
)
"""probe.py's text is `$1`, probe.sh's `$2`. A `python3` too old for probe.py, or one that does
not start, runs probe.sh as an image without Python does: what failed there is truegreen's
probe, never the job's program, which the trial replaced and would run under that Python.
probe.sh is told why (its `$1`), and says so where it cannot measure."""


def probe_source(name: str) -> str:
    """A probe program's text (`probe.py`, `probe.sh`) as shipped in the package."""
    return resources.files("truegreen.trial").joinpath(name).read_text(encoding="utf-8")


def probe_command() -> list[str]:
    """The trainer's command in a trial pod: `sh -c` starting `python3 -c <probe.py>` where
    the image's python3 is PROBE_PYTHON or later, else `sh -c <probe.sh>`, the fallback for
    images without such a Python."""
    return [
        PROBE_SHELL,
        "-c",
        _LAUNCHER,
        "truegreen-probe",
        probe_source("probe.py"),
        probe_source("probe.sh"),
    ]


def new_run_id() -> str:
    """A trial run's id: 32 random bits as 8 lower-case hex digits, so that two runs started
    in the same second (two operators, CI and a person) never share pod names or the label
    their workers' anti-affinity names, and each pod's name stays one DNS label."""
    return secrets.token_hex(4)


def trial_name(job: str, run: str, rank: int) -> str:
    """`truegreen-trial-<job>-<run>-<rank>`, the job's name shortened to fit one DNS label."""
    tail = f"-{run}-{rank}"
    head = f"truegreen-trial-{job}"[: _NAME_LIMIT - len(tail)].rstrip("-.")
    return head + tail


def gpu_count(container: Mapping[str, Any], claimed: Sequence[ClaimedGpus] = ()) -> int:
    """The GPUs a container asks for, as doctor counts them (truegreen.gpu_resources: whole
    GPUs, MIG slices, AMD's and Intel's): the sum of its GPU limits, else of its requests (an
    extended resource's request equals its limit, when both are given), plus those its device
    claims give (`claimed`: the fewest, where the number is not fixed ahead)."""
    resources_ = o.mapping(container.get("resources"))
    devices = sum(c.at_least for c in container_claims(container, claimed))
    for part in ("limits", "requests"):
        amounts = [
            str(amount)
            for name, amount in o.mapping(resources_.get(part)).items()
            if is_gpu_resource(str(name))
        ]
        if amounts:
            return sum(int(a) if a.isdigit() else 0 for a in amounts) + devices
    return devices


def container_claims(
    container: Mapping[str, Any], claimed: Sequence[ClaimedGpus]
) -> tuple[ClaimedGpus, ...]:
    """The claimed GPUs a container gets: those of the pod's claims its `resources.claims`
    names, every request of one, or the one it names (`request`: "Request is the name chosen
    for a request in the referenced claim. If empty, everything from the claim is made
    available", core/v1 ResourceClaim); a claim that could not be read, whatever it names."""
    refs = [o.mapping(r) for r in o.sequence(o.mapping(container.get("resources")).get("claims"))]
    return tuple(
        c
        for c in claimed
        if any(
            r.get("name") == c.claim
            and (not r.get("request") or not c.request or r.get("request") == c.request)
            for r in refs
        )
    )


def trainer_index(spec: Mapping[str, Any], claimed: Sequence[ClaimedGpus] = ()) -> int:
    """The container that trains: the first asking for GPUs (through its resources or its
    device claims), else the first."""
    containers = o.containers(spec)
    return next(
        (
            i
            for i, c in enumerate(containers)
            if gpu_count(c, claimed) > 0 or container_claims(c, claimed)
        ),
        0,
    )


def dataset_path(container: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    """Where the trainer mounts the first claim-backed volume ('' when none)."""
    claims = {
        str(v.get("name"))
        for v in o.sequence(spec.get("volumes"))
        if isinstance(v, Mapping) and "persistentVolumeClaim" in v
    }
    for mount in o.sequence(container.get("volumeMounts")):
        if isinstance(mount, Mapping) and mount.get("name") in claims:
            return str(mount.get("mountPath", ""))
    return ""


SHM_PATH = "/dev/shm"
_MIB = 1 << 20


def shm_need_mib(container: Mapping[str, Any], spec: Mapping[str, Any]) -> int:
    """The /dev/shm the job states it needs, MiB: the `sizeLimit` of the memory-backed emptyDir
    its trainer mounts at /dev/shm; 0 when it states none. The kubelet sizes that tmpfs to the
    smaller of the limit and the pod's memory limit (pkg/volume/emptydir/empty_dir.go
    calculateEmptyDirMemorySize), so the trial measures whether the job gets what it states."""
    limits = {
        str(v.get("name")): o.mapping(v.get("emptyDir")).get("sizeLimit")
        for v in o.sequence(spec.get("volumes"))
        if isinstance(v, Mapping) and o.mapping(v.get("emptyDir")).get("medium") == "Memory"
    }
    for mount in o.sequence(container.get("volumeMounts")):
        if not isinstance(mount, Mapping) or mount.get("name") not in limits:
            continue
        if str(mount.get("mountPath", "")).rstrip("/") != SHM_PATH:
            continue
        try:
            return max(0, int(parse_quantity(str(limits[mount["name"]] or "0")) // _MIB))
        except QuantityError:
            return 0
    return 0


def _claim_volumes(spec: Mapping[str, Any]) -> dict[str, bool]:
    """The pod's claim-backed volumes by name, each with whether the job makes it read-only for
    every container (`persistentVolumeClaim.readOnly`)."""
    return {
        str(v.get("name")): o.mapping(v["persistentVolumeClaim"]).get("readOnly") is True
        for v in o.sequence(spec.get("volumes"))
        if isinstance(v, Mapping) and "persistentVolumeClaim" in v
    }


def _read_only_mounts(
    container: Mapping[str, Any], claims: Mapping[str, bool]
) -> tuple[dict[str, Any], bool]:
    """`container` with every mount of a claim read-only, and whether the job lets it write to
    one (neither the mount nor the volume read-only: the kubelet mounts it read-only where
    either says so, pkg/kubelet/kubelet_pods.go makeMounts)."""
    mounts: list[Any] = []
    writable = False
    for mount in o.sequence(container.get("volumeMounts")):
        name = o.mapping(mount).get("name")
        if isinstance(mount, Mapping) and name in claims:
            writable |= not (mount.get("readOnly") is True or claims[str(name)])
            mounts.append({**mount, "readOnly": True})
        else:
            mounts.append(mount)
    return ({**container, "volumeMounts": mounts} if mounts else dict(container)), writable


def _probe_env(
    settings: TrialSettings, *, gpus: int, data: str, rank: int, world: int, master: str
) -> list[dict[str, str]]:
    values = {
        "GPUS": gpus,
        "SHM_NEED_MIB": settings.shm_need_mib,
        "DATA": data,
        "READ_MIB": settings.read_mib,
        "RANK": rank,
        "WORLD": world,
        "MASTER_ADDR": master,
        "MASTER_PORT": settings.rendezvous_port,
        "INIT_TIMEOUT_S": settings.listen_seconds if rank == 0 else settings.init_timeout_seconds,
    }
    return [{"name": PROBE_PREFIX + k, "value": str(v)} for k, v in values.items() if v != ""]


def trial_pod(
    job: str,
    pod: Mapping[str, Any],
    settings: TrialSettings,
    *,
    rank: int = 0,
    world: int = 1,
    master: str = "",
    separate_machines: bool = False,
) -> dict[str, Any]:
    """One trial pod of rank `rank` among `world`, made from the job's pod: a worker is told
    `master` (rank 0's address), rank 0 itself LOOPBACK."""
    metadata = o.mapping(pod.get("metadata"))
    spec = {k: v for k, v in o.mapping(pod.get("spec")).items() if k not in GANG_FIELDS}
    containers = o.containers(spec)
    chosen = trainer_index(spec, settings.claimed_gpus)
    claims = _claim_volumes(spec)
    # The probe never writes; whether the job's trainer would is not the trial's to judge.
    job_trainer = containers[chosen] if containers else {"name": "trainer"}
    trainer, _ = _read_only_mounts(job_trainer, claims)
    # The job's init containers and native sidecars run as the job states them, but for their
    # mounts of its claims: the ones the job lets write there are named on the pod.
    init = [
        _read_only_mounts(c, claims) if isinstance(c, Mapping) else (c, False)
        for c in o.sequence(spec.get("initContainers"))
    ]
    if init:
        spec["initContainers"] = [c for c, _ in init]
    writers = [str(o.mapping(c).get("name", "")) for c, writes in init if writes]
    gpu_claims = container_claims(trainer, settings.claimed_gpus)
    env = [*o.sequence(trainer.get("env"))]
    env += _probe_env(
        settings,
        gpus=gpu_count(trainer, settings.claimed_gpus),
        data=dataset_path(trainer, spec),
        rank=rank,
        world=world,
        master=master if rank else LOOPBACK,
    )
    for field in _DROPPED:
        trainer.pop(field, None)
    trainer.update({"command": probe_command(), "env": env})
    dropped = settings.preempting_class
    if dropped and spec.get("priorityClassName") == dropped:
        # The plugin computes the priority from the class and refuses a stated one that differs.
        spec.pop("priorityClassName")
        spec.pop("priority", None)
    else:
        dropped = ""
    spec.update(
        {
            "containers": [trainer],
            "restartPolicy": "Never",
            "activeDeadlineSeconds": settings.deadline_seconds,
            "preemptionPolicy": NEVER_PREEMPT,
        }
    )
    # A job pinned to a machine (`nodeName`) keeps it: its pods skip the scheduler and that
    # machine's kubelet admits them, and its workers share it, so none is kept apart.
    if separate_machines and world > 1 and not spec.get("nodeName"):
        spec["affinity"] = _apart(o.mapping(spec.get("affinity")), settings.run)
    labels = {
        **dict(settings.queue_labels),
        **_unselected(o.mapping(metadata.get("labels")), settings.selector_keys),
        TRIAL_LABEL: "true",
        TRIAL_RUN_LABEL: settings.run,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": trial_name(job, settings.run, rank),
            "labels": labels,
            "annotations": _annotations(metadata, gpu_claims, writers, dropped),
        },
        "spec": spec,
    }


def _annotations(
    metadata: Mapping[str, Any],
    claims: Sequence[ClaimedGpus],
    writers: Sequence[str],
    dropped: str,
) -> dict[str, Any]:
    """The job's annotations less those that put a pod in a gang; GPUS_AT_LEAST where the
    trainer's device claims give a number of GPUs not fixed ahead, TRIAL_READ_ONLY naming
    `writers`, and TRIAL_CLASS_DROPPED naming the class `dropped` (only truegreen says any of
    them: a template's own is dropped)."""
    kept = {
        k: v
        for k, v in o.mapping(metadata.get("annotations")).items()
        if k not in (GPUS_AT_LEAST, TRIAL_READ_ONLY, TRIAL_CLASS_DROPPED)
        and k not in GANG_ANNOTATIONS
    }
    if not all(c.exact for c in claims):
        kept[GPUS_AT_LEAST] = "true"
    if writers:
        kept[TRIAL_READ_ONLY] = ",".join(writers)
    if dropped:
        kept[TRIAL_CLASS_DROPPED] = dropped
    return kept


def with_wait_until(pod: Mapping[str, Any], until: int) -> dict[str, Any]:
    """`pod` with its probe told to wait for its peers until `until` (POSIX seconds) where
    that is later than its own wait."""
    spec = dict(o.mapping(pod.get("spec")))
    entry = {"name": WAIT_UNTIL_VARIABLE, "value": str(until)}
    spec["containers"] = [
        {**c, "env": [*o.sequence(c.get("env")), entry]}
        if any(o.mapping(e).get("name") == WAIT_VARIABLE for e in o.sequence(c.get("env")))
        else c
        for c in o.containers(spec)
    ]
    return {**pod, "spec": spec}


def with_deadline(pod: Mapping[str, Any], seconds: int, end_at: int | None) -> dict[str, Any]:
    """`pod` with its probe told to end its run within `seconds` of its own start and, where
    given, by `end_at` (POSIX seconds), whichever comes first."""
    spec = dict(o.mapping(pod.get("spec")))
    told = [(RUN_VARIABLE, seconds), *([(END_AT_VARIABLE, end_at)] if end_at is not None else [])]
    entries = [{"name": name, "value": str(value)} for name, value in told]
    spec["containers"] = [
        {**c, "env": [*o.sequence(c.get("env")), *entries]}
        if any(o.mapping(e).get("name") == WAIT_VARIABLE for e in o.sequence(c.get("env")))
        else c
        for c in o.containers(spec)
    ]
    return {**pod, "spec": spec}


def _unselected(labels: Mapping[str, Any], selector_keys: Sequence[str]) -> dict[str, Any]:
    """The job's labels less those a controller selects its pods by (the keys controllers
    stamp, and those the job's own selector names) and those that put a pod in a gang. The
    rest stay: other pods' affinity and spreading, and the job's own, may match them."""
    return {
        k: v
        for k, v in labels.items()
        if k not in CONTROLLER_LABELS
        and k not in GANG_LABELS
        and k not in selector_keys
        and not str(k).startswith(CONTROLLER_PREFIXES)
    }


def _apart(affinity: Mapping[str, Any], run: str) -> dict[str, Any]:
    """The job's affinity plus: never on a machine that holds another pod of this trial."""
    anti = dict(o.mapping(affinity.get("podAntiAffinity")))
    required: Sequence[Any] = o.sequence(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))
    term = {"labelSelector": {"matchLabels": {TRIAL_RUN_LABEL: run}}, "topologyKey": HOSTNAME}
    anti["requiredDuringSchedulingIgnoredDuringExecution"] = [*required, term]
    return {**affinity, "podAntiAffinity": anti}
