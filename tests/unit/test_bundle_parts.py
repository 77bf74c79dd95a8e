"""What a support bundle adds to doctor's reads: which container logs it asks for, the newest
events it keeps, and the one-line summary it prints."""

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from truegreen.cluster.archive import write_archive
from truegreen.cluster.logs import (
    Logged,
    LogRead,
    LogRequest,
    is_failing,
    log_requests,
    read_newest,
    select_logs,
)
from truegreen.cluster.reads import CantRead, ReadFailure
from truegreen.cluster.recent_events import MESSAGE_LIMIT, EventView, NewestEvents, last_seen
from truegreen.cluster.snapshot import Capture, SnapshotInfo, render, write_folder
from truegreen.doctor.command.request import SnapshotSummary, default_archive_name
from truegreen.doctor.present.snapshot_report import exit_code, headline, to_json, to_text
from truegreen.errors import ConnectionSetupError
from truegreen.exitcodes import ExitCode

RUNNING = {"running": {"startedAt": "2025-01-01T00:00:00Z"}}


def _status(**fields: Any) -> dict[str, Any]:
    return {"name": "api", "ready": True, "restartCount": 0, "state": RUNNING, **fields}


def _done(exit_code: int, container_id: str = "containerd://1") -> dict[str, Any]:
    return {"terminated": {"exitCode": exit_code, "containerID": container_id}}


@pytest.mark.parametrize(
    ("status", "failing"),
    [
        (_status(), False),
        (_status(restartCount=1), True),
        (_status(restartCount="3"), False),  # garbage is not a restart
        (_status(ready=False), True),  # running, not ready
        (_status(ready=None), False),
        (_status(state={"waiting": {"reason": "ContainerCreating"}}, ready=False), False),
        (_status(state=_done(0), ready=False), False),  # finished its work
        (_status(state=_done(2), ready=False), True),
        (_status(lastState=_done(137)), True),
        (_status(lastState=_done(0)), False),
        (_status(state="garbage", lastState=["x"]), False),
    ],
)
def test_which_containers_are_failing(status: dict[str, Any], failing: bool) -> None:
    assert is_failing(status) is failing


@pytest.mark.parametrize(
    ("status", "wanted"),
    [
        # Crash-looping: the previous instance only (the kubelet would serve it again as current).
        (
            _status(state={"waiting": {"reason": "CrashLoopBackOff"}}, lastState=_done(1)),
            [True],
        ),
        (_status(containerID="containerd://2", lastState=_done(1)), [True, False]),
        (_status(containerID="containerd://2"), [False]),
        (_status(), []),  # running without an id: the runtime has no such instance
        (_status(containerID=""), []),
        (_status(state=_done(1)), [False]),
        (_status(state=_done(1, "")), []),
        (_status(lastState=_done(1, "")), []),
        (_status(state={"running": "x"}, containerID="containerd://2"), []),
        (_status(name=""), []),
        (_status(name=7, lastState=_done(1)), []),
    ],
)
def test_the_logs_asked_for_are_the_ones_the_kubelet_has(
    status: dict[str, Any], wanted: list[bool]
) -> None:
    assert log_requests(status, "pod-1") == [LogRequest("pod-1", "api", p) for p in wanted]


def _pod(name: object, *statuses: dict[str, Any], init: tuple[dict[str, Any], ...] = ()) -> Any:
    return {
        "metadata": {"name": name},
        "status": {"containerStatuses": list(statuses), "initContainerStatuses": list(init)},
    }


def test_the_first_failing_containers_are_read_up_to_the_cap() -> None:
    crashed = _status(restartCount=3, containerID="containerd://9", lastState=_done(1))
    healthy = _status(containerID="containerd://8")
    init = {**crashed, "name": "setup"}
    pods = [
        _pod("a", healthy, crashed, init=(init,)),
        _pod("b", crashed, "garbage"),  # type: ignore[arg-type]
        _pod("", crashed),  # nameless: no log can be asked for
        {"metadata": "x", "status": []},
        _pod("c", _status(restartCount=1)),  # failing, but no instance has a log
        _pod("d", crashed),
    ]
    selection = select_logs(pods, limit=3)
    assert selection.requests == (
        LogRequest("a", "setup", True),
        LogRequest("a", "setup", False),
        LogRequest("a", "api", True),
        LogRequest("a", "api", False),
        LogRequest("b", "api", True),
        LogRequest("b", "api", False),
    )
    assert selection.left_out == 1
    assert select_logs(pods).left_out == 0


def _event(name: str, **fields: Any) -> EventView:
    return msgspec.convert({"metadata": {"name": name}, **fields}, EventView)


def test_a_log_is_asked_for_with_half_the_lines_while_the_answer_stops_at_the_limit() -> None:
    """The kubelet stops writing at `limitBytes` (pkg/kubelet/kuberuntime/logs/logs.go
    logWriter.write), so an answer that long lacks the newest lines: ask for fewer, down to
    one; a read that fails on the way is the answer."""
    asked: list[int] = []

    def answers(fit: int, fails_at: int = 0) -> Callable[[int], LogRead]:
        def read(lines: int) -> LogRead:
            asked.append(lines)
            if lines == fails_at:
                return CantRead(ReadFailure.FORBIDDEN, "no")
            return Logged(f"{lines}", lines, reached_limit=lines > fit)

        return read

    assert read_newest(answers(fit=60)) == Logged("50", 50)
    assert asked == [200, 100, 50]
    asked.clear()
    assert read_newest(answers(fit=0)) == Logged("1", 1, reached_limit=True)
    assert asked == [200, 100, 50, 25, 12, 6, 3, 1]
    asked.clear()
    assert read_newest(answers(fit=0, fails_at=100)) == CantRead(ReadFailure.FORBIDDEN, "no")
    assert asked == [200, 100]


def test_last_seen_prefers_the_series_then_the_last_time_then_the_event_time() -> None:
    full = _event(
        "e",
        series={"lastObservedTime": "2025-01-04T00:00:00.000000Z"},
        lastTimestamp="2025-01-03T00:00:00Z",
        eventTime="2025-01-02T00:00:00.000000Z",
        metadata={"creationTimestamp": "2025-01-01T00:00:00Z"},
    )
    assert last_seen(full) == "2025-01-04T00:00:00.000000Z"
    assert last_seen(_event("e", lastTimestamp="2025-01-03T00:00:00Z", eventTime="x")) == (
        "2025-01-03T00:00:00Z"
    )
    assert last_seen(_event("e", eventTime="2025-01-02T00:00:00.000000Z")) == (
        "2025-01-02T00:00:00.000000Z"
    )
    created = msgspec.convert(
        {"metadata": {"creationTimestamp": "2025-01-01T00:00:00Z"}}, EventView
    )
    assert last_seen(created) == "2025-01-01T00:00:00Z"
    assert last_seen(_event("e", lastTimestamp=7, series="x")) == ""


def test_the_newest_events_are_kept_newest_first_and_counted() -> None:
    fold = NewestEvents(limit=3)
    for minute in [5, 1, 9, 3, 7]:
        fold.add(_event(f"e{minute}", lastTimestamp=f"2025-01-01T00:0{minute}:00Z", reason="R"))
    fold.add(_event("garbled", lastTimestamp="yesterday"))
    fold.add(_event("offset", lastTimestamp="2025-01-01T01:08:00+01:00"))  # 00:08 UTC
    summary = fold.summary()
    assert summary["total"] == 7
    assert [e["last_seen"] for e in summary["events"]] == [
        "2025-01-01T00:09:00Z",
        "2025-01-01T01:08:00+01:00",
        "2025-01-01T00:07:00Z",
    ]


def test_an_event_keeps_what_a_reader_needs_capped_and_redacted() -> None:
    fold = NewestEvents()
    fold.add(
        _event(
            "e",
            type="Warning",
            reason="BackOff",
            message="login with password=hunter2 failed " + "x" * MESSAGE_LIMIT,
            involvedObject={"kind": "Pod", "name": "api-1"},
            count=4,
            lastTimestamp="2025-01-01T00:00:00Z",
            source={"component": "kubelet"},
            managedFields=[{"secret": "dropped"}],
        )
    )
    fold.add(
        _event(
            "f",
            involvedObject="garbage",
            series={"count": 2},
            reportingComponent="controller",
            message=["a", "list"],
            eventTime="0001-01-01T00:00:00+01:00",  # before the earliest UTC time
        )
    )
    (event, other) = fold.summary()["events"]
    assert event["message"].startswith("login with password=<redacted> failed xxx")
    assert event["message"].endswith("…")
    assert len(event["message"]) == MESSAGE_LIMIT + 1, "redacted first, then capped"
    del event["message"]
    assert event == {
        "last_seen": "2025-01-01T00:00:00Z",
        "type": "Warning",
        "reason": "BackOff",
        "object": "Pod/api-1",
        "count": "4",
        "source": "kubelet",
    }
    assert other == {
        "last_seen": "0001-01-01T00:00:00+01:00",
        "count": "2",
        "source": "controller",
    }


def _summary(**fields: Any) -> SnapshotSummary:
    values: dict[str, Any] = {
        "saved_to": Path("bundle.tar.gz"),
        "folder": False,
        "namespace": "train",
        "reads": 16,
        "could_not_read": (),
        "events": 37,
        "logs": 2,
        "logs_left_out": 0,
    }
    return SnapshotSummary(**{**values, **fields})


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        (
            {},
            "Saved 16 reads of 'train' to bundle.tar.gz (37 events, 2 logs of failing containers).",
        ),
        (
            {"reads": 1, "events": 1, "logs": 1, "could_not_read": ("list nodes: no permission",)},
            "Saved 1 read of 'train' to bundle.tar.gz (1 event, 1 log of failing containers), "
            "1 could not be read.",
        ),
        (
            {"events": None, "logs": 0, "logs_left_out": 1, "could_not_read": ("a", "b")},
            "Saved 16 reads of 'train' to bundle.tar.gz (1 more failing container left out), "
            "2 could not be read.",
        ),
        (
            {"events": None, "logs": 0, "logs_left_out": 2},
            "Saved 16 reads of 'train' to bundle.tar.gz (2 more failing containers left out).",
        ),
        (
            {"events": None, "logs": 0, "namespace": "t\x1b[2J"},
            "Saved 16 reads of 't\\x1b[2J' to bundle.tar.gz.",
        ),
        ({"events": 0, "logs": 0}, "Saved 16 reads of 'train' to bundle.tar.gz (0 events)."),
    ],
)
def test_the_summary_line_counts_in_plain_words(fields: dict[str, Any], line: str) -> None:
    assert headline(_summary(**fields)) == line


def test_a_failed_read_makes_the_bundle_incomplete_exit_3() -> None:
    incomplete = _summary(
        could_not_read=("list nodes: no permission (403)",),
        failed_plainly=("no permission to read the machines",),
    )
    assert exit_code(incomplete) is ExitCode.UNKNOWN
    assert exit_code(_summary()) is ExitCode.GOOD
    assert headline(incomplete) == (
        "Saved 16 reads of 'train' to bundle.tar.gz (37 events, 2 logs of failing containers), "
        "1 could not be read: no permission to read the machines."
    )
    assert to_text(incomplete, verbose=True) == [
        headline(incomplete),
        "Check it with `truegreen doctor --snapshot bundle.tar.gz`.",
        "  could not read: list nodes: no permission (403)",
    ]
    assert to_text(incomplete, verbose=False) == [
        headline(incomplete),
        "Check it with `truegreen doctor --snapshot bundle.tar.gz`.",
    ]
    assert to_text(_summary(), verbose=False) == [
        headline(_summary()),
        "Check it with `truegreen doctor --snapshot bundle.tar.gz`.",
    ]
    document = to_json(incomplete)
    assert (document["verdict"], document["exit_code"], document["failed_reads"]) == (
        "incomplete",
        3,
        1,
    )
    assert (to_json(_summary())["verdict"], to_json(_summary(folder=True))["format"]) == (
        "saved",
        "folder",
    )


def test_the_json_document_holds_every_documented_field() -> None:
    """docs/snapshot.md lists these fields; a reader's program keys on each. The headline
    has the shape every command's headline has: code, text, remedy."""
    summary = _summary(
        folder=True,
        saved_to=Path("bundle"),
        could_not_read=("list nodes: no permission (403)", "list events: timed out"),
        events=None,
        logs_left_out=3,
    )
    assert to_json(summary) == {
        "schema_version": 1,
        "verdict": "incomplete",
        "exit_code": 3,
        "headline": {
            "code": "incomplete",
            "text": headline(summary),
            "remedy": "Check it with `truegreen doctor --snapshot bundle`.",
        },
        "saved_to": "bundle",
        "format": "folder",
        "namespace": "train",
        "reads": 16,
        "failed_reads": 2,
        "could_not_read": ["list nodes: no permission (403)", "list events: timed out"],
        "events": None,
        "logs": 2,
        "logs_left_out": 3,
    }


def test_a_setup_failure_is_the_shared_failure_document() -> None:
    from truegreen.doctor.present.snapshot_report import failure_json
    from truegreen.failure import Failure

    error = ConnectionSetupError("no kubeconfig", todo="set KUBECONFIG")
    assert failure_json(Failure.of(error)) == {
        "schema_version": 1,
        "exit_code": 3,
        "headline": {"code": "setup-failed", "text": "no kubeconfig", "remedy": "set KUBECONFIG"},
        "verdict": "unknown",
        "saved_to": None,
        "format": None,
        "namespace": None,
        "reads": None,
        "failed_reads": None,
        "could_not_read": None,
        "events": None,
        "logs": None,
        "logs_left_out": None,
    }


def test_the_default_archive_name_says_what_and_when() -> None:
    taken = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert (
        default_archive_name("train", taken) == "truegreen-snapshot-train-20250102T030405Z.tar.gz"
    )
    assert (
        default_archive_name("../x y", taken) == "truegreen-snapshot-..-x-y-20250102T030405Z.tar.gz"
    )
    assert (
        default_archive_name("train", taken, 2)
        == "truegreen-snapshot-train-20250102T030405Z-2.tar.gz"
    )


def test_snapshot_yaml_keeps_no_userinfo_of_the_server_or_secret_in_a_setting() -> None:
    """The server URL of a kubeconfig may carry a login (`https://user:pass@host`)."""
    info = SnapshotInfo(
        "train",
        datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
        "https://admin:seed-server-pass@cluster.example:6443",
        {"job_requests": "cpu=1", "credentials_secret": "backend:password=seed-setting"},
    )
    files = dict(render(Capture(info, [])))
    meta = yaml.safe_load(files["snapshot.yaml"])
    assert meta["server"] == "https://<redacted>@cluster.example:6443"
    assert meta["settings"] == {
        "job_requests": "cpu=1",
        "credentials_secret": "backend:password=<redacted>",
    }
    assert list(files) == ["snapshot.yaml"]


class _DiskFull(Sequence[tuple[str, bytes]]):
    """Files whose second one cannot be written, as when the disk fills mid-bundle."""

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[tuple[str, bytes]]:
        yield ("snapshot.yaml", b"truegreen_snapshot: 1\n")
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("folder", [False, True], ids=["archive", "folder"])
def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, folder: bool) -> None:
    target = tmp_path / ("bundle" if folder else "bundle.tar.gz")

    def write() -> None:
        if folder:
            write_folder(target, _DiskFull())
        else:
            write_archive(target, "bundle", _DiskFull(), 0)

    with pytest.raises(OSError, match="No space left"):
        write()
    assert sorted(tmp_path.iterdir()) == []
