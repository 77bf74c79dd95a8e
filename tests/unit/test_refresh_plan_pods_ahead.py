"""The plan where every copy already runs the tag's newest digest while another digest is
recorded (an operator moved the workload to another tag, deleted an OnDelete workload's pods,
or replaced its copies after the tag moved): recorded once healthy, never restarted again nor
refused; pinned value by value (the scenarios in tests/scenario/test_refresh_pods_ahead.py run
it against a real registry)."""

from datetime import UTC, datetime
from typing import Any

import pytest

from truegreen.images import parse_image
from truegreen.refresh.annotations import RECORDED_DIGEST, container_key
from truegreen.refresh.plan import (
    ContainerPlan,
    Decision,
    RefreshMode,
    plan_container,
    running_digests,
)
from truegreen.refresh.registry import Resolved
from truegreen.refresh.steps import Recorded, look

OLD, NEW, ARM, OTHER = (f"sha256:{c * 64}" for c in "0123")
IMAGE = "registry.example.com/team/runner:2.0"
REF = parse_image(IMAGE)
NEWEST = Resolved(NEW, "application/vnd.oci.image.index.v1+json", (ARM,))
AHEAD = f"the pods already run the newest digest, not the recorded {OLD[:19]}…"


def _pod(*digests: str) -> dict[str, Any]:
    return {
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "runner", "imageID": f"registry.example.com/team/runner@{d}"}
                for d in digests
            ],
        }
    }


def _plan(
    pods: list[dict[str, Any]],
    *,
    recorded: str | None = OLD,
    image: str = IMAGE,
    mode: RefreshMode = RefreshMode.RESTART,
    aimed: str | None = None,
) -> ContainerPlan:
    annotations = {container_key(RECORDED_DIGEST, "runner"): recorded} if recorded else {}
    container = {"name": "runner", "image": image}
    return plan_container(container, annotations, {str(REF): NEWEST}, pods, mode, aimed=aimed)


@pytest.mark.parametrize(
    ("pods", "recorded", "decision", "reason"),
    [
        # Every copy on the newest digest, or one of its platform manifests: recorded.
        ([_pod(NEW)], OLD, Decision.RECORD_RUNNING, AHEAD),
        ([_pod(NEW), _pod(ARM)], OLD, Decision.RECORD_RUNNING, AHEAD),
        (
            [_pod(NEW)],
            None,
            Decision.RECORD_RUNNING,
            "first run: the pods already run the newest digest",
        ),
        # A copy on another digest, or none at all: a restart is due, as ever.
        ([_pod(NEW), _pod(OLD)], OLD, Decision.RESTART, f"recorded {OLD[:19]}… is not the newest"),
        ([], OLD, Decision.RESTART, f"recorded {OLD[:19]}… is not the newest"),
        ([_pod(OLD)], None, Decision.RESTART, "nothing recorded yet"),
    ],
)
def test_pods_on_the_newest_digest_are_recorded_whatever_was_recorded(
    pods: list[dict[str, Any]], recorded: str | None, decision: Decision, reason: str
) -> None:
    plan = _plan(pods, recorded=recorded)
    assert plan == ContainerPlan(
        "runner",
        IMAGE,
        "2.0",
        NEW,
        recorded,
        running_digests(pods, "runner"),
        decision,
        reason,
        REF,
        frozenset({NEW, ARM}),
    )


def test_an_unclosed_restart_of_refresh_s_toward_another_digest_does_not_stop_the_record() -> None:
    """refresh's own restart toward OTHER stands in the template, unverified, and the tag has
    moved on to NEW, which every copy runs: recorded once healthy, the table judging the pods
    that restart made as its own."""
    plan = _plan([_pod(NEW)], aimed=OTHER)
    assert (plan.decision, plan.reason) == (Decision.RECORD_RUNNING, AHEAD)


def test_in_pin_mode_a_tag_image_is_recorded_but_refresh_s_own_pin_behind_is_pinned_again() -> None:
    """In pin mode a plain tag image whose copies run the newest digest is recorded, as in
    restart mode. Refresh's own pin behind the tag is what new copies run, whatever the pods run
    now: pinned again."""
    tag = _plan([_pod(NEW)], mode=RefreshMode.PIN)
    assert (tag.decision, tag.reason) == (Decision.RECORD_RUNNING, AHEAD)
    own = _plan([_pod(NEW)], image=f"{IMAGE}@{OLD}", mode=RefreshMode.PIN)
    assert (own.decision, own.reason) == (
        Decision.RESTART,
        f"recorded {OLD[:19]}… is not the newest",
    )


def test_the_table_reads_pods_ahead_of_the_record_as_unverified_not_behind() -> None:
    """Row 9 (`record`) and its neighbours, not row 7 (`restart`): nothing is restarted, and the
    record waits for a healthy rollout."""
    plans = [_plan([_pod(NEW)])]
    workload = {"kind": "StatefulSet", "metadata": {}, "spec": {}, "status": {}}
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    found = look(workload, [_pod(NEW)], plans, max_attempts=3, now=now)
    assert found.situation.recorded is Recorded.UNVERIFIED
    assert dict(found.target) == {"runner": NEW}
