"""Saved snapshots: every read doctor makes, failed reads included, as plain YAML.

Layout of a snapshot directory:
  snapshot.yaml          what was captured: namespace, time, server, truegreen version
  reads/NNN-....yaml     one read each: its key and its objects, its summary (a fold) or
                         its CantRead

List items are stored as a real API server sends them, without kind and apiVersion
(kubernetes/kubernetes#3030); reading a snapshot stamps them back from the read's kind, so a
snapshot written by any version reads the same.
"""

import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from truegreen.cluster.classify import describe
from truegreen.cluster.kinds import Kind, stamped
from truegreen.cluster.reader import (
    ClusterReader,
    FieldSelector,
    Fold,
    ReadKey,
    field_selector_text,
    label_selector_text,
)
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
from truegreen.cluster.schedule import read_ticket
from truegreen.errors import UsageError

Recorded = ListRead | GetRead | FoldRead

FORMAT_VERSION = 1
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True)
class SnapshotInfo:
    """What a snapshot says about its own capture."""

    namespace: str
    taken_at: datetime
    server: str
    settings: Mapping[str, str] = field(default_factory=dict)
    """The command settings the snapshot was taken with (`credentials_secret`, `job_requests`)."""


class RecordingReader:
    """Wraps a reader and remembers every read and its answer, in the order they were asked
    for (reads in flight together finish in any order; their tickets keep the order)."""

    def __init__(self, inner: ClusterReader) -> None:
        self._inner = inner
        self._records: list[tuple[int, ReadKey, Recorded]] = []
        self._lock = threading.Lock()

    @property
    def recorded(self) -> list[tuple[ReadKey, Recorded]]:
        """Every read and its answer, in the order asked for."""
        with self._lock:
            return [(key, read) for _, key, read in sorted(self._records, key=lambda r: r[0])]

    def _record(self, ticket: int, key: ReadKey, read: Recorded) -> None:
        with self._lock:
            self._records.append((ticket, key, read))

    @property
    def namespace(self) -> str:
        """The inner reader's namespace."""
        return self._inner.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """Read through, and record the answer."""
        ticket = read_ticket()
        read = self._inner.list(kind, namespace=namespace, labels=labels, fields=fields)
        key = ReadKey(
            "list", kind, namespace, None, label_selector_text(labels), field_selector_text(fields)
        )
        self._record(ticket, key, read)
        return read

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """Fold through, and record the summary (never the objects)."""
        ticket = read_ticket()
        read = self._inner.fold(kind, fold, namespace=namespace, fields=fields)
        key = ReadKey("fold", kind, namespace, fold.name, fields=field_selector_text(fields))
        self._record(ticket, key, read)
        return read

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """Read through, and record the answer."""
        ticket = read_ticket()
        read = self._inner.get(kind, name, namespace=namespace)
        self._record(ticket, ReadKey("get", kind, namespace, name), read)
        return read


def write_snapshot(
    directory: Path, info: SnapshotInfo, recorded: list[tuple[ReadKey, Recorded]]
) -> None:
    """Write a snapshot atomically: into a temporary sibling, then renamed into place."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(
            f"cannot write the snapshot to {directory}",
            "it already exists and is not an empty folder",
            "choose a new folder with -o",
        )
    parent = directory.resolve().parent
    if not parent.is_dir():
        raise UsageError(f"cannot write the snapshot to {directory}", f"{parent} does not exist")
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=parent))
    try:
        meta = {
            "truegreen_snapshot": FORMAT_VERSION,
            "namespace": info.namespace,
            "taken_at": info.taken_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "server": info.server,
            "settings": dict(info.settings),
        }
        (staging / "snapshot.yaml").write_text(yaml.dump(meta, Dumper=_Dumper, sort_keys=False))
        (staging / "reads").mkdir()
        for number, (key, read) in enumerate(recorded, start=1):
            name = f"{number:03d}-{key.verb}-{key.kind.plural}" + (
                f"-{key.name}" if key.name else ""
            )
            document = {"read": _key_document(key), "result": _result_document(key.kind, read)}
            (staging / "reads" / f"{name}.yaml").write_text(
                yaml.dump(document, Dumper=_Dumper, sort_keys=False)
            )
        if directory.exists():
            directory.rmdir()
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _key_document(key: ReadKey) -> dict[str, Any]:
    document: dict[str, Any] = {"verb": key.verb, "resource": key.kind.plural}
    document["namespace"] = key.namespace
    if key.name is not None:
        document["name"] = key.name
    if key.labels:
        document["labels"] = key.labels
    if key.fields:
        document["fields"] = key.fields
    return document


def _result_document(kind: Kind, read: Recorded) -> dict[str, Any]:
    if isinstance(read, Listed):
        return {"items": [_as_sent(kind, item) for item in read.items]}
    if isinstance(read, Got):
        return {"object": dict(read.obj)}
    if isinstance(read, Folded):
        return {"summary": dict(read.summary)}
    cant: dict[str, Any] = {"failure": read.failure.value, "reason": read.reason}
    if not read.reached:
        cant["reached"] = False
    return {"cant_read": cant}


class SnapshotReader:
    """Answers reads from a snapshot directory; a read it does not hold is NOT_CAPTURED."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.info = _load_info(directory)
        self._reads: dict[ReadKey, Recorded] = {}
        for path in sorted((directory / "reads").glob("*.yaml")):
            loaded = _load_read(path)
            if loaded is not None:
                self._reads[loaded[0]] = loaded[1]

    @property
    def namespace(self) -> str:
        """The namespace the snapshot was taken of."""
        return self.info.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The recorded answer to this list."""
        key = ReadKey(
            "list", kind, namespace, None, label_selector_text(labels), field_selector_text(fields)
        )
        read = self._reads.get(key)
        if isinstance(read, Listed | CantRead):
            return read
        return CantRead(
            ReadFailure.NOT_CAPTURED, describe(ReadFailure.NOT_CAPTURED, f"list {kind.plural}")
        )

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The recorded summary of this fold."""
        key = ReadKey("fold", kind, namespace, fold.name, fields=field_selector_text(fields))
        read = self._reads.get(key)
        if isinstance(read, Folded | CantRead):
            return read
        return CantRead(
            ReadFailure.NOT_CAPTURED, describe(ReadFailure.NOT_CAPTURED, f"list {kind.plural}")
        )

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """The recorded answer to this get."""
        read = self._reads.get(ReadKey("get", kind, namespace, name))
        if isinstance(read, Got | CantRead):
            return read
        action = f"read {kind.spec.name.lower()} {name!r}"
        return CantRead(ReadFailure.NOT_CAPTURED, describe(ReadFailure.NOT_CAPTURED, action))


def _as_sent(kind: Kind, item: Mapping[str, Any]) -> dict[str, Any]:
    """A list item as the server sent it: the kind and apiVersion the reader stamped on it
    (they are the read's own) are left out."""
    spec = kind.spec
    return {
        key: value
        for key, value in item.items()
        if not (key == "kind" and value == spec.name)
        and not (key == "apiVersion" and value == spec.api_version)
    }


def _load_info(directory: Path) -> SnapshotInfo:
    meta_path = directory / "snapshot.yaml"
    if not directory.is_dir():
        raise UsageError(
            f"snapshot {directory} is not a folder", todo="pass a folder to --snapshot"
        )
    try:
        meta = yaml.load(meta_path.read_text(encoding="utf-8"), Loader=_Loader)
    except OSError:
        raise UsageError(
            f"snapshot {directory} has no snapshot.yaml",
            todo="pass a folder written by `truegreen snapshot -o DIR`",
        ) from None
    except (yaml.YAMLError, UnicodeDecodeError):
        raise UsageError(
            f"snapshot {meta_path} is not valid YAML", todo="fix or re-take it"
        ) from None
    if not isinstance(meta, Mapping) or meta.get("truegreen_snapshot") != FORMAT_VERSION:
        raise UsageError(
            f"{meta_path} is not a truegreen snapshot (format {FORMAT_VERSION})",
            todo="re-take it with `truegreen snapshot -o DIR`",
        )
    try:
        taken_at = datetime.strptime(str(meta["taken_at"]), "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=UTC
        )
        namespace = str(meta["namespace"])
    except (KeyError, ValueError):
        raise UsageError(
            f"{meta_path} lacks a valid taken_at or namespace", todo="fix or re-take it"
        ) from None
    settings = meta.get("settings") or {}
    if not isinstance(settings, Mapping):
        raise UsageError(f"{meta_path}: settings must be a mapping", todo="fix or re-take it")
    kept = {str(k): str(v) for k, v in settings.items() if v is not None}
    return SnapshotInfo(namespace, taken_at, str(meta.get("server", "")), kept)


def _load_read(path: Path) -> tuple[ReadKey, Recorded] | None:
    """One recorded read; a file that cannot be understood answers as MALFORMED, or is skipped."""
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
        read_doc, result = document["read"], document["result"]
        kind = Kind.from_plural(str(read_doc["resource"]))
        namespace = read_doc.get("namespace")
        key = ReadKey(
            str(read_doc["verb"]),
            kind,
            None if namespace is None else str(namespace),
            None if read_doc.get("name") is None else str(read_doc["name"]),
            str(read_doc.get("labels", "")),
            str(read_doc.get("fields", "")),
        )
    except (OSError, UnicodeDecodeError, yaml.YAMLError, KeyError, TypeError, ValueError):
        return None
    action = f"{key.verb} {kind.plural}"
    malformed = CantRead(
        ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action, f"snapshot file {path.name}")
    )
    if not isinstance(result, Mapping):
        return key, malformed
    if "cant_read" in result:
        cant = result["cant_read"]
        try:
            failure, reason = ReadFailure(cant["failure"]), str(cant["reason"])
            return key, CantRead(failure, reason, cant.get("reached", True) is not False)
        except (KeyError, TypeError, ValueError):
            return key, malformed
    if key.verb == "fold":
        summary = result.get("summary")
        return key, Folded(summary) if isinstance(summary, Mapping) else malformed
    if key.verb == "list":
        items = result.get("items")
        if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
            return key, malformed
        return key, Listed(tuple(stamped(kind, item) for item in items))
    obj = result.get("object")
    if not isinstance(obj, Mapping):
        return key, malformed
    return key, Got(stamped(kind, obj))
