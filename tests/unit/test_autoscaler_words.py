"""What an autoscaler said about a training pod, in plain words: cluster-autoscaler's reasons
for adding no machine (processors/status/eventing_scale_up_processor.go), and Karpenter's
nomination against the NodeClaim it names."""

from datetime import UTC, datetime
from typing import Any

import pytest
from msgspec.structs import replace

from truegreen.doctor.checks.autoscaler_refusals import CannotAdd
from truegreen.doctor.checks.capacity.autoscaling import AutoscalerWord, Word, plain_cannot_add
from truegreen.doctor.checks.capacity.karpenter_claims import claim_launches, launched


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # core/scaleup/orchestrator skippedreasons.go MaxResourceLimitReached, beside groups
        # whose machines are too small: the cap is the blocker, not the job's size.
        (
            "pod didn't trigger scale-up: 1 max cluster nvidia-tesla-a100 limit reached, "
            "2 Insufficient nvidia.com/gpu",
            CannotAdd(
                "the autoscaler's limit on the whole cluster's nvidia-tesla-a100 is reached",
                "Raise the autoscaler's limit on the whole cluster's nvidia-tesla-a100 (its "
                "--gpu-total setting), or free room",
            ),
        ),
        (
            "pod didn't trigger scale-up: 2 max cluster memory limit reached",
            CannotAdd(
                "the autoscaler's limit on the whole cluster's memory is reached",
                "Raise the autoscaler's limit on the whole cluster's memory (its --memory-total "
                "setting), or free room",
            ),
        ),
        (
            "pod didn't trigger scale-up: 1 max cluster cpu, memory, nvidia-l4 limit reached, "
            "1 max node group size reached",
            CannotAdd(
                "the autoscaler's limits on the whole cluster's cpu, memory and nvidia-l4 are "
                "reached",
                "Raise the autoscaler's limits on the whole cluster's cpu, memory and nvidia-l4 "
                "(its --cores-total, --memory-total and --gpu-total settings), or free room",
            ),
        ),
    ],
    ids=["gpu-type", "memory", "several"],
)
def test_the_cluster_wide_cap_is_the_blocker_wherever_a_group_names_it(
    message: str, expected: CannotAdd
) -> None:
    assert plain_cannot_add(message) == expected


def test_a_group_s_own_limit_is_still_the_group_s() -> None:
    """`max node group size reached` (MaxLimitReachedReason) alone is no cluster-wide cap."""
    assert plain_cannot_add("pod didn't trigger scale-up: 2 max node group size reached") == (
        CannotAdd(
            "its machine groups are at their largest",
            "Raise the machine groups' limits, or free room",
        )
    )


def _nominated(claim: str) -> AutoscalerWord:
    """Karpenter's `Nominated` on the pod (pkg/controllers/provisioning: `Pod should schedule
    on: nodeclaim/<name>`)."""
    at = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
    return AutoscalerWord(
        "big-w1", Word.ADDING, "karpenter", f"Pod should schedule on: {claim}", at
    )


NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
"""The moment the claims are judged at."""


def _claim(name: str, **launched: str) -> dict[str, Any]:
    """A NodeClaim (karpenter.sh/v1); its `Launched` condition as lifecycle/launch.go sets it."""
    conditions = [{"type": "Launched", **launched}] if launched else []
    return {"metadata": {"name": name}, "status": {"conditions": conditions}}


def test_a_nominated_claim_the_list_no_longer_holds_is_a_launch_that_ended() -> None:
    """lifecycle/launch.go launchNodeClaim deletes the claim on an InsufficientCapacityError
    or a NodeClass not ready: a claim the list does not hold is no machine on its way."""
    launches = claim_launches([_claim("cpu-pool-4mzl2", status="True")], NOW)
    word = launched(_nominated("nodeclaim/gpu-pool-8xk2q"), launches)
    assert (word.word, word.message) == (
        Word.LAUNCH_ENDED,
        "Pod should schedule on: nodeclaim/gpu-pool-8xk2q; nodeclaim/gpu-pool-8xk2q no longer "
        "exists",
    )


def test_a_nominated_claim_is_judged_only_where_the_claims_were_listed() -> None:
    nominated = _nominated("nodeclaim/gpu-pool-8xk2q")
    assert launched(nominated, None) == nominated
    still = claim_launches([_claim("gpu-pool-8xk2q", status="Unknown", reason="")], NOW)
    assert launched(nominated, still) == nominated
    failed = claim_launches(
        [_claim("gpu-pool-8xk2q", status="Unknown", reason="LaunchFailed", message="boom")], NOW
    )
    assert launched(nominated, failed) == AutoscalerWord(
        "big-w1",
        Word.CANNOT_ADD,
        "karpenter",
        "nodeclaim/gpu-pool-8xk2q did not launch: LaunchFailed: boom",
        nominated.at,
    )
    triggered = AutoscalerWord("big-w1", Word.ADDING, "cluster-autoscaler", "pod triggered", None)
    assert launched(triggered, claim_launches([], NOW)) == triggered


def _pool_claim(**launched: str) -> dict[str, Any]:
    claim = _claim("gpu-pool-8xk2q", **launched)
    claim["metadata"]["labels"] = {"karpenter.sh/nodepool": "gpu-pool"}
    return claim


def _failing_pool(reason: str, message: str) -> dict[str, Any]:
    """A NodePool whose NodeRegistrationHealthy is False as lifecycle/liveness.go
    updateNodePoolRegistrationHealth sets it: `RegistrationFailed` for machines that did not
    join, the launch's own reason and message for launches that failed."""
    condition = {"type": "NodeRegistrationHealthy", "status": "False", "reason": reason}
    return {
        "metadata": {"name": "gpu-pool"},
        "status": {"conditions": [{**condition, "message": message}]},
    }


def test_a_launching_claim_of_a_pool_whose_earlier_launches_failed_is_still_on_its_way() -> None:
    """The pool's `NodeRegistrationHealthy` False counts its earlier launches
    (lifecycle/liveness.go `updateNodePoolRegistrationHealth` quotes the failed launch's
    reason): this claim's own launch has not failed (`Launched` Unknown while it waits, its
    provider's reason once it fails: lifecycle/launch.go), so it is still on its way, the
    pool's word beside it."""
    pool = _failing_pool("InsufficientCapacityError", "creating instance, insufficient capacity")
    claims = claim_launches(
        [_pool_claim(status="Unknown", reason="AwaitingReconciliation")], NOW, [pool]
    )
    nominated = _nominated("nodeclaim/gpu-pool-8xk2q")
    word = launched(nominated, claims)
    assert word == replace(
        nominated,
        progress="nodeclaim/gpu-pool-8xk2q is still launching; of the pool's earlier machines, "
        "NodePool gpu-pool says NodeRegistrationHealthy=False (InsufficientCapacityError): "
        "creating instance, insufficient capacity",
    )


def test_a_claim_karpenter_says_did_not_join_is_no_machine_on_its_way() -> None:
    """lifecycle/registration.go: `Registered` False when several Nodes match the claim."""
    claim = _pool_claim(status="True", reason="Launched")
    claim["status"]["conditions"].append(
        {
            "type": "Registered",
            "status": "False",
            "reason": "MultipleNodesFound",
            "message": "Invariant violated, matched multiple nodes",
        }
    )
    word = launched(_nominated("nodeclaim/gpu-pool-8xk2q"), claim_launches([claim], NOW))
    assert (word.word, word.message, word.shown_by) == (
        Word.CANNOT_ADD,
        "nodeclaim/gpu-pool-8xk2q did not join the cluster: Registered=False "
        "(MultipleNodesFound): Invariant violated, matched multiple nodes",
        "nodeclaim/gpu-pool-8xk2q",
    )
    assert plain_cannot_add(word.message).why == (
        "the machine Karpenter made for it could not join the cluster"
    )


@pytest.mark.parametrize(
    ("claim", "pool", "tied"),
    [
        ("gpu-pool-8xk2q", "gpu-pool", True),
        ("gpu-pool-8xk2q", "gpu", False),
        ("gpu-pool-8xk2qz", "gpu-pool", False),
        ("gpu-pool-abcde", "gpu-pool", False),
        ("gpu-pool", "gpu-pool", False),
    ],
)
def test_a_gone_claim_is_its_failing_pool_s_where_its_name_was_made_from_that_pool(
    claim: str, pool: str, tied: bool
) -> None:
    """Karpenter creates a NodeClaim with `generateName: <pool>-`
    (provisioning/scheduling/nodeclaimtemplate.go `ToNodeClaim`), and the API server adds five
    characters of apimachinery pkg/util/rand's `alphanums` (no vowels, no 0, 1 or 3): a gone
    claim whose name is that of a pool whose machines fail to join is that pool's failure; any
    other name ties it to no pool, and it stays a launch that ended."""
    failing = _failing_pool("RegistrationFailed", "Failed to register")
    failing["metadata"]["name"] = pool
    word = launched(_nominated(f"nodeclaim/{claim}"), claim_launches([], NOW, [failing]))
    if tied:
        assert (word.word, word.shown_by) == (Word.CANNOT_ADD, f"nodepool/{pool}")
        assert word.message == (
            f"nodeclaim/{claim} no longer exists; NodePool {pool}: NodeRegistrationHealthy=False "
            "(RegistrationFailed): Failed to register"
        )
        assert plain_cannot_add(word.message).why == (
            f"the machines Karpenter makes from its pool {pool} fail to join the cluster "
            "(Karpenter says “Failed to register”)"
        )
    else:
        assert word.word is Word.LAUNCH_ENDED, word
