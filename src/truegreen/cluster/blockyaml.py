"""Block YAML of plain and quoted scalars, read without PyYAML: the kubeconfig as kubectl,
the cloud CLIs and most people write it.

Loading PyYAML costs a three-pod doctor run a fifth of its instructions (its Python reader
compiles a character class of all of Unicode at import). This reads one subset of YAML and
says None for any text outside it, which the bounded loader then reads (`yamlsafe`):
block mappings and sequences (a sequence may sit at its key's own indent, as kubectl writes
it), keys of letters, digits and `_-./`, and single-line scalars: plain, single-quoted,
double-quoted without escapes, `{}` and `[]`. No tabs, anchors, tags, flow collections,
multi-line or block scalars, comments after content, or text outside printable ASCII.
Where it reads a text, it means what PyYAML's safe loader means: plain scalars resolve to
null, booleans and decimal integers by PyYAML's own tables, and a plain scalar that could be
any other type (a float, an octal, a timestamp) sends the whole text to PyYAML
(`tests/unit/test_blockyaml.py` holds every answer to PyYAML's).
"""

from msgspec import Struct

MAX_DEPTH = 64
"""Nesting deeper than this goes to PyYAML (a kubeconfig nests five deep)."""

MAX_KEY_LENGTH = 256
"""A longer key goes to PyYAML (which allows a key 1,024 characters at most)."""

_KEY_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./")
_NULLS = frozenset(("~", "null", "Null", "NULL"))
_BOOLEANS = {
    word: value
    for words, value in (("yes true on", True), ("no false off", False))
    for lower in words.split()
    for word in (lower, lower.capitalize(), lower.upper())
}
"""PyYAML's bool resolver: these spellings only (`yEs` is a string)."""
_CANNOT_START_PLAIN = frozenset("-?:,[]{}#&*!|>'\"%@`")
_MAY_BE_A_NUMBER = frozenset("0123456789+.<=")
"""First characters of PyYAML's int, float, timestamp, merge and value resolvers."""

Value = dict[str, "Value"] | list["Value"] | str | int | bool | None


class _OutsideSubsetError(Exception):
    """The text is outside the subset: PyYAML reads it."""


class _Line(Struct, frozen=True):
    """One line with content: its indent and its text, trailing spaces dropped."""

    indent: int
    text: str

    def is_entry(self) -> bool:
        """A sequence entry (`- …` or a lone `-`)."""
        return self.text == "-" or self.text.startswith("- ")


def read_block_yaml(text: str) -> dict[str, Value] | None:
    """The mapping `text` holds, as PyYAML's safe loader builds it; None when the text is not
    a block mapping of this subset (PyYAML then reads it, or says why it cannot)."""
    lines = _content_lines(text)
    if not lines:
        return None  # PyYAML's None, not an empty mapping
    try:
        document, end = _mapping(lines, 0, 0, 0)
    except _OutsideSubsetError:
        return None
    # Every collection takes the lines at its own indent; a line none took (deeper than its
    # block, or between two indents) continues a multi-line scalar or breaks the indentation.
    return document if end == len(lines) else None


def _content_lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    for raw in text.split("\n"):
        if not (raw.isascii() and raw.isprintable()):  # tabs, CR, control and non-ASCII
            return []
        stripped = raw.strip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        lines.append(_Line(len(raw) - len(raw.lstrip(" ")), stripped))
    if lines and lines[0].text == "---" and lines[0].indent == 0:
        del lines[0]  # the document's start marker; any later marker is refused below
    return lines


def _node(lines: list[_Line], at: int, depth: int) -> tuple[Value, int]:
    """The block collection starting at line `at`, at that line's indent."""
    if lines[at].is_entry():
        return _sequence(lines, at, lines[at].indent, depth)
    return _mapping(lines, at, lines[at].indent, depth)


def _mapping(lines: list[_Line], at: int, indent: int, depth: int) -> tuple[dict[str, Value], int]:
    if depth > MAX_DEPTH:
        raise _OutsideSubsetError
    found: dict[str, Value] = {}
    while at < len(lines) and lines[at].indent == indent and not lines[at].is_entry():
        key, rest = _key_and_rest(lines[at].text)
        at += 1
        value: Value
        if rest:
            value = _scalar(rest)
        elif at < len(lines) and lines[at].indent > indent:
            value, at = _node(lines, at, depth + 1)
        elif at < len(lines) and lines[at].indent == indent and lines[at].is_entry():
            value, at = _sequence(lines, at, indent, depth + 1)  # at the key's own indent
        else:
            value = None
        found[key] = value  # a repeated key: the last value, in the first one's place
    return found, at


def _sequence(lines: list[_Line], at: int, indent: int, depth: int) -> tuple[list[Value], int]:
    if depth > MAX_DEPTH:
        raise _OutsideSubsetError
    found: list[Value] = []
    while at < len(lines) and lines[at].indent == indent and lines[at].is_entry():
        line = lines[at]
        rest = line.text[1:].lstrip(" ")
        value: Value
        if not rest:
            at += 1
            if at < len(lines) and lines[at].indent > indent:
                value, at = _node(lines, at, depth + 1)
            else:
                value = None
        elif ": " in rest or rest.endswith(":"):
            # `- key: value`: a mapping whose keys line up with this first one
            lines[at] = _Line(indent + len(line.text) - len(rest), rest)
            value, at = _mapping(lines, at, lines[at].indent, depth + 1)
        else:
            value = _scalar(rest)
            at += 1
        found.append(value)
    return found, at


def _key_and_rest(text: str) -> tuple[str, str]:
    """A mapping line's key and what follows its colon; _OutsideSubsetError for a line that is
    no key of the subset."""
    colon = text.find(": ")
    if colon < 0:
        if not text.endswith(":"):
            raise _OutsideSubsetError
        colon = len(text) - 1
    key, rest = text[:colon], text[colon + 1 :].lstrip(" ")
    if (
        not 0 < len(key) <= MAX_KEY_LENGTH
        or not _KEY_CHARACTERS.issuperset(key)
        or not isinstance(_plain(key), str)
    ):
        raise _OutsideSubsetError
    return key, rest


def _scalar(text: str) -> Value:
    """A one-line scalar, as PyYAML's safe loader resolves it."""
    if text in ("{}", "[]"):
        return {} if text == "{}" else []
    first = text[0]
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _OutsideSubsetError
        return inner
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _OutsideSubsetError
        return inner.replace("''", "'")
    if (first in _CANNOT_START_PLAIN and not (first == "-" and text[1:2] not in ("", " "))) or (
        ": " in text or " #" in text or text.endswith(":")
    ):
        raise _OutsideSubsetError
    return _plain(text)


def _plain(text: str) -> Value:
    if text in _NULLS:
        return None
    if text in _BOOLEANS:
        return _BOOLEANS[text]
    if text.isdigit() and (text == "0" or text[0] != "0"):
        return int(text)
    if text[0] in _MAY_BE_A_NUMBER or (text[0] == "-" and text[1:2] in _MAY_BE_A_NUMBER):
        raise _OutsideSubsetError  # maybe a float, an octal, a timestamp...: PyYAML decides
    return text
