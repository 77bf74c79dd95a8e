"""The trial probe's own run, as a container without PyTorch runs it: `python3 -I probe.py` and
`sh probe.sh`, each reading 64 MiB of a dataset file and measuring /dev/shm, GPUs asked for
(none importable here), interleaved after a warm-up. The target: at most 10 s without PyTorch
(the read is bounded; the imports it tries fail fast)."""

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.measure import measured, summary

TRIAL = Path(__file__).resolve().parents[1] / "src" / "truegreen" / "trial"
TARGET_SECONDS = 10.0
DATASET_MIB = 64


def bench_probe(runs: int) -> dict[str, Any]:
    """Median, min and max wall seconds and the probe's own elapsed_s of each program."""
    with tempfile.TemporaryDirectory() as scratch:
        dataset = Path(scratch) / "shard-000.bin"
        dataset.write_bytes(os.urandom(DATASET_MIB << 20))
        settings = {
            "TRUEGREEN_PROBE_GPUS": "1",
            "TRUEGREEN_PROBE_DATA": str(dataset),
            "TRUEGREEN_PROBE_READ_MIB": str(DATASET_MIB),
        }
        os.environ.update(settings)  # the launcher passes this environment on
        programs = {
            "python": [sys.executable, "-I", str(TRIAL / "probe.py")],
            "sh": ["sh", str(TRIAL / "probe.sh")],
        }
        seconds: dict[str, list[float]] = {name: [] for name in programs}
        for command in programs.values():
            measured(command)  # warm-up: byte-code and the file in the page cache
        last: dict[str, dict[str, Any]] = {}
        for _ in range(runs):
            for name, command in programs.items():
                run = measured(command)
                seconds[name].append(run.seconds)
                last[name] = json.loads(run.stdout)
        for key in settings:
            del os.environ[key]
    return {
        "dataset_mib": DATASET_MIB,
        "target_seconds": TARGET_SECONDS,
        "seconds": {name: summary(values) for name, values in seconds.items()},
        "read_mib_per_s": {name: last[name]["data"]["mib_per_s"] for name in programs},
        "within_target": all(max(v) <= TARGET_SECONDS for v in seconds.values()),
    }
