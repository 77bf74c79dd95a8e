"""kubectl is the oracle for the fake's watch: `kubectl get -w` decodes its chunked event stream
as it decodes kube-apiserver's, selectors and all, and `get --raw` shows the wire."""

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")
BOUND = 30.0
COLUMNS = "custom-columns=EVENT:.type,NAME:.object.metadata.name,PHASE:.object.status.phase"


def _pod(name: str, phase: str = "Running") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "t"},
        "status": {"phase": phase},
    }


def _wait(what: str, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"waited {BOUND:g} s for {what}"
        time.sleep(0.02)


class Watching:
    """`kubectl get … -w` running, its output lines collected as they come."""

    def __init__(self, kubeconfig: Path, *args: str) -> None:
        assert KUBECTL is not None, "kubectl is required (Debian: kubernetes-client)"
        self.process = subprocess.Popen(
            [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(" ".join(line.split()))

    def stop(self) -> str:
        self.process.terminate()
        _, err = self.process.communicate(timeout=BOUND)
        return err


def _watching(server: FakeApiServer) -> bool:
    return any(r.query.get("watch") == "true" for r in server.requests("GET", "/pods$"))


def test_kubectl_get_watch_reads_every_change_from_the_stream(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.add(_pod("a"), _pod("b"))
    watching = Watching(
        kubeconfig, "get", "pods", "-n", "t", "-w", "--output-watch-events", "-o", COLUMNS
    )
    try:
        _wait("kubectl to start watching", lambda: _watching(fake_api))
        changed = fake_api.get_object("Pod", "a", "t")
        assert changed is not None
        changed["status"]["phase"] = "Succeeded"
        fake_api.update_object(changed)
        fake_api.delete_object("Pod", "b", "t")
        fake_api.add(_pod("c"))
        _wait("five lines of events", lambda: len(watching.lines) >= 6)
    finally:
        err = watching.stop()
    assert watching.lines == [
        "EVENT NAME PHASE",
        "ADDED a Running",
        "ADDED b Running",
        "MODIFIED a Succeeded",
        "DELETED b Running",
        "ADDED c Running",
    ], err


def test_kubectl_sees_a_pod_leave_a_field_selection_as_deleted(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.add(_pod("a"))
    watching = Watching(
        kubeconfig,
        *("get", "pods", "-n", "t", "-w", "--output-watch-events", "-o", COLUMNS),
        *("--field-selector", "status.phase=Running"),
    )
    try:
        _wait("kubectl to start watching", lambda: _watching(fake_api))
        changed = fake_api.get_object("Pod", "a", "t")
        assert changed is not None
        changed["status"]["phase"] = "Failed"
        fake_api.update_object(changed)
        _wait("the deletion", lambda: len(watching.lines) >= 3)
    finally:
        err = watching.stop()
    assert watching.lines == ["EVENT NAME PHASE", "ADDED a Running", "DELETED a Running"], err


def test_the_wire_bookmarks_a_timeout_and_a_410_as_kubectl_get_raw_shows_them(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    assert KUBECTL is not None, "kubectl is required (Debian: kubernetes-client)"
    fake_api.watch_bookmark_seconds = 0.3
    fake_api.add(_pod("a"))
    version = fake_api.get_object("Pod", "a", "t")["metadata"]["resourceVersion"]  # type: ignore[index]

    def raw(query: str) -> list[dict[str, object]]:
        result = subprocess.run(
            [
                KUBECTL,
                "--kubeconfig",
                str(kubeconfig),
                "get",
                "--raw",
                f"/api/v1/namespaces/t/pods?{query}",
            ],
            capture_output=True,
            text=True,
            timeout=BOUND,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]

    idle = raw(f"watch=1&resourceVersion={version}&allowWatchBookmarks=true&timeoutSeconds=1")
    assert idle, "a one-second watch with bookmarks every 0.3 s ended without one"
    assert {e["type"] for e in idle} == {"BOOKMARK"}
    assert idle[0]["object"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": version},
    }
    fake_api.compact()
    expired = raw(f"watch=1&resourceVersion={version}&timeoutSeconds=5")
    assert expired == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"too old resource version: {version} ({int(version) + 1})",
                "reason": "Expired",
                "code": 410,
            },
        }
    ]
