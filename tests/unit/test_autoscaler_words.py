"""What an autoscaler said about a training pod, in plain words: cluster-autoscaler's reasons
for adding no machine (processors/status/eventing_scale_up_processor.go)."""

import pytest

from truegreen.doctor.checks.capacity.autoscaling import CannotAdd, plain_cannot_add


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
