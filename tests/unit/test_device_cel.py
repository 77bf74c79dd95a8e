"""Device selectors (CEL) evaluated as kube-scheduler's DRA allocator does
(doctor/knowledge/device_cel.py).

Sources: staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go (the `device` variable,
`parseQualifiedName`, the empty-map default, `getAttributeValue`); staging/src/k8s.io/api/
resource/v1/types.go (CELSelectorExpressionMaxLength); k8s.io/apiserver/pkg/cel/library
quantity.go and semverlib.go; the devices are NVIDIA/k8s-dra-driver-gpu's (cmd/gpu-kubelet-plugin/
deviceinfo.go) and kubernetes-sigs/dra-example-driver's (cmd/dra-example-kubeletplugin/
discovery.go).
"""

import subprocess
import sys
from typing import Any

import pytest

from tests.support.nvidia_dra import A100, CLASS_SELECTOR, H200, NVIDIA, nvidia_slice
from truegreen.doctor.knowledge.device_cel import (
    MAX_LENGTH,
    Selectors,
    Unevaluable,
    device_variable,
)

EXAMPLE = "gpu.example.com"
KEY = ("d", "p", "gpu-0")


def _nvidia(gpu: Any = H200) -> dict[str, Any]:
    device: dict[str, Any] = nvidia_slice("gpu-1", gpu, 1)["spec"]["devices"][0]
    return device


def _example() -> dict[str, Any]:
    return {
        "name": "gpu-0",
        "attributes": {
            "index": {"int": 0},
            "model": {"string": "LATEST-GPU-MODEL"},
            "driverVersion": {"version": "1.0.0"},
            "dra.example.com/driverVersion": {"version": "1.2.0"},
        },
        "capacity": {"memory": {"value": "80Gi"}},
    }


def _judge(expression: str, driver: str = NVIDIA, device: Any = None) -> bool | Unevaluable:
    return Selectors().matches(expression, KEY, driver, _nvidia() if device is None else device)


@pytest.mark.parametrize(
    ("expression", "h200", "a100"),
    [
        ('device.driver == "gpu.nvidia.com"', True, True),
        (CLASS_SELECTOR, True, True),
        ('device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"', True, False),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0', True, True),
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("100Gi")) >= 0', True, False),
        ('device.capacity["gpu.nvidia.com"].memory == quantity("81920Mi")', False, True),
        ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("80Gi"))', False, False),
        (
            '"gpu.nvidia.com" in device.attributes && '
            'device.attributes["gpu.nvidia.com"].type == "gpu"',
            True,
            True,
        ),
        (
            'device.attributes["gpu.nvidia.com"].cudaComputeCapability'
            '.isGreaterThan(semver("8.0.0"))',
            True,
            False,
        ),
        ('device.attributes["gpu.nvidia.com"].driverVersion.major() == 570', True, True),
        (
            'device.attributes["gpu.nvidia.com"].architecture in ["Hopper", "Blackwell"]',
            True,
            False,
        ),
        ('"resource.kubernetes.io" in device.attributes', False, False),
    ],
)
def test_nvidia_gpus_by_the_forms_selectors_use(expression: str, h200: bool, a100: bool) -> None:
    assert (_judge(expression), _judge(expression, device=_nvidia(A100))) == (h200, a100)


def test_names_without_a_domain_are_the_driver_s_and_versions_are_semver() -> None:
    assert device_variable(EXAMPLE, _example()) == {
        "driver": EXAMPLE,
        "attributes": {
            EXAMPLE: {
                "index": 0,
                "model": "LATEST-GPU-MODEL",
                "driverVersion": {"@semver": "1.0.0"},
            },
            "dra.example.com": {"driverVersion": {"@semver": "1.2.0"}},
        },
        "capacity": {EXAMPLE: {"memory": {"@quantity": "85899345920"}}},
    }
    newer = 'device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))'
    assert _judge(newer, EXAMPLE, _example()) is True
    own = 'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))'
    assert _judge(own, EXAMPLE, _example()) is False
    assert _judge('"gpu.nvidia.com" in device.attributes', EXAMPLE, _example()) is False


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1"))', True),
        ('semver("1.0.0-alpha.beta").isGreaterThan(semver("1.0.0-alpha.1"))', True),
        ('semver("1.2.3+build.5").compareTo(semver("1.2.3")) == 0', True),
        ('semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', True),
        ('isSemver("1.0") || isQuantity("1.5.5")', False),
        ('isSemver("1.0.0") && isQuantity("500m")', True),
        ('quantity("1500m").compareTo(quantity("1.5")) == 0', True),
        ('quantity("-2Ki").sign() == -1 && quantity("0").sign() == 0', True),
        ('quantity("2k").isInteger() && quantity("2k").asInteger() == 2000', True),
        ('quantity("1500m").isInteger()', False),
        ("false && quantity('bad').sign() == 1", False),
    ],
)
def test_the_quantity_and_semver_libraries(expression: str, expected: bool) -> None:
    assert _judge(expression) is expected


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        # A missing domain is an empty map, and `in` tells it apart: not filled in.
        (
            '"x.com" in device.attributes || has(device.attributes["dra.example.com"].model)',
            "device d/p/gpu-0: no entry 'dra.example.com'",
        ),
        # Filled in, the domain's map has no such key: an error in Kubernetes too.
        ('device.attributes["dra.example.com"].model == "x"', "device d/p/gpu-0: no entry 'model'"),
        ("quantity('bad').sign() == 1", "device d/p/gpu-0: 'bad' is not a quantity"),
        ("semver('1.0').major() == 1", "device d/p/gpu-0: '1.0' is not a semantic version"),
        ("device.capacity['gpu.nvidia.com'].memory.major() == 1", "device d/p/gpu-0: not a semver"),
        ("device.driver", "evaluates to str, not bool"),
        (
            "[1, 2].all(x, [3].exists(y, y > x))",
            "more than one loop, whose cost doctor doesn't bound",
        ),
    ],
)
def test_what_doctor_cannot_evaluate_says_why(expression: str, reason: str) -> None:
    assert _judge(expression) == Unevaluable(expression, reason)


def test_compile_errors_unknown_functions_and_runtime_errors_are_unevaluable() -> None:
    for expression, start in [
        ("device.driver ==", "compile error: Failed to parse expression"),
        (
            "device.attributes['gpu.nvidia.com'].productName.lowerAscii() == 'x'",
            "device d/p/gpu-0: Undefined variable or function: 'lowerAscii'",
        ),
        ("cel.bind(d, device.driver, d == 'x')", "device d/p/gpu-0: Undefined variable"),
        ("device.attributes['gpu.nvidia.com'].nothing == 1", "device d/p/gpu-0: no entry"),
    ]:
        judged = _judge(expression)
        assert isinstance(judged, Unevaluable), expression
        assert judged.reason.startswith(start), judged.reason


def test_a_library_function_that_fails_writes_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """The bindings write a Python function's exception to the standard error stream."""
    assert isinstance(_judge("quantity('bad').sign() == 1"), Unevaluable)
    assert capfd.readouterr() == ("", "")


def test_an_expression_longer_than_the_api_server_stores_is_not_compiled() -> None:
    long = "device.driver == '" + "x" * MAX_LENGTH + "'"
    assert _judge(long) == Unevaluable(long[:200], "longer than 10240 characters")


def test_a_device_attribute_kubernetes_refuses_is_unevaluable() -> None:
    device = {"name": "gpu-0", "attributes": {"v": {"version": "1.0"}}}
    assert _judge("true", EXAMPLE, device) == Unevaluable(
        "true", "device d/p/gpu-0: '1.0' is not a semantic version"
    )
    assert _judge("true", EXAMPLE, {"attributes": {"v": {"list": []}}}) == Unevaluable(
        "true", "device d/p/gpu-0: unsupported attribute value ['list']"
    )


def test_evaluations_are_bounded_in_count_and_time() -> None:
    selectors = Selectors(max_evaluations=1)
    assert selectors.matches(CLASS_SELECTOR, KEY, NVIDIA, _nvidia()) is True
    # The same device and expression again is remembered, not evaluated.
    assert selectors.matches(CLASS_SELECTOR, KEY, NVIDIA, _nvidia()) is True
    assert selectors.matches(CLASS_SELECTOR, ("d", "p", "gpu-1"), NVIDIA, _nvidia()) == (
        Unevaluable(CLASS_SELECTOR, "doctor's bound on evaluating device rules was reached")
    )
    now = [0.0]
    timed = Selectors(budget_s=2.0, clock=lambda: now[0])
    assert timed.matches(CLASS_SELECTOR, KEY, NVIDIA, _nvidia()) is True
    now[0] = 2.5
    assert timed.matches(CLASS_SELECTOR, ("d", "p", "gpu-1"), NVIDIA, _nvidia()) == (
        Unevaluable(CLASS_SELECTOR, "doctor's bound on evaluating device rules was reached")
    )


def test_evaluating_loads_the_bindings_alone() -> None:
    """The bindings' package also loads its command-line tool (typer, rich, prompt_toolkit),
    which doctor never uses and whose import costs 0.2 s."""
    code = (
        "import sys\n"
        "from truegreen.doctor.knowledge.device_cel import Selectors\n"
        f"assert Selectors().matches({CLASS_SELECTOR!r}, ('d', 'p', 'g'), {NVIDIA!r}, "
        "{'attributes': {'type': {'string': 'gpu'}}}) is True\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('cel', 'rich', 'typer', 'prompt_toolkit', 'pygments')))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "[]\n", "")


def test_a_failed_function_spoils_only_its_own_evaluation() -> None:
    selectors = Selectors()
    bad = "quantity('bad').sign() == 1"
    assert isinstance(selectors.matches(bad, KEY, NVIDIA, _nvidia()), Unevaluable)
    assert selectors.matches(CLASS_SELECTOR, KEY, NVIDIA, _nvidia()) is True
    other = ("d", "p", "gpu-1")
    assert selectors.matches(CLASS_SELECTOR, other, NVIDIA, _nvidia(A100)) is True


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('has(device.attributes["dra.example.com"].model)', False),
        ('!has(device.capacity["dra.example.com"].memory)', True),
        ('size(device.attributes["dra.example.com"]) == 0', True),
        (
            'has(device.attributes["a.com"].x) || has(device.attributes["b.com"].x) || '
            'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("1Gi"))',
            True,
        ),
    ],
)
def test_a_domain_the_device_lacks_reads_as_an_empty_map(expression: str, expected: bool) -> None:
    """compile.go `newStringInterfaceMapWithDefault`: the bindings raise where Kubernetes reads
    an empty map; doctor fills the domain in when nothing else in the expression looks at the
    map of domains."""
    assert _judge(expression) is expected


def test_filled_in_domains_are_bounded() -> None:
    lookups = " || ".join(f'has(device.attributes["d{i}.com"].x)' for i in range(5))
    # The bindings name the last failed lookup: d4 to d1 are filled in, d0 is one too many.
    assert _judge(lookups) == Unevaluable(lookups, "device d/p/gpu-0: no entry 'd0.com'")
