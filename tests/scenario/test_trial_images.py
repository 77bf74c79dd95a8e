"""`doctor --trial` on a job whose pod has init containers: the image findings are the training
image's alone.

The kubelet starts the job's init containers (native sidecars included) before the main
container (pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions), pulling each one's
own image first and writing its Events on that container (`involvedObject.fieldPath`
`spec.initContainers{NAME}`, pkg/kubelet/container/ref.go GenerateContainerRef), as the fake
kubelet does (tests/support/fake_kubelet.py). A small init image that came quickly says nothing
of how the training image comes, and must never hide the training image still downloading.
"""

from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.fake_kubelet import FakeKubelet
from tests.support.scenarios import NAMESPACE, healthy, training_job
from tests.support.trial_results import trial_findings, trial_pods_left

Obj = dict[str, Any]
INIT_IMAGE = "registry.example.com/tools/fetch-config:1.0"


def _job_with_init_container(now: datetime) -> list[Obj]:
    """The healthy namespace's training job asking for no GPU (no GPU library is in this
    machine's Python), with an init container of a small image of its own."""
    job = training_job("train-llm", now, gpus=0)
    job["spec"]["template"]["spec"]["initContainers"] = [
        {"name": "fetch-config", "image": INIT_IMAGE, "command": ["sh", "-c", "true"]}
    ]
    return [*(o for o in healthy(now) if o["kind"] != "Job"), job]


def test_an_init_container_s_quick_pull_never_hides_the_training_image_still_downloading(
    doctor: Doctor,
) -> None:
    """The init container's image came in 0.4 s; the training image's pull had not ended when
    the trial's time ran out (its Pulling, no Pulled, the trainer waiting as PodInitializing):
    that is the measured failure, as without the init container, and no download time is
    claimed for the training image."""
    doctor.load(_job_with_init_container)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stall=True)
    result = doctor.live("--trial", "--trial-timeout", "4", "-o", "json", "--verbose")
    found = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in found] == [("trial.still-pulling", "fail")], found
    assert result.exit_code == 2
    init_pulled = [
        e
        for e in doctor.server.list_objects("Event", NAMESPACE)
        if e["reason"] == "Pulled"
        and e["involvedObject"].get("fieldPath") == "spec.initContainers{fetch-config}"
    ]
    assert len(init_pulled) == 1, "precondition: the init container's image came"
    assert trial_pods_left(doctor.server) == []


def test_the_download_time_said_is_the_training_image_s(doctor: Doctor) -> None:
    """Both images came: the ok line gives the training image's time (1.31 s including
    waiting), not the init container's (0.412 s)."""
    doctor.load(_job_with_init_container)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server)
    result = doctor.live("--trial", "-o", "json")
    found = trial_findings(result.json())
    assert [(f["code"], f["status"]) for f in found] == [("trial.ok", "ok")], found
    headline = found[0]["headline"]
    assert headline.count("the image came in") == 1, headline
    assert "the image came in 1.3 s" in headline, headline
    assert result.exit_code == 0
    assert trial_pods_left(doctor.server) == []
