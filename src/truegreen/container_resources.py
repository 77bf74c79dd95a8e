"""The API server's rules for what a container may request, and `--job-requests` read by them.

kube-apiserver refuses a pod, or a Job whose template breaks them, before anything is scheduled
(pkg/apis/core/validation/validation.go `ValidateResourceRequirements`,
`validateContainerResourceName`, `ValidateResourceQuantityValue`; pkg/apis/core/helper):
- a name without `/` must be one of a container's standard resources (`cpu`, `memory`,
  `ephemeral-storage`, `hugepages-<size>`); a name with one must be a qualified name, and one
  outside `kubernetes.io` an extended resource name (`requests.<name>` qualified too);
- every amount is at least 0, and an extended resource's is a whole number;
- an amount requested is at most its limit; an extended resource or huge pages may not be
  overcommitted: a request needs a limit, and equals it.
The messages are the API server's, so an operator can search for them.
"""

from collections.abc import Mapping
from decimal import Decimal

from truegreen.apinames import qualified_name_problem
from truegreen.quantity import (
    QuantityError,
    Resources,
    parse_quantity,
    scheduler_units,
)

_STANDARD_FOR_CONTAINERS = frozenset({"cpu", "memory", "ephemeral-storage"})
_HUGE_PAGES = "hugepages-"
_NATIVE_DOMAIN = "kubernetes.io/"


def _is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_DOMAIN in name


def _is_huge_pages(name: str) -> bool:
    return name.startswith(_HUGE_PAGES)


def is_extended(name: str) -> bool:
    """An extended resource (`nvidia.com/gpu`): outside `kubernetes.io`, and qualified even as
    a quota's `requests.<name>` (helper.IsExtendedResourceName)."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return qualified_name_problem(f"requests.{name}") is None


def overcommit_allowed(name: str) -> bool:
    """Whether a request may be below its limit, or stand without one
    (helper.IsOvercommitAllowed): native resources other than huge pages."""
    return _is_native(name) and not _is_huge_pages(name)


def name_problem(name: str) -> str | None:
    """Why a container may not request `name`, in the API server's words; None when it may."""
    qualified = qualified_name_problem(name)
    if qualified is not None:
        return qualified
    if "/" not in name:
        if name in _STANDARD_FOR_CONTAINERS or _is_huge_pages(name):
            return None
        return "must be a standard resource for containers"
    if not _is_native(name) and not is_extended(name):
        return "doesn't follow extended resource name standard"
    return None


def amount_problem(name: str, amount: Decimal) -> str | None:
    """Why `amount` of `name` is refused, in the API server's words; None when it is not."""
    if amount < 0:
        return "must be greater than or equal to 0"
    if is_extended(name) and amount != amount.to_integral_value():
        return "must be an integer"
    return None


def requirement_problems(resources: object, path: str) -> list[str]:
    """The API server's refusals of one container's `resources`, each as
    `PATH.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer`."""
    if not isinstance(resources, Mapping):
        return []
    problems: list[str] = []
    amounts: dict[str, dict[str, tuple[str, Decimal]]] = {}
    for part in ("limits", "requests"):
        listed = resources.get(part)
        amounts[part] = {}
        if not isinstance(listed, Mapping):
            continue
        for name, value in listed.items():
            where = f"{path}.{part}[{name}]"
            text = str(value)
            wrong = name_problem(str(name))
            if wrong is not None:
                problems.append(f'{where}: Invalid value: "{name}": {wrong}')
            try:
                amount = parse_quantity(text)
            except QuantityError:
                problems.append(
                    f'{where}: Invalid value: "{text}": quantities must match the regular '
                    "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
                )
                continue
            refused = amount_problem(str(name), amount)
            if refused is not None:
                problems.append(f'{where}: Invalid value: "{text}": {refused}')
            amounts[part][str(name)] = (text, amount)
    for name, (text, request) in amounts["requests"].items():
        limit = amounts["limits"].get(name)
        if limit is None:
            if not overcommit_allowed(name):
                problems.append(
                    f"{path}.limits: Required value: Limit must be set for non overcommitable "
                    "resources"
                )
        elif request != limit[1] and not overcommit_allowed(name):
            problems.append(
                f'{path}.requests: Invalid value: "{text}": must be equal to {name} limit of '
                f"{limit[0]}"
            )
        elif request > limit[1]:
            problems.append(
                f'{path}.requests: Invalid value: "{text}": must be less than or equal to '
                f"{name} limit of {limit[0]}"
            )
    return problems


def parse_requests_flag(text: str) -> Resources:
    """`cpu=4,memory=16Gi,nvidia.com/gpu=1` as Resources; QuantityError naming the bad part,
    where the API server would refuse a container that requests it."""
    amounts: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        raw_name, sep, value = part.partition("=")
        name = raw_name.strip()
        if not sep or not name:
            raise QuantityError(f"{part!r} is not NAME=QUANTITY (example: cpu=4,memory=16Gi)")
        wrong = name_problem(name)
        if wrong is not None:
            raise QuantityError(f"{name!r} is not a resource a container can ask for: {wrong}")
        if name in amounts:
            # A container's requests hold each name once (a ResourceList is a map), as the
            # config file's job-requests does; the last of two would be a guess.
            raise QuantityError(f"{name!r} is named twice")
        quantity = parse_quantity(value)
        refused = amount_problem(name, quantity)
        if refused is not None:
            raise QuantityError(f"{part!r}: the amount {refused}")
        amounts[name] = scheduler_units(name, quantity)
    if not amounts:
        raise QuantityError(f"{text!r} names no resources (example: cpu=4,memory=16Gi)")
    return Resources.of(amounts)
