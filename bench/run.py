"""`make bench`: doctor at cluster scale, side by side with kubectl and the decode floor.

Every measurement runs as its own process (peak RSS from os.wait4), after a warm-up, interleaved
(doctor, kubectl, floor, doctor, ...), against the fake API server serving pre-encoded pages, so
that the server's own cost (the server floor) is measured and reported, not mixed in.
Sizes: BENCH_SIZES (default 1000,10000,30000); runs per size: BENCH_RUNS (default 5).
"""

import http.client
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from tests.support.fake_apiserver import FakeApiServer

from bench.cluster import synthetic_cluster

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent


TIME = shutil.which("time") or "/usr/bin/time"


def _run(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process.

    GNU time forks the measured process from its own small process: forking it from this one,
    which holds the whole synthetic cluster, would count this process's pages in the child's
    peak RSS (ru_maxrss includes what the child shared before exec).
    """
    start = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", "%M", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 2, 3):
        raise SystemExit(f"benchmark command failed: {' '.join(command)}")
    return elapsed, int(done.stderr.strip().splitlines()[-1]) / 1024


def _server_floor(url: str) -> float:
    """Fetch every page of pods and the machines, decoding nothing: what the server costs."""
    parts = urlsplit(url)
    start = time.perf_counter()
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
    connection.request("GET", "/api/v1/nodes")
    connection.getresponse().read()
    token = ""
    while True:
        path = "/api/v1/pods?limit=500" + (f"&continue={quote(token)}" if token else "")
        connection.request("GET", path)
        body = connection.getresponse().read()
        marker = body.rfind(b'"continue": "')
        token = body[marker + 13 : body.index(b'"', marker + 13)].decode() if marker >= 0 else ""
        if not token:
            break
    connection.close()
    return time.perf_counter() - start


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(samples), 3),
        "min": round(min(samples), 3),
        "max": round(max(samples), 3),
    }


def bench_size(pods: int, runs: int) -> dict[str, Any]:
    kubectl = shutil.which("kubectl")
    with FakeApiServer() as server, tempfile.TemporaryDirectory() as scratch:
        server.add(*synthetic_cluster(pods))
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
        server.freeze()
        tools: dict[str, list[str]] = {
            "doctor": [
                str(BIN / "truegreen"),
                "doctor",
                "--kubeconfig",
                str(kubeconfig),
                "-o",
                "json",
                "--request-timeout",
                "300",
            ],
            "decode_floor": [sys.executable, str(ROOT / "bench" / "decode_floor.py"), server.url],
        }
        if kubectl:
            for resource, name in (("pods", "kubectl_pods"), ("nodes", "kubectl_nodes")):
                flags = ["-A"] if resource == "pods" else []
                tools[name] = [
                    kubectl,
                    "--kubeconfig",
                    str(kubeconfig),
                    "get",
                    resource,
                    *flags,
                    "-o",
                    "json",
                ]
        before = len(server.log)
        _run(tools["doctor"])  # warm-up, which also fills the pre-encoded answers
        doctor_requests = len(server.log) - before
        for name, command in tools.items():
            if name != "doctor":
                _run(command)
        _server_floor(server.url)
        seconds: dict[str, list[float]] = {name: [] for name in tools}
        megabytes: dict[str, list[float]] = {name: [] for name in tools}
        floor: list[float] = []
        for _ in range(runs):
            for name, command in tools.items():
                elapsed, peak = _run(command)
                seconds[name].append(elapsed)
                megabytes[name].append(peak)
            floor.append(_server_floor(server.url))
    result: dict[str, Any] = {
        name: {"seconds": _summary(seconds[name]), "peak_rss_mb": round(max(megabytes[name]), 1)}
        for name in tools
    }
    if kubectl:
        kubectl_total = [
            a + b for a, b in zip(seconds["kubectl_pods"], seconds["kubectl_nodes"], strict=True)
        ]
        result["kubectl"] = {
            "seconds": _summary(kubectl_total),
            "peak_rss_mb": max(
                result["kubectl_pods"]["peak_rss_mb"], result["kubectl_nodes"]["peak_rss_mb"]
            ),
        }
    result["server_floor"] = {"seconds": _summary(floor)}
    result["doctor_requests"] = doctor_requests
    return result


def main() -> None:
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,10000,30000").split(",")]
    runs = int(os.environ.get("BENCH_RUNS", "5"))
    points = {pods: bench_size(pods, runs) for pods in sizes}
    main_size = max(s for s in sizes if s <= 30000) if any(s <= 30000 for s in sizes) else sizes[0]
    point = points[main_size]
    doctor = point["doctor"]["seconds"]["median"]
    document: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "runs_per_size": runs,
        "doctor": {
            "pods": main_size,
            "median_seconds": doctor,
            "peak_rss_mb": point["doctor"]["peak_rss_mb"],
            "requests": point["doctor_requests"],
            "ratio_vs_floor": round(doctor / point["decode_floor"]["seconds"]["median"], 2),
            "speedup_vs_kubectl": (
                round(point["kubectl"]["seconds"]["median"] / doctor, 2)
                if "kubectl" in point
                else None
            ),
            "server_floor_share": (
                round(
                    point["server_floor"]["seconds"]["median"]
                    / point["kubectl"]["seconds"]["median"],
                    3,
                )
                if "kubectl" in point
                else None
            ),
            "scaling": {
                str(pods): {
                    "seconds": p["doctor"]["seconds"]["median"],
                    "mb": p["doctor"]["peak_rss_mb"],
                }
                for pods, p in points.items()
            },
            "points": {str(pods): p for pods, p in points.items()},
        },
        "not_measured_yet": [
            "official kubernetes client baseline",
            "refresh.speedup_vs_sequential, refresh.registry_requests, refresh.distinct_refs",
            "lint.speedup_vs_checkov, lint.catch_rate",
        ],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(document, indent=2) + "\n")
    lines = [
        "# Benchmarks (latest)",
        "",
        f"{document['machine']['cores']} cores, Python {document['machine']['python']}; "
        f"{runs} interleaved runs per size after a warm-up; medians (min-max).",
        "",
        "| pods | doctor s | doctor MB | kubectl s | kubectl MB | decode floor s | server floor s | requests |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for pods, p in points.items():
        k = p.get("kubectl", {"seconds": {"median": "-"}, "peak_rss_mb": "-"})
        lines.append(
            f"| {pods} | {p['doctor']['seconds']['median']} ({p['doctor']['seconds']['min']}-{p['doctor']['seconds']['max']}) "
            f"| {p['doctor']['peak_rss_mb']} | {k['seconds']['median']} | {k['peak_rss_mb']} "
            f"| {p['decode_floor']['seconds']['median']} | {p['server_floor']['seconds']['median']} | {p['doctor_requests']} |"
        )
    lines += [
        "",
        f"At {main_size} pods: doctor is {document['doctor']['speedup_vs_kubectl']}x kubectl, "
        f"{document['doctor']['ratio_vs_floor']}x the decode floor; the server floor is "
        f"{document['doctor']['server_floor_share']} of kubectl's time.",
        "",
    ]
    (RESULTS / "latest.md").write_text("\n".join(lines))
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
