"""Out of memory: the kernel's kill as the kubelet records it, read at any moment.

The kubelet shows `CrashLoopBackOff` only while it waits out the back-off before a restart
(pkg/kubelet/kuberuntime/kuberuntime_manager.go `doBackOff`); between those waits the container
runs again, and its previous end stays in `lastState` (pkg/kubelet/kubelet_pods.go
`convertToAPIContainerStatuses`). A container killed for memory is the same problem whether
doctor looks during the wait or after it. Everything here is pure.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.base import format_age

OOM_KILLED = "OOMKilled"
"""The runtime's reason for a container the kernel killed for memory (CRI `OOMKilled`)."""
STABLE_RUN = timedelta(minutes=10)
"""How long a container must run after a restart before the kubelet forgets its crashes: a
back-off entry expires once the container ran more than 600 s (pkg/kubelet/kubelet.go
`NewMainKubelet`, `klet.backOff.HasExpiredFunc`; before it client-go
util/flowcontrol/backoff.go `hasExpired`, twice MaxContainerBackOff: 2 x 300 s). A memory kill
followed by that long a run is history; before it, the next kill puts it back in
CrashLoopBackOff at the back-off it had reached."""


class MemoryKill(Struct, frozen=True):
    """A container's end by the kernel's out-of-memory killer that still stands."""

    pod: str
    container: str
    exit_code: int
    ended: datetime | None
    restarts: int = 0
    running_since: datetime | None = None
    """When the container started again (None when it does not run now)."""
    once: bool = False
    """The container's first end, which the kubelet restarts at once: its back-off holds no
    entry for the container yet, so it starts it again without a wait and only then keeps one
    (pkg/kubelet/kuberuntime/kuberuntime_manager.go `doBackOff`: `IsInBackOffSince` is false
    for an unknown container, then `backOff.Next`; client-go util/flowcontrol/backoff.go). The
    restart loop, with its `CrashLoopBackOff` waits, starts at the second end."""

    def detail(self, now: datetime) -> str:
        """The kill in the kubelet's words, with its age and what runs since."""
        ago = f" {format_age(now - self.ended)} ago" if self.ended is not None else ""
        said = f"pod {self.pod} container {self.container}: OOMKilled{ago} (exit code "
        said += f"{self.exit_code})"
        if self.restarts:
            said += f", {self.restarts} restart{'' if self.restarts == 1 else 's'}"
        if self.running_since is not None:
            said += f", running again for {format_age(now - self.running_since)}"
        return said


def _running_since(container: Mapping[str, Any]) -> datetime | None:
    running = o.mapping(o.mapping(container.get("state")).get("running"))
    return o.parse_time(running.get("startedAt"))


def restarted_after_kill(
    pod: str, container: Mapping[str, Any], now: datetime
) -> MemoryKill | None:
    """The container's last end, where the kernel killed it for memory, the kubelet restarted
    it (`restartCount` above 0) and it has not yet run STABLE_RUN since: measured from its
    current start (the kubelet's own measure), else from the kill when it does not run. A
    container whose current run completed (exit code 0: an init container that
    finished its step, which the kubelet never runs again, computeInitContainerActions) is
    past the kill. `once` marks a single kill (`restartCount` 1) the container runs again
    after: no restart loop yet."""
    last = o.mapping(o.mapping(container.get("lastState")).get("terminated"))
    restarts = o.integer(container.get("restartCount"))
    if last.get("reason") != OOM_KILLED or restarts < 1:
        return None
    state = o.mapping(container.get("state"))
    ended_again = o.mapping(state.get("terminated"))
    if ended_again and o.integer(ended_again.get("exitCode"), 1) == 0:
        return None
    ended = o.parse_time(last.get("finishedAt"))
    started = _running_since(container)
    since = started or ended
    if since is not None and now - since > STABLE_RUN:
        return None
    code = o.integer(last.get("exitCode"), 137)
    once = restarts == 1 and not ended_again
    return MemoryKill(pod, str(container.get("name") or ""), code, ended, restarts, started, once)


def failed_tries(pods: Sequence[KubeObject], now: datetime) -> list[MemoryKill]:
    """The tries of one unfinished training job that the kernel killed for memory (a pod of
    restartPolicy Never ends Failed, and its controller makes another: pkg/controller/job
    job_controller.go counts it toward backoffLimit), newest first. A try is history once a
    later pod of the job has run STABLE_RUN, every container of it since after that kill: the
    kubelet's own measure of a container that runs well."""
    kills = []
    for pod in pods:
        if o.phase(pod) != "Failed" or o.is_terminating(pod):
            continue
        for container in o.container_statuses(pod):
            ended = o.mapping(o.mapping(container.get("state")).get("terminated"))
            if ended.get("reason") == OOM_KILLED:
                at = o.parse_time(ended.get("finishedAt"))
                code = o.integer(ended.get("exitCode"), 137)
                name = str(container.get("name") or "")
                kills.append(MemoryKill(o.name_of(pod), name, code, at))
                break
    current = [k for k in kills if not any(_ran_well_since(p, k, now) for p in pods)]
    return sorted(current, key=lambda k: k.ended.timestamp() if k.ended else 0.0, reverse=True)


def _ran_well_since(pod: KubeObject, kill: MemoryKill, now: datetime) -> bool:
    """Whether `pod` runs with every container of it running since after `kill` and for
    more than STABLE_RUN (a restart starts a container's run again)."""
    if o.phase(pod) != "Running" or o.name_of(pod) == kill.pod:
        return False
    starts = [_running_since(c) for c in o.container_statuses(pod)]
    known = [s for s in starts if s is not None]
    if not known or len(known) != len(starts):
        return False
    after = kill.ended is None or min(known) >= kill.ended
    return after and now - max(known) > STABLE_RUN
