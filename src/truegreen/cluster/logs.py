"""Which container logs a support bundle holds: the last lines of every failing container.

A container is failing when it has restarted (a crash loop always has), ended with a non-zero
exit code, or runs without being ready. Its previous instance's log is asked for when the kubelet
keeps one (`lastState.terminated`), its current log when an instance exists now (running or
terminated): for a container waiting after a crash the kubelet would serve the previous log
again (pkg/kubelet/kubelet_pods.go `validateContainerLogStatus`).
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from msgspec import Struct

from truegreen.cluster.reads import CantRead, KubeObject

TAIL_LINES = 200
"""Lines asked for from the end of each log (`tailLines`)."""
LIMIT_BYTES = 64 * 1024
"""Bytes one log answer holds at most (`limitBytes`). The kubelet seeks to the first of the
last `tailLines` lines and writes forward until this many bytes, cutting the line it is in
(kubernetes pkg/kubelet/kuberuntime/logs/logs.go, ReadLogs and logWriter.write): a tail longer
than this loses its NEWEST bytes, so `read_newest` asks for fewer lines until they fit."""
CONTAINER_LIMIT = 20
"""Failing containers whose logs one snapshot holds; the rest are counted, not read."""


class LogRequest(Struct, frozen=True):
    """One log to read: a container of a pod, its current or its previous instance."""

    pod: str
    container: str
    previous: bool


class Logged(Struct, frozen=True):
    """A log read that answered: its last lines as text (undecodable bytes replaced)."""

    text: str
    tail_lines: int = TAIL_LINES
    """The lines asked for."""
    reached_limit: bool = False
    """The answer is as long as `limitBytes`: the kubelet stopped there, and what the log
    holds after it (its newest bytes) is not in the text."""


LogRead = Logged | CantRead


class LogReader(Protocol):
    """Reads the last lines of one container's log (`pods/log`)."""

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
        """The log's last `tail_lines` lines, cut after their first `limit_bytes` bytes as the
        kubelet cuts them; or why it could not."""
        ...


def read_newest(read: Callable[[int], LogRead], tail_lines: int = TAIL_LINES) -> LogRead:
    """A log's newest lines: asked for with `tail_lines`, then half as many each time the
    answer stopped at the byte limit (see LIMIT_BYTES), down to the newest line alone."""
    lines = tail_lines
    while True:
        got = read(lines)
        if not isinstance(got, Logged) or not got.reached_limit or lines <= 1:
            return got
        lines //= 2


def cut_note(log: Logged, tail_lines: int = TAIL_LINES, limit_bytes: int = LIMIT_BYTES) -> str:
    """What a saved log leaves out of the lines asked for, in words; "" when nothing."""
    if log.reached_limit:
        return (
            f"the newest line is longer than {limit_bytes} bytes: only its first "
            f"{limit_bytes} bytes are kept, its end is not"
        )
    if log.tail_lines < tail_lines:
        return (
            f"only the last {log.tail_lines} lines are kept: more would be longer than "
            f"{limit_bytes} bytes"
        )
    return ""


class LogSelection(Struct, frozen=True):
    """The logs to read, and how many failing containers were left out by the cap."""

    requests: tuple[LogRequest, ...]
    left_out: int


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _statuses(pod: KubeObject) -> list[Mapping[str, Any]]:
    status = _mapping(pod.get("status"))
    found: list[Mapping[str, Any]] = []
    for field in ("initContainerStatuses", "containerStatuses"):
        entries = status.get(field)
        if isinstance(entries, list):
            found += [entry for entry in entries if isinstance(entry, Mapping)]
    return found


def _exit_code(state: object) -> object:
    return _mapping(_mapping(state).get("terminated")).get("exitCode")


def is_failing(status: Mapping[str, Any]) -> bool:
    """Whether a container status shows a container in trouble (see the module docstring)."""
    state = _mapping(status.get("state"))
    restarts = status.get("restartCount")
    return (
        (isinstance(restarts, int) and restarts > 0)
        or _exit_code(state) not in (None, 0)
        or _exit_code(status.get("lastState")) not in (None, 0)
        or ("running" in state and status.get("ready") is False)
    )


def _terminated_id(state: object) -> object:
    return _mapping(_mapping(state).get("terminated")).get("containerID")


def _known(container_id: object) -> bool:
    """Whether the runtime knows an instance by this id: only those have a log."""
    return isinstance(container_id, str) and bool(container_id)


def log_requests(status: Mapping[str, Any], pod: str) -> list[LogRequest]:
    """The logs of one container that exist, as the kubelet finds them: the previous instance
    (`lastState.terminated`), then the current one (running, or terminated)."""
    container = status.get("name")
    if not isinstance(container, str) or not container:
        return []
    state = _mapping(status.get("state"))
    found = []
    if _known(_terminated_id(status.get("lastState"))):
        found.append(LogRequest(pod, container, previous=True))
    running = isinstance(state.get("running"), Mapping) and _known(status.get("containerID"))
    if running or _known(_terminated_id(state)):
        found.append(LogRequest(pod, container, previous=False))
    return found


def select_logs(pods: Iterable[KubeObject], limit: int = CONTAINER_LIMIT) -> LogSelection:
    """The logs of the first `limit` failing containers, in the order the pods were listed."""
    requests: list[LogRequest] = []
    failing = 0
    for pod in pods:
        name = _mapping(pod.get("metadata")).get("name")
        if not isinstance(name, str) or not name:
            continue
        for status in _statuses(pod):
            wanted = log_requests(status, name) if is_failing(status) else []
            if not wanted:
                continue
            failing += 1
            if failing <= limit:
                requests += wanted
    return LogSelection(tuple(requests), max(0, failing - limit))
