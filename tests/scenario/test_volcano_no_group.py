"""Pods that name Volcano and belong to no PodGroup: Volcano's scheduler never places them
(volcano pkg/scheduler/cache/event_handlers.go `getOrCreateJob`: a task whose group is empty
makes no job) and writes nothing about them; only Volcano's controllers give such a pod a group
(pkg/controllers/podgroup/pg_controller_handler.go `createNormalPodPGIfNotExist`,
`updatePodAnnotations`). Here the scheduler runs and the controllers do not."""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support import gang_objects as gang
from tests.support.scenarios import Obj, healthy, ts
from tests.support.training_kinds import ALL_GROUPS

JOB = "bert-large"


def _without_group(age: timedelta) -> Callable[[datetime], list[Obj]]:
    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.volcano_job(JOB, now, scheduler="volcano", age=age)
        for replicas in job["spec"]["pytorchReplicaSpecs"].values():
            replicas["template"]["metadata"].pop("annotations", None)
        job["spec"]["runPolicy"] = {}
        for pod in pods:
            pod["metadata"].pop("annotations", None)
            pod["metadata"]["creationTimestamp"] = ts(now - age)
        return [
            *healthy(now),
            gang.gpu_machine(),
            job,
            *pods,
            gang.volcano_scheduler_pod(now),
            gang.volcano_queue("default", gpus=8),
        ]

    return build


def _queue(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "queue"]


@pytest.mark.parametrize("minutes", [3, 20])
def test_programs_that_belong_to_no_volcano_group_never_start(doctor: Doctor, minutes: int) -> None:
    """Measured at 3 minutes as at 20: never "Ready: training can run.", nor only
    capacity.job-stuck with a `describe pod` that shows nothing."""
    doctor.server.install(*ALL_GROUPS)
    doctor.server.install(gang.VOLCANO_GROUP)
    doctor.load(_without_group(timedelta(minutes=minutes)))
    result = doctor.live("-o", "json", "-v")
    report = result.json()
    found = [f for f in _queue(report) if f["code"] == "queue.gang-no-group"]
    assert len(found) == 1, [f["code"] for f in report["findings"]]
    (finding,) = found
    assert (finding["status"], finding["basis"]) == ("fail", "measured")
    assert finding["headline"] == (
        f"The training job '{JOB}' waits to be placed by `volcano`, which places only programs "
        "that belong to one of its groups, and 4 of the job's belong to none: it will never "
        "start."
    )
    assert report["headline"]["code"] == "queue.gang-no-group"
    assert result.exit_code == 2


def test_a_program_created_seconds_ago_may_still_get_its_group(doctor: Doctor) -> None:
    """Volcano's controllers give a new pod its group within seconds: a pod younger than a
    minute without one is no finding yet."""
    doctor.server.install(*ALL_GROUPS)
    doctor.server.install(gang.VOLCANO_GROUP)
    doctor.load(_without_group(timedelta(seconds=10)))
    result = doctor.live("-o", "json")
    assert "queue.gang-no-group" not in [f["code"] for f in result.json()["findings"]]
