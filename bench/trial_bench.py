"""What `doctor --trial` adds beyond the trial pods' own time: the leftover search, the creates,
the waits (the poll), the read-back (Events, the pod, its log) and the deletes. Against the fake
API server and its trial kubelet (tests/support/fake_kubelet.py, the real probe as a local
process, no pull time), one namespace with a one-pod training job; doctor without the trial and
with it, interleaved after a warm-up. The pods' own time (from the kubelet's taking the pod to
its end written) is what the kubelet measures; the rest of the difference is doctor's. The
target: at most 2 s."""

import json
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.fake_apiserver import FakeApiServer
from tests.support.fake_kubelet import FakeKubelet
from tests.support.scenarios import healthy, training_job

from bench.measure import installed, measured, summary

TARGET_SECONDS = 2.0
DOCTOR_OK = (0, 2, 3)


def _namespace() -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    return [
        *(o for o in healthy(now) if o["kind"] != "Job"),
        training_job("train-llm", now, gpus=0),
    ]


def _trial_codes(stdout: str) -> list[str]:
    report = json.loads(stdout)
    return [f["code"] for f in report["findings"] if f["check"] == "trial"]


def bench_trial(runs: int) -> dict[str, Any]:
    """doctor's wall seconds without and with the trial, the pods' own seconds, and the
    difference left to doctor, each as median, min and max."""
    with FakeApiServer() as server, tempfile.TemporaryDirectory() as scratch:
        server.add(*_namespace())
        server.admission.allow_creates = True
        kubelet = FakeKubelet(server, start_seconds=0.0)
        server.kubelet = kubelet
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
        plain = [installed("truegreen"), "doctor", "--kubeconfig", str(kubeconfig)]
        plain += ["--no-registry", "-o", "json"]
        trial = [*plain, "--trial"]
        measured(plain, DOCTOR_OK)  # warm-up: byte-code caches, the server's first answers
        warm = measured(trial, DOCTOR_OK)
        kubelet.wait()
        if _trial_codes(warm.stdout) != ["trial.ok"]:
            raise SystemExit(f"bench: the trial did not measure: {_trial_codes(warm.stdout)}")
        without, with_trial, pods, added = [], [], [], []
        for _ in range(runs):
            without.append(measured(plain, DOCTOR_OK).seconds)
            kubelet.spans.clear()
            run = measured(trial, DOCTOR_OK)
            kubelet.wait()
            spans = list(kubelet.spans.values())
            own = max(end for _, end in spans) - min(start for start, _ in spans)
            with_trial.append(run.seconds)
            pods.append(own)
            added.append(run.seconds - without[-1] - own)
    return {
        "target_seconds": TARGET_SECONDS,
        "doctor_seconds": summary(without),
        "doctor_trial_seconds": summary(with_trial),
        "trial_pods_seconds": summary(pods),
        "added_seconds": summary(added),
        "ratio_vs_doctor": round(statistics.median(with_trial) / statistics.median(without), 2),
        "within_target": max(added) <= TARGET_SECONDS,
    }
