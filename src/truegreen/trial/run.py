"""One trial: create the trial pods, wait for them within the time given, read back what they
say, and delete them on every path.

The order follows what a distributed job's controller and its pods do: rank 0 first; once the
API server shows rank 0's address (`status.podIP`, set before its image is pulled), the other
workers, given that address, so that their images download side by side.
Every wait is bounded by one deadline (the trial's timeout, the image pull included); the pods
are deleted on every path: the end of the trial, a failed read, the deadline, Ctrl-C
(KeyboardInterrupt) and a SIGTERM or SIGHUP (a terminal or ssh session that went away) the
command line turns into an exception. While they are deleted, further such signals are held
(`_SignalsHeld`), so that each pod gets its delete;
a signal that stopped the trial goes up once they are, with the pods that could not be removed
(`TrialInterrupted`). Pods a previous, interrupted trial left (found by the trial label, their
own deadline past) are removed first; another run's live pods are not. A pod that is gone
before it is read back (deleted by someone else) is waited for no longer and read back as gone:
its measurement was never read.

A create the API server refuses (admission, quota, authorization) ends the trial: the refusal
is the measurement of that gate, returned as the server's answer for the checks that judge it.
A create whose answer never came (a timeout, a reset, an error of the server's own, a signal)
ends it too, and its pod may still be stored after the client has gone: it is looked for by
this run's label until the server can no longer store it (`WRITE_BOUND_SECONDS`), and deleted
once it shows.
"""

import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from types import FrameType, TracebackType
from typing import Any, Protocol

from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Created, CreateResult, GetRead, Got, Kind, Listed, ListRead
from truegreen.cluster import ReadFailure as Failure
from truegreen.cluster.logs import Logged, LogRead, read_newest
from truegreen.trial.pods import (
    END_AT_VARIABLE,
    GPUS_AT_LEAST,
    NEVER_PREEMPT,
    RUN_VARIABLE,
    TRIAL_CLASS_DROPPED,
    TRIAL_LABEL,
    TRIAL_RUN_LABEL,
    WAIT_UNTIL_VARIABLE,
    WAIT_VARIABLE,
    with_deadline,
    with_wait_until,
)
from truegreen.trial.readback import (
    TrialPod,
    TrialRun,
    TurnedAway,
    container_states,
    kubelet_events,
)

POLL_SECONDS = 1.0
FIRST_POLL_SECONDS = 0.1
"""The first wait between reads of the pods, doubled up to POLL_SECONDS: a probe that ends in
a fraction of a second (an image already on the machine) is seen at once, a long pull is read
once a second."""
LOG_TAIL_LINES = 50
LOG_LIMIT_BYTES = 64 * 1024
"""The probe's line is at most 16 KiB; the tail around it is kept for a program that failed.
The kubelet writes forward from the first of the last lines and stops at this many bytes
(pkg/kubelet/kuberuntime/logs/logs.go ReadLogs), so where the tail is longer the log is asked
again for fewer lines (cluster/logs.py `read_newest`): the probe's line is the newest."""
_ENDED = ("Succeeded", "Failed")
REPORT_MARGIN_SECONDS = 10
"""A probe stops waiting for its peers this long before the trial's time is up: room for the
exchange, the all-reduce and its line to be read back within the trial's time."""
END_MARGIN_SECONDS = 5
"""A probe's run ends this long before the trial's time is up: room for the kubelet to report
its container ended and for its log to be read (a poll is at most POLL_SECONDS apart). Less
than REPORT_MARGIN_SECONDS: the exchange after the waits fits between the two."""
WRITE_BOUND_SECONDS = 34.0
"""How long after its create was sent the API server may still store a pod whose answer never
came: the create handler bounds the write by requestTimeoutUpperBound, 34 s
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go createHandler, rest.go), and runs
it on a goroutine of its own that goes on after the client has gone
(handlers/finisher/finisher.go asyncFinisher: "the callee goroutine may continue to run after
the given context expires"). A list of the run's pods made after that shows whether it was."""
_TURNED_DOWN = (Failure.UNAUTHORIZED, Failure.FORBIDDEN, Failure.NOT_FOUND)
"""The answers that say the server did not store the pod (401, 403, 404). Any other failure
may come after it stored it (an error of its own, an answer cut off or not readable) or
before it was done (a timeout, a reset)."""


class TrialClient(Protocol):
    """The reads and writes a trial makes (cluster/live.py's LiveCluster has them all)."""

    def create(
        self, kind: Kind, obj: Mapping[str, Any], *, namespace: str | None, dry_run: bool
    ) -> CreateResult:
        """POST one object."""
        ...

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """One object."""
        ...

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: Any = None,
    ) -> ListRead:
        """Every matching object."""
        ...

    def delete(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """DELETE one object."""
        ...

    def container_log(
        self,
        pod: str,
        container: str,
        *,
        namespace: str,
        previous: bool,
        tail_lines: int,
        limit_bytes: int,
    ) -> LogRead:
        """The last lines of one container's log."""
        ...

    def server_time(self) -> float | None:
        """The API server's clock now (POSIX seconds), from its answers; None when unknown."""
        ...


LEFTOVER_GRACE = timedelta(minutes=2)
"""Past a trial pod's own deadline, before another run takes it for left over: a live run
deletes its pods before their deadline, and this absorbs a skew between this computer's clock
and the API server's, which wrote the pod's creationTimestamp."""
DEADLINE_EXCEEDED = "DeadlineExceeded"
"""The reason the kubelet gives a pod it ended at its activeDeadlineSeconds
(pkg/kubelet/active_deadline.go)."""


def left_over(pod: Mapping[str, Any], now: datetime) -> bool:
    """A trial pod no live run still owns: its own deadline has passed, as the kubelet judged
    it (ended `DeadlineExceeded`) or as its creationTimestamp and activeDeadlineSeconds say,
    with LEFTOVER_GRACE to spare. A pod that shows neither is never taken for left over: it
    may be a live run's."""
    if o.mapping(pod.get("status")).get("reason") == DEADLINE_EXCEEDED:
        return True
    created = o.created_at(pod)
    deadline = o.pod_spec(pod).get("activeDeadlineSeconds")
    if created is None or not isinstance(deadline, int) or isinstance(deadline, bool):
        return False
    return created + timedelta(seconds=deadline) + LEFTOVER_GRACE < now


def remove_leftovers(
    client: TrialClient, namespace: str, now: datetime | None = None
) -> tuple[str, ...]:
    """Delete the trial pods interrupted runs left (`left_over`); their names. Another run's
    live pods are left alone."""
    listed = client.list(Kind.POD, namespace=namespace, labels={TRIAL_LABEL: "true"})
    if not isinstance(listed, Listed):
        return ()
    moment = now or datetime.now(UTC)
    names = tuple(o.name_of(pod) for pod in listed.items if left_over(pod, moment))
    for name in names:
        client.delete(Kind.POD, name, namespace=namespace)
    return names


def _pod(client: TrialClient, name: str, namespace: str) -> Mapping[str, Any] | None:
    read = client.get(Kind.POD, name, namespace=namespace)
    return read.obj if isinstance(read, Got) else None


def _wait(
    client: TrialClient,
    names: Sequence[str],
    namespace: str,
    deadline: float,
    done: Callable[[Mapping[str, Any]], bool],
    sleep: Callable[[float], None],
) -> bool:
    """Poll the pods until `done` holds for each, or the deadline; True when it held. A pod
    that is gone is waited for no longer: nothing more will come from it."""
    pause = FIRST_POLL_SECONDS
    while True:
        reads = [client.get(Kind.POD, n, namespace=namespace) for n in names]
        if all(_gone(r) or (isinstance(r, Got) and done(r.obj)) for r in reads):
            return True
        if time.monotonic() >= deadline:
            return False
        sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(POLL_SECONDS, pause * 2)


def _gone(read: GetRead) -> bool:
    return isinstance(read, CantRead) and read.failure is Failure.NOT_FOUND


def _ended(pod: Mapping[str, Any]) -> bool:
    return o.phase(pod) in _ENDED


def _address(pod: Mapping[str, Any]) -> str:
    """The pod's address while it lives: the kubelet reports `status.podIP` once its sandbox
    runs, before the images are pulled (pkg/kubelet/kuberuntime/kuberuntime_manager.go
    SyncPod); an ended pod keeps it, with nothing left to reach."""
    return "" if _ended(pod) else str(o.mapping(pod.get("status")).get("podIP") or "")


def _addressed_or_ended(pod: Mapping[str, Any]) -> bool:
    return bool(_address(pod)) or _ended(pod)


GONE = "the trial pod disappeared before its report was read"


def _unread(read: GetRead) -> str:
    """Why a pod could not be read back: gone (deleted by someone else, evicted), or the read
    failed; '' when it was read."""
    if not isinstance(read, CantRead):
        return ""
    if read.failure is Failure.NOT_FOUND:
        return GONE
    return f"the trial pod could not be read back: {read.reason}"


LOG_FORBIDDEN = (
    "the trial pod's log could not be read: the cluster refused this login the permission "
    "get pods/log (docs/rbac.md)"
)


def _log_unread(read: LogRead) -> str:
    """Why a pod's log could not be read ('' when it was): a refusal names the permission
    missing (deploy/doctor/trial-run-role.yaml grants it), anything else the read's reason."""
    if not isinstance(read, CantRead):
        return ""
    if read.failure is Failure.FORBIDDEN:
        return LOG_FORBIDDEN
    return f"the trial pod's log could not be read: {read.reason}"


def _read_back(client: TrialClient, name: str, namespace: str, ended_by_timeout: bool) -> TrialPod:
    events = client.list(Kind.EVENT, namespace=namespace, fields={"involvedObject.name": name})
    got = client.get(Kind.POD, name, namespace=namespace)
    pod = got.obj if isinstance(got, Got) else None
    states = container_states(pod) if pod is not None else []
    log = log_unread = ""
    container = next(iter(o.containers(o.pod_spec(pod))), None) if pod is not None else None
    if container is not None and any(s.terminated or not s.waiting for s in states):
        container_name = str(container.get("name", ""))
        read = read_newest(
            lambda lines: client.container_log(
                name,
                container_name,
                namespace=namespace,
                previous=False,
                tail_lines=lines,
                limit_bytes=LOG_LIMIT_BYTES,
            ),
            LOG_TAIL_LINES,
        )
        log = read.text if isinstance(read, Logged) else ""
        log_unread = _log_unread(read)
    return TrialPod(
        pod=name,
        events=tuple(kubelet_events(events.items)) if isinstance(events, Listed) else (),
        states=tuple(states),
        log=log,
        ended_by_timeout=ended_by_timeout,
        unplaced=_unplaced(pod) if pod is not None else "",
        gates=_gates(pod) if pod is not None else (),
        unassigned=pod is not None and not o.node_name(pod),
        unread=_unread(got),
        log_unread=log_unread,
        turned_away=_turned_away(pod) if pod is not None else None,
        wait_seconds=_wait_seconds(container),
        wait_until=_env_int(container, WAIT_UNTIL_VARIABLE),
        run_seconds=_env_int(container, RUN_VARIABLE),
        end_at=_env_int(container, END_AT_VARIABLE),
        gpus_at_least=pod is not None and _annotations(pod).get(GPUS_AT_LEAST) == "true",
        image=str(container.get("image", "")) if container is not None else "",
        dropped_class=str(_annotations(pod).get(TRIAL_CLASS_DROPPED) or "") if pod else "",
        evicting_on=_evicting_on(pod) if pod is not None else "",
    )


def _evicting_on(pod: Mapping[str, Any]) -> str:
    """The machine the scheduler nominated the pod for where the pod may preempt: it deletes
    the victims there, then nominates the preemptor (pkg/scheduler/framework/preemption/
    preemption.go `Evaluator.Preempt`, `prepareCandidate`). A pod that never preempts (every
    trial pod, unless a webhook changed its policy) is nominated for no such reason ('')."""
    if o.pod_spec(pod).get("preemptionPolicy") == NEVER_PREEMPT:
        return ""
    return str(o.mapping(pod.get("status")).get("nominatedNodeName") or "")


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.mapping(o.mapping(pod.get("metadata")).get("annotations"))


def _wait_seconds(container: Mapping[str, Any] | None) -> int | None:
    """How long the pod's probe was told to wait for its peers (its env's
    TRUEGREEN_PROBE_INIT_TIMEOUT_S, truegreen.trial.pods); None when it was not told."""
    return _env_int(container, WAIT_VARIABLE)


def _env_int(container: Mapping[str, Any] | None, name: str) -> int | None:
    """A whole number the container's env gives `name`; None when it gives none."""
    for item in o.sequence((container or {}).get("env")):
        entry = o.mapping(item)
        if entry.get("name") == name:
            value = str(entry.get("value", ""))
            return int(value) if value.isdigit() else None
    return None


def _timed(pod: Mapping[str, Any], left: float, server_now: float | None) -> dict[str, Any]:
    """`pod` with its probe told to end its run END_MARGIN_SECONDS before the trial's time is
    up, `left` seconds from its create: within that time from its own start, and, where the API
    server's clock is known (`server_now`), by that moment on it, which the machines' clocks
    follow (never this computer's, which may be off). The kubelet starts the probe only once
    the image has come: counted from its own start alone, a slow download would carry the
    probe's end, and what it measured, past the moment doctor stops reading."""
    seconds = max(1, int(left) - END_MARGIN_SECONDS)
    end_at = None if server_now is None else int(server_now + left) - END_MARGIN_SECONDS
    return with_deadline(pod, seconds, end_at)


def _wait_until(rank0: Mapping[str, Any], left: float) -> int | None:
    """Until when a worker waits for rank 0, on the API server's clock, which the machines'
    clocks follow (never this computer's, which may be off): rank 0's creationTimestamp (the
    server's clock at its create, floored to the second: apiserver pkg/registry/rest/create.go
    FillObjectMetaSystemFields) plus the trial's time that was left when it was sent, less
    REPORT_MARGIN_SECONDS. A worker whose machine had the image then keeps trying while rank
    0's machine still downloads it, and still reports within the trial's time. None when the
    pod shows no creationTimestamp."""
    created = o.created_at(rank0)
    if created is None:
        return None
    return int(created.timestamp() + left) - REPORT_MARGIN_SECONDS


def _turned_away(pod: Mapping[str, Any]) -> TurnedAway | None:
    """The machine's kubelet's words where it failed the pod itself: kubelet.go `rejectPod`
    (admission: `OutOfcpu`, `NodeAffinity`, `UnexpectedAdmissionError`, ...) and the eviction
    manager (`Evicted`) set `status.phase: Failed` with `status.reason` and `status.message`.
    The trial's own deadline (DeadlineExceeded) is no refusal: the trial's time is."""
    status = o.mapping(pod.get("status"))
    reason = str(status.get("reason") or "")
    if status.get("phase") != "Failed" or not reason or reason == DEADLINE_EXCEEDED:
        return None
    return TurnedAway(reason, str(status.get("message") or ""))


def _unplaced(pod: Mapping[str, Any]) -> str:
    """The PodScheduled condition's message where it is False ('' once placed)."""
    scheduled = o.condition(pod, "PodScheduled")
    if scheduled is None or scheduled.get("status") != "False" or o.node_name(pod):
        return ""
    return str(scheduled.get("message") or scheduled.get("reason") or "not placed")


def _gates(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The names in spec.schedulingGates: what holds the pod back from the scheduler."""
    return tuple(
        str(o.mapping(gate).get("name", ""))
        for gate in o.sequence(o.pod_spec(pod).get("schedulingGates"))
    )


class TrialInterrupted(BaseException):
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped the trial, and its pods could not all be confirmed
    gone: `signal` is what the signal raised; `run` holds those pods (`not_deleted`) and this
    run's id. A BaseException, as the signal is, so that nothing on the way up takes it for an
    error to report."""

    def __init__(self, raised: BaseException, run: TrialRun) -> None:
        super().__init__("the trial was stopped by a signal before its pods were all removed")
        self.signal = raised
        self.run = run


def run_trial(
    client: TrialClient,
    namespace: str,
    make_pods: Callable[[str], list[dict[str, Any]]],
    *,
    timeout_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
) -> TrialRun:
    """Run one trial. `make_pods(master)` gives the trial pods, rank 0 first, the others told
    `master` (rank 0's address; '' before it is known, when only rank 0 is created).
    TrialInterrupted where a signal stopped it and a pod may be left."""
    deadline = time.monotonic() + timeout_seconds
    leftovers = remove_leftovers(client, namespace)
    creates = _Creates()
    try:
        result = _trial(client, namespace, make_pods, creates, deadline, sleep)
    except BaseException as stopped:
        with _SignalsHeld() as held:
            left = _remove(client, namespace, creates, sleep, held.came)
        if left and not isinstance(stopped, Exception):
            raise TrialInterrupted(
                stopped, TrialRun(not_deleted=left, run=creates.run)
            ) from stopped
        raise
    with _SignalsHeld() as held:
        left = _remove(client, namespace, creates, sleep, held.came)
    run = replace(result, removed_leftovers=leftovers, not_deleted=left, run=creates.run)
    signalled = held.raised()
    if signalled is not None:
        # A signal while the pods were deleted: the run ends as the signal ends it.
        raise TrialInterrupted(signalled, run) if left else signalled
    return run


class _Creates:
    """The trial's creates so far: each pod's name, kept before its create is sent (a signal
    that arrives while the server stores it must not leave it behind), and when each create
    whose answer has not come was sent."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.unanswered: dict[str, float] = {}
        self.run = ""
        """This run's id, from its pods' label."""

    def sending(self, pod: Mapping[str, Any]) -> str:
        """`pod`'s name, kept: its create is about to be sent."""
        name = o.name_of(pod)
        self.names.append(name)
        self.unanswered[name] = time.monotonic()
        self.run = self.run or str(o.labels_of(pod).get(TRIAL_RUN_LABEL) or "")
        return name

    def answered(self, name: str, answer: CreateResult) -> None:
        """The server's answer to `name`'s create. A pod it stored stays to be deleted; one it
        turned down, or a create that never reached it, was not stored: nothing to delete (a
        delete where the create was not allowed would be refused too, and read as a pod left
        behind). One whose answer says neither may have been stored, or be stored yet: it
        stays unanswered (`_remove` looks for it)."""
        if isinstance(answer, Created):
            del self.unanswered[name]
        elif answer.failure in _TURNED_DOWN or not answer.reached:
            del self.unanswered[name]
            self.names.remove(name)


def _remove(
    client: TrialClient,
    namespace: str,
    creates: _Creates,
    sleep: Callable[[float], None],
    signalled: Sequence[int],
) -> tuple[tuple[str, CantRead], ...]:
    """Delete each pod created; then look for those whose create had no answer and that were
    not there to delete (`_late`). The pods a delete did not remove, and those not confirmed
    gone (NotFound after an answered create: already gone)."""
    kept: dict[str, CantRead] = {}
    unseen: list[str] = []
    for name in creates.names:
        gone = client.delete(Kind.POD, name, namespace=namespace)
        if not isinstance(gone, CantRead):
            continue
        if gone.failure is not Failure.NOT_FOUND:
            kept[name] = gone
        elif name in creates.unanswered:
            unseen.append(name)  # not stored yet, or never
    if unseen:
        kept.update(_late(client, namespace, creates, unseen, sleep, signalled))
    return tuple((name, kept[name]) for name in creates.names if name in kept)


STOPPED_LOOKING = (
    "its create had no answer, so the cluster may still store it; the trial was stopped before "
    "it could look for it to the end"
)
NOT_LOOKED_FOR = (
    "its create had no answer, so the cluster may still store it, and it could not be looked for"
)


def _late(
    client: TrialClient,
    namespace: str,
    creates: _Creates,
    unseen: Sequence[str],
    sleep: Callable[[float], None],
    signalled: Sequence[int],
) -> dict[str, CantRead]:
    """Pods whose create had no answer and that were not there to delete: looked for by this
    run's label until the server can no longer store them (WRITE_BOUND_SECONDS from each
    create), each deleted once it shows; a list made after that without them shows they were
    never stored. Those a delete did not remove, and those not confirmed gone: the list failed,
    or a signal (`signalled`) stopped the looking."""
    until = max(creates.unanswered[name] for name in unseen) + WRITE_BOUND_SECONDS
    labels = {TRIAL_RUN_LABEL: creates.run} if creates.run else {TRIAL_LABEL: "true"}
    left = set(unseen)
    kept: dict[str, CantRead] = {}
    while True:
        last = time.monotonic() >= until
        listed = client.list(Kind.POD, namespace=namespace, labels=labels)
        if not isinstance(listed, Listed):
            cant = replace(listed, reason=f"{NOT_LOOKED_FOR}: {listed.reason}")
            return kept | dict.fromkeys(left, cant)
        for name in (o.name_of(pod) for pod in listed.items):
            if name in left:
                left.discard(name)
                gone = client.delete(Kind.POD, name, namespace=namespace)
                if isinstance(gone, CantRead) and gone.failure is not Failure.NOT_FOUND:
                    kept[name] = gone
        if not left or last:
            return kept
        if signalled:
            return kept | dict.fromkeys(left, CantRead(Failure.TIMEOUT, STOPPED_LOOKING))
        sleep(min(POLL_SECONDS, max(0.0, until - time.monotonic())))


_Handler = Callable[[int, FrameType | None], object] | int | None


_HELD = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that stop a run (SIGHUP where the system has it)."""


class _SignalsHeld:
    """Ctrl-C, SIGTERM and SIGHUP held while the trial's pods are deleted, so that each gets its
    delete even when the operator presses Ctrl-C again, or the terminal goes away meanwhile (a
    delete cut off leaves a pod holding its GPUs until its own deadline, and one never placed
    for good: docs/trial.md). The signals that came are in `came`: one ends the looking for a
    late pod (`_late`), and the first is raised once the deletes are done, as the handler it
    was held from would have raised it (`raised`). A signal the process ignores (SIGHUP under
    `nohup`) stays ignored. Python runs signal handlers in the main thread only: elsewhere
    nothing is held."""

    def __init__(self) -> None:
        self.came: list[int] = []
        self._before: dict[int, _Handler] = {}

    def __enter__(self) -> "_SignalsHeld":
        if threading.current_thread() is threading.main_thread():
            for signum in _HELD:
                before = signal.getsignal(signum)
                # A handler Python did not install (None) cannot be put back.
                if before is not None and before != signal.SIG_IGN:
                    self._before[signum] = signal.signal(signum, self._hold)
        return self

    def _hold(self, signum: int, frame: FrameType | None) -> None:
        self.came.append(signum)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        for signum, handler in self._before.items():
            signal.signal(signum, handler)

    def raised(self) -> BaseException | None:
        """What the first signal held raises under the handler it was held from; None when
        none came or that handler raises nothing. One whose default ends the process (SIGTERM
        where the command line set no handler) ends it now."""
        if not self.came:
            return None
        signum = self.came[0]
        handler = self._before[signum]
        if callable(handler):
            try:
                handler(signum, None)
            except BaseException as raised:  # noqa: BLE001 - the signal's own exception
                return raised
        elif handler == signal.SIG_DFL:
            signal.raise_signal(signum)
        return None


def _trial(
    client: TrialClient,
    namespace: str,
    make_pods: Callable[[str], list[dict[str, Any]]],
    creates: _Creates,
    deadline: float,
    sleep: Callable[[float], None],
) -> TrialRun:
    """Create, wait, read back; each create kept in `creates` (a delete of a pod never stored
    answers NotFound)."""
    made, *others = make_pods("")
    left = deadline - time.monotonic()
    first = _timed(made, left, client.server_time())
    name = creates.sending(first)
    answer = client.create(Kind.POD, first, namespace=namespace, dry_run=False)
    creates.answered(name, answer)
    if not isinstance(answer, Created):
        return TrialRun(refused=answer, refused_pod=name)
    created = creates.names
    if others:
        _wait(client, created, namespace, deadline, _addressed_or_ended, sleep)
        rank0 = _pod(client, created[0], namespace) or {}
        master = _address(rank0)
        until = _wait_until(rank0, left)
        # Rank 0 never placed or already ended: the workers would have nobody to reach, and
        # would only hold more GPUs; what rank 0 shows is the measurement. Once it has an
        # address the workers are created, so their machines download the image while rank
        # 0's does, as a Job's controller creates all its pods together
        # (pkg/controller/job/job_controller.go manageJob); whether they waited for each other
        # at the same time is read from the kubelet's start times (readback.run_findings). A
        # worker that starts first waits for rank 0 until the trial's end draws near.
        for worker in make_pods(master)[1:] if master else ():
            told = with_wait_until(worker, until) if until is not None else worker
            pod = _timed(told, deadline - time.monotonic(), client.server_time())
            name = creates.sending(pod)
            answer = client.create(Kind.POD, pod, namespace=namespace, dry_run=False)
            creates.answered(name, answer)
            if not isinstance(answer, Created):
                return TrialRun(refused=answer, refused_pod=name)
    finished = _wait(client, created, namespace, deadline, _ended, sleep)
    return TrialRun(pods=tuple(_read_back(client, n, namespace, not finished) for n in created))
