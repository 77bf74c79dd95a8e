"""`doctor --trial` where the dataset reads slowly or not at all: the probe ends its run before
doctor stops reading, however long the image took to come, so what it measured is read.

The kubelet starts the probe only once the image has come (pkg/kubelet/kuberuntime/
kuberuntime_container.go startContainer pulls first): a probe whose run counted only from its
own start would end after the trial's time when the download took long, and its line would never
be read. The API server's clock (its answers' `Date`) gives the probe the moment the trial's time
ends, less the margin its line needs to be read (truegreen.trial.run `_timed`).
"""

import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_kubelet import FakeKubelet
from tests.support.scenarios import healthy, training_job
from tests.support.trial_results import trial_findings, trial_pods_left

Obj = dict[str, Any]
TRIAL_SECONDS = 20


def _job_reading_its_dataset(now: datetime) -> list[Obj]:
    """The healthy namespace's training job asking for no GPU (no GPU library is in this
    machine's Python), its claim `datasets` mounted at /data."""
    job = training_job("train-llm", now, gpus=0)
    job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/data"}
    ]
    return [*(o for o in healthy(now) if o["kind"] != "Job"), job]


def _python_reading_slowly(folder: Path, pause: float) -> str:
    """An image's `python3` whose every read of a file under the dataset mount
    (TRUEGREEN_PROBE_DATA) first waits `pause` seconds: an NFS or FUSE mount that answers
    slowly or, with a pause past the trial's time, not at all. Other reads are left alone."""
    program = folder / "reading_slowly.py"
    program.write_text(
        "import os, sys, time\n"
        "_open, _read, slow = os.open, os.read, set()\n"
        "def opened(path, *args, **kwargs):\n"
        "    descriptor = _open(path, *args, **kwargs)\n"
        "    if str(path).startswith(os.environ.get('TRUEGREEN_PROBE_DATA') or '\\0'):\n"
        "        slow.add(descriptor)\n"
        "    return descriptor\n"
        "def read(descriptor, size):\n"
        "    if descriptor in slow:\n"
        f"        time.sleep({pause})\n"
        "    return _read(descriptor, size)\n"
        "os.open, os.read = opened, read\n"
        "code = sys.argv[2]\n"  # python3 -c <probe.py>
        "sys.argv = ['-c', *sys.argv[3:]]\n"
        "exec(compile(code, '<string>', 'exec'), {'__name__': '__main__'})\n",
        encoding="utf-8",
    )
    launcher = folder / "python-reading-slowly"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {program} "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    return str(launcher)


@pytest.mark.parametrize(
    ("pause", "pull", "said"),
    [
        # A read that never answers, the image already on the machine.
        (1e6, 0.0, "no answer before the probe's deadline"),
        # The same, the image taking 8 s of the trial's 20 to come: the probe starts 8 s late.
        (1e6, 8.0, "no answer before the probe's deadline"),
        # 1 MiB every 0.5 s: 2 MiB/s, 32 s for the 64 MiB read, cut by the deadline.
        (0.5, 8.0, "the probe's deadline came after"),
    ],
    ids=["hangs", "hangs-after-a-slow-download", "slow-after-a-slow-download"],
)
def test_a_dataset_that_reads_slowly_or_not_at_all_is_measured_within_the_trial_s_time(
    doctor: Doctor, tmp_path: Path, pause: float, pull: float, said: str
) -> None:
    """Reported as the probe measured it (`trial.data-slow`, warn), never as "the probe had
    not reported when the trial's time ran out" (unknown): its run ended before doctor
    stopped reading."""
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "shard-000.bin").write_bytes(b"\0" * (64 << 20))
    doctor.load(_job_reading_its_dataset)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(
        doctor.server,
        volumes={"datasets": dataset},
        python=_python_reading_slowly(tmp_path, pause),
        rank0_pull=pull,
    )
    began = time.monotonic()
    result = doctor.live(
        "--trial", "--trial-timeout", str(TRIAL_SECONDS), "-o", "json", "--verbose"
    )
    took = time.monotonic() - began
    found = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in found][-1:] == [("trial.data-slow", "warn")], found
    assert said in found[-1]["headline"], found[-1]["headline"]
    assert result.exit_code == 0
    assert took < TRIAL_SECONDS + 10, f"the trial's time bounds the run: {took:.1f} s"
    [env] = doctor.server.kubelet.started.values()
    assert int(env["TRUEGREEN_PROBE_TIMEOUT_S"]) <= TRIAL_SECONDS - 5, env
    assert int(env["TRUEGREEN_PROBE_END_AT"]) <= time.time(), "the end is on the server's clock"
    assert trial_pods_left(doctor.server) == []
