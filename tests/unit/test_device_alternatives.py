"""A request's alternatives (`firstAvailable`) and selectors doctor can't evaluate, pinned to
the words and amounts doctor reports (doctor/checks/capacity/filters/device_room.py
`_first_available`, `_unevaluable`).

Source: staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
allocator_stable.go: the allocator takes the first alternative it can meet; a device a selector
refuses, or that is allocated or tainted, is never taken. Devices: dra-example-driver's
`index` and `model` attributes (tests/unit/test_device_selector_room.py `_indexed`).
"""

from typing import Any

from tests.unit.test_device_selector_room import LOWER, _indexed
from tests.unit.test_devices import DRIVER, GPUS, _allocated, _class, _reads, _run, _template
from truegreen.doctor.checks.capacity.filters.framework import DeviceRoom, Exclusion, Unchecked
from truegreen.quantity import Resources

LISTS = "`kubectl get resourceslices,resourceclaims --all-namespaces -o wide`"
RULE = "whether the machines have the devices the training job asks for"
TODO = f"Check the devices each machine has free with {LISTS}"
NOT_EVALUATED = (
    "worker: request gpu: a CEL selector of DeviceClass gpu.example.com or of the request not "
    "evaluated (device gpu.example.com/a/gpu-0: Undefined variable or function: 'lowerAscii'. "
    "Check that the variable is defined in the context or that the function name is spelled "
    f"correctly.): {LOWER}"
)


def _alternatives(*alternatives: dict[str, Any]) -> dict[str, Any]:
    return {"name": "gpu", "firstAvailable": list(alternatives)}


def _alternative(name: str, device_class: str = DRIVER, at_least: int | None = None) -> Any:
    found: dict[str, Any] = {"name": name, "deviceClassName": device_class}
    if at_least is not None:
        expression = f"device.attributes['{DRIVER}'].index >= {at_least}"
        found["selectors"] = [{"cel": {"expression": expression}}]
    return found


def _judged(request: dict[str, Any]) -> Any:
    return _run(_reads([_indexed("a", 2), _indexed("b", 1)], templates={"t": _template(request)}))


def test_alternatives_that_might_each_be_met_are_unchecked() -> None:
    room, found = _judged(_alternatives(_alternative("a"), _alternative("b")))
    assert room == DeviceRoom()
    assert found.unchecked == [
        Unchecked(
            RULE,
            "it lists alternative devices to choose from, which doctor doesn't evaluate",
            TODO,
            "worker: request gpu: firstAvailable a, b: 2 might be met",
        )
    ]
    assert found.exclusions == []


def test_the_one_alternative_left_is_the_request() -> None:
    """`big` takes only devices of index 8 and up (none exist): `small` is what the allocator
    would take, one device of index 1 or up (gpu-1 on machine a)."""
    request = _alternatives(_alternative("big", at_least=8), _alternative("small", at_least=1))
    room, found = _judged(request)
    assert room == DeviceRoom(
        (("worker", Resources.of({GPUS: 1})),),
        (("a", Resources.of({GPUS: 1}), Resources()), ("b", Resources(), Resources())),
        offered=((GPUS, ("a",)),),
        classes=((GPUS, DRIVER),),
    )
    assert (found.unchecked, found.exclusions) == ([], [])


def test_no_alternative_left_refuses_every_machine() -> None:
    request = _alternatives(_alternative("big", at_least=8), _alternative("huge", at_least=10))
    room, found = _judged(request)
    assert room == DeviceRoom()
    assert found.unchecked == []
    assert found.exclusions == [
        Exclusion(
            "worker",
            ("a", "b"),
            "no device is free of any kind its request 'gpu' accepts",
            f"free a device of one of those kinds, or add machines that have one ({LISTS} lists "
            "them)",
            "worker: request gpu: firstAvailable big, huge: no unallocated, untainted device "
            "that their selectors might take",
            everywhere=True,
            measured=True,
        )
    ]


def test_an_alternative_of_a_class_that_does_not_exist_leaves_every_one_unchecked() -> None:
    """The allocator fails on a missing class: nothing is counted, whatever the others say."""
    request = _alternatives(_alternative("a", "nope"), _alternative("b", at_least=8))
    room, found = _judged(request)
    assert room == DeviceRoom()
    assert [u.detail for u in found.unchecked] == [
        "worker: request gpu: firstAvailable a, b: 2 might be met"
    ]
    assert found.exclusions == []


def test_an_empty_list_of_alternatives_is_unchecked() -> None:
    room, found = _judged({"name": "gpu", "firstAvailable": []})
    assert room == DeviceRoom()
    assert [u.detail for u in found.unchecked] == [
        "worker: request gpu has firstAvailable (or no exactly)"
    ]


def test_an_unevaluable_selector_with_every_device_allocated_refuses_every_machine() -> None:
    reads = _reads(
        [_indexed("a", 2)], [_allocated("a", "gpu-0", "gpu-1")], classes=[_class(DRIVER, LOWER)]
    )
    room, found = _run(reads)
    assert room == DeviceRoom()
    assert found.unchecked == []
    assert found.exclusions == [
        Exclusion(
            "worker",
            ("a", "b"),
            "no device is free that could be of the kind its request 'gpu' asks for",
            f"free a device of that kind, or add machines that have one ({LISTS} lists them)",
            f"{NOT_EVALUATED}; none of the 2 untainted devices no selector refuses is unallocated",
            everywhere=True,
            measured=True,
        )
    ]


def test_an_unevaluable_selector_with_a_device_free_names_the_expression() -> None:
    reads = _reads([_indexed("a", 2)], [_allocated("a", "gpu-0")], classes=[_class(DRIVER, LOWER)])
    room, found = _run(reads)
    assert room == DeviceRoom()
    assert found.exclusions == []
    assert found.unchecked == [
        Unchecked(
            RULE,
            f"its devices are picked by a rule doctor can't evaluate (`{LOWER}`)",
            TODO,
            f"{NOT_EVALUATED}; 1 unallocated devices might match: gpu.example.com/a/gpu-1",
        )
    ]


def test_a_long_unevaluable_expression_is_shown_cut_at_a_hundred_characters() -> None:
    """The headline shows 100 characters of the expression on one line (its backticks made
    quotes, so it cannot close the command it is shown as); the details keep 1,000."""
    padding = " && ".join(f"device.attributes['{DRIVER}'].index != {n}" for n in range(10, 14))
    expression = f"{LOWER} &&\n  {padding} && '`' != ''"
    reads = _reads([_indexed("a", 2)], classes=[_class(DRIVER, expression)])
    _, found = _run(reads)
    (unchecked,) = found.unchecked
    shown = " ".join(expression.replace("`", "'").split())
    assert len(shown) > 100, "precondition: longer than is shown"
    assert unchecked.why == (
        f"its devices are picked by a rule doctor can't evaluate (`{shown[:99]}…`)"
    )
    assert f"): {expression}; 2 unallocated devices might match" in unchecked.detail
