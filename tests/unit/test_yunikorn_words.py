"""YuniKorn's notes and configuration read as YuniKorn writes and reads them
(doctor/knowledge/yunikorn.py): quantities by yunikorn-core's `parse`, `max` walked from root,
the newest note of a pod standing."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from truegreen.doctor.knowledge.yunikorn import (
    QueueMax,
    configured,
    held_requests,
    queue_limits,
    yunikorn_quantity,
)
from truegreen.quantity import Resources

GIB = 1 << 30


@pytest.mark.parametrize(
    ("text", "milli", "value"),
    [
        ("10", True, 10_000),  # vcore: a bare number is cores, kept in millicores
        ("500m", True, 500),
        ("500m", False, None),  # `m` only for vcore
        ("1Gi", False, GIB),
        ("2G", False, 2 * 10**9),
        (" 16 ", False, 16),
        ("0.5G", False, None),  # fractions were never accepted (YUNIKORN-1809)
        ("1e3", False, None),
        ("-1", False, None),
        ("9223372036854775807", False, 9223372036854775807),
        ("9223372036854775808", False, None),  # past int64: YuniKorn refuses it
        ("9223372036854775807", True, None),
    ],
)
def test_quantities_as_yunikorn_core_parses_them(text: str, milli: bool, value: int | None) -> None:
    assert yunikorn_quantity(text, milli=milli) == value


def test_a_configured_max_in_doctor_s_units() -> None:
    limits = configured({"vcore": 64, "memory": "512Gi", "nvidia.com/gpu": 4, "pods": "0.5"})
    assert limits == Resources.of({"cpu": 64_000, "memory": 512 * GIB, "nvidia.com/gpu": 4})


CONFIG: dict[str, Any] = {
    "partitions": [
        {"name": "other", "queues": [{"name": "root", "queues": [{"name": "a"}]}]},
        {
            "name": "default",
            "queues": [
                {
                    "name": "root",
                    "resources": {"max": {"nvidia.com/gpu": 1}},  # root's is the cluster's
                    "queues": [
                        {
                            "name": "teams",
                            "resources": {"max": {"nvidia.com/gpu": 32}},
                            "childtemplate": {"resources": {"max": {"nvidia.com/gpu": 8}}},
                            "queues": [
                                {"name": "vision", "resources": {"max": {"nvidia.com/gpu": 4}}},
                                {"name": "nlp"},
                            ],
                        }
                    ],
                }
            ],
        },
    ]
}


def test_every_max_from_root_down_to_the_queue_is_found() -> None:
    assert queue_limits(CONFIG, "root.teams.vision") == [
        QueueMax("root.teams", Resources.of({"nvidia.com/gpu": 32})),
        QueueMax("root.teams.vision", Resources.of({"nvidia.com/gpu": 4})),
    ]
    assert queue_limits(CONFIG, "root.teams.nlp") == [
        QueueMax("root.teams", Resources.of({"nvidia.com/gpu": 32}))
    ]


def test_a_queue_not_in_the_configuration_takes_its_parent_s_childtemplate_and_no_more() -> None:
    assert queue_limits(CONFIG, "root.teams.speech.small") == [
        QueueMax("root.teams", Resources.of({"nvidia.com/gpu": 32})),
        QueueMax("root.teams.speech", Resources.of({"nvidia.com/gpu": 8}), template=True),
    ]


def test_names_are_matched_as_yunikorn_keeps_them_lower_case() -> None:
    """YuniKorn lower-cases every queue name it configures, and an unnamed partition is the
    default one: a configuration written `Root.Teams` holds the queue 'root.teams'."""
    config = {
        "partitions": [
            {
                "queues": [
                    {
                        "name": "Root",
                        "queues": [{"name": "Teams", "resources": {"max": {"pods": 3}}}],
                    }
                ]
            }
        ]
    }
    assert queue_limits(config, "root.teams") == [QueueMax("root.teams", Resources.of({"pods": 3}))]


def test_a_path_outside_root_or_the_default_partition_gives_nothing() -> None:
    assert queue_limits(CONFIG, "teams.vision") == []
    assert queue_limits({"partitions": [CONFIG["partitions"][0]]}, "root.a") == []
    assert queue_limits({}, "root.teams") == []


NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def _note(pod: str, message: str, seconds_ago: int, reason: str = "Informational") -> Any:
    at = NOW - timedelta(seconds=seconds_ago)
    return {
        "involvedObject": {"kind": "Pod", "name": pod},
        "reason": reason,
        "message": message,
        "eventTime": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }


NO_ROOM = (
    "Request 'u1' does not fit in queue 'root.a' (requested map[pods:1], available map[pods:0])"
)
ROOM = "Request 'u1' has become schedulable in queue 'root.a'"
NO_QUOTA = "Request 'u1' exceeds the available user quota (requested map[pods:1], available map[])"
QUOTA = "Request 'u1' fits in the available user quota"


def test_the_newest_note_of_each_kind_stands() -> None:
    events = [  # the API server lists in no order of time: p0's newest note comes first
        _note("p0", ROOM, 10),  # p0 fits again
        _note("p0", NO_ROOM, 60),
        _note("p1", ROOM, 60),
        _note("p1", NO_ROOM, 10),  # p1 is held
        _note("p2", NO_QUOTA, 30),
        _note("p3", NO_QUOTA, 30),
        _note("p3", QUOTA, 20),
        _note("p4", NO_ROOM, 5, reason="Scheduled"),  # not YuniKorn's note
        _note("p5", "Predicate failed for request 'u5' with message: 'x'", 5),
        _note("other", NO_ROOM, 5),
    ]
    held = held_requests(events, ["p0", "p1", "p2", "p3", "p4", "p5"])
    assert [(n.pod, n.queue, n.message) for n in held] == [
        ("p1", "root.a", NO_ROOM),
        ("p2", "", NO_QUOTA),
    ]
    assert held[0].at == NOW - timedelta(seconds=10)


def test_a_pod_held_by_both_is_said_with_its_queue() -> None:
    events = [_note("p0", NO_QUOTA, 5), _note("p0", NO_ROOM, 50)]
    assert [n.queue for n in held_requests(events, ["p0"])] == ["root.a"]
