"""lint throughput against Checkov and two YAML floors on a 5,000-file corpus, and the
catch-rate table.

The floors: PyYAML's safe load of every file (`SAFE_LOAD_FLOOR`: libyaml's parser, then
PyYAML's Python constructor and resolver building the objects; the target, lint at most 1.5x
it, is against this one, `ratio_vs_parse_floor`), and libyaml's parse alone
(`COMPOSE_FLOOR`: the node graph, no Python objects; `ratio_vs_compose_floor`, no target).
truegreen's loader (src/truegreen/yamlsafe.py) replaces PyYAML's constructor and resolver, so
it can run under the safe load; the compose floor is what no YAML reader here can beat.

Every tool runs as its own process, measured by bench/measure.py (wall time, CPU and peak RSS
from getrusage), after a warm-up, interleaved. Checkov runs its Kubernetes framework only, from its own venv (.venv-bench/checkov).
"""

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from bench.manifests import INCIDENTS, corpus
from bench.measure import Measurement, installed, measured, summary

ROOT = Path(__file__).resolve().parents[1]
CHECKOV = ROOT / ".venv-bench" / "checkov" / "bin" / "checkov"
# Exit 1 (Checkov) and 2 (truegreen) mean findings, not failure.
FINDINGS = (0, 1, 2)


def _truegreen(path: Path) -> list[str]:
    return [installed("truegreen"), "lint", str(path), "-o", "json"]


CHECKOV_PROBE_CHECKS = ("CKV_K8S_8", "CKV_K8S_9")
"""Liveness and readiness probe should be configured: Checkov's probe checks."""


def _checkov(path: Path, checks: tuple[str, ...] = ()) -> list[str]:
    flag = "-f" if path.is_file() else "-d"
    command = [str(CHECKOV), flag, str(path), "--framework", "kubernetes", "--quiet", "-o", "json"]
    command += ["--skip-download"]
    if checks:
        command += ["--check", ",".join(checks)]
    return command


SAFE_LOAD_FLOOR = """
import os, sys, yaml
for parent, _, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith((".yaml", ".yml", ".json")):
            with open(os.path.join(parent, name), encoding="utf-8") as stream:
                for _ in yaml.load_all(stream.read(), Loader=yaml.CSafeLoader):
                    pass
"""
"""PyYAML's safe load: one Python process that reads every manifest file with CSafeLoader
(libyaml's parser, PyYAML's Python SafeConstructor and Resolver) and does nothing else (no
bounds, no duplicate keys, no lines, no rules, no output)."""

COMPOSE_FLOOR = SAFE_LOAD_FLOOR.replace("yaml.load_all(", "yaml.compose_all(")
"""libyaml's parse alone: the same files composed into nodes, no Python objects built."""


def _floor(script: str, path: Path) -> list[str]:
    return [sys.executable, "-c", script, str(path)]


def parse_floor(tree: Path, runs: int) -> dict[str, Any]:
    """truegreen lint beside both floors on the same tree, interleaved after a warm-up."""
    tools = {
        "truegreen": _truegreen(tree),
        "parse_floor": _floor(SAFE_LOAD_FLOOR, tree),
        "compose_floor": _floor(COMPOSE_FLOOR, tree),
    }
    for command in tools.values():
        _run(command)  # warm-up
    seconds: dict[str, list[float]] = {name: [] for name in tools}
    for _ in range(runs):
        for name, command in tools.items():
            seconds[name].append(_run(command).seconds)
    return {"lint_seconds": summary(seconds["truegreen"]), **_floor_ratios(seconds)}


def _floor_ratios(seconds: dict[str, list[float]]) -> dict[str, Any]:
    """Each floor's seconds and lint's ratio to it."""
    lint = statistics.median(seconds["truegreen"])
    figures: dict[str, Any] = {}
    for floor in ("parse_floor", "compose_floor"):
        figures[f"{floor}_seconds"] = summary(seconds[floor])
        figures[f"ratio_vs_{floor}"] = round(lint / statistics.median(seconds[floor]), 2)
    return figures


def _run(command: list[str]) -> Measurement:
    return measured(command, FINDINGS)


def _checkov_failures(output: str) -> set[str]:
    reports = json.loads(output) if output.strip() else []
    if isinstance(reports, dict):
        reports = [reports]
    return {
        check["check_id"]
        for report in reports
        for check in report.get("results", {}).get("failed_checks", [])
    }


def catch_rate(scratch: Path) -> dict[str, Any]:
    """Each labelled incident through both tools: what each says, and the share caught."""
    rows = []
    for number, incident in enumerate(INCIDENTS):
        path = scratch / f"incident-{number}.yaml"
        path.write_text(yaml.safe_dump_all(incident.documents, sort_keys=False))
        findings = json.loads(_run(_truegreen(path)).stdout)["findings"]
        found = {f["rule"] for f in findings if f["severity"] == "error"}
        failed = _checkov_failures(_run(_checkov(path, CHECKOV_PROBE_CHECKS)).stdout)
        expected, naming = incident.truegreen_rule, incident.checkov_check
        rows.append(
            {
                "incident": incident.name,
                "problem": expected is not None,
                "truegreen": sorted(found),
                "truegreen_right": (expected in found) if expected else not found,
                "checkov": sorted(failed),
                # Caught only by the check that names the problem: CKV_K8S_8 failing on a
                # probe-port typo asks for a liveness probe, which is not the fix.
                "checkov_right": (naming in failed) if expected else not failed,
            }
        )
    problems = [row for row in rows if row["problem"]]
    return {
        "cases": rows,
        "catch_rate": {
            tool: round(sum(bool(row[f"{tool}_right"]) for row in problems) / len(problems), 2)
            for tool in ("truegreen", "checkov")
        },
        "false_alarms": {
            tool: sum(not row[f"{tool}_right"] for row in rows if not row["problem"])
            for tool in ("truegreen", "checkov")
        },
    }


def bench_lint(runs: int, files: int = 5000) -> dict[str, Any]:
    """The lint figures for latest.json."""
    if not CHECKOV.exists():
        raise SystemExit(f"lint benchmark: {CHECKOV} is missing (make bench installs it)")
    # Checkov phones home for its policy metadata unless told not to; the bench is offline.
    os.environ["BC_SKIP_MAPPING"] = "TRUE"
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        tree = scratch / "corpus"
        objects = corpus(tree, files)
        shutil.copytree(ROOT / "examples" / "manifests", tree / "examples")
        tools = {
            "truegreen": _truegreen(tree),
            "checkov": _checkov(tree),
            "parse_floor": _floor(SAFE_LOAD_FLOOR, tree),
            "compose_floor": _floor(COMPOSE_FLOOR, tree),
        }
        for command in tools.values():
            _run(command)  # warm-up
        seconds: dict[str, list[float]] = {name: [] for name in tools}
        megabytes: dict[str, list[float]] = {name: [] for name in tools}
        for _ in range(runs):
            for name, command in tools.items():
                run = _run(command)
                seconds[name].append(run.seconds)
                megabytes[name].append(run.peak_rss_mb)
        table = catch_rate(scratch)
    result: dict[str, Any] = {
        "files": files,
        "objects": objects,
        "runs": runs,
        **{
            name: {"seconds": summary(seconds[name]), "peak_rss_mb": round(max(megabytes[name]), 1)}
            for name in tools
        },
    }
    result["speedup_vs_checkov"] = round(
        statistics.median(seconds["checkov"]) / statistics.median(seconds["truegreen"]), 1
    )
    # The floors ran interleaved with the two tools above: their figures under the keys that
    # `bench_parse_floor` writes.
    result["lint_seconds"] = summary(seconds["truegreen"])
    result.update(_floor_ratios(seconds))
    result.update(table)
    return result


def bench_parse_floor(runs: int, files: int = 5000) -> dict[str, Any]:
    """Only the floors' comparison (no Checkov needed): `python -m bench.lint_bench floor`."""
    with tempfile.TemporaryDirectory() as scratch_name:
        tree = Path(scratch_name) / "corpus"
        objects = corpus(tree, files)
        shutil.copytree(ROOT / "examples" / "manifests", tree / "examples")
        return {"files": files, "objects": objects, "runs": runs, **parse_floor(tree, runs)}


if __name__ == "__main__":
    arguments = sys.argv[1:]
    bench = bench_lint
    if arguments[:1] == ["floor"]:
        bench, arguments = bench_parse_floor, arguments[1:]
    figures = bench(
        int(arguments[0]) if arguments else 1,
        int(arguments[1]) if len(arguments) > 1 else 5000,
    )
    print(json.dumps(figures, indent=2))
