"""doctor/knowledge/gangs.py: which scheduler places a pod, which group it belongs to, which
running pod is a scheduler's own, and what a Volcano PodGroup and Queue say."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import msgspec
import pytest

from truegreen.cluster import Kind
from truegreen.doctor.knowledge import gangs as g
from truegreen.doctor.knowledge.gangs import SchedulerPods, SchedulerPodView
from truegreen.doctor.knowledge.scheduler_name import schedulers_named
from truegreen.quantity import Resources


def test_only_schedulers_other_than_the_cluster_s_own_are_named() -> None:
    specs = [{}, {"schedulerName": "default-scheduler"}, {"schedulerName": "volcano"}]
    assert schedulers_named([*specs, {"schedulerName": "volcano"}]) == ("volcano",)
    assert schedulers_named([{}, {"schedulerName": ""}]) == ()


@pytest.mark.parametrize(
    ("metadata", "ref"),
    [
        ({"annotations": {"scheduling.k8s.io/group-name": "a"}}, (Kind.VOLCANO_POD_GROUP, "a")),
        ({"labels": {"scheduling.x-k8s.io/pod-group": "b"}}, (Kind.COSCHEDULING_POD_GROUP, "b")),
        ({"annotations": {"pod-group-name": "c"}}, (Kind.KAI_POD_GROUP, "c")),
        ({"labels": {"scheduling.k8s.io/group-name": "d"}}, None),
    ],
)
def test_the_group_a_pod_names(metadata: dict[str, dict[str, str]], ref: object) -> None:
    found = g.gang_of({"metadata": metadata})
    assert (None if found is None else (found.kind, found.name)) == ref


def test_each_group_once_in_order() -> None:
    pods = [{"metadata": {"annotations": {"scheduling.k8s.io/group-name": n}}} for n in "abab"]
    assert [r.name for r in g.gangs_of(pods)] == ["a", "b"]


def test_the_pods_volcano_counts_toward_min_member() -> None:
    """All of the group's pods but the failed and those being deleted (job_info.go
    `ValidTaskNum`: Succeeded counts; helpers.go `getTaskStatus`: deleted is `Releasing`)."""

    def pod(group: str, phase: str, deleted: bool = False) -> dict[str, Any]:
        metadata: dict[str, Any] = {"annotations": {"scheduling.k8s.io/group-name": group}}
        if deleted:
            metadata["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return {"metadata": metadata, "status": {"phase": phase}}

    pods = [
        pod("a", "Pending"),
        pod("a", "Running"),
        pod("a", "Succeeded"),
        pod("a", "Failed"),
        pod("a", "Running", deleted=True),
        pod("b", "Pending"),
    ]
    assert g.counted_members(pods, g.GangRef(Kind.VOLCANO_POD_GROUP, "a")) == 3


@pytest.mark.parametrize(
    ("name", "identity"),
    [
        ("volcano", "volcano-scheduler"),
        ("yunikorn", "yunikorn-scheduler"),
        ("kai-scheduler", "kai-scheduler"),
        ("scheduler-plugins-scheduler", "scheduler-plugins-scheduler"),
    ],
)
def test_a_scheduler_s_own_pods_carry_its_name(name: str, identity: str) -> None:
    assert g.scheduler_identity(name) == identity


def _view(name: str, namespace: str = "ns", **labels: str) -> SchedulerPodView:
    return SchedulerPodView(
        metadata=g._Metadata(name=name, namespace=namespace, labels=labels),
        status=g._Status(phase="Running"),
    )


def test_the_fold_finds_a_scheduler_by_pod_name_or_label_value() -> None:
    fold = SchedulerPods(["volcano", "yunikorn", "kai-scheduler"])
    for view in (
        _view("volcano-admission-5d7f-x2", "volcano-system", app="volcano-admission"),
        _view("yunikorn-admission-controller-1", "yunikorn", app="yunikorn"),
        _view("volcanoscheduler-1"),
        _view("kai-scheduler-default-7c9-abc", "kai-scheduler"),
        _view("sched-0", "yunikorn", component="yunikorn-scheduler"),
        _view("volcano-scheduler-94998fc64-86hzn", "volcano-system"),
        _view("volcano-scheduler-94998fc64-zzzzz", "volcano-system"),
    ):
        fold.add(view)
    assert fold.name == "schedulers-kai-scheduler-volcano-yunikorn"
    assert fold.summary() == {
        "running": {
            "kai-scheduler": "kai-scheduler/kai-scheduler-default-7c9-abc",
            "volcano": "volcano-system/volcano-scheduler-94998fc64-86hzn",
            "yunikorn": "yunikorn/sched-0",
        },
        "down": {},
    }
    assert g.schedulers_running(fold.summary()) == fold.summary()["running"]
    assert g.schedulers_running({"running": ["volcano"]}) is None


def test_a_pod_a_scheduler_judged() -> None:
    assert not g.looked_at({"spec": {}, "status": {"phase": "Pending"}})
    assert g.looked_at({"spec": {"nodeName": "m"}})
    assert g.looked_at({"status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}})


def test_a_volcano_pod_group() -> None:
    group = g.pod_group(
        {
            "metadata": {"name": "job"},
            "spec": {"minMember": 4, "minResources": {"nvidia.com/gpu": "8"}},
            "status": {
                "phase": "Inqueue",
                "conditions": [
                    {"type": "Unschedulable", "status": "False", "message": "old"},
                    {"type": "Scheduled", "status": "True", "reason": "ready"},
                    {"type": "Unschedulable", "status": "True", "reason": "R", "message": "m"},
                ],
            },
        }
    )
    assert group == g.PodGroupState(
        "job",
        False,
        "Inqueue",
        4,
        "default",
        Resources.parse({"nvidia.com/gpu": "8"}),
        (g.GroupCondition("Unschedulable", "R", "m"),),
    )
    bare = g.pod_group({"metadata": {"name": "x"}, "spec": {"queue": "q", "minResources": {}}})
    assert (bare.phase, bare.queue, bare.min_resources, bare.failing) == ("Pending", "q", None, ())
    assert g.pod_group({"spec": {"minResources": {"cpu": "lots"}}}).min_resources is None
    assert [g.pod_group({"status": {"phase": p}}).placed for p in ("Running", "Completed")] == [
        True,
        True,
    ]
    assert not g.pod_group({"status": {"phase": "Unknown"}}).placed


def test_a_coscheduling_pod_group_says_only_its_phase() -> None:
    group = g.coscheduling_pod_group(
        {"metadata": {"name": "c"}, "spec": {"minMember": 3}, "status": {"phase": "Scheduling"}}
    )
    assert group == g.PodGroupState("c", False, "Scheduling", 3, "", None, ())
    assert g.coscheduling_pod_group({"status": {"phase": "Finished"}}).placed
    assert g.coscheduling_pod_group({"status": {"phase": "Running"}}).placed
    assert g.coscheduling_pod_group({}).phase == "Pending"


def test_a_kai_pod_group_and_its_scheduling_conditions() -> None:
    """v2alpha2 podgroup_types.go: `schedulingConditions` of type UnschedulableOnNodePool with
    `reasons` (reason, message); the deprecated `message` where there are none."""
    group = g.kai_pod_group(
        {
            "metadata": {"name": "k"},
            "spec": {"minMember": 2, "queue": "team"},
            "status": {
                "running": 1,
                "schedulingConditions": [
                    {"type": "UnschedulableOnNodePool", "status": "False", "message": "old"},
                    {
                        "type": "UnschedulableOnNodePool",
                        "nodePool": "default",
                        "reason": "Unschedulable",
                        "reasons": [
                            {"reason": "OverLimit", "message": "over the queue's limit"},
                            {"reason": "Other", "message": "no room"},
                        ],
                    },
                    {"type": "UnschedulableOnNodePool", "status": "True", "message": "m"},
                ],
            },
        }
    )
    assert group == g.PodGroupState(
        "k",
        False,
        "",
        2,
        "team",
        None,
        (
            g.GroupCondition(
                "UnschedulableOnNodePool",
                "Unschedulable",
                "OverLimit: over the queue's limit; Other: no room",
                ("OverLimit", "Other"),
            ),
            g.GroupCondition("UnschedulableOnNodePool", "", "m"),
        ),
    )
    assert g.kai_pod_group({"spec": {"minMember": 2}, "status": {"running": 2}}).placed
    assert not g.kai_pod_group({"status": {"running": 2}}).placed


def test_a_volcano_queue_and_what_it_caps() -> None:
    queue = g.volcano_queue(
        {"metadata": {"name": "q"}, "spec": {"capability": {"nvidia.com/gpu": "4"}}}
    )
    assert queue == g.QueueState("q", "Open", Resources.parse({"nvidia.com/gpu": "4"}))
    assert g.volcano_queue({"status": {"state": "Closed"}}).state == "Closed"
    wanted = Resources.parse({"nvidia.com/gpu": "8", "cpu": "100"})
    assert queue.capability is not None
    assert g.beyond(wanted, queue.capability) == ["nvidia.com/gpu"]
    assert g.beyond(Resources.parse({"nvidia.com/gpu": "4"}), queue.capability) == []


def _kai(name: str, parent: str = "", **resources: dict[str, float]) -> dict[str, object]:
    spec: dict[str, object] = {"resources": resources} if resources else {}
    if parent:
        spec["parentQueue"] = parent
    return {"metadata": {"name": name}, "spec": spec}


def test_a_kai_queue_s_limits_in_doctor_s_units() -> None:
    """GPUs in devices, CPU in millicores, memory in megabytes of 10^6 bytes; -1 and 0 and
    none stated cap nothing that is judged (docs/queues/README.md)."""
    queue = g.kai_queue(
        _kai(
            "team-a",
            "default",
            gpu={"quota": 2, "limit": 4.5},
            cpu={"quota": 2000, "limit": 4000},
            memory={"quota": 4096, "limit": 8192},
        )
    )
    assert queue.parent == "default"
    assert dict(queue.limits) == {
        "nvidia.com/gpu": Decimal("4.5"),
        "cpu": Decimal(4000),
        "memory": Decimal(8_192_000_000),
    }
    unlimited = g.kai_queue(_kai("x", gpu={"limit": -1}, cpu={"limit": 0}, memory={"quota": 1}))
    assert unlimited.limits == ()
    assert g.kai_queue(_kai("bare")).limits == ()


def test_a_kai_queue_chain_follows_parents_and_stops_at_a_loop() -> None:
    queues = [g.kai_queue(q) for q in (_kai("root"), _kai("a", "root"), _kai("b", "a"))]
    chain = g.kai_chain("b", queues)
    assert ([q.name for q in chain.queues], chain.missing, chain.children) == (
        ["b", "a", "root"],
        "",
        (),
    )
    assert g.kai_chain("a", queues).children == ("b",)
    assert g.kai_chain("nowhere", queues).missing == "nowhere"
    orphan = g.kai_chain("c", [*queues, g.kai_queue(_kai("c", "gone"))])
    assert (orphan.missing, [q.name for q in orphan.queues]) == ("gone", ["c"])
    looped = [g.kai_queue(_kai("x", "y")), g.kai_queue(_kai("y", "x"))]
    assert not g.kai_chain("x", looped).judged


def test_over_a_kai_limit_is_strictly_more_than_it() -> None:
    queue = g.kai_queue(_kai("q", gpu={"limit": 8}))
    assert g.over_limit(Resources.of({"nvidia.com/gpu": 8}), queue) == []
    assert g.over_limit(Resources.of({"nvidia.com/gpu": 9}), queue) == [
        ("nvidia.com/gpu", Decimal(8))
    ]


def _pod_view(name: str, status: dict[str, Any]) -> SchedulerPodView:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "volcano-system"},
            "status": {"phase": "Running", **status},
        },
        SchedulerPodView,
    )


CRASH_LOOPING = {
    "containerStatuses": [
        {"ready": False, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    ]
}


def test_a_scheduler_pod_that_does_not_run_its_program_is_down_until_one_runs() -> None:
    """A crash-looping replica is down; a replica whose scheduler runs beside a crash-looping
    sidecar, or that has not yet passed its readiness check, runs."""
    fold = SchedulerPods(["volcano"])
    fold.add(_pod_view("volcano-scheduler-a", CRASH_LOOPING))
    assert fold.summary() == {
        "running": {},
        "down": {
            "volcano": {
                "pod": "volcano-system/volcano-scheduler-a",
                "reason": "CrashLoopBackOff",
                "restarts": 1,
            }
        },
    }
    (down,) = g.schedulers_down(fold.summary()).values()
    assert down.state == "CrashLoopBackOff, restarted 1 time"
    sidecar = {
        "containerStatuses": [
            {"ready": True, "state": {"running": {}}},
            *CRASH_LOOPING["containerStatuses"],
        ]
    }
    fold.add(_pod_view("volcano-scheduler-b", sidecar))
    assert fold.summary() == {
        "running": {"volcano": "volcano-system/volcano-scheduler-b"},
        "down": {},
    }
    starting = SchedulerPods(["volcano"])
    starting.add(
        _pod_view(
            "volcano-scheduler-c",
            {"containerStatuses": [{"ready": False, "state": {"running": {}}}]},
        )
    )
    assert g.schedulers_running(starting.summary()) == {
        "volcano": "volcano-system/volcano-scheduler-c"
    }
    assert g.schedulers_down({"running": {}}) == {}  # a snapshot from before the fold looked
    assert g.schedulers_down({"running": {}, "down": {"volcano": "x: y"}}) == {}  # not its shape


def test_a_pending_scheduler_pod_is_down_unless_its_scheduler_runs() -> None:
    """The kubelet keeps a pod Pending while any container waits, even beside one that runs
    (kubelet_pods.go `getPhase`): a Pending pod whose scheduler runs beside a sidecar pulling
    its image runs; one with nothing running is down, with the waiting reason or its phase. A
    pod in phase Unknown (its node stopped reporting) counts neither way."""
    pulling = {"ready": False, "state": {"waiting": {"reason": "ImagePullBackOff"}}}
    beside = SchedulerPods(["volcano"])
    beside.add(
        _pod_view(
            "volcano-scheduler-a",
            {
                "phase": "Pending",
                "containerStatuses": [{"ready": True, "state": {"running": {}}}, pulling],
            },
        )
    )
    assert beside.summary() == {
        "running": {"volcano": "volcano-system/volcano-scheduler-a"},
        "down": {},
    }
    pending = SchedulerPods(["volcano"])
    pending.add(_pod_view("volcano-scheduler-b", {"phase": "Pending"}))
    pending.add(
        _pod_view("volcano-scheduler-c", {"phase": "Pending", "containerStatuses": [pulling]})
    )
    assert pending.summary()["down"] == {
        "volcano": {"pod": "volcano-system/volcano-scheduler-b", "reason": "Pending", "restarts": 0}
    }
    pulled = SchedulerPods(["volcano"])
    pulled.add(
        _pod_view("volcano-scheduler-c", {"phase": "Pending", "containerStatuses": [pulling]})
    )
    assert g.schedulers_down(pulled.summary())["volcano"].reason == "ImagePullBackOff"
    unknown = SchedulerPods(["volcano"])
    unknown.add(_pod_view("volcano-scheduler-d", {"phase": "Unknown"}))
    assert unknown.summary() == {"running": {}, "down": {}}


def test_a_scheduler_pod_s_waiting_reason_is_one_bounded_escaped_line() -> None:
    fold = SchedulerPods(["volcano"])
    reason = "\x1b[2J" + "x" * 500
    fold.add(
        _pod_view(
            "volcano-scheduler-a",
            {"containerStatuses": [{"ready": False, "state": {"waiting": {"reason": reason}}}]},
        )
    )
    (down,) = g.schedulers_down(fold.summary()).values()
    assert "\x1b" not in down.reason
    assert len(down.reason) == 128


def test_a_kai_queue_s_holding_in_doctor_s_units() -> None:
    """`status.allocated` in Kubernetes quantities: CPU in cores becomes millicores, memory
    stays in bytes, a GPU may be a fraction of a device; a resource left out holds nothing."""
    queue = _kai("q", gpu={"limit": 8})
    queue["status"] = {"allocated": {"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": "500m"}}
    assert g.kai_queue(queue).held == (
        ("nvidia.com/gpu", Decimal("0.5")),
        ("cpu", Decimal(1500)),
        ("memory", Decimal(2 * 1024**3)),
    )
    queue["status"] = {}
    assert g.kai_queue(queue).held == (
        ("nvidia.com/gpu", Decimal(0)),
        ("cpu", Decimal(0)),
        ("memory", Decimal(0)),
    )
    for bad in ("lots", True, [1], None):
        queue["status"] = {"allocated": {"cpu": bad}}
        assert g.kai_queue(queue).held is None, bad
    queue["status"] = {"allocated": {"cpu": 2}}
    assert dict(g.kai_queue(queue).held or ())["cpu"] == Decimal(2000)


def test_a_kai_queue_is_full_now_only_past_its_limit_beside_what_it_holds() -> None:
    """max_allowed_check.go `isOverLimit`: `MaxAllowed < Allocated + requested`, and a
    resource the job does not ask for is skipped."""
    queue = _kai("q", gpu={"limit": 8}, cpu={"limit": 1000})
    queue["status"] = {"allocated": {"nvidia.com/gpu": "6", "cpu": "2"}}
    read = g.kai_queue(queue)
    assert g.full_now(Resources.of({"nvidia.com/gpu": 2}), read) == []
    assert g.full_now(Resources.of({"nvidia.com/gpu": 3}), read) == [
        ("nvidia.com/gpu", Decimal(8), Decimal(6))
    ]
    # CPU is already past its limit, but the job asks for none of it
    assert g.full_now(Resources.of({"nvidia.com/gpu": 1}), read) == []
    queue["status"] = {"allocated": {"cpu": "lots"}}
    assert g.full_now(Resources.of({"nvidia.com/gpu": 30}), g.kai_queue(queue)) == []


def test_a_minute_unjudged_is_the_measurement_and_a_second_less_is_not() -> None:
    """`waited_unjudged`: some pod of the job exists `UNJUDGED_SECONDS` (60) or longer."""
    now = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)

    def pod(age: float) -> dict[str, Any]:
        created = (now - timedelta(seconds=age)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"metadata": {"creationTimestamp": created}}

    assert g.UNJUDGED_SECONDS == 60
    assert g.waited_unjudged([pod(59), pod(60)], now)
    assert not g.waited_unjudged([pod(59), {"metadata": {}}], now)
    assert not g.waited_unjudged([], now)
    assert {"volcano", "yunikorn", "kai-scheduler"} == g.SEPARATE_SCHEDULERS


def test_only_kai_s_over_limit_reasons_leave_the_verdict_to_the_queue_s_arithmetic() -> None:
    """`OverLimit` alone says a queue limit holds the job back; with any other reason beside
    it, or with no reasons of its own, KAI's word stands as it is."""

    def said(*reasons: str) -> g.GroupCondition:
        return g.GroupCondition("UnschedulableOnNodePool", "Unschedulable", "m", reasons)

    assert g.over_limit_only(said("OverLimit"))
    assert g.over_limit_only(said("OverLimit", "OverLimit"))
    assert not g.over_limit_only(said("OverLimit", "Other"))
    assert not g.over_limit_only(said())
