"""YuniKorn's word on a request that waits for the cluster's room is a lack of room
(knowledge/evidence.py `CLUSTER_WAIT`): pinned value by value for the mutation gate."""

from truegreen.doctor.knowledge.evidence import (
    CLUSTER_WAIT,
    Obstacle,
    Reason,
    parse_scheduler_message,
)


def test_yunikorn_s_wait_for_cluster_resources_is_a_lack_of_room() -> None:
    """yunikorn-core pkg/scheduler/scheduler.go `inspectOutstandingRequests`: the reason of the
    FAILED scheduling state, written whole as the pod's `PodScheduled` message."""
    assert CLUSTER_WAIT == "request is waiting for cluster resources become available"
    assert parse_scheduler_message(CLUSTER_WAIT) == (
        None,
        (Reason(None, CLUSTER_WAIT, Obstacle.ROOM),),
    )


def test_any_other_message_without_a_count_stays_the_scheduler_s_own_reason() -> None:
    said = f"{CLUSTER_WAIT}."
    assert parse_scheduler_message(said) == (None, (Reason(None, said, Obstacle.OTHER),))
    assert parse_scheduler_message("") == (None, ())
