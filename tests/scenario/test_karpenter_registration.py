"""A machine Karpenter launched is on its way only until it should have joined the cluster.

kubernetes-sigs/karpenter (v1): pkg/controllers/nodeclaim/lifecycle/registration.go keeps a
NodeClaim's `Registered` Unknown (`NodeNotFound`, "Node not registered with cluster") until its
Node joins; liveness.go deletes the claim 15 minutes after (`registrationTimeout`) and, once half
of a pool's last launches or registrations failed, sets the NodePool's
`NodeRegistrationHealthy` False (`RegistrationFailed`, "Failed to register node",
`updateNodePoolRegistrationHealth`): "a misconfiguration exists that is preventing successful
node launch/registrations that requires manual investigation" (pkg/apis/v1/nodepool_status.go).
Its provisioner still makes machines from such a pool.
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_autoscaler import _node_pool, _ready, _scaler_event, _waiting
from tests.support.scenarios import Obj, ts

CLAIM = "gpu-pool-8xk2q"


def _claim(now: datetime, *, age: timedelta, registered: Obj, initialized: Obj) -> Obj:
    """NodeClaim gpu-pool-8xk2q of NodePool gpu-pool as Karpenter writes it once the cloud
    made the instance (`Launched` True, providerID set); `Registered` and `Initialized` as
    given, `Ready` made of the three (pkg/apis/v1/nodeclaim_status.go)."""
    made = ts(now - age)

    def condition(kind: str, fields: Obj) -> Obj:
        return {"type": kind, "message": "", "lastTransitionTime": made, **fields}

    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": CLAIM,
            "labels": {"karpenter.sh/nodepool": "gpu-pool"},
            "creationTimestamp": made,
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
            "requirements": [
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": ["p5.48xlarge"],
                }
            ],
            "resources": {"requests": {"nvidia.com/gpu": "8"}},
        },
        "status": {
            "providerID": "aws:///us-east-1a/i-0abc",
            "conditions": [
                condition("Launched", {"status": "True", "reason": "Launched"}),
                condition("Registered", registered),
                condition("Initialized", initialized),
                condition(
                    "Ready",
                    {
                        "status": "Unknown",
                        "reason": "UnhealthyDependents",
                        "message": "Registered=Unknown, Initialized=Unknown",
                    },
                ),
            ],
        },
    }


NOT_FOUND = {
    "status": "Unknown",
    "reason": "NodeNotFound",
    "message": "Node not registered with cluster",
}
"""lifecycle/registration.go while no Node of the claim has joined."""
AWAITING = {"status": "Unknown", "reason": "AwaitingReconciliation"}
REGISTRATION_FAILED = {
    "type": "NodeRegistrationHealthy",
    "status": "False",
    "reason": "RegistrationFailed",
    "message": "Failed to register node",
}


def _nominated(
    now: datetime,
    *,
    age: timedelta,
    registered: Obj = NOT_FOUND,
    initialized: Obj = AWAITING,
    pool_condition: Obj | None = None,
) -> list[Obj]:
    """The 8-GPU job 'big', its pod Unschedulable, Karpenter's `Nominated` 40 s ago for the
    claim, the claim `age` old, and NodePool gpu-pool Ready (with `pool_condition` besides)."""
    objects, pod = _waiting(now)
    nominated = _scaler_event(
        now,
        pod,
        "Nominated",
        f"Pod should schedule on: nodeclaim/{CLAIM}",
        source="karpenter",
        age=timedelta(seconds=40),
    )
    pool = _ready(_node_pool("gpu-pool", {"nvidia.com/gpu": "64"}, {}), now)
    if pool_condition is not None:
        pool["status"]["conditions"].append(
            {**pool_condition, "lastTransitionTime": ts(now - timedelta(minutes=30))}
        )
    claim = _claim(now, age=age, registered=registered, initialized=initialized)
    return [*objects, pod, nominated, claim, pool]


@pytest.mark.parametrize(
    ("registered", "age", "said"),
    [
        (
            NOT_FOUND,
            timedelta(minutes=16),
            f"nodeclaim/{CLAIM} has not joined the cluster for 16 minutes, past the 15 minutes "
            "Karpenter waits: Registered=Unknown (NodeNotFound): Node not registered with "
            "cluster",
        ),
        (
            {
                "status": "False",
                "reason": "MultipleNodesFound",
                "message": "Invariant violated, matched multiple nodes",
            },
            timedelta(minutes=3),
            f"nodeclaim/{CLAIM} did not join the cluster: Registered=False "
            "(MultipleNodesFound): Invariant violated, matched multiple nodes",
        ),
    ],
    ids=["past-the-wait", "registered-false"],
)
def test_a_machine_that_did_not_join_in_a_pool_whose_machines_fail_to_join_says_the_pool(
    doctor: Doctor, registered: Obj, age: timedelta, said: str
) -> None:
    """The claim measurably did not join (past Karpenter's 15 minutes, or `Registered`
    False) and its pool says its machines fail to join: a measured failure, told in the
    pool's words, as it is no one machine's fault."""
    doctor.server.install("karpenter.sh")
    doctor.load(
        lambda now: _nominated(
            now, age=age, registered=registered, pool_condition=REGISTRATION_FAILED
        )
    )
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': the machines "
        "Karpenter makes from its pool gpu-pool fail to join the cluster (Karpenter says "
        "“Failed to register node”)."
    )
    remedy = report["headline"]["remedy"]
    assert remedy.startswith("Find out why that pool's new machines can't join the cluster"), remedy
    assert remedy.endswith(" describe nodepool gpu-pool` shows the autoscaler's own words."), remedy
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert (
        f"karpenter on big-w1: {said}; NodePool gpu-pool: NodeRegistrationHealthy=False "
        "(RegistrationFailed): Failed to register node"
    ) in found["details"], found["details"]
    codes = [f["code"] for f in report["findings"]]
    assert "capacity.machine-coming" not in codes, codes
    assert result.exit_code == 2


@pytest.mark.parametrize("minutes", [2, 14])
def test_a_young_machine_in_a_pool_whose_earlier_machines_failed_to_join_is_still_coming(
    doctor: Doctor, minutes: int
) -> None:
    """Launched `minutes` ago, not joined yet (well within Karpenter's 15), in a pool whose
    `NodeRegistrationHealthy` is still False from earlier machines. Karpenter sets it False
    once 2 of the pool's last 4 launches or registrations failed, and True again only once
    fewer than 2 of the last 4 did (pkg/state/nodepoolhealth/tracker.go `BufferSize` 4,
    `ThresholdFalse` 0.5; lifecycle/registration.go `updateNodePoolRegistrationHealth`
    asks for a healthy dry run first), so a pool that recovers stays False while its next
    machines join. A claim counts there only once it fails (liveness.go, which then deletes
    it): the pool's word is no measurement of this one. A machine on its way, the pool's
    word in the details."""
    doctor.server.install("karpenter.sh")
    doctor.load(
        lambda now: _nominated(
            now, age=timedelta(minutes=minutes), pool_condition=REGISTRATION_FAILED
        )
    )
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.machine-coming"
    assert report["headline"]["text"] == (
        f"A machine is being added for the training job 'big': Karpenter makes the machine "
        f"{CLAIM} for it."
    )
    [found] = [f for f in report["findings"] if f["code"] == "capacity.machine-coming"]
    assert (found["status"], found["basis"]) == ("warn", "measured")
    assert (
        f"karpenter on big-w1: Pod should schedule on: nodeclaim/{CLAIM}; nodeclaim/{CLAIM} "
        f"has not joined the cluster yet for {minutes} minutes: Registered=Unknown "
        "(NodeNotFound): Node not registered with cluster; of the pool's earlier machines, "
        "NodePool gpu-pool says NodeRegistrationHealthy=False (RegistrationFailed): Failed "
        "to register node"
    ) in found["details"], found["details"]
    codes = [f["code"] for f in report["findings"]]
    assert "capacity.no-machine-can-be-added" not in codes, codes
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("registered", "initialized", "detail"),
    [
        (
            NOT_FOUND,
            AWAITING,
            f"nodeclaim/{CLAIM} has not joined the cluster yet for 6 minutes: "
            "Registered=Unknown (NodeNotFound): Node not registered with cluster",
        ),
        (
            {"status": "True", "reason": "Registered"},
            {
                "status": "Unknown",
                "reason": "ResourceNotRegistered",
                "message": 'Resource "nvidia.com/gpu" was requested but not registered',
            },
            f"nodeclaim/{CLAIM} joined the cluster and is not ready for work yet: "
            'Initialized=Unknown (ResourceNotRegistered): Resource "nvidia.com/gpu" was '
            "requested but not registered",
        ),
    ],
    ids=["not-joined-yet", "joined-not-initialized"],
)
def test_a_machine_within_karpenter_s_wait_is_still_coming_and_says_how_far(
    doctor: Doctor, registered: Obj, initialized: Obj, detail: str
) -> None:
    """Launched 6 minutes ago and not joined, or joined and its GPUs not yet registered
    (lifecycle/initialization.go: no timeout): a machine on its way, how far it has come in
    the details. The pool's own failed launches (its NodeRegistrationHealthy False with a
    launch's reason) say nothing of a machine that did launch."""
    doctor.server.install("karpenter.sh")
    doctor.load(
        lambda now: _nominated(
            now,
            age=timedelta(minutes=6),
            registered=registered,
            initialized=initialized,
            pool_condition={
                "type": "NodeRegistrationHealthy",
                "status": "False",
                "reason": "InsufficientCapacityError",
                "message": "creating instance, insufficient capacity",
            },
        )
    )
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.machine-coming"
    # How far the machine has come is for the details: the headline names the machine alone.
    assert report["headline"]["text"] == (
        f"A machine is being added for the training job 'big': Karpenter makes the machine "
        f"{CLAIM} for it."
    )
    [found] = [f for f in report["findings"] if f["code"] == "capacity.machine-coming"]
    assert (
        f"karpenter on big-w1: Pod should schedule on: nodeclaim/{CLAIM}; {detail}"
        in found["details"]
    ), found["details"]
    assert result.exit_code == 0


def test_a_machine_not_joined_past_karpenter_s_wait_is_no_machine_on_its_way(
    doctor: Doctor,
) -> None:
    """Launched 16 minutes ago and not joined, its pool not (yet) marked: past the 15 minutes
    Karpenter waits, it deletes the claim and counts a failed registration."""
    doctor.server.install("karpenter.sh")
    doctor.load(lambda now: _nominated(now, age=timedelta(minutes=16)))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': the machine "
        "Karpenter made for it did not join the cluster in the 15 minutes Karpenter waits."
    )
    remedy = report["headline"]["remedy"]
    assert remedy.endswith(f" describe nodeclaim {CLAIM}` shows the autoscaler's own words."), (
        remedy
    )
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (
        f"karpenter on big-w1: nodeclaim/{CLAIM} has not joined the cluster for 16 minutes, "
        "past the 15 minutes Karpenter waits: Registered=Unknown (NodeNotFound): Node not "
        "registered with cluster"
    ) in found["details"], found["details"]
    assert result.exit_code == 2


LAUNCH_FAILED = {
    "type": "NodeRegistrationHealthy",
    "status": "False",
    "reason": "InsufficientCapacityError",
    "message": "creating instance, insufficient capacity",
}
"""A pool whose launches failed: the launch's own reason (liveness.go
`updateNodePoolRegistrationHealth`)."""


def _claim_gone(pool: str, condition: Obj) -> Any:
    """The pod nominated for nodeclaim/gpu-pool-8xk2q 16 minutes after it launched: Karpenter
    deleted the claim at its registration timeout (liveness.go `deleteNodeClaimForTimeout`), so
    the list no longer holds it; NodePool `pool` Ready, with `condition` besides."""

    def build(now: datetime) -> list[Obj]:
        objects = _nominated(now, age=timedelta(minutes=16))
        kept = [o for o in objects if o["kind"] not in ("NodeClaim", "NodePool")]
        found = _ready(_node_pool(pool, {"nvidia.com/gpu": "64"}, {}), now)
        found["status"]["conditions"].append(
            {**condition, "lastTransitionTime": ts(now - timedelta(minutes=1))}
        )
        return [*kept, found]

    return build


def test_a_claim_gone_from_a_pool_whose_machines_fail_to_join_is_that_pool_s_failure(
    doctor: Doctor,
) -> None:
    """Karpenter names a NodeClaim after its NodePool: `generateName: <pool>-`
    (pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go `ToNodeClaim`), to which the
    API server adds five characters (apiserver pkg/storage/names `SimpleNameGenerator`). The
    claim the pod was nominated for is gone, and its pool gpu-pool says its machines fail to
    join: the pool's failure is the measurement, as for a claim still there."""
    doctor.server.install("karpenter.sh")
    doctor.load(_claim_gone("gpu-pool", REGISTRATION_FAILED))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': the machines "
        "Karpenter makes from its pool gpu-pool fail to join the cluster (Karpenter says "
        "“Failed to register node”)."
    )
    remedy = report["headline"]["remedy"]
    assert remedy.endswith(" describe nodepool gpu-pool` shows the autoscaler's own words."), remedy
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert (
        f"karpenter on big-w1: nodeclaim/{CLAIM} no longer exists; NodePool gpu-pool: "
        "NodeRegistrationHealthy=False (RegistrationFailed): Failed to register node"
    ) in found["details"], found["details"]
    assert "capacity.cant-read" not in [f["code"] for f in report["findings"]]
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("pool", "condition"),
    [("gpu-pool", LAUNCH_FAILED), ("gpu", REGISTRATION_FAILED)],
    ids=["its-pool-launches-fail", "another-pool-fails"],
)
def test_a_claim_gone_that_no_failing_pool_names_is_not_known(
    doctor: Doctor, pool: str, condition: Obj
) -> None:
    """Where the gone claim's own pool says only that launches fail (the cloud's capacity,
    which Karpenter retries elsewhere), or the pool that fails to join machines is another
    (`gpu` made `gpu-xxxxx`, never gpu-pool-8xk2q), nothing ties the claim's end to a cause:
    still not known."""
    doctor.server.install("karpenter.sh")
    doctor.load(_claim_gone(pool, condition))
    result = doctor.live("-o", "json")
    report: dict[str, Any] = result.json()
    codes = [f["code"] for f in report["findings"] if f["check"] == "capacity"]
    assert codes == ["capacity.cant-read"], codes
    assert result.exit_code == 3
