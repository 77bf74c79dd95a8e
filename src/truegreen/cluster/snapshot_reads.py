"""One saved read file, as the read it answers: hostile input, bounded, never a crash.

truegreen writes a read file as JSON (which is YAML: any YAML reader, older truegreen too,
reads it), so it decodes at the speed of the live path and through the same views
(cluster/views.py): a list's items skip managedFields and every field nothing reads, whether
they were saved by truegreen or by hand. A file that is not JSON (a snapshot written before,
or edited as YAML) goes through the project's YAML loader and then through the same views.
"""

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from truegreen.cluster.classify import describe
from truegreen.cluster.kinds import Kind, stamp
from truegreen.cluster.reader import ReadKey
from truegreen.cluster.reads import (
    CantRead,
    Folded,
    FoldRead,
    GetRead,
    Got,
    Listed,
    ListRead,
    ReadFailure,
)
from truegreen.cluster.views import as_object, item_list
from truegreen.yamlsafe import (
    SNAPSHOT_LIMITS,
    Document,
    Limits,
    Problem,
    Refusal,
    decode,
    load_all,
    read_file,
)

Recorded = ListRead | GetRead | FoldRead
Text = str | Refusal
"""A snapshot file's text, or why it could not be read as text."""
_OPENS_AN_OBJECT = re.compile(r"\s*\{")
_VERBS = ("list", "get", "fold")
"""The reads a snapshot answers; a log is kept for people and never asked for."""


def file_text(path: Path) -> Text:
    """One snapshot file's text; a link to a regular file is refused like any file that is not
    regular (a link to a device or a pipe is refused for what it points at)."""
    if path.is_symlink() and path.is_file():
        return Refusal(Problem.NOT_REGULAR, "it is a link, not a regular file")
    return read_file(path, SNAPSHOT_LIMITS)


def member_text(data: bytes) -> Text:
    """An archive member's text, within the same caps as a file's."""
    return decode(data, SNAPSHOT_LIMITS)


def parsed(text: Text, limits: Limits = SNAPSHOT_LIMITS) -> Document | Refusal:
    """The single YAML document of a file's text."""
    if isinstance(text, Refusal):
        return text
    found: Document | None = None
    for loaded in load_all(text, limits, lines=False):
        if isinstance(loaded, Refusal):
            return loaded
        if found is not None:
            return Refusal(Problem.SYNTAX, "expected a single document, found more")
        found = loaded
    return found if found is not None else Document(None, 1, 1)


def load_read(
    file_name: str, text: Text, limits: Limits = SNAPSHOT_LIMITS
) -> tuple[ReadKey, Recorded] | None:
    """One recorded read; a file that cannot be understood answers as MALFORMED, or is skipped
    (and so does a log: doctor never asks for one)."""
    if isinstance(text, Refusal):
        return None  # a pipe, a device, a bomb or a broken file: that read was not captured
    if _OPENS_AN_OBJECT.match(text):
        try:
            return _from_json(file_name, text, limits)
        except msgspec.DecodeError:
            pass  # not JSON after all (YAML in flow style): the YAML loader judges it
        except (RecursionError, _RefusedError):
            return None  # what the YAML loader refuses too: that read was not captured
    return _from_yaml(file_name, parsed(text, limits))


# -- JSON: what truegreen writes ---------------------------------------------------------------
class _File(msgspec.Struct):
    read: Any
    result: msgspec.Raw


class _Result(msgspec.Struct, rename={"obj": "object"}):
    cant_read: Any = msgspec.UNSET
    summary: Any = msgspec.UNSET
    items: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    obj: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


def _from_json(file_name: str, text: str, limits: Limits) -> tuple[ReadKey, Recorded] | None:
    """A read file in JSON; DecodeError when it is not JSON at all."""
    if _values_at_most(text) > limits.max_nodes:
        return None  # more values than the YAML loader would build: not captured either
    try:
        document = msgspec.json.decode(text, type=_File)
    except msgspec.ValidationError:
        return None
    _refuse_duplicate_keys(text)
    key = _key(document.read)
    if key is None:
        return None
    malformed = _malformed(key, file_name)
    try:
        result = msgspec.json.decode(document.result, type=_Result)
        if result.cant_read is not msgspec.UNSET:
            return key, _cant(result.cant_read, malformed)
        if key.verb == "fold":
            return key, _folded(result.summary, malformed)
        if key.verb == "list":
            if isinstance(result.items, msgspec.UnsetType):
                return key, malformed
            items = msgspec.json.decode(result.items, type=item_list(key.kind))
            return key, Listed(tuple(as_object(item, key.kind) for item in items))
        if isinstance(result.obj, msgspec.UnsetType):
            return key, malformed
        return key, Got(stamp(msgspec.json.decode(result.obj, type=dict[str, Any]), key.kind))
    except msgspec.ValidationError:
        return key, malformed


def _values_at_most(text: str) -> int:
    """An upper bound on the values (keys included) a JSON text decodes to: every one but the
    first follows a `[`, `{`, `,` or `:` (those inside strings only raise the bound)."""
    return 1 + sum(text.count(mark) for mark in "[{,:")


class _RefusedError(Exception):
    """A file the YAML loader would refuse too: a key twice in one object (docs/reliability.md),
    or text that only one of the two JSON parsers accepts."""


def _refuse_duplicate_keys(text: str) -> None:
    """Raise _RefusedError when any object of `text` repeats a key: last-wins would silently
    keep the second. Nothing is kept while checking."""

    def check(pairs: list[tuple[str, Any]]) -> None:
        if len({key for key, _ in pairs}) != len(pairs):
            raise _RefusedError

    try:
        json.loads(text, object_pairs_hook=check)
    except ValueError:
        raise _RefusedError from None  # what msgspec read and this parser does not: refused


# -- YAML: snapshots written before, or by hand ------------------------------------------------
def _from_yaml(file_name: str, loaded: Document | Refusal) -> tuple[ReadKey, Recorded] | None:
    if isinstance(loaded, Refusal):
        return None
    document: Any = loaded.data
    try:
        read_doc, result = document["read"], document["result"]
    except (KeyError, TypeError):
        return None
    key = _key(read_doc)
    if key is None:
        return None
    malformed = _malformed(key, file_name)
    if not isinstance(result, Mapping):
        return key, malformed
    if "cant_read" in result:
        return key, _cant(result["cant_read"], malformed)
    if key.verb == "fold":
        return key, _folded(result.get("summary"), malformed)
    if key.verb == "list":
        try:
            items = msgspec.convert(result.get("items"), item_list(key.kind))
        except msgspec.ValidationError:
            return key, malformed
        return key, Listed(tuple(as_object(item, key.kind) for item in items))
    obj = result.get("object")
    if not isinstance(obj, Mapping):
        return key, malformed
    return key, Got(stamp(dict(obj), key.kind))


# -- both --------------------------------------------------------------------------------------
def _key(read_doc: Any) -> ReadKey | None:
    """The read a file answers; None when it names none (or a log)."""
    try:
        if read_doc["verb"] not in _VERBS:
            return None
        namespace = read_doc.get("namespace")
        return ReadKey(
            str(read_doc["verb"]),
            Kind.from_plural(
                str(read_doc["resource"]),
                None if read_doc.get("apiVersion") is None else str(read_doc["apiVersion"]),
            ),
            None if namespace is None else str(namespace),
            None if read_doc.get("name") is None else str(read_doc["name"]),
            str(read_doc.get("labels", "")),
            str(read_doc.get("fields", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _malformed(key: ReadKey, file_name: str) -> CantRead:
    action = f"{key.verb} {key.kind.plural}"
    return CantRead(
        ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action, f"snapshot file {file_name}")
    )


def _cant(cant: Any, malformed: CantRead) -> CantRead:
    try:
        failure, reason = ReadFailure(cant["failure"]), str(cant["reason"])
        return CantRead(failure, reason, cant.get("reached", True) is not False)
    except (KeyError, TypeError, ValueError):
        return malformed


def _folded(summary: Any, malformed: CantRead) -> FoldRead:
    return Folded(summary) if isinstance(summary, Mapping) else malformed
