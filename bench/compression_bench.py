"""Compressed lists: what asking for gzip costs where bytes are free, and what it saves over a
link of realistic bandwidth.

doctor reads the same realistic cluster (bench/served.py) through a proxy on this machine's own
network address (not loopback, where doctor never asks for gzip; the proxy closes every
connection that does not come from this machine's address), twice per link: with the
cluster's `disable-compression: true` (plain pages) and without (gzip-encoded pages, encoded
once before any run, so the server's own cost of compressing is left out: at level 1 it is
the API server's, reported apart as `server_compress_seconds`). Links: the proxy at full speed,
and the proxy holding answers to BENCH_LINK_MBIT (default 100 Mbit/s), an operator's path to a
cloud cluster. Interleaved, medians.

Environment: BENCH_COMPRESSION_PODS (default 10000), BENCH_LINK_MBIT (default 100).
"""

import gzip
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.latency_proxy import LatencyProxy
from bench.measure import installed, measured, summary
from bench.served import RealisticServer

DOCTOR_OK = (0, 2, 3)


def own_address() -> str | None:
    """This machine's address on its network (the one it would reach others from), or None
    when it has none but loopback."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, a route is chosen
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def _kubeconfig(path: Path, server: str, compressed: bool) -> Path:
    cluster: dict[str, Any] = {"server": server}
    if not compressed:
        cluster["disable-compression"] = True
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "bench", "cluster": cluster}],
        "users": [{"name": "bench", "user": {}}],
        "contexts": [
            {
                "name": "bench",
                "context": {"cluster": "bench", "user": "bench", "namespace": "train"},
            }
        ],
        "current-context": "bench",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _page_sizes(server: RealisticServer) -> dict[str, Any]:
    """What one full page of pods weighs plain and gzip-encoded, and what encoding it costs."""
    page = next(iter(server._pods.by_token.values()))
    started = time.perf_counter()
    compressed = gzip.compress(page.body, compresslevel=1)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    gzip.decompress(compressed)
    decompress = time.perf_counter() - started
    return {
        "page_bytes": len(page.body),
        "page_gzip_bytes": len(compressed),
        "ratio": round(len(page.body) / len(compressed), 1),
        "server_compress_seconds_per_page": round(seconds, 4),
        "client_decompress_seconds_per_page": round(decompress, 4),
    }


def bench_compression(runs: int) -> dict[str, Any]:
    """doctor with plain and with gzip-encoded pages, at full speed and over a slower link."""
    address = own_address()
    if address is None:
        return {"skipped": "this machine has no address but loopback"}
    pods = int(os.environ.get("BENCH_COMPRESSION_PODS", "10000"))
    mbit = float(os.environ.get("BENCH_LINK_MBIT", "100"))
    truegreen = installed("truegreen")
    links = {"full speed": None, f"{mbit:g} Mbit/s": mbit * 1e6 / 8}
    result: dict[str, Any] = {"pods": pods, "links": {}}
    with RealisticServer(pods) as server, tempfile.TemporaryDirectory() as scratch:
        server.freeze()
        result.update(_page_sizes(server))
        for link, rate in links.items():
            with LatencyProxy(
                int(server.url.rsplit(":", 1)[1]),
                0.0,
                host=address,
                bytes_per_second=rate,
                peers=(address,),  # doctor connects from this address; no one else is answered
            ) as proxy:
                url = f"http://{address}:{proxy.port}"
                commands = {
                    name: [
                        truegreen,
                        "doctor",
                        "--kubeconfig",
                        str(_kubeconfig(Path(scratch) / f"{name}.kc", url, name == "gzip")),
                        "-o",
                        "json",
                        "--request-timeout",
                        "300",
                    ]
                    for name in ("plain", "gzip")
                }
                for command in commands.values():
                    measured(command, DOCTOR_OK)  # warm-up: byte code, the encoded pages
                seconds: dict[str, list[float]] = {name: [] for name in commands}
                cpu: dict[str, list[float]] = {name: [] for name in commands}
                megabytes: dict[str, list[float]] = {name: [] for name in commands}
                for _ in range(runs):
                    for name, command in commands.items():
                        run = measured(command, DOCTOR_OK)
                        seconds[name].append(run.seconds)
                        cpu[name].append(run.cpu_seconds)
                        megabytes[name].append(run.peak_rss_mb)
            result["links"][link] = {
                name: {
                    "seconds": summary(seconds[name]),
                    "cpu_seconds": summary(cpu[name]),
                    "peak_rss_mb": round(max(megabytes[name]), 1),
                }
                for name in commands
            }
    return result
