"""refresh never loses its own restart while the update it started stands unfinished.

A StatefulSet and a DaemonSet have no progress deadline (apps/v1 StatefulSetSpec and
DaemonSetSpec have no progressDeadlineSeconds), nor has a Deployment whose deadline is
2147483647 (pkg/controller/deployment/util/deployment_util.go `HasProgressDeadline`): their
controllers wait for a new copy that never becomes Ready for as long as it takes
(pkg/controller/statefulset/stateful_set_control.go `processReplica`, "waiting for Pod to be
Running and Ready"; pkg/controller/daemon/update.go `rollingUpdate`), and `kubectl rollout
status` waits with them (pkg/polymorphichelpers/rollout_status.go `StatefulSetStatusViewer`,
`DaemonSetStatusViewer`). refresh bounds its own wait on such an update by what only the
update moves (a whole `--rollout-timeout` in which no old copy was replaced, or for a
Deployment no new copy became available: rollout-failed, counted, then latched) and
tells its own stopped update from someone else's by its record of its latest restart. These
tests hold that the record survives every way a failed restart is left: the tag moved back to
the recorded image, a restart back to it that stopped too (a copy of the other image left, or
every copy on the tag's image and one never Ready), and a restart marked only by its pending
marker; and that while it stands, the copies that restart made count their crashes, seen
between two of them or not.

Through the CLI, against the fake API server (the rollout simulator plays the controllers)
and a real docker-registry.
"""

import json
from typing import Any

import pytest

from tests.scenario import test_refresh_kinds
from tests.scenario.test_refresh import RefreshEnv
from tests.scenario.test_refresh_unsettled import _without_deadline
from tests.support.kubectl import kubectl
from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from truegreen.refresh.annotations import (
    ATTEMPTS,
    PENDING,
    RECORDED_DIGEST,
    RESTARTED,
    PendingRestart,
    container_key,
)
from truegreen.refresh.plan import target_id
from truegreen.refresh.template import RESTARTED_AT

NS = "train"
NODES = ("node-1", "node-2")
RUNNER = container_key(RECORDED_DIGEST, "runner")
KINDS = ("StatefulSet", "DaemonSet", "Deployment")
LAST_UNREADY = {
    "StatefulSet": "last-unready",
    "DaemonSet": "last-unready",
    "Deployment": "deadline",
}
"""Each kind's update stopped at a copy that runs and never becomes Ready (a readiness probe
that keeps failing): the last one a StatefulSet or DaemonSet replaces; a Deployment's new copy,
beside the old one it keeps while no new copy is available (rolling.go)."""
FIRST_UNREADY = {"StatefulSet": "unready", "DaemonSet": "unready", "Deployment": "deadline"}
"""Each kind's update stopped at its first new copy, which runs and never becomes Ready (a
readiness probe that keeps failing), while every other copy still runs the old digest."""
FAILED = ("Warning", "RefreshRolloutFailed")
STOOD = {
    "StatefulSet": "no old copy was replaced",
    "DaemonSet": "no old copy was replaced",
    "Deployment": "no new copy became available",
}
"""What did not happen in a whole wait on each kind's stopped update (steps.py
`UpdatePosition`)."""

env = test_refresh_kinds.env
"""The fake API server and a real registry, a replaced copy terminating for one read."""


def _install(env: RefreshEnv, kind: str) -> None:
    """`db` of `kind`, opted in, its copies running what the tag names now. The StatefulSet's
    copies are managed in parallel (podManagementPolicy Parallel), so that its controller
    replaces a copy that never became Ready when its template changes again, as the
    simulator does (stateful_set_control.go `updateStatefulSet` deletes the highest copy not on
    the update revision); with OrderedReady `processReplica` waits for that copy first, and
    someone must delete it by hand (the StatefulSet documentation's "forced rollback")."""
    image = env.image("r/own", "stable")
    if kind == "StatefulSet":
        workload = statefulset("db", container("runner", image), replicas=2)
        workload["spec"]["podManagementPolicy"] = "Parallel"
        env.simulator.settle(workload, nodes=NODES)
    elif kind == "DaemonSet":
        env.simulator.settle(daemonset("db", container("runner", image)), nodes=NODES)
    else:
        env.install(deployment("db", container("runner", image)))
        _without_deadline(env, "db")


def _tick(env: RefreshEnv, *args: str) -> tuple[dict[str, Any], int]:
    """One tick's report of `db`, and its exit code."""
    result = env.tick("--max-attempts", "2", *args)
    (found,) = result.json()["workloads"]
    return found, result.exit_code


def _annotations(env: RefreshEnv, kind: str) -> dict[str, str]:
    stored = env.server.get_object(kind, "db", NS)
    assert stored is not None
    return dict(stored["metadata"].get("annotations") or {})


def _pods_run(env: RefreshEnv) -> list[tuple[str, bool]]:
    """(digest of its runner, Ready) of each of db's copies that stays, sorted."""
    return sorted((digest, ready) for _, digest, ready in test_refresh_kinds._pods_run(env, "db"))


def _events(env: RefreshEnv, kind: str) -> list[tuple[str, str]]:
    return test_refresh_kinds._events(env, kind, "db")


def _stopped(env: RefreshEnv, kind: str, *args: str) -> dict[str, Any]:
    """Ticks (with `args`) until refresh's restart has failed, its wait resumed from its marker
    while the update still moved (the controller replaced a copy during the restart's own
    wait): the report of the first, the tick that made the restart. The last found the update
    stopped."""
    reports = []
    for _ in range(3):
        found, code = _tick(env, "--rollout-timeout", "1", *args)
        assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
        reports.append(found)
        if PENDING not in _annotations(env, kind):
            break
    assert reports[-1]["reason"].startswith(f"the update stopped: {STOOD[kind]} in a whole ")
    env.simulator.finish_terminating()  # the controller reaches the copy it stops at
    return reports[0]


def _stopped_toward_a_moved_tag(
    env: RefreshEnv, kind: str
) -> tuple[str, str, list[tuple[str, str]]]:
    """`db` on the tag's first image, recorded; the tag moves and refresh's restart toward the
    new image stops at its last new copy, which runs and never becomes Ready. The first image,
    the moved one, and the Events so far."""
    first = env.registry.push_image("r/own", "stable", content="v1")
    _install(env, kind)
    assert _tick(env)[0]["outcome"] == "converged"
    moved = env.registry.push_image("r/own", "stable", content="v2")
    env.simulator.behaviour["db"] = LAST_UNREADY[kind]
    _stopped(env, kind)
    annotations = _annotations(env, kind)
    assert annotations[RUNNER] == first
    assert PendingRestart.read(annotations, RESTARTED) is not None
    assert (moved, False) in _pods_run(env)
    failures = _events(env, kind)
    assert set(failures) == {FAILED}
    return first, moved, failures


@pytest.mark.parametrize("kind", KINDS)
def test_a_tag_moved_back_while_refresh_s_restart_stands_stopped_is_restarted_not_converged(
    env: RefreshEnv, kind: str
) -> None:
    """refresh restarts `db` toward the tag's new image, whose last new copy never becomes
    Ready: the restart fails (its counts stood still a whole --rollout-timeout). The image's
    owner moves the tag back to the image recorded before. The copies do not run it: the
    update refresh started stands stopped in the template, its copies on the other image. That
    is no "converged", and refresh must not forget its restart then: with its record cleared,
    the update no controller will ever call stopped read as someone else's, in progress, and
    every later move of the tag was left alone forever. The restart that brings the copies
    back to the tag is verified, recorded and announced."""
    first, moved, failures = _stopped_toward_a_moved_tag(env, kind)
    assert env.registry.push_image("r/own", "stable", content="v1") == first
    env.simulator.behaviour["db"] = "ok"  # the image that worked still works
    found, code = _tick(env, "--rollout-timeout", "30")
    assert (found["outcome"], found["reason"], code) == (
        "restarted",
        "rolled out and verified: the pods run the newest digest",
        0,
    )
    (plan,) = found["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "restart",
        f"its last restart, toward {moved[:19]}…, never finished; the tag is back on the "
        f"recorded {first[:19]}…",
    )
    copies = 1 if kind == "Deployment" else 2
    assert _pods_run(env) == [(first, True)] * copies
    annotations = _annotations(env, kind)
    assert annotations[RUNNER] == first
    assert {ATTEMPTS, PENDING, RESTARTED} & annotations.keys() == set()
    assert _events(env, kind) == [*failures, ("Normal", "ImageRefreshed")]

    newest = env.registry.push_image("r/own", "stable", content="v3")
    found, code = _tick(env, "--rollout-timeout", "30")
    assert (found["outcome"], code) == ("restarted", 0), found["reason"]
    assert _annotations(env, kind)[RUNNER] == newest


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet"])
def test_a_restart_back_to_the_tag_that_stops_too_is_retried_and_latched_not_converged(
    env: RefreshEnv, kind: str
) -> None:
    """refresh's restart toward the tag's new image stops at its last new copy, and the tag
    moves back to the image recorded before: refresh restarts back toward it. That restart
    stops too, at its first new copy, which runs the recorded image and never becomes Ready,
    while a copy still runs the other image. Its record now names the tag's own image, and the
    next tick said `converged` ("every tracked image runs its newest digest") and cleared it,
    with copies on the other image and not Ready. A restart of refresh's own that no record
    closed, with a copy not on the tag's image, is retried, counted and latched like any
    other; the record stays, so a later move of the tag is still refresh's to restart."""
    first, moved, _ = _stopped_toward_a_moved_tag(env, kind)
    assert env.registry.push_image("r/own", "stable", content="v1") == first
    env.simulator.behaviour["db"] = FIRST_UNREADY[kind]  # the copy back on it never Ready
    restarts = env.restarts("db")
    (plan,) = _stopped(env, kind)["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "restart",
        f"its last restart, toward {moved[:19]}…, never finished; the tag is back on the "
        f"recorded {first[:19]}…",
    )
    back = PendingRestart.read(_annotations(env, kind), RESTARTED)
    assert back is not None
    assert dict(back.target) == {"runner": first}
    assert _annotations(env, kind)[ATTEMPTS] == f"1 {target_id(back.target)}"
    assert (first, False) in _pods_run(env)
    assert (moved, False) in _pods_run(env)

    found = _stopped(env, kind)
    (plan,) = found["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "restart",
        f"its last restart, toward {first[:19]}…, which the tag names, never finished: a "
        "copy does not run it",
    )
    assert found["writes"][0]["step"] == "restart"
    assert env.restarts("db") == restarts + 2
    annotations = _annotations(env, kind)
    assert annotations[ATTEMPTS] == f"2 {target_id(back.target)}"
    assert annotations[RUNNER] == first

    for _ in range(2):
        found, code = _tick(env, "--rollout-timeout", "1")
        assert (found["outcome"], code) == ("latched", 0), found["reason"]
    assert env.restarts("db") == restarts + 2
    annotations = _annotations(env, kind)
    assert PendingRestart.read(annotations, RESTARTED) is not None
    assert annotations[RUNNER] == first
    assert _events(env, kind)[-1] == ("Warning", "RefreshLatched")

    env.simulator.behaviour["db"] = "ok"
    newest = env.registry.push_image("r/own", "stable", content="v3")
    found, code = _tick(env, "--rollout-timeout", "30")
    assert (found["outcome"], code) == ("restarted", 0), found["reason"]
    assert _annotations(env, kind)[RUNNER] == newest


@pytest.mark.parametrize("kind", KINDS)
def test_a_restart_back_whose_copies_all_run_the_tag_but_one_never_ready_is_not_converged(
    env: RefreshEnv, kind: str
) -> None:
    """refresh's restart back to the recorded image replaces every copy of the other image,
    but its last new copy (a Deployment's new copy, beside the old one it keeps while no new
    copy is available) runs the recorded image and never becomes Ready. Every copy runs the
    tag's image, so nothing is restarted; but the update refresh started stands unfinished.
    The next tick does not say `converged` nor clear the record of the restart (a later move
    of the tag would find the unfinished update someone else's: `in-progress` for ever). The
    copies are waited for, the failure counted, then latched; the record stays."""
    first, _, _ = _stopped_toward_a_moved_tag(env, kind)
    assert env.registry.push_image("r/own", "stable", content="v1") == first
    env.simulator.behaviour["db"] = LAST_UNREADY[kind]
    (plan,) = _stopped(env, kind)["containers"]
    assert plan["decision"] == "restart"
    assert _pods_run(env) == [(first, False), (first, True)]
    restarts = env.restarts("db")

    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert found["reason"].startswith("the pods run the newest digest, but timed out after 1s")
    (plan,) = found["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "record-running",
        f"the pods run the newest digest, but its last restart, toward {first[:19]}…, was "
        "never verified: recorded once they are healthy",
    )
    assert [w["step"] for w in found["writes"]] == ["count"]
    assert _annotations(env, kind)[ATTEMPTS] == f"2 {target_id({'runner': first})}"
    for _ in range(2):
        found, code = _tick(env, "--rollout-timeout", "1")
        assert (found["outcome"], code) == ("latched", 0), found["reason"]
    assert env.restarts("db") == restarts
    annotations = _annotations(env, kind)
    assert PendingRestart.read(annotations, RESTARTED) is not None
    assert annotations[RUNNER] == first

    env.simulator.behaviour["db"] = "ok"
    newest = env.registry.push_image("r/own", "stable", content="v3")
    found, code = _tick(env, "--rollout-timeout", "30")
    assert (found["outcome"], code) == ("restarted", 0), found["reason"]
    assert _annotations(env, kind)[RUNNER] == newest


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet"])
def test_in_pin_mode_a_pin_back_to_the_tag_that_stops_too_is_counted_and_latched_not_converged(
    env: RefreshEnv, kind: str
) -> None:
    """With --mode pin: refresh pins `db` to the tag's new image, whose last new copy never
    becomes Ready; the tag moves back and refresh pins the recorded image again, whose first
    new copy never becomes Ready either, beside a copy of the other image. The next tick
    does not say `converged` nor clear the record of the pin (every later tick would take the
    stopped update for someone else's: `in-progress` for ever). The template already pins the tag's
    image, so a restart would replace nothing: the copies are waited for, the failure counted,
    then latched; the record stays, and a later move of the tag is pinned."""
    pin = ("--mode", "pin")
    first = env.registry.push_image("r/own", "stable", content="v1")
    _install(env, kind)
    assert _tick(env, *pin)[0]["outcome"] == "converged"
    moved = env.registry.push_image("r/own", "stable", content="v2")
    env.simulator.behaviour["db"] = LAST_UNREADY[kind]
    _stopped(env, kind, *pin)
    assert env.registry.push_image("r/own", "stable", content="v1") == first
    env.simulator.behaviour["db"] = FIRST_UNREADY[kind]
    (plan,) = _stopped(env, kind, *pin)["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "restart",
        f"pinned {moved[:19]}… is not the newest",  # the template's pin is what runs
    )
    assert (first, False) in _pods_run(env)
    assert (moved, False) in _pods_run(env)
    restarts = env.restarts("db")

    found, code = _tick(env, "--rollout-timeout", "1", *pin)
    assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    (plan,) = found["containers"]
    assert (plan["decision"], plan["reason"]) == (
        "record-running",
        f"its last restart, toward {first[:19]}…, which the tag names, never finished: a "
        "copy does not run it, and the template already pins it",
    )
    assert [w["step"] for w in found["writes"]] == ["count"]
    assert _annotations(env, kind)[ATTEMPTS] == f"2 {target_id({'runner': first})}"
    for _ in range(2):
        found, code = _tick(env, "--rollout-timeout", "1", *pin)
        assert (found["outcome"], code) == ("latched", 0), found["reason"]
    assert env.restarts("db") == restarts
    annotations = _annotations(env, kind)
    assert PendingRestart.read(annotations, RESTARTED) is not None
    assert annotations[RUNNER] == first

    env.simulator.behaviour["db"] = "ok"
    newest = env.registry.push_image("r/own", "stable", content="v3")
    found, code = _tick(env, "--rollout-timeout", "30", *pin)
    assert (found["outcome"], code) == ("restarted", 0), found["reason"]
    assert _annotations(env, kind)[RUNNER] == newest


@pytest.mark.parametrize(
    ("kind", "how", "behaviour", "decision"),
    [
        ("StatefulSet", ("rollout", "restart"), "stall", "up-to-date"),
        ("DaemonSet", ("rollout", "restart"), "stall", "up-to-date"),
        ("Deployment", ("rollout", "restart"), "deadline", "up-to-date"),
        # refresh's stamp stays in the template: its plan alone would act.
        ("Deployment", ("set", "env"), "deadline", "record-running"),
    ],
    ids=["statefulset", "daemonset", "deployment", "deployment-set-env"],
)
def test_someone_else_s_update_after_refresh_s_restart_back_stopped_is_left_alone(
    env: RefreshEnv, kind: str, how: tuple[str, str], behaviour: str, decision: str
) -> None:
    """refresh's restart back to the recorded image stopped, its record kept. The operator then
    updates the workload themselves, its new copies taking their time: `kubectl rollout
    restart` (a stamp of its own), or `kubectl set env` on a Deployment, which keeps refresh's
    stamp in the template (its copies left on older templates differ from it by more than
    refresh's restart: updates.py `own_update`). The update under way is someone else's: left
    alone, nothing written, no restart over it, where refresh's own would be retried. (A
    StatefulSet's or DaemonSet's template change that keeps refresh's stamp cannot be told
    from refresh's own restart: their older templates are ControllerRevisions, which refresh
    does not read.)"""
    first, _, _ = _stopped_toward_a_moved_tag(env, kind)
    assert env.registry.push_image("r/own", "stable", content="v1") == first
    env.simulator.behaviour["db"] = FIRST_UNREADY[kind]
    _stopped(env, kind)
    env.simulator.behaviour["db"] = behaviour
    change = ["MODE=train"] if how[0] == "set" else []
    updated = kubectl(env.kubeconfig, "-n", NS, *how, f"{kind.lower()}/db", *change)
    assert updated.returncode == 0, updated.stderr
    restarts, annotations = env.restarts("db"), _annotations(env, kind)
    for _ in range(2):
        found, code = _tick(env, "--rollout-timeout", "1")
        assert (code, found["outcome"], found["reason"]) == (
            0,
            "in-progress",
            "a rollout is in progress; not touching it",
        )
        assert found["writes"] == []
        (plan,) = found["containers"]
        assert plan["decision"] == decision
    assert env.restarts("db") == restarts
    assert _annotations(env, kind) == annotations


@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_restart_marked_only_by_its_marker_stays_refresh_s_own(
    env: RefreshEnv, kind: str
) -> None:
    """A restart refresh made before it kept a record of its latest restart
    (`truegreen.io/refresh-restarted`) is marked by its pending marker alone. Its first new copy
    never becomes Ready while the others still run the old digest, and the tick that waits on
    it calls it failed and clears the marker. The marker becomes the record then: without one,
    the stopped update no controller will ever call stopped read as someone else's, in
    progress, and was never retried, counted or latched."""
    first = env.registry.push_image("r/own", "stable", content="v1")
    _install(env, kind)
    assert _tick(env)[0]["outcome"] == "converged"
    newest = env.registry.push_image("r/own", "stable", content="v2")
    env.simulator.behaviour["db"] = FIRST_UNREADY[kind]
    marker = PendingRestart({"runner": newest}, "2026-01-01T00:00:00.000000Z")
    restart = {
        "metadata": {
            "annotations": {PENDING: marker.text(), ATTEMPTS: f"1 {target_id(marker.target)}"}
        },
        "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: marker.stamp}}}},
    }
    patched = kubectl(
        env.kubeconfig, "-n", NS, "patch", kind.lower(), "db", "--type", "merge", "-p",
        json.dumps(restart),
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr
    env.simulator.finish_terminating()  # the controller stopped at its first new copy
    assert _pods_run(env) == sorted([(newest, False), (first, True)])
    assert RESTARTED not in _annotations(env, kind)

    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("rollout-failed", 2)
    assert found["reason"].startswith(f"the update stopped: {STOOD[kind]} in a whole ")
    assert [(w["step"], w["annotations"]) for w in found["writes"]] == [
        ("clear-pending", {PENDING: None, RESTARTED: marker.text()})
    ]
    assert _annotations(env, kind)[RESTARTED] == marker.text()

    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert found["writes"][0]["step"] == "restart"
    for _ in range(2):  # its wait resumed from the marker while the counts still moved
        if PENDING not in _annotations(env, kind):
            break
        found, code = _tick(env, "--rollout-timeout", "1")
        assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert _annotations(env, kind)[ATTEMPTS].startswith("2 ")
    found, code = _tick(env, "--rollout-timeout", "1")
    assert (found["outcome"], code) == ("latched", 0)
    assert _annotations(env, kind)[RUNNER] == first
    assert _events(env, kind)[-1] == ("Warning", "RefreshLatched")


def _install_one(env: RefreshEnv, kind: str) -> None:
    """`db` of `kind` with one copy, opted in, running what the tag names now: a StatefulSet of
    one, a DaemonSet on one machine, a Deployment replaced with `strategy: Recreate` (its copy
    holds the machine's GPU: the old copy stops before the new one starts), so that a restart
    leaves only its new copy."""
    image = env.image("r/own", "stable")
    if kind == "StatefulSet":
        env.simulator.settle(statefulset("db", container("runner", image)))
    elif kind == "DaemonSet":
        env.simulator.settle(daemonset("db", container("runner", image)))
    else:
        workload = deployment("db", container("runner", image))
        workload["spec"]["strategy"] = {"type": "Recreate"}
        env.install(workload)


@pytest.mark.parametrize(
    ("mode", "recorded"),
    [("restart", False), ("pin", False), ("pin", True)],
    ids=["restart-first-run", "pin-first-run", "pin-recorded"],
)
@pytest.mark.parametrize("kind", KINDS)
def test_a_crash_loop_seen_between_two_crashes_after_refresh_s_restart_failed_is_never_recorded(
    env: RefreshEnv, kind: str, mode: str, recorded: bool
) -> None:
    """refresh restarts `db`'s only copy toward the tag's new image, which crashes on start:
    the tick sees it wait in CrashLoopBackOff, calls the restart failed and clears its marker.
    A later tick finds the copy in one of its runs between two crashes: running, Ready (no
    readiness probe: prober_manager.go `UpdatePodStatus`), restartCount 4, the run that ended
    in lastState, and its controller calling the rollout complete. With nothing recorded
    before, or with refresh's own pin on the new image (`--mode pin`), nothing is left to
    restart: the pods already run the newest digest. The copy was made by refresh's restart,
    which no verified record closed, so each of its restarts came after it: that is a failed
    rollout, counted, then latched; the crashing image is never recorded and the flap guard's
    count never wiped."""
    first = env.registry.push_image("r/own", "stable", content="v1")
    _install_one(env, kind)
    if recorded:
        assert _tick(env, "--mode", mode)[0]["outcome"] == "converged"
    crashing = env.registry.push_image("r/own", "stable", content="v2")
    env.simulator.behaviour["db"] = "crash"
    found, code = _tick(env, "--mode", mode)
    assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert "keeps crashing (CrashLoopBackOff)" in found["reason"]
    env.simulator.finish_terminating()
    annotations = _annotations(env, kind)
    assert (PENDING in annotations, RESTARTED in annotations) == (False, True)

    env.simulator.between_crashes(kind, "db", restarts=4)
    assert _pods_run(env) == [(crashing, True)], "precondition: its one copy runs it, Ready"
    found, code = _tick(env, "--mode", mode)
    assert (found["outcome"], code) == ("rollout-failed", 2), found["reason"]
    assert [c["decision"] for c in found["containers"]] == ["record-running"]
    assert "crashed and was started again" in found["reason"]
    assert "restartCount 4, last exit code 1)" in found["reason"]
    annotations = _annotations(env, kind)
    assert annotations.get(RUNNER) == (first if recorded else None)
    assert annotations[ATTEMPTS].startswith("2 ")
    assert RESTARTED in annotations

    env.simulator.between_crashes(kind, "db", restarts=5)
    found, code = _tick(env, "--mode", mode)
    assert (found["outcome"], code) == ("latched", 0), found["reason"]
    assert _annotations(env, kind).get(RUNNER) == (first if recorded else None)
    assert _events(env, kind) == [FAILED, FAILED, ("Warning", "RefreshLatched")]
