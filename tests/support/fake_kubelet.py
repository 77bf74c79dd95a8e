"""A kubelet for the trial's pods in the fake API server: it runs the pod's command (the probe) as
a local process and reports back as a kubelet does.

On a created pod labelled `truegreen.io/trial`, in a thread of its own:
1. the Events a kubelet's pod start writes, in their real shapes: `Scheduled` (from the
   scheduler: `Successfully assigned <ns>/<pod> to <node>`, pkg/scheduler/schedule_one.go),
   `Pulling` (`Pulling image %q`), `Pulled` (`Successfully pulled image %q in %v (%v including
   waiting). Image size: %v bytes.`, pkg/kubelet/images/image_manager.go), `Created`
   (`Created container: %s`) and `Started` (`Started container %s`,
   pkg/kubelet/kuberuntime/kuberuntime_container.go); reasons from pkg/kubelet/events/event.go;
2. the pod Running with `status.podIP` 127.0.0.1 (so the trial's workers are given rank 0's
   address), then the container's command run with the container's literal env and the
   image's PATH (`image_bin`: `sh` and its tools unless `shell` is False, and a `python3` that
   runs `python`, this interpreter unless told another, or none when `python` is None); a
   command the image does not have ends as containerd ends it (`StartError`); rank 0
   listens on loopback only (TRUEGREEN_PROBE_BIND); each mount path named in the env is
   replaced by a temp folder standing in for the volume (`volumes`, by claim name);
3. the pod Succeeded or Failed with the container terminated (exit code, `containerID`), its
   output served as the container's log (`pods/log`).
The job's init containers (native sidecars included) come first, each with its own image's
`Pulling`, `Pulled`, `Created` and `Started` on `spec.initContainers{NAME}` (the kubelet starts
them, in order, before the main container: pkg/kubelet/kuberuntime/kuberuntime_manager.go
computePodActions; each Event names its container by `involvedObject.fieldPath`,
pkg/kubelet/container/ref.go GenerateContainerRef), their pulls taking `init_pull`; while the
main container's image downloads it waits as `PodInitializing`, a pod with init containers'
default (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses). Only the native sidecars
get statuses (`_sidecars`); a regular init container is not run.
`pull` replaces the Pulled message's durations (a slow pull); `stall` stops after Pulling (a
pull that does not end); `start_failure` stands in for a kubelet that cannot start the
container: the Event given (reason, message) and the container left waiting with that reason, no
process run; `pod_ip` another loopback address than rank 0 listens on (127.0.0.1) stands in for
a network that keeps the workers from rank 0; `unschedulable` stands in for a scheduler that
finds no machine with room (its Event and condition, nothing run); `pull_failure` for a registry
that refuses the image (the kubelet's Events and waiting reasons for it); `coscheduling` for
scheduler-plugins' coscheduling in the scheduler of that name (`_short_of_siblings`);
`init_writers` runs the pod's regular init containers first (`_run_init_containers`);
`retried` for a step of the start that fails once and goes through when the kubelet retries it
(`RETRIED`). A pod
with scheduling gates is never started, as the scheduler never takes one. `stop` leaves a pod
where the trial's time finds it: `scheduling` (no scheduler ever takes it: Pending, no
condition, no machine),
`creating` (placed, its container still `ContainerCreating`), `running` (its program started and
has printed nothing yet), `deleted` (removed by someone else once running).
"""

import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tests.support.fake_apiserver import FakeApiServer

TRIAL_LABEL = "truegreen.io/trial"
NODE = "gpu-node-1"
Stop = Literal["scheduling", "creating", "running", "deleted"]
Retried = Literal["pull", "mount", "sandbox"]
RETRIED_WORDS: dict[Retried, str] = {
    "pull": (
        "failed to pull and unpack image: failed to copy: httpReadSeeker: failed open: "
        "unexpected status code https://registry.example.com/v2/trainer/blobs/sha256:ab12: "
        "429 Too Many Requests - Server message: toomanyrequests: retry later"
    ),
    "mount": (
        'MountVolume.MountDevice failed for volume "pvc-6d0a" : rpc error: code = Aborted '
        "desc = an operation with the given Volume ID vol-0abc already exists"
    ),
    "sandbox": (
        "Failed to create pod sandbox: rpc error: code = DeadlineExceeded desc = context "
        "deadline exceeded"
    ),
}
"""The words of a step that fails once and goes through on the kubelet's next try: a registry
that limits downloads (containerd's words for its 429); a CSI driver still busy with the
volume's attach (`FailedMount`, pkg/volume/util/operationexecutor/operation_generator.go
`MountVolume.MountDevice failed`); a sandbox the runtime did not make in time
(`FailedCreatePodSandBox`, pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod). The
kubelet retries each in the pod's next sync: a pull with back-off (pkg/kubelet/images/
image_manager.go EnsureImageExists), the sandbox (SyncPod returns and is called again), the
mount (pkg/kubelet/kubelet.go SyncPod waits again in WaitForAttachAndMount)."""
SHELL_TOOLS = ("sh", "df", "dd", "find", "awk", "head", "tr", "cut", "sed", "grep")
"""What a shell image offers: POSIX sh and the tools probe.sh uses."""


def image_bin(folder: Path, python: str | None, shell: bool = True) -> Path:
    """A folder standing in for an image's PATH: this machine's sh and its tools where the image
    has a shell, and a `python3` that runs `python` where it has Python; nothing else of this
    machine (its own python3 in /usr/bin is not the image's)."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in SHELL_TOOLS if shell else ():
        found = shutil.which(tool, path="/usr/bin:/bin")
        assert found is not None, f"this machine has no {tool}"
        (folder / tool).symlink_to(found)
    if python is not None:
        # A script, not a link: a venv's python finds its venv from the path it is run by.
        launcher = folder / "python3"
        launcher.write_text(f'#!/bin/sh\nexec {python} "$@"\n', encoding="utf-8")
        launcher.chmod(0o755)
    return folder


def ipv6_loopback() -> bool:
    """Whether this machine can listen on IPv6's loopback (`::1`), standing in for an IPv6 pod
    network's addresses (a container started with IPv6 off has none)."""
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def _now() -> str:
    """metav1.Time: RFC 3339 to the second (apimachinery pkg/apis/meta/v1/time.go)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def exec_not_found(program: str) -> str:
    """containerd's words (with runc) for a command the image does not have: runc's
    `exec.LookPath` error (libcontainer/standard_init_linux.go; Go os/exec `ErrNotFound`) inside
    the task create that container start runs."""
    return (
        "failed to create containerd task: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to start container process: "
        f'exec: "{program}": executable file not found in $PATH: unknown'
    )


class FakeKubelet:
    """The trial pods' kubelet (see the module's docstring)."""

    def __init__(
        self,
        server: "FakeApiServer",
        volumes: Mapping[str, Path] | None = None,
        *,
        pull: tuple[str, str] = ("1.204s", "1.31s"),
        image_bytes: int | None = 2_147_483_648,
        start_failure: tuple[str, str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        pod_ip: str = "127.0.0.1",
        stall: bool = False,
        start_seconds: float = 0.3,
        unschedulable: str | None = None,
        stop: Stop | None = None,
        reject: tuple[str, str] | None = None,
        python: str | None = sys.executable,
        shell: bool = True,
        worker_pull: float = 0.0,
        rank0_pull: float = 0.0,
        pull_failure: str | None = None,
        init_pull: str = "0.412s",
        coscheduling: str | None = None,
        init_writers: Collection[str] | None = None,
        retried: Retried | None = None,
    ) -> None:
        self.server = server
        self.volumes = dict(volumes or {})
        self.pull = pull
        self.image_bytes = image_bytes
        """The size the Pulled message gives; None: a kubelet before 1.30, whose message gives
        none (`Successfully pulled image %q in %v (%v including waiting)`)."""
        self.start_failure = start_failure
        """(event reason, event message, waiting reason)."""
        self.extra_env = dict(extra_env or {})
        self.pod_ip = pod_ip
        """The address the pods are given; another loopback address than rank 0 listens on
        stands in for a network that does not let the workers through."""
        self.stall = stall
        self.start_seconds = start_seconds
        """How long the pull and the start take: a pod's address is not there at its create."""
        """Stop after Pulling: an image pull that does not end within the trial."""
        self.unschedulable = unschedulable
        """kube-scheduler's words for a pod no machine has room for: the pod is never placed."""
        self.stop = stop
        """Where each pod stays (the module's docstring); None: it runs to its end."""
        self.reject = reject
        """(reason, message): the machine's kubelet turns each trial pod away at admission, as
        pkg/kubelet/kubelet.go `rejectPod` writes it: a Warning Event with the reason and
        message, the pod Failed with `status.reason` and `status.message` "Pod was rejected:
        <message>", no container status."""
        self.python = python
        """The image's `python3`: this interpreter, one with PyTorch (.venv-torch), or None for
        an image without Python."""
        self.shell = shell
        """Whether the image has `sh` (False: a distroless image)."""
        self._image = tempfile.TemporaryDirectory(prefix="fake-image-")
        self.image_path = str(image_bin(Path(self._image.name), python, shell))
        """The image's PATH: its programs only."""
        self.worker_pull = worker_pull
        """Seconds the workers' machine (rank 1 and up) takes to download the image rank 0's
        machine had: the worker placed, its container `ContainerCreating`, between its Pulling
        and Pulled events (the Pulled event gives that time)."""
        self.rank0_pull = rank0_pull
        """Seconds rank 0's machine takes to download the image, as `worker_pull`."""
        self.pull_failure = pull_failure
        """The registry's words for a pull that fails on every machine: the kubelet's whole
        sequence for it (`_pull_failed`), the pod's sandbox and address up meanwhile."""
        self.init_pull = init_pull
        """How long each init container's image takes to download (its Pulled message)."""
        self.coscheduling = coscheduling
        """The name of a scheduler running scheduler-plugins' coscheduling: a pod naming it is
        held for its gang as that plugin holds one (`_short_of_siblings`)."""
        self.init_writers = None if init_writers is None else frozenset(init_writers)
        """None: the pod's regular init containers are not run. Else they are, first
        (`_run_init_containers`), and those named write to every claim they mount."""
        self.retried = retried
        """A step of each pod's start that fails once, then goes through (`RETRIED_WORDS`)."""
        self._init_done: dict[str, list[dict[str, Any]]] = {}
        """The statuses of each pod's regular init containers once they have all completed."""
        self.threads: list[threading.Thread] = []
        self.ports: dict[str, int] = {}
        """The rendezvous port each trial run was given, by its run label."""
        self._lock = threading.Lock()
        self.started: dict[str, dict[str, str]] = {}
        """The env each pod's process was started with, by pod name."""
        self.pods: dict[str, dict[str, Any]] = {}
        """Each trial pod as the server stored it at its create, by name."""
        self.spans: dict[str, tuple[float, float]] = {}
        """Per pod name, `time.monotonic()` at its create and when its end was written: the
        pod's own time on the machine (the pull stand-in and the program), for bench/."""
        self._events = 0
        self.last_status: dict[str, dict[str, Any]] = {}
        """The last status written on each pod, by name (the pod itself is deleted by then)."""
        self._sidecar_started: dict[str, str] = {}
        """When each pod's native sidecars started, by pod name."""

    def created(self, pod: Mapping[str, Any]) -> None:
        """Called by the fake on every stored pod; starts the trial pods."""
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if TRIAL_LABEL not in labels:
            return
        self.pods[pod["metadata"]["name"]] = dict(pod)
        if (pod.get("spec") or {}).get("schedulingGates"):
            # The scheduler does not take a gated pod (its SchedulingGates PreEnqueue plugin),
            # so no kubelet ever sees it.
            return
        if self.unschedulable is not None:
            self._unschedulable(pod, self.unschedulable)
            return
        short = self._short_of_siblings(pod)
        if short:
            self._unschedulable(pod, short, component=str(self.coscheduling))
            return
        if self.reject is not None:
            self._rejected(pod, *self.reject)
            return
        if self.stop == "scheduling":
            # Nothing binds it (a scheduler that is down, or never named): the pod stays as the
            # API server stored it, Pending with no PodScheduled condition.
            return
        thread = threading.Thread(target=self._run, args=(dict(pod),), daemon=True)
        self.threads.append(thread)
        thread.start()

    def _rejected(self, pod: Mapping[str, Any], reason: str, message: str) -> None:
        self._event(pod, reason, message, "Warning")
        meta = pod["metadata"]
        stored = self.server.get_object("Pod", meta["name"], meta["namespace"])
        assert stored is not None
        stored["status"] = {
            "phase": "Failed",
            "reason": reason,
            "message": "Pod was rejected: " + message,
            "qosClass": "Burstable",
        }
        self.server.update_object(stored)

    def wait(self, timeout: float = 60.0) -> None:
        """Until every started pod's process has ended."""
        for thread in list(self.threads):
            thread.join(timeout)

    def _event(
        self,
        pod: Mapping[str, Any],
        reason: str,
        message: str,
        kind: str,
        component: str = "kubelet",
        field_path: str = "",
        init: bool = False,
    ) -> None:
        """One Event on the pod; `field_path` names the container it is about
        (pkg/kubelet/container/ref.go GenerateContainerRef: `spec.containers{name}`, or
        `spec.initContainers{name}` for an init container, `init`)."""
        self._events += 1
        meta = pod["metadata"]
        involved = {
            "kind": "Pod",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta.get("uid", ""),
        }
        if field_path:
            involved["fieldPath"] = (
                f"spec.{'initContainers' if init else 'containers'}{{{field_path}}}"
            )
        self.server.add(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": f"{meta['name']}.{self._events:x}",
                    "namespace": meta["namespace"],
                },
                "involvedObject": involved,
                "reason": reason,
                "message": message,
                "type": kind,
                "source": (
                    {"component": component, "host": NODE}
                    if component == "kubelet"
                    else {"component": component}
                ),
                "count": 1,
            }
        )

    def _short_of_siblings(self, pod: Mapping[str, Any]) -> str:
        """Coscheduling's refusal of a pod of the scheduler `coscheduling` names ('' when it lets
        it through): a pod labelled `scheduling.x-k8s.io/pod-group` with a PodGroup of that name
        is refused at PreFilter while fewer pods of its namespace carry the label than the
        group's `minMember` (kubernetes-sigs/scheduler-plugins pkg/coscheduling/core/core.go
        `PreFilter`: "pre-filter pod %v cannot find enough sibling pods, current pods number:
        %v, minMember of group: %v"); a pod without the label is in no group and PreFilter lets
        it through. The words are kube-scheduler's FitError with that PreFilter message
        (pkg/scheduler/framework/types.go `FitError.Error`: "0/%v nodes are available: %v.")."""
        spec = pod.get("spec") or {}
        meta = pod["metadata"]
        group = (meta.get("labels") or {}).get("scheduling.x-k8s.io/pod-group")
        if self.coscheduling is None or spec.get("schedulerName") != self.coscheduling:
            return ""
        if not group:
            return ""
        found = [
            g
            for g in self.server.list_objects("PodGroup", meta["namespace"])
            if g["apiVersion"].startswith("scheduling.x-k8s.io/") and g["metadata"]["name"] == group
        ]
        if not found:
            return ""
        siblings = sum(
            (p["metadata"].get("labels") or {}).get("scheduling.x-k8s.io/pod-group") == group
            for p in self.server.list_objects("Pod", meta["namespace"])
        )
        least = int(found[0]["spec"].get("minMember", 0))
        if siblings >= least:
            return ""
        return (
            f"0/{len(self.server.list_objects('Node'))} nodes are available: pre-filter pod "
            f"{meta['name']} cannot find enough sibling pods, current pods number: {siblings}, "
            f"minMember of group: {least}."
        )

    def _unschedulable(
        self, pod: Mapping[str, Any], words: str, component: str = "default-scheduler"
    ) -> None:
        """What kube-scheduler writes for a pod no machine fits: a `FailedScheduling` Warning
        from the scheduler (`component`) and `PodScheduled` False, `Unschedulable`, with the
        same words (pkg/scheduler/schedule_one.go handleSchedulingFailure, updatePod)."""
        self._event(pod, "FailedScheduling", words, "Warning", component=component)
        meta = pod["metadata"]
        stored = self.server.get_object("Pod", meta["name"], meta["namespace"])
        if stored is None:
            return
        stored["status"] = {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": words,
                }
            ],
        }
        self.server.update_object(stored)

    def _creating(self, pod: Mapping[str, Any], container: str, address: str = "") -> None:
        """A pod placed whose container the kubelet is still creating (a volume attaching, the
        sandbox starting): Pending, `PodScheduled` True and the container waiting as
        `ContainerCreating`, the kubelet's default waiting reason (`PodInitializing` for a pod
        with init containers: pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses).
        `address`: the sandbox runs and has its IP while the image downloads
        (kuberuntime_manager.go SyncPod creates the sandbox before it starts the containers,
        which pulls their images)."""
        waiting = "PodInitializing" if (pod.get("spec") or {}).get("initContainers") else ""
        status: dict[str, Any] = {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [
                {
                    "name": container,
                    "state": {"waiting": {"reason": waiting or "ContainerCreating"}},
                }
            ],
        }
        if address:
            status["podIP"] = address
        self._status(pod, status)

    def _sidecars(self, pod: Mapping[str, Any], phase: str) -> list[dict[str, Any]]:
        """The statuses of the pod's native sidecars (init containers with `restartPolicy:
        Always`, KEP-753), which the kubelet starts before the main container and keeps
        running beside it: running while the pod runs; once the main container has ended, the
        kubelet stops them (kuberuntime_manager.go computePodActions: no main container left to
        keep, KillPod, and "To prevent the restartable init containers to keep pod alive" none
        restarted) with SIGTERM, each after every main container has exited
        (kuberuntime_termination_order.go newTerminationOrdering), so they end exit code 143
        (128 + SIGTERM), reason `Error`, finishedAt no earlier than the main container's. The
        pod's phase ignores them (kubelet_pods.go getPhase). None while the pod is Pending."""
        names = [
            str(c.get("name"))
            for c in (pod.get("spec") or {}).get("initContainers") or []
            if c.get("restartPolicy") == "Always"
        ]
        if not names or phase not in ("Running", "Succeeded", "Failed"):
            return []
        started = self._sidecar_started.setdefault(pod["metadata"]["name"], _now())
        if phase == "Running":
            state: dict[str, Any] = {"running": {"startedAt": started}}
        else:
            stopped = {"exitCode": 143, "reason": "Error", "startedAt": started}
            state = {"terminated": {**stopped, "finishedAt": _now()}}
        return [
            {"name": name, "state": state, "ready": phase == "Running", "restartCount": 0}
            for name in names
        ]

    def _init_containers(self, pod: Mapping[str, Any]) -> None:
        """Each init container's start, in order, as the kubelet writes it on that container
        (`spec.initContainers{NAME}`): its own image's `Pulling` and `Pulled`
        (image_manager.go), `Created` and `Started` (kuberuntime_container.go startContainer)."""
        for container in (pod.get("spec") or {}).get("initContainers") or []:
            name, image = container["name"], container["image"]
            pulled = (
                f'Successfully pulled image "{image}" in {self.init_pull} '
                f"({self.init_pull} including waiting). Image size: 5242880 bytes."
            )
            for reason, message in (
                ("Pulling", f'Pulling image "{image}"'),
                ("Pulled", pulled),
                ("Created", f"Created container: {name}"),
                ("Started", f"Started container {name}"),
            ):
                self._event(pod, reason, message, "Normal", field_path=name, init=True)

    def _pulling(self, pod: Mapping[str, Any], seconds: float) -> bool:
        """Wait out a pull of `seconds`; False when the pod was deleted meanwhile."""
        meta = pod["metadata"]
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if self.server.get_object("Pod", meta["name"], meta["namespace"]) is None:
                return False
            time.sleep(0.1)
        return True

    def _status(self, pod: Mapping[str, Any], status: dict[str, Any]) -> bool:
        """Set the pod's status, its native sidecars' included (`_sidecars`); False when the
        pod is gone (deleted meanwhile)."""
        meta = pod["metadata"]
        stored = self.server.get_object("Pod", meta["name"], meta["namespace"])
        if stored is None:
            return False
        stored["spec"]["nodeName"] = NODE
        init = [
            *self._init_done.get(meta["name"], []),
            *self._sidecars(stored, str(status.get("phase", ""))),
        ]
        if "initContainerStatuses" not in status and init:
            status = {**status, "initContainerStatuses": init}
        stored["status"] = status
        self.last_status[meta["name"]] = stored["status"]
        self.server.update_object(stored)
        return True

    def _run_init_containers(self, pod: Mapping[str, Any]) -> bool:
        """The pod's regular init containers, each run to its end in order before the main
        container, as the kubelet runs them (kuberuntime_manager.go computeInitContainerActions);
        False when one failed and ended the pod. One named in `init_writers` writes to every
        claim it mounts: where the kubelet mounts that claim read-only for it (the mount's
        `readOnly`, or the volume's `persistentVolumeClaim.readOnly`, which forces every mount
        of it: pkg/kubelet/kubelet_pods.go makeMounts), the kernel refuses the write (EROFS)
        and the container ends as dash ends on a redirection it cannot open: exit code 2,
        `sh: 1: cannot create <path>: Read-only file system` in its log. With `restartPolicy:
        Never` a failed init container fails the pod, its main container left waiting
        `PodInitializing` (kubelet_pods.go getPhase, convertToAPIContainerStatuses). Scripted:
        no process runs, and no Events are written for them."""
        meta, spec = pod["metadata"], pod["spec"]
        read_only = {
            v["name"]: bool(v["persistentVolumeClaim"].get("readOnly"))
            for v in spec.get("volumes") or []
            if "persistentVolumeClaim" in v
        }
        statuses: list[dict[str, Any]] = []
        for container in spec.get("initContainers") or []:
            if container.get("restartPolicy") == "Always":
                continue  # a native sidecar (`_sidecars`)
            name = container["name"]
            refused = [
                m["mountPath"]
                for m in container.get("volumeMounts") or []
                if m["name"] in read_only and (m.get("readOnly") or read_only[m["name"]])
            ]
            failed = bool(refused) and name in (self.init_writers or ())
            instance = f"containerd://{meta['name']}-{name}"
            self.server.container_logs[instance] = (
                f"sh: 1: cannot create {refused[0]}/.prepared: Read-only file system\n"
                if failed
                else ""
            )
            terminated = {
                "exitCode": 2 if failed else 0,
                "reason": "Error" if failed else "Completed",
                "containerID": instance,
                "startedAt": _now(),
                "finishedAt": _now(),
            }
            statuses.append(
                {
                    "name": name,
                    "containerID": instance,
                    "state": {"terminated": terminated},
                    "ready": False,
                    "restartCount": 0,
                }
            )
            if failed:
                waiting = {"waiting": {"reason": "PodInitializing"}}
                main = [{"name": c["name"], "state": waiting} for c in spec["containers"]]
                self._status(
                    pod,
                    {
                        "phase": "Failed",
                        "podIP": self.pod_ip,
                        "conditions": [{"type": "PodScheduled", "status": "True"}],
                        "initContainerStatuses": statuses,
                        "containerStatuses": main,
                    },
                )
                return False
        self._init_done[meta["name"]] = statuses
        return True

    def _pull_failed(self, pod: Mapping[str, Any], name: str, image: str, words: str) -> None:
        """A pull the registry refuses, as the kubelet writes it, each Event on the container
        (pkg/kubelet/images/image_manager.go EnsureImageExists; kuberuntime_container.go
        startContainer records "Error: %v" with the error's name after each): Warning `Failed`
        `Failed to pull image %q: %v`, Warning `Failed` `Error: ErrImagePull`; on the next
        sync, in back-off, Normal `BackOff` `Back-off pulling image %q` and Warning `Failed`
        `Error: ImagePullBackOff`. The sandbox runs (its address set) and the container waits,
        `ErrImagePull` then `ImagePullBackOff` (kubelet_pods.go convertToAPIContainerStatuses);
        the pod stays Pending."""
        failed = f'Failed to pull image "{image}": {words}'
        back_off = f'Back-off pulling image "{image}"'
        for reason, message, kind, waiting in (
            ("Failed", failed, "Warning", "ErrImagePull"),
            ("BackOff", back_off, "Normal", "ImagePullBackOff"),
        ):
            self._event(pod, reason, message, kind, field_path=name)
            self._event(pod, "Failed", f"Error: {waiting}", "Warning", field_path=name)
            state = {"waiting": {"reason": waiting, "message": message}}
            status = {
                "phase": "Pending",
                "podIP": self.pod_ip,
                "conditions": [{"type": "PodScheduled", "status": "True"}],
                "containerStatuses": [{"name": name, "state": state}],
            }
            if not self._status(pod, status):
                return

    def _not_found(self, pod: Mapping[str, Any], name: str, instance: str, program: str) -> None:
        """The image lacks the command's program: the kubelet's Warning `Failed` "Error: %v"
        (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer,
        events.FailedToStartContainer) on the container, and containerd ends the container
        `StartError` with exit code 128 (internal/cri/server/container_start.go
        errorStartReason, errorStartExitCode); restartPolicy Never: the pod Failed."""
        words = exec_not_found(program)
        self._event(pod, "Failed", f"Error: {words}", "Warning", field_path=name)
        # A container that never started keeps the zero startedAt; its end is the runtime's.
        terminated = {
            "exitCode": 128,
            "reason": "StartError",
            "message": words,
            "startedAt": "1970-01-01T00:00:00Z",
            "finishedAt": _now(),
        }
        self._status(
            pod,
            {
                "phase": "Failed",
                "podIP": self.pod_ip,
                "containerStatuses": [
                    {"name": name, "containerID": instance, "state": {"terminated": terminated}}
                ],
            },
        )

    def _env(self, container: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, str]:
        mounts = {
            m["mountPath"]: str(self.volumes[v["persistentVolumeClaim"]["claimName"]])
            for v in pod["spec"].get("volumes") or []
            if "persistentVolumeClaim" in v
            and v["persistentVolumeClaim"]["claimName"] in self.volumes
            for m in container.get("volumeMounts") or []
            if m["name"] == v["name"]
        }
        env = {"PATH": self.image_path, "TRUEGREEN_PROBE_BIND": "127.0.0.1", **self.extra_env}
        for item in container.get("env") or []:
            if "value" in item:
                env[item["name"]] = mounts.get(item["value"], item["value"])
        if "TRUEGREEN_PROBE_MASTER_PORT" in env:
            # Every pod of a real trial has an address of its own; on one loopback, each trial
            # run gets a free port instead, so that runs side by side never meet.
            run = (pod["metadata"].get("labels") or {}).get("truegreen.io/trial-run", "")
            env["TRUEGREEN_PROBE_MASTER_PORT"] = str(self._port(run))
        return env

    def _port(self, run: str) -> int:
        with self._lock:
            if run not in self.ports:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", 0))
                    self.ports[run] = probe.getsockname()[1]
            return self.ports[run]

    def _run(self, pod: dict[str, Any]) -> None:
        created = time.monotonic()
        meta = pod["metadata"]
        container = pod["spec"]["containers"][0]
        name, image = container["name"], container["image"]
        self._event(
            pod,
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {NODE}",
            "Normal",
        )
        if self.retried in ("mount", "sandbox"):
            # Both come before any container starts (kubelet.go SyncPod waits for the volumes
            # and kuberuntime_manager.go SyncPod makes the sandbox before startContainer), and
            # both are on the pod, not on a container; the next sync goes through.
            reason = "FailedMount" if self.retried == "mount" else "FailedCreatePodSandBox"
            self._event(pod, reason, RETRIED_WORDS[self.retried], "Warning")
            self._creating(pod, name)
        if self.init_writers is not None and not self._run_init_containers(pod):
            return
        if self.stop == "creating":
            # Volumes are mounted and the sandbox made before the image is pulled
            # (pkg/kubelet/kubelet.go SyncPod, kuberuntime_manager.go SyncPod).
            self._creating(pod, name)
            return
        self._init_containers(pod)
        self._event(pod, "Pulling", f'Pulling image "{image}"', "Normal")
        if self.retried == "pull":
            # The kubelet's whole sequence for a refused pull, then, on the sync after the
            # back-off, the pull again, which goes through (below).
            self._pull_failed(pod, name, image, RETRIED_WORDS["pull"])
            self._event(pod, "Pulling", f'Pulling image "{image}"', "Normal")
        if self.pull_failure is not None:
            self._pull_failed(pod, name, image, self.pull_failure)
            return
        if self.stall:
            # On its machine, the container waits as `ContainerCreating` while its image
            # downloads (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses).
            self._creating(pod, name)
            return
        pulled, total = self.pull
        seconds = self.rank0_pull if meta["name"].endswith("-0") else self.worker_pull
        if seconds:
            # The kubelet's Pulled event gives the pull's time (image_manager.go); meanwhile
            # the container waits as `ContainerCreating`, the pod's sandbox up with its IP.
            self._creating(pod, name, self.pod_ip)
            if not self._pulling(pod, seconds):
                return
            pulled = total = f"{seconds}s"
        pulled_message = (
            f'Successfully pulled image "{image}" in {pulled} ({total} including waiting)'
        )
        if self.image_bytes is not None:
            pulled_message += f". Image size: {self.image_bytes} bytes."
        if self.start_failure is not None:
            reason, message, waiting = self.start_failure
            if waiting not in ("ErrImagePull", "ImagePullBackOff"):
                # A container the kubelet cannot create or start had its image pulled first
                # (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer).
                self._event(pod, "Pulled", pulled_message, "Normal")
            self._event(pod, reason, message, "Warning")
            self._status(
                pod,
                {
                    "phase": "Pending",
                    "containerStatuses": [
                        {
                            "name": name,
                            "state": {"waiting": {"reason": waiting, "message": message}},
                        }
                    ],
                },
            )
            return
        time.sleep(self.start_seconds)
        self._event(pod, "Pulled", pulled_message, "Normal")
        self._event(pod, "Created", f"Created container: {name}", "Normal")
        instance = f"containerd://{meta['name']}-1"
        command = list(container["command"])
        env = self._env(container, pod)
        if shutil.which(command[0], path=env["PATH"]) is None:
            self._not_found(pod, name, instance, command[0])
            return
        self._event(pod, "Started", f"Started container {name}", "Normal")
        started = _now()
        running = {
            "phase": "Running",
            "podIP": self.pod_ip,
            "containerStatuses": [
                {
                    "name": name,
                    "containerID": instance,
                    "state": {"running": {"startedAt": started}},
                }
            ],
        }
        if not self._status(pod, running):
            return
        if self.stop in ("running", "deleted"):
            # The program has printed nothing yet (its log is empty), or someone else removed
            # the pod while it ran.
            self.server.container_logs[instance] = ""
            if self.stop == "deleted":
                self.server.delete_object("Pod", meta["name"], meta["namespace"])
            return
        self.started[meta["name"]] = env
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        self.server.container_logs[instance] = done.stdout + done.stderr
        terminated = {
            "exitCode": done.returncode,
            "reason": "Completed" if done.returncode == 0 else "Error",
            "containerID": instance,
            "startedAt": started,
            "finishedAt": _now(),
        }
        self._status(
            pod,
            {
                "phase": "Succeeded" if done.returncode == 0 else "Failed",
                "podIP": self.pod_ip,
                "containerStatuses": [
                    {"name": name, "containerID": instance, "state": {"terminated": terminated}}
                ],
            },
        )
        self.spans[meta["name"]] = (created, time.monotonic())
