"""`doctor --trial` where a step of the trial pod's start failed once and went through when the
kubelet tried it again: what the kubelet finally did is the measurement.

The kubelet retries every step of a pod's start in the pod's next sync: a pull with back-off
(pkg/kubelet/images/image_manager.go EnsureImageExists), the volumes' mount (pkg/kubelet/kubelet.go
SyncPod, WaitForAttachAndMount), the sandbox (pkg/kubelet/kuberuntime/kuberuntime_manager.go
SyncPod records FailedCreatePodSandBox and returns; the next sync makes it). Its Warning Events
stay behind: a registry that limited downloads once (429), a volume whose attach was still
under way, a sandbox the runtime made too slowly. The fake kubelet writes each in its real
shape, then starts the program (tests/support/fake_kubelet.py `RETRIED_WORDS`).
"""

from datetime import datetime
from typing import Any, get_args

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_kubelet import RETRIED_WORDS, FakeKubelet, Retried
from tests.support.scenarios import NAMESPACE, healthy, training_job
from tests.support.trial_results import trial_findings, trial_pods_left

Obj = dict[str, Any]


def _cpu_job(now: datetime) -> list[Obj]:
    """The healthy namespace's training job asking for no GPU (no GPU library is in this
    machine's Python)."""
    return [
        *(o for o in healthy(now) if o["kind"] != "Job"),
        training_job("train-llm", now, gpus=0),
    ]


@pytest.mark.parametrize("step", get_args(Retried))
def test_a_step_that_failed_once_and_went_through_is_no_failure(
    doctor: Doctor, step: Retried
) -> None:
    """The kubelet's Warning for the first try stays among the pod's Events, but the program
    started and the probe measured: the trial is ok, exit 0, and the first try's words are kept
    as a note in the details, never a failure that contradicts the measured start."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, retried=step)
    result = doctor.live("--trial", "--trial-timeout", "30", "-o", "json", "--verbose")
    warnings = [
        e["reason"]
        for e in doctor.server.list_objects("Event", NAMESPACE)
        if e.get("type") == "Warning"
    ]
    assert warnings, "precondition: the first try's Warning Events are there"
    found = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in found] == [("trial.ok", "ok")], found
    [ok] = found
    assert "the image came in 1.3 s" in ok["headline"], ok["headline"]
    assert (
        "a step of its start failed at first and went through when the machine retried it"
        in (ok["headline"])
    ), ok["headline"]
    [pod] = doctor.server.kubelet.pods
    assert any(
        detail.startswith(f"{pod}: retried: ") and RETRIED_WORDS[step] in detail
        for detail in ok["details"]
    ), ok["details"]
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []
