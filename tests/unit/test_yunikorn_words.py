"""YuniKorn's notes and configuration read as YuniKorn writes and reads them
(doctor/knowledge/yunikorn.py): quantities by yunikorn-core's `parse`, `max` walked from root,
the newest note of a pod standing, a pod's user and the user and group limits that apply."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from truegreen.doctor.knowledge.yunikorn import (
    PodRef,
    QueueMax,
    QueuesText,
    Submitter,
    UserLimit,
    configured,
    held_requests,
    noted_pods,
    noted_queue,
    placement_rules,
    places_where_asked,
    pod_queue,
    queue_limits,
    queues_text,
    submitter,
    user_limits,
    yunikorn_quantity,
)

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
    """vcore is CPU in millicores; `cpu` is a name the shim renames (a pod's cpu is YuniKorn's
    vcore), so in a max it limits nothing a request carries; a 0 is a limit."""
    limits = configured(
        {"vcore": 64, "memory": "512Gi", "nvidia.com/gpu": 0, "pods": "0.5", "cpu": 64}
    )
    assert limits == (("cpu", 64_000), ("memory", 512 * GIB), ("nvidia.com/gpu", 0))


def test_a_max_with_nothing_above_zero_is_none() -> None:
    assert configured({"nvidia.com/gpu": 0, "vcore": "0"}) == ()


CONFIG: dict[str, Any] = {
    "partitions": [
        {"name": "other", "queues": [{"name": "root", "queues": [{"name": "a"}]}]},
        {
            "name": "default",
            "queues": [
                {
                    "name": "root",
                    "childtemplate": {"resources": {"max": {"nvidia.com/gpu": 2}}},
                    "queues": [
                        {
                            "name": "teams",
                            "resources": {"max": {"nvidia.com/gpu": 32}},
                            "childtemplate": {"resources": {"max": {"nvidia.com/gpu": 8}}},
                            "queues": [
                                {"name": "vision", "resources": {"max": {"nvidia.com/gpu": 4}}},
                                {"name": "nlp", "parent": True},
                            ],
                        }
                    ],
                }
            ],
        },
    ]
}


def _max(path: str, gpus: int, *, template: bool = False) -> QueueMax:
    return QueueMax(path, (("nvidia.com/gpu", gpus),), template=template)


def test_every_max_from_root_down_to_the_queue_is_found() -> None:
    assert queue_limits(CONFIG, "root.teams.vision") == [
        _max("root.teams", 32),
        _max("root.teams.vision", 4),
    ]
    assert queue_limits(CONFIG, "root.teams.nlp") == [_max("root.teams", 32)]


def test_a_queue_a_placement_rule_made_takes_the_nearest_childtemplate_at_the_leaf() -> None:
    """objects/queue.go `addChildQueue`: only the made leaf takes a template's max; a parent
    made on the way has none; a parent without a template passes its own parent's down."""
    assert queue_limits(CONFIG, "root.teams.speech.small") == [
        _max("root.teams", 32),
        _max("root.teams.speech.small", 8, template=True),
    ]
    assert queue_limits(CONFIG, "root.teams.nlp.alice") == [
        _max("root.teams", 32),
        _max("root.teams.nlp.alice", 8, template=True),
    ]
    assert queue_limits(CONFIG, "root.sandbox") == [_max("root.sandbox", 2, template=True)]


def test_root_is_put_above_queues_configured_without_it() -> None:
    """configvalidator.go `checkQueuesStructure`."""
    config = {"partitions": [{"queues": [{"name": "train", "resources": {"max": {"pods": 3}}}]}]}
    assert queue_limits(config, "root.train") == [QueueMax("root.train", (("pods", 3),))]


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
    assert queue_limits(config, "root.teams") == [QueueMax("root.teams", (("pods", 3),))]


def test_a_path_outside_root_or_the_default_partition_gives_nothing() -> None:
    assert queue_limits(CONFIG, "teams.vision") == []
    assert queue_limits({"partitions": [CONFIG["partitions"][0]]}, "root.a") == []
    assert queue_limits({}, "root.teams") == []


def _config_map(data: dict[str, str], binary: dict[str, str] | None = None) -> dict[str, Any]:
    return {"data": data, **({"binaryData": binary} if binary else {})}


def test_the_queues_are_yunikorn_configs_over_yunikorn_defaults() -> None:
    """schedulerconf.go `FlattenConfigMaps`: the defaults first, each map's data then its
    binary data, a later key over an earlier one; `<service.policyGroup>.yaml`."""
    defaults = ("yunikorn-defaults", _config_map({"queues.yaml": "a", "other.yaml": "b"}))
    configs = ("yunikorn-configs", _config_map({"queues.yaml": "c"}))
    assert queues_text([defaults, configs]) == QueuesText("c", "yunikorn-configs", "queues.yaml")
    assert queues_text([defaults]) == QueuesText("a", "yunikorn-defaults", "queues.yaml")
    grouped = ("yunikorn-configs", _config_map({"service.policyGroup": "other"}))
    assert queues_text([defaults, grouped]) == QueuesText("b", "yunikorn-defaults", "other.yaml")
    assert queues_text([]) == QueuesText("", "", "queues.yaml")
    packed = ("yunikorn-configs", _config_map({}, {"queues.yaml.gz": "H4sI"}))
    assert queues_text([defaults, packed]).unread == "YuniKorn's queues.yaml is kept as binary data"


NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def _note(pod: str, message: str, seconds_ago: int, reason: str = "Informational") -> Any:
    at = NOW - timedelta(seconds=seconds_ago)
    return {
        "involvedObject": {"kind": "Pod", "name": pod, "uid": f"uid-{pod}"},
        "reportingComponent": "yunikorn",
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


def _refs(*names: str) -> list[PodRef]:
    return [PodRef(name, f"uid-{name}") for name in names]


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
    held = held_requests(events, _refs("p0", "p1", "p2", "p3", "p4", "p5"))
    assert [(n.pod, n.queue, n.message) for n in held] == [
        ("p1", "root.a", NO_ROOM),
        ("p2", "", NO_QUOTA),
    ]
    assert held[0].at == NOW - timedelta(seconds=10)


def test_a_pod_held_by_both_is_said_with_its_queue() -> None:
    events = [_note("p0", NO_QUOTA, 5), _note("p0", NO_ROOM, 50)]
    assert [n.queue for n in held_requests(events, _refs("p0"))] == ["root.a"]


def test_a_note_about_an_earlier_pod_of_the_same_name_or_from_another_reporter_is_not_counted() -> (
    None
):
    """A job deleted and made again keeps its pods' names: the old pods' notes name their
    uids. A note counts only from YuniKorn."""
    earlier = _note("p0", NO_ROOM, 2400)
    earlier["involvedObject"]["uid"] = "uid-of-the-earlier-p0"
    forged = _note("p1", NO_ROOM, 5)
    forged["reportingComponent"] = "someone-else"
    assert held_requests([earlier, forged], _refs("p0", "p1")) == []


def test_a_note_too_long_to_be_yunikorn_s_is_not_matched() -> None:
    """YuniKorn's notes are a few hundred characters; a hostile one is not even matched."""
    padded = NO_ROOM.replace("map[pods:1]", "map[" + "x:1 " * 2000 + "]")
    assert held_requests([_note("p0", padded, 5)], _refs("p0")) == []


def test_the_gang_s_placeholders_speak_for_the_job_and_placed_pods_do_not() -> None:
    """While a gang reserves room, YuniKorn asks only for its placeholders, which the
    originator pod owns (yunikorn-k8shim metadata.go `getOwnerReference`)."""

    def pod(name: str, node: str = "", owner: str = "") -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}"}
        if owner:
            meta["ownerReferences"] = [{"kind": "Pod", "name": owner, "uid": f"uid-{owner}"}]
        return {"metadata": meta, "spec": {"nodeName": node} if node else {}}

    job = [pod("train-0"), pod("train-1", node="gpu-1")]
    others = [pod("tg-train-workers-abc12", owner="train-0"), pod("unrelated"), *job]
    assert noted_pods(job, others) == _refs("train-0", "tg-train-workers-abc12")


def test_a_user_quota_note_leaves_the_queue_to_the_newest_queue_note() -> None:
    """A user-quota note names no queue (ask_events.go `SendRequestExceedsUserQuota`); the
    newest queue note on any of the job's pods, room or none, does."""
    events = [
        _note("p0", NO_QUOTA, 5),
        _note("p1", NO_ROOM.replace("root.a", "root.old"), 90),
        _note("p2", ROOM, 30),
    ]
    assert noted_queue(events, _refs("p0", "p1", "p2")) == "root.a"
    assert noted_queue([_note("p0", NO_QUOTA, 5)], _refs("p0")) == ""


def _pod(annotations: dict[str, str], labels: dict[str, str] | None = None) -> Any:
    return {"metadata": {"name": "p0", "annotations": annotations, "labels": labels or {}}}


INFO = "yunikorn.apache.org/user.info"


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        ('{"user":"alice","groups":["ml","dev"]}', Submitter("alice", ("ml", "dev"), True)),
        ('{"User":"alice"}', Submitter("alice", (), True)),  # Go matches names of any case
        ('{"groups":["ml"]}', Submitter("nobody", ("ml",), False)),  # no user: the default
        ('{"user":"alice","groups":"ml"}', Submitter("nobody", (), False)),  # unmarshal fails
        ("alice", Submitter("nobody", (), False)),  # not JSON
        (None, Submitter("nobody", (), False)),
    ],
)
def test_a_pod_s_user_as_the_shim_reads_it(annotation: str | None, expected: Submitter) -> None:
    """yunikorn-k8shim pkg/common/utils/utils.go `GetUserFromPod`."""
    assert submitter(_pod({} if annotation is None else {INFO: annotation})) == expected


def test_a_pod_s_queue_as_the_shim_reads_it() -> None:
    """utils.go `GetQueueNameFromPod`: the canonical label, the annotation, the old label."""
    canonical = "yunikorn.apache.org/queue"
    assert pod_queue(_pod({canonical: "root.b"}, {canonical: "root.a", "queue": "c"})) == "root.a"
    assert pod_queue(_pod({canonical: "root.b"}, {"queue": "c"})) == "root.b"
    assert pod_queue(_pod({}, {"queue": "c"})) == "c"
    assert pod_queue(_pod({})) == ""


LIMITS = {
    "partitions": [
        {
            "name": "default",
            "limits": [{"users": ["alice"], "maxresources": {"nvidia.com/gpu": "32"}}],
            "queues": [
                {
                    "name": "root",
                    "queues": [
                        {
                            "name": "train",
                            "limits": [
                                {"users": ["bob"], "maxapplications": 2},
                                {"users": ["*"], "maxresources": {"nvidia.com/gpu": "4"}},
                                {"groups": ["ml", "dev"], "maxresources": {"vcore": "16"}},
                                {"groups": ["*"], "maxresources": {"memory": "64Gi"}},
                            ],
                            "queues": [
                                {
                                    "name": "big",
                                    "limits": [
                                        {"groups": ["ops"], "maxresources": {"pods": "3"}},
                                    ],
                                }
                            ],
                        }
                    ],
                }
            ],
        }
    ]
}


def _found(user: str, groups: tuple[str, ...], path: str = "root.train.big") -> list[Any]:
    return [
        (f.limit.path, f.name, f.group, f.limit.limits)
        for f in user_limits(LIMITS, path, Submitter(user, groups, annotated=True))
    ]


def test_a_user_s_own_limit_else_the_wildcard_s_on_each_queue() -> None:
    """Root takes the partition's limits where it has none (configvalidator.go
    `checkLimitsStructure`); on 'root.train', 'alice' has no limit of her own and takes the
    wildcard's (queue_tracker.go `newQueueTracker`); 'bob''s own limit, of applications
    only, is never replaced by the wildcard's (`setLimit`) and limits no resource."""
    assert _found("alice", ()) == [
        ("root", "alice", False, (("nvidia.com/gpu", 32),)),
        ("root.train", "*", False, (("nvidia.com/gpu", 4),)),
    ]
    assert _found("bob", ()) == []


def test_one_group_from_the_leaf_up_and_its_limits_on_the_whole_path() -> None:
    """manager.go `ensureGroupInternal`: 'ops' is configured on the leaf, 'dev' on its parent
    (in the order the limits list it, the user's own order aside), `*` where no named group
    of the user's is."""
    assert _found("bob", ("x", "ops", "dev")) == [
        ("root.train.big", "ops", True, (("pods", 3),)),
    ]
    assert _found("bob", ("dev", "ml")) == [("root.train", "ml", True, (("cpu", 16000),))]
    assert _found("bob", ("x",)) == [("root.train", "*", True, (("memory", 64 << 30),))]
    assert _found("bob", ("ml",), path="root") == []


def test_a_queue_a_placement_rule_made_has_only_its_parents_limits() -> None:
    assert [f[0] for f in _found("alice", (), path="root.train.made")] == ["root", "root.train"]
    assert isinstance(user_limits(LIMITS, "root", Submitter("alice", (), True))[0], UserLimit)


@pytest.mark.parametrize(
    ("partition", "rules", "as_asked"),
    [
        ({"name": "default"}, ("provided",), True),
        ({"placementrules": []}, ("provided",), True),
        ({"placementrules": [{"name": "Provided", "create": True}]}, ("provided",), True),
        ({"placementrules": [{"name": "fixed", "value": "root.other"}]}, ("fixed",), False),
        (
            {"placementrules": [{"name": "provided"}, {"name": "tag", "value": "namespace"}]},
            ("provided", "tag"),
            False,
        ),
        ({"name": "other", "placementrules": []}, (), False),
    ],
)
def test_the_queue_a_pod_asks_for_holds_only_under_the_provided_rule_alone(
    partition: dict[str, Any], rules: tuple[str, ...], as_asked: bool
) -> None:
    """No rule configured is the implicit `provided` rule (placement.go `buildRules`); names
    match lower case (rule.go `normalise`); any other rule, after `provided` too, may place
    the application elsewhere; without a default partition nothing is known."""
    config = {"partitions": [partition]}
    assert placement_rules(config) == rules
    assert places_where_asked(config) is as_asked
