"""Kubernetes quantities and docker image references."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truegreen.container_resources import parse_requests_flag, requirement_problems
from truegreen.images import ImageReferenceError, keyring_key, parse_image
from truegreen.quantity import (
    QuantityError,
    Resources,
    format_amount,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Decimal("0.5")),
        ("2", Decimal(2)),
        ("1.5Gi", Decimal(1.5 * 1024**3)),
        ("1e3", Decimal(1000)),
        ("1E-3", Decimal("0.001")),
        ("128Mi", Decimal(128 * 1024**2)),
        ("1k", Decimal(1000)),
        ("100n", Decimal("0.0000001")),
        (".5", Decimal("0.5")),
        ("+3", Decimal(3)),
    ],
)
def test_valid_quantities(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text", ["", "0x10", "1.5.2", "Gi", "1gi", "1 Gi", "1KiB", "abc", "1e", "--1"]
)
def test_invalid_quantities(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_requests_flag_uses_scheduler_units() -> None:
    assert parse_requests_flag("cpu=4,memory=16Gi,nvidia.com/gpu=1") == Resources.of(
        {"cpu": 4000, "memory": 16 * 1024**3, "nvidia.com/gpu": 1}
    )
    # CPU rounds up to whole millicores; other resources to whole units
    assert parse_requests_flag("cpu=0.0001,memory=1.5").as_dict() == {"cpu": 1, "memory": 2}


@pytest.mark.parametrize("text", ["", "cpu", "cpu=", "=4", "cpu=-1", "cpu=lots"])
def test_bad_requests_flag(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_requests_flag(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # pkg/apis/core/validation validateContainerResourceName, ValidateResourceQuantityValue
        ("gpu=1", "must be a standard resource for containers"),
        ("bad name!=4", "name part must consist of alphanumeric characters"),
        ("pods=1", "must be a standard resource for containers"),
        ("nvidia.com/gpu=500m", "must be an integer"),
        ("nvidia.com/gpu=0.5", "must be an integer"),
        ("Nvidia.com/gpu=1", "prefix part must be a lowercase RFC 1123 subdomain"),
        ("a/b/c=1", "a qualified name must consist of an optional prefix"),
        ("nvidia.com/gpu=-1", "must be greater than or equal to 0"),
        # A ResourceList is a map: the config file's job-requests refuses a key twice too.
        ("cpu=1000,cpu=4", "'cpu' is named twice"),
        ("cpu=4, memory=1Gi,cpu=4", "'cpu' is named twice"),
    ],
)
def test_requests_flag_refuses_what_the_api_server_refuses(text: str, why: str) -> None:
    with pytest.raises(QuantityError, match=why):
        parse_requests_flag(text)


@pytest.mark.parametrize(
    "text", ["hugepages-2Mi=1Gi", "example.kubernetes.io/x=0.5", "cpu=500m", "ephemeral-storage=1G"]
)
def test_requests_flag_takes_what_a_container_may_ask_for(text: str) -> None:
    assert not parse_requests_flag(text).is_zero


@pytest.mark.parametrize(
    ("resources", "problems"),
    [
        ({"limits": {"nvidia.com/gpu": 1}}, []),
        ({"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}, []),
        (
            {"requests": {"nvidia.com/gpu": 1}},
            ["c.limits: Required value: Limit must be set for non overcommitable resources"],
        ),
        (
            {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}},
            ['c.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'],
        ),
        (
            {"requests": {"cpu": "3"}, "limits": {"cpu": "2"}},
            ['c.requests: Invalid value: "3": must be less than or equal to cpu limit of 2'],
        ),
        (
            {"limits": {"nvidia.com/gpu": "500m"}},
            ['c.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer'],
        ),
        (
            {"requests": {"cpu": "-1"}},
            ['c.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
        ),
    ],
)
def test_requirement_problems_in_the_api_servers_words(
    resources: dict[str, object], problems: list[str]
) -> None:
    assert requirement_problems(resources, "c") == problems


@given(st.text(max_size=30))
def test_any_text_is_a_quantity_or_a_clean_error(text: str) -> None:
    message = ""
    try:
        parse_quantity(text)
    except QuantityError as error:
        message = str(error)
    assert "\n" not in message.replace(repr(text), "")


def test_format_amount() -> None:
    assert format_amount("cpu", 1500) == "1.5 CPUs"
    assert format_amount("cpu", 1000) == "1 CPU"
    assert format_amount("memory", 16 * 1024**3) == "16 GiB"
    assert format_amount("nvidia.com/gpu", 2) == "2 nvidia.com/gpu"


def test_one_device_of_a_class_is_said_in_the_singular() -> None:
    """Devices of dynamic resource allocation are counted under `<DeviceClass> devices`
    (quantity.devices_of), a noun: one of them is `1 gpu.nvidia.com device`, whatever
    request name the count carries."""
    from truegreen.quantity import devices_of

    assert devices_of("gpu.nvidia.com") == "gpu.nvidia.com devices"
    assert format_amount(devices_of("gpu.nvidia.com"), 1) == "1 gpu.nvidia.com device"
    assert format_amount(devices_of("gpu.nvidia.com"), 0) == "0 gpu.nvidia.com devices"
    assert format_amount(devices_of("gpu.nvidia.com"), 2) == "2 gpu.nvidia.com devices"
    assert format_amount(f"{devices_of('gpu.nvidia.com')} (gpu)", 1) == (
        "1 gpu.nvidia.com device (gpu)"
    )


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("python", "docker.io/library/python:latest"),
        ("python:3.11", "docker.io/library/python:3.11"),
        ("team/app:v1", "docker.io/team/app:v1"),
        ("registry.example.com/team/app", "registry.example.com/team/app:latest"),
        ("localhost:5000/app:v2", "localhost:5000/app:v2"),
        ("127.0.0.1:5000/app", "127.0.0.1:5000/app:latest"),
        ("index.docker.io/library/busybox:1", "docker.io/library/busybox:1"),
        ("app@sha256:" + "a" * 64, "docker.io/library/app@sha256:" + "a" * 64),
        ("r.example/app:v1@sha256:" + "b" * 64, "r.example/app:v1@sha256:" + "b" * 64),
    ],
)
def test_image_normalisation(text: str, normalised: str) -> None:
    assert str(parse_image(text)) == normalised


@pytest.mark.parametrize("text", ["", "team/UPPER", "app:", "app@sha256:xyz", " app", "a//b"])
def test_invalid_images(text: str) -> None:
    with pytest.raises(ImageReferenceError):
        parse_image(text)


@given(st.text(max_size=60))
def test_any_text_is_an_image_or_a_clean_error(text: str) -> None:
    message = ""
    try:
        parse_image(text)
    except ImageReferenceError as error:
        message = str(error)
    assert "\n" not in message.replace(repr(text), "")


def test_registry_keys_of_docker_configs() -> None:
    """keyring.go BasicDockerKeyring.Add: url.Parse keeps the host's case."""
    assert keyring_key("https://index.docker.io/v1/") == "index.docker.io"
    assert keyring_key("registry.example.com:5000") == "registry.example.com:5000"
    assert keyring_key("https://Registry.Example.com/v2/") == "Registry.Example.com"
