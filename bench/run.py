"""`make bench`: truegreen side by side with what people would use instead, at cluster scale.

doctor: realistic objects (bench/realistic.py: pods about 7 KB with managedFields, machines
about 6 KB with images), the cluster-wide pod and machine lists served from pages encoded
before any tool runs (bench/served.py; the server's own cost, the server floor, is measured
and reported, not mixed in), next to kubectl, the official Kubernetes client and the decode
floor; plus doctor on a snapshot of the same state. Rows from a three-pod namespace to
100,000 pods. startup: each command's import time (bench/imports.py) and this machine's speed.
refresh: a tick next to one-by-one look-ups and to its floor (bench/refresh_bench.py). lint:
next to Checkov and to two YAML floors (bench/lint_bench.py). Every measurement runs as
its own process, after a warm-up, interleaved (A B C A B C ...).

Environment: BENCH_SIZES (default 3,10,1000,10000,30000,100000), BENCH_RUNS (default 5),
BENCH_BASELINE_MAX (largest size the slow baselines run at; default 30000),
BENCH_PARTS (default doctor,startup,compression,refresh,lint,monitor,fleet,monitor-fleet,wan,probe,trial;
bench/monitor_bench.py, bench/compression_bench.py, bench/fleet_bench.py and bench/wan_bench.py
have their own settings; `BENCH_PARTS=fleet` runs doctor's fleet row alone,
`BENCH_PARTS=monitor-fleet` the monitor's, `BENCH_PARTS=wan` doctor through a link with
latency, `BENCH_PARTS=probe` the trial probe's own run, bench/probe_bench.py,
`BENCH_PARTS=trial` what doctor --trial adds beyond it, bench/trial_bench.py). A run of some
parts keeps the others' figures from the previous latest.json, each part stamped with when it
was measured and the machine's load then (`measured`).
"""

import http.client
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from msgspec import Struct
from tests.support.real_parts import REAL_PARTS

from bench.compression_bench import bench_compression
from bench.fleet_bench import bench_fleet
from bench.imports import python_floor, startup
from bench.lint_bench import bench_lint
from bench.measure import installed, measured, summary
from bench.monitor_bench import bench_monitor, bench_monitor_fleet
from bench.monitor_page import write_monitor_page
from bench.probe_bench import bench_probe
from bench.readme import write_readme
from bench.refresh_bench import bench_refresh
from bench.served import RealisticServer
from bench.trial_bench import bench_trial
from bench.wan_bench import bench_wan

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
OFFICIAL_PYTHON = ROOT / ".venv-bench" / "kubernetes" / "bin" / "python"
PAGE = 500
DOCTOR_OK = (0, 2, 3)
NOT_MEASURED = "not measured this run"
_CONTINUE = re.compile(rb'"continue":\s*"([^"]*)"')


def _server_floor(url: str) -> float:
    """Fetch every page of pods and the machines, decoding nothing: what the server costs."""
    parts = urlsplit(url)
    start = time.perf_counter()
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=300)
    connection.request("GET", "/api/v1/nodes")
    connection.getresponse().read()
    token = ""
    while True:
        path = f"/api/v1/pods?limit={PAGE}" + (f"&continue={quote(token)}" if token else "")
        connection.request("GET", path)
        body = connection.getresponse().read()
        found = _CONTINUE.search(body, 0, 1000)  # the list's metadata comes first
        token = found.group(1).decode() if found else ""
        if not token:
            break
    connection.close()
    return time.perf_counter() - start


SMALL = 3
"""The small row's pods: doctor's start-up, next to `kubectl get pods` and the Python floor
(the interpreter loading the libraries doctor loads, bench/imports.py)."""

NO_REGISTRY = ("--no-registry",)
"""doctor's and snapshot's runs ask no registry: the realistic namespace's images name
registry.example.com, which nothing here serves, and what doctor measures here is its reading
of the cluster; a registry look-up costs a request per image to the registry, concurrently,
beside those reads."""


def _tools(
    server: RealisticServer, kubeconfig: Path, snapshot: Path, baselines: bool
) -> dict[str, list[str]]:
    truegreen = installed("truegreen")
    tools: dict[str, list[str]] = {
        "doctor": [
            truegreen,
            "doctor",
            "--kubeconfig",
            str(kubeconfig),
            *NO_REGISTRY,
            "-o",
            "json",
        ],
        "doctor_snapshot": [truegreen, "doctor", "--snapshot", str(snapshot), "-o", "json"],
        "decode_floor": [sys.executable, str(ROOT / "bench" / "decode_floor.py"), server.url],
    }
    tools["doctor"] += ["--request-timeout", "300"]
    kubectl = shutil.which("kubectl")
    if kubectl:
        # What an operator types to look at a namespace (the context's): the small-row baseline.
        tools["kubectl_namespace"] = [kubectl, "--kubeconfig", str(kubeconfig), "get", "pods"]
    if baselines and kubectl:
        for resource, flags in (("pods", ["-A"]), ("nodes", [])):
            tools[f"kubectl_{resource}"] = [
                kubectl,
                "--kubeconfig",
                str(kubeconfig),
                "--request-timeout",
                "300s",
                "get",
                resource,
                *flags,
                "-o",
                "json",
            ]
    if baselines and OFFICIAL_PYTHON.exists():
        tools["official_client"] = [
            str(OFFICIAL_PYTHON),
            str(ROOT / "bench" / "official_client.py"),
            str(kubeconfig),
        ]
    return tools


def bench_size(
    pods: int, runs: int, baselines: bool, *, training_kinds: bool = False
) -> dict[str, Any]:
    """Every doctor-side tool at one cluster size (`training_kinds`: the namespace holds a job
    of every training kind and a queued one, bench/served.py)."""
    with (
        RealisticServer(pods, training_kinds=training_kinds) as server,
        tempfile.TemporaryDirectory() as scratch,
    ):
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
        snapshot = Path(scratch) / "snapshot"
        truegreen = installed("truegreen")
        to_folder = ["--output-directory", str(snapshot)]
        measured(
            [truegreen, "snapshot", "--kubeconfig", str(kubeconfig), *NO_REGISTRY, *to_folder],
            DOCTOR_OK,
        )
        server.freeze()
        tools = _tools(server, kubeconfig, snapshot, baselines)
        if pods == SMALL:
            tools["python_floor"] = python_floor(tools["doctor"][1:])
        before = len(server.log)
        measured(tools["doctor"], DOCTOR_OK)  # warm-up, which also fills the pre-encoded answers
        doctor_requests = len(server.log) - before
        for name, command in tools.items():
            if name != "doctor":
                measured(command, DOCTOR_OK)
        _server_floor(server.url)
        seconds: dict[str, list[float]] = {name: [] for name in tools}
        cpu: dict[str, list[float]] = {name: [] for name in tools}
        megabytes: dict[str, list[float]] = {name: [] for name in tools}
        floor: list[float] = []
        for _ in range(runs):
            for name, command in tools.items():
                run = measured(command, DOCTOR_OK)
                seconds[name].append(run.seconds)
                cpu[name].append(run.cpu_seconds)
                megabytes[name].append(run.peak_rss_mb)
            floor.append(_server_floor(server.url))
        objects = server.sizes
    result: dict[str, Any] = {
        name: {
            "seconds": summary(seconds[name]),
            "cpu_seconds": summary(cpu[name]),
            "peak_rss_mb": round(max(megabytes[name]), 1),
        }
        for name in tools
    }
    if "kubectl_pods" in tools:
        both = [
            a + b for a, b in zip(seconds["kubectl_pods"], seconds["kubectl_nodes"], strict=True)
        ]
        result["kubectl"] = {
            "seconds": summary(both),
            "peak_rss_mb": max(
                result["kubectl_pods"]["peak_rss_mb"], result["kubectl_nodes"]["peak_rss_mb"]
            ),
        }
    result["server_floor"] = {"seconds": summary(floor)}
    result["doctor_requests"] = doctor_requests
    result["pod_pages"] = math.ceil(pods / PAGE)
    result["objects"] = objects
    return result


def _ratio(numerator: float | None, denominator: float | None, digits: int = 2) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, digits)


def _median(point: dict[str, Any], tool: str) -> float | None:
    entry = point.get(tool)
    return float(entry["seconds"]["median"]) if entry else None


def doctor_section(points: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The doctor keys of latest.json, ratios taken at 30,000 pods (or the largest size run).
    A figure this run could not take (a size or a baseline not run) is left out, never null:
    ratios are only taken within one run."""
    at = 30000 if 30000 in points else max(points)
    point = points[at]
    doctor = _median(point, "doctor")
    small = points.get(SMALL)
    at_100k = points.get(100000)
    section = {
        "pods": at,
        "objects": point["objects"],
        "median_seconds": doctor,
        "peak_rss_mb": point["doctor"]["peak_rss_mb"],
        "requests": point["doctor_requests"],
        "requests_beyond_pod_pages": point["doctor_requests"] - point["pod_pages"],
        "speedup_vs_kubectl": _ratio(_median(point, "kubectl"), doctor),
        "speedup_vs_official_client": _ratio(_median(point, "official_client"), doctor),
        "ratio_vs_floor": _ratio(doctor, _median(point, "decode_floor")),
        "server_floor_share": _ratio(_median(point, "server_floor"), _median(point, "kubectl"), 3),
        "small_ratio_vs_kubectl": (
            _ratio(_median(small, "doctor"), _median(small, "kubectl_namespace")) if small else None
        ),
        "small_python_floor_vs_kubectl": (
            _ratio(_median(small, "python_floor"), _median(small, "kubectl_namespace"))
            if small
            else None
        ),
        "linear_100k_over_30k": (
            _ratio(_median(at_100k, "doctor"), doctor) if at_100k and at == 30000 else None
        ),
        "peak_rss_mb_100k": at_100k["doctor"]["peak_rss_mb"] if at_100k else None,
        "snapshot": {
            "seconds": _median(point, "doctor_snapshot"),
            "peak_rss_mb": point["doctor_snapshot"]["peak_rss_mb"],
        },
        "scaling": {
            str(pods): {
                "seconds": p["doctor"]["seconds"]["median"],
                "mb": p["doctor"]["peak_rss_mb"],
                "requests": p["doctor_requests"],
            }
            for pods, p in points.items()
        },
        "points": {str(pods): p for pods, p in points.items()},
    }
    return {key: value for key, value in section.items() if value is not None}


def _said_value(section: dict[str, Any], *path: str) -> str:
    """The figure at `path` in `section`, or that it was not measured this run."""
    value: Any = section
    for step in path:
        if not isinstance(value, dict) or step not in value:
            return NOT_MEASURED
        value = value[step]
    return str(value)


def _runs(runs: int | None) -> str:
    return "runs not recorded" if runs is None else f"{runs} run{'s' if runs != 1 else ''}"


def _said(figure: Any, words: str, missing: str) -> str:
    """`words` with the figure in place of {}, or what was not measured this run."""
    return words.format(figure) if figure is not None else f"{missing}: {NOT_MEASURED}"


def _doctor_sentence(doctor: dict[str, Any]) -> str:
    """The doctor ratios in words; a ratio this run could not take is said to be unmeasured."""
    at = doctor["pods"]
    speedups = "; ".join(
        (
            _said(doctor.get("ratio_vs_floor"), "{}x the decode floor", "the decode floor"),
            _said(doctor.get("speedup_vs_kubectl"), "{}x faster than kubectl", "kubectl"),
            _said(
                doctor.get("speedup_vs_official_client"),
                "{}x faster than the official client",
                "the official client",
            ),
            _said(
                doctor.get("server_floor_share"),
                "the server floor is {} of kubectl's time",
                "the server floor's share of kubectl's time",
            ),
        )
    )
    small = _said(
        doctor.get("small_ratio_vs_kubectl"),
        "On a three-pod namespace doctor takes {}x `kubectl get pods`",
        "The three-pod namespace",
    ) + _said(
        doctor.get("small_python_floor_vs_kubectl"),
        " (the Python floor, the interpreter loading the libraries doctor loads, {}x)",
        "; the Python floor",
    )
    large = (
        f"100,000 pods take {doctor['linear_100k_over_30k']}x the time of 30,000 "
        f"({doctor['peak_rss_mb_100k']} MB)"
        if "linear_100k_over_30k" in doctor
        else f"100,000 pods: {NOT_MEASURED}"
    )
    return f"At {at} pods doctor is {speedups}. {small}. {large}."


def _cell(point: dict[str, Any], tool: str, key: str = "seconds") -> str:
    entry = point.get(tool)
    if not entry:
        return "-"
    return str(entry["seconds"]["median"]) if key == "seconds" else str(entry["peak_rss_mb"])


def markdown(document: dict[str, Any]) -> str:
    """The short table committed as latest.md (the README's figures: bench/readme.py)."""
    machine = document["machine"]
    lines = [
        "# Benchmarks (latest)",
        "",
        f"{machine['cores']} cores, Python {machine['python']}; each part's runs are interleaved "
        "after a warm-up (the number of runs per part is under *Measured*); medians in seconds, "
        "peak RSS in MB. Load average (1, 5, 15 min) "
        f"{machine.get('load_average_at_start')} at the start, "
        f"{machine.get('load_average_at_end')} at the end: the machine is shared, so compare "
        "the columns of one row (measured interleaved), not runs.",
        "",
    ]
    measured = document.get("measured") or {}
    if measured:
        stamps = ", ".join(
            f"{part} {stamp['at']} (load {stamp['load_average'][0]}, {_runs(stamp.get('runs'))})"
            for part, stamp in measured.items()
        )
        lines += [f"Measured: {stamps}.", ""]
    calibration = machine.get("calibration")
    if calibration:
        lines += [
            f"Calibration: `sum(range(10**7))` took {calibration['sum_range_1e7_seconds']} s "
            f"(reference machine {calibration['reference_seconds']} s); calibrated figures are "
            f"raw x {calibration['factor']}.",
            "",
        ]
    doctor = document.get("doctor")
    if doctor and "points" in doctor:
        objects = doctor["objects"]
        lines += [
            "## doctor (whole process, all checks) vs the tools people use instead",
            "",
            f"Realistic objects: pods {objects['pod_bytes']} bytes "
            f"(managedFields {objects['pod_managed_fields_share']:.0%}), machines "
            f"{objects['machine_bytes']} bytes, one machine per 30 pods; list items without "
            "kind/apiVersion; pages of 500.",
            "",
            "| pods | doctor s | doctor MB | snapshot doctor s / MB | kubectl get pods (namespace) s | kubectl s / MB | official client s / MB | decode floor s | server floor s | requests |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for pods, p in doctor["points"].items():
            lines.append(
                f"| {pods} | {_cell(p, 'doctor')} | {_cell(p, 'doctor', 'mb')} "
                f"| {_cell(p, 'doctor_snapshot')} / {_cell(p, 'doctor_snapshot', 'mb')} "
                f"| {_cell(p, 'kubectl_namespace')} "
                f"| {_cell(p, 'kubectl')} / {_cell(p, 'kubectl', 'mb')} "
                f"| {_cell(p, 'official_client')} / {_cell(p, 'official_client', 'mb')} "
                f"| {_cell(p, 'decode_floor')} | {p['server_floor']['seconds']['median']} "
                f"| {p['doctor_requests']} |"
            )
        lines += ["", _doctor_sentence(doctor), ""]
        kinds = doctor.get("with_training_kinds")
        if kinds:
            lines += [
                f"With a job of every training kind and a queued one in the namespace, doctor "
                f"takes {kinds['median_seconds']} s ({kinds['ratio_vs_floor']}x the decode "
                f"floor, {kinds['requests']} requests, {kinds['peak_rss_mb']} MB).",
                "",
            ]
    imports = {
        c: document[c] for c in ("doctor", "lint", "refresh") if "import_ms" in document.get(c, {})
    }
    if imports:
        lines += [
            "## startup: import time per command (`python -X importtime`, cumulative)",
            "",
            "| command | import ms (raw) | import ms (calibrated) |",
            "|---|---|---|",
        ]
        for command, section in imports.items():
            lines.append(
                f"| {command} | {section['import_ms']} | {section['import_ms_calibrated']} |"
            )
        lines.append("")
    compression = document.get("compression")
    if compression and "links" in compression:
        lines += _compression_lines(compression)
    refresh = document.get("refresh")
    if refresh and "tick_seconds" in refresh:
        lines += [
            "## refresh: one tick vs one-by-one look-ups",
            "",
            f"{refresh['deployments']} Deployments x 2 containers, {refresh['distinct_refs']} distinct "
            f"references, {refresh['latency_ms']} ms added per registry request.",
            "",
            "| tick s | floor s | sequential s | speedup | registry requests | writes (nothing moved) | writes ({} refs moved) |".format(
                refresh["moved_refs"]
            ),
            "|---|---|---|---|---|---|---|",
            f"| {refresh['tick_seconds']['median']} | {refresh['floor_seconds']} "
            f"| {refresh['sequential_seconds']['median']} "
            f"| {refresh['speedup_vs_sequential']}x | {refresh['registry_requests']} "
            f"| {refresh['cluster_writes_steady']} | {refresh['cluster_writes_moved']} to "
            f"{refresh['written_workloads']} of {refresh['changed_workloads']} changed workloads |",
            "",
            f"The floor is a tick with nothing opted in ({refresh['startup_seconds']['median']} s) "
            "plus the distinct references looked up eight at a time; the tick is "
            f"{refresh['ratio_vs_floor']}x the floor.",
            "",
        ]
    lint = document.get("lint")
    if lint and "truegreen" in lint:
        lines += [
            "## lint vs Checkov (Kubernetes framework) and two YAML floors",
            "",
            f"{lint['files']} files, {lint['objects']} objects, plus examples/manifests. Floors: "
            "PyYAML's safe load (CSafeLoader; the target, at most 1.5x, is against it) and "
            "libyaml's parse alone (compose, no objects built).",
            "",
            "| truegreen s / MB | PyYAML safe load s | libyaml parse alone s | Checkov s / MB "
            "| speedup | x safe load | x parse alone |",
            "|---|---|---|---|---|---|---|",
            f"| {lint['truegreen']['seconds']['median']} / {lint['truegreen']['peak_rss_mb']} "
            f"| {lint['parse_floor']['seconds']['median']} "
            f"| {_said_value(lint, 'compose_floor', 'seconds', 'median')} "
            f"| {lint['checkov']['seconds']['median']} / {lint['checkov']['peak_rss_mb']} "
            f"| {lint['speedup_vs_checkov']}x | {lint['ratio_vs_parse_floor']} "
            f"| {_said_value(lint, 'ratio_vs_compose_floor')} |",
            "",
            "| labelled incident | truegreen says | Checkov (CKV_K8S_8/9) says |",
            "|---|---|---|",
        ]
        for case in lint["cases"]:
            mark = {True: "right", False: "wrong"}
            lines.append(
                f"| {case['incident']} | {', '.join(case['truegreen']) or 'nothing'} "
                f"({mark[case['truegreen_right']]}) | {', '.join(case['checkov']) or 'passes'} "
                f"({mark[case['checkov_right']]}) |"
            )
        rates = lint["catch_rate"]
        lines += [
            "",
            f"Catch rate: truegreen {rates['truegreen']}, Checkov {rates['checkov']}.",
            "",
        ]
    fleet = document.get("fleet")
    if fleet and "seconds" in fleet:
        lines += _fleet_lines(fleet)
    wan = document.get("wan")
    if wan and "seconds" in wan:
        lines += _wan_lines(wan)
    probe = document.get("probe")
    if probe:
        lines += _probe_lines(probe)
    trial = document.get("trial")
    if trial:
        lines += _trial_lines(trial)
    return "\n".join(lines)


def _connections(wan: dict[str, Any], key: str) -> str:
    """Connections doctor and kubectl opened through the link in one run."""
    opened = wan.get("connections", {}).get(key)
    return f"{opened['doctor']} / {opened['kubectl']}" if opened else NOT_MEASURED


def _wan_lines(wan: dict[str, Any]) -> list[str]:
    """doctor and `kubectl get pods` through a link that adds a delay to every request."""
    seconds = wan["seconds"]
    rows = [
        f"| {key} | {tools['doctor']['median']} "
        f"| {tools['first_run']['median'] if 'first_run' in tools else NOT_MEASURED} "
        f"| {tools['kubectl']['median']} "
        f"| {round(tools['doctor']['median'] / tools['kubectl']['median'], 2)} "
        f"| {wan['doctor_requests'][key]} "
        f"| {_connections(wan, key)} |"
        for key, tools in seconds.items()
    ]
    return [
        "## doctor through a link with latency (bench/wan_bench.py)",
        "",
        f"{wan['pods']} pods, a job of every training kind. The link charges a round trip per "
        "request and per new connection (its handshake). Round trips (100 ms - 0 ms, / 0.1 s): "
        f"doctor {wan['round_trips']} (target at most 3.5; on a first run against the "
        f"server, which remembers nothing of it, {wan.get('first_run_round_trips', NOT_MEASURED)}"
        f"), kubectl {wan['kubectl_round_trips']}; doctor / kubectl at 50 ms: "
        f"{wan['wan_ratio_vs_kubectl']} (target at most 2.5).",
        "",
        "| added per round trip | doctor s | doctor s, first run | `kubectl get pods` s "
        "| doctor / kubectl | doctor requests | connections (doctor / kubectl) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def _trial_lines(trial: dict[str, Any]) -> list[str]:
    """What doctor --trial adds beyond the trial pods' own time (bench/trial_bench.py)."""
    rows = [
        ("doctor", trial["doctor_seconds"]),
        ("doctor --trial", trial["doctor_trial_seconds"]),
        ("the trial pod's own time", trial["trial_pods_seconds"]),
        ("added by doctor --trial", trial["added_seconds"]),
    ]
    return [
        "## what doctor --trial adds beyond the trial's own time (bench/trial_bench.py)",
        "",
        "A one-pod training job on the fake API server's trial kubelet (the real probe, no "
        f"pull); target: added at most {trial['target_seconds']} s. Within: "
        f"{'yes' if trial['within_target'] else 'NO'}; doctor --trial / doctor: "
        f"{trial['ratio_vs_doctor']}.",
        "",
        "| | s (median / min / max) |",
        "|---|---|",
        *(f"| {name} | {v['median']} / {v['min']} / {v['max']} |" for name, v in rows),
        "",
    ]


def _probe_lines(probe: dict[str, Any]) -> list[str]:
    """The trial probe's own run, without PyTorch and beside its CPU build
    (bench/probe_bench.py)."""
    seconds, rates, targets = probe["seconds"], probe["read_mib_per_s"], probe["target_seconds"]
    torch = probe["torch"]
    return [
        "## the trial probe's own run (bench/probe_bench.py)",
        "",
        f"GPUs asked for; {probe['dataset_mib']} MiB of a dataset file read. Without PyTorch, "
        f"no GPU library imports; with PyTorch {torch['version']} (CPU build, `import torch` "
        f"{torch['import_s']} s) the GPU part finds no CUDA build. Within every target: "
        f"{'yes' if probe['within_target'] else 'no'}.",
        "",
        "| program | s (median / max) | target s | dataset MiB/s |",
        "|---|---|---|---|",
        *(
            f"| {name} | {seconds[name]['median']} / {seconds[name]['max']} | {targets[name]} "
            f"| {rates[name]} |"
            for name in seconds
        ),
        "",
    ]


def _fleet_lines(fleet: dict[str, Any]) -> list[str]:
    """doctor over many namespaces in one run, next to one namespace and to a loop of runs."""
    seconds, requests = fleet["seconds"], fleet["requests"]
    return [
        "## doctor over many training namespaces in one run (bench/fleet_bench.py)",
        "",
        f"{fleet['pods']} pods, {fleet['namespaces']} training namespaces.",
        "",
        "| one run over all s | one namespace s | a loop of single runs s | x one namespace "
        "| speedup vs the loop | requests (all / one / loop) |",
        "|---|---|---|---|---|---|",
        f"| {seconds['fleet']['median']} | {seconds['single']['median']} "
        f"| {seconds['loop']['median']} | {fleet['ratio_vs_single']} "
        f"| {fleet['speedup_vs_loop']}x | {requests['fleet']} / {requests['single']} "
        f"/ {requests['loop']} |",
        "",
    ]


def _compression_lines(compression: dict[str, Any]) -> list[str]:
    """The compressed-lists table: doctor with plain and with gzip-encoded pages, per link."""
    lines = [
        "## compressed lists: doctor with plain and with gzip-encoded pages",
        "",
        f"{compression['pods']} pods, through a proxy on this machine's network address. A page "
        f"of 500 pods: {compression['page_bytes']:,} bytes, {compression['page_gzip_bytes']:,} "
        f"gzip-encoded at level 1 ({compression['ratio']}x); encoding it took "
        f"{compression['server_compress_seconds_per_page']} s (the API server's time, not in "
        f"the rows), decoding it {compression['client_decompress_seconds_per_page']} s.",
        "",
        "| link | plain s / CPU s / MB | gzip s / CPU s / MB |",
        "|---|---|---|",
    ]
    for link, row in compression["links"].items():
        cells = [
            f"{row[name]['seconds']['median']} / {row[name]['cpu_seconds']['median']} / "
            f"{row[name]['peak_rss_mb']}"
            for name in ("plain", "gzip")
        ]
        lines.append(f"| {link} | {cells[0]} | {cells[1]} |")
    return [*lines, ""]


def bench_startup(runs: int) -> dict[str, Any]:
    """Import milliseconds of doctor, lint and refresh (JSON output, against a three-pod
    namespace), and this machine's speed, interleaved."""
    truegreen = installed("truegreen")
    with RealisticServer(3) as server, tempfile.TemporaryDirectory() as scratch:
        kubeconfig = str(server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train"))
        return startup(
            {
                "doctor": [
                    truegreen,
                    "doctor",
                    "--kubeconfig",
                    kubeconfig,
                    *NO_REGISTRY,
                    "-o",
                    "json",
                ],
                "lint": [truegreen, "lint", str(ROOT / "examples" / "manifests"), "-o", "json"],
                "refresh": [truegreen, "refresh", "--kubeconfig", kubeconfig, "-o", "json"],
            },
            runs,
        )


PARTS = (
    "doctor",
    "startup",
    "compression",
    "refresh",
    "lint",
    "monitor",
    "fleet",
    "monitor-fleet",
    "wan",
    "probe",
    "trial",
)
WITHIN = {"monitor-fleet": ("monitor", ("fleet", "fleet_cpu_ratio"))}
"""Parts whose figures are keys of another part's section."""
STARTUP_RUNS = 7
"""The startup part's least number of runs: import times move more than wall times."""
COMPRESSION_RUNS = 3
"""The compression part's most runs: a plain run over the slow link takes about 9 s."""
MONITOR_RUNS = 1
"""The monitor parts measure one window per size (bench/monitor_bench.py)."""
COMMANDS = ("doctor", "lint", "refresh")
"""The sections the startup part writes its import times into."""


def _stamp(runs: int) -> dict[str, Any]:
    """When a part was measured, the machine's load then and how many runs it took."""
    return {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "runs": runs,
    }


def carry_over(previous: dict[str, Any], document: dict[str, Any], ran: list[str]) -> None:
    """Keep the figures of the parts not run now from the previous results, with their stamps."""
    for part in PARTS:
        if part in ran:
            continue
        if part in WITHIN:
            section_name, keys = WITHIN[part]
            kept = {k: v for k, v in previous.get(section_name, {}).items() if k in keys}
            document.setdefault(section_name, {}).update(kept)
        elif part == "startup":
            for command in COMMANDS:
                kept = {
                    k: v for k, v in previous.get(command, {}).items() if k.startswith("import_ms")
                }
                if kept:
                    document.setdefault(command, {}).update(kept)
            if "calibration" in previous.get("machine", {}):
                document["machine"]["calibration"] = previous["machine"]["calibration"]
        elif part in previous:
            section = document.setdefault(part, {})
            for key, value in previous[part].items():
                if not key.startswith("import_ms"):
                    section.setdefault(key, value)
        stamp = previous.get("measured", {}).get(part)
        if stamp is not None:
            document["measured"][part] = stamp


def _monitor_parts(document: dict[str, Any], parts: list[str]) -> None:
    """The monitor's rows: at each cluster size, and over many namespaces (`monitor.fleet`)."""
    if "monitor" in parts:
        sys.stderr.write("bench: monitor\n")
        document.setdefault("monitor", {}).update(bench_monitor())
        document["measured"]["monitor"] = _stamp(MONITOR_RUNS)
    if "monitor-fleet" in parts:
        sys.stderr.write("bench: monitor over many namespaces\n")
        document.setdefault("monitor", {}).update(bench_monitor_fleet())
        document["measured"]["monitor-fleet"] = _stamp(MONITOR_RUNS)


def kinds_section(point: dict[str, Any]) -> dict[str, Any]:
    """doctor on a namespace holding every training kind and a Kueue-queued job, against the
    decode floor of the same cluster: what the reads those kinds cause cost."""
    doctor = _median(point, "doctor")
    return {
        "median_seconds": doctor,
        "peak_rss_mb": point["doctor"]["peak_rss_mb"],
        "requests": point["doctor_requests"],
        "ratio_vs_floor": _ratio(doctor, _median(point, "decode_floor")),
    }


def _fleet_part(document: dict[str, Any]) -> None:
    """doctor over many namespaces (bench/fleet_bench.py), with when it was measured."""
    sys.stderr.write("bench: fleet\n")
    document["fleet"] = bench_fleet()
    document["measured"]["fleet"] = _stamp(document["fleet"]["runs"])


def _wan_part(document: dict[str, Any]) -> None:
    """doctor through a link with latency (bench/wan_bench.py), with when it was measured."""
    sys.stderr.write("bench: doctor through a link with latency\n")
    document["wan"] = bench_wan()
    document["measured"]["wan"] = _stamp(document["wan"]["runs"])


def _probe_part(document: dict[str, Any], parts: list[str], runs: int) -> None:
    """The trial probe's own run (bench/probe_bench.py), with when it was measured."""
    if "probe" in parts:
        sys.stderr.write("bench: the trial probe\n")
        document["probe"] = bench_probe(runs)
        document["measured"]["probe"] = _stamp(runs)


def _trial_parts(document: dict[str, Any], parts: list[str], runs: int) -> None:
    """The trial probe's own run and what doctor --trial adds beyond it, each with when it was
    measured."""
    _probe_part(document, parts, runs)
    if "trial" in parts:
        sys.stderr.write("bench: what doctor --trial adds\n")
        document["trial"] = bench_trial(runs)
        document["measured"]["trial"] = _stamp(runs)


def _doctor_part(document: dict[str, Any], sizes: list[int], runs: int, baseline_max: int) -> None:
    """doctor at each size beside the tools people use instead, then with every training kind."""
    points = {}
    for pods in sizes:
        sys.stderr.write(f"bench: doctor at {pods} pods\n")
        points[pods] = bench_size(pods, runs, baselines=pods <= baseline_max)
    document["doctor"] = doctor_section(points)
    at = document["doctor"]["pods"]
    sys.stderr.write(f"bench: doctor at {at} pods, every training kind and a queue\n")
    document["doctor"]["with_training_kinds"] = kinds_section(
        bench_size(at, runs, baselines=False, training_kinds=True)
    )
    document["measured"]["doctor"] = _stamp(runs)


def _startup_part(document: dict[str, Any], runs: int) -> None:
    """Each command's import time and this machine's speed, into the commands' sections."""
    sys.stderr.write("bench: startup\n")
    startup_runs = bench_startup(max(runs, STARTUP_RUNS))
    document["machine"]["calibration"] = startup_runs["calibration"]
    for command, imports in startup_runs["import_ms"].items():
        section = document.setdefault(command, {})
        section["import_ms"] = imports["median"]
        section["import_ms_calibrated"] = imports["calibrated"]
        section["import_ms_runs"] = imports
    document["measured"]["startup"] = _stamp(max(runs, STARTUP_RUNS))


class Program(Struct, frozen=True):
    """A program some parts of the bench run."""

    name: str
    """Its name on PATH, or (`on_path` false) its path in this checkout."""
    on_path: bool
    install: str
    parts: tuple[str, ...]


def _apt(binary: str) -> str:
    """How to install a program the suite also needs (tests/support/real_parts.py)."""
    return "apt-get install " + next(p.package for p in REAL_PARTS if p.binary == binary)


MAKE_BENCH = "make bench installs it"
PROGRAMS = (
    Program("docker-registry", True, _apt("docker-registry"), ("refresh",)),
    Program("kubectl", True, _apt("kubectl"), ("doctor", "wan")),
    Program(
        ".venv-bench/truegreen/bin/truegreen",
        False,
        MAKE_BENCH,
        tuple(part for part in PARTS if part != "probe"),
    ),
    Program(".venv-bench/kubernetes/bin/python", False, MAKE_BENCH, ("doctor",)),
    Program(".venv-bench/checkov/bin/checkov", False, MAKE_BENCH, ("lint",)),
    Program(".venv-torch/bin/python", False, "make .venv-torch/.installed", ("probe",)),
)
"""What each part runs beside Python: checked before anything is measured, so a missing one
never throws away the parts measured before the one that needs it."""


def missing_programs(parts: list[str], *, on_path_only: bool = False) -> str | None:
    """One line naming every program the parts need that is not here and how to install it;
    None when nothing is missing. `on_path_only`: the programs `make bench` does not install."""
    missing = []
    for program in PROGRAMS:
        needing = [part for part in program.parts if part in parts]
        if not needing or (on_path_only and not program.on_path):
            continue
        there = shutil.which(program.name) if program.on_path else (ROOT / program.name).exists()
        if not there:
            missing.append(f"{program.name} (for {', '.join(needing)}; {program.install})")
    return f"bench: nothing measured; missing: {', '.join(missing)}" if missing else None


def main() -> None:
    sizes = [
        int(s) for s in os.environ.get("BENCH_SIZES", "3,10,1000,10000,30000,100000").split(",")
    ]
    runs = int(os.environ.get("BENCH_RUNS", "5"))
    baseline_max = int(os.environ.get("BENCH_BASELINE_MAX", "30000"))
    parts = os.environ.get("BENCH_PARTS", ",".join(PARTS)).split(",")
    missing = missing_programs(parts)
    if missing:
        raise SystemExit(missing)
    document: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "runs": runs,
        "measured": {},
    }
    if "doctor" in parts:
        _doctor_part(document, sizes, runs, baseline_max)
    if "startup" in parts:
        _startup_part(document, runs)
    if "compression" in parts:
        sys.stderr.write("bench: compression\n")
        document["compression"] = bench_compression(min(runs, COMPRESSION_RUNS))
        document["measured"]["compression"] = _stamp(min(runs, COMPRESSION_RUNS))
    if "refresh" in parts:
        sys.stderr.write("bench: refresh\n")
        document.setdefault("refresh", {}).update(bench_refresh(runs))
        document["measured"]["refresh"] = _stamp(runs)
    if "lint" in parts:
        sys.stderr.write("bench: lint\n")
        document.setdefault("lint", {}).update(bench_lint(runs))
        document["measured"]["lint"] = _stamp(runs)
    _monitor_parts(document, parts)
    if "fleet" in parts:
        _fleet_part(document)
    if "wan" in parts:
        _wan_part(document)
    _trial_parts(document, parts, runs)
    document["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    latest = RESULTS / "latest.json"
    if set(parts) != set(PARTS) and latest.exists():
        carry_over(json.loads(latest.read_text()), document, parts)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(document, indent=2) + "\n")
    text = markdown(document)
    (RESULTS / "latest.md").write_text(text)
    write_readme(ROOT / "README.md", document)
    write_monitor_page(ROOT / "docs" / "monitor.md", document)
    sys.stdout.write(text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--programs-on-path"]:
        chosen = os.environ.get("BENCH_PARTS", ",".join(PARTS)).split(",")
        sys.exit(missing_programs(chosen, on_path_only=True))
    main()
