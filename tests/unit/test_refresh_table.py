"""The tick's decision table (refresh/steps.py TICK_TABLE), row by row: each row's test pins the
exact action for one situation it covers; the table covers every situation exactly once; the
waits it starts end only in the actions a wait can end in; docs/refresh.md shows the same
table; and the first look reads each input from the Deployment as the table means it."""

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.refresh_kit import container, deployment
from truegreen.images import parse_image
from truegreen.refresh.annotations import ATTEMPTS, PENDING, PendingRestart
from truegreen.refresh.plan import ContainerPlan, Decision, target_id
from truegreen.refresh.steps import (
    TICK_TABLE,
    Action,
    Attempts,
    Health,
    Marker,
    Recorded,
    Running,
    Situation,
    decide,
    look,
    look_again,
    row_for,
)

Obj = dict[str, Any]
NEW, OLD = (f"sha256:{c * 64}" for c in "10")
IMAGE = "registry.example.com/team/runner:stable"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DOCS = Path(__file__).parents[2] / "docs" / "refresh.md"

NEWEST, UNVERIFIED, BEHIND = Recorded.NEWEST, Recorded.UNVERIFIED, Recorded.BEHIND
ON_NEWEST, ON_OTHER = Running.NEWEST, Running.OTHER
HEALTHY, STARTING, FAILING = Health.HEALTHY, Health.STARTING, Health.FAILING
NO_MARKER, UNDER_WAY = Marker.NONE, Marker.UNDER_WAY
LEFT, SPENT = Attempts.LEFT, Attempts.SPENT


def _every_situation() -> list[Situation]:
    return [
        Situation(*values)
        for values in itertools.product(Recorded, Running, Health, Marker, Attempts, (False, True))
    ]


# One test per row ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "situation", "action"),
    [
        (1, Situation(NEWEST, ON_OTHER, FAILING, UNDER_WAY, SPENT, True), Action.NOTHING),
        (2, Situation(BEHIND, ON_NEWEST, HEALTHY, UNDER_WAY, SPENT), Action.RECORD),
        (3, Situation(BEHIND, ON_OTHER, HEALTHY, UNDER_WAY, LEFT), Action.FAIL),
        (4, Situation(UNVERIFIED, ON_OTHER, STARTING, UNDER_WAY, SPENT), Action.WAIT),
        (5, Situation(BEHIND, ON_NEWEST, STARTING, UNDER_WAY, LEFT, True), Action.STOP_WAITING),
        (6, Situation(BEHIND, ON_NEWEST, FAILING, UNDER_WAY, LEFT), Action.FAIL),
        (7, Situation(BEHIND, ON_NEWEST, FAILING, NO_MARKER, LEFT), Action.RESTART),
        (8, Situation(BEHIND, ON_OTHER, HEALTHY, NO_MARKER, SPENT), Action.LATCH),
        (9, Situation(UNVERIFIED, ON_NEWEST, HEALTHY, NO_MARKER, SPENT), Action.RECORD),
        (10, Situation(UNVERIFIED, ON_OTHER, HEALTHY, NO_MARKER, LEFT), Action.FAIL_AND_COUNT),
        (11, Situation(UNVERIFIED, ON_NEWEST, STARTING, NO_MARKER, LEFT), Action.WAIT),
        (
            12,
            Situation(UNVERIFIED, ON_NEWEST, STARTING, NO_MARKER, LEFT, True),
            Action.FAIL_AND_COUNT,
        ),
        (13, Situation(UNVERIFIED, ON_NEWEST, FAILING, NO_MARKER, LEFT), Action.FAIL_AND_COUNT),
        (14, Situation(UNVERIFIED, ON_OTHER, HEALTHY, NO_MARKER, SPENT), Action.LATCH),
        (15, Situation(UNVERIFIED, ON_NEWEST, FAILING, NO_MARKER, SPENT), Action.LATCH),
    ],
    ids=[f"row-{n}" for n in range(1, 16)],
)
def test_each_row_decides_its_action(row: int, situation: Situation, action: Action) -> None:
    assert (row_for(situation), decide(situation)) == (row, action)


def test_the_rows_above_are_every_row_of_the_table() -> None:
    assert len(TICK_TABLE) == 15


# The table as a whole ----------------------------------------------------------------------


def test_every_situation_is_covered_by_exactly_one_row() -> None:
    for situation in _every_situation():
        covering = [n for n, row in enumerate(TICK_TABLE, 1) if row.covers(situation)]
        assert len(covering) == 1, (situation, covering)


def test_healthy_pods_on_the_newest_digest_are_the_only_way_to_a_record() -> None:
    """The project's promise, read off the table: RECORD needs the newest digest running and
    healthy, whatever else holds."""
    for situation in _every_situation():
        if decide(situation) is Action.RECORD:
            assert (situation.running, situation.health) == (ON_NEWEST, HEALTHY), situation


def test_a_wait_ends_only_as_a_wait_can() -> None:
    """While waiting on a restart, the table never restarts, latches or counts again; while
    waiting on pods already on the newest digest (attempts left), it never restarts."""
    for situation in _every_situation():
        action = decide(situation)
        if situation.recorded is not NEWEST and situation.marker is UNDER_WAY:
            assert action in {Action.RECORD, Action.WAIT, Action.FAIL, Action.STOP_WAITING}
        elif (situation.recorded, situation.marker, situation.attempts) == (
            UNVERIFIED,
            NO_MARKER,
            LEFT,
        ):
            assert action in {Action.RECORD, Action.WAIT, Action.FAIL_AND_COUNT}
        if not situation.timed_out:
            assert action is not Action.STOP_WAITING


def test_a_failure_is_counted_exactly_once() -> None:
    """FAIL (and a stopped wait) relies on the restart's own count, so it needs a restart under
    way; FAIL_AND_COUNT counts, so it never follows one."""
    for situation in _every_situation():
        action = decide(situation)
        if action in {Action.FAIL, Action.STOP_WAITING}:
            assert situation.marker is UNDER_WAY, situation
        if action is Action.FAIL_AND_COUNT:
            assert situation.marker is NO_MARKER, situation


def _cell(values: frozenset[Any], every: Any, words: Any = str) -> str:
    if values == frozenset(every):
        return "any"
    return " or ".join(f"`{words(value)}`" for value in every if value in values)


def test_docs_show_the_same_table() -> None:
    lines = [
        "| # | recorded | pods run | health | marker | attempts | timeout | action |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for number, row in enumerate(TICK_TABLE, 1):
        timeout = _cell(row.timed_out, (False, True), lambda v: "passed" if v else "not passed")
        cells = [
            str(number),
            _cell(row.recorded, Recorded),
            _cell(row.running, Running),
            _cell(row.health, Health),
            _cell(row.marker, Marker),
            _cell(row.attempts, Attempts),
            timeout,
            f"`{row.action}`",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    assert "\n".join(lines) in DOCS.read_text()


# The first look's inputs -------------------------------------------------------------------


def _plan(decision: Decision, name: str = "runner") -> ContainerPlan:
    return ContainerPlan(
        name, IMAGE, "stable", NEW, None, (), decision, "", parse_image(IMAGE), frozenset({NEW})
    )


def _deployment(annotations: dict[str, str] | None = None) -> Obj:
    return deployment("runner", container("runner", IMAGE), annotations=annotations)


def _ready_pod(digest: str) -> Obj:
    since = (NOW - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "metadata": {"name": "runner-0"},
        "spec": {"containers": [{"name": "runner", "image": IMAGE}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": since}],
            "containerStatuses": [{"name": "runner", "imageID": f"x@{digest}"}],
        },
    }


@pytest.mark.parametrize(
    ("decisions", "recorded"),
    [
        ([Decision.UP_TO_DATE, Decision.PINNED], NEWEST),
        ([Decision.UP_TO_DATE, Decision.RECORD_RUNNING], UNVERIFIED),
        ([Decision.RECORD_RUNNING, Decision.RESTART], BEHIND),
    ],
)
def test_what_is_recorded_is_read_from_the_plans(
    decisions: list[Decision], recorded: Recorded
) -> None:
    plans = [_plan(d, f"c{i}") for i, d in enumerate(decisions)]
    found = look(_deployment(), [_ready_pod(NEW)], plans, max_attempts=3, now=NOW)
    assert found.situation.recorded is recorded


def test_the_first_look_of_healthy_pods_on_the_newest_digest_records_them() -> None:
    found = look(
        _deployment(), [_ready_pod(NEW)], [_plan(Decision.RECORD_RUNNING)], max_attempts=3, now=NOW
    )
    assert found.situation == Situation(UNVERIFIED, ON_NEWEST, HEALTHY, NO_MARKER, LEFT)
    assert (found.target, found.marker) == ({"runner": NEW}, None)
    assert decide(found.situation) is Action.RECORD


def test_a_marker_toward_these_digests_is_under_way_even_at_the_attempt_maximum() -> None:
    """The restart already happened, so waiting for it costs no attempt; a marker toward other
    digests is no restart toward these (the next restart replaces it)."""
    tid = target_id({"runner": NEW})
    same = PendingRestart({"runner": NEW}, "2026-11-29T00:00:00.000000Z")
    obj = _deployment({PENDING: same.text(), ATTEMPTS: f"3 {tid}"})
    found = look(obj, [_ready_pod(OLD)], [_plan(Decision.RESTART)], max_attempts=3, now=NOW)
    assert (found.situation.marker, found.situation.attempts, found.marker) == (
        UNDER_WAY,
        SPENT,
        same,
    )
    assert decide(found.situation) is Action.FAIL  # rolled out, on the old digest
    older = PendingRestart({"runner": OLD}, "2026-11-29T00:00:00.000000Z")
    obj = _deployment({PENDING: older.text()})
    found = look(obj, [_ready_pod(OLD)], [_plan(Decision.RESTART)], max_attempts=3, now=NOW)
    assert (found.situation.marker, found.marker) == (NO_MARKER, None)
    assert decide(found.situation) is Action.RESTART


@pytest.mark.parametrize(
    ("counter", "attempts"),
    [("2 {tid}", LEFT), ("3 {tid}", SPENT), ("3 0123456789ab", LEFT), ("", LEFT)],
)
def test_attempts_count_only_at_these_digests(counter: str, attempts: Attempts) -> None:
    tid = target_id({"runner": NEW})
    obj = _deployment({ATTEMPTS: counter.format(tid=tid)} if counter else None)
    found = look(obj, [_ready_pod(OLD)], [_plan(Decision.RESTART)], max_attempts=3, now=NOW)
    assert found.situation.attempts is attempts


def test_a_look_while_waiting_keeps_what_the_first_look_decided_from() -> None:
    """Recorded and attempts stay as the first look found them; the marker is the one waited
    on, whatever the annotations say now; the pods and the timeout are read again."""
    plans = [_plan(Decision.RESTART)]
    first = look(_deployment(), [_ready_pod(OLD)], plans, max_attempts=1, now=NOW)
    assert first.situation == Situation(BEHIND, ON_OTHER, HEALTHY, NO_MARKER, LEFT)
    marker = PendingRestart({"runner": NEW}, "2026-11-30T12:00:00.000001Z")
    counted = _deployment({ATTEMPTS: f"1 {target_id({'runner': NEW})}"})
    again = look_again(
        first, counted, [_ready_pod(NEW)], plans, now=NOW, timed_out=True, marker=marker
    )
    assert again.situation == Situation(BEHIND, ON_NEWEST, HEALTHY, UNDER_WAY, LEFT, True)
    assert (again.marker, again.target) == (marker, {"runner": NEW})
    assert decide(again.situation) is Action.RECORD
