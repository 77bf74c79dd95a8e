"""A list item decoded through its view is what the checks read of it, nothing more or less."""

from typing import Any

import msgspec

from truegreen.cluster.kinds import Kind, stamped
from truegreen.cluster.reads import Listed
from truegreen.cluster.views import as_object, item_view
from truegreen.doctor.knowledge.usage import FIT_FIELDS, machines_for_fit


def _machine_with_every_fit_field() -> dict[str, Any]:
    """A machine carrying each field the fit reads (FIT_FIELDS, so a field added there is
    added here), and fields it does not read beside them."""
    node: dict[str, Any] = {
        part: {name: f"{part}.{name}" for name in names} for part, names in FIT_FIELDS.items()
    }
    node["metadata"]["managedFields"] = [{"manager": "kubelet"}]
    node["metadata"]["annotations"] = {"a": "b"}
    node["spec"]["podCIDR"] = "10.0.0.0/24"
    node["status"]["images"] = [{"names": ["x"]}]
    node["status"]["conditions"] = [{"type": "Ready"}]
    node["futureField"] = 1
    return node


def test_a_machine_is_decoded_as_the_fit_reads_it_and_nothing_else() -> None:
    node = _machine_with_every_fit_field()
    decoded = as_object(
        msgspec.json.decode(msgspec.json.encode(node), type=item_view(Kind.NODE)), Kind.NODE
    )
    whole = stamped(Kind.NODE, node)
    assert machines_for_fit(Listed((decoded,))) == machines_for_fit(Listed((whole,)))
    assert decoded == machines_for_fit(Listed((whole,))).items[0]  # type: ignore[union-attr]


def test_a_machine_part_that_is_not_an_object_is_kept_as_it_came() -> None:
    node = {"metadata": {"name": "m"}, "spec": "broken", "status": [1]}
    decoded = as_object(
        msgspec.json.decode(msgspec.json.encode(node), type=item_view(Kind.NODE)), Kind.NODE
    )
    assert decoded == {**node, "kind": "Node", "apiVersion": "v1"}


def _decoded(node: dict[str, Any]) -> dict[str, Any]:
    return dict(
        as_object(
            msgspec.json.decode(msgspec.json.encode(node), type=item_view(Kind.NODE)), Kind.NODE
        )
    )


def _condition(beat: str) -> dict[str, str]:
    """A machine condition as the kubelet writes it (pkg/kubelet/nodestatus/setters.go)."""
    return {
        "type": "MemoryPressure",
        "status": "False",
        "lastHeartbeatTime": beat,
        "lastTransitionTime": "2026-11-30T08:00:00Z",
        "reason": "KubeletHasSufficientMemory",
        "message": "kubelet has sufficient memory available",
    }


def test_a_machine_s_conditions_are_kept_but_their_heartbeat() -> None:
    first, second = (
        _decoded({"status": {"conditions": [_condition(f"2026-12-05T08:0{i}:00Z")]}})
        for i in range(2)
    )
    [one], [other] = first["status"]["conditions"], second["status"]["conditions"]
    assert one == {k: v for k, v in _condition("").items() if k != "lastHeartbeatTime"}
    for field in ("type", "status", "reason", "message"):
        assert one[field] is other[field], f"one {field} string for every machine saying it"


def test_conditions_that_are_not_a_list_of_objects_are_kept_as_they_came() -> None:
    for conditions in ({"Ready": "True"}, ["Ready", 1, None], "Ready", [{"type": 5}]):
        assert _decoded({"status": {"conditions": conditions}})["status"] == {
            "conditions": conditions
        }
