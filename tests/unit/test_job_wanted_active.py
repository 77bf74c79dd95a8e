"""How many pods a batch Job's controller still wants active once some succeeded
(kubernetes pkg/controller/job/job_controller.go manageJob `wantActive`), value by value."""

from typing import Any

import pytest

from truegreen.doctor.knowledge.training import from_job, wanted_active


def _job(status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "run", "namespace": "train"},
        "spec": {"template": {"spec": {"containers": [{"name": "t"}]}}, **spec},
        "status": status,
    }


@pytest.mark.parametrize(
    ("spec", "status", "wanted"),
    [
        # Before any success every pod of the set is wanted.
        ({"parallelism": 4, "completions": 4}, {"active": 4}, None),
        ({"parallelism": 4, "completions": 4}, {"succeeded": 0, "active": 4}, None),
        ({"parallelism": 4}, {"active": 4}, None),
        # completions - succeeded, at most parallelism.
        ({"parallelism": 4, "completions": 4}, {"succeeded": 2, "active": 2}, 2),
        ({"parallelism": 4, "completions": 10}, {"succeeded": 3, "active": 4}, 4),
        ({"parallelism": 4, "completions": 10}, {"succeeded": 8, "active": 2}, 2),
        ({"completions": 3}, {"succeeded": 1}, 1),
        ({"parallelism": 4, "completions": 4}, {"succeeded": 5}, 0),
        # No completions (a work queue): after a success, what is active stays, no new pod.
        ({"parallelism": 4}, {"succeeded": 1, "active": 3}, 3),
        ({"parallelism": 4}, {"succeeded": 1}, 0),
    ],
)
def test_the_job_controller_s_wanted_active(
    spec: dict[str, Any], status: dict[str, Any], wanted: int | None
) -> None:
    assert wanted_active(_job(status, **spec)) == wanted


def test_a_job_read_carries_what_its_controller_wants_beside_its_template_count() -> None:
    job = from_job(
        _job({"succeeded": 2, "active": 2}, parallelism=4, completions=4, completionMode="Indexed")
    )
    assert (job.pod_sets[0].count, job.active_wanted, job.together) == (4, 2, True)
    assert from_job(_job({}, parallelism=4, completions=4)).active_wanted is None
