"""doctor's reads wait on one another in as few waves as their dependencies allow: discovery,
then every read that depends on nothing, then those that depend on what came back. Over a link
tens of milliseconds long each wave is a round trip, so the count of waves is what the
operator's laptop waits for (bench/wan_bench.py measures the seconds).

The fake holds every request it receives; the test lets a wave through once no request has
arrived for a while, and counts the waves. No time is asserted: only how many times the client
had to wait for answers before it could ask more.
"""

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.kueue_objects import every_queue_read
from tests.support.scenarios import healthy
from tests.support.training_kinds import ALL_GROUPS, every_training_read
from truegreen.cluster.schedule import NEAR_ANSWER, NEAR_IN_FLIGHT

QUIET = 1.0
"""A wave is complete once no request arrived for this long: the client is waiting."""


class Waves:
    """Holds each request until its wave is let through; records the waves' requests."""

    def __init__(self) -> None:
        self.waves: list[list[str]] = []
        self._held: list[str] = []
        self._open = threading.Event()
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._release, daemon=True)

    def __enter__(self) -> "Waves":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._open.set()
        self._thread.join(10)

    def hook(self, _: FakeApiServer, method: str, path: str) -> None:
        with self._lock:
            self._held.append(f"{method} {path}")
            self._last = time.monotonic()
            gate = self._open
        gate.wait(60)

    def _release(self) -> None:
        while not self._done.is_set():
            time.sleep(0.05)
            with self._lock:
                quiet = time.monotonic() - self._last >= QUIET
                if not self._held or not quiet:
                    continue
                self.waves.append(self._held)
                self._held = []
                gate, self._open = self._open, threading.Event()
            gate.set()


def _count(tmp_path: Path, *groups: str, queued: bool = False) -> list[list[str]]:
    with FakeApiServer() as server, Waves() as waves:
        server.install(*groups)
        now = datetime.now(UTC)
        server.add(*healthy(now), *every_training_read(now))
        if queued:
            server.add(*every_queue_read(now))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        server.request_hooks.append(waves.hook)
        result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json")
        server.request_hooks.remove(waves.hook)
        assert result.exit_code in (0, 2), result.stderr
        return waves.waves


def test_a_namespace_of_every_training_kind_is_read_in_three_waves(tmp_path: Path) -> None:
    waves = _count(tmp_path, *ALL_GROUPS)
    assert waves[0] == ["GET /apis"], "discovery goes first, alone"
    assert len(waves[1]) >= 16, "precondition: the independent lists go out together"
    every = [r for wave in waves for r in wave]
    assert any("trainingruntimes" in r for r in every), "precondition: runtimes read"
    assert len(waves) == 3, [[r.split("?")[0] for r in wave] for wave in waves]


def test_a_job_handed_to_a_queue_adds_no_wave(tmp_path: Path) -> None:
    """Kueue's lists, its cohorts and admission checks included, go out as soon as the job
    names its queue (the lists one of them needs are already under way)."""
    waves = _count(tmp_path, *ALL_GROUPS, "kueue.x-k8s.io", queued=True)
    every = [r.split("?")[0] for wave in waves for r in wave]
    assert any(r.endswith("/cohorts") for r in every), "precondition: cohorts read"
    assert len(waves) == 3, [[r.split("?")[0] for r in wave] for wave in waves]


HELD = 0.02
"""Seconds the fake holds each read after discovery, so that the reads in flight together
overlap at the server whatever this machine's speed."""


def _most_at_once(tmp_path: Path, first_answer_delay: float | None) -> int:
    """The most reads one doctor run had at the server at once, past discovery (whose answer
    comes at once, or after `first_answer_delay` seconds)."""
    lock = threading.Lock()
    now_in, most = [0], [0]

    def hook(_: FakeApiServer, method: str, path: str) -> None:
        if path == "/apis":
            return
        with lock:
            now_in[0] += 1
            most[0] = max(most[0], now_in[0])
        time.sleep(HELD)
        with lock:
            now_in[0] -= 1

    tmp_path.mkdir(parents=True, exist_ok=True)
    with FakeApiServer() as server:
        now = datetime.now(UTC)
        server.add(*healthy(now))
        if first_answer_delay is not None:
            server.inject(Fault.DELAY, "^/apis$", delay=first_answer_delay, count=1)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        server.request_hooks.append(hook)
        result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests("GET")) > 2 * NEAR_IN_FLIGHT, "precondition: many reads"
    return most[0]


def test_a_server_that_answers_at_once_is_read_few_reads_at_a_time(tmp_path: Path) -> None:
    """Discovery answered within NEAR_ANSWER: NEAR_IN_FLIGHT reads at a time, since more would
    only add threads and connections. Whether the fake answered that fast depends on this
    machine's load, so one run of five that did is enough."""
    seen = [_most_at_once(tmp_path / str(run), None) for run in range(5)]
    assert min(seen) == NEAR_IN_FLIGHT, seen


def test_a_server_far_away_is_read_many_reads_at_a_time(tmp_path: Path) -> None:
    """Discovery answered after 50 ms, ten times NEAR_ANSWER: the reads that depend on nothing
    go out together (the waves above)."""
    assert NEAR_ANSWER * 10 == 0.05, "precondition: the delay is far past NEAR_ANSWER"
    assert _most_at_once(tmp_path, 0.05) > 2 * NEAR_IN_FLIGHT


def test_a_namespace_read_again_sends_discovery_with_the_lists(tmp_path: Path) -> None:
    """The second run remembers what the server served (cluster/discovery_memory.py): discovery
    goes out with the lists, the optional training kinds' lists included, and the reads that
    depend on what came back follow; one wave fewer, the same report."""
    with FakeApiServer() as server, Waves() as waves:
        server.install(*ALL_GROUPS)
        now = datetime.now(UTC)
        server.add(*healthy(now), *every_training_read(now))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        args = ("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json")
        server.request_hooks.append(waves.hook)
        first = run_cli(*args)
        cold = len(waves.waves)
        second = run_cli(*args)
        server.request_hooks.remove(waves.hook)
    warm = waves.waves[cold:]
    shown = [[r.split("?")[0] for r in wave] for wave in warm]
    assert cold == 3, "precondition: the first run reads discovery alone"
    assert "GET /apis" in warm[0], shown
    assert any("/pytorchjobs" in r for r in warm[0]), f"remembered kinds listed at once: {shown}"
    assert len(warm) == 2, shown
    assert second.exit_code == first.exit_code
    assert second.stdout == first.stdout
