"""The probe's GPU and collective parts on a real GPU machine: PyTorch imported, CUDA started,
the devices listed, one NCCL all-reduce. Skipped where no NVIDIA GPU and PyTorch are present
(`nvidia-smi` missing, or the interpreter named by TRUEGREEN_GPU_PYTHON, else `python3`, cannot
import torch)."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from truegreen.trial import probe as probe_module
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.readback import TrialPod, pod_findings

PROBE = Path(probe_module.__file__).parent / "probe.py"
PYTHON = os.environ.get("TRUEGREEN_GPU_PYTHON") or shutil.which("python3") or "python3"


def _has_torch_and_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    done = subprocess.run(
        [PYTHON, "-c", "import torch"], capture_output=True, timeout=60, check=False
    )
    return done.returncode == 0


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _has_torch_and_gpu(), reason="no NVIDIA GPU with PyTorch here"),
]


def _run(**settings: str) -> tuple[str, dict[str, Any]]:
    done = subprocess.run(
        [PYTHON, str(PROBE)],
        env={**os.environ, **settings},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    return line, json.loads(line)


def test_pytorch_sees_the_gpu_and_nccl_all_reduces(tmp_path: Path) -> None:
    port = "29731"
    line, report = _run(
        TRUEGREEN_PROBE_GPUS="1",
        TRUEGREEN_PROBE_MASTER_ADDR="127.0.0.1",
        TRUEGREEN_PROBE_MASTER_PORT=port,
        TRUEGREEN_PROBE_DATA=str(tmp_path),
    )
    gpu = report["gpu"]
    assert gpu["status"] == "ok", gpu
    assert gpu["library"] == "torch"
    torch = gpu["libraries"][0]
    assert torch["device_count"] >= 1
    assert torch["devices"][0]["name"].startswith("NVIDIA")
    assert gpu["driver"]["version"]
    assert report["collective"]["status"] == "ok", report["collective"]
    assert report["collective"]["backend"] == "nccl"
    assert report["collective"]["correct"] is True
    assert report["elapsed_s"] <= 20, "the probe with PyTorch must end within 20 s"
    outcomes = {f.outcome: f.level for f in pod_findings(TrialPod(pod="p", log=line))}
    assert outcomes[Outcome.GPUS_SEEN] is Level.OK
    assert outcomes[Outcome.COLLECTIVE_OK] is Level.OK


def test_no_visible_device_is_torch_s_own_words() -> None:
    line, report = _run(TRUEGREEN_PROBE_GPUS="1", CUDA_VISIBLE_DEVICES="")
    torch = report["gpu"]["libraries"][0]
    assert torch["status"] == "error"
    assert torch["error"] == "RuntimeError: No CUDA GPUs are available"
    found = pod_findings(TrialPod(pod="p", log=line))
    assert [f.outcome for f in found if f.level is Level.FAIL] == [Outcome.NO_GPU]
