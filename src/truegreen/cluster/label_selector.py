"""A label selector's text parsed as apimachinery parses it (kubernetes/apimachinery
pkg/labels/selector.go `Parse`: the lexer, the grammar, the key and value rules), so that a
selector kubectl's `-l` refuses is refused here, before any request
(cluster/namespace_selection.py holds the parsed selector).
"""

import re
from collections.abc import Iterator
from enum import StrEnum

from truegreen.apinames import is_name_part, is_prefix
from truegreen.cluster.namespace_selection import LabelSelector, Operator, Requirement
from truegreen.errors import UsageError

MAX_SELECTOR_CHARS = 4096
"""A selector longer than this is refused before it is parsed."""


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
