"""Which Events a tick earned, and the Event objects it writes: pinned to the value."""

from datetime import UTC, datetime

import pytest

from tests.support.refresh_kit import container, deployment
from truegreen.images import parse_image
from truegreen.refresh.annotations import (
    ATTEMPTS,
    DANGLING_PIN,
    LATCHED,
    PENDING,
    STALE_PIN,
    EventReason,
    container_key,
)
from truegreen.refresh.events import MESSAGE_LIMIT, event_object, planned_events
from truegreen.refresh.plan import ContainerPlan, Decision
from truegreen.refresh.report import Outcome, WorkloadReport, Write

IMAGE = "registry.example.com/team/runner:stable"
NEW = "sha256:" + "1" * 64
MOVED = "sha256:" + "2" * 64
PIN = f"registry.example.com/team/side:v1@{'sha256:' + '3' * 64}"
DEPLOYMENT = deployment(
    "runner", container("runner", IMAGE), container("side", PIN), container("other", PIN)
)
STALE = {
    container_key(STALE_PIN, "side"): f"v1 {MOVED}",
    container_key(STALE_PIN, "other"): None,  # a finding cleared: no news
    container_key(DANGLING_PIN, "other"): "sha256:4 no longer exists in registry.example.com",
}


def _plan(name: str = "runner", decision: Decision = Decision.RESTART) -> ContainerPlan:
    return ContainerPlan(
        name, IMAGE, "stable", NEW, None, (), decision, "", parse_image(IMAGE), frozenset({NEW})
    )


def _report(outcome: Outcome, *writes: Write, reason: str = "why") -> WorkloadReport:
    plans = (_plan(), _plan("side", Decision.PINNED), _plan("up", Decision.UP_TO_DATE))
    return WorkloadReport("train", "runner", outcome, reason, plans, writes)


REFRESHED = (
    EventReason.IMAGE_REFRESHED,
    f"restarted onto the newest image and checked the new copies run it: runner runs {NEW}",
)


@pytest.mark.parametrize("outcome", [Outcome.RESTARTED, Outcome.RESTARTED_BY_OTHER])
def test_a_recorded_refresh_is_news_whoever_restarted(outcome: Outcome) -> None:
    record = Write("record", {PENDING: None})
    assert planned_events(_report(outcome, record), DEPLOYMENT) == [REFRESHED]


@pytest.mark.parametrize(
    "writes",
    [
        (),  # another tick recorded it: its Event, not ours
        (Write("record", {PENDING: None}, applied=False, error="forbidden"),),
        (Write("clear-pending", {PENDING: None}),),
    ],
)
def test_no_refresh_event_without_a_record_that_landed(writes: tuple[Write, ...]) -> None:
    assert planned_events(_report(Outcome.RESTARTED, *writes), DEPLOYMENT) == []


def test_a_record_after_converging_is_no_refresh() -> None:
    record = Write("record", {PENDING: None})
    assert planned_events(_report(Outcome.CONVERGED, record), DEPLOYMENT) == []


def test_a_failed_rollout_says_why_and_that_nothing_was_recorded() -> None:
    report = _report(Outcome.ROLLOUT_FAILED, reason="new pod x keeps crashing (CrashLoopBackOff)")
    assert planned_events(report, DEPLOYMENT) == [
        (
            EventReason.ROLLOUT_FAILED,
            "the restart toward the newest image did not complete: new pod x keeps crashing "
            "(CrashLoopBackOff); nothing was recorded, a later run tries again",
        )
    ]


def test_a_failure_counted_without_a_restart_says_what_the_pods_were_found_doing() -> None:
    reason = "the pods run the newest digest, but pod x keeps crashing (CrashLoopBackOff)"
    count = Write("count", {ATTEMPTS: "2 abc"})
    assert planned_events(_report(Outcome.ROLLOUT_FAILED, count, reason=reason), DEPLOYMENT) == [
        (
            EventReason.ROLLOUT_FAILED,
            f"{reason}; nothing was recorded, a later run tries again",
        )
    ]


def test_a_latch_is_news_only_when_its_write_landed() -> None:
    latch = Write("latch", {LATCHED: "3 restarts"})
    report = _report(Outcome.LATCHED, latch, reason="3 restarts did not roll out")
    assert planned_events(report, DEPLOYMENT) == [
        (EventReason.LATCHED, "3 restarts did not roll out")
    ]
    failed = Write("latch", {LATCHED: "3 restarts"}, applied=False, error="conflict")
    assert planned_events(_report(Outcome.LATCHED, failed), DEPLOYMENT) == []
    assert planned_events(_report(Outcome.LATCHED), DEPLOYMENT) == []  # latched before


def test_pin_findings_are_news_when_set_never_when_cleared() -> None:
    report = _report(Outcome.CONVERGED, Write("stale-pins", STALE))
    assert planned_events(report, DEPLOYMENT) == [
        (
            EventReason.STALE_PIN,
            f"side stays on its pinned image while its tag v1 has moved on to {MOVED}",
        ),
        (
            EventReason.DANGLING_PIN,
            "other's pinned image is gone: sha256:4 no longer exists in registry.example.com",
        ),
    ]
    held = Write("stale-pins", STALE, applied=False)
    assert planned_events(_report(Outcome.CONVERGED, held), DEPLOYMENT) == []
    cleared = Write("stale-pins", {container_key(STALE_PIN, "side"): None})
    assert planned_events(_report(Outcome.CONVERGED, cleared), DEPLOYMENT) == []


def test_several_stale_pins_share_one_event_in_container_order() -> None:
    both = {
        container_key(STALE_PIN, "other"): f"v2 {NEW}",
        container_key(STALE_PIN, "side"): "v1 x",
    }
    [(reason, message)] = planned_events(
        _report(Outcome.CONVERGED, Write("stale-pins", both)), DEPLOYMENT
    )
    assert reason is EventReason.STALE_PIN
    assert message == (
        "side stays on its pinned image while its tag v1 has moved on to x; "
        f"other stays on its pinned image while its tag v2 has moved on to {NEW}"
    )


def test_events_follow_the_order_of_the_tick_s_steps() -> None:
    writes = (Write("stale-pins", STALE), Write("restart"), Write("record", {PENDING: None}))
    reasons = [r for r, _ in planned_events(_report(Outcome.RESTARTED, *writes), DEPLOYMENT)]
    assert reasons == [EventReason.STALE_PIN, EventReason.DANGLING_PIN, EventReason.IMAGE_REFRESHED]
    latch = (Write("stale-pins", STALE), Write("latch", {LATCHED: "x"}))
    reasons = [r for r, _ in planned_events(_report(Outcome.LATCHED, *latch), DEPLOYMENT)]
    assert reasons == [EventReason.STALE_PIN, EventReason.DANGLING_PIN, EventReason.LATCHED]


def test_a_long_message_is_cut_to_what_the_events_api_takes() -> None:
    fits = "x" * (MESSAGE_LIMIT - len("the restart toward the newest image did not complete: "))
    fits = fits[: -len("; nothing was recorded, a later run tries again")]
    [(_, message)] = planned_events(_report(Outcome.ROLLOUT_FAILED, reason=fits), DEPLOYMENT)
    assert len(message) == MESSAGE_LIMIT
    assert message.endswith("a later run tries again")
    [(_, cut)] = planned_events(_report(Outcome.ROLLOUT_FAILED, reason=fits + "y"), DEPLOYMENT)
    assert (len(cut), cut[-1]) == (MESSAGE_LIMIT, "…")
    assert MESSAGE_LIMIT == 1024


def test_only_a_verified_refresh_is_normal() -> None:
    assert [r.warning for r in EventReason] == [False, True, True, True, True]


NOW = datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=UTC)


def test_the_event_object_is_what_kubectl_describe_reads() -> None:
    stored = deployment("runner", container("runner", IMAGE))
    stored["metadata"] |= {"uid": "uid-1", "resourceVersion": "42"}
    event = event_object(
        EventReason.STALE_PIN, "message", stored, now=NOW, sequence=2, instance="pod-7"
    )
    nanoseconds = 0x1898B77DFD948C02  # 2026-03-01T12:30:05.123456Z in nanoseconds, plus 2
    assert event == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"runner.{nanoseconds:x}", "namespace": "train"},
        "involvedObject": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "runner",
            "namespace": "train",
            "uid": "uid-1",
            "resourceVersion": "42",
        },
        "reason": "StalePin",
        "message": "message",
        "type": "Warning",
        "source": {"component": "truegreen-refresh"},
        "reportingComponent": "truegreen-refresh",
        "reportingInstance": "pod-7",
        "firstTimestamp": "2026-03-01T12:30:05Z",
        "lastTimestamp": "2026-03-01T12:30:05Z",
        "count": 1,
    }


def test_long_names_stay_within_the_api_s_limits() -> None:
    stored = deployment("d" * 253, container("runner", IMAGE))
    event = event_object(
        EventReason.IMAGE_REFRESHED, "m", stored, now=NOW, sequence=0, instance="i" * 300
    )
    assert len(event["metadata"]["name"]) == 253
    assert event["metadata"]["name"].endswith(".1898b77dfd948c00")
    assert event["involvedObject"]["name"] == "d" * 253
    assert event["reportingInstance"] == "i" * 128
    assert event["type"] == "Normal"
    # A Deployment read without them (a hostile answer): empty, never "None".
    assert (event["involvedObject"]["uid"], event["involvedObject"]["resourceVersion"]) == ("", "")


def test_every_restarted_container_is_named_in_the_refresh() -> None:
    plans = (_plan(), _plan("side", Decision.PINNED), _plan("helper"))
    report = WorkloadReport(
        "train", "runner", Outcome.RESTARTED, "", plans, (Write("record", {PENDING: None}),)
    )
    [(_, message)] = planned_events(report, DEPLOYMENT)
    assert message.endswith(f": runner runs {NEW}; helper runs {NEW}")


def test_a_container_without_a_name_is_named_as_the_finding_was_keyed() -> None:
    """pin_findings keys a nameless container (only a hostile answer has one) by ""."""
    nameless = deployment("runner", {"image": PIN})
    changes = {container_key(STALE_PIN, ""): f"v1 {MOVED}"}
    report = _report(Outcome.CONVERGED, Write("stale-pins", changes))
    assert planned_events(report, nameless) == [
        (
            EventReason.STALE_PIN,
            f" stays on its pinned image while its tag v1 has moved on to {MOVED}",
        )
    ]
