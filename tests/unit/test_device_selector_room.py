"""CEL selectors as the devices a request may take
(doctor/checks/capacity/filters/device_room.py `_chosen`, `_unevaluable`).

Sources: staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
allocator_stable.go (`selectorsMatch`: the class's selectors, then the request's, each device
refused at the first that says false); the devices are dra-example-driver's
(cmd/dra-example-kubeletplugin/discovery.go: `index` and `model` attributes).
"""

from typing import Any

from tests.unit.test_devices import (
    DRIVER,
    GPUS,
    SEE,
    _allocated,
    _class,
    _reads,
    _request,
    _run,
    _slice,
    _template,
)
from truegreen.doctor.checks.capacity.filters.framework import DeviceRoom
from truegreen.quantity import Resources

LOWER = f"device.attributes['{DRIVER}'].model.lowerAscii() == 'latest-gpu-model'"
"""ext.Strings' lowerAscii: in Kubernetes' environment, not in the evaluator doctor uses."""


def _indexed(machine: str, devices: int) -> dict[str, Any]:
    """A slice whose devices carry the example driver's `index` and `model` attributes."""
    found = _slice(machine, devices)
    for index, device in enumerate(found["spec"]["devices"]):
        device["attributes"] = {
            "index": {"int": index},
            "model": {"string": "LATEST-GPU-MODEL"},
        }
    return found


def _selecting(*expressions: str) -> dict[str, Any]:
    return _request(selectors=[{"cel": {"expression": e}} for e in expressions])


def test_a_request_s_selector_takes_the_devices_it_matches() -> None:
    request = _selecting(f"device.attributes['{DRIVER}'].index >= 2")
    room, found = _run(
        _reads([_indexed("a", 4), _indexed("b", 2)], templates={"t": _template(request)})
    )
    assert room.machines == (
        ("a", Resources.of({GPUS: 2}), Resources()),
        ("b", Resources(), Resources()),
    )
    assert (found.unchecked, found.exclusions) == ([], [])


def test_a_selector_that_refuses_after_one_doctor_cannot_evaluate_does_not_count() -> None:
    """The class's selector can't be evaluated, the request's refuses every device. The class's
    comes first (`isSelectable`), and it may be a runtime error that aborts allocation before
    the request's is evaluated: every device stays one the selectors might take, and the
    request is unknown, naming the class's expression."""
    request = _selecting(f"device.attributes['{DRIVER}'].index > 7")
    room, found = _run(
        _reads(
            [_indexed("a", 2)],
            classes=[_class(DRIVER, LOWER)],
            templates={"t": _template(request)},
        )
    )
    assert room == DeviceRoom()
    assert found.exclusions == []
    assert [(u.why, u.todo) for u in found.unchecked] == [
        (f"its devices are picked by a rule doctor can't evaluate (`{LOWER}`)", SEE)
    ]
    assert found.unchecked[0].detail.endswith(
        f"2 unallocated devices might match: {DRIVER}/a/gpu-0, {DRIVER}/a/gpu-1"
    )


def test_a_selector_that_refuses_before_one_doctor_cannot_evaluate_refuses() -> None:
    """The class's selector refuses every device, so the request's, which doctor can't
    evaluate, is never reached (`isSelectable` returns at the class's refusal): the request is
    counted, with no device."""
    request = _selecting(LOWER)
    room, found = _run(
        _reads(
            [_indexed("a", 2)],
            classes=[_class(DRIVER, f"device.attributes['{DRIVER}'].index > 7")],
            templates={"t": _template(request)},
        )
    )
    assert room == DeviceRoom(
        (("worker", Resources.of({GPUS: 1})),),
        (("a", Resources(), Resources()), ("b", Resources(), Resources())),
        offered=((GPUS, ()),),
        classes=((GPUS, DRIVER),),
    )
    assert (found.unchecked, found.exclusions) == ([], [])


def test_devices_allocated_or_tainted_are_not_free_for_a_rule_doctor_cannot_evaluate() -> None:
    tainted = _indexed("a", 2)
    tainted["spec"]["devices"][1]["taints"] = [{"key": "broken", "effect": "NoExecute"}]
    reads = _reads([tainted], [_allocated("a", "gpu-0")], classes=[_class(DRIVER, LOWER)])
    room, found = _run(reads)
    assert room == DeviceRoom()
    assert [(e.reason, e.everywhere) for e in found.exclusions] == [
        ("no device is free that could be of the kind its request 'gpu' asks for", True)
    ]
    assert found.exclusions[0].detail.endswith(
        "none of the 1 untainted devices no selector refuses is unallocated"
    )
    free = _indexed("b", 1)
    room, found = _run(
        _reads([tainted, free], [_allocated("a", "gpu-0")], classes=[_class(DRIVER, LOWER)])
    )
    assert found.exclusions == []
    assert [(u.why, u.todo) for u in found.unchecked] == [
        (f"its devices are picked by a rule doctor can't evaluate (`{LOWER}`)", SEE)
    ]
    assert found.unchecked[0].detail.endswith(
        f"1 unallocated devices might match: {DRIVER}/b/gpu-0"
    )


def test_a_long_expression_is_shown_cut_and_without_backquotes() -> None:
    long = "device.attributes['" + DRIVER + "'].model.lowerAscii() == '`" + "x" * 200 + "'"
    room, found = _run(_reads([_indexed("a", 1)], classes=[_class(DRIVER, long)]))
    assert room == DeviceRoom()
    shown = long.replace("`", "'")[:99] + "…"
    assert [u.why for u in found.unchecked] == [
        f"its devices are picked by a rule doctor can't evaluate (`{shown}`)"
    ]
