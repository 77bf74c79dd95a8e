"""The trial probe's own run: `python3 -I probe.py` and `sh probe.sh` as a container without
PyTorch runs them, and `python -I probe.py` beside PyTorch's CPU build (.venv-torch, `make
.venv-torch/.installed`), `import torch` included; each reads 64 MiB of a dataset file and
measures /dev/shm, GPUs asked for, interleaved after a warm-up. The targets: at most 10 s
without PyTorch (the read is bounded; the imports it tries fail fast), at most 20 s with it
(set for a GPU machine, where CUDA's start adds to the import; here the CPU
build, which has no CUDA to start)."""

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.measure import measured, summary

ROOT = Path(__file__).resolve().parents[1]
TRIAL = ROOT / "src" / "truegreen" / "trial"
TORCH_PYTHON = ROOT / ".venv-torch" / "bin" / "python"
TARGET_SECONDS = 10.0
TORCH_TARGET_SECONDS = 20.0
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
        if not TORCH_PYTHON.exists():
            raise SystemExit(f"benchmark: {TORCH_PYTHON} is missing: make .venv-torch/.installed")
        programs = {
            "python": [sys.executable, "-I", str(TRIAL / "probe.py")],
            "sh": ["sh", str(TRIAL / "probe.sh")],
            "python with PyTorch (CPU build)": [str(TORCH_PYTHON), "-I", str(TRIAL / "probe.py")],
        }
        targets = dict.fromkeys(programs, TARGET_SECONDS) | {
            "python with PyTorch (CPU build)": TORCH_TARGET_SECONDS
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
    torch = last["python with PyTorch (CPU build)"]["gpu"]["libraries"][0]
    return {
        "dataset_mib": DATASET_MIB,
        "target_seconds": targets,
        "seconds": {name: summary(values) for name, values in seconds.items()},
        "read_mib_per_s": {name: last[name]["data"]["mib_per_s"] for name in programs},
        "torch": {"version": torch["version"], "import_s": torch["import_s"]},
        "within_target": all(max(seconds[name]) <= targets[name] for name in programs),
    }
