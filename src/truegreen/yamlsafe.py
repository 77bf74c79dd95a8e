"""The one YAML loader for files, stdin and snapshots: every input is hostile until read.

- Only regular files are read, never more than the size cap plus one byte, and a FIFO or a
  device is refused before it could block or stream forever.
- Text must be UTF-8 without NUL bytes, or UTF-16 that a byte-order mark announces (kubectl
  reads both).
- libyaml (PyYAML's C parser) composes the nodes; one pass here builds the objects, and in the
  same pass counts nodes as aliases expand them (go-yaml's `allowedAliasRatio`, the
  CVE-2019-11253 fix that the API server relies on: a "billion laughs" file is refused, never
  expanded), refuses duplicate keys with the words of the API server's strict decoding
  (sigs.k8s.io/yaml `YAMLToJSONStrict`: `key "image" already set in map`), and records the line
  each mapping starts on.
- Manifests (`kubernetes=True`) are read as Kubernetes reads them (`truegreen.goscalars`:
  sigs.k8s.io/yaml over go-yaml v2), and a problem inside one document (a value or key the API
  server's decoding refuses, a duplicate key, broken syntax) stops only that document: the
  caller decides what a document that is no Kubernetes object at all may hold.

One module past 600 lines: one loader, so that every bound (size, nodes, aliases, duplicate
keys, regular files only) is enforced in one place that every reader goes through.
"""

import codecs
import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

import msgspec
import yaml
from msgspec import Struct, field
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from truegreen import goscalars

MIB = 1024 * 1024
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SCALARS: Mapping[Any, Any] = yaml.constructor.SafeConstructor.yaml_constructors
_YAML_TAGS = "tag:yaml.org,2002:"
_STR = _YAML_TAGS + "str"
_MAP = _YAML_TAGS + "map"
_SEQ = _YAML_TAGS + "seq"
_MERGE = _YAML_TAGS + "merge"
# go-yaml v3 decode.go: alias_ratio_range_low/high. Below 400,000 decoded nodes 99% may come
# from aliases; the share falls to 10% at 4,000,000.
_ALIAS_RANGE_LOW = 400_000
_ALIAS_RANGE_HIGH = 4_000_000
# The most bits an int may have and still be written in decimal within CPython's limit
# (sys.get_int_max_str_digits, 4,300 digits by default; 0 is no limit).
_INT_TEXT_BITS = int((sys.get_int_max_str_digits() or sys.maxsize) * math.log2(10)) - 4


# Plain scalars repeat (keys, ports, names): their implicit tag is remembered, within bounds.
_RESOLVED: dict[str, str] = {}
_RESOLVED_MAX = 50_000
_RESOLVED_LENGTH = 64


class _Loader(_BaseLoader):  # type: ignore[misc]
    """libyaml's loader, minus the per-node Python work that only path resolvers need."""

    def descend_resolver(self, current_node: object, current_index: object) -> None:
        """No path resolvers are registered: nothing to track per level."""

    def ascend_resolver(self) -> None:
        """No path resolvers are registered: nothing to track per level."""

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        """The implicit tag of a plain scalar depends only on its text: remember it."""
        if kind is not ScalarNode or not implicit[0] or len(value) > _RESOLVED_LENGTH:
            return str(super().resolve(kind, value, implicit))
        tag = _RESOLVED.get(value)
        if tag is None:
            tag = str(super().resolve(kind, value, implicit))
            if len(_RESOLVED) < _RESOLVED_MAX:
                _RESOLVED[value] = tag
        return tag


# A plain scalar that Kubernetes reads as something other than a string: its text, resolved once.
_PLAIN = "tag:truegreen,plain"
_PLAIN_VALUES: dict[str, tuple[str, goscalars.Scalar]] = {}
_PLAIN_TAGS: dict[str, str] = {}
"""A plain scalar's text -> the tag it gets (`str`, `merge` or `_PLAIN`), within the bounds."""


def _plain_tag(text: str) -> str:
    if text == "<<":
        return _MERGE  # decode.go isMerge: a plain `<<` key merges
    known = _PLAIN_VALUES.get(text) or goscalars.resolve(text)
    tag = _STR if known[0] in (goscalars.STR, goscalars.TIMESTAMP) else _PLAIN
    if len(text) <= _RESOLVED_LENGTH and len(_PLAIN_TAGS) < _RESOLVED_MAX:
        _PLAIN_TAGS[text] = tag
        if tag is _PLAIN:
            _PLAIN_VALUES[text] = known
    return tag


class _KubernetesLoader(_Loader):
    """libyaml's loader with go-yaml v2's resolution of plain scalars (goscalars.resolve)."""

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        """A plain scalar's tag as go-yaml resolves it: `str`, `merge`, or one resolved value;
        a collection's is its kind's (go-yaml decodes it by kind, whatever its tag)."""
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR  # quoted, or the non-specific `!`
            return _PLAIN_TAGS.get(value) or _plain_tag(value)
        return _SEQ if kind is SequenceNode else _MAP


class Limits(Struct, frozen=True):
    """How much one input may cost."""

    max_bytes: int = 16 * MIB
    """Bytes per file or stream; a larger one is refused unread."""
    max_nodes: int = 4_000_000
    """Values per file as aliases expand them (each alias counts what it repeats)."""


MANIFEST_LIMITS = Limits()
"""Manifests and config files: generous for any hand-written or rendered manifest."""
SNAPSHOT_LIMITS = Limits(max_bytes=256 * MIB, max_nodes=64_000_000)
"""A snapshot's read files: a namespace's whole pod list fits many times over."""


class Problem(StrEnum):
    """Why an input was refused."""

    UNREADABLE = "unreadable"
    NOT_REGULAR = "not-regular"
    TOO_LARGE = "too-large"
    BINARY = "binary"
    NOT_UTF8 = "not-utf8"
    NOT_UTF16 = "not-utf16"
    """A byte-order mark announces UTF-16, and the bytes after it are not."""
    SYNTAX = "syntax"
    DUPLICATE_KEY = "duplicate-key"
    ALIASES = "aliases"
    TOO_MANY_NODES = "too-many-nodes"
    UNSUPPORTED = "unsupported"
    NOT_JSON = "not-json"
    """Manifests that start with `{` are a JSON stream, as kubectl reads them, and this is not."""

    @property
    def is_read(self) -> bool:
        """The bytes could not be read as text at all (rather than as YAML)."""
        return self in _READ_PROBLEMS


_READ_PROBLEMS = frozenset(
    {
        Problem.UNREADABLE,
        Problem.NOT_REGULAR,
        Problem.TOO_LARGE,
        Problem.BINARY,
        Problem.NOT_UTF8,
        Problem.NOT_UTF16,
    }
)


class Refusal(Struct, frozen=True):
    """An input, or the rest of it, that was not loaded: what is wrong, in plain words."""

    problem: Problem
    detail: str
    line: int | None = None


class Document(Struct, frozen=True):
    """One YAML document: its value, and the line each of its mappings starts on."""

    data: object
    start_line: int
    end_line: int
    lines: Mapping[int, int] = field(default_factory=dict)
    """id(mapping) -> 1-based line, when lines were asked for."""
    problem: Refusal | None = None
    """Read as Kubernetes reads it: the first value the API server's decoding would refuse (the
    value itself is left out of `data`). Always None otherwise: such a document is refused."""


class _RefusedError(Exception):
    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal


def _unreadable(error: OSError) -> Refusal:
    return Refusal(Problem.UNREADABLE, error.strerror or str(error))


def _size(count: int) -> str:
    return f"{count / MIB:.0f} MiB" if count >= MIB else f"{count:,} bytes"


_MARKS = (
    (codecs.BOM_UTF8, "utf-8", Problem.NOT_UTF8, "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", Problem.NOT_UTF16, "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", Problem.NOT_UTF16, "UTF-16"),
)
"""The byte-order marks kubectl honours, each with its encoding (golang.org/x/text
encoding/unicode BOMOverride considers these three and no other)."""
_BINARY = "it is a binary file, not text"


def decode(data: bytes, limits: Limits = MANIFEST_LIMITS) -> str | Refusal:
    """Bytes as text, as kubectl reads a manifest (k8s.io/cli-runtime pkg/resource/visitor.go
    FileVisitor.Visit, for files and stdin: `unicode.BOMOverride(unicode.UTF8.NewDecoder())`):
    a byte-order mark at the start selects UTF-8, UTF-16LE or UTF-16BE and is dropped before
    JSON or YAML is guessed; without one the text is UTF-8. Refused when larger than the cap,
    binary (NUL bytes) or not text in its encoding."""
    if len(data) > limits.max_bytes:
        return Refusal(Problem.TOO_LARGE, f"it is larger than {_size(limits.max_bytes)}")
    for mark, encoding, problem, name in _MARKS:
        if data.startswith(mark):
            try:
                text = data[len(mark) :].decode(encoding)
            except UnicodeDecodeError as error:
                byte = len(mark) + error.start + 1
                return Refusal(problem, f"it is not {name} text (byte {byte})")
            # UTF-16 writes NUL bytes for plain letters; a NUL character is binary all the same
            return Refusal(Problem.BINARY, _BINARY) if "\0" in text else text
    if b"\0" in data:
        return Refusal(Problem.BINARY, _BINARY)
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        return Refusal(Problem.NOT_UTF8, f"it is not UTF-8 text (byte {error.start + 1})")


def read_file(path: Path, limits: Limits = MANIFEST_LIMITS) -> str | Refusal:
    """A regular file's text, never read beyond the cap; anything else is refused unopened."""
    try:
        info = os.stat(path)
    except OSError as error:
        return _unreadable(error)
    if not stat.S_ISREG(info.st_mode):
        return _not_regular(info.st_mode)
    if info.st_size > limits.max_bytes:
        return Refusal(Problem.TOO_LARGE, f"it is larger than {_size(limits.max_bytes)}")
    return read_opened(path, limits)


def read_opened(path: Path, limits: Limits = MANIFEST_LIMITS) -> str | Refusal:
    """Open without blocking and check again what was opened: the path may have been swapped
    for a pipe or a device since it was looked at."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return _unreadable(error)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return _not_regular(mode)
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            return read_stream(stream, limits)
    finally:
        os.close(descriptor)


_NOT_REGULAR = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a pipe",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def _not_regular(mode: int) -> Refusal:
    what = _NOT_REGULAR.get(stat.S_IFMT(mode), "something else")
    return Refusal(Problem.NOT_REGULAR, f"it is {what}, not a regular file")


def read_stream(stream: BinaryIO, limits: Limits = MANIFEST_LIMITS) -> str | Refusal:
    """A stream's text (stdin), reading at most one byte beyond the cap."""
    try:
        data = stream.read(limits.max_bytes + 1)
    except OSError as error:
        return _unreadable(error)
    return decode(data, limits)


def load_all(
    text: str,
    limits: Limits = MANIFEST_LIMITS,
    *,
    lines: bool = True,
    kubernetes: bool = False,
    unique_keys: bool = True,
) -> Iterator[Document | Refusal]:
    """Every document of a YAML stream; a Refusal, last, where it stops being acceptable.

    `unique_keys=False` takes a repeated key's last value, as go-yaml's lenient decoding does
    (client-go reads a kubeconfig so), instead of refusing it. With `kubernetes`, scalars are
    read as Kubernetes reads them, a document's own problems are its `problem`, and a document
    that cannot be parsed is one Refusal: the stream goes on with the next `---`, so the
    documents after it are still read.
    """
    if not kubernetes:
        yield from _documents(text, limits, _Builder(text, limits, lines, unique_keys))
        return
    builder = _KubernetesBuilder(text, limits, lines)
    if _JSON_START.match(text):
        yield from _json_stream(text, limits, builder)
        return
    yield from _yaml_stream(text, limits, builder)


def _yaml_stream(text: str, limits: Limits, builder: "_Builder") -> Iterator[Document | Refusal]:
    last_start = 0
    for loaded in _documents(text, limits, builder):
        if isinstance(loaded, Document):
            last_start = loaded.start_line
            yield loaded
            continue
        yield from _rest_by_parts(text, limits, builder, loaded, last_start)


# Go's unicode.IsSpace, which GuessJSONStream and consumeWhitespace use: Python's `\s` also
# takes U+001C-U+001F.
_GO_SPACES = "\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_JSON_START = re.compile(f"[{_GO_SPACES}]*\\{{")
_GO_SPACE = re.compile(f"[{_GO_SPACES}]")
_JSON_SPACE = re.compile(r"[ \t\r\n]*")  # encoding/json's isSpace, between values


def _not_json(name: str) -> float:
    raise ValueError(f"invalid character {name[0]!r} looking for beginning of value")


# Only where each value ends is wanted from it: objects are not kept (`object_pairs_hook`).
_JSON_VALUES = json.JSONDecoder(object_pairs_hook=lambda _: None, parse_constant=_not_json)


def _json_stream(text: str, limits: Limits, builder: "_Builder") -> Iterator[Document | Refusal]:
    """apimachinery pkg/util/yaml/decoder.go YAMLOrJSONDecoder: input that starts with `{`
    (GuessJSONStream) is first read as a stream of JSON values (json.NewDecoder). Where a value
    is no JSON after two or more were read, the stream is JSON and ends there; after none or
    one, it is read on as YAML from just after the values read. Each JSON value is then read as
    YAML (JSON is YAML's flow style), so its lines, scalars and bounds are every document's."""
    read, line, counted = 0, 0, 0
    while (position := _JSON_SPACE.match(text, read).end()) < len(text):  # type: ignore[union-attr]
        line += text.count("\n", counted, position)
        counted = position
        try:
            end = _JSON_VALUES.raw_decode(text, position)[1]
        except RecursionError:
            yield Refusal(Problem.UNSUPPORTED, "it is nested too deeply", line + 1)
            return
        except json.JSONDecodeError as error:
            yield from _json_or_yaml(text, limits, builder, read, error.msg, error.pos)
            return
        except ValueError as error:  # NaN, Infinity: constants Go's JSON does not know
            at = _constant_at(text, position)
            yield from _json_or_yaml(text, limits, builder, read, str(error), at)
            return
        for loaded in _documents(text[position:end], limits, builder, line):
            yield loaded
            if isinstance(loaded, Refusal) and loaded.problem in _BOUNDS:
                return
        read = end
        builder.json_values += 1


def _json_or_yaml(
    text: str, limits: Limits, builder: "_Builder", read: int, reason: str, at: int
) -> Iterator[Document | Refusal]:
    """YAMLOrJSONDecoder.Decode after a JSON error: `if d.count > 1` the error; else the stream
    rewinds to `read` and consumeWhitespace eats spaces up to a newline (that included) before
    YAML reads the rest. consumeWhitespace reads 4 bytes at a time: with fewer left, or at a
    U+FFFD (utf8.RuneError), it fails, and so the JSON error stands."""
    start = None if builder.json_values > 1 else _yaml_start(text, read)
    if start is None:
        line = text.count("\n", 0, at) + 1
        yield _not_json_at(reason, line, at - text.rfind("\n", 0, at))
        return
    # Blank lines stand for what was read, so the lines counted are the stream's.
    yield from _yaml_stream("\n" * text.count("\n", 0, start) + text[start:], limits, builder)


def _yaml_start(text: str, position: int) -> int | None:
    while len(text[position : position + 4].encode()) >= 4 and text[position] != "\ufffd":
        if not _GO_SPACE.match(text[position]):
            return position
        position += 1
        if text[position - 1] == "\n":
            return position
    return None


def _not_json_at(reason: str, line: int, column: int) -> Refusal:
    return Refusal(Problem.NOT_JSON, f"{reason} (line {line}, column {column})", line)


_CONSTANT = re.compile(r"NaN|-?Infinity")


def _constant_at(text: str, start: int) -> int:
    """Where the first constant that is no JSON after `start` sits."""
    found = _CONSTANT.search(text, start)
    return start if found is None else found.start()


_DOCUMENT_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.MULTILINE)


def _rest_by_parts(
    text: str, limits: Limits, builder: "_Builder", refusal: Refusal, last_start: int
) -> Iterator[Document | Refusal]:
    """After a refusal, each part of the stream that starts at a `---` line (YAML forbids that
    line inside any scalar) is read on its own, from the part after the last document read, so
    one broken document costs only itself. A refused bound (aliases, values) ends the stream:
    it counts over the whole file."""
    if refusal.problem in _BOUNDS:
        yield refusal
        return
    starts = [0] + [m.start() for m in _DOCUMENT_START.finditer(text) if m.start() > 0]
    lines = [text.count("\n", 0, start) for start in starts]
    reread = [number for number, line in enumerate(lines) if line >= last_start]
    if refusal.line is None or not reread or refusal.line <= lines[reread[0]]:
        # The refusal is in the part that holds the last document read, which is not read
        # again: said here, or it would be lost.
        yield refusal
    for number, start in enumerate(starts):
        if lines[number] < last_start:
            continue  # this part holds the last document read, or comes before it
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        for loaded in _documents(text[start:end], limits, builder, lines[number]):
            yield loaded
            if isinstance(loaded, Refusal) and loaded.problem in _BOUNDS:
                return


_BOUNDS = (Problem.ALIASES, Problem.TOO_MANY_NODES)


def _documents(
    text: str, limits: Limits, builder: "_Builder", line_offset: int = 0
) -> Iterator[Document | Refusal]:
    cut = _cut(text, limits.max_nodes - builder.nodes)
    loader = builder.loader_for(text)
    builder.line_offset = line_offset
    composed = 0
    try:
        while loader.check_node():
            if cut is not None and composed == cut[0]:
                detail = f"it holds more than {limits.max_nodes:,} values"
                yield Refusal(Problem.TOO_MANY_NODES, detail, cut[1] + line_offset)
                return
            root = loader.get_node()
            composed += 1
            yield builder.document(root)
    except _RefusedError as refused:
        yield refused.refusal
    except RecursionError:
        yield Refusal(Problem.UNSUPPORTED, "it is nested too deeply, or an alias holds itself")
    except yaml.MarkedYAMLError as error:
        # libyaml's parse errors carry both; it places one at the end of the input a line past
        # the last line.
        mark = error.problem_mark
        line = None if mark is None else min(mark.line + 1, len(text.splitlines()))
        yield Refusal(Problem.SYNTAX, str(error.problem), _shifted(line, line_offset))
    except yaml.reader.ReaderError as error:  # a character YAML does not allow; libyaml's
        # position counts UTF-8 bytes
        line = text.encode()[: error.position].count(b"\n") + 1
        yield Refusal(Problem.SYNTAX, str(error).partition("\n")[0], line + line_offset)
    except yaml.YAMLError as error:
        yield Refusal(Problem.SYNTAX, str(error).partition("\n")[0])
    finally:
        loader.dispose()


_NODE_EVENTS = (
    yaml.ScalarEvent,
    yaml.SequenceStartEvent,
    yaml.MappingStartEvent,
    yaml.AliasEvent,
)


def _cut(text: str, budget: int) -> tuple[int, int] | None:
    """Where composing must stop so that no more than `budget` nodes are ever built: how many
    whole documents fit, and the line of the node past the budget; None when all fit.

    libyaml composes a whole document before a node can be counted, so a file that could hold
    more nodes than the budget is first parsed to events, which are counted and dropped: memory
    stays bounded by the cap, not the file. A node takes about a character at the least (`a,`
    in a flow mapping is a key and its null value), so a text under half the budget needs no
    count. A syntax error ends the count: composing stops there too, and says it.
    """
    if 2 * len(text) + 2 <= budget:
        return None
    parser = _BaseLoader(text)
    nodes = documents = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, _NODE_EVENTS):
                nodes += 1
                if nodes > budget:
                    return documents, int(event.start_mark.line) + 1  # type: ignore[union-attr]
            elif isinstance(event, yaml.DocumentEndEvent):
                documents += 1
    except yaml.YAMLError:
        return None
    finally:
        parser.dispose()
    return None


def _shifted(line: int | None, offset: int) -> int | None:
    return None if line is None else line + offset


def load_single(
    path: Path, limits: Limits = MANIFEST_LIMITS, *, lines: bool = False
) -> Document | Refusal:
    """The one document of a file (an empty file holds `None`)."""
    text = read_file(path, limits)
    if isinstance(text, Refusal):
        return text
    found: Document | None = None
    for loaded in load_all(text, limits, lines=lines):
        if isinstance(loaded, Refusal):
            return loaded
        if found is not None:
            return Refusal(
                Problem.SYNTAX, "expected a single document, found more", loaded.start_line
            )
        found = loaded
    return found if found is not None else Document(None, 1, 1)


class _Builder:
    """Builds Python values from composed nodes, counting each node as often as aliases use it."""

    built: dict[int, tuple[object, int]]
    """Per document: what a collection node built and how many nodes it counted."""
    lines: dict[int, int]

    loader_class: Any = _Loader

    def __init__(
        self, text: str, limits: Limits, track_lines: bool, unique_keys: bool = True
    ) -> None:
        self.limits = limits
        self.track_lines = track_lines
        # Without a `*` in the text there is no alias, and no node needs remembering.
        self.may_alias = "*" in text
        self.unique_keys = unique_keys
        self.nodes = 0
        self.aliased = 0
        self.line_offset = 0
        self.json_values = 0

    def loader_for(self, text: str) -> Any:
        self.loader = self.loader_class(text)
        return self.loader

    def line(self, node: Node) -> int:
        """The 1-based line of the stream a node starts on."""
        return int(node.start_mark.line) + 1 + self.line_offset

    def document(self, root: Node) -> Document:
        self.built = {}
        self.lines = {}
        data = self.build(root)
        self._check_nodes(root)
        return Document(
            data, self.line(root), int(root.end_mark.line) + 1 + self.line_offset, self.lines
        )

    def build(self, node: Node) -> object:
        if type(node) is ScalarNode:
            self.nodes += 1
            return node.value if node.tag == _STR else self._scalar(node)
        if not self.may_alias:
            return self._collection(node)
        done = self.built.get(id(node))
        if done is not None:
            value, size = done
            self.nodes += size
            self.aliased += size
            self._check_aliases(node)
            return value
        start = self.nodes
        value = self._collection(node)
        self.built[id(node)] = (value, self.nodes - start)
        return value

    def _collection(self, node: Node) -> object:
        self.nodes += 1
        if type(node) is SequenceNode and node.tag == _SEQ:
            return [self.build(item) for item in node.value]
        if type(node) is MappingNode and node.tag == _MAP:
            return self._mapping(node)
        raise self._unsupported_tag(node)

    def _mapping(self, node: MappingNode) -> dict[object, object]:
        mapping: dict[object, object] = {}
        merged: list[Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged.append(value_node)
                continue
            key = self.build(key_node)
            value = self.build(value_node)
            try:
                mapping[key] = value
            except TypeError:
                raise self._refuse(
                    Problem.UNSUPPORTED, "a key is a list or a mapping", key_node
                ) from None
        if self.unique_keys and len(mapping) != len(node.value) - len(merged):
            self._duplicate(node)
        if merged:
            mapping = {**self._merge(merged), **mapping}
        if self.track_lines:
            self.lines[id(mapping)] = self.line(node)
        return mapping

    def _merge(self, values: list[Node]) -> dict[object, object]:
        """`<<: *base`, `<<: [*a, *b]`, several `<<`: the earliest mapping wins, and the mapping's
        own keys win over all (as PyYAML builds it)."""
        sources: list[Node] = []
        for value in values:
            sources += value.value if type(value) is SequenceNode else [value]
        result: dict[object, object] = {}
        for source in reversed(sources):
            built = self.build(source)
            if not isinstance(built, dict):
                raise self._refuse(
                    Problem.UNSUPPORTED,
                    "map merge requires map or sequence of maps as the value",
                    source,
                )
            result.update(built)
        return result

    def _duplicate(self, node: MappingNode) -> None:
        """go-yaml v2's setMapIndex in strict mode: the line is the second value's."""
        seen: set[object] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.build(key_node)
            if key in seen:
                shown = json.dumps(key, ensure_ascii=False, default=str)
                raise self._refuse(
                    Problem.DUPLICATE_KEY, f"key {shown} already set in map", value_node
                )
            seen.add(key)

    def _scalar(self, node: ScalarNode) -> object:
        construct = _SCALARS.get(node.tag)
        if construct is None or node.tag in (_MAP, _SEQ):
            raise self._unsupported_tag(node)
        try:
            value = construct(self.loader, node)
        except Exception:  # noqa: BLE001 - PyYAML's constructors fail in many ways on bad text
            raise self._undecodable(node) from None
        if type(value) is int and value.bit_length() > _INT_TEXT_BITS:
            # `0x` and 3,600 digits builds an int that Python cannot write in decimal, as a
            # decimal text that long cannot be built: refused alike, before anything quotes it.
            raise self._undecodable(node)
        return value

    def _undecodable(self, node: ScalarNode) -> _RefusedError:
        value = node.value if len(node.value) <= 40 else node.value[:40] + "..."
        shown = node.tag.replace(_YAML_TAGS, "!!")
        return self._refuse(Problem.SYNTAX, f"cannot decode !!str `{value}` as a {shown}", node)

    def _unsupported_tag(self, node: Node) -> _RefusedError:
        shown = node.tag.replace(_YAML_TAGS, "!!")
        return self._refuse(Problem.UNSUPPORTED, f"the tag {shown} is not supported", node)

    def _refuse(self, problem: Problem, detail: str, node: Node) -> _RefusedError:
        return _RefusedError(Refusal(problem, detail, self.line(node)))

    def _check_aliases(self, node: Node) -> None:
        # go-yaml also asks for more than 100 aliased nodes, which these two imply.
        nodes, aliased = self.nodes, self.aliased
        if nodes > 1000 and aliased / nodes > _allowed_alias_ratio(nodes):
            raise self._refuse(Problem.ALIASES, "document contains excessive aliasing", node)
        self._check_nodes(node)

    def _check_nodes(self, node: Node) -> None:
        if self.nodes > self.limits.max_nodes:
            raise self._refuse(
                Problem.TOO_MANY_NODES,
                f"it holds more than {self.limits.max_nodes:,} values",
                node,
            )


class _KubernetesBuilder(_Builder):
    """Values as sigs.k8s.io/yaml builds them for JSON; a document's first problem is kept as its
    `problem` (the value left out) rather than ending the stream."""

    loader_class = _KubernetesLoader
    problem: Refusal | None = None

    def document(self, root: Node) -> Document:
        self.problem = None
        document = super().document(root)
        return msgspec.structs.replace(document, problem=self.problem)

    def _note(self, problem: Problem, detail: str, node: Node) -> None:
        if self.problem is None:
            self.problem = Refusal(problem, detail, self.line(node))

    def _collection(self, node: Node) -> object:
        # go-yaml decodes a collection by its kind whatever its tag says (`!Foo {a: 1}`).
        self.nodes += 1
        if type(node) is SequenceNode:
            return [self.build(item) for item in node.value]
        assert isinstance(node, MappingNode)
        return self._mapping(node)

    def _mapping(self, node: MappingNode) -> dict[object, object]:
        """go-yaml v2 decode.go `(*decoder).mapping`: keys in document order, so a `<<` writes
        its keys over those before it and a key after it writes over the merged ones."""
        mapping: dict[object, object] = {}
        own: set[object] | None = None  # its own keys, once a merge has written others
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                if own is None:
                    own = set(mapping)
                self._merge_into(mapping, key_node, value_node)
                continue
            key = self.build(key_node) if type(key_node) is not ScalarNode else self._key(key_node)
            value = self.build(value_node)
            if type(key) is not str:
                key = self._key_text(key, key_node)
                if key is None:
                    continue
            if key in (mapping if own is None else own):
                shown = json.dumps(key, ensure_ascii=False)
                self._note(Problem.DUPLICATE_KEY, f"key {shown} already set in map", value_node)
            if own is not None:
                own.add(key)
            mapping[key] = value
        if self.track_lines:
            self.lines[id(mapping)] = self.line(node)
        return mapping

    def _key_text(self, key: object, node: Node) -> str | None:
        if isinstance(key, (list, dict)):
            self._note(Problem.UNSUPPORTED, "a key is a list or a mapping", node)
            return None
        try:
            return goscalars.key_text(key)  # type: ignore[arg-type]
        except goscalars.ScalarError as error:
            self._note(Problem.UNSUPPORTED, str(error), node)
            return None

    def _merge_into(self, mapping: dict[object, object], key: Node, value: Node) -> None:
        """go-yaml v2 `(*decoder).merge`: a mapping, an alias to one, or a list written in place
        whose items are each one of those, merged from last to first so the earliest wins. An
        alias to a list is no such list (`case aliasNode: if n.alias.kind != mappingNode`)."""
        in_place = value.start_mark.index >= key.end_mark.index  # an alias points back
        sources = value.value if type(value) is SequenceNode and in_place else [value]
        if not all(type(source) is MappingNode for source in sources):
            detail = "map merge requires map or sequence of maps as the value"
            self._note(Problem.UNSUPPORTED, detail, key)
            return
        for source in reversed(sources):
            mapping.update(self.build(source))  # type: ignore[call-overload]

    def _key(self, node: ScalarNode) -> object:
        """A key's value before it becomes text: a number is not yet JSON's (1e6 is `1e+06`)."""
        self.nodes += 1
        if node.tag == _STR:
            return node.value
        if node.tag == _PLAIN:
            return (_PLAIN_VALUES.get(node.value) or goscalars.resolve(node.value))[1]
        return self._scalar(node, as_json=False)

    def _scalar(self, node: ScalarNode, *, as_json: bool = True) -> object:
        tag, text = node.tag, node.value
        try:
            if tag == _PLAIN:
                value = (_PLAIN_VALUES.get(text) or goscalars.resolve(text))[1]
            elif tag == _MERGE:
                return "<<"  # a `<<` that is a value, not a key
            elif tag == goscalars.BINARY:
                return goscalars.decode_binary(text)
            else:
                value = goscalars.resolve(text, tag)[1]
            return goscalars.for_json(value) if as_json else value
        except goscalars.NotJsonError as error:
            self._note(Problem.UNSUPPORTED, str(error), node)
            return None
        except goscalars.ScalarError as error:
            self._note(Problem.SYNTAX, str(error), node)
            return None


def _allowed_alias_ratio(nodes: int) -> float:
    """go-yaml's allowedAliasRatio: the share of decoded nodes that may come from aliases."""
    if nodes <= _ALIAS_RANGE_LOW:
        return 0.99
    if nodes >= _ALIAS_RANGE_HIGH:
        return 0.10
    share = (nodes - _ALIAS_RANGE_LOW) / (_ALIAS_RANGE_HIGH - _ALIAS_RANGE_LOW)
    return 0.99 - 0.89 * share
