"""doctor over many training namespaces in one run, next to one namespace and to a loop.

The realistic cluster of the doctor rows (bench/served.py) at FLEET_PODS pods, with
FLEET_NAMESPACES copies of the training namespace. Measured interleaved, each its own process:
`doctor --namespaces` over all of them; `doctor -n train` alone; and the shell loop an operator
writes today, one `doctor -n NAMESPACE` per namespace (its time is the sum of its runs).
`ratio_vs_single` is the fleet run over one namespace's run (target at most 1.5);
`speedup_vs_loop` the loop over the fleet run (target at least 20). Settings: FLEET_PODS
(default 30000), FLEET_NAMESPACES (default 40), FLEET_RUNS (default 3; the loop runs once per
run, after the two others). Every run asks no registry (`--no-registry`), as the doctor rows.
"""

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.measure import installed, measured, summary
from bench.served import RealisticServer, training_namespace_names

DOCTOR_OK = (0, 2, 3)
NO_REGISTRY = ("--no-registry",)
"""As the doctor rows run (bench/run.py): the namespaces' images name registry.example.com,
which nothing here serves, and what is measured is the reading of the cluster."""


def bench_fleet() -> dict[str, Any]:
    """The fleet row: seconds of each way, their ratios, and the requests of each."""
    pods = int(os.environ.get("FLEET_PODS", "30000"))
    count = int(os.environ.get("FLEET_NAMESPACES", "40"))
    runs = int(os.environ.get("FLEET_RUNS", "3"))
    names = training_namespace_names(count)
    truegreen = installed("truegreen")
    with (
        RealisticServer(pods, training_namespaces=count) as server,
        tempfile.TemporaryDirectory() as scratch,
    ):
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
        base = [truegreen, "doctor", "--kubeconfig", str(kubeconfig), "--request-timeout", "300"]
        base += NO_REGISTRY
        fleet = [*base, "--namespaces", ",".join(names), "-o", "json"]

        def one(namespace: str) -> list[str]:
            return [*base, "-n", namespace, "-o", "json"]

        server.freeze()
        measured(one(names[0]), DOCTOR_OK)  # warm-up, which also fills the pre-encoded answers
        before = len(server.log)
        measured(one(names[0]), DOCTOR_OK)
        single_requests = len(server.log) - before
        before = len(server.log)
        warm = measured(fleet, DOCTOR_OK)
        fleet_requests = len(server.log) - before
        verdicts = _verdicts(warm.stdout)
        seconds: dict[str, list[float]] = {"fleet": [], "single": [], "loop": []}
        cpu: dict[str, list[float]] = {"fleet": [], "single": [], "loop": []}
        for _ in range(runs):
            for name, command in (("fleet", fleet), ("single", one(names[0]))):
                run = measured(command, DOCTOR_OK)
                seconds[name].append(run.seconds)
                cpu[name].append(run.cpu_seconds)
            sys.stderr.write("bench: fleet: the loop of single runs\n")
            loop = [measured(one(namespace), DOCTOR_OK) for namespace in names]
            seconds["loop"].append(sum(r.seconds for r in loop))
            cpu["loop"].append(sum(r.cpu_seconds for r in loop))
    fleet_s = summary(seconds["fleet"])["median"]
    single_s = summary(seconds["single"])["median"]
    loop_s = summary(seconds["loop"])["median"]
    return {
        "pods": pods,
        "runs": runs,
        "namespaces": count,
        "ratio_vs_single": round(fleet_s / single_s, 2),
        "speedup_vs_loop": round(loop_s / fleet_s, 1),
        "seconds": {name: summary(values) for name, values in seconds.items()},
        "cpu_seconds": {name: summary(values) for name, values in cpu.items()},
        "requests": {
            "fleet": fleet_requests,
            "single": single_requests,
            "loop": single_requests * count,
        },
        "verdicts": verdicts,
    }


def _verdicts(stdout: str) -> dict[str, int]:
    """The fleet document's counts: a row that measured a broken run would say so."""
    counts: dict[str, int] = json.loads(stdout)["counts"]
    return counts
