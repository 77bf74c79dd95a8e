"""The tick's step decisions (refresh/steps.py), value by value. The refresh scenarios drive the
same decisions through a real registry and the fake API server; these pin what each decision
carries and which one wins when several apply."""

from typing import Any

import pytest

from tests.support.refresh_kit import container, deployment
from truegreen.exitcodes import ExitCode
from truegreen.images import parse_image
from truegreen.refresh.annotations import (
    ATTEMPTS,
    LATCHED,
    PENDING,
    RECORDED_DIGEST,
    TRACK_TAG,
    PendingRestart,
    container_key,
)
from truegreen.refresh.plan import (
    ContainerPlan,
    Decision,
    RefreshMode,
    target_id,
)
from truegreen.refresh.registry import DigestLookup, LookupFailed, LookupFailure, Resolved
from truegreen.refresh.report import Outcome, TickReport, WorkloadReport
from truegreen.refresh.steps import (
    AnnotationWrite,
    Ending,
    RestartWrite,
    Resume,
    RolloutEnd,
    after_rollout,
    before_restart,
    dangling_pins,
    poll_rollout,
    pull_policy_refusals,
    record_changes,
    registry_hold,
    restart_step,
    rolling,
    skip,
    stuck_new_pod,
)
from truegreen.refresh.template import RESTARTED_AT, describe_template, template_change

Obj = dict[str, Any]
OLD, NEW, ARM = (f"sha256:{c * 64}" for c in "012")
IMAGE = "registry.example.com/team/runner:stable"
PIN = f"registry.example.com/team/runner:stable@{OLD}"
STAMP = "2026-11-30T12:00:00.000001Z"
RESTART, PIN_MODE = RefreshMode.RESTART, RefreshMode.PIN
NOT_FOUND = LookupFailed(LookupFailure.NOT_FOUND, "gone")
DIGEST_KEY = container_key(RECORDED_DIGEST, "runner")


def _plan(
    name: str = "runner",
    decision: Decision = Decision.RESTART,
    *,
    image: str = IMAGE,
    newest: str | None = NEW,
    reason: str = "",
    digests: frozenset[str] = frozenset({NEW, ARM}),
) -> ContainerPlan:
    return ContainerPlan(
        name, image, "stable", newest, None, (), decision, reason, parse_image(image), digests
    )


def _pod(name: str, *statuses: tuple[str, str], image_digest: str = "", stamp: str = "") -> Obj:
    """A live pod; `statuses` are (container, waiting reason or imageID digest)."""
    return {
        "metadata": {
            "name": name,
            "annotations": {RESTARTED_AT: stamp} if stamp else {},
        },
        "spec": {"containers": [{"name": "runner", "image": f"{IMAGE}@{image_digest}"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": c, "imageID": f"x@{value}"}
                if value.startswith("sha256:")
                else {"name": c, "state": {"waiting": {"reason": value}}}
                for c, value in statuses
            ],
        },
    }


def _with(obj: Obj, **changes: Any) -> Obj:
    """`obj` with `section={...}` merged into its metadata, spec or status."""
    for section, values in changes.items():
        obj[section] = {**obj.get(section, {}), **values}
    return obj


def _runner(*containers: Obj, annotations: dict[str, str] | None = None) -> Obj:
    return deployment("runner", *containers, annotations=annotations)


# skip / rolling ---------------------------------------------------------------------------


def test_a_settled_deployment_is_not_skipped() -> None:
    assert skip(_runner(container("runner", IMAGE))) is None


def test_a_paused_deployment_is_skipped_before_anything_else() -> None:
    obj = _with(_runner(), spec={"paused": True}, metadata={"generation": 2})
    assert skip(obj) == Ending(Outcome.PAUSED, "the Deployment is paused")


def test_someone_else_s_rollout_is_left_alone_but_our_own_is_resumed() -> None:
    obj = _with(_runner(), metadata={"generation": 2})
    assert skip(obj) == Ending(Outcome.IN_PROGRESS, "a rollout is in progress; not touching it")
    marker = PendingRestart({"runner": NEW}, STAMP).text()
    assert skip(_with(obj, metadata={"annotations": {PENDING: marker}})) is None


@pytest.mark.parametrize(
    ("metadata", "spec", "status", "expected"),
    [
        (
            {"generation": 1},
            {"replicas": 1},
            {"observedGeneration": 1, "updatedReplicas": 1},
            False,
        ),
        ({"generation": 2}, {"replicas": 1}, {"observedGeneration": 1, "updatedReplicas": 1}, True),
        (
            {"generation": 1},
            {"replicas": 1},
            {"observedGeneration": 2, "updatedReplicas": 1},
            False,
        ),
        ({"generation": 1}, {"replicas": 3}, {"observedGeneration": 1, "updatedReplicas": 2}, True),
        (
            {"generation": 1},
            {"replicas": 3},
            {"observedGeneration": 1, "updatedReplicas": 3},
            False,
        ),
        ({"generation": 1}, {}, {"observedGeneration": 1, "updatedReplicas": 0}, True),
        ({"generation": 1}, {}, {"observedGeneration": 1, "updatedReplicas": 1}, False),
        ({"generation": 1}, {"replicas": 0}, {"observedGeneration": 1}, False),
    ],
)
def test_rolling_is_generation_ahead_or_fewer_updated_copies_than_desired(
    metadata: Obj, spec: Obj, status: Obj, expected: bool
) -> None:
    obj = {"metadata": metadata, "spec": spec, "status": status}
    assert rolling(obj) is expected


# registry_hold ----------------------------------------------------------------------------


def test_no_rate_limit_holds_nothing() -> None:
    lookups: list[DigestLookup] = [
        Resolved(NEW, "m"),
        NOT_FOUND,
        LookupFailed(LookupFailure.TIMEOUT, "slow"),
    ]
    assert registry_hold(lookups, []) == ""


def test_rate_limits_and_reserves_hold_every_restart_each_reason_once_in_order() -> None:
    limited = LookupFailed(LookupFailure.RATE_LIMITED, "r.io: 429 too many requests")
    held = registry_hold([limited, Resolved(NEW, "m"), limited], ["q.io: 5 pulls left"])
    assert (
        held == "holding every restart this tick: q.io: 5 pulls left; r.io: 429 too many requests"
    )
    assert registry_hold([], ["q.io: 5 pulls left"]) == (
        "holding every restart this tick: q.io: 5 pulls left"
    )


# dangling_pins ----------------------------------------------------------------------------


def test_dangling_pins_are_the_operator_pins_the_registry_says_are_gone() -> None:
    other_pin = f"registry.example.com/team/other:v1@{ARM}"
    digest_only = f"registry.example.com/team/bare@{NEW}"
    obj = _runner(
        container("broken", "UPPER/Case:x"),
        container("tag", IMAGE),
        container("gone", PIN),
        container("unknown", other_pin),
        container("bare", digest_only),
        annotations={container_key(TRACK_TAG, "bare"): "v2"},
    )
    lookups = {
        PIN: NOT_FOUND,
        other_pin: LookupFailed(LookupFailure.UNAUTHORIZED, "no login"),
        IMAGE: NOT_FOUND,  # a tag lookup is no pin
    }
    assert dangling_pins(obj, lookups, RESTART) == [PIN]
    lookups |= {other_pin: NOT_FOUND, digest_only: NOT_FOUND}
    assert dangling_pins(obj, lookups, RESTART) == [PIN, other_pin, digest_only]
    # In pin mode `repo:tag@digest` is refresh's own pin, not the operator's.
    assert dangling_pins(obj, lookups, PIN_MODE) == [digest_only]


# before_restart ---------------------------------------------------------------------------


def test_an_image_that_is_no_reference_ends_the_workload_first() -> None:
    plans = [
        _plan("a", Decision.LOOKUP_FAILED, reason="timeout"),
        _plan("b", Decision.INVALID_IMAGE, reason="bad reference"),
        _plan("c", Decision.INVALID_IMAGE, reason="empty"),
        _plan("d"),
    ]
    assert before_restart(_runner(), plans, {}, RESTART, "held") == Ending(
        Outcome.INVALID_IMAGE, "b: bad reference; c: empty"
    )


def test_failed_lookups_end_the_workload_unchecked_each_reason_once() -> None:
    plans = [
        _plan("a", Decision.LOOKUP_FAILED, reason="timeout"),
        _plan("b", Decision.LOOKUP_FAILED, reason="401"),
        _plan("c", Decision.LOOKUP_FAILED, reason="timeout"),
        _plan("d"),
    ]
    assert before_restart(_runner(), plans, {}, RESTART, "held") == Ending(
        Outcome.COULD_NOT_CHECK, "401; timeout"
    )


def test_a_held_registry_stops_a_restart_but_not_a_converged_workload() -> None:
    obj = _runner(container("runner", IMAGE))
    assert before_restart(obj, [_plan()], {}, RESTART, "held: 429") == Ending(
        Outcome.COULD_NOT_CHECK, "held: 429"
    )
    settled = _runner(container("runner", IMAGE), annotations={DIGEST_KEY: NEW})
    up_to_date = _plan(decision=Decision.UP_TO_DATE)
    assert before_restart(settled, [up_to_date], {}, RESTART, "held: 429") == Ending(
        Outcome.CONVERGED, "every tracked image runs its newest digest"
    )


def test_nothing_to_restart_records_what_changed_with_the_ending() -> None:
    obj = _runner(container("runner", IMAGE), annotations={ATTEMPTS: "2 abc"})
    plans = [_plan(decision=Decision.RECORD_RUNNING)]
    assert before_restart(obj, plans, {}, RESTART, "") == Ending(
        Outcome.CONVERGED,
        "every tracked image runs its newest digest",
        AnnotationWrite("record", {ATTEMPTS: None, DIGEST_KEY: NEW}),
    )


def test_nothing_left_to_restart_after_a_lost_race_is_another_tick_s_restart() -> None:
    obj = _runner(container("runner", IMAGE), annotations={DIGEST_KEY: NEW})
    up_to_date = [_plan(decision=Decision.UP_TO_DATE)]
    assert before_restart(obj, up_to_date, {}, RESTART, "", lost_race=True) == Ending(
        Outcome.RESTARTED_BY_OTHER, "another tick already rolled out the newest digests"
    )
    leftover = _runner(container("runner", IMAGE), annotations={DIGEST_KEY: NEW, ATTEMPTS: "1 a"})
    assert before_restart(leftover, up_to_date, {}, RESTART, "", lost_race=True) == Ending(
        Outcome.RESTARTED_BY_OTHER,
        "another tick already rolled out the newest digests",
        AnnotationWrite("record", {ATTEMPTS: None}),
    )
    behind = [*up_to_date, _plan("pinned", Decision.PINNED, image=PIN)]
    assert before_restart(obj, behind, {}, RESTART, "", lost_race=True) == Ending(
        Outcome.RESTARTED_BY_OTHER, "pinned, never restarted; behind its tag: pinned"
    )
    pinned = _runner(container("runner", IMAGE), container("pinned", PIN))
    gone = before_restart(pinned, behind, {PIN: NOT_FOUND}, RESTART, "", lost_race=True)
    assert isinstance(gone, Ending)
    assert gone.outcome is Outcome.DANGLING_PIN  # a measured failure still outranks


def test_a_dangling_pin_is_a_failure_even_with_the_record_written() -> None:
    obj = _runner(container("runner", IMAGE), container("pinned", PIN))
    plans = [
        _plan(decision=Decision.RECORD_RUNNING),
        _plan("pinned", Decision.PINNED, image=PIN, newest=None),
    ]
    assert before_restart(obj, plans, {PIN: NOT_FOUND}, RESTART, "") == Ending(
        Outcome.DANGLING_PIN,
        "a pinned image no longer exists in the registry",
        AnnotationWrite("record", {DIGEST_KEY: NEW}),
    )


def test_pins_behind_their_tag_are_named_and_never_restarted() -> None:
    current = f"registry.example.com/team/runner:stable@{NEW}"
    obj = _runner(container("a", PIN), container("b", current), container("c", PIN))
    plans = [
        _plan("a", Decision.PINNED, image=PIN),
        _plan("b", Decision.PINNED, image=current),
        _plan("c", Decision.PINNED, image=PIN, newest=None),  # tag not known: not "behind"
        _plan("d", Decision.PINNED, image=PIN),
    ]
    assert before_restart(obj, plans, {}, RESTART, "") == Ending(
        Outcome.CONVERGED, "pinned, never restarted; behind its tag: a, d"
    )
    recorded = [*plans, _plan("e", Decision.RECORD_RUNNING)]
    assert before_restart(obj, recorded, {}, RESTART, "") == Ending(
        Outcome.CONVERGED,
        "pinned, never restarted; behind its tag: a, d",
        AnnotationWrite("record", {container_key(RECORDED_DIGEST, "e"): NEW}),
    )


def test_refresh_s_own_pin_is_not_the_operator_s_so_it_cannot_dangle() -> None:
    obj = _runner(container("runner", PIN))
    plans = [_plan(image=PIN, decision=Decision.UP_TO_DATE)]
    assert before_restart(obj, plans, {PIN: NOT_FOUND}, PIN_MODE, "") == Ending(
        Outcome.CONVERGED,
        "every tracked image runs its newest digest",
        AnnotationWrite("record", {DIGEST_KEY: NEW}),
    )


def test_a_restart_that_would_keep_the_cached_image_is_refused_in_restart_mode_only() -> None:
    obj = _runner(container("runner", IMAGE, policy="IfNotPresent"))
    refused = before_restart(obj, [_plan()], {}, RESTART, "")
    assert refused == Ending(
        Outcome.REFUSED,
        "a restart would keep the old image: imagePullPolicy is not Always for "
        "runner (IfNotPresent); set imagePullPolicy: Always or use --mode pin",
    )
    assert before_restart(obj, [_plan()], {}, PIN_MODE, "") == (_plan(),)


def test_the_restart_moves_exactly_the_containers_decided_restart() -> None:
    obj = _runner(container("runner", IMAGE), container("side", IMAGE), container("up", IMAGE))
    plans = [_plan(), _plan("side", Decision.PINNED), _plan("up", Decision.UP_TO_DATE)]
    assert before_restart(obj, plans, {}, RESTART, "") == (_plan(),)


# pull_policy_refusals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "policy", "refused"),
    [
        (IMAGE, "Always", ""),
        (IMAGE, "Never", "Never"),
        (IMAGE, None, "IfNotPresent"),  # a named tag defaults to IfNotPresent
        ("registry.example.com/team/runner:latest", None, ""),  # latest defaults to Always
        ("registry.example.com/team/runner", None, ""),  # no tag is latest
        (f"registry.example.com/team/runner:latest@{OLD}", None, "IfNotPresent"),
    ],
)
def test_pull_policy_and_its_default(image: str, policy: str | None, refused: str) -> None:
    obj = _runner(container("runner", image, policy=policy))
    plan = _plan(image=image)
    expected = (
        "a restart would keep the old image: imagePullPolicy is not Always for "
        f"runner ({refused}); set imagePullPolicy: Always or use --mode pin"
    )
    assert pull_policy_refusals(obj, [plan]) == (expected if refused else "")


def test_every_refused_container_is_named() -> None:
    obj = _runner(
        container("a", IMAGE, policy="Never"),
        container("b", IMAGE, policy="Always"),
        container("c", IMAGE, policy="IfNotPresent"),
    )
    assert pull_policy_refusals(obj, [_plan("a"), _plan("b"), _plan("c")]) == (
        "a restart would keep the old image: imagePullPolicy is not Always for "
        "a (Never), c (IfNotPresent); set imagePullPolicy: Always or use --mode pin"
    )


# restart_step -----------------------------------------------------------------------------


def _target_id(*plans: ContainerPlan) -> str:
    return target_id({p.container: p.newest or "" for p in plans})


def test_a_restart_counts_the_attempt_and_leaves_the_marker_in_one_write() -> None:
    tid = _target_id(_plan())
    marker = PendingRestart({"runner": NEW}, STAMP)
    assert restart_step({}, [_plan()], 3, STAMP) == RestartWrite(
        {ATTEMPTS: f"1 {tid}", PENDING: marker.text()}, marker
    )
    assert restart_step({ATTEMPTS: f"2 {tid}"}, [_plan()], 3, STAMP) == RestartWrite(
        {ATTEMPTS: f"3 {tid}", PENDING: marker.text()}, marker
    )


def test_attempts_at_another_target_start_the_count_again() -> None:
    tid = _target_id(_plan())
    step = restart_step({ATTEMPTS: "3 0123456789ab"}, [_plan()], 3, STAMP)
    assert isinstance(step, RestartWrite)
    assert step.annotations[ATTEMPTS] == f"1 {tid}"


def test_the_flap_guard_latches_at_the_maximum_and_writes_the_latch_once() -> None:
    tid = _target_id(_plan())
    reason = (
        "3 restarts toward the same digests did not roll out; "
        f"stopped until someone looks (clear {LATCHED} to retry)"
    )
    assert restart_step({ATTEMPTS: f"3 {tid}"}, [_plan()], 3, STAMP) == Ending(
        Outcome.LATCHED, reason, AnnotationWrite("latch", {LATCHED: reason})
    )
    latched = {ATTEMPTS: f"3 {tid}", LATCHED: reason}
    assert restart_step(latched, [_plan()], 3, STAMP) == Ending(Outcome.LATCHED, reason)
    assert isinstance(restart_step({ATTEMPTS: f"3 {tid}"}, [_plan()], 4, STAMP), RestartWrite)


def test_digests_already_recorded_for_every_container_mean_another_tick_finished() -> None:
    plans = [_plan(), _plan("side", newest=ARM)]
    recorded = {DIGEST_KEY: NEW, container_key(RECORDED_DIGEST, "side"): ARM}
    assert restart_step(recorded, plans, 3, STAMP) == Ending(
        Outcome.RESTARTED_BY_OTHER, "another tick already rolled out the newest digests"
    )
    one_left = {DIGEST_KEY: NEW, container_key(RECORDED_DIGEST, "side"): OLD}
    assert isinstance(restart_step(one_left, plans, 3, STAMP), RestartWrite)


def test_a_marker_toward_the_same_digests_is_resumed_another_is_replaced() -> None:
    same = PendingRestart({"runner": NEW}, "2026-11-29T00:00:00.000000Z")
    tid = _target_id(_plan())
    # Even at the attempt maximum: the restart already happened, so waiting costs no attempt.
    annotations = {PENDING: same.text(), ATTEMPTS: f"3 {tid}"}
    assert restart_step(annotations, [_plan()], 3, STAMP) == Resume(same)
    older = PendingRestart({"runner": OLD}, "2026-11-29T00:00:00.000000Z").text()
    replaced = restart_step({PENDING: older}, [_plan()], 3, STAMP)
    assert isinstance(replaced, RestartWrite)
    assert replaced.marker == PendingRestart({"runner": NEW}, STAMP)


def test_a_container_without_a_newest_digest_targets_the_empty_digest() -> None:
    step = restart_step({}, [_plan(newest=None)], 3, STAMP)
    assert isinstance(step, RestartWrite)
    assert step.marker.target == {"runner": ""}


# poll_rollout / stuck_new_pod -------------------------------------------------------------


def _rolled(generation: int = 2, *, updated: int = 1, stuck: bool = False) -> Obj:
    obj = _with(
        _runner(),
        metadata={"generation": generation},
        status={"observedGeneration": generation, "updatedReplicas": updated},
    )
    if stuck:
        condition = {"type": "Progressing", "reason": "ProgressDeadlineExceeded"}
        obj["status"]["conditions"] = [condition]
    return obj


MARKER = PendingRestart({"runner": NEW}, STAMP)
OURS = {PENDING: MARKER.text()}
"""The annotations after the wait while the marker is still the one this tick waited on."""


def _poll(obj: Obj, pods: list[Obj] | None = None, *, expired: bool = False) -> RolloutEnd | None:
    return poll_rollout(obj, pods or [], MARKER, expired=expired, timeout=5.0)


def test_a_rollout_is_done_by_kubectl_s_rules_whatever_else_is_late() -> None:
    crashing = [_pod("runner-new", ("runner", "CrashLoopBackOff"), stamp=STAMP)]
    assert _poll(_rolled(2), crashing, expired=True) == RolloutEnd(True, "rolled out")
    not_observed = _with(_rolled(2), metadata={"generation": 3})
    assert _poll(not_observed) is None
    assert _poll(not_observed, expired=True) == RolloutEnd(
        False, "timed out after 5s (waiting for the update to be picked up)", True
    )


def test_a_stuck_rollout_fails_before_a_stuck_pod_and_a_timeout() -> None:
    crashing = [_pod("runner-new", ("runner", "CrashLoopBackOff"), stamp=STAMP)]
    end = _poll(_rolled(updated=0, stuck=True), crashing, expired=True)
    assert end == RolloutEnd(False, "the rollout exceeded its progress deadline")
    assert _poll(_rolled(updated=0), crashing, expired=True) == RolloutEnd(
        False, "new pod runner-new keeps crashing (CrashLoopBackOff)"
    )
    assert _poll(_rolled(updated=0), expired=True) == RolloutEnd(
        False, "timed out after 5s (0 of 1 copies updated)", True
    )
    assert _poll(_rolled(updated=0)) is None


def test_the_timeout_is_named_as_the_operator_gave_it() -> None:
    end = poll_rollout(_rolled(updated=0), [], MARKER, expired=True, timeout=2.5)
    assert end == RolloutEnd(False, "timed out after 2.5s (0 of 1 copies updated)", True)


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("CrashLoopBackOff", "keeps crashing"),
        ("ImagePullBackOff", "cannot pull its image"),
        ("ErrImagePull", "cannot pull its image"),
        ("InvalidImageName", "names an image that is not valid"),
    ],
)
def test_a_new_pod_waiting_where_it_will_not_leave_by_itself_is_stuck(
    reason: str, words: str
) -> None:
    pods = [
        _pod("old", ("runner", reason), stamp="2026-01-01T00:00:00.000000Z"),  # not this restart
        _pod("new", ("side", NEW), ("runner", reason), stamp=STAMP),
    ]
    assert stuck_new_pod(pods, MARKER) == f"new pod new {words} ({reason})"
    assert stuck_new_pod(pods[:1], MARKER) == ""


def test_a_pod_running_a_target_digest_is_new_even_without_the_stamp() -> None:
    pinned = _pod("pinned", ("runner", "ErrImagePull"), image_digest=NEW)
    assert stuck_new_pod([pinned], MARKER) == "new pod pinned cannot pull its image (ErrImagePull)"
    init = _pod("init", ("runner", "ErrImagePull"))
    init["spec"]["initContainers"] = [{"name": "setup", "image": f"{IMAGE}@{NEW}"}]
    assert stuck_new_pod([init], MARKER) == "new pod init cannot pull its image (ErrImagePull)"
    assert stuck_new_pod([_pod("old", ("runner", "ErrImagePull"), image_digest=OLD)], MARKER) == ""


def test_a_new_pod_that_is_merely_starting_is_not_stuck() -> None:
    starting = _pod("new", ("runner", "ContainerCreating"), stamp=STAMP)
    assert stuck_new_pod([starting], MARKER) == ""
    running = _pod("new", ("runner", NEW), stamp=STAMP)
    assert stuck_new_pod([running], MARKER) == ""


def _leaving(pod: Obj) -> Obj:
    """`pod` deleted and in its grace period, as the API server marks it."""
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:30Z"
    return pod


def test_old_pods_still_terminating_do_not_hold_back_a_complete_rollout() -> None:
    old = _leaving(_pod("old", ("runner", OLD)))
    assert _poll(_rolled(2), [old, _pod("new", ("runner", NEW))]) == RolloutEnd(True, "rolled out")
    assert _poll(_rolled(2), []) == RolloutEnd(True, "rolled out")


def test_a_complete_rollout_with_only_leaving_pods_listed_waits_for_the_staying_ones() -> None:
    old = _leaving(_pod("old", ("runner", OLD)))
    finished = _with(_pod("done", ("runner", OLD)), status={"phase": "Succeeded"})
    assert _poll(_rolled(2), [old]) is None
    assert _poll(_rolled(2), [old, finished]) is None
    assert _poll(_rolled(2), [old], expired=True) == RolloutEnd(True, "rolled out")


def test_a_leaving_pod_of_this_restart_is_not_stuck() -> None:
    leaving = _leaving(_pod("new", ("runner", "CrashLoopBackOff"), stamp=STAMP))
    assert _poll(_rolled(updated=0), [leaving]) is None


# after_rollout / record_changes -----------------------------------------------------------


def test_a_verified_rollout_records_the_digest_and_clears_the_bookkeeping() -> None:
    annotations = {ATTEMPTS: "1 abc", PENDING: MARKER.text(), DIGEST_KEY: OLD}
    pods = [_pod("new", ("runner", ARM))]  # a platform manifest of the newest index
    plans = [_plan(), _plan("side", Decision.UP_TO_DATE, newest=ARM)]
    done = RolloutEnd(True, "rolled out")
    assert after_rollout(done, annotations, plans, pods, MARKER, ours=True) == (
        Ending(
            Outcome.RESTARTED,
            "rolled out and verified: the pods run the newest digest",
            AnnotationWrite(
                "record",
                {
                    ATTEMPTS: None,
                    PENDING: None,
                    DIGEST_KEY: NEW,
                    container_key(RECORDED_DIGEST, "side"): ARM,
                },
            ),
            write_must_land=True,
        )
    )


def test_a_rollout_whose_pods_run_another_digest_records_nothing_and_drops_the_marker() -> None:
    pods = [_pod("new", ("runner", OLD), ("side", OLD), ("init", OLD))]
    plans = [_plan(), _plan("side", Decision.UP_TO_DATE)]  # side was not restarted: not checked
    done = RolloutEnd(True, "rolled out")
    assert after_rollout(done, OURS, plans, pods, MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED,
        "the new pods do not run the newest digest (runner)",
        AnnotationWrite("clear-pending", {PENDING: None}),
    )
    both = PendingRestart({"init": NEW, "runner": NEW}, STAMP)
    marked = {PENDING: both.text()}
    two = after_rollout(done, marked, [_plan("init"), *plans], pods, both, ours=True)
    assert two.reason == "the new pods do not run the newest digest (init, runner)"


def test_an_operator_pin_is_never_recorded_even_after_a_verified_rollout() -> None:
    pods = [_pod("new", ("runner", NEW), ("pinned", OLD))]
    plans = [_plan(), _plan("pinned", Decision.PINNED, image=PIN)]
    ending = after_rollout(RolloutEnd(True, "rolled out"), OURS, plans, pods, MARKER, ours=True)
    assert ending.write == AnnotationWrite("record", {PENDING: None, DIGEST_KEY: NEW})


def test_a_failed_rollout_drops_the_marker_a_timed_out_one_keeps_it() -> None:
    crashed = RolloutEnd(False, "new pod new keeps crashing (CrashLoopBackOff)")
    assert after_rollout(crashed, OURS, [_plan()], [], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED,
        "new pod new keeps crashing (CrashLoopBackOff)",
        AnnotationWrite("clear-pending", {PENDING: None}),
    )
    timed_out = RolloutEnd(False, "timed out after 5s", timed_out=True)
    assert after_rollout(timed_out, OURS, [_plan()], [], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED, "timed out after 5s"
    )


def test_a_marker_another_tick_wrote_since_is_never_cleared_nor_recorded_over() -> None:
    """The wait ended, but the pending marker read after it is not the one waited on: another
    tick restarted toward newer digests since. Nothing this tick writes may erase its marker."""
    newer = PendingRestart({"runner": ARM}, "2026-11-30T12:05:00.000001Z")
    theirs = {PENDING: newer.text(), DIGEST_KEY: OLD}
    crashed = RolloutEnd(False, "new pod new keeps crashing (CrashLoopBackOff)")
    assert after_rollout(crashed, theirs, [_plan()], [], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED, "new pod new keeps crashing (CrashLoopBackOff)"
    )
    pods = [_pod("new", ("runner", NEW))]
    done = RolloutEnd(True, "rolled out")
    assert after_rollout(done, theirs, [_plan()], pods, MARKER, ours=True) == Ending(
        Outcome.RESTARTED,
        "rolled out and verified; not recorded: another tick has restarted since",
    )
    assert after_rollout(done, theirs, [_plan()], [], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED, "the new pods do not run the newest digest (runner)"
    )


def test_a_restart_another_tick_made_is_reported_as_theirs() -> None:
    pods = [_pod("new", ("runner", NEW))]
    done = RolloutEnd(True, "rolled out")
    resumed = after_rollout(done, OURS, [_plan()], pods, MARKER, ours=False)
    assert (resumed.outcome, resumed.write) == (
        Outcome.RESTARTED_BY_OTHER,
        AnnotationWrite("record", {PENDING: None, DIGEST_KEY: NEW}),
    )
    recorded = {DIGEST_KEY: NEW}  # the other tick recorded and cleared its marker first
    for ours, outcome in ((True, Outcome.RESTARTED), (False, Outcome.RESTARTED_BY_OTHER)):
        assert after_rollout(done, recorded, [_plan()], pods, MARKER, ours=ours) == Ending(
            outcome, "rolled out and verified; another tick recorded it"
        )


def test_record_changes_name_only_what_changes() -> None:
    plans = [
        _plan("up", Decision.UP_TO_DATE),
        _plan("seen", Decision.RECORD_RUNNING, newest=ARM),
        _plan("moved", Decision.RESTART),
        _plan("pinned", Decision.PINNED),
        _plan("unknown", Decision.RECORD_RUNNING, newest=None),
    ]
    annotations = {container_key(RECORDED_DIGEST, "up"): NEW, LATCHED: "3 restarts"}
    assert record_changes(annotations, plans) == {
        LATCHED: None,
        container_key(RECORDED_DIGEST, "seen"): ARM,
    }
    assert record_changes(annotations, plans, force=True) == {
        LATCHED: None,
        container_key(RECORDED_DIGEST, "seen"): ARM,
        container_key(RECORDED_DIGEST, "moved"): NEW,
    }
    assert record_changes({}, []) == {}


# template ---------------------------------------------------------------------------------


def test_restart_mode_changes_only_the_restart_annotation() -> None:
    template = template_change(_runner(container("runner", IMAGE)), [_plan()], RESTART, STAMP)
    assert template == {"metadata": {"annotations": {RESTARTED_AT: STAMP}}}
    assert describe_template(template) == f"template annotation {RESTARTED_AT}={STAMP}"


def test_pin_mode_sets_each_restarted_container_to_tag_and_newest_digest() -> None:
    obj = _runner(container("runner", IMAGE), container("side", IMAGE))
    obj["spec"]["template"]["spec"]["initContainers"] = [container("setup", PIN)]
    unparsed = ContainerPlan("side", IMAGE, None, NEW, None, (), Decision.RESTART)
    template = template_change(obj, [_plan(), _plan("setup", newest=ARM), unparsed], PIN_MODE, "")
    pinned = "registry.example.com/team/runner:stable@"
    assert template == {
        "spec": {
            "initContainers": [{"name": "setup", "image": pinned + ARM}],
            "containers": [{"name": "runner", "image": pinned + NEW}],
        }
    }
    assert (
        describe_template(template) == f"template images setup={pinned}{ARM}, runner={pinned}{NEW}"
    )
    assert template_change(obj, [], PIN_MODE, STAMP) == {"spec": {}}
    assert describe_template({"spec": {}}) == "template images "


# exit code --------------------------------------------------------------------------------


def _tick(*outcomes: Outcome, cant_read: tuple[str, ...] = ()) -> TickReport:
    workloads = tuple(WorkloadReport("train", f"w{i}", o, "why") for i, o in enumerate(outcomes))
    return TickReport(workloads, cant_read)


def test_a_measured_failure_wins_over_could_not_check_which_wins_over_green() -> None:
    failed = (Outcome.ROLLOUT_FAILED, Outcome.REFUSED, Outcome.DANGLING_PIN, Outcome.INVALID_IMAGE)
    for outcome in failed:
        assert _tick(Outcome.CONVERGED, outcome, cant_read=("x",)).exit_code is ExitCode.FAILED
    assert _tick(Outcome.CONVERGED, Outcome.COULD_NOT_CHECK).exit_code is ExitCode.UNKNOWN
    assert _tick(Outcome.CONVERGED, cant_read=("pods: 403",)).exit_code is ExitCode.UNKNOWN
    held = [o for o in Outcome if o not in failed and o is not Outcome.COULD_NOT_CHECK]
    assert _tick(*held).exit_code is ExitCode.GOOD
    assert _tick().exit_code is ExitCode.GOOD


def test_pods_on_their_way_out_prove_nothing_after_a_rollout() -> None:
    """Terminating pods still report the old image for their grace period (kubectl#1628)."""
    old = _leaving(_pod("old", ("runner", OLD)))
    finished = _with(_pod("done", ("runner", OLD)), status={"phase": "Failed"})
    new = _pod("new", ("runner", NEW))
    done = RolloutEnd(True, "rolled out")
    ending = after_rollout(done, OURS, [_plan()], [old, finished, new], MARKER, ours=True)
    assert (ending.outcome, ending.write) == (
        Outcome.RESTARTED,
        AnnotationWrite("record", {PENDING: None, DIGEST_KEY: NEW}),
    )
    assert after_rollout(done, OURS, [_plan()], [old], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED,
        "the new pods do not run the newest digest (runner)",
        AnnotationWrite("clear-pending", {PENDING: None}),
    )
