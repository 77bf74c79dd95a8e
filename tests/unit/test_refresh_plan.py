"""The refresh plan's pure decisions, pinned value by value (the ticks' scenarios run them too,
against a real registry; these say exactly what each decision carries)."""

from typing import Any

import pytest

from truegreen.images import parse_image
from truegreen.refresh.annotations import (
    ATTEMPTS,
    DANGLING_PIN,
    PENDING,
    RECORDED_DIGEST,
    RESTARTED,
    STALE_PIN,
    TRACK_TAG,
    AttemptCounter,
    PendingRestart,
    container_key,
)
from truegreen.refresh.plan import (
    ContainerPlan,
    Decision,
    RefreshMode,
    pin_findings,
    plan_container,
    pods_run,
    running_digests,
    settled_digest,
    target_id,
    tracked_reference,
)
from truegreen.refresh.registry import LookupFailed, LookupFailure, Resolved

OLD, NEW, ARM, OTHER = (f"sha256:{c * 64}" for c in "0123")
IMAGE = "registry.example.com/team/runner:stable"
REF = parse_image(IMAGE)
NEWEST = Resolved(NEW, "application/vnd.oci.image.index.v1+json", (ARM,))
RESTART = RefreshMode.RESTART
PIN_MODE = RefreshMode.PIN


def _pod(*statuses: tuple[str, str], phase: str = "Running") -> dict[str, Any]:
    return {
        "status": {
            "phase": phase,
            "containerStatuses": [
                {"name": name, "imageID": f"registry.example.com/team/x@{digest}"}
                for name, digest in statuses
            ],
        }
    }


def _runner(image: str = IMAGE) -> dict[str, str]:
    return {"name": "runner", "image": image}


def _aimed_at(digest: str, container: str = "runner") -> dict[str, str]:
    """The record of refresh's restart toward `digest`, which no verified record has closed:
    what makes a `repo:tag@digest` in the template refresh's own pin in pin mode."""
    return {RESTARTED: PendingRestart({container: digest}, "2026-11-30T12:00:00Z").text()}


def _unverified(aimed: str) -> str:
    """The reason where every copy runs the tag's digest while refresh's restart toward
    `aimed` stands unclosed."""
    return (
        f"the pods run the newest digest, but its last restart, toward {aimed[:19]}…, was "
        "never verified: recorded once they are healthy"
    )


def test_running_digests_are_the_named_container_s_in_live_pods_once_each() -> None:
    pods = [
        _pod(("runner", OLD), phase="Succeeded"),  # finished: runs nothing
        _pod(("sidecar", OTHER), ("runner", NEW)),
        _pod(("runner", NEW)),
        _pod(("runner", ARM)),
    ]
    assert running_digests(pods, "runner") == (NEW, ARM)
    assert running_digests(pods, "sidecar") == (OTHER,)
    assert (
        running_digests([{"status": {"containerStatuses": [{"name": "runner"}]}}], "runner") == ()
    )


def test_a_sha512_image_id_is_a_digest_too_and_no_longer_hex_is_cut_to_fit() -> None:
    """The OCI image spec registers sha256 and sha512; a longer hex run is no digest at all."""
    sha512 = "sha512:" + "5" * 128
    too_long = "sha256:" + "6" * 65
    pods = [_pod(("runner", sha512)), _pod(("runner", too_long)), _pod(("runner", NEW))]
    assert running_digests(pods, "runner") == (sha512, NEW)
    assert pods_run([_pod(("runner", sha512))], "runner", frozenset({sha512}))


def test_pods_run_needs_every_live_pod_on_one_of_the_digests() -> None:
    digests = frozenset({NEW, ARM})
    assert pods_run([_pod(("runner", NEW)), _pod(("runner", ARM))], "runner", digests)
    assert pods_run(
        [_pod(("runner", OLD), phase="Failed"), _pod(("runner", NEW))], "runner", digests
    )
    assert not pods_run([_pod(("runner", NEW)), _pod(("runner", OLD))], "runner", digests)
    assert not pods_run([_pod(("sidecar", NEW))], "runner", digests)  # no status for it
    assert not pods_run([_pod(("runner", NEW), phase="Succeeded")], "runner", digests)  # no pod
    assert not pods_run([], "runner", digests)


@pytest.mark.parametrize(
    ("image", "annotations", "mode", "tracked", "pinned"),
    [
        (IMAGE, {}, RESTART, IMAGE, None),
        (f"{IMAGE}@{OLD}", {}, RESTART, IMAGE, f"{IMAGE}@{OLD}"),
        # In pin mode, refresh's own pin (the digest it recorded or last aimed a restart at)
        # tracks its tag; any other is the operator's.
        (f"{IMAGE}@{OLD}", {container_key(RECORDED_DIGEST, "runner"): OLD}, PIN_MODE, IMAGE, None),
        (f"{IMAGE}@{OLD}", _aimed_at(OLD), PIN_MODE, IMAGE, None),
        (f"{IMAGE}@{OLD}", {}, PIN_MODE, IMAGE, f"{IMAGE}@{OLD}"),
        (
            f"{IMAGE}@{OLD}",
            {
                container_key(RECORDED_DIGEST, "runner"): NEW,
                **_aimed_at(NEW),
                **_aimed_at(OLD, "x"),
            },
            PIN_MODE,
            IMAGE,
            f"{IMAGE}@{OLD}",
        ),
        (
            f"registry.example.com/team/runner@{OLD}",
            {container_key(TRACK_TAG, "runner"): "stable"},
            RESTART,
            IMAGE,
            f"registry.example.com/team/runner@{OLD}",
        ),
        (
            f"registry.example.com/team/runner@{OLD}",
            {container_key(TRACK_TAG, "other"): "stable"},
            RefreshMode.PIN,
            None,
            f"registry.example.com/team/runner@{OLD}",
        ),
    ],
)
def test_tracked_reference(
    image: str,
    annotations: dict[str, str],
    mode: RefreshMode,
    tracked: str | None,
    pinned: str | None,
) -> None:
    found = tracked_reference(_runner(image), annotations, mode)
    assert found == (
        parse_image(tracked) if tracked else None,
        parse_image(pinned) if pinned else None,
    )


def test_an_image_that_is_not_a_reference_is_invalid_with_the_reason() -> None:
    plan = plan_container(_runner("Not An Image"), {}, {}, [], RESTART)
    assert plan == ContainerPlan(
        "runner",
        "Not An Image",
        None,
        None,
        None,
        (),
        Decision.INVALID_IMAGE,
        # the kubelet's words (image_manager.go applyDefaultImageTag, reference.go)
        'couldn\'t parse image reference "Not An Image": invalid reference format: '
        "repository name (library/Not An Image) must be lowercase",
    )


def test_a_container_without_an_image_is_invalid_and_shown_as_empty() -> None:
    plan = plan_container({"name": "runner"}, {}, {}, [], RESTART)
    assert (plan.image, plan.decision, plan.reason) == (
        "",
        Decision.INVALID_IMAGE,
        'couldn\'t parse image reference "": repository name must have at least one component',
    )


def test_a_digest_only_image_is_a_pin_tracking_the_annotated_tag_if_any() -> None:
    bare = f"registry.example.com/team/runner@{OLD}"
    untracked = plan_container(_runner(bare), {}, {str(REF): NEWEST}, [], RESTART)
    assert untracked == ContainerPlan(
        "runner", bare, None, None, None, (), Decision.PINNED, "", None
    )
    track = {container_key(TRACK_TAG, "runner"): "stable"}
    tracked = plan_container(_runner(bare), track, {str(REF): NEWEST}, [], RESTART)
    assert tracked == ContainerPlan(
        "runner", bare, "stable", NEW, None, (), Decision.PINNED, "", REF, NEWEST.all_digests
    )


def test_in_pin_mode_a_tag_image_not_pinned_yet_goes_by_the_record() -> None:
    recorded = {container_key(RECORDED_DIGEST, "runner"): NEW}
    plan = plan_container(_runner(), recorded, {str(REF): NEWEST}, [], RefreshMode.PIN)
    assert (plan.decision, plan.reason) == (Decision.UP_TO_DATE, "")


def test_a_pinned_container_is_never_restarted_and_says_its_tag_s_newest() -> None:
    pinned = f"{IMAGE}@{OLD}"
    recorded = {container_key(RECORDED_DIGEST, "runner"): OLD}
    plan = plan_container(
        _runner(pinned), recorded, {str(REF): NEWEST}, [_pod(("runner", OLD))], RESTART
    )
    assert plan == ContainerPlan(
        "runner", pinned, "stable", NEW, OLD, (OLD,), Decision.PINNED, "", REF, NEWEST.all_digests
    )
    unknown = plan_container(_runner(pinned), {}, {}, [], RESTART)
    assert (unknown.decision, unknown.newest) == (Decision.PINNED, None)


@pytest.mark.parametrize(
    ("lookups", "reason"),
    [
        (
            {str(REF): LookupFailed(LookupFailure.TIMEOUT, "registry did not answer")},
            "registry did not answer",
        ),
        ({}, "not looked up"),
    ],
)
def test_a_failed_look_up_decides_nothing(lookups: dict[str, Any], reason: str) -> None:
    recorded = {container_key(RECORDED_DIGEST, "runner"): OLD}
    plan = plan_container(_runner(), recorded, lookups, [_pod(("runner", OLD))], RESTART)
    assert plan == ContainerPlan(
        "runner", IMAGE, "stable", None, OLD, (OLD,), Decision.LOOKUP_FAILED, reason, REF
    )


@pytest.mark.parametrize(
    ("recorded", "pods", "decision", "reason"),
    [
        (NEW, [_pod(("runner", NEW))], Decision.UP_TO_DATE, ""),
        (ARM, [_pod(("runner", ARM))], Decision.UP_TO_DATE, ""),  # a platform child counts
        (OLD, [_pod(("runner", OLD))], Decision.RESTART, f"recorded {OLD[:19]}… is not the newest"),
        (
            None,
            [_pod(("runner", NEW))],
            Decision.RECORD_RUNNING,
            "first run: the pods already run the newest digest",
        ),
        (None, [_pod(("runner", OLD))], Decision.RESTART, "nothing recorded yet"),
        (None, [], Decision.RESTART, "nothing recorded yet"),
    ],
)
def test_tag_tracking_decisions(
    recorded: str | None, pods: list[dict[str, Any]], decision: Decision, reason: str
) -> None:
    annotations = {container_key(RECORDED_DIGEST, "runner"): recorded} if recorded else {}
    plan = plan_container(_runner(), annotations, {str(REF): NEWEST}, pods, RESTART)
    running = tuple(d for p in pods for d in running_digests([p], "runner"))
    assert plan == ContainerPlan(
        "runner",
        IMAGE,
        "stable",
        NEW,
        recorded,
        running,
        decision,
        reason,
        REF,
        frozenset({NEW, ARM}),
    )


@pytest.mark.parametrize(
    ("recorded", "aimed", "running", "decision", "reason"),
    [
        # The tag is back on the recorded digest, while refresh's restart toward another one
        # stands unfinished in the template: its copies run that other digest.
        (
            NEW,
            OTHER,
            OTHER,
            Decision.RESTART,
            f"its last restart, toward {OTHER[:19]}…, never finished; the tag is back on the "
            f"recorded {NEW[:19]}…",
        ),
        (
            ARM,
            OLD,
            OLD,
            Decision.RESTART,
            f"its last restart, toward {OLD[:19]}…, never finished; the tag is back on the "
            f"recorded {ARM[:19]}…",
        ),
        # refresh's restart toward the tag's digest itself (or a platform child of it) stands
        # unfinished, a copy not on it (a restart back that stopped too): retried, never
        # "nothing to do".
        (
            NEW,
            NEW,
            OTHER,
            Decision.RESTART,
            f"its last restart, toward {NEW[:19]}…, which the tag names, never finished: a "
            "copy does not run it",
        ),
        (
            NEW,
            ARM,
            OTHER,
            Decision.RESTART,
            f"its last restart, toward {ARM[:19]}…, which the tag names, never finished: a "
            "copy does not run it",
        ),
        # Every copy already runs the tag's digest (someone set the image back, and the
        # template kept refresh's restartedAt stamp; or the restart back replaced every copy,
        # one never Ready): nothing to restart, recorded once the table finds them healthy.
        (NEW, OTHER, NEW, Decision.RECORD_RUNNING, _unverified(OTHER)),
        (NEW, OTHER, ARM, Decision.RECORD_RUNNING, _unverified(OTHER)),
        (NEW, NEW, NEW, Decision.RECORD_RUNNING, _unverified(NEW)),
        (NEW, ARM, NEW, Decision.RECORD_RUNNING, _unverified(ARM)),
        # No restart of refresh's stands unclosed: the record is the verified rollout.
        (NEW, None, NEW, Decision.UP_TO_DATE, ""),
        (NEW, None, OTHER, Decision.UP_TO_DATE, ""),
        # Another digest recorded: restarted as ever, whatever the last restart aimed at.
        (OLD, OTHER, OLD, Decision.RESTART, f"recorded {OLD[:19]}… is not the newest"),
        (OLD, NEW, OLD, Decision.RESTART, f"recorded {OLD[:19]}… is not the newest"),
    ],
)
def test_a_restart_of_refresh_s_own_left_unfinished_is_what_the_template_runs(
    recorded: str, aimed: str | None, running: str, decision: Decision, reason: str
) -> None:
    annotations = {container_key(RECORDED_DIGEST, "runner"): recorded}
    pods = [_pod(("runner", NEW)), _pod(("runner", running))]
    plan = plan_container(_runner(), annotations, {str(REF): NEWEST}, pods, RESTART, aimed=aimed)
    assert (plan.decision, plan.reason, plan.newest, plan.recorded) == (
        decision,
        reason,
        NEW,
        recorded,
    )


@pytest.mark.parametrize(
    ("recorded", "running", "decision", "reason"),
    [
        # The template already pins the tag's digest: a restart would write the same template.
        # The copies are left to run it, waited for, counted and latched (the table).
        (
            NEW,
            OTHER,
            Decision.RECORD_RUNNING,
            f"its last restart, toward {NEW[:19]}…, which the tag names, never finished: a "
            "copy does not run it, and the template already pins it",
        ),
        (NEW, NEW, Decision.RECORD_RUNNING, _unverified(NEW)),
        (OLD, OTHER, Decision.RECORD_RUNNING, "the pods run the newest digest"),
    ],
)
def test_in_pin_mode_refresh_s_own_pin_left_unfinished_is_never_pinned_again(
    recorded: str, running: str, decision: Decision, reason: str
) -> None:
    annotations = {container_key(RECORDED_DIGEST, "runner"): recorded, **_aimed_at(NEW)}
    pods = [_pod(("runner", NEW)), _pod(("runner", running))]
    plan = plan_container(
        _runner(f"{IMAGE}@{NEW}"),
        annotations,
        {str(REF): NEWEST},
        pods,
        RefreshMode.PIN,
        aimed=NEW,
    )
    assert (plan.decision, plan.reason) == (decision, reason)


def test_in_pin_mode_the_template_pin_is_what_runs() -> None:
    own_pin = f"{IMAGE}@{NEW}"
    stale = {container_key(RECORDED_DIGEST, "runner"): OLD, **_aimed_at(NEW)}
    plan = plan_container(_runner(own_pin), stale, {str(REF): NEWEST}, [], RefreshMode.PIN)
    assert (plan.decision, plan.reason) == (
        Decision.RECORD_RUNNING,
        "the pods run the newest digest",
    )
    recorded = {container_key(RECORDED_DIGEST, "runner"): OLD}
    behind = plan_container(
        _runner(f"{IMAGE}@{OLD}"), recorded, {str(REF): NEWEST}, [], RefreshMode.PIN
    )
    assert (behind.decision, behind.reason) == (
        Decision.RESTART,
        f"recorded {OLD[:19]}… is not the newest",
    )
    # The template pins what refresh last aimed at, not what it recorded: the pin is named.
    aimed = {**recorded, **_aimed_at(ARM)}
    behind = plan_container(
        _runner(f"{IMAGE}@{ARM}"), aimed, {str(REF): Resolved(NEW, "", ())}, [], RefreshMode.PIN
    )
    assert (behind.decision, behind.reason) == (
        Decision.RESTART,
        f"pinned {ARM[:19]}… is not the newest",
    )
    # In restart mode the same image is an operator pin, never restarted.
    assert plan_container(_runner(own_pin), {}, {str(REF): NEWEST}, [], RESTART).decision is (
        Decision.PINNED
    )


UNREAD = Resolved(NEW, "application/vnd.oci.image.index.v1+json", None)
"""The tag's index, its platform manifests not read: its HEAD named the digest settled on."""


@pytest.mark.parametrize(
    ("image", "annotations", "mode", "aimed", "settled"),
    [
        # The tag on the recorded digest judges nothing by the platform manifests.
        (IMAGE, {container_key(RECORDED_DIGEST, "runner"): NEW}, RESTART, None, NEW),
        # A restart of refresh's own unverified, even toward the recorded digest: whether every
        # copy runs the tag's image (a platform manifest included) is asked of the pods.
        (IMAGE, {container_key(RECORDED_DIGEST, "runner"): NEW}, RESTART, NEW, None),
        # Nothing recorded: the pods may run a platform manifest.
        (IMAGE, {}, RESTART, None, None),
        # An unfinished restart toward another digest: its copies are judged by them.
        (IMAGE, {container_key(RECORDED_DIGEST, "runner"): NEW}, RESTART, ARM, None),
        # Pin mode: refresh's own pin is what runs; it must be the recorded digest.
        (f"{IMAGE}@{NEW}", {container_key(RECORDED_DIGEST, "runner"): NEW}, PIN_MODE, None, NEW),
        (
            f"{IMAGE}@{OLD}",
            {container_key(RECORDED_DIGEST, "runner"): NEW, **_aimed_at(OLD)},
            PIN_MODE,
            None,
            None,
        ),
        # Pin mode, a pin refresh neither recorded nor aimed at: the operator's.
        (f"{IMAGE}@{OLD}", {container_key(RECORDED_DIGEST, "runner"): NEW}, PIN_MODE, None, OLD),
        # An operator pin is stale only where the tag names another image.
        (f"{IMAGE}@{OLD}", {}, RESTART, None, OLD),
        ("Not An Image", {}, RESTART, None, None),
    ],
)
def test_settled_digest(
    image: str,
    annotations: dict[str, str],
    mode: RefreshMode,
    aimed: str | None,
    settled: str | None,
) -> None:
    assert settled_digest(_runner(image), annotations, mode, aimed=aimed) == settled


def test_an_index_left_unread_decides_only_where_its_digest_was_settled_on() -> None:
    """A look-up that left the index unread (the workload as first read needed no platform
    manifest) decides the workload as read again only where it still needs none: else the
    newest image is not known, never guessed from the index digest alone."""
    recorded = {container_key(RECORDED_DIGEST, "runner"): NEW}
    pods = [_pod(("runner", ARM))]
    settled = plan_container(_runner(), recorded, {str(REF): UNREAD}, pods, RESTART)
    assert (settled.decision, settled.newest_digests) == (Decision.UP_TO_DATE, frozenset({NEW}))
    fresh = plan_container(_runner(), {}, {str(REF): UNREAD}, pods, RESTART)
    assert (fresh.decision, fresh.newest, fresh.reason) == (
        Decision.LOOKUP_FAILED,
        None,
        f"the workload changed while the tick ran, and the per-platform images of {REF} were "
        "not read this tick; the next tick reads them",
    )
    aimed = plan_container(_runner(), recorded, {str(REF): UNREAD}, pods, RESTART, aimed=OLD)
    assert aimed.decision is Decision.LOOKUP_FAILED


@pytest.mark.parametrize(
    ("value", "counter"),
    [
        ("2 abc123", AttemptCounter(2, "abc123")),
        ("", AttemptCounter(0, "")),
        ("two abc", AttemptCounter(0, "")),
        ("-1 abc", AttemptCounter(0, "")),
    ],
)
def test_attempt_counter(value: str, counter: AttemptCounter) -> None:
    read = AttemptCounter.read({ATTEMPTS: value} if value else {})
    assert read == counter
    assert read.at(counter.target) == counter.count
    assert AttemptCounter(2, "abc123").at("other") == 0
    assert AttemptCounter(2, "abc123").text() == "2 abc123"


def test_target_id_is_short_stable_and_order_free() -> None:
    a = target_id({"runner": NEW, "sidecar": OLD})
    assert a == target_id({"sidecar": OLD, "runner": NEW})
    assert len(a) == 12
    assert a != target_id({"runner": NEW, "sidecar": ARM})
    assert a != target_id({"runner": NEW})
    # The id lands in annotations on clusters: it must not change between versions.
    assert target_id({"a": "b"}) == "db4a7ecb114b"  # sha256(b'{"a":"b"}')[:12]
    assert a == "a968fc97ddff"  # sha256 of the sorted, compact JSON of both entries


def _pinned_workload(annotations: dict[str, str], *images: tuple[str, str]) -> dict[str, Any]:
    containers = [{"name": name, "image": image} for name, image in images]
    return {
        "metadata": {"annotations": annotations},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


STALE = container_key(STALE_PIN, "side")
DANGLING = container_key(DANGLING_PIN, "side")
PIN = parse_image(f"{IMAGE}@{OLD}")
UNREAD_OLD = Resolved(OLD, "application/vnd.oci.image.index.v1+json", None)


@pytest.mark.parametrize(
    ("annotations", "lookups", "pin_lookups", "changes"),
    [
        # The tag moved past the pin: set the finding, naming the tag and its newest digest.
        ({}, {str(REF): NEWEST}, {str(PIN): Resolved(OLD, "m")}, {STALE: f"stable {NEW}"}),
        # Already said: nothing to write.
        ({STALE: f"stable {NEW}"}, {str(REF): NEWEST}, {str(PIN): Resolved(OLD, "m")}, {}),
        # The pin is current again (any platform digest counts): clear.
        (
            {STALE: "stable x"},
            {str(REF): Resolved(OLD, "m", (ARM,))},
            {str(PIN): Resolved(OLD, "m")},
            {STALE: None},
        ),
        # Could not look up the tag: leave the finding as it is.
        (
            {STALE: "stable x"},
            {str(REF): LookupFailed(LookupFailure.TIMEOUT, "t")},
            {str(PIN): Resolved(OLD, "m")},
            {},
        ),
        # The pinned digest is gone from the registry: dangling, said with the registry.
        (
            {},
            {str(REF): Resolved(OLD, "m")},
            {str(PIN): LookupFailed(LookupFailure.NOT_FOUND, "gone")},
            {DANGLING: f"{OLD} no longer exists in registry.example.com"},
        ),
        # The index left unread (its HEAD named the pin's digest): the pin is current.
        (
            {STALE: "stable x"},
            {str(REF): UNREAD_OLD},
            {str(PIN): Resolved(OLD, "m")},
            {STALE: None},
        ),
        # Left unread while the tag names another digest: whether the pin is one of its
        # platform manifests is not known; leave the finding as it is.
        ({STALE: "stable x"}, {str(REF): UNREAD}, {str(PIN): Resolved(OLD, "m")}, {}),
        # Could not check the pin: leave a dangling finding as it is.
        (
            {DANGLING: "said before"},
            {str(REF): Resolved(OLD, "m")},
            {str(PIN): LookupFailed(LookupFailure.SERVER_ERROR, "500")},
            {},
        ),
    ],
)
def test_pin_findings(
    annotations: dict[str, str],
    lookups: dict[str, Any],
    pin_lookups: dict[str, Any],
    changes: dict[str, str | None],
) -> None:
    # An unpinned container first: the pinned one after it must still be judged.
    workload = _pinned_workload(annotations, ("main", IMAGE), ("side", f"{IMAGE}@{OLD}"))
    assert pin_findings(workload, lookups, pin_lookups, RESTART) == changes


def test_pin_findings_are_cleared_when_the_pin_or_its_container_goes() -> None:
    gone = container_key(STALE_PIN, "removed")
    gone_dangling = container_key(DANGLING_PIN, "removed")
    recorded = container_key(RECORDED_DIGEST, "removed")
    said = {
        STALE: "stable x",
        DANGLING: "d",
        gone: "stable y",
        gone_dangling: "d",
        recorded: OLD,  # not a finding: never cleared here
        "other.io/stale-pin.removed": "k",
    }
    unpinned = _pinned_workload(said, ("side", IMAGE))
    assert pin_findings(unpinned, {str(REF): NEWEST}, {}, RESTART) == {
        STALE: None,
        DANGLING: None,
        gone: None,
        gone_dangling: None,
    }
    # A digest-only image with no tag to track: pin checking is off, the finding is cleared.
    # Each is followed by a pinned container whose tag moved: it is still judged.
    moved = ("later", f"{IMAGE}@{OLD}")
    later = container_key(STALE_PIN, "later")
    lookups = {str(REF): NEWEST}
    untracked = _pinned_workload(
        {STALE: "stable x"}, ("side", f"registry.example.com/team/runner@{OLD}"), moved
    )
    assert pin_findings(untracked, lookups, {}, RESTART) == {STALE: None, later: f"stable {NEW}"}
    # A broken image reference: its findings are cleared, nothing else is said about it.
    broken = _pinned_workload({STALE: "stable x"}, ("side", "Not An Image"), moved)
    assert pin_findings(broken, lookups, {}, RESTART) == {STALE: None, later: f"stable {NEW}"}
    # In pin mode refresh's own pin (`repo:tag@digest` with the digest it recorded) is no
    # operator's: no finding. Any other pin is judged as in restart mode.
    own_said = {STALE: "stable x", container_key(RECORDED_DIGEST, "side"): OLD}
    own = _pinned_workload(own_said, ("side", f"{IMAGE}@{OLD}"))
    assert pin_findings(own, lookups, {}, RefreshMode.PIN) == {STALE: None}
    operators = _pinned_workload({STALE: "stable x"}, ("side", f"{IMAGE}@{OLD}"))
    assert pin_findings(operators, lookups, {}, RefreshMode.PIN) == {STALE: f"stable {NEW}"}


def test_the_pending_marker_reads_back_what_was_written() -> None:
    marker = PendingRestart({"runner": NEW, "aside": OLD}, "2026-11-30T12:00:00.000001Z")
    text = marker.text()
    assert text == (
        f'{{"target": {{"aside": "{OLD}", "runner": "{NEW}"}}, '
        '"stamp": "2026-11-30T12:00:00.000001Z"}'
    )
    assert PendingRestart.read({PENDING: text}) == marker
    for broken in (
        "",
        "{",
        "[]",
        '{"target": {}}',
        '{"stamp": "s"}',
        '{"target": 3, "stamp": "s"}',
    ):
        assert PendingRestart.read({PENDING: broken} if broken else {}) is None
