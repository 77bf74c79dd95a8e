"""truegreen monitor at cluster scale, next to re-running doctor every interval.

A fake API server holds the synthetic cluster (BENCH_MONITOR_SIZES, default 3000 and 30000 pods
on pods/30 machines) while a writer changes BENCH_MONITOR_RATE pods a second (default 10). The
monitor runs as its own process (--min-interval 1, the default --interval 60); after its first
evaluation and a warm-up, a window of BENCH_MONITOR_SECONDS (default 60) measures its CPU (from
/proc), the API requests it sends, and afterwards its peak RSS (VmHWM). Then a dataset volume is
flipped between pending and bound five times and the time until /metrics shows each change is
taken. doctor is run the same way once per size: its CPU and requests, per interval of 60 s,
are what running it every minute would cost.

The fleet row (`bench_monitor_fleet`, `python -m bench.monitor_bench --fleet`, or BENCH_PARTS=monitor-fleet
in bench/run.py) runs one monitor over 40 training namespaces and one of one namespace on the
same cluster, and writes their CPU ratio as `monitor.fleet_cpu_ratio` and their ratio of API
requests per minute as `monitor.fleet.requests_ratio` (the targets: both within 2x).
"""

import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy

from bench.cluster import synthetic_cluster
from bench.measure import installed

INTERVAL = 60.0
MIN_INTERVAL = 1.0
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _peak_rss_mb(pid: int) -> float:
    found = re.search(r"^VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(found.group(1)) / 1024 if found else 0.0


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except OSError:
        return 0, ""


def _evaluations(base: str) -> float:
    found = re.search(
        r"^truegreen_evaluation_duration_seconds_count(?:\{[^}]*\})? (\S+)$",
        _get(base + "/metrics")[1],
        re.M,
    )
    return float(found.group(1)) if found else 0.0


def _verdict(base: str) -> str | None:
    found = re.search(
        r'^truegreen_verdict\{(?:cluster="[^"]*",)?namespace="train"\} (\S+)$',
        _get(base + "/metrics")[1],
        re.M,
    )
    return found.group(1) if found else None


def _wait(condition: Any, bound: float, what: str) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > bound:
            raise RuntimeError(f"bench: waited {bound:g} s for {what}")
        time.sleep(0.02)
    return time.monotonic() - start


class _Writer(threading.Thread):
    """Changes `rate` pods a second outside the training namespace, as kubelets and
    controllers do most of the time: status and annotations, not requests or placement."""

    def __init__(self, server: FakeApiServer, names: list[tuple[str, str]], rate: float) -> None:
        super().__init__(daemon=True)
        self.server, self.names, self.rate = server, names, rate
        self.stopping = threading.Event()
        self.written = 0

    def run(self) -> None:
        rng = random.Random(11)
        step = 1 / self.rate
        next_at = time.monotonic()
        while not self.stopping.is_set():
            namespace, name = rng.choice(self.names)
            pod = self.server.get_object("Pod", name, namespace)
            if pod is not None:
                pod["metadata"].setdefault("annotations", {})["bench/tick"] = str(self.written)
                for status in pod["status"].get("containerStatuses", []):
                    status["restartCount"] = self.written
                self.server.update_object(pod)
                self.written += 1
            next_at += step
            self.stopping.wait(max(0.0, next_at - time.monotonic()))


def _flip(server: FakeApiServer, phase: str) -> None:
    claim = server.get_object("PersistentVolumeClaim", "datasets", "train")
    assert claim is not None
    claim["status"] = {"phase": phase}
    server.update_object(claim)


def _doctor_once(kubeconfig: Path, server: FakeApiServer) -> dict[str, float]:
    before_log = len(server.log)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        # No registry is asked: the images name registry.example.com, which nothing serves here.
        [
            installed("truegreen"),
            "doctor",
            "--kubeconfig",
            str(kubeconfig),
            "--no-registry",
            "-o",
            "json",
        ],
        capture_output=True,
        check=False,
        timeout=600,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": seconds, "cpu_seconds": cpu, "requests": len(server.log) - before_log}


def bench_size(pods: int, rate: float, window: float) -> dict[str, Any]:
    """The monitor and doctor-every-interval at one cluster size."""
    objects = synthetic_cluster(pods)
    names = [
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o["kind"] == "Pod" and o["metadata"]["namespace"] != "train"
    ]
    with FakeApiServer() as server, tempfile.TemporaryDirectory() as scratch:
        server.add(*objects)
        del objects
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
        doctor = _doctor_once(kubeconfig, server)
        started = time.monotonic()
        monitor = subprocess.Popen(
            [
                *(installed("truegreen"), "monitor", "--kubeconfig", str(kubeconfig)),
                *("--listen", "127.0.0.1:0", "--no-events", "--min-interval", str(MIN_INTERVAL)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert monitor.stderr is not None
            line = monitor.stderr.readline()
            found = re.search(r"http://(127\.0\.0\.1:\d+)/", line)
            if found is None:
                raise RuntimeError(f"bench: the monitor said {line!r}")
            threading.Thread(target=monitor.stderr.read, daemon=True).start()
            base = f"http://{found.group(1)}"
            _wait(lambda: _get(base + "/readyz")[0] == 200, 600, "the first evaluation")
            ready = time.monotonic() - started
            writer = _Writer(server, names, rate)
            writer.start()
            time.sleep(10)  # warm-up: the second evaluation, the first watch renewals
            cpu_before, log_before, at = (
                _cpu_seconds(monitor.pid),
                len(server.log),
                time.monotonic(),
            )
            written_before = writer.written
            evaluations_before = _evaluations(base)
            time.sleep(window)
            elapsed = time.monotonic() - at
            written = writer.written - written_before
            evaluations = _evaluations(base) - evaluations_before
            cpu = _cpu_seconds(monitor.pid) - cpu_before
            window_log = server.log[log_before:]
            by_verb: dict[str, int] = {}
            for record in window_log:
                verb = "watch" if "watch" in record.query else record.method.lower()
                by_verb[verb] = by_verb.get(verb, 0) + 1
            latencies = []
            for phase, verdict in [("Pending", "2.0"), ("Bound", "0.0")] * 3:
                _flip(server, phase)
                latencies.append(
                    _wait(lambda v=verdict: _verdict(base) == v, 60, f"verdict {verdict}")
                )
            writer.stopping.set()
            peak = _peak_rss_mb(monitor.pid)
        finally:
            monitor.terminate()
            monitor.wait(60)
    monitor_requests = len(window_log) * 60 / elapsed
    doctor_requests = doctor["requests"] * 60 / INTERVAL
    monitor_cpu = cpu / elapsed
    doctor_cpu = doctor["cpu_seconds"] / INTERVAL
    return {
        "pods": pods,
        "machines": max(3, pods // 30),
        "pod_updates_per_second": round(written / elapsed, 1),
        "window_seconds": round(elapsed, 1),
        "first_evaluation_seconds": round(ready, 2),
        "cpu_share_of_a_core": round(monitor_cpu, 4),
        "evaluations_per_minute": round(evaluations * 60 / elapsed, 1),
        "api_requests_per_minute": round(monitor_requests, 1),
        "api_requests_by_verb": by_verb,
        "peak_rss_mb": round(peak, 1),
        "change_to_metrics_seconds": {
            "median": round(sorted(latencies)[len(latencies) // 2], 3),
            "max": round(max(latencies), 3),
        },
        "doctor_every_interval": {
            "interval_seconds": INTERVAL,
            "run_seconds": round(doctor["seconds"], 2),
            "cpu_share_of_a_core": round(doctor_cpu, 4),
            "api_requests_per_minute": round(doctor_requests, 1),
        },
        "ratio_cpu_monitor_to_doctor": round(monitor_cpu / doctor_cpu, 3) if doctor_cpu else None,
        "ratio_requests_monitor_to_doctor": (
            round(monitor_requests / doctor_requests, 3) if doctor_requests else None
        ),
    }


FLEET_LABEL = "truegreen.io/training"


def _training_namespaces(count: int) -> list[dict[str, Any]]:
    """`train` and count-1 copies of it (team-01, ...): each its own healthy training namespace,
    labelled for the fleet's selector; the machines stay the cluster's."""
    now = datetime.now(UTC)
    objects: list[dict[str, Any]] = []
    for index in range(count):
        name = "train" if index == 0 else f"team-{index:02d}"
        meta = {"name": name, "labels": {FLEET_LABEL: "true"}}
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
        if index == 0:
            continue  # synthetic_cluster holds train's objects
        for obj in healthy(now):
            if obj["metadata"].get("namespace") == "train":
                obj["metadata"]["namespace"] = name
                objects.append(obj)
    return objects


def _monitor_window(
    server: FakeApiServer,
    kubeconfig: Path,
    writer: "_Writer",
    window: float,
    *args: str,
) -> dict[str, Any]:
    """One monitor process with `args`: its first evaluation, then CPU, requests and
    evaluations over `window` seconds while `writer` writes (started here, left running)."""
    started = time.monotonic()
    monitor = subprocess.Popen(
        [
            *(installed("truegreen"), "monitor", "--kubeconfig", str(kubeconfig)),
            *("--listen", "127.0.0.1:0", "--no-events", "--min-interval", str(MIN_INTERVAL)),
            *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert monitor.stderr is not None
        line = monitor.stderr.readline()
        found = re.search(r"http://(127\.0\.0\.1:\d+)/", line)
        if found is None:
            raise RuntimeError(f"bench: the monitor said {line!r}")
        threading.Thread(target=monitor.stderr.read, daemon=True).start()
        base = f"http://{found.group(1)}"
        _wait(lambda: _get(base + "/readyz")[0] == 200, 900, "the first evaluation")
        ready = time.monotonic() - started
        if not writer.is_alive():
            writer.start()
        time.sleep(10)  # warm-up: the second evaluation, the first watch renewals
        cpu_before, log_before, at = _cpu_seconds(monitor.pid), len(server.log), time.monotonic()
        evaluations_before = _evaluations(base)
        time.sleep(window)
        elapsed = time.monotonic() - at
        cpu = _cpu_seconds(monitor.pid) - cpu_before
        evaluations = _evaluations(base) - evaluations_before
        requests = server.log[log_before:]
        peak = _peak_rss_mb(monitor.pid)
    finally:
        monitor.terminate()
        monitor.wait(60)
    by_verb: dict[str, int] = {}
    for record in requests:
        verb = "watch" if "watch" in record.query else record.method.lower()
        by_verb[verb] = by_verb.get(verb, 0) + 1
    return {
        "first_evaluation_seconds": round(ready, 2),
        "window_seconds": round(elapsed, 1),
        "cpu_share_of_a_core": round(cpu / elapsed, 4),
        "api_requests_per_minute": round(len(requests) * 60 / elapsed, 1),
        "api_requests_by_verb": by_verb,
        "namespace_evaluations_per_minute": round(evaluations * 60 / elapsed, 1),
        "peak_rss_mb": round(peak, 1),
    }


def bench_monitor_fleet() -> dict[str, Any]:
    """`monitor.fleet` and `monitor.fleet_cpu_ratio`: one monitor over BENCH_FLEET_NAMESPACES
    (default 40) labelled training namespaces next to one monitor of one of them, on the same
    cluster (BENCH_FLEET_PODS, default 30000) while the same writer changes pods elsewhere."""
    pods = int(os.environ.get("BENCH_FLEET_PODS", "30000"))
    count = int(os.environ.get("BENCH_FLEET_NAMESPACES", "40"))
    rate = float(os.environ.get("BENCH_MONITOR_RATE", "10"))
    window = float(os.environ.get("BENCH_MONITOR_SECONDS", "60"))
    objects = [*synthetic_cluster(pods), *_training_namespaces(count)]
    names = [
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o["kind"] == "Pod" and o["metadata"]["namespace"].startswith("ns-")
    ]
    with FakeApiServer() as server, tempfile.TemporaryDirectory() as scratch:
        server.add(*objects)
        del objects
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
        writer = _Writer(server, names, rate)
        sys.stderr.write(f"bench: monitor of one namespace at {pods} pods\n")
        one = _monitor_window(server, kubeconfig, writer, window)
        sys.stderr.write(f"bench: monitor of {count} namespaces at {pods} pods\n")
        fleet = _monitor_window(
            server, kubeconfig, writer, window, "--namespace-selector", f"{FLEET_LABEL}=true"
        )
        writer.stopping.set()
    ratio = fleet["cpu_share_of_a_core"] / one["cpu_share_of_a_core"]
    requests_ratio = fleet["api_requests_per_minute"] / max(one["api_requests_per_minute"], 1e-9)
    return {
        "fleet": {
            "pods": pods,
            "namespaces": count,
            "pod_updates_per_second": rate,
            "one_namespace": one,
            "all_namespaces": fleet,
            "requests_ratio": round(requests_ratio, 2),
            "targets": {
                "cpu_within_2x_of_one_namespace": ratio <= 2,
                "requests_within_2x_of_one_namespace": requests_ratio <= 2,
            },
        },
        "fleet_cpu_ratio": round(ratio, 2),
    }


def bench_monitor() -> dict[str, Any]:
    """`monitor.` in bench/results/latest.json: one entry per size, and the targets' verdicts."""
    sizes = [int(s) for s in os.environ.get("BENCH_MONITOR_SIZES", "3000,30000").split(",")]
    rate = float(os.environ.get("BENCH_MONITOR_RATE", "10"))
    window = float(os.environ.get("BENCH_MONITOR_SECONDS", "60"))
    points = {}
    for pods in sizes:
        sys.stderr.write(f"bench: monitor at {pods} pods\n")
        points[str(pods)] = bench_size(pods, rate, window)
    largest = points[str(max(sizes))]
    requests = [p["api_requests_per_minute"] for p in points.values()]
    return {
        "settings": {"min_interval": MIN_INTERVAL, "interval": INTERVAL, "rate": rate},
        "sizes": points,
        "targets": {
            "cpu_at_most_5_percent": largest["cpu_share_of_a_core"] <= 0.05,
            "peak_rss_at_most_150_mb": largest["peak_rss_mb"] <= 150,
            "change_to_metrics_at_most_2_s": largest["change_to_metrics_seconds"]["max"] <= 2,
            "requests_per_minute_by_size": requests,
        },
    }


if __name__ == "__main__":
    json.dump(
        bench_monitor_fleet() if "--fleet" in sys.argv else bench_monitor(), sys.stdout, indent=2
    )
    sys.stdout.write("\n")
