"""The tick's step decisions (refresh/steps.py), value by value: the inputs each look reads for
the table, and the writes and endings its actions ask for. The table itself is pinned row by
row in test_refresh_table.py; the refresh scenarios drive the same decisions through a real
registry and the fake API server."""

from datetime import UTC, datetime, timedelta
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
    RESTARTED,
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
    Action,
    AnnotationWrite,
    Attempts,
    Ending,
    Health,
    Look,
    Marker,
    Observation,
    Recorded,
    RestartWrite,
    Running,
    Situation,
    after_wait,
    count_failure,
    crashed_new_pod,
    dangling_pins,
    failure_reason,
    latch,
    observe,
    pull_policy_refusals,
    record_changes,
    registry_hold,
    restart_counts,
    restart_refusal,
    restart_write,
    rolling,
    settled,
    skip,
    stuck_new_pod,
    target_of,
    undecidable,
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


NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LONG_AGO = NOW - timedelta(days=1)


def _pod(
    name: str,
    *statuses: tuple[str, str],
    image_digest: str = "",
    stamp: str = "",
    ready: bool = True,
    ready_since: datetime | None = LONG_AGO,
) -> Obj:
    """A live pod; `statuses` are (container, waiting reason or imageID digest). Ready (since
    `ready_since`; None: no time given) unless `ready` is False."""
    condition: Obj = {"type": "Ready", "status": "True" if ready else "False"}
    if ready_since is not None:
        condition["lastTransitionTime"] = ready_since.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "metadata": {
            "name": name,
            "annotations": {RESTARTED_AT: stamp} if stamp else {},
        },
        "spec": {"containers": [{"name": "runner", "image": f"{IMAGE}@{image_digest}"}]},
        "status": {
            "phase": "Running",
            "conditions": [condition],
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
    assert skip(_runner(container("runner", IMAGE)), [], None) is None


def test_a_paused_deployment_is_skipped_before_anything_else() -> None:
    obj = _with(_runner(), spec={"paused": True}, metadata={"generation": 2})
    assert skip(obj, [], None) == Ending(Outcome.PAUSED, "the Deployment is paused")


def test_someone_else_s_rollout_is_left_alone_but_our_own_is_resumed() -> None:
    """Only a restart toward the digests the tick would wait on is its own to resume; a
    marker left toward other digests (an earlier tick's restart that timed out, the tag
    moved since) is no restart under way: the rollout is someone else's (kubectl: "Waiting for
    deployment spec update to be observed")."""
    obj = _with(_runner(), metadata={"generation": 2})
    in_progress = Ending(Outcome.IN_PROGRESS, "a rollout is in progress; not touching it")
    assert skip(obj, [], None) == in_progress
    marker = PendingRestart({"runner": NEW}, STAMP)
    marked = _with(obj, metadata={"annotations": {PENDING: marker.text()}})
    assert skip(marked, [], marker) is None
    assert skip(marked, [], None) == in_progress, "a marker toward other digests"


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
    assert rolling(obj, []) is expected


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
    # In pin mode an operator's `repo:tag@digest` dangles as in restart mode...
    assert dangling_pins(obj, lookups, PIN_MODE) == [PIN, other_pin, digest_only]
    # ...but refresh's own pin (the digest it recorded, or aimed its latest restart at) is no
    # operator's.
    own = {
        container_key(RECORDED_DIGEST, "gone"): OLD,
        RESTARTED: PendingRestart({"unknown": ARM}, STAMP).text(),
    }
    obj["metadata"]["annotations"] |= own
    assert dangling_pins(obj, lookups, PIN_MODE) == [digest_only]


# undecidable / settled / restart_refusal ---------------------------------------------------


def test_an_image_that_is_no_reference_ends_the_workload_first() -> None:
    plans = [
        _plan("a", Decision.LOOKUP_FAILED, reason="timeout"),
        _plan("b", Decision.INVALID_IMAGE, reason="bad reference"),
        _plan("c", Decision.INVALID_IMAGE, reason="empty"),
        _plan("d"),
    ]
    assert undecidable({}, plans, {}, RefreshMode.RESTART) == Ending(
        Outcome.INVALID_IMAGE, "b: bad reference; c: empty"
    )


def test_failed_lookups_end_the_workload_unchecked_each_reason_once() -> None:
    plans = [
        _plan("a", Decision.LOOKUP_FAILED, reason="timeout"),
        _plan("b", Decision.LOOKUP_FAILED, reason="401"),
        _plan("c", Decision.LOOKUP_FAILED, reason="timeout"),
        _plan("d"),
    ]
    assert undecidable({}, plans, {}, RefreshMode.RESTART) == Ending(
        Outcome.COULD_NOT_CHECK, "401; timeout"
    )
    plans = [_plan(), _plan("up", Decision.UP_TO_DATE)]
    assert undecidable({}, plans, {}, RefreshMode.RESTART) is None


def test_a_held_registry_stops_a_restart_but_not_a_converged_workload() -> None:
    obj = _runner(container("runner", IMAGE))
    assert restart_refusal(obj, [_plan()], RESTART, "held: 429") == Ending(
        Outcome.COULD_NOT_CHECK, "held: 429"
    )
    assert restart_refusal(obj, [_plan()], RESTART, "") is None
    # A converged workload never asks for a restart, so the hold is never consulted for it.
    settled_obj = _runner(container("runner", IMAGE), annotations={DIGEST_KEY: NEW})
    up_to_date = _plan(decision=Decision.UP_TO_DATE)
    assert settled(settled_obj, [up_to_date], {}, RESTART) == Ending(
        Outcome.CONVERGED, "every tracked image runs its newest digest"
    )


def test_nothing_to_restart_records_what_changed_with_the_ending() -> None:
    obj = _runner(container("runner", IMAGE), annotations={ATTEMPTS: "2 abc"})
    plans = [_plan(decision=Decision.RECORD_RUNNING)]
    assert settled(obj, plans, {}, RESTART) == Ending(
        Outcome.CONVERGED,
        "every tracked image runs its newest digest",
        AnnotationWrite("record", {ATTEMPTS: None, DIGEST_KEY: NEW}),
    )


def test_nothing_left_to_restart_after_a_lost_race_is_another_tick_s_restart() -> None:
    obj = _runner(container("runner", IMAGE), annotations={DIGEST_KEY: NEW})
    up_to_date = [_plan(decision=Decision.UP_TO_DATE)]
    assert settled(obj, up_to_date, {}, RESTART, lost_race=True) == Ending(
        Outcome.RESTARTED_BY_OTHER, "another tick already rolled out the newest digests"
    )
    leftover = _runner(container("runner", IMAGE), annotations={DIGEST_KEY: NEW, ATTEMPTS: "1 a"})
    assert settled(leftover, up_to_date, {}, RESTART, lost_race=True) == Ending(
        Outcome.RESTARTED_BY_OTHER,
        "another tick already rolled out the newest digests",
        AnnotationWrite("record", {ATTEMPTS: None}),
    )
    behind = [*up_to_date, _plan("pinned", Decision.PINNED, image=PIN)]
    assert settled(obj, behind, {}, RESTART, lost_race=True) == Ending(
        Outcome.RESTARTED_BY_OTHER, "pinned, never restarted; behind its tag: pinned"
    )
    pinned = _runner(container("runner", IMAGE), container("pinned", PIN))
    gone = settled(pinned, behind, {PIN: NOT_FOUND}, RESTART, lost_race=True)
    assert gone.outcome is Outcome.DANGLING_PIN  # a measured failure still outranks


def test_a_dangling_pin_is_a_failure_even_with_the_record_written() -> None:
    obj = _runner(container("runner", IMAGE), container("pinned", PIN))
    plans = [
        _plan(decision=Decision.RECORD_RUNNING),
        _plan("pinned", Decision.PINNED, image=PIN, newest=None),
    ]
    assert settled(obj, plans, {PIN: NOT_FOUND}, RESTART) == Ending(
        Outcome.DANGLING_PIN,
        "a pinned image no longer exists in the registry",
        AnnotationWrite("record", {DIGEST_KEY: NEW}),
    )


def test_pins_behind_their_tag_are_named_and_never_restarted() -> None:
    current = f"registry.example.com/team/runner:stable@{NEW}"
    platform = f"registry.example.com/team/runner:stable@{ARM}"  # one platform's, of the index
    obj = _runner(container("a", PIN), container("b", current), container("c", PIN))
    plans = [
        _plan("a", Decision.PINNED, image=PIN),
        _plan("b", Decision.PINNED, image=current),
        _plan("c", Decision.PINNED, image=PIN, newest=None),  # tag not known: not "behind"
        _plan("d", Decision.PINNED, image=PIN),
        _plan("f", Decision.PINNED, image=platform),
        _plan("g", Decision.PINNED, image=current, digests=frozenset()),  # children unread
    ]
    assert settled(obj, plans, {}, RESTART) == Ending(
        Outcome.CONVERGED, "pinned, never restarted; behind its tag: a, d"
    )
    recorded = [*plans, _plan("e", Decision.RECORD_RUNNING)]
    assert settled(obj, recorded, {}, RESTART) == Ending(
        Outcome.CONVERGED,
        "pinned, never restarted; behind its tag: a, d",
        AnnotationWrite("record", {container_key(RECORDED_DIGEST, "e"): NEW}),
    )


def test_refresh_s_own_pin_is_not_the_operator_s_so_it_cannot_dangle() -> None:
    obj = _runner(container("runner", PIN), annotations={DIGEST_KEY: OLD})
    plans = [_plan(image=PIN, decision=Decision.UP_TO_DATE)]
    assert settled(obj, plans, {PIN: NOT_FOUND}, PIN_MODE) == Ending(
        Outcome.CONVERGED,
        "every tracked image runs its newest digest",
        AnnotationWrite("record", {DIGEST_KEY: NEW}),
    )


def test_a_restart_that_would_keep_the_cached_image_is_refused_in_restart_mode_only() -> None:
    obj = _runner(container("runner", IMAGE, policy="IfNotPresent"))
    refused = restart_refusal(obj, [_plan()], RESTART, "")
    assert refused == Ending(
        Outcome.REFUSED,
        "a restart would keep the old image: imagePullPolicy is not Always for "
        "runner (IfNotPresent); set imagePullPolicy: Always or use --mode pin",
    )
    assert restart_refusal(obj, [_plan()], PIN_MODE, "") is None
    # Only the containers a restart moves are asked about.
    recorded = [_plan(decision=Decision.RECORD_RUNNING)]
    assert restart_refusal(obj, recorded, RESTART, "") is None


def test_the_restart_moves_exactly_the_containers_decided_restart() -> None:
    plans = [
        _plan(),
        _plan("side", Decision.PINNED),
        _plan("up", Decision.UP_TO_DATE),
        _plan("seen", Decision.RECORD_RUNNING, newest=ARM),
    ]
    assert target_of(plans) == {"runner": NEW}
    # Nothing to restart: the containers whose newest digest runs unrecorded are the target.
    assert target_of(plans[1:]) == {"seen": ARM}
    assert target_of(plans[1:3]) == {}


# pull_policy_refusals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "policy", "refused"),
    [
        (IMAGE, "Always", ""),
        (IMAGE, "Never", "Never"),
        (IMAGE, None, "IfNotPresent"),  # a named tag defaults to IfNotPresent
        ("registry.example.com/team/runner:latest", None, ""),  # latest defaults to Always
        ("registry.example.com/team/runner", None, ""),  # no tag is latest
        # The written tag decides, whatever the digest: ParseImageName's tag is `latest` here.
        (f"registry.example.com/team/runner:latest@{OLD}", None, ""),
        (f"registry.example.com/team/runner@{OLD}", None, "IfNotPresent"),  # no tag, a digest
    ],
)
def test_pull_policy_and_its_default(image: str, policy: str | None, refused: str) -> None:
    """Unset, the policy is the one the API server stores (pkg/apis/core/v1/defaults.go
    `SetDefaults_Container`): Always where pkg/util/parsers `ParseImageName` gives the tag
    `latest` (distribution/reference keeps a written tag beside a digest), else IfNotPresent;
    doctor's rule, `truegreen.pull_policy.pull_policy`."""
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


# restart_write / latch / count_failure ---------------------------------------------------


def _target_id(*plans: ContainerPlan) -> str:
    return target_id({p.container: p.newest or "" for p in plans})


TARGET = {"runner": NEW}


def test_a_restart_counts_the_attempt_and_leaves_the_marker_and_its_record_in_one_write() -> None:
    """The record (RESTARTED) outlives the marker, which a failed restart clears: a later tick
    tells its own restart still in the template from someone else's update by it."""
    tid = _target_id(_plan())
    marker = PendingRestart({"runner": NEW}, STAMP)
    assert restart_write({}, TARGET, STAMP) == RestartWrite(
        {ATTEMPTS: f"1 {tid}", PENDING: marker.text(), RESTARTED: marker.text()}, marker
    )
    assert restart_write({ATTEMPTS: f"2 {tid}"}, TARGET, STAMP) == RestartWrite(
        {ATTEMPTS: f"3 {tid}", PENDING: marker.text(), RESTARTED: marker.text()}, marker
    )


def test_attempts_at_another_target_start_the_count_again() -> None:
    tid = _target_id(_plan())
    step = restart_write({ATTEMPTS: "3 0123456789ab"}, TARGET, STAMP)
    assert step.annotations[ATTEMPTS] == f"1 {tid}"
    counted = count_failure({ATTEMPTS: "3 0123456789ab"}, TARGET, "why")
    assert counted.write == AnnotationWrite("count", {ATTEMPTS: f"1 {tid}"})


def test_the_flap_guard_latches_and_writes_the_latch_once() -> None:
    tid = _target_id(_plan())
    reason = (
        "3 tries at the same digests did not roll out healthy; "
        f"stopped until someone looks (clear {LATCHED} and {ATTEMPTS} to retry)"
    )
    assert latch({ATTEMPTS: f"3 {tid}"}, TARGET) == Ending(
        Outcome.LATCHED, reason, AnnotationWrite("latch", {LATCHED: reason})
    )
    latched = {ATTEMPTS: f"3 {tid}", LATCHED: reason}
    assert latch(latched, TARGET) == Ending(Outcome.LATCHED, reason)


def test_a_failure_with_no_restart_counts_the_attempt_and_drops_a_stale_marker() -> None:
    tid = _target_id(_plan())
    assert count_failure({ATTEMPTS: f"1 {tid}"}, TARGET, "pod x keeps crashing") == Ending(
        Outcome.ROLLOUT_FAILED,
        "pod x keeps crashing",
        AnnotationWrite("count", {ATTEMPTS: f"2 {tid}"}),
    )
    older = PendingRestart({"runner": OLD}, STAMP).text()
    recorded = {PENDING: older, RESTARTED: older}
    assert count_failure(recorded, TARGET, "why").write == AnnotationWrite(
        "count", {ATTEMPTS: f"1 {tid}", PENDING: None}
    )
    # A marker left with no record of refresh's latest restart (by a truegreen that kept none)
    # becomes that record as it goes: the template still carries its restart.
    assert count_failure({PENDING: older}, TARGET, "why").write == AnnotationWrite(
        "count", {ATTEMPTS: f"1 {tid}", PENDING: None, RESTARTED: older}
    )
    assert count_failure({PENDING: "{bad"}, TARGET, "why").write == AnnotationWrite(
        "count", {ATTEMPTS: f"1 {tid}", PENDING: None}
    )


def test_a_container_without_a_newest_digest_targets_the_empty_digest() -> None:
    target = target_of([_plan(newest=None)])
    assert target == {"runner": ""}
    assert restart_write({}, target, STAMP).marker.target == {"runner": ""}


# look / observe: the table's inputs --------------------------------------------------------


def _rolled(generation: int = 2, *, updated: int = 1, stuck: bool = False) -> Obj:
    """The Deployment after a restart: the controller has observed `generation`; `updated`
    copies (all available) of one."""
    obj = _with(
        _runner(),
        metadata={"generation": generation},
        status={
            "observedGeneration": generation,
            "updatedReplicas": updated,
            "availableReplicas": updated,
        },
    )
    if stuck:
        condition = {"type": "Progressing", "reason": "ProgressDeadlineExceeded"}
        obj["status"]["conditions"] = [condition]
    return obj


MARKER = PendingRestart({"runner": NEW}, STAMP)
OURS = {PENDING: MARKER.text()}
"""The annotations after the wait while the marker is still the one this tick waited on."""


def _observe(obj: Obj, pods: list[Obj], marker: PendingRestart | None = MARKER) -> Observation:
    return observe(obj, pods, [_plan()], marker, NOW)


def test_a_rollout_done_by_kubectl_s_rules_is_failing_while_a_new_pod_crashes() -> None:
    """kubectl's rules alone would call this rolled out (its status is late): the crashing
    pod says otherwise, and a verified rollout needs healthy pods."""
    crashing = [_pod("runner-new", ("runner", "CrashLoopBackOff"), stamp=STAMP, ready=False)]
    assert _observe(_rolled(2), crashing) == Observation(
        Running.OTHER,
        Health.FAILING,
        "new pod runner-new keeps crashing (CrashLoopBackOff)",
        ("runner",),
    )
    not_observed = _with(_rolled(2), metadata={"generation": 3})
    assert _observe(not_observed, [_pod("new", ("runner", NEW))]) == Observation(
        Running.NEWEST, Health.STARTING, "waiting for the update to be picked up"
    )


def test_a_stuck_rollout_fails_before_a_stuck_pod_and_a_pod_before_the_counts() -> None:
    crashing = [_pod("runner-new", ("runner", "CrashLoopBackOff"), stamp=STAMP, ready=False)]
    assert _observe(_rolled(updated=0, stuck=True), crashing).detail == (
        "the rollout exceeded its progress deadline"
    )
    assert _observe(_rolled(updated=0), crashing).detail == (
        "new pod runner-new keeps crashing (CrashLoopBackOff)"
    )
    starting = _observe(_rolled(updated=0), [])
    assert (starting.health, starting.detail) == (Health.STARTING, "0 of 1 copies updated")


def test_done_is_not_healthy_until_every_pod_that_stays_is_ready() -> None:
    new = _pod("new", ("runner", NEW))
    assert _observe(_rolled(), [new]) == Observation(Running.NEWEST, Health.HEALTHY)
    unready = _pod("unready", ("runner", NEW), ready=False)
    assert _observe(_rolled(), [new, unready]) == Observation(
        Running.NEWEST, Health.STARTING, "pod unready is not ready"
    )
    no_condition = _pod("bare", ("runner", NEW))
    del no_condition["status"]["conditions"]
    assert _observe(_rolled(), [no_condition]).detail == "pod bare is not ready"


@pytest.mark.parametrize(
    ("ready_for", "min_ready", "health"),
    [
        (timedelta(seconds=29), 30, Health.STARTING),
        (timedelta(seconds=30), 30, Health.HEALTHY),  # IsPodAvailable: at or before now
        (timedelta(seconds=0), 0, Health.HEALTHY),
        (None, 30, Health.STARTING),  # Ready, but when is unknown: not yet available
        (None, 0, Health.HEALTHY),
    ],
)
def test_a_pod_is_healthy_once_ready_for_min_ready_seconds(
    ready_for: timedelta | None, min_ready: int, health: Health
) -> None:
    pod = _pod(
        "new", ("runner", NEW), ready_since=NOW - ready_for if ready_for is not None else None
    )
    obj = _with(_rolled(), spec={"minReadySeconds": min_ready})
    found = _observe(obj, [pod])
    assert found.health is health
    if health is Health.STARTING:
        assert found.detail == "pod new has been ready for less than the 30s asked"


def test_without_a_marker_every_pod_counts_as_the_rollout_s() -> None:
    """Pods already on the newest digest, nothing restarted: any pod that will not leave its
    waiting state by itself fails the look."""
    crashing = _pod("api-0", ("runner", "CrashLoopBackOff"), ready=False)
    crashing["status"]["containerStatuses"][0]["imageID"] = f"x@{NEW}"
    found = _observe(_rolled(updated=1), [crashing], marker=None)
    assert (found.running, found.health, found.detail) == (
        Running.NEWEST,
        Health.FAILING,
        "pod api-0 keeps crashing (CrashLoopBackOff)",
    )
    assert _observe(_rolled(updated=1), [crashing]).health is Health.STARTING  # not the new pod


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("CrashLoopBackOff", "keeps crashing"),
        ("InvalidImageName", "names an image that is not valid"),
        # pkg/kubelet/images/image_manager.go `EnsureImageExists`: the image is not on the
        # machine and the pull policy is Never, so the kubelet never pulls it.
        (
            "ErrImageNeverPull",
            "needs an image its machine does not have, and imagePullPolicy Never forbids "
            "pulling it",
        ),
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


_PULL = f'failed to pull and unpack image "{IMAGE}": failed to resolve reference "{IMAGE}":'
"""How containerd's error begins, which the kubelet's ErrImagePull message is
(image_manager.go `EnsureImageExists`: `imagePullResult.err.Error()`)."""
_NOT_FOUND = f"{_PULL} {IMAGE}: not found"


def _pulling(
    name: str, reason: str, message: str, *, image_digest: str = "", stamp: str = ""
) -> Obj:
    """A pod whose runner waits on a failed pull, the kubelet's `message` with it."""
    pod = _pod(name, ("runner", reason), ready=False, image_digest=image_digest, stamp=stamp)
    pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"] = message
    return pod


@pytest.mark.parametrize("reason", ["ErrImagePull", "ImagePullBackOff"])
@pytest.mark.parametrize(
    ("message", "words"),
    [
        (_NOT_FOUND, "cannot pull its image: the registry says it does not exist"),
        (
            f"{_PULL} failed to authorize: failed to fetch oauth token: unexpected status from "
            "GET request to https://registry.example.com/token: 401 Unauthorized",
            "cannot pull its image: the registry refused the login",
        ),
        (
            f"{_PULL} no match for platform in manifest: not found",
            "cannot pull its image: it has no build for its machine's platform",
        ),
    ],
    ids=["not-found", "login-refused", "wrong-platform"],
)
def test_a_pull_the_registry_refuses_is_stuck(reason: str, message: str, words: str) -> None:
    """Every retry after the kubelet's back-off meets the same answer until someone changes the
    registry, the login or the image: a measured failure, at once."""
    pod = _pulling("new", reason, message, stamp=STAMP)
    assert stuck_new_pod([pod], MARKER) == f"new pod new {words} ({reason})"


@pytest.mark.parametrize("reason", ["ErrImagePull", "ImagePullBackOff"])
@pytest.mark.parametrize(
    "message",
    [
        f"{_PULL} unexpected status from HEAD request to https://registry.example.com/v2/r/"
        "manifests/stable: 503 Service Unavailable",
        f"{_PULL} unexpected status code: 429 Too Many Requests - Server message: "
        "toomanyrequests: You have reached your pull rate limit.",
        f"{_PULL} dial tcp 10.0.0.7:443: i/o timeout",
        f'Back-off pulling image "{IMAGE}"',  # kubelets before 1.30 name no error
        "",
    ],
    ids=["unavailable", "pull-limit", "unreachable", "no-error-named", "no-message"],
)
def test_a_pull_the_kubelet_retries_after_its_back_off_is_still_starting(
    reason: str, message: str
) -> None:
    """image_manager.go `EnsureImageExists`: a failed pull is put in back-off
    (`backOff.Next`), ImagePullBackOff until it ends, then pulled again; a registry that was
    busy or out of reach serves the next pull. Such a pod is starting, bounded by the wait's
    timeout and the stopped rule, never failed at the first look."""
    pod = _pulling("new", reason, message, stamp=STAMP)
    assert stuck_new_pod([pod], MARKER) == ""
    found = _observe(_rolled(updated=0), [pod])
    assert found.health is Health.STARTING


def test_a_pod_running_a_target_digest_is_new_even_without_the_stamp() -> None:
    refused = "new pod {} cannot pull its image: the registry says it does not exist (ErrImagePull)"
    pinned = _pulling("pinned", "ErrImagePull", _NOT_FOUND, image_digest=NEW)
    assert stuck_new_pod([pinned], MARKER) == refused.format("pinned")
    init = _pulling("init", "ErrImagePull", _NOT_FOUND)
    init["spec"]["initContainers"] = [{"name": "setup", "image": f"{IMAGE}@{NEW}"}]
    assert stuck_new_pod([init], MARKER) == refused.format("init")
    old = _pulling("old", "ErrImagePull", _NOT_FOUND, image_digest=OLD)
    assert stuck_new_pod([old], MARKER) == ""


def test_a_new_pod_that_is_merely_starting_is_not_stuck() -> None:
    starting = _pod("new", ("runner", "ContainerCreating"), stamp=STAMP)
    assert stuck_new_pod([starting], MARKER) == ""
    running = _pod("new", ("runner", NEW), stamp=STAMP)
    assert stuck_new_pod([running], MARKER) == ""


def _restarted(pod: Obj, count: int, *, uid: str = "uid-1") -> Obj:
    """`pod` with its container started `count` times again, the last run ended (exit 137)."""
    pod["metadata"]["uid"] = uid
    status = pod["status"]["containerStatuses"][0]
    status["restartCount"] = count
    status["lastState"] = {"terminated": {"exitCode": 137, "finishedAt": "2026-11-30T11:59:59Z"}}
    return pod


def test_a_pod_of_the_rollout_started_again_since_refresh_watched_it_has_crashed() -> None:
    new = _restarted(_pod("new", ("runner", NEW), stamp=STAMP), 1)
    crashed = "new pod new crashed and was started again while it rolled out"
    assert crashed_new_pod([new], MARKER, None).startswith(crashed)  # the restart made it
    assert crashed_new_pod([new], MARKER, None).endswith("restartCount 1, last exit code 137)")
    old = _restarted(_pod("old", ("runner", OLD), stamp="2026-01-01T00:00:00.000000Z"), 4)
    assert crashed_new_pod([old], MARKER, None) == ""  # not this restart's
    # Without a restart, counted from the wait's first look: only a count that rose since.
    settled = _restarted(_pod("settled", ("runner", NEW)), 41)
    assert crashed_new_pod([settled], None, None) == ""  # no wait began: nothing to count from
    before = restart_counts([settled])
    assert crashed_new_pod([settled], None, before) == ""
    again = _restarted(_pod("settled", ("runner", NEW)), 42)
    assert crashed_new_pod([again], None, before).startswith("pod settled crashed")
    remade = _restarted(_pod("settled", ("runner", NEW)), 1, uid="uid-2")  # same name, new pod
    assert crashed_new_pod([remade], None, before).startswith("pod settled crashed")
    unended = _restarted(_pod("new", ("runner", NEW), stamp=STAMP), 1)
    del unended["status"]["containerStatuses"][0]["lastState"]
    assert crashed_new_pod([unended], MARKER, None) == ""


def test_a_pod_of_refresh_s_unclosed_restart_counts_from_0_with_no_marker() -> None:
    """The restart failed and its marker is gone, but its record (`latest`) stands: a pod it
    made (its stamp, or under --mode pin its pinned digest) counts every restart; any other
    pod is counted only from a wait's first look."""
    new = _restarted(_pod("new", ("runner", NEW), stamp=STAMP), 4)
    assert crashed_new_pod([new], None, None, MARKER).startswith(
        "new pod new crashed and was started again"
    )
    pinned = _restarted(_pod("pinned", ("runner", NEW), image_digest=NEW), 4)
    assert crashed_new_pod([pinned], None, None, MARKER).startswith("new pod pinned crashed")
    other = _restarted(_pod("other", ("runner", NEW), stamp="2026-01-01T00:00:00.000000Z"), 4)
    assert crashed_new_pod([other], None, None, MARKER) == ""
    before = restart_counts([other, new])
    assert crashed_new_pod([other], None, before, MARKER) == ""
    assert crashed_new_pod([new], None, before, MARKER).startswith("new pod new crashed")
    # observe reads the record from the workload it judges.
    recorded = _with(_rolled(), metadata={"annotations": {RESTARTED: MARKER.text()}})
    found = _observe(recorded, [new], marker=None)
    assert (found.health, found.detail[:30]) == (Health.FAILING, "new pod new crashed and was st")
    assert _observe(_rolled(), [new], marker=None).health is Health.HEALTHY


def test_a_new_pod_that_crashed_makes_a_done_rollout_failing() -> None:
    new = _restarted(_pod("new", ("runner", NEW), stamp=STAMP), 5)
    found = _observe(_rolled(), [new])
    assert found.health is Health.FAILING
    assert found.detail.startswith("new pod new crashed and was started again")


def _leaving(pod: Obj) -> Obj:
    """`pod` deleted and in its grace period, as the API server marks it."""
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:30Z"
    return pod


def test_old_pods_still_terminating_do_not_hold_back_a_complete_rollout() -> None:
    old = _leaving(_pod("old", ("runner", OLD), ready=False))
    assert _observe(_rolled(2), [old, _pod("new", ("runner", NEW))]) == Observation(
        Running.NEWEST, Health.HEALTHY
    )


def test_a_complete_rollout_with_only_leaving_pods_listed_waits_for_the_staying_ones() -> None:
    old = _leaving(_pod("old", ("runner", OLD)))
    finished = _with(_pod("done", ("runner", OLD)), status={"phase": "Succeeded"})
    for pods in ([old], [old, finished]):
        found = _observe(_rolled(2), pods)
        assert (found.health, found.detail) == (
            Health.STARTING,
            "only copies on their way out are listed yet",
        )
    # With nothing listed at all, the pods simply do not run the newest digest.
    assert _observe(_rolled(2), []) == Observation(Running.OTHER, Health.HEALTHY, "", ("runner",))


def test_a_leaving_pod_of_this_restart_is_not_stuck() -> None:
    leaving = _leaving(_pod("new", ("runner", "CrashLoopBackOff"), stamp=STAMP, ready=False))
    assert _observe(_rolled(updated=0), [leaving]).health is Health.STARTING


def test_pods_on_their_way_out_prove_nothing() -> None:
    """Terminating pods still report the old image for their grace period (kubectl#1628)."""
    old = _leaving(_pod("old", ("runner", OLD)))
    finished = _with(_pod("done", ("runner", OLD)), status={"phase": "Failed"})
    new = _pod("new", ("runner", NEW))
    assert _observe(_rolled(), [old, finished, new]).running is Running.NEWEST
    assert _observe(_rolled(), [old]).unproven == ("runner",)


def test_the_unproven_containers_are_every_one_not_recorded_at_its_newest() -> None:
    pods = [_pod("new", ("runner", OLD), ("side", OLD), ("init", OLD))]
    plans = [_plan(), _plan("side", Decision.UP_TO_DATE), _plan("init", Decision.RECORD_RUNNING)]
    found = observe(_rolled(), pods, plans, MARKER, NOW)
    assert (found.running, found.unproven) == (Running.OTHER, ("runner", "init"))


# failure_reason ----------------------------------------------------------------------------


def _look(
    health: Health,
    running: Running = Running.NEWEST,
    *,
    detail: str = "pod x keeps crashing (CrashLoopBackOff)",
    marker: PendingRestart | None = MARKER,
) -> Look:
    situation = Situation(
        Recorded.BEHIND, running, health, Marker.UNDER_WAY, Attempts.LEFT, timed_out=True
    )
    return Look(situation, Observation(running, health, detail, ("runner",)), TARGET, marker)


def test_the_timeout_is_named_as_the_operator_gave_it() -> None:
    found = _look(Health.STARTING, detail="0 of 1 copies updated")
    assert failure_reason(found, 2.5) == "timed out after 2.5s (0 of 1 copies updated)"


def test_failure_words_say_what_was_restarted_or_found() -> None:
    assert failure_reason(_look(Health.FAILING), 5) == "pod x keeps crashing (CrashLoopBackOff)"
    assert failure_reason(_look(Health.HEALTHY, Running.OTHER), 5) == (
        "the new pods do not run the newest digest (runner)"
    )
    # Nothing restarted: the words say what the pods were found doing.
    assert failure_reason(_look(Health.FAILING, marker=None), 5) == (
        "the pods run the newest digest, but pod x keeps crashing (CrashLoopBackOff)"
    )
    assert failure_reason(_look(Health.FAILING, Running.OTHER, marker=None), 5) == (
        "the pods are not healthy: pod x keeps crashing (CrashLoopBackOff)"
    )
    assert failure_reason(_look(Health.HEALTHY, Running.OTHER, marker=None), 5) == (
        "the pods do not run the newest digest (runner)"
    )
    starting = _look(Health.STARTING, detail="pod x is not ready", marker=None)
    assert failure_reason(starting, 8) == (
        "the pods run the newest digest, but timed out after 8s (pod x is not ready)"
    )


# after_wait / record_changes ---------------------------------------------------------------


def test_a_verified_rollout_records_the_digest_and_clears_the_bookkeeping() -> None:
    annotations = {ATTEMPTS: "1 abc", PENDING: MARKER.text(), DIGEST_KEY: OLD}
    plans = [_plan(), _plan("side", Decision.UP_TO_DATE, newest=ARM)]
    assert after_wait(Action.RECORD, "", annotations, plans, MARKER, ours=True) == (
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
        )
    )


def test_an_operator_pin_is_never_recorded_even_after_a_verified_rollout() -> None:
    plans = [_plan(), _plan("pinned", Decision.PINNED, image=PIN)]
    ending = after_wait(Action.RECORD, "", OURS, plans, MARKER, ours=True)
    assert ending.write == AnnotationWrite("record", {PENDING: None, DIGEST_KEY: NEW})


def test_a_failed_rollout_drops_the_marker_a_timed_out_one_keeps_it() -> None:
    crashed = "new pod new keeps crashing (CrashLoopBackOff)"
    restarted = {**OURS, RESTARTED: MARKER.text()}
    assert after_wait(Action.FAIL, crashed, restarted, [_plan()], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED, crashed, AnnotationWrite("clear-pending", {PENDING: None})
    )
    # Marked by its marker alone (no record of the latest restart kept): the marker becomes
    # that record, so the next tick still knows the stopped update for refresh's own.
    assert after_wait(Action.FAIL, crashed, OURS, [_plan()], MARKER, ours=False) == Ending(
        Outcome.ROLLOUT_FAILED,
        crashed,
        AnnotationWrite("clear-pending", {PENDING: None, RESTARTED: MARKER.text()}),
    )
    timed_out = "timed out after 5s"
    assert after_wait(Action.STOP_WAITING, timed_out, OURS, [_plan()], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED, timed_out
    )


def test_a_marker_another_tick_wrote_since_is_never_cleared_nor_recorded_over() -> None:
    """The wait ended, but the pending marker read after it is not the one waited on: another
    tick restarted toward newer digests since. Nothing this tick writes may erase its marker."""
    newer = PendingRestart({"runner": ARM}, "2026-11-30T12:05:00.000001Z")
    theirs = {PENDING: newer.text(), DIGEST_KEY: OLD}
    crashed = "new pod new keeps crashing (CrashLoopBackOff)"
    assert after_wait(Action.FAIL, crashed, theirs, [_plan()], MARKER, ours=True) == Ending(
        Outcome.ROLLOUT_FAILED, crashed
    )
    assert after_wait(Action.RECORD, "", theirs, [_plan()], MARKER, ours=True) == Ending(
        Outcome.RESTARTED,
        "rolled out and verified; not recorded: another tick has restarted since",
    )


def test_a_restart_another_tick_made_is_reported_as_theirs() -> None:
    resumed = after_wait(Action.RECORD, "", OURS, [_plan()], MARKER, ours=False)
    assert (resumed.outcome, resumed.write) == (
        Outcome.RESTARTED_BY_OTHER,
        AnnotationWrite("record", {PENDING: None, DIGEST_KEY: NEW}),
    )
    recorded = {DIGEST_KEY: NEW}  # the other tick recorded and cleared its marker first
    for ours, outcome in ((True, Outcome.RESTARTED), (False, Outcome.RESTARTED_BY_OTHER)):
        assert after_wait(Action.RECORD, "", recorded, [_plan()], MARKER, ours=ours) == Ending(
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
