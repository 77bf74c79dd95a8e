"""`truegreen monitor` and `doctor --watch` as processes against the fake API server: the
endpoints, the Events on a verdict change, and how each one ends."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import NAMESPACE, healthy

BOUND = 60.0
"""Seconds any awaited state may take on a slow, shared machine before the test fails."""


def wait_for(what: str, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"waited {BOUND:g} s for {what}"
        time.sleep(0.05)


class Process:
    """A truegreen command running, its stderr lines collected as they come."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "NO_COLOR": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "truegreen", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.err.append(line.rstrip("\n"))

    def end(self, how: signal.Signals) -> tuple[int, str]:
        self.process.send_signal(how)
        out, _ = self.process.communicate(timeout=BOUND)
        return self.process.returncode, out


@pytest.fixture
def cluster(fake_api: FakeApiServer, tmp_path: Path) -> Path:
    fake_api.watch_bookmark_seconds = 0.5
    for obj in healthy(datetime.now(UTC)):
        fake_api.add(obj)
    return fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _verdict(base: str) -> float | None:
    found = re.search(
        r'^truegreen_verdict\{namespace="train"\} (\S+)$', _get(base + "/metrics")[1], re.M
    )
    return float(found.group(1)) if found else None


def _events(fake_api: FakeApiServer) -> list[str]:
    return [str(e["reason"]) for e in fake_api.list_objects("Event", NAMESPACE)]


def _pend_the_claim(fake_api: FakeApiServer) -> None:
    claim = fake_api.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
    assert claim is not None
    claim["status"] = {"phase": "Pending"}
    fake_api.update_object(claim)


def test_monitor_serves_the_verdict_writes_an_event_per_change_and_ends_on_sigterm(
    fake_api: FakeApiServer, cluster: Path
) -> None:
    monitor = Process(
        "monitor",
        *("--kubeconfig", str(cluster), "--listen", "127.0.0.1:0"),
        *("--min-interval", "0.2", "--interval", "5", "--max-age", "30"),
    )
    try:
        wait_for("the address line", lambda: any("http://" in line for line in monitor.err))
        found = re.search(r"http://(127\.0\.0\.1:\d+)/", "\n".join(monitor.err))
        assert found is not None, monitor.err
        base = f"http://{found.group(1)}"
        assert _get(base + "/healthz") == (200, "ok\n")
        wait_for("/readyz", lambda: _get(base + "/readyz")[0] == 200)
        assert _verdict(base) == 0.0
        status, page = _get(base + "/")
        assert status == 200
        assert "READY</span> Ready: training can run." in page
        wait_for("the first Event", lambda: _events(fake_api) == ["TrainingReady"])
        _pend_the_claim(fake_api)
        wait_for("verdict 2", lambda: _verdict(base) == 2.0)
        assert (
            'truegreen_check_status{check="storage",namespace="train"} 2.0'
            in _get(base + "/metrics")[1]
        )
        wait_for(
            "the second Event",
            lambda: sorted(_events(fake_api)) == ["TrainingNotReady", "TrainingReady"],
        )
        assert _get(base + "/nothing-here")[0] == 404
    finally:
        code, _ = monitor.end(signal.SIGTERM)
    assert code == 0, monitor.err
    changes = [line for line in monitor.err if re.match(r"truegreen: \d{4}-", line)]
    assert [line.split(" ", 2)[2].split(":")[0] for line in changes] == ["ready", "not-ready"]


def test_monitor_refuses_contradictory_intervals_as_bad_usage(cluster: Path) -> None:
    result = subprocess.run(
        [
            *(sys.executable, "-m", "truegreen", "monitor", "--kubeconfig", str(cluster)),
            *("--interval", "60", "--max-age", "30"),
        ],
        capture_output=True,
        text=True,
        timeout=BOUND,
        check=False,
    )
    assert (result.returncode, result.stdout) == (64, "")
    assert result.stderr == (
        "truegreen: --max-age 30 must be longer than --interval 60: a value would read unknown "
        "between two evaluations\n"
    )


def _evaluated_with_storage_type(fake_api: FakeApiServer) -> bool:
    # The storage type is read only while a claim waits: the evaluation saw the pending claim.
    return bool(fake_api.requests("GET", "/storageclasses/standard$"))


def test_doctor_watch_ends_on_ctrl_c_with_the_last_verdict_s_code(
    fake_api: FakeApiServer, cluster: Path
) -> None:
    watching = Process("doctor", "--watch", "--kubeconfig", str(cluster))
    try:
        wait_for("a first evaluation", lambda: bool(fake_api.requests("GET", "/secrets/")))
        code, out = watching.end(signal.SIGINT)
    finally:
        if watching.process.poll() is None:
            watching.process.kill()
    assert code == 0, watching.err
    assert "READY  Ready: training can run." in out
    assert re.search(r"Last change \d\d:\d\d:\d\d; checked \d\d:\d\d:\d\d\. Ctrl-C to stop\.", out)
    _pend_the_claim(fake_api)
    watching = Process("doctor", "--watch", "--kubeconfig", str(cluster))
    try:
        wait_for("the pending claim", lambda: _evaluated_with_storage_type(fake_api))
        code, out = watching.end(signal.SIGINT)
    finally:
        if watching.process.poll() is None:
            watching.process.kill()
    assert code == 2, watching.err
    assert "NOT READY" in out
