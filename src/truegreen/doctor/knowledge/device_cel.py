"""Device selectors (CEL) of dynamic resource allocation, evaluated as kube-scheduler does.

A DeviceClass's `spec.selectors[].cel.expression` and a request's own selectors decide which
devices a claim may take. The environment is Kubernetes' (staging/src/k8s.io/
dynamic-resource-allocation/cel/compile.go): one variable `device` with `driver`, `attributes`
and `capacity`; an attribute or capacity name without a domain belongs to the driver's domain
(`parseQualifiedName`); looking up a domain the device lacks gives an empty map
(`newStringInterfaceMapWithDefault`) while `in` still tells whether the device has it; attribute
values are int, bool, string or a semantic version, capacities are quantities; the `quantity()`
and `semver()` libraries of k8s.io/apiserver/pkg/cel/library add their comparisons.

The evaluator is common-expression-language (the Rust `cel` crate's Python bindings; the choice
and its measurements are in docs/scheduling.md). Where it cannot say what Kubernetes would, the
answer is `Unevaluable` with the reason, never a guess: a compile error, a function it lacks, a
runtime error, a bound reached, or `size()` and `matches()` where text beyond plain ASCII could
reach them (it counts bytes and reads regular expressions' classes as Unicode ones). The
evaluator raises where Kubernetes reads a missing domain as an empty map; doctor fills the
domain in where the expression can't tell a filled-in domain from a real one
(`Compiled.by_domain`), and calls it unevaluable elsewhere. The bounds are
Kubernetes' where it has one (CELSelectorExpressionMaxLength, 10 KiB) and doctor's own for the
runtime cost, which kube-scheduler bounds by CELSelectorExpressionMaxCost and doctor by a
wall-clock budget, a count of evaluations, and at most one loop (comprehension) per expression,
so that no expression's cost grows faster than its length times its input.
"""

import functools
import importlib.machinery
import importlib.util
import time
from collections.abc import Callable, Mapping
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.patterns import LazyPattern
from truegreen.quantity import QuantityError, parse_quantity

MAX_LENGTH: Final = 10 * 1024
"""resource/v1 CELSelectorExpressionMaxLength: the API server stores nothing longer."""
MAX_EVALUATIONS: Final = 20_000
"""Device evaluations per doctor run: 128 devices per slice (ResourceSliceMaxDevices) on
about 150 machines, each device judged by one class selector and one request selector."""
BUDGET_S: Final = 2.0
"""Wall-clock seconds for all evaluations of one run (a typical one takes 0.1 ms)."""
MAX_REASON: Final = 200
"""Characters of an evaluator's message kept in a reason."""

_QUANTITY: Final = "@quantity"
_SEMVER: Final = "@semver"
_SEMVER_TEXT = LazyPattern(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
"""blang/semver's `Parse` (semver.org 2.0.0), which `semver()` and version attributes use."""

_MACRO = LazyPattern(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(")
"""CEL's comprehension macros (cel-spec langdef.md, Macros)."""
_DEVICE = LazyPattern(r"\bdevice\b")
_LOOKUP = LazyPattern(r"\s*\.\s*(?:driver\b|(?:attributes|capacity)\s*\[)")
"""What may follow `device` for a missing domain to be filled in: `.driver`, or a lookup of
one domain. Anything else (`in device.attributes`, `size(device.capacity)`, the map bound to
a name) could tell a filled-in domain from a real one."""
MAX_FILLED: Final = 4
"""Missing domains filled in per evaluation."""

_TEXT_FUNCTION = LazyPattern(r"\b(?:size|matches)\s*\(")
"""`size()` and `matches()`, called or as methods: the evaluator counts a string's bytes where
CEL counts its code points (cel-spec langdef.md), and its regular expressions read `\\d`, `\\s`
and `\\w` as Unicode classes where RE2's are ASCII. On plain text the answers agree."""
_PLAIN_ESCAPE = LazyPattern(r"\\[\\'\"`?ntrf]")
"""CEL escapes that write plain text (or a backslash taken as one)."""
_ODD_ESCAPE = LazyPattern(r"\\[uUxX0-7abv]")
"""CEL escapes that may write text beyond plain ASCII: code points, bytes, control characters."""
_TEXT_REASON: Final = (
    "size() or matches() of text beyond plain ASCII, which the evaluator measures in bytes and "
    "matches with Unicode classes"
)


class Unevaluable(Struct, frozen=True):
    """An expression doctor cannot evaluate as Kubernetes would, and why (for --verbose)."""

    expression: str
    reason: str


class Compiled(Struct, frozen=True):
    """An expression that compiled, ready for devices."""

    expression: str
    program: Any
    """cel.Program: the bindings' type, kept opaque so the module is imported only when used."""
    by_domain: bool
    """Every use of `device` is `.driver` or a lookup of one domain: a domain the device lacks
    may be filled in with an empty map, as Kubernetes reads it, without the expression telling
    it from a real one."""
    reads_text: bool
    """It calls `size()` or `matches()`: a device's text beyond plain ASCII can't be judged."""


class _Version(Struct, frozen=True, order=True):
    major: int
    minor: int
    patch: int
    release: bool
    """No pre-release part: a release sorts after its pre-releases."""
    pre: tuple[tuple[int, int, str], ...]


def _version(text: object) -> _Version:
    """A semantic version's precedence (semver.org 2.0.0 item 11); ValueError when not one."""
    match = _SEMVER_TEXT.match(str(text)) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a semantic version")
    pre = tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in (match[4] or "").split(".") if p
    )
    return _Version(int(match[1]), int(match[2]), int(match[3]), not pre, pre)


def _tagged(value: object, tag: str) -> str:
    if not isinstance(value, Mapping) or set(value) != {tag}:
        raise TypeError(f"not a {tag[1:]}")
    return str(value[tag])


def _quantity_value(value: object) -> Decimal:
    return Decimal(_tagged(value, _QUANTITY))


def _quantity(text: object) -> dict[str, str]:
    """`quantity("80Gi")`: the value in one canonical form, so that equal amounts are equal."""
    try:
        value = parse_quantity(str(text)) if isinstance(text, str) else None
    except QuantityError:
        value = None
    if value is None:
        raise ValueError(f"{text!r} is not a quantity")
    return {_QUANTITY: format(value.normalize(), "f")}


def _semver(text: object) -> dict[str, str]:
    _version(text)
    return {_SEMVER: str(text)}


def _is(parse: Callable[[object], object]) -> Callable[[object], bool]:
    def check(text: object) -> bool:
        try:
            parse(text)
        except (ValueError, TypeError):
            return False
        return True

    return check


def _ordered(left: object, right: object) -> int:
    """The sign of left - right, for two quantities or two versions."""
    if isinstance(left, Mapping) and _SEMVER in left:
        first, second = _version(_tagged(left, _SEMVER)), _version(_tagged(right, _SEMVER))
        return int(first > second) - int(first < second)
    low, high = _quantity_value(left), _quantity_value(right)
    return int(low > high) - int(low < high)


def _part(index: int) -> Callable[[object], int]:
    def part(version: object) -> int:
        found = _version(_tagged(version, _SEMVER))
        return (found.major, found.minor, found.patch)[index]

    return part


def _as_integer(value: object) -> int:
    number = _quantity_value(value)
    if number != number.to_integral_value() or abs(number) >= 2**63:
        raise ValueError("the quantity is not an integer")
    return int(number)


FUNCTIONS: Final[Mapping[str, Callable[..., object]]] = {
    # k8s.io/apiserver/pkg/cel/library/quantity.go
    "quantity": _quantity,
    "isQuantity": _is(_quantity),
    "sign": lambda q: _ordered(q, {_QUANTITY: "0"}),
    "isInteger": _is(_as_integer),
    "asInteger": _as_integer,
    # k8s.io/apiserver/pkg/cel/library/semverlib.go
    "semver": _semver,
    "isSemver": _is(_semver),
    "major": _part(0),
    "minor": _part(1),
    "patch": _part(2),
    # both libraries
    "compareTo": _ordered,
    "isGreaterThan": lambda a, b: _ordered(a, b) > 0,
    "isLessThan": lambda a, b: _ordered(a, b) < 0,
}
"""The Kubernetes library functions DRA selectors use, over tagged maps."""


def _qualified(name: str, driver: str) -> tuple[str, str]:
    """compile.go `parseQualifiedName`: a name without a domain is the driver's."""
    domain, slash, rest = name.partition("/")
    return (domain, rest) if slash else (driver, name)


def _attribute(value: Mapping[str, Any]) -> object:
    """compile.go `getAttributeValue`: the one value set; ValueError for none or a bad version."""
    for key in ("int", "bool", "string"):
        if key in value:
            return value[key]
    if "version" in value:
        return _semver(value["version"])
    raise ValueError(f"unsupported attribute value {sorted(value)}")


def device_variable(driver: str, device: Mapping[str, Any]) -> dict[str, object]:
    """The `device` variable of one ResourceSlice device (compile.go `DeviceMatches`);
    ValueError for an attribute Kubernetes would refuse too."""
    attributes: dict[str, dict[str, object]] = {}
    for name, value in o.mapping(device.get("attributes")).items():
        domain, id_ = _qualified(str(name), driver)
        attributes.setdefault(domain, {})[id_] = _attribute(o.mapping(value))
    capacity: dict[str, dict[str, object]] = {}
    for name, value in o.mapping(device.get("capacity")).items():
        domain, id_ = _qualified(str(name), driver)
        capacity.setdefault(domain, {})[id_] = _quantity(o.mapping(value).get("value"))
    return {"driver": driver, "attributes": attributes, "capacity": capacity}


def _plain(text: str) -> bool:
    """Printable ASCII, tab, newline, carriage return and form feed: text the evaluator measures
    and matches as Kubernetes does (RE2's `\\s` is these four and the space)."""
    return all(" " <= c <= "~" or c in "\t\n\r\f" for c in text)


def _plain_source(expression: str) -> bool:
    """An expression whose own text writes only plain text: plain characters, and no escape
    that writes anything else."""
    return _plain(expression) and not _ODD_ESCAPE.pattern.search(
        _PLAIN_ESCAPE.pattern.sub("", expression)
    )


def _plain_device(device: Mapping[str, Any]) -> bool:
    """Every string attribute of the device is plain text."""
    return all(
        _plain(str(o.mapping(value).get("string") or ""))
        for value in o.mapping(device.get("attributes")).values()
    )


def _short(message: object) -> str:
    text = " ".join(str(message).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


class Selectors:
    """Evaluates selectors over devices within one run's bounds; compiles each expression once
    and judges each (expression, device) pair once."""

    def __init__(
        self,
        *,
        budget_s: float = BUDGET_S,
        max_evaluations: int = MAX_EVALUATIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._deadline: float | None = None
        self._budget_s = budget_s
        self._left = max_evaluations
        self._compiled: dict[str, Compiled | Unevaluable] = {}
        self._judged: dict[tuple[str, tuple[str, ...]], bool | Unevaluable] = {}
        # One evaluation at a time: the library functions note their errors here.
        self._errors: list[str] = []
        self._functions = {n: _guarded(f, self._errors) for n, f in FUNCTIONS.items()}
        self._contexts: dict[tuple[str, ...], object] = {}
        """Per device, its `cel.Context` (built once: converting the device is most of an
        evaluation's cost), or why Kubernetes would refuse the device."""

    def compile(self, expression: str) -> Compiled | Unevaluable:
        """The expression compiled, or why it can't be."""
        if expression not in self._compiled:
            self._compiled[expression] = _compile(expression)
        return self._compiled[expression]

    def matches(
        self, expression: str, key: tuple[str, ...], driver: str, device: Mapping[str, Any]
    ) -> bool | Unevaluable:
        """Whether the selector takes the device (`key` names it), or why doctor can't say."""
        done = self._judged.get((expression, key))
        if done is not None:
            return done
        compiled = self.compile(expression)
        if isinstance(compiled, Unevaluable):
            return compiled
        if self._deadline is None:
            self._deadline = self._clock() + self._budget_s
        if self._left <= 0 or self._clock() > self._deadline:
            # Not cached: the bound is the run's, not the expression's.
            return Unevaluable(expression, "doctor's bound on evaluating device rules was reached")
        self._left -= 1
        judged = self._evaluate(compiled, key, driver, device)
        self._judged[(expression, key)] = judged
        return judged

    def _evaluate(
        self, compiled: Compiled, key: tuple[str, ...], driver: str, device: Mapping[str, Any]
    ) -> bool | Unevaluable:
        name = "/".join(key)
        if compiled.reads_text and not _plain_device(device):
            return Unevaluable(compiled.expression, f"device {name}: {_TEXT_REASON}")
        if key not in self._contexts:
            try:
                variable = device_variable(driver, device)
            except (ValueError, TypeError) as error:
                self._contexts[key] = _short(error)
            else:
                self._contexts[key] = _bindings().Context({"device": variable}, self._functions)
        context = self._contexts[key]
        if isinstance(context, str):
            return Unevaluable(compiled.expression, f"device {name}: {context}")
        filled: dict[str, Any] | None = None
        for fills in range(MAX_FILLED + 1):
            self._errors.clear()
            try:
                result = compiled.program.execute(context)
                break
            except KeyError as error:
                # Kubernetes reads a domain the device lacks as an empty map; the bindings
                # raise. Where the expression can't tell, the domain is filled in and the
                # expression evaluated again; a key missing from a domain's map stays an error.
                missing = str(error.args[0]) if error.args else ""
                filled = filled or device_variable(driver, device)
                if fills == MAX_FILLED or not _fill(compiled, filled, missing):
                    reason = f"device {name}: no entry {_short(error)}"
                    return Unevaluable(compiled.expression, reason)
                context = _bindings().Context({"device": filled}, self._functions)
            except _RUNTIME_ERRORS as error:
                return Unevaluable(compiled.expression, f"device {name}: {_short(error)}")
        if self._errors:
            # Kubernetes would have raised where the function failed: whatever the result,
            # doctor can't tell whether that branch mattered.
            return Unevaluable(compiled.expression, f"device {name}: {self._errors[0]}")
        if not isinstance(result, bool):
            return Unevaluable(
                compiled.expression, f"evaluates to {type(result).__name__}, not bool"
            )
        return result


def _fill(compiled: Compiled, variable: dict[str, Any], missing: str) -> bool:
    """Fills in `missing` as an empty domain of the device's attributes and capacity; False
    when it may not be (the expression could tell, or the domain is there already)."""
    maps = [variable["attributes"], variable["capacity"]]
    if not compiled.by_domain or all(missing in m for m in maps):
        return False
    for domains in maps:
        domains.setdefault(missing, {})
    return True


@functools.cache
def _bindings() -> ModuleType:
    """The bindings' compiled module (`cel.cel`) alone. The package's `__init__` also loads its
    command-line tool (typer, rich, prompt_toolkit: 0.2 s of a doctor run, against 0.03 s for
    the module); doctor uses only `compile` and `Context`. ImportError when not installed."""
    package = importlib.util.find_spec("cel")
    folders = [] if package is None else list(package.submodule_search_locations or ())
    for folder in folders:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            library = Path(folder) / f"cel{suffix}"
            spec = importlib.util.spec_from_file_location("cel.cel", library)
            if library.is_file() and spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module
    raise ImportError("common-expression-language is not installed")


def _compile(expression: str) -> Compiled | Unevaluable:
    if len(expression) > MAX_LENGTH:
        return Unevaluable(expression[:MAX_REASON], f"longer than {MAX_LENGTH} characters")
    # Loops inside loops multiply their costs; one loop costs at most its list (bounded by the
    # expression's length or a device's attributes) times its body. A macro's name inside a
    # string counts too, which only makes doctor more careful.
    if len(_MACRO.pattern.findall(expression)) > 1:
        return Unevaluable(expression, "more than one loop, whose cost doctor doesn't bound")
    reads_text = bool(_TEXT_FUNCTION.pattern.search(expression))
    if reads_text and not _plain_source(expression):
        return Unevaluable(expression, _TEXT_REASON)
    try:
        cel = _bindings()
    except (ImportError, OSError) as error:
        return Unevaluable(expression, f"no CEL evaluator: {_short(error)}")
    try:
        program = cel.compile(expression)
    except (ValueError, RuntimeError) as error:  # a syntax error; RuntimeError on odd input
        return Unevaluable(expression, "compile error: " + _short(error))
    by_domain = all(
        _LOOKUP.pattern.match(expression, m.end()) for m in _DEVICE.finditer(expression)
    )
    return Compiled(expression, program, by_domain, reads_text)


_RUNTIME_ERRORS = (RuntimeError, TypeError, ValueError, ArithmeticError, LookupError)
"""What the bindings raise while evaluating: an undefined name or function, no overload, a bad
conversion, an overflow or division by zero, an index out of range."""


def _guarded(function: Callable[..., object], errors: list[str]) -> Callable[..., object]:
    """The function, never raising: the bindings write a raised error to the standard error
    stream, and nothing below the CLI prints. An error is kept and the result is null."""

    def call(*args: object) -> object:
        try:
            return function(*args)
        except (ValueError, TypeError, ArithmeticError) as error:
            errors.append(_short(error))
            return None

    return call
