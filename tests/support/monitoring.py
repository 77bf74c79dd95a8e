"""Running `truegreen monitor` (and Prometheus) as processes in tests, and waiting on them
without sleeps tuned to pass: every wait polls a condition under one generous bound."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

BOUND = 60.0
"""Seconds any awaited state may take on a slow, shared machine before the test fails."""


def wait_for(what: str, condition: Callable[[], bool], bound: float = BOUND) -> None:
    """Poll `condition` until it holds; fail naming `what` after `bound` seconds."""
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, f"waited {bound:g} s for {what}"
        time.sleep(0.05)


_DEFAULT_CTRL_C = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def with_default_ctrl_c(argv: list[str]) -> list[str]:
    """`argv` run with Ctrl-C (SIGINT) back at its default. An ignored signal is inherited
    across fork and exec (signal(7)), so a suite started with SIGINT ignored (`nohup make test
    &`, some CI runners) would start truegreen unable to hear it. The reset happens in a small
    Python that then becomes `argv` (same process id), not in a preexec_fn, which is unsafe in
    a process with threads."""
    return [sys.executable, "-c", _DEFAULT_CTRL_C, *argv]


def signal_ended(code: int) -> int:
    """Popen's returncode for a run that ended by the signal a shell reads as `code` (128 + the
    signal's number: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP): that signal's number, negated.
    truegreen ends a run a signal stopped by the signal itself (truegreen/start.py), as kubectl
    does."""
    assert code > 128, f"{code} is no status a signal gives"
    return -(code - 128)


def free_port() -> int:
    """A port nothing listens on now, on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def http_get(url: str) -> tuple[int, str]:
    """Status and body of a GET; an error status is an answer too."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


class Process:
    """A truegreen command running, its stderr lines collected as they come."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            with_default_ctrl_c([sys.executable, "-m", "truegreen", *args]),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.err.append(line.rstrip("\n"))

    def end(self, how: signal.Signals) -> tuple[int, str]:
        """Send `how`, wait for the exit; the exit code and stdout."""
        if self.process.poll() is None:
            self.process.send_signal(how)
        try:
            out, _ = self.process.communicate(timeout=BOUND)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        return self.process.returncode, out


def start_monitor(kubeconfig: Path, *args: str) -> tuple[Process, str]:
    """`truegreen monitor` on a free loopback port; the process and its base URL."""
    monitor = Process("monitor", "--kubeconfig", str(kubeconfig), "--listen", "127.0.0.1:0", *args)
    wait_for("the monitor's address", lambda: any("http://" in line for line in monitor.err))
    found = re.search(r"http://(127\.0\.0\.1:\d+)/", "\n".join(monitor.err))
    assert found is not None, monitor.err
    return monitor, f"http://{found.group(1)}"


def prometheus_binary() -> str | None:
    """Debian's prometheus, or None; under CI a missing binary is a failure, not a skip."""
    found = shutil.which("prometheus")
    if found is None and os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"):
        raise RuntimeError("prometheus is required in CI (Debian package prometheus)")
    return found


def promtool_binary() -> str | None:
    """Debian's promtool, or None; under CI a missing binary is a failure, not a skip."""
    found = shutil.which("promtool")
    if found is None and os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"):
        raise RuntimeError("promtool is required in CI (Debian package prometheus)")
    return found


class Prometheus:
    """Debian's prometheus on loopback with its own storage, killed by `stop()`: the scrape
    jobs, rule files and external labels given, evaluating rules every second."""

    def __init__(
        self,
        binary: str,
        directory: Path,
        scrape_configs: list[dict[str, object]],
        *,
        rule_files: tuple[Path, ...] = (),
        external_labels: dict[str, str] | None = None,
    ) -> None:
        import yaml

        directory.mkdir(parents=True, exist_ok=True)
        config = directory / "prometheus.yml"
        settings: dict[str, object] = {"scrape_interval": "500ms", "evaluation_interval": "1s"}
        if external_labels:
            settings["external_labels"] = external_labels
        config.write_text(
            yaml.safe_dump(
                {
                    "global": settings,
                    "rule_files": [str(p) for p in rule_files],
                    "scrape_configs": scrape_configs,
                }
            )
        )
        self.port = free_port()
        self.log = directory / "prometheus.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={directory / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--query.lookback-delta=2s",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    @property
    def address(self) -> str:
        """HOST:PORT, as a scrape target names it."""
        return f"127.0.0.1:{self.port}"

    def query(self, expression: str) -> list[dict[str, Any]]:
        """The instant query's result; empty while Prometheus is still starting."""
        try:
            status, body = http_get(
                f"http://{self.address}/api/v1/query?"
                + urllib.parse.urlencode({"query": expression})
            )
        except urllib.error.URLError:
            return []
        if status != 200:
            return []
        result: list[dict[str, Any]] = json.loads(body)["data"]["result"]
        return result

    def stop(self) -> None:
        """Kill it and wait for the exit."""
        self.process.kill()
        self.process.wait(BOUND)
