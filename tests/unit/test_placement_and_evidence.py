"""Placing a job whole, and reading what the scheduler and the controllers wrote."""

import pytest

from truegreen.doctor.checks.capacity.placement import PodGroup, place
from truegreen.doctor.checks.capacity.scheduler_reasons import plain_reasons
from truegreen.doctor.knowledge.evidence import (
    AttachFailure,
    Cause,
    Obstacle,
    Reason,
    UnstatedSizes,
    attach_failures,
    cause_of,
    parse_scheduler_message,
    scheduler_verdict,
    unstated_sizes,
    waiting_to_attach,
)
from truegreen.doctor.knowledge.fit import MachineRoom
from truegreen.quantity import Resources

GPU = "nvidia.com/gpu"


def _room(name: str, gpus: int, *, used: int = 0, pods: int = 110) -> MachineRoom:
    return MachineRoom(
        name,
        Resources.of({GPU: gpus, "cpu": 64000}),
        pods,
        Resources.of({GPU: used}),
    )


def _group(count: int, gpus: int, machines: tuple[str, ...], name: str = "worker") -> PodGroup:
    return PodGroup(name, count, Resources.of({GPU: gpus, "cpu": 1000}), machines)


def test_every_pod_takes_its_room_before_the_next_is_placed() -> None:
    rooms = {"a": _room("a", 8), "b": _room("b", 8, used=4)}
    placement = place([_group(3, 4, ("a", "b"))], rooms)
    assert (placement.whole, placement.on) == (True, (("worker", "a", 2), ("worker", "b", 1)))
    too_many = place([_group(4, 4, ("a", "b"))], rooms)
    assert (too_many.placed, too_many.wanted, too_many.whole) == (3, 4, False)
    assert too_many.unplaced is not None
    assert too_many.unplaced.most_free == ("a", 0) or too_many.unplaced.most_free[1] == 0
    assert too_many.proven is True, "4 x 4 GPUs ask more than the 12 free in all"


def test_largest_pods_go_first_and_a_failure_that_another_packing_might_avoid_is_not_proven() -> (
    None
):
    rooms = {"a": _room("a", 6), "b": _room("b", 6)}
    # 4 + 4 + 2 + 2 fits (4+2, 4+2); placed smallest first it would not.
    groups = [_group(2, 2, ("a", "b"), "small"), _group(2, 4, ("a", "b"), "big")]
    placement = place(groups, rooms)
    assert placement.whole
    assert placement.on[0][0] == "big", "the largest pods first"
    tight = {"a": _room("a", 5), "b": _room("b", 5)}
    # 3 + 3 + 2 + 2 on two machines of 5: 3+2 and 3+2 fits; first-fit decreasing finds it.
    assert place([_group(2, 3, ("a", "b")), _group(2, 2, ("a", "b"), "s")], tight).whole
    # 3 + 3 + 3 on 5 + 5: fits nowhere whole, and 9 <= 10 free: not proven impossible.
    unsure = place([_group(3, 3, ("a", "b"))], tight)
    assert (unsure.whole, unsure.proven) == (False, False)


def test_a_pod_set_goes_only_where_its_rules_allow_and_within_its_cap() -> None:
    rooms = {"a": _room("a", 8), "b": _room("b", 8)}
    assert place([_group(2, 1, ("b",))], rooms).on == (("worker", "b", 2),)
    capped = PodGroup("w", 2, Resources.of({GPU: 1}), ("a", "b"), per_machine=1)
    assert place([capped], rooms).on == (("w", "a", 1), ("w", "b", 1))
    nowhere = place([_group(1, 1, ())], rooms)
    assert nowhere.unplaced is not None
    assert (nowhere.unplaced.machine, nowhere.proven) == ("", True)


def test_the_pod_limit_of_a_machine_counts() -> None:
    rooms = {"a": _room("a", 8, pods=1)}
    placement = place([_group(2, 1, ("a",))], rooms)
    assert placement.placed == 1


SCHEDULER = (
    "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint "
    "{node.kubernetes.io/unreachable: }, 1 node(s) had volume node affinity conflict, 2 node(s) "
    "didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No "
    "preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling."
)


def test_a_scheduler_message_is_read_as_its_reasons() -> None:
    machines, reasons = parse_scheduler_message(SCHEDULER)
    assert machines == 5
    assert [(r.machines, r.obstacle, r.detail) for r in reasons] == [
        (1, Obstacle.ROOM, GPU),
        (1, Obstacle.TAINT, "node.kubernetes.io/unreachable"),
        (1, Obstacle.VOLUME, ""),
        (2, Obstacle.PLACEMENT_RULES, ""),
    ]
    assert parse_scheduler_message("") == (None, ()), "no message, no reason"


def test_volcano_s_fit_errors_are_read_as_their_reasons() -> None:
    """volcano-sh/volcano pkg/scheduler/api/unschedule_info.go `FitErrors.Error`:
    `0/N nodes are unavailable: ` with the reasons sorted, or the set error `all nodes are
    unavailable` (no machine count) in front of them."""
    assert parse_scheduler_message(
        "0/3 nodes are unavailable: 1 node(s) resource fit failed, 3 Insufficient nvidia.com/gpu."
    ) == (
        3,
        (
            Reason(1, "node(s) resource fit failed", Obstacle.OTHER),
            Reason(3, f"Insufficient {GPU}", Obstacle.ROOM, GPU),
        ),
    )
    machines, reasons = parse_scheduler_message(
        "all nodes are unavailable: 2 Insufficient nvidia.com/gpu."
    )
    assert (machines, [(r.machines, r.obstacle) for r in reasons]) == (None, [(2, Obstacle.ROOM)])
    # No `0/N` in front: not a count of machines, so the whole message is the reason.
    odd = "1/3 nodes are unavailable: 2 Insufficient cpu."
    assert parse_scheduler_message(odd) == (None, (Reason(None, odd, Obstacle.OTHER),))


def test_a_prefilter_refusal_is_one_reason_of_every_machine_quoted_whole() -> None:
    """kube-scheduler's framework/types.go `FitError.Error`: `0/%v nodes are available:`, then
    ` %v.` with the PreFilter message and no filter's reasons (a PreFilter refusal holds every
    machine back); a Status's reasons are joined with ", " (framework Status.Message)."""
    said = "pod waits for a licence, 2 of 2 seats in use"
    assert parse_scheduler_message(
        f"0/3 nodes are available: {said}. preemption: 0/3 nodes are available: 3 Preemption "
        "is not helpful for scheduling."
    ) == (3, (Reason(3, said, Obstacle.OTHER),))
    assert parse_scheduler_message(
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."
    ) == (2, (Reason(2, "pod has unbound immediate PersistentVolumeClaims", Obstacle.OTHER),))
    assert parse_scheduler_message("0/2 nodes are available: .") == (2, ())
    # Volcano's `all nodes are unavailable: ` always counts its reasons: no count is made up.
    assert parse_scheduler_message("all nodes are unavailable: pod group is not ready.") == (
        None,
        (),
    )


@pytest.mark.parametrize(
    "said",
    [
        # kube-scheduler's Permit timeout (framework/runtime/waiting_pods_map.go
        # `newWaitingPod`), written whole by schedule_one.go `handleSchedulingFailure`.
        "rejected due to timeout after waiting 60s at plugin Coscheduling",
        # Its `ErrNoNodesAvailable` (schedule_one.go), reason Unschedulable too.
        "no nodes available to schedule pods",
        # Volcano's job fit error on a pod with none of its own (api/job_info.go
        # `TaskSchedulingReason`), up to v1.9 the gang plugin's, then `JobInfo.FitError()`.
        "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; "
        "Pending: 4 Unschedulable",
        "pod group is not ready, 4 Pending, 4 minAvailable; Pending: 4 Unschedulable",
    ],
    ids=["permit-timeout", "no-nodes", "volcano-gang", "volcano-fit-error"],
)
def test_a_message_that_counts_no_machines_is_the_scheduler_s_whole_reason(said: str) -> None:
    """With no `0/N nodes are available:` in front, nothing in the message counts machines:
    it is one reason, of no count, in the scheduler's words; and said so in plain words."""
    assert parse_scheduler_message(said) == (None, (Reason(None, said, Obstacle.OTHER),))
    pod = {
        "metadata": {"name": "p"},
        "spec": {},
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": said,
                }
            ]
        },
    }
    verdict = scheduler_verdict(pod)
    assert verdict is not None
    assert plain_reasons(verdict) == f"it said “{said}”"
    assert verdict.only_room is False


@pytest.mark.parametrize(
    ("text", "obstacle"),
    [
        ("0/2 nodes are available: 2 Too many pods.", Obstacle.ROOM),
        ("0/2 nodes are available: 2 node(s) were unschedulable.", Obstacle.CLOSED),
        (
            "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules.",
            Obstacle.POD_RULES,
        ),
        (
            "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints.",
            Obstacle.SPREAD,
        ),
        (
            "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod "
            "ports.",
            Obstacle.PORTS,
        ),
        (
            "0/2 nodes are available: 2 pod has unbound immediate PersistentVolumeClaims.",
            Obstacle.VOLUME,
        ),
        ("0/2 nodes are available: 2 cannot allocate all claims.", Obstacle.DEVICES),
        (
            "0/2 nodes are available: 2 node(s) had taint {dedicated: infra}, that the pod "
            "didn't tolerate.",
            Obstacle.TAINT,
        ),
        ("0/2 nodes are available: 2 node(s) had untolerated taint(s).", Obstacle.TAINT),
        (
            "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same "
            "name and ReadWriteOncePod access mode.",
            Obstacle.VOLUME_IN_USE,
        ),
        (
            "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.",
            Obstacle.NO_FREE_VOLUME,
        ),
        (
            "0/2 nodes are available: 2 node(s) had volume node affinity conflict.",
            Obstacle.VOLUME,
        ),
        (
            "0/2 nodes are available: 2 node(s) didn't satisfy existing pods anti-affinity rules.",
            Obstacle.OTHERS_RULES,
        ),
        (
            "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.",
            Obstacle.POD_RULES,
        ),
    ],
)
def test_each_plugin_s_reason_is_known(text: str, obstacle: Obstacle) -> None:
    _, (reason,) = parse_scheduler_message(text)
    assert reason.obstacle is obstacle


def test_the_reasons_in_plain_words() -> None:
    pod = {
        "metadata": {"name": "p"},
        "spec": {},
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": SCHEDULER,
                }
            ]
        },
    }
    verdict = scheduler_verdict(pod)
    assert verdict is not None
    assert plain_reasons(verdict) == (
        "of 5 machines, 1 lacks nvidia.com/gpu, 1 can't be reached, 1 can't reach its data volume "
        "and 2 are outside the job's placement rules"
    )
    assert verdict.only_room is False
    bound = {**pod, "spec": {"nodeName": "a"}}
    assert scheduler_verdict(bound) is None, "a bound pod is placed"
    gated = {
        **pod,
        "status": {
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]
        },
    }
    assert scheduler_verdict(gated) is None, "gated pods were not tried"


_WAITING_FOR_VICTIM = (
    "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: not eligible due to a "
    "terminating pod on the nominated node."
)
"""kube-scheduler's words on a preemptor whose victim on its nominated machine still
terminates (defaultpreemption/default_preemption.go PodEligibleToPreemptOthers)."""


@pytest.mark.parametrize(
    ("nominated", "message", "preempting"),
    [
        ("gpu-1", _WAITING_FOR_VICTIM, True),
        ("", _WAITING_FOR_VICTIM, False),
        ("gpu-1", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", False),
        (None, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", False),
    ],
)
def test_a_preemption_under_way_is_a_nomination_the_scheduler_waits_on(
    nominated: str | None, message: str, preempting: bool
) -> None:
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    status: dict[str, object] = {"conditions": [{**condition, "message": message}]}
    if nominated is not None:
        status["nominatedNodeName"] = nominated
    verdict = scheduler_verdict({"metadata": {"name": "p"}, "spec": {}, "status": status})
    assert verdict is not None
    assert (verdict.nominated, verdict.preempting) == (nominated or "", preempting)


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        (
            'pods "x" is forbidden: exceeded quota: q, requested: cpu=4, used: cpu=0, '
            "limited: cpu=2",
            Cause.QUOTA,
        ),
        (
            'pods "x" is forbidden: minimum cpu usage per Pod is 2, but request is 1.',
            Cause.LIMIT_RANGE,
        ),
        (
            'pods "x" is forbidden: cpu max limit to request ratio per Container is 2, but '
            "provided ratio is 4.000000.",
            Cause.LIMIT_RANGE,
        ),
        # resourcequota controller.go checkRequest, pods.go Constraints; the older `Failed`.
        (
            'pods "x" is forbidden: failed quota: q: must specify limits.cpu for: a,b; '
            "limits.memory for: a",
            Cause.QUOTA_NEEDS_SIZES,
        ),
        (
            'pods "x" is forbidden: Failed quota: q: must specify cpu,memory',
            Cause.QUOTA_NEEDS_SIZES,
        ),
        ('admission webhook "deny.example.com" denied the request: no', Cause.WEBHOOK),
        # webhook errors.go ErrCallingWebhook, NewInternalError when failing closed: never
        # reached. The older form (no `failed to call webhook:`) and the detail-less one too.
        (
            'Internal error occurred: failed calling webhook "h": failed to call webhook: Post '
            '"https://h.system.svc:443/?timeout=10s": context deadline exceeded',
            Cause.WEBHOOK_DOWN,
        ),
        (
            'Internal error occurred: failed calling webhook "h": Post https://h.x.svc:443/',
            Cause.WEBHOOK_DOWN,
        ),
        (
            'Internal error occurred: failed calling webhook "h"; no further details available',
            Cause.WEBHOOK_DOWN,
        ),
        (
            'pods "x" is forbidden: violates PodSecurity "restricted:latest": privileged',
            Cause.POD_SECURITY,
        ),
        # apimachinery errors.NewInvalid: `%s %q is invalid: %v`, qualifiedKind.String().
        ('Pod "x" is invalid: spec.containers[0].image: Required value', Cause.INVALID),
        ("something else", Cause.OTHER),
    ],
)
def test_a_refused_create_s_cause_comes_from_the_server_s_words(message: str, cause: Cause) -> None:
    assert cause_of(message) is cause


_MULTI_ATTACH = (
    'Multi-Attach error for volume "pvc-0a1b" Volume is already exclusively attached to one node '
    "and can't be attached to another"
)


def _attach_event(uid: str, last_seen: str, message: str = _MULTI_ATTACH) -> dict[str, object]:
    """The attach-detach controller's Warning (pkg/controller/volume/attachdetach/reconciler/
    reconciler.go `reportMultiAttachError`), on the pod object it was attaching for."""
    return {
        "kind": "Event",
        "type": "Warning",
        "reason": "FailedAttachVolume",
        "message": message,
        "involvedObject": {"kind": "Pod", "name": "train-002-w0", "uid": uid},
        "lastTimestamp": last_seen,
    }


_POD = {
    "kind": "Pod",
    "metadata": {
        "name": "train-002-w0",
        "uid": "uid-new",
        "creationTimestamp": "2025-05-01T10:00:00Z",
    },
}


@pytest.mark.parametrize(
    ("event", "found"),
    [
        pytest.param(
            _attach_event("uid-new", "2025-05-01T10:02:00Z"),
            [AttachFailure("train-002-w0", _MULTI_ATTACH, True)],
            id="this-pod",
        ),
        pytest.param(
            _attach_event("", "2025-05-01T10:02:00Z", "AttachVolume.Attach failed: quota"),
            [AttachFailure("train-002-w0", "AttachVolume.Attach failed: quota", False)],
            id="no-uid-after-it-was-made",
        ),
        pytest.param(_attach_event("uid-old", "2025-05-01T10:02:00Z"), [], id="another-uid"),
        pytest.param(_attach_event("", "2025-05-01T09:20:00Z"), [], id="before-it-was-made"),
        pytest.param(
            _attach_event("uid-new", "2025-05-01T09:59:59Z"), [], id="same-uid-before-it-was-made"
        ),
    ],
)
def test_a_volume_that_would_not_attach_is_the_pod_s_only_if_the_event_is_about_it(
    event: dict[str, object], found: list[AttachFailure]
) -> None:
    """docs/evidence.md's history rule: an Event whose involvedObject.uid is not the pod's, or
    last seen before the pod was made, is about an earlier pod of that name."""
    assert attach_failures([event], [_POD]) == found


def test_the_newest_attach_failure_of_a_pod_is_the_one_said() -> None:
    older = _attach_event("uid-new", "2025-05-01T10:02:00Z", "AttachVolume.Attach failed: old")
    newer = _attach_event("uid-new", "2025-05-01T10:05:00Z")
    assert attach_failures([newer, older], [_POD]) == attach_failures([older, newer], [_POD])
    assert attach_failures([older, newer], [_POD]) == [
        AttachFailure("train-002-w0", _MULTI_ATTACH, True)
    ]


def test_only_a_pod_on_its_machine_that_does_not_run_waits_to_attach() -> None:
    """The kubelet starts no container before the pod's volumes are attached: a running pod
    got past its attach failures; one not on a machine, ended or being deleted waits for none."""

    def pod(name: str, phase: str, node: str = "gpu-1", **meta: str) -> dict[str, object]:
        return {
            "metadata": {"name": name, **meta},
            "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase},
        }

    pods = [
        pod("creating", "Pending"),
        pod("running", "Running"),
        pod("unplaced", "Pending", node=""),
        pod("ended", "Failed"),
        pod("leaving", "Pending", deletionTimestamp="2026-12-06T10:00:00Z"),
    ]
    assert [p["metadata"]["name"] for p in waiting_to_attach(pods)] == ["creating"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            'pods "x" is forbidden: failed quota: q: must specify limits.cpu for: a,b; '
            "limits.memory for: a",
            UnstatedSizes("q", ("limits.cpu", "limits.memory"), ("a", "b")),
        ),
        # Before the containers were named (`must specify %s` of the resources alone).
        (
            'pods "x" is forbidden: Failed quota: q: must specify cpu,memory',
            UnstatedSizes("q", ("cpu", "memory"), ()),
        ),
        ('pods "x" is forbidden: exceeded quota: q', None),
    ],
)
def test_the_sizes_a_quota_requires_are_read_from_its_words(
    message: str, expected: UnstatedSizes | None
) -> None:
    assert unstated_sizes(message) == expected
