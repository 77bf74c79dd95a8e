"""What a tick's steps decide of StatefulSets and DaemonSets: their kind, when one is someone
else's rollout, an OnDelete update strategy refused, and health by kubectl's rules for the kind
(pkg/polymorphichelpers/rollout_status.go)."""

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.refresh_kit import container, daemonset, deployment, statefulset
from tests.unit.test_refresh_updates import (
    STAMP,
    env_set,
    kubectl_restart,
    mid_update,
    restarted,
)
from truegreen.images import parse_image
from truegreen.refresh.annotations import PENDING, RESTARTED, PendingRestart
from truegreen.refresh.plan import ContainerPlan, Decision, RefreshMode
from truegreen.refresh.report import Outcome
from truegreen.refresh.steps import (
    Action,
    Ending,
    Health,
    Look,
    decide,
    idle,
    kind_of,
    look,
    look_again,
    observe,
    restart_refusal,
    rolling,
    skip,
    stops_unsaid,
    update_position,
)
from truegreen.refresh.template import RESTARTED_AT

Obj = dict[str, Any]
IMAGE = "registry.example.com/team/db:stable"
NEW = "sha256:" + "1" * 64
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
ON_DELETE = Ending(
    Outcome.REFUSED,
    "a restart would change nothing: its pods take a new version only when deleted "
    "(updateStrategy OnDelete); delete them to take it, or set updateStrategy "
    "RollingUpdate",
)


def _plan() -> ContainerPlan:
    return ContainerPlan(
        "db",
        IMAGE,
        "stable",
        NEW,
        None,
        (),
        Decision.RESTART,
        "",
        parse_image(IMAGE),
        frozenset({NEW}),
    )


def _with(workload: Obj, **status: Any) -> Obj:
    workload["metadata"]["generation"] = 2
    workload["status"] = {"observedGeneration": 2, **status}
    return workload


def _pod() -> Obj:
    return {
        "metadata": {"name": "db-0"},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-04T11:00:00Z"}
            ],
            "containerStatuses": [{"name": "db", "imageID": f"{IMAGE}@{NEW}", "ready": True}],
        },
    }


def test_the_kind_is_the_workloads_own_and_a_deployment_when_it_says_none() -> None:
    assert kind_of(statefulset("db")) == "StatefulSet"
    assert kind_of(daemonset("agent")) == "DaemonSet"
    assert kind_of(deployment("web")) == "Deployment"
    assert kind_of({"metadata": {"name": "web"}}) == "Deployment"


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
def test_an_update_under_way_is_someone_else_s_unless_it_is_refresh_s_latest_restart(
    make: Any,
) -> None:
    """Neither controller has a progress deadline (stateful_set_control.go, daemon/update.go):
    nothing will say an update stopped. One kubectl calls unfinished
    (polymorphichelpers/rollout_status.go: "Waiting for partitioned roll out to finish",
    "Waiting for daemon set ... rollout to finish") is someone else's, left alone, unless the
    template carries refresh's latest restart (its record, RESTARTED): then it is refresh's
    own, still rolling or stopped, and the table decides (retried, bounded by the flap
    guard)."""
    under_way = _with(
        make("x", replicas=1) if make is statefulset else make("x"),
        readyReplicas=1,
        updatedReplicas=0,
        currentRevision="x-1",
        updateRevision="x-2",
        desiredNumberScheduled=1,
        updatedNumberScheduled=0,
        numberAvailable=1,
    )
    in_progress = Ending(Outcome.IN_PROGRESS, "a rollout is in progress; not touching it")
    assert rolling(under_way, []) is True
    assert skip(under_way, [], None) == in_progress
    ours = PendingRestart({"db": NEW}, STAMP)
    under_way["metadata"]["annotations"] = {RESTARTED: ours.text()}
    assert rolling(under_way, []) is True, "the record alone: the template carries no restart"
    restarted(under_way["spec"]["template"])
    assert rolling(under_way, []) is False
    assert skip(under_way, [], None) is None
    # A marker left before the record was written is refresh's latest restart too.
    under_way["metadata"]["annotations"] = {PENDING: ours.text()}
    assert rolling(under_way, []) is False
    # Not picked up yet: someone else's, whatever the template carries.
    under_way["status"]["observedGeneration"] = 1
    assert rolling(under_way, []) is True
    # A copy of the update that crash-loops (a StatefulSet's at its updateRevision; a
    # DaemonSet's, with no template generation to tell them by, any): a failed rollout,
    # whoever made it; the table decides.
    under_way["status"]["observedGeneration"] = 2
    under_way["metadata"]["annotations"] = {}
    crashing = {"waiting": {"reason": "CrashLoopBackOff"}}
    labels = {"controller-revision-hash": "x-2"}
    pod = {
        "metadata": {"name": "x-0", "labels": labels},
        "status": {"containerStatuses": [{"state": crashing}]},
    }
    assert rolling(under_way, [pod]) is False


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
def test_copies_short_of_ready_with_no_update_under_way_are_the_tables(make: Any) -> None:
    """kubectl waits for a copy that stopped being ready ("Waiting for 1 pods to be ready", "N
    of M updated pods are available"), but no update is under way (`updating`): the tick
    judges the copies, never "in progress" for as long as one stays unready. OnDelete has no
    rollout for kubectl to judge ("rollout status is only available for RollingUpdate")."""
    settled = _with(
        make("x", replicas=2) if make is statefulset else make("x"),
        readyReplicas=1,
        updatedReplicas=2,
        currentRevision="x-2",
        updateRevision="x-2",
        desiredNumberScheduled=2,
        updatedNumberScheduled=2,
        numberAvailable=1,
    )
    assert rolling(settled, []) is False
    on_delete = _on_delete(
        _with(make("x"), updatedReplicas=0, desiredNumberScheduled=1, updatedNumberScheduled=0)
    )
    assert rolling(on_delete, []) is False


def test_paused_is_a_deployments_word_only() -> None:
    paused = _with(statefulset("db"), updatedReplicas=1)
    paused["spec"]["paused"] = True
    assert skip(paused, [], None) is None
    web = deployment("web")
    web["spec"]["paused"] = True
    assert skip(web, [], None) == Ending(Outcome.PAUSED, "the Deployment is paused")


@pytest.mark.parametrize("make", [statefulset, daemonset], ids=["statefulset", "daemonset"])
def test_on_delete_is_refused_in_either_mode(make: Any) -> None:
    workload = make("x", container("db", IMAGE))
    assert restart_refusal(workload, [_plan()], RefreshMode.RESTART, "") is None
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    for mode in RefreshMode:
        assert restart_refusal(workload, [_plan()], mode, "") == ON_DELETE
    # A registry near its limit is said first: it holds every restart, whatever the workload.
    held = restart_refusal(workload, [_plan()], RefreshMode.RESTART, "held")
    assert held == Ending(Outcome.COULD_NOT_CHECK, "held")


def test_a_deployment_has_no_update_strategy_to_refuse() -> None:
    web = deployment("web", container("db", IMAGE))
    web["spec"]["updateStrategy"] = {"type": "OnDelete"}  # not a Deployment field: ignored
    assert restart_refusal(web, [_plan()], RefreshMode.PIN, "") is None


def test_a_partition_is_refused_only_above_zero_and_only_for_a_statefulset() -> None:
    db = statefulset("db", container("db", IMAGE), replicas=3)
    db["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert restart_refusal(db, [_plan()], RefreshMode.RESTART, "") is None
    db["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 2
    refused = restart_refusal(db, [_plan()], RefreshMode.PIN, "")
    assert refused is not None
    assert refused.outcome is Outcome.REFUSED
    assert refused.reason.startswith("a restart would replace only the copies numbered 2 and up")
    web = deployment("web", container("db", IMAGE))
    web["spec"]["updateStrategy"] = {"rollingUpdate": {"partition": 2}}  # not a Deployment field
    assert restart_refusal(web, [_plan()], RefreshMode.RESTART, "") is None


def test_no_copies_is_read_from_replicas_or_a_current_daemonset_status() -> None:
    idle = Ending(
        Outcome.PAUSED,
        "scaled to zero copies (replicas 0): nothing to restart until it runs again",
    )
    db = statefulset("db", container("db", IMAGE), replicas=0)
    assert restart_refusal(db, [_plan()], RefreshMode.RESTART, "") == idle
    db["spec"].pop("replicas")  # the API's default is one copy
    assert restart_refusal(db, [_plan()], RefreshMode.RESTART, "") is None
    agent = _with(daemonset("agent", container("db", IMAGE)), desiredNumberScheduled=0)
    nowhere = restart_refusal(agent, [_plan()], RefreshMode.RESTART, "")
    assert nowhere == Ending(
        Outcome.PAUSED, "no machine runs it (0 scheduled): nothing to restart until one does"
    )
    agent["status"]["observedGeneration"] = 1  # the controller has not seen this template
    assert restart_refusal(agent, [_plan()], RefreshMode.RESTART, "") is None
    unread = _with(daemonset("agent", container("db", IMAGE)))  # no count written yet
    assert restart_refusal(unread, [_plan()], RefreshMode.RESTART, "") is None
    # A registry near its limit is said first.
    db["spec"]["replicas"] = 0
    held = restart_refusal(db, [_plan()], RefreshMode.RESTART, "held")
    assert held == Ending(Outcome.COULD_NOT_CHECK, "held")


@pytest.mark.parametrize(
    "action",
    [Action.RECORD, Action.FAIL, Action.FAIL_AND_COUNT, Action.WAIT, Action.STOP_WAITING],
)
def test_no_copies_leaves_alone_every_verdict_on_the_pods(action: Action) -> None:
    """With no copy no pod was looked at: kubectl calls a rollout of none complete
    (rollout_status.go `DeploymentStatusViewer.Status`), and the table's verdicts on the pods
    (a record, a failure, a wait) would rest on nothing measured."""
    web = deployment("web", container("db", IMAGE))
    web["spec"]["replicas"] = 0
    assert idle(web, action) == Ending(
        Outcome.PAUSED, "scaled to zero copies (replicas 0): nothing to verify until it runs again"
    )
    db = statefulset("db", container("db", IMAGE), replicas=0)
    assert idle(db, action) == Ending(
        Outcome.PAUSED, "scaled to zero copies (replicas 0): nothing to verify until it runs again"
    )
    agent = _with(daemonset("agent", container("db", IMAGE)), desiredNumberScheduled=0)
    assert idle(agent, action) == Ending(
        Outcome.PAUSED, "no machine runs it (0 scheduled): nothing to verify until one does"
    )
    # With copies, or a DaemonSet whose controller has not seen this template, the table acts.
    assert idle(deployment("web", container("db", IMAGE)), action) is None
    agent["status"]["observedGeneration"] = 1
    assert idle(agent, action) is None


@pytest.mark.parametrize("action", [Action.NOTHING, Action.LATCH, Action.RESTART])
def test_no_copies_leaves_to_the_table_what_judges_no_pod(action: Action) -> None:
    """NOTHING and LATCH rest on the annotations alone; RESTART has its own refusal, said in
    its words (`restart_refusal`)."""
    db = statefulset("db", container("db", IMAGE), replicas=0)
    assert idle(db, action) is None


@pytest.mark.parametrize(
    ("workload", "health", "detail"),
    [
        (
            _with(statefulset("db", replicas=1), readyReplicas=1, updatedReplicas=0),
            Health.STARTING,
            "0 of 1 copies updated",
        ),
        (
            _with(statefulset("db", replicas=1), readyReplicas=1, updatedReplicas=1),
            Health.HEALTHY,
            "",
        ),
        (
            _with(daemonset("agent"), desiredNumberScheduled=1, updatedNumberScheduled=1),
            Health.STARTING,
            "0 of 1 copies available",
        ),
        (
            _with(
                daemonset("agent"),
                desiredNumberScheduled=1,
                updatedNumberScheduled=1,
                numberAvailable=1,
            ),
            Health.HEALTHY,
            "",
        ),
    ],
    ids=["sts-updating", "sts-done", "ds-unavailable", "ds-done"],
)
def test_health_is_kubectls_verdict_for_the_kind(
    workload: Obj, health: Health, detail: str
) -> None:
    observed = observe(workload, [_pod()], [_plan()], None, NOW)
    assert (observed.health, observed.detail) == (health, detail)


def _on_delete(workload: Obj) -> Obj:
    workload["spec"]["updateStrategy"] = {"type": "OnDelete"}
    return workload


@pytest.mark.parametrize(
    ("workload", "health", "detail"),
    [
        (
            _on_delete(_with(statefulset("db", replicas=3), replicas=1, readyReplicas=1)),
            Health.STARTING,
            "1 of 3 copies ready",
        ),
        (
            _on_delete(_with(statefulset("db", replicas=1), replicas=1, readyReplicas=1)),
            Health.HEALTHY,
            "",
        ),
        (
            {
                **_on_delete(_with(statefulset("db", replicas=1), readyReplicas=1)),
                "status": {"readyReplicas": 1},
            },
            Health.STARTING,
            "waiting for the update to be picked up",
        ),
        (
            _on_delete(_with(daemonset("agent"), desiredNumberScheduled=3, numberAvailable=1)),
            Health.STARTING,
            "1 of 3 copies available",
        ),
        (
            _on_delete(_with(daemonset("agent"), desiredNumberScheduled=3, numberAvailable=3)),
            Health.HEALTHY,
            "",
        ),
    ],
    ids=["sts-short", "sts-whole", "sts-unobserved", "ds-short", "ds-whole"],
)
def test_an_on_delete_workload_is_healthy_only_with_every_copy_its_controller_counts(
    workload: Obj, health: Health, detail: str
) -> None:
    """kubectl declines OnDelete ("rollout status is only available for RollingUpdate strategy
    type", pkg/polymorphichelpers/rollout_status.go); the controllers still count the copies
    they keep (stateful_set_control.go `computeReplicaStatus`: readyReplicas against
    spec.replicas; daemon_controller.go `updateDaemonSetStatus`: numberAvailable against
    desiredNumberScheduled), and a missing copy is no verified rollout."""
    observed = observe(workload, [_pod()], [_plan()], None, NOW)
    assert (observed.health, observed.detail) == (health, detail)


MARKER = PendingRestart({"db": NEW}, "2026-12-04T11:00:00.000000Z")
OLD_STAMP = "2026-11-01T00:00:00.000000Z"


def _copy(place: str, *, made: bool, uid: str, ready: bool = True, kind: str = "DaemonSet") -> Obj:
    """A copy at `place` (a DaemonSet's machine, a StatefulSet's pod name): made by MARKER's
    restart (its template stamp) or by an earlier template."""
    pod = _pod()
    pod["metadata"] = {
        "name": place if kind == "StatefulSet" else f"agent-{place}-{uid}",
        "uid": uid,
        "annotations": {RESTARTED_AT: MARKER.stamp if made else OLD_STAMP},
    }
    pod["spec"] = {"nodeName": place} if kind == "DaemonSet" else {}
    pod["status"]["conditions"][0]["status"] = "True" if ready else "False"
    return pod


def _stopped_after(
    workload: Obj,
    before: list[Obj],
    after: list[Obj],
    *,
    timed_out: bool = True,
    from_start: bool = True,
) -> Look:
    """The look at the end of a wait on MARKER's restart that began with `before` (its update's
    position taken then, unless not `from_start`)."""
    plans = [_plan()]
    first = look(workload, before, plans, max_attempts=3, now=NOW)
    since = update_position(workload, before, MARKER, NOW) if from_start else None
    return look_again(
        first, workload, after, plans, now=NOW, timed_out=timed_out, marker=MARKER, since=since
    )


def _agent() -> Obj:
    return _with(
        daemonset("agent"),
        desiredNumberScheduled=2,
        currentNumberScheduled=2,
        numberAvailable=1,
        updatedNumberScheduled=1,
    )


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet"])
def test_an_update_that_replaced_no_old_copy_in_a_whole_wait_has_stopped(kind: str) -> None:
    """A StatefulSet's or DaemonSet's controller stops at a new pod that is not healthy and has
    no progress deadline (stateful_set_control.go `updateStatefulSet`, daemon/update.go
    `rollingUpdate`; only a Deployment has progressDeadlineSeconds): a whole --rollout-timeout
    in which no old copy was replaced by the restart's fails the rollout, as a passed deadline
    does."""
    if kind == "StatefulSet":
        workload = _with(
            statefulset("db", replicas=2), replicas=2, readyReplicas=1, updatedReplicas=1
        )
        places, progress = ("db-1", "db-0"), "1 of 2 copies ready"
    else:
        workload, places, progress = _agent(), ("node-1", "node-2"), "1 of 2 copies updated"
    stuck = _copy(places[0], made=True, uid="n1", ready=False, kind=kind)
    old = _copy(places[1], made=False, uid="o2", kind=kind)
    stopped = _stopped_after(workload, [stuck, old], [stuck, old])
    assert (stopped.situation.health, stopped.observation.detail) == (
        Health.FAILING,
        f"the update stopped: no old copy was replaced in a whole --rollout-timeout ({progress})",
    )
    assert decide(stopped.situation) is Action.FAIL
    replaced = _copy(places[1], made=True, uid="n2", ready=False, kind=kind)
    moved = _stopped_after(workload, [stuck, old], [stuck, replaced])
    assert decide(moved.situation) is Action.STOP_WAITING
    # The old copy on its way out, its replacement made: the update moved on too.
    leaving = _copy(places[1], made=False, uid="o2", kind=kind)
    leaving["metadata"]["deletionTimestamp"] = "2026-12-04T11:59:00Z"
    surged = _stopped_after(workload, [stuck, leaving, replaced], [stuck, replaced])
    assert decide(surged.situation) is Action.STOP_WAITING
    # Not yet timed out, or nothing to compare (no restart under way): the table's own rows.
    assert decide(
        _stopped_after(workload, [stuck, old], [stuck, old], timed_out=False).situation
    ) is (Action.WAIT)
    assert decide(
        _stopped_after(workload, [stuck, old], [stuck, old], from_start=False).situation
    ) is (Action.STOP_WAITING)
    assert update_position(workload, [stuck, old], None, NOW) is None


def test_machines_that_join_or_leave_are_no_progress_of_a_daemonset_s_update() -> None:
    """daemon_controller.go `updateDaemonSetStatus` counts per machine, and a machine that
    joins gets its copy from the current template (`syncNodes`): desired, current and updated
    counts rise while the update stands at its copy that is never Ready (daemon/update.go
    `rollingUpdate` waits within maxUnavailable), and fall as machines leave. Only an old copy
    replaced where it ran is the update moving on."""
    agent = _agent()
    stuck = _copy("node-1", made=True, uid="n1", ready=False)
    old = _copy("node-2", made=False, uid="o2")
    joined = _copy("node-3", made=True, uid="n3")
    gone = _stopped_after(agent, [stuck, old], [stuck, joined])  # node-2 left, node-3 joined
    assert gone.situation.health is Health.FAILING
    assert decide(gone.situation) is Action.FAIL
    # A copy the controller made before the scheduler bound it: its machine is the one its
    # node affinity names (daemon/util `GetTargetNodeName`).
    unbound = _copy("node-2", made=True, uid="n2")
    unbound["spec"] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["node-2"]}
                            ]
                        }
                    ]
                }
            }
        }
    }
    assert decide(_stopped_after(agent, [stuck, old], [stuck, unbound]).situation) is (
        Action.STOP_WAITING
    )


def _no_deadline(seconds: Any) -> Obj:
    web = _with(deployment("web"), replicas=2, updatedReplicas=1, readyReplicas=1)
    web["spec"]["progressDeadlineSeconds"] = seconds
    return web


def test_a_deployment_with_no_progress_deadline_stopped_when_no_new_copy_became_available() -> None:
    """deployment_util.go `HasProgressDeadline`: progressDeadlineSeconds MaxInt32 is no deadline,
    so its controller never writes ProgressDeadlineExceeded. Its copies have no place, and an
    autoscaler resizes its old and new ReplicaSets together (sync.go `scale`), moving its
    counts while the update stands; rolling.go scales the old ReplicaSets down only as the new
    one's copies become available. A whole --rollout-timeout in which none of the restart's
    copies became available is the verdict the deadline would give. With a deadline (the API
    server's default 600, apps/v1 defaults.go `SetDefaults_Deployment`, when absent) the
    controller says it, and nothing is compared."""
    assert (stops_unsaid(_no_deadline(2147483647)), stops_unsaid(_no_deadline(600))) == (
        True,
        False,
    )
    assert stops_unsaid(deployment("web")) is False
    assert (stops_unsaid(statefulset("db")), stops_unsaid(daemonset("agent"))) == (True, True)
    assert update_position(_no_deadline(600), [_pod()], MARKER, NOW) is None
    endless = _no_deadline(2147483647)
    new = _copy("web-new", made=True, uid="n1", ready=False, kind="Deployment")
    old = _copy("web-old", made=False, uid="o1", kind="Deployment")
    # An autoscaler added a copy to each ReplicaSet: neither new copy became available.
    scaled = [
        new,
        old,
        _copy("web-new2", made=True, uid="n2", ready=False, kind="Deployment"),
        _copy("web-old2", made=False, uid="o2", kind="Deployment"),
    ]
    stopped = _stopped_after(endless, [new, old], scaled)
    assert (stopped.situation.health, stopped.observation.detail) == (
        Health.FAILING,
        "the update stopped: no new copy became available in a whole --rollout-timeout "
        "(1 old copies still stopping)",
    )
    assert decide(stopped.situation) is Action.FAIL
    started = _copy("web-new", made=True, uid="n1", kind="Deployment")
    assert decide(_stopped_after(endless, [new, old], [started, old]).situation) is (
        Action.STOP_WAITING
    )


@pytest.mark.parametrize("kind", ["StatefulSet", "DaemonSet"])
def test_readiness_that_flaps_is_no_progress_of_the_update(kind: str) -> None:
    """A copy whose readiness probe passes and fails by turns moves the ready and available
    counts both ways (stateful_set_control.go `computeReplicaStatus`, daemon_controller.go
    `updateDaemonSetStatus`) while the update stands where it stopped: no old copy replaced."""
    if kind == "StatefulSet":
        workload = _with(
            statefulset("db", replicas=2), replicas=2, readyReplicas=1, updatedReplicas=1
        )
        places = ("db-1", "db-0")
    else:
        workload, places = _agent(), ("node-1", "node-2")
    flapping = [
        _copy(places[0], made=True, uid="n1", ready=ready, kind=kind) for ready in (False, True)
    ]
    old = _copy(places[1], made=False, uid="o2", kind=kind)
    for before, after in (flapping, flapping[::-1]):
        since = update_position(workload, [before, old], MARKER, NOW)
        assert since is not None
        assert not since.moved(update_position(workload, [after, old], MARKER, NOW))


def test_a_deployment_with_no_progress_deadline_is_someone_else_s_rollout_unless_refresh_s() -> (
    None
):
    """Fewer updated copies than desired is a rollout under way, as kubectl says ("Waiting for
    deployment ... rollout to finish", polymorphichelpers/rollout_status.go), until the
    controller says it stopped (ProgressDeadlineExceeded). With no deadline it never will
    (deployment_util.go `HasProgressDeadline`): an update that is refresh's latest restart (its
    record, RESTARTED, and the copies on older templates differing by that restart alone) is
    left to the table and its flap guard; `kubectl rollout restart` (another stamp) or any
    other change is someone else's; a copy that crash-loops is a failed rollout either way."""
    ours = {RESTARTED: PendingRestart({"runner": "sha256:" + "4" * 64}, STAMP).text()}
    for change, annotations, someone_else_s in (
        (restarted, ours, False),
        (restarted, {}, True),
        (kubectl_restart, ours, True),
        (env_set, ours, True),
    ):
        web, pods, replica_sets = mid_update(change)
        web = _with(web, replicas=4, updatedReplicas=1)
        web["metadata"]["annotations"] = dict(annotations)
        web["spec"]["replicas"] = 4
        assert rolling(web, pods, replica_sets) is True  # a deadline: in progress until it says
        web["spec"]["progressDeadlineSeconds"] = 2147483647
        assert rolling(web, pods, replica_sets) is someone_else_s
        assert (skip(web, pods, None, replica_sets) is None) is not someone_else_s
        # Every copy updated, the old ones still running ("old replicas are pending
        # termination"): the same verdict.
        web["status"] |= {"replicas": 7, "updatedReplicas": 4}
        assert rolling(web, pods, replica_sets) is someone_else_s
        web["status"] |= {"replicas": 4, "updatedReplicas": 1}
        crashing = {"containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
        pods[-1]["status"] |= crashing
        assert rolling(web, pods, replica_sets) is False
        web["status"]["observedGeneration"] = 1  # not picked up yet: someone else's
        assert rolling(web, pods, replica_sets) is True


def test_a_deployment_with_a_deadline_is_in_progress_until_its_controller_says_otherwise() -> None:
    """kubectl's three ways of "Waiting for deployment ... rollout to finish": fewer updated
    copies than desired, old copies pending termination, updated copies not all available. The
    controller says itself when its update stopped (ProgressDeadlineExceeded) or completed
    (NewReplicaSetAvailable, kept while copies come and go: progress.go `syncRolloutStatus`),
    so until then it is under way, whoever made it."""
    web = _with(deployment("web"), replicas=4, updatedReplicas=4, availableReplicas=4)
    web["spec"]["replicas"] = 4
    under_way = {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}
    for status in (
        {"updatedReplicas": 2},
        {"replicas": 5},
        {"availableReplicas": 3, "conditions": [under_way]},
    ):
        assert rolling({**web, "status": {**web["status"], **status}}, []) is True, status
    complete = {**under_way, "reason": "NewReplicaSetAvailable"}
    unavailable = {**web["status"], "availableReplicas": 3, "conditions": [complete]}
    assert rolling({**web, "status": unavailable}, []) is False
    stuck = {**under_way, "status": "False", "reason": "ProgressDeadlineExceeded"}
    assert rolling(
        {**web, "status": {**web["status"], "replicas": 5, "conditions": [stuck]}}, []
    ) is (False)
