"""Which namespaces a run checks: one, a list, every one, or those whose labels match.

`--namespace-selector` takes the label-selector syntax kubectl's `-l` takes, parsed as
apimachinery parses it (kubernetes/apimachinery pkg/labels/selector.go `Parse`: the lexer, the
grammar, the key and value rules), so a selector kubectl refuses is refused here, before any
request, and one it accepts is sent as `labelSelector` on `GET /api/v1/namespaces` for the API
server to match, as `kubectl get namespaces -l SELECTOR` sends it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.apinames import NAMESPACE_NAME_RULE, is_name_part, is_namespace_name, is_prefix
from truegreen.cluster.reads import CantRead, ListRead, ReadFailure
from truegreen.errors import TruegreenError, UsageError
from truegreen.exitcodes import ExitCode

if TYPE_CHECKING:
    import argparse

MAX_NAMESPACES = 1000
"""Namespaces one run checks at most: a selection past it is refused (narrow it)."""
MAX_SELECTOR_CHARS = 4096
"""A selector longer than this is refused before it is parsed."""


class Operator(StrEnum):
    """A requirement's operator, spelled as apimachinery's `selection.Operator`."""

    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


class Requirement(Struct, frozen=True):
    """One term of a label selector: a key, an operator, and its values (sorted, as a set)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def text(self) -> str:
        """The term as apimachinery's `Requirement.String` writes it."""
        if self.operator is Operator.EXISTS:
            return self.key
        if self.operator is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        joined = ",".join(self.values)
        if self.operator in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {self.operator.value} ({joined})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(
            self.operator, self.operator.value
        )
        return f"{self.key}{symbol}{joined}"


class LabelSelector(Struct, frozen=True):
    """A parsed label selector: every requirement must hold (sorted by key, as Parse sorts)."""

    requirements: tuple[Requirement, ...]

    def text(self) -> str:
        """The selector as sent to the API server (apimachinery's `Selector.String`)."""
        return ",".join(r.text() for r in self.requirements)


class SelectionMode(StrEnum):
    """How the namespaces of a run were chosen."""

    ONE = "one"
    """`-n NAME`, or the context's namespace: today's single-namespace run."""
    LIST = "list"
    """`--namespaces a,b,c`: exactly those, no namespace list is read."""
    ALL = "all"
    """`-A`/`--all-namespaces`: every namespace the cluster has."""
    SELECTOR = "selector"
    """`--namespace-selector LABELS`: the namespaces whose labels match."""


class NamespaceSelection(Struct, frozen=True):
    """The namespaces the operator asked for, before the cluster is asked which exist."""

    mode: SelectionMode = SelectionMode.ONE
    names: tuple[str, ...] = ()
    """`ONE`: the `-n` name, if given; `LIST`: the names in the order given, each once."""
    selector: LabelSelector | None = None
    """`SELECTOR` only."""

    @property
    def many(self) -> bool:
        """More than one namespace may be checked: the fleet's report, not one namespace's."""
        return self.mode is not SelectionMode.ONE

    def flag(self) -> str:
        """The flag the operator used, for lines that name it."""
        return {
            SelectionMode.ONE: "-n",
            SelectionMode.LIST: "--namespaces",
            SelectionMode.ALL: "--all-namespaces",
            SelectionMode.SELECTOR: "--namespace-selector",
        }[self.mode]


class NamespaceLister(Protocol):
    """Lists namespaces with a label selector's text (the live client)."""

    def list_namespaces(self, label_selector: str) -> ListRead:
        """Every namespace matching `label_selector` ("" for every namespace), all pages."""
        ...


class NamespacesNotListedError(TruegreenError):
    """The namespaces could not be listed, or none matched: nothing was checked (exit 3)."""

    exit_code = ExitCode.UNKNOWN
    code = "namespaces-not-listed"
    cant: CantRead | None = None
    """The list's failure, for a caller that knows the cluster's address and can say it as a
    run that reached nothing says it."""


class NoNamespaceMatchedError(TruegreenError):
    """The selector is well formed and the list was read, but no namespace matched (exit 3):
    nothing was checked, which is never a pass; and the labels may simply not be set yet, which
    is a fact about the cluster rather than a wrong command."""

    exit_code = ExitCode.UNKNOWN
    code = "no-namespace-matched"


# -- flags -------------------------------------------------------------------------------------


def add_selection_flags(parser: argparse.ArgumentParser) -> None:
    """`--namespaces`, `-A/--all-namespaces` and `--namespace-selector` (`-n` is the
    connection's own flag)."""
    parser.add_argument(
        "--namespaces",
        metavar="A,B,C",
        help="Check these namespaces in one run (cluster-wide reads are made once).",
    )
    parser.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        help="Check every namespace in one run (needs list on namespaces).",
    )
    parser.add_argument(
        "--namespace-selector",
        metavar="LABELS",
        help="Check the namespaces whose labels match, as kubectl's -l takes them "
        "(team=ml,tier in (train,eval),!scratch; needs list on namespaces).",
    )


def selection_from_flags(
    namespace: str | None,
    namespaces: str | None,
    all_namespaces: bool,
    namespace_selector: str | None,
) -> NamespaceSelection:
    """The selection the flags ask for; UsageError (exit 64) for two ways at once, a name that
    cannot be a namespace's, or a selector kubectl would refuse."""
    given = [
        flag
        for flag, value in (
            ("-n", namespace is not None),
            ("--namespaces", namespaces is not None),
            ("--all-namespaces", all_namespaces),
            ("--namespace-selector", namespace_selector is not None),
        )
        if value
    ]
    if len(given) > 1:
        raise UsageError(
            f"{' and '.join(given)} cannot be used together",
            todo="choose one way to name the namespaces",
        )
    if namespaces is not None:
        return NamespaceSelection(SelectionMode.LIST, _namespace_names(namespaces))
    if all_namespaces:
        return NamespaceSelection(SelectionMode.ALL)
    if namespace_selector is not None:
        return NamespaceSelection(
            SelectionMode.SELECTOR, selector=parse_selector(namespace_selector)
        )
    return NamespaceSelection(names=() if namespace is None else (namespace,))


def _namespace_names(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        raise UsageError("--namespaces names no namespace", todo="give --namespaces a,b,c")
    for name in names:
        if not is_namespace_name(name):
            raise UsageError(
                f"--namespaces: {name!r} cannot be a namespace's name", NAMESPACE_NAME_RULE
            )
    if len(names) > MAX_NAMESPACES:
        raise UsageError(
            f"--namespaces names {len(names)} namespaces",
            f"doctor checks at most {MAX_NAMESPACES} in one run",
            "name fewer",
        )
    return names


# -- the selector, as apimachinery parses it ----------------------------------------------------


class _Token(StrEnum):
    END = "end of string"
    CLOSE = ")"
    COMMA = ","
    NOT = "!"
    DOUBLE_EQUALS = "=="
    EQUALS = "="
    GREATER = ">"
    IDENTIFIER = "identifier"
    IN = "in"
    LESS = "<"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    OPEN = "("


_SYMBOLS = {
    ")": _Token.CLOSE,
    ",": _Token.COMMA,
    "!": _Token.NOT,
    "==": _Token.DOUBLE_EQUALS,
    "=": _Token.EQUALS,
    ">": _Token.GREATER,
    "<": _Token.LESS,
    "!=": _Token.NOT_EQUALS,
    "(": _Token.OPEN,
}
_KEYWORDS = {"in": _Token.IN, "notin": _Token.NOT_IN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATORS = {
    _Token.IN: Operator.IN,
    _Token.EQUALS: Operator.EQUALS,
    _Token.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
    _Token.GREATER: Operator.GREATER_THAN,
    _Token.LESS: Operator.LESS_THAN,
    _Token.NOT_IN: Operator.NOT_IN,
    _Token.NOT_EQUALS: Operator.NOT_EQUALS,
}
_BINARY = "in, notin, =, ==, !=, gt, lt"


class _SelectorError(Exception):
    """A selector apimachinery's parser refuses; the message says where, as its own does."""


def _lex(text: str) -> Iterator[tuple[_Token, str]]:
    """Tokens as apimachinery's `Lexer.Lex` scans them: a run of special symbols is the
    longest operator it starts with; any other run up to a symbol or a blank is an identifier
    (or the keyword `in`/`notin`)."""
    at, end = 0, text.find("\0")  # Go's lexer reads a NUL byte as the end of the string
    end = len(text) if end < 0 else end
    while True:
        while at < end and text[at] in _WHITESPACE:
            at += 1
        if at == end:
            yield _Token.END, ""
            return
        if text[at] in _SPECIAL:
            pair = text[at : min(at + 2, end)]
            longest = 2 if len(pair) == 2 and pair in _SYMBOLS else 1
            yield _SYMBOLS[text[at : at + longest]], text[at : at + longest]
            at += longest
            continue
        start = at
        while at < end and text[at] not in _SPECIAL and text[at] not in _WHITESPACE:
            at += 1
        word = text[start:at]
        yield _KEYWORDS.get(word, _Token.IDENTIFIER), word


class _Parser:
    """apimachinery's `Parser`: `in` and `notin` are identifiers wherever a value may stand."""

    def __init__(self, text: str) -> None:
        self._items = list(_lex(text))
        self._at = 0

    def _look(self, values: bool = True) -> tuple[_Token, str]:
        token, literal = self._items[self._at]
        if values and token in (_Token.IN, _Token.NOT_IN):
            token = _Token.IDENTIFIER
        return token, literal

    def _take(self, values: bool = True) -> tuple[_Token, str]:
        found = self._look(values)
        self._at += 1
        return found

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            token, literal = self._look()
            if token is _Token.END:
                return requirements
            if token not in (_Token.IDENTIFIER, _Token.NOT):
                raise _SelectorError(
                    f"found '{literal}', expected: !, identifier, or 'end of string'"
                )
            requirements.append(self._requirement())
            token, literal = self._take()
            if token is _Token.END:
                return requirements
            if token is not _Token.COMMA:
                raise _SelectorError(f"found '{literal}', expected: ',' or 'end of string'")
            after, literal = self._look()
            if after not in (_Token.IDENTIFIER, _Token.NOT):
                raise _SelectorError(f"found '{literal}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        token, key = self._take()
        absent = token is _Token.NOT
        if absent:
            token, key = self._take()
        if token is not _Token.IDENTIFIER:
            raise _SelectorError(f"found '{key}', expected: identifier")
        _check_key(key)
        if absent:  # `!key=v` ends here, and the parse then refuses the `=`
            return Requirement(key, Operator.DOES_NOT_EXIST)
        if self._look()[0] in (_Token.END, _Token.COMMA):
            return Requirement(key, Operator.EXISTS)
        token, literal = self._take(values=False)
        operator = _OPERATORS.get(token)
        if operator is None:
            raise _SelectorError(f"found '{literal}', expected: {_BINARY}")
        values = (
            self._set_values()
            if operator in (Operator.IN, Operator.NOT_IN)
            else self._exact_value()
        )
        if operator in (Operator.GREATER_THAN, Operator.LESS_THAN):
            for value in values:
                if not re.fullmatch(r"[+-]?[0-9]+", value) or not _fits_int64(value):
                    raise _SelectorError(
                        f"{key}: for 'Gt', 'Lt' operators, the value must be an integer"
                    )
        for value in values:
            _check_value(key, value)
        return Requirement(key, operator, tuple(sorted(values)))

    def _set_values(self) -> set[str]:
        token, literal = self._take()
        if token is not _Token.OPEN:
            raise _SelectorError(f"found '{literal}' expected: '('")
        token, literal = self._look()
        if token is _Token.CLOSE:  # `()` is the one empty value
            self._take()
            return {""}
        if token not in (_Token.IDENTIFIER, _Token.COMMA):
            raise _SelectorError(f"found '{literal}', expected: ',', ')' or identifier")
        values = self._identifiers()
        if self._take()[0] is not _Token.CLOSE:
            raise _SelectorError(f"found '{literal}', expected: ')'")
        return values

    def _identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            token, literal = self._take()
            if token is _Token.IDENTIFIER:
                values.add(literal)
                after, seen = self._look()
                if after is _Token.COMMA:
                    continue
                if after is _Token.CLOSE:
                    return values
                raise _SelectorError(f"found '{seen}', expected: ',' or ')'")
            if token is _Token.COMMA:  # `(,` `,,` and `,)` each hold the empty value
                if not values:
                    values.add("")
                after, _ = self._look()
                if after is _Token.CLOSE:
                    values.add("")
                    return values
                if after is _Token.COMMA:
                    self._take()
                    values.add("")
                continue
            raise _SelectorError(f"found '{literal}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        token, _ = self._look()
        if token in (_Token.END, _Token.COMMA):
            return {""}
        token, literal = self._take()
        if token is _Token.IDENTIFIER:
            return {literal}
        raise _SelectorError(f"found '{literal}', expected: identifier")


def _fits_int64(value: str) -> bool:
    return -(2**63) <= int(value) < 2**63


def _check_key(key: str) -> None:
    """apimachinery's `IsQualifiedName` (truegreen.apinames), in a selector's words."""
    prefix, slash, name = key.rpartition("/")
    if slash and not is_prefix(prefix):
        raise _SelectorError(f"{key!r} is not a label key: its prefix must be a DNS subdomain")
    if key.count("/") > 1 or not is_name_part(name):
        raise _SelectorError(
            f"{key!r} is not a label key: at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit, after an optional prefix and '/'"
        )


def _check_value(key: str, value: str) -> None:
    """apimachinery's `IsValidLabelValue`: empty, or at most 63 characters of the name set."""
    if value and not is_name_part(value):
        raise _SelectorError(
            f"{value!r} is not a label value (of {key}): at most 63 letters, digits, '-', '_' "
            "or '.', starting and ending with a letter or digit"
        )


def parse_selector(text: str) -> LabelSelector:
    """`text` parsed as apimachinery's `labels.Parse` parses it; UsageError when it refuses."""
    if len(text) > MAX_SELECTOR_CHARS:
        raise UsageError(
            "--namespace-selector is too long",
            f"more than {MAX_SELECTOR_CHARS} characters",
            "use a shorter selector",
        )
    try:
        requirements = _Parser(text).parse()
    except _SelectorError as error:
        raise UsageError(
            f"--namespace-selector {text!r} is not a label selector",
            str(error),
            "write it as kubectl's -l takes it: key=value, key!=value, key, !key, "
            "key in (a,b), key notin (a)",
        ) from None
    # sort.Sort is not stable: terms of one key keep no promised order, so ours sort them too.
    return LabelSelector(tuple(sorted(requirements, key=lambda r: (r.key, r.text()))))


# -- asking the cluster -------------------------------------------------------------------------


def resolve_namespaces(selection: NamespaceSelection, lister: NamespaceLister) -> tuple[str, ...]:
    """The namespaces to check, in the cluster's order (a list: as given), each once.
    `--namespaces` makes no request: a named namespace that does not exist is that namespace's
    own finding. A listed name no namespace can have is kept: its check says so.

    NamespacesNotListedError when the list could not be read (a refusal says which grant it
    needs), NoNamespaceMatchedError when nothing matched, UsageError past MAX_NAMESPACES.
    """
    if selection.mode in (SelectionMode.ONE, SelectionMode.LIST):
        return selection.names
    selector = "" if selection.selector is None else selection.selector.text()
    read = lister.list_namespaces(selector)
    if isinstance(read, CantRead):
        raise _not_listed(read)
    # A namespace's name is unique in its cluster: a list naming one twice is not the API
    # server's own answer, and the name is checked once, where it came first.
    names = tuple(dict.fromkeys(o.name_of(item) for item in read.items if o.name_of(item)))
    if not names:
        raise NoNamespaceMatchedError(
            f"No namespace has labels matching --namespace-selector '{selector}'"
            if selector
            else "The cluster listed no namespaces",
            todo="check the labels with `kubectl get namespaces --show-labels`",
        )
    if len(names) > MAX_NAMESPACES:
        raise UsageError(
            f"{selection.flag()} selects {len(names)} namespaces",
            f"doctor checks at most {MAX_NAMESPACES} in one run",
            "narrow it with --namespace-selector",
        )
    return names


def _not_listed(read: CantRead) -> NamespacesNotListedError:
    if read.failure is ReadFailure.FORBIDDEN:
        return NamespacesNotListedError(
            "This login may not list namespaces",
            "so doctor cannot learn which namespaces to check",
            "name them with --namespaces a,b,c, or ask an administrator for list on "
            "namespaces (cluster-wide)",
        )
    error = NamespacesNotListedError(
        "Couldn't list the namespaces", read.reason, "check the connection, then retry"
    )
    error.cant = read
    return error
