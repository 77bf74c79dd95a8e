"""Saved snapshots: every read doctor makes, failed reads included, as plain YAML; with the
namespace's newest events and the last lines of every failing container's logs. Everything is
redacted by policy (cluster/redact.py, listed in docs/snapshot.md) before it is written.

Layout, as a folder or under one top folder of a `.tar.gz` archive (cluster/archive.py):
  snapshot.yaml          what was captured: namespace, time, server, settings
  reads/NNN-....yaml     one read each: its key and its objects, its summary (a fold), a log's
                         text, or its CantRead. Reads are written as JSON (which is YAML) and
                         read back by cluster/snapshot_reads.py; logs stay literal YAML blocks.

List items are stored as a real API server sends them, without kind and apiVersion
(kubernetes/kubernetes#3030); reading a snapshot stamps them back from the read's kind, so a
snapshot written by any version reads the same.
"""

import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import msgspec
import yaml
from msgspec import Struct, field

from truegreen.cluster.archive import META, READS, is_archive, read_archive, writable_parent
from truegreen.cluster.classify import describe
from truegreen.cluster.endpoints import get_action
from truegreen.cluster.kinds import Kind
from truegreen.cluster.logs import Logged, LogRead, LogRequest, cut_note
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
from truegreen.cluster.redact import redact_object, redact_value
from truegreen.cluster.schedule import read_ticket
from truegreen.cluster.snapshot_reads import (
    Recorded,
    Text,
    file_text,
    load_read,
    member_text,
    parsed,
)
from truegreen.errors import UsageError
from truegreen.redaction.text import redact_shapes, redact_text
from truegreen.yamlsafe import Document, Refusal
from truegreen.yamlwords import plain

FORMAT_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
REGISTRY_VERB = "registry"
REGISTRY_RESOURCE = "images"
"""The key of the file that holds the registries' answers (`reads/NNN-registry-images.yaml`):
no read of the cluster, so readers of reads skip it."""
_REGISTRY_FILE = re.compile(rf"\d+-{REGISTRY_VERB}-{REGISTRY_RESOURCE}\.yaml")
TRIAL_VERB = "trial"
TRIAL_RESOURCE = "pods"
"""The trial's evidence (`snapshot --trial`): one file, after the registries' answers."""
_TRIAL_FILE = re.compile(rf"\d+-{TRIAL_VERB}-{TRIAL_RESOURCE}\.yaml")


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The safe dumper, writing text of several lines (logs, messages) as a literal block."""


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    )


_Dumper.add_representer(str, _represent_text)


class SnapshotInfo(Struct, frozen=True):
    """What a snapshot says about its own capture."""

    namespace: str
    taken_at: datetime
    server: str
    settings: Mapping[str, str] = field(default_factory=dict)
    """The command settings the snapshot was taken with (`credentials_secret`, `job_requests`,
    `no_registry`)."""


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


class Capture(Struct, frozen=True):
    """Everything one snapshot saves, before it is written."""

    info: SnapshotInfo
    reads: Sequence[tuple[ReadKey, Recorded]]
    logs: Sequence[tuple[LogRequest, LogRead]] = ()
    logs_left_out: int = 0
    """Failing containers whose logs were not read: more than the cap."""
    registry: Sequence[Any] | None = None
    """The registries' answers about the images, as plain values; None: not asked."""
    trial: Mapping[str, Any] | None = None
    """What the trial read back, as plain values (truegreen.trial.record); None: no trial."""


def render(capture: Capture) -> list[tuple[str, bytes]]:
    """The snapshot's files, by layout-relative name, every value passed through the redaction
    policy once more on its way out (redaction is idempotent: it costs time, never meaning)."""
    info = capture.info
    meta: dict[str, Any] = {
        "truegreen_snapshot": FORMAT_VERSION,
        "namespace": info.namespace,
        "taken_at": info.taken_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "server": redact_text(info.server),
        "settings": {key: redact_text(value) for key, value in info.settings.items()},
    }
    if capture.logs_left_out:
        meta["logs_left_out"] = capture.logs_left_out
    files = [(META, _dump(meta))]
    for number, (key, read) in enumerate(capture.reads, start=1):
        name = _file_name(number, key.verb, key.kind.plural, key.name)
        document = {"read": _key_document(key), "result": _result_document(key.kind, read)}
        files.append((name, _dump_json(document)))
    for number, (request, log) in enumerate(capture.logs, start=len(capture.reads) + 1):
        container = request.container + ("-previous" if request.previous else "")
        name = _file_name(number, "log", Kind.POD.plural, f"{request.pod}-{container}")
        document = {
            "read": {
                "verb": "log",
                "resource": Kind.POD.plural,
                "namespace": info.namespace,
                "name": request.pod,
                "container": request.container,
                "previous": request.previous,
            },
            "result": _cant_document(log) if isinstance(log, CantRead) else _log_document(log),
        }
        files.append((name, _dump(document)))
    if capture.registry is not None:
        number = len(capture.reads) + len(capture.logs) + 1
        document = {
            "read": {"verb": REGISTRY_VERB, "resource": REGISTRY_RESOURCE},
            "result": {"lookups": redact_value(list(capture.registry))},
        }
        files.append(
            (_file_name(number, REGISTRY_VERB, REGISTRY_RESOURCE, None), _dump_json(document))
        )
    if capture.trial is not None:
        number = len(files)
        trial: dict[str, object] = {
            "read": {"verb": TRIAL_VERB, "resource": TRIAL_RESOURCE},
            "result": redact_value(dict(capture.trial)),
        }
        files.append((_file_name(number, TRIAL_VERB, TRIAL_RESOURCE, None), _dump_json(trial)))
    return files


def _log_document(log: Logged) -> dict[str, str]:
    """The saved log, and, when it holds less than the lines asked for, what it leaves out."""
    cut = cut_note(log)
    return {"log": redact_text(log.text), **({"cut": cut} if cut else {})}


def _dump(document: Mapping[str, Any]) -> bytes:
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True).encode()


def _dump_json(document: Mapping[str, Any]) -> bytes:
    """A read file as indented JSON: YAML to any reader, and decoded by truegreen at the
    speed of the live path (cluster/snapshot_reads.py)."""
    return msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n"


def _file_name(number: int, verb: str, plural: str, name: str | None) -> str:
    """`reads/007-get-secrets-regcred.yaml`. Names come from the cluster: only their safe
    characters reach a file name (the read's key inside the file is what counts)."""
    stem = f"{number:03d}-{verb}-{plural}" + (f"-{name}" if name else "")
    return f"{READS}/{_UNSAFE.sub('_', stem)[:120]}.yaml"


def check_new_folder(directory: Path) -> Path:
    """The folder `directory` goes in; UsageError unless `directory` is new or empty."""
    if directory.is_symlink() or (
        directory.exists() and (not directory.is_dir() or any(directory.iterdir()))
    ):
        raise UsageError(
            f"cannot write the snapshot to {directory}",
            "it already exists and is not an empty folder",
            "choose a new folder with --output-directory",
        )
    return writable_parent(directory, "--output-directory")


def write_folder(directory: Path, files: Sequence[tuple[str, bytes]]) -> None:
    """Write a snapshot folder (0700, files 0600, whatever the umask) atomically: into a
    temporary sibling, then renamed into place. An existing folder must be empty."""
    parent = check_new_folder(directory)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=parent))
    try:
        # mkdtemp's 0700 and mkdir(2)'s mode are masked by the umask (0177 leaves a 0600
        # folder that no one but root may enter); chmod(2) is not, as fchmod is not for files.
        os.chmod(staging, 0o700)
        (staging / READS).mkdir(mode=0o700)
        os.chmod(staging / READS, 0o700)
        for name, data in files:
            _write_private(staging / name, data)
        if directory.exists():
            directory.rmdir()
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _write_private(path: Path, data: bytes) -> None:
    """A new file readable by its owner only, whatever the umask."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        os.fchmod(stream.fileno(), 0o600)
        stream.write(data)


def _key_document(key: ReadKey) -> dict[str, Any]:
    document: dict[str, Any] = {"verb": key.verb, "resource": key.kind.plural}
    if any(k is not key.kind and k.plural == key.kind.plural for k in Kind):
        # One resource served at two versions (Kueue's v1beta2 and v1beta1): which one.
        document["apiVersion"] = key.kind.spec.api_version
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
        return {"items": [_as_sent(kind, redact_object(item)) for item in read.items]}
    if isinstance(read, Got):
        return {"object": redact_object(read.obj)}
    if isinstance(read, Folded):
        return {"summary": redact_value(dict(read.summary))}
    return _cant_document(read)


def _cant_document(read: CantRead) -> dict[str, Any]:
    # A reason is truegreen's own line naming what it read (`read secret 'regcred': not found`):
    # the named rules would take a name holding a secret word for one (`regcred': <redacted>`)
    # and doctor offline would say other words than live. Text from elsewhere in it went
    # through every rule where it was quoted (a login plugin's words: exec_plugin.py `_said`).
    cant: dict[str, Any] = {"failure": read.failure.value, "reason": redact_shapes(read.reason)}
    if not read.reached:
        cant["reached"] = False
    return {"cant_read": cant}


class SnapshotReader:
    """Answers reads from a snapshot folder or archive; a read it does not hold is NOT_CAPTURED.

    Everything is loaded at once and checked as hostile input: files that are not regular,
    links, oversized or malformed files are reads not captured, never a crash."""

    def __init__(self, where: str, meta: Text | None, reads: Iterable[tuple[str, Text]]) -> None:
        self.where = where
        self.info = _load_info(where, None if meta is None else parsed(meta))
        self._reads: dict[ReadKey, Recorded] = {}
        self.registry: object | None = None
        """The registries' answers as saved (hostile: read them as such); None when the
        snapshot holds none."""
        self.trial: object | None = None
        """What the trial read back as saved (hostile); None when the snapshot holds none."""
        for name, text in reads:
            read = load_read(name, text)
            if read is not None:
                self._reads[read[0]] = read[1]
            elif self.registry is None and _REGISTRY_FILE.fullmatch(name):
                self.registry = _registry_record(text)
            elif self.trial is None and _TRIAL_FILE.fullmatch(name):
                self.trial = _trial_record(text)

    @classmethod
    def open(cls, path: Path) -> "SnapshotReader":
        """The snapshot at `path`: a folder, or a `.tar.gz` archive written by truegreen."""
        if is_archive(path):
            files = read_archive(path)
            meta = files.pop(META, None)
            return cls(
                f"{path}:{META}",
                None if meta is None else member_text(meta),
                (
                    (PurePosixPath(name).name, member_text(files.pop(name)))
                    for name in sorted(files)
                ),
            )
        if not os.path.lexists(path):
            raise UsageError(
                f"snapshot {path} does not exist",
                todo="pass a folder or a .tar.gz file written by `truegreen snapshot`",
            )
        if not path.is_dir():
            raise UsageError(
                f"snapshot {path} is not a folder or a snapshot archive",
                todo="pass a folder or a .tar.gz file written by `truegreen snapshot`",
            )
        meta_path = path / META
        reads = sorted((path / READS).glob("*.yaml"))
        return cls(
            str(meta_path),
            file_text(meta_path) if os.path.lexists(meta_path) else None,
            ((read.name, file_text(read)) for read in reads),
        )

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
        action = get_action(kind, name)
        return CantRead(ReadFailure.NOT_CAPTURED, describe(ReadFailure.NOT_CAPTURED, action))


def _registry_record(text: Text) -> object | None:
    """The look-ups the registry file holds; None when the file is another (a log); a file
    that cannot be read as one holds none, so every look-up it should have held answers as
    not captured."""
    loaded = parsed(text)
    if isinstance(loaded, Refusal) or not isinstance(loaded.data, Mapping):
        return []
    key, result = loaded.data.get("read"), loaded.data.get("result")
    if isinstance(key, Mapping) and key.get("verb") != REGISTRY_VERB:
        return None
    return result.get("lookups") if isinstance(result, Mapping) else []


def _trial_record(text: Text) -> object:
    """The trial's record the file holds (`result`); {} when the file cannot be read as one,
    which reads back as a record not saved."""
    loaded = parsed(text)
    if isinstance(loaded, Refusal) or not isinstance(loaded.data, Mapping):
        return {}
    result = loaded.data.get("result")
    return dict(result) if isinstance(result, Mapping) else {}


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


def _load_info(where: str, loaded: Document | Refusal | None) -> SnapshotInfo:
    snapshot = where.removesuffix(META).rstrip("/:")
    if loaded is None:
        raise UsageError(
            f"snapshot {snapshot} has no {META}",
            todo="pass a folder or an archive written by `truegreen snapshot`",
        )
    if isinstance(loaded, Refusal):
        what = "cannot be read" if loaded.problem.is_read else "is not valid YAML"
        raise UsageError(f"snapshot {where} {what}", plain(loaded.detail), "fix or re-take it")
    meta = loaded.data
    if not isinstance(meta, Mapping) or meta.get("truegreen_snapshot") != FORMAT_VERSION:
        raise UsageError(
            f"{where} is not a truegreen snapshot (format {FORMAT_VERSION})",
            todo="re-take it with `truegreen snapshot`",
        )
    try:
        taken_at = datetime.strptime(str(meta["taken_at"]), "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=UTC
        )
        namespace = str(meta["namespace"])
    except (KeyError, ValueError):
        raise UsageError(
            f"{where} lacks a valid taken_at or namespace", todo="fix or re-take it"
        ) from None
    settings = meta.get("settings") or {}
    if not isinstance(settings, Mapping):
        raise UsageError(f"{where}: settings must be a mapping", todo="fix or re-take it")
    kept = {str(k): str(v) for k, v in settings.items() if v is not None}
    return SnapshotInfo(namespace, taken_at, str(meta.get("server", "")), kept)
