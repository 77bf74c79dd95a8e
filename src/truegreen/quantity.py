"""Kubernetes resource quantities (`500m`, `1.5Gi`, `1e3`) and resource lists.

Values are compared the way kube-scheduler compares them: CPU in whole millicores, every other
resource in whole units, each rounded up.
"""

import functools
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation

from msgspec import Struct

_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exp>[eE][+-]?\d+)|(?P<decimal>n|u|m|k|M|G|T|P|E)?)$"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
EPHEMERAL_STORAGE = "ephemeral-storage"
_DEVICES = " devices"
"""How the name of a count of devices of dynamic resource allocation ends (`devices_of`)."""


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(text: str) -> Decimal:
    """The exact value of a quantity string; QuantityError when it does not follow the grammar."""
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise QuantityError(f"{text!r} is not a quantity (examples: 500m, 2, 1.5Gi, 1e3)")
    try:
        number = Decimal(match["number"])
        if match["binary"]:
            return number * (Decimal(1024) ** _BINARY[match["binary"]])
        if match["exp"]:
            exponent = int(match["exp"][1:])
            if abs(exponent) > 30:
                raise QuantityError(f"{text!r} is out of range")
            return number.scaleb(exponent)
        if match["decimal"]:
            return number.scaleb(_DECIMAL[match["decimal"]])
        return number
    except InvalidOperation:
        raise QuantityError(f"{text!r} is not a quantity") from None


def scheduler_units(resource: str, value: Decimal) -> int:
    """The integer the scheduler compares: millicores for CPU, whole units otherwise, rounded up."""
    if resource == CPU:
        return math.ceil(value * 1000)
    return math.ceil(value)


class Resources(Struct, frozen=True):
    """Amounts per resource name, in scheduler units (millicores for CPU)."""

    amounts: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, amounts: Mapping[str, int]) -> "Resources":
        """Resources from a mapping, dropping zero amounts so equal lists compare equal."""
        return cls(tuple(sorted((k, v) for k, v in amounts.items() if v)))

    @classmethod
    def parse(cls, quantities: Mapping[str, object]) -> "Resources":
        """Resources from an API resource list (`{"cpu": "500m"}`); QuantityError on a bad value."""
        return _parse_list(tuple((str(name), str(q)) for name, q in quantities.items()))

    def as_dict(self) -> dict[str, int]:
        """The amounts as a mapping."""
        return dict(self.amounts)

    def get(self, resource: str) -> int:
        """The amount of one resource (0 when absent)."""
        return self.as_dict().get(resource, 0)

    @property
    def names(self) -> frozenset[str]:
        """The resources with a non-zero amount."""
        return frozenset(name for name, _ in self.amounts)

    def __add__(self, other: "Resources") -> "Resources":
        merged = self.as_dict()
        for name, amount in other.amounts:
            merged[name] = merged.get(name, 0) + amount
        return Resources.of(merged)

    def __sub__(self, other: "Resources") -> "Resources":
        merged = self.as_dict()
        for name, amount in other.amounts:
            merged[name] = merged.get(name, 0) - amount
        return Resources.of(merged)

    def __mul__(self, count: int) -> "Resources":
        """`count` pods' worth of these amounts."""
        return Resources.of({name: amount * count for name, amount in self.amounts})

    def max_with(self, other: "Resources") -> "Resources":
        """Per resource, the larger of the two amounts."""
        merged = self.as_dict()
        for name, amount in other.amounts:
            merged[name] = max(merged.get(name, 0), amount)
        return Resources.of(merged)

    def replaced(self, other: "Resources", names: Iterable[str]) -> "Resources":
        """These resources, with `names` taken from `other` instead."""
        merged = self.as_dict()
        for name in names:
            merged[name] = other.get(name)
        return Resources.of(merged)

    @property
    def is_zero(self) -> bool:
        """True when no resource is requested."""
        return not self.amounts


def devices_of(device_class: str) -> str:
    """The name the devices of a DeviceClass are counted under as a resource: `gpu.nvidia.com
    devices` (`gpu.nvidia.com devices (gpu)` where a request of that class takes other devices
    than its others). A resource name holds no space (core/v1 validation: a qualified name), so
    it never meets one the machines report."""
    return f"{device_class}{_DEVICES}"


def is_devices(resource: str) -> bool:
    """Whether `resource` counts devices of a DeviceClass (`devices_of`): a plural noun."""
    return _DEVICES in resource


def format_amount(resource: str, amount: int) -> str:
    """A human amount: `1.5 CPUs`, `16 GiB`, `2 nvidia.com/gpu`, `1 gpu.nvidia.com device`."""
    if resource == CPU:
        cores = Decimal(amount) / 1000
        return f"{cores.normalize():f} CPU" + ("" if cores == 1 else "s")
    if resource in (MEMORY, EPHEMERAL_STORAGE):
        for unit, power in (("TiB", 4), ("GiB", 3), ("MiB", 2), ("KiB", 1)):
            if abs(amount) >= 1024**power:
                value = (Decimal(amount) / (1024**power)).quantize(Decimal("0.1"))
                return f"{value.normalize():f} {unit}"
        return f"{amount} bytes"
    if amount == 1 and is_devices(resource):
        return "1 " + resource.replace(_DEVICES, " device", 1)
    return f"{amount} {resource}"


@functools.lru_cache(maxsize=4096)
def _parse_list(quantities: tuple[tuple[str, str], ...]) -> Resources:
    # A cluster's pods repeat a few resource lists thousands of times; each is parsed once.
    return Resources.of({name: scheduler_units(name, parse_quantity(q)) for name, q in quantities})
