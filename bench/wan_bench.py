"""doctor over a link with latency, next to `kubectl get pods` over the same link.

Operators run doctor from a laptop or a CI runner against a managed cluster tens of
milliseconds away. The realistic cluster of the doctor rows (bench/served.py) with a job of
every training kind and a Kueue-queued job in the namespace (300 pods: WAN_PODS), behind
bench/latency_proxy.py, which holds every request, and every new connection before its first
byte, for the added delay before it goes on: a round trip each, as over a real link (the
bench's server is plain HTTP, so no TLS handshake is charged; over TLS each new connection
costs a second round trip, which favours kubectl's one HTTP/2 connection further). At 0, 50
and 100 ms per round trip, interleaved (doctor, kubectl, doctor, kubectl ...), each its own
process after a warm-up:

- `round_trips`: (doctor at 100 ms - doctor at 0 ms) / 0.1 s, the requests and connection
  set-ups that wait on one another in doctor's longest chain (target at most 3.5: discovery,
  then every list that depends on nothing, then the reads that depend on what came back, each
  wave also opening the connections it needs beyond those already open);
- `wan_ratio_vs_kubectl`: doctor at 50 ms over `kubectl get pods -n train` at 50 ms (target at
  most 2.5);
- `first_run_round_trips`: the same for a doctor that remembers nothing of the server
  (cluster/discovery_memory.py; each such run is given an empty cache folder): its discovery
  goes alone, as on a machine's first run against a cluster or one whose memory is older than
  six hours.

Every other doctor run shares one cache folder, as one operator's runs do: the warm-up leaves
the server's discovery there, as kubectl's warm-up leaves its own in its cache folder.

`doctor_requests` and `connections` (doctor's and kubectl's) count what one run made through
the proxy.

Settings: WAN_PODS (default 300), WAN_RUNS (default 3). doctor asks no registry
(`--no-registry`), as the doctor rows.
"""

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.latency_proxy import LatencyProxy
from bench.measure import installed, measured, summary
from bench.served import RealisticServer

DELAYS = (0.0, 0.05, 0.1)
DOCTOR_OK = (0, 2, 3)


def bench_wan() -> dict[str, Any]:
    """The WAN row: seconds per delay for doctor and kubectl, the round trips and the ratio."""
    pods = int(os.environ.get("WAN_PODS", "300"))
    runs = int(os.environ.get("WAN_RUNS", "3"))
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise SystemExit("benchmark: kubectl is missing (the WAN row runs it as the baseline)")
    truegreen = installed("truegreen")
    seconds: dict[str, dict[str, list[float]]] = {}
    requests: dict[str, int] = {}
    connections: dict[str, dict[str, int]] = {}
    with (
        RealisticServer(pods, training_kinds=True) as server,
        tempfile.TemporaryDirectory() as scratch,
    ):
        remembering = {"XDG_CACHE_HOME": str(Path(scratch) / "cache")}

        def first_run() -> dict[str, str]:
            return {"XDG_CACHE_HOME": tempfile.mkdtemp(dir=scratch)}

        server.freeze()
        port = int(server.url.rsplit(":", 1)[1])
        for delay in DELAYS:
            key = f"{int(delay * 1000)}ms"
            with LatencyProxy(port, delay) as proxy:
                kubeconfig = server.write_kubeconfig(
                    Path(scratch) / f"kubeconfig-{key}", namespace="train"
                )
                text = kubeconfig.read_text().replace(server.url, f"http://127.0.0.1:{proxy.port}")
                kubeconfig.write_text(text)
                doctor = [truegreen, "doctor", "--kubeconfig", str(kubeconfig), "--no-registry"]
                doctor += ["--request-timeout", "300", "-o", "json"]
                get_pods = [kubectl, "--kubeconfig", str(kubeconfig), "get", "pods", "-n", "train"]
                # warm-up: byte-code caches, pre-encoded pages, the server's discovery kept
                measured(doctor, DOCTOR_OK, remembering)
                measured(get_pods)
                before, opened = proxy.requests, proxy.connections
                measured(doctor, DOCTOR_OK, remembering)
                requests[key] = proxy.requests - before
                connections[key] = {"doctor": proxy.connections - opened}
                opened = proxy.connections
                measured(get_pods)
                connections[key]["kubectl"] = proxy.connections - opened
                samples: dict[str, list[float]] = {"doctor": [], "kubectl": [], "first_run": []}
                for _ in range(runs):
                    samples["doctor"].append(measured(doctor, DOCTOR_OK, remembering).seconds)
                    samples["kubectl"].append(measured(get_pods).seconds)
                    samples["first_run"].append(measured(doctor, DOCTOR_OK, first_run()).seconds)
                seconds[key] = samples
    median = {
        key: {tool: summary(values)["median"] for tool, values in tools.items()}
        for key, tools in seconds.items()
    }
    return {
        "pods": pods,
        "runs": runs,
        "round_trips": round((median["100ms"]["doctor"] - median["0ms"]["doctor"]) / 0.1, 2),
        "wan_ratio_vs_kubectl": round(median["50ms"]["doctor"] / median["50ms"]["kubectl"], 2),
        "first_run_round_trips": round(
            (median["100ms"]["first_run"] - median["0ms"]["first_run"]) / 0.1, 2
        ),
        "kubectl_round_trips": round(
            (median["100ms"]["kubectl"] - median["0ms"]["kubectl"]) / 0.1, 2
        ),
        "seconds": {
            key: {tool: summary(values) for tool, values in tools.items()}
            for key, tools in seconds.items()
        },
        "doctor_requests": requests,
        "connections": connections,
    }
