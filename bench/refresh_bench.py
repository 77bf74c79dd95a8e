"""refresh at scale: 100 opted-in Deployments x 2 containers over 50 distinct image references
in the real docker-registry, behind a loopback proxy adding 50 ms per request.

Measured side by side, interleaved: a steady-state tick (nothing moved), the baseline that
looks up every container's image one by one, and a tick with nothing opted in (its start and
reads: the floor is that plus the distinct references looked up eight at a time). Then five
references move and one more tick runs: it must write only to the Deployments that use them.
"""

import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.fake_apiserver import FakeApiServer
from tests.support.refresh_kit import container, deployment
from tests.support.registry import registry_binary, start_registry
from tests.support.rollout import RolloutSimulator

from bench.latency_proxy import LatencyProxy
from bench.measure import installed, measured, summary
from truegreen.refresh.annotations import RECORDED_DIGEST, container_key
from truegreen.refresh.registry import LOOKUPS_IN_FLIGHT

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "train"
DEPLOYMENTS = 100
REFERENCES = 50
LATENCY = 0.05
MOVED = 5
REGISTRY_CONCURRENCY = LOOKUPS_IN_FLIGHT
"""Look-ups refresh keeps in flight: the floor follows the product's own bound."""
NOTHING_OPTED_IN = "truegreen.io/bench=nothing"
"""A selector no workload carries: a tick that makes its reads and looks nothing up."""

Obj = dict[str, Any]


def _deployment(name: str, images: list[str], recorded: list[str]) -> Obj:
    """Anonymous pulls, Always policy, each container's digest already recorded."""
    annotations = {
        container_key(RECORDED_DIGEST, f"c{i}"): digest for i, digest in enumerate(recorded)
    }
    containers = [container(f"c{i}", image) for i, image in enumerate(images)]
    return deployment(name, *containers, annotations=annotations, pull_secret=None)


def _timed(command: list[str]) -> float:
    return measured(command).seconds


def bench_refresh(runs: int) -> dict[str, Any]:
    """The refresh figures for latest.json."""
    binary = registry_binary()
    if binary is None:
        raise SystemExit("refresh benchmark: docker-registry is not installed")
    with tempfile.TemporaryDirectory() as scratch:
        registry = start_registry(binary, Path(scratch) / "registry")
        try:
            port = int(registry.host.rsplit(":", 1)[1])
            with LatencyProxy(port, LATENCY) as proxy, FakeApiServer() as server:
                return _run(registry, proxy, server, Path(scratch), runs)
        finally:
            registry.stop()


def _run(registry: Any, proxy: Any, server: FakeApiServer, scratch: Path, runs: int) -> Obj:
    host = f"127.0.0.1:{proxy.port}"
    references = [f"{host}/team/app-{i:02d}:stable" for i in range(REFERENCES)]
    digests = {
        ref: registry.push_image(f"team/app-{i:02d}", "stable", content=f"v1-{i}")
        for i, ref in enumerate(references)
    }
    simulator = RolloutSimulator(server, lambda image: digests[image])
    images_in_order: list[str] = []
    users: dict[str, set[str]] = {}
    for d in range(DEPLOYMENTS):
        name = f"app-{d:03d}"
        images = [references[(2 * d + i) % REFERENCES] for i in range(2)]
        images_in_order += images
        for image in images:
            users.setdefault(image, set()).add(name)
        server.add(_deployment(name, images, [digests[i] for i in images]))
        stored = server.get_object("Deployment", name, NAMESPACE)
        assert stored is not None
        simulator.remember(stored)
        server.add(simulator.make_pod(stored, f"{name}-0"))
    kubeconfig = server.write_kubeconfig(scratch / "kubeconfig", namespace=NAMESPACE)
    tick = [installed("truegreen"), "refresh", "--kubeconfig", str(kubeconfig), "-o", "json"]
    baseline = [sys.executable, str(ROOT / "bench" / "sequential_lookups.py"), *images_in_order]

    def writes() -> int:
        return len(server.requests("PATCH"))

    idle = [*tick, "--selector", NOTHING_OPTED_IN]
    _timed(tick)  # warm-up
    _timed(baseline)
    _timed(idle)
    tick_seconds: list[float] = []
    baseline_seconds: list[float] = []
    idle_seconds: list[float] = []
    requests: list[int] = []
    steady_writes: list[int] = []
    for _ in range(runs):
        before, written = proxy.requests, writes()
        tick_seconds.append(_timed(tick))
        requests.append(proxy.requests - before)
        steady_writes.append(writes() - written)
        baseline_seconds.append(_timed(baseline))
        idle_seconds.append(_timed(idle))
    moved = references[:MOVED]
    for ref in moved:
        repository = ref.split("/", 1)[1].rsplit(":", 1)[0]
        digests[ref] = registry.push_image(repository, "stable", content=f"v2-{ref}")
    changed = sorted(set().union(*(users[ref] for ref in moved)))
    written = writes()
    patched_before = {r.path for r in server.requests("PATCH")}
    _timed([*tick, "--rollout-timeout", "60"])
    moved_paths = {r.path for r in server.requests("PATCH")} - patched_before
    written_names = sorted({path.rsplit("/", 1)[1] for path in moved_paths})
    tick_median = statistics.median(tick_seconds)
    baseline_median = statistics.median(baseline_seconds)
    # The least a tick can take: its own start and reads, then the distinct references looked
    # up REGISTRY_CONCURRENCY at a time, each waiting one added latency.
    floor = statistics.median(idle_seconds) + math.ceil(REFERENCES / REGISTRY_CONCURRENCY) * LATENCY
    return {
        "deployments": DEPLOYMENTS,
        "containers": 2 * DEPLOYMENTS,
        "distinct_refs": REFERENCES,
        "latency_ms": int(LATENCY * 1000),
        "tick_seconds": summary(tick_seconds),
        "sequential_seconds": summary(baseline_seconds),
        "speedup_vs_sequential": round(baseline_median / tick_median, 2),
        "startup_seconds": summary(idle_seconds),
        "floor_seconds": round(floor, 3),
        "ratio_vs_floor": round(tick_median / floor, 2),
        "registry_requests": int(statistics.median(requests)),
        "cluster_writes_steady": max(steady_writes),
        "moved_refs": MOVED,
        "changed_workloads": len(changed),
        "written_workloads": len(written_names),
        "writes_only_changed": written_names == changed,
        "cluster_writes_moved": writes() - written,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(bench_refresh(int(sys.argv[1]) if len(sys.argv) > 1 else 3), indent=2))
