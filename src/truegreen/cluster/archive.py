"""A snapshot as one `.tar.gz` file: written whole or not at all, read as hostile input.

Reading never extracts to disk: members are read into memory, so no member name can reach a
path. Still, an archive is refused, as one plain error, when a member is anything but a
regular file or folder of the snapshot layout (links, devices, absolute or `..` names), when
it holds more members or bytes than any snapshot needs, or when it is not gzip and tar at all.
Every byte counts against the caps as it is decompressed, so a compression bomb stops early,
and every header is bounded from its own 512 bytes before tarfile reads what it says follows.
"""

import gzip
import io
import os
import re
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Self

import msgspec

from truegreen.errors import UsageError
from truegreen.textsafe import terminal_safe
from truegreen.yamlsafe import SNAPSHOT_LIMITS

MAX_ARCHIVE_BYTES = 256 << 20
"""Compressed bytes of an archive."""
MAX_CONTENT_BYTES = 512 << 20
"""Bytes of an archive once decompressed, headers and all."""
MAX_FILE_BYTES = SNAPSHOT_LIMITS.max_bytes
"""Bytes of one file: no more than the YAML loader reads of one."""
MAX_MEMBERS = 20_000
"""Members of an archive: a snapshot has a few dozen."""
MAX_HEADER_BYTES = 4096
"""Bytes of a GNU long name or link and of a pax extended header. A name is one path, and no
path Linux opens is longer than PATH_MAX, 4096 bytes with its NUL (include/uapi/linux/limits.h);
a pax header holds a path and a few times, and a snapshot's paths are two names of at most
NAME_MAX (255) bytes around `reads/`."""
MAX_HEADERS = 8
"""Headers one member has, its own included: GNU tar writes a long link and a long name before
it (3 in all), a pax writer a global and an extended header (3)."""
META = "snapshot.yaml"
READS = "reads"
_GZIP_MAGIC = b"\x1f\x8b"


def is_archive(path: Path) -> bool:
    """Whether `path` is a regular file that starts like gzip (without following it if odd)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return False
        with open(path, "rb") as stream:
            return stream.read(2) == _GZIP_MAGIC
    except OSError:
        return False


def writable_parent(target: Path, flag: str) -> Path:
    """The folder `target` goes in; UsageError, naming why, when it is not a folder this
    process may write in (checked before any read is made, so no work is lost)."""
    parent = target.absolute().parent
    if not parent.exists():
        raise UsageError(f"cannot write the snapshot to {target}", f"{parent} does not exist")
    if not parent.is_dir():
        raise UsageError(
            f"cannot write the snapshot to {target}",
            f"{parent} is a file, not a folder",
            f"choose a place in a folder with {flag}",
        )
    if not os.access(parent, os.W_OK):
        raise UsageError(
            f"cannot write the snapshot to {target}",
            f"{parent} cannot be written to (no permission, or a read-only file system)",
            f"choose a folder you may write in with {flag}",
        )
    return parent


def archive_exists(target: Path) -> UsageError:
    """The refusal of an archive name already taken: an existing file is never overwritten."""
    return UsageError(
        f"cannot write the snapshot to {target}",
        "it already exists",
        "choose a new name with --archive",
    )


def check_new_archive(target: Path) -> Path:
    """The folder `target` goes in; UsageError when `target` exists or that folder does not."""
    if target.exists() or target.is_symlink():
        raise archive_exists(target)
    return writable_parent(target, "--archive")


def write_archive(target: Path, top: str, files: Sequence[tuple[str, bytes]], mtime: float) -> None:
    """Write `files` (layout-relative names) under folder `top` into `target`, 0600.

    The archive is written to a temporary sibling and published with link(2), which fails
    with EEXIST rather than replace a name that exists (a symbolic link included), where
    rename(2) replaces it: FileExistsError when `target` exists by then, whoever made it
    since it was checked (another snapshot to the same name). A failure leaves nothing
    behind, and an existing file is never overwritten."""
    parent = writable_parent(target, "--archive")
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".partial", dir=parent
    )
    try:
        with os.fdopen(descriptor, "wb") as raw:
            os.fchmod(raw.fileno(), 0o600)
            with (
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=int(mtime)) as packed,
                tarfile.open(fileobj=packed, mode="w|", format=tarfile.PAX_FORMAT) as tar,
            ):
                for folder in (top, f"{top}/{READS}"):
                    tar.addfile(_entry(folder, tarfile.DIRTYPE, 0o700, 0, mtime))
                for name, data in files:
                    info = _entry(f"{top}/{name}", tarfile.REGTYPE, 0o600, len(data), mtime)
                    tar.addfile(info, io.BytesIO(data))
            raw.flush()
            os.fsync(raw.fileno())
        os.link(temporary, target)
    finally:  # published or not, the temporary name goes
        Path(temporary).unlink(missing_ok=True)


def _entry(name: str, kind: bytes, mode: int, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.mtime = int(mtime)
    return info


class _Capped(io.RawIOBase):
    """A stream that refuses to yield more than `limit` bytes in all."""

    def __init__(self, inner: "gzip.GzipFile", limit: int) -> None:
        self._inner = inner
        self._left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: "memoryview | bytearray") -> int:  # type: ignore[override]
        wanted = min(len(buffer), self._left + 1)
        data = self._inner.read(wanted)
        if len(data) > self._left:
            raise _RefusedError(f"it holds more than {MAX_CONTENT_BYTES >> 20} MiB")
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)


class _RefusedError(Exception):
    """Why an archive is not read; the message is one plain clause."""


def _sparse(name: str) -> _RefusedError:
    return _RefusedError(f"it holds a sparse file, which a snapshot never does: {name!r}")


_NAME_TYPES = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_PAX_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_HEADERS_DEEP: ContextVar[int] = ContextVar("headers_deep", default=0)
"""Headers read so far for the member being read (see `_BoundedHeader.fromtarfile`)."""


class _BoundedHeader(tarfile.TarInfo):
    """A header, refused from its own 512 bytes when tarfile would read on for it more than a
    snapshot needs. CPython's tarfile reads a GNU long name or link (`TarInfo._proc_gnulong`)
    and a pax header (`TarInfo._proc_pax`) whole into memory, and a GNU sparse map block by
    block (`TarInfo._proc_sparse`, `_proc_gnusparse_10`), before it returns the member they
    belong to (Lib/tarfile.py): a 400 KB archive whose long name said 400 MiB held 1.3 GB."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        """The header in `buf`; refused when it says a long name or pax header follows that
        is longer than `MAX_HEADER_BYTES`, or a sparse map (which a snapshot never has)."""
        header = super().frombuf(buf, encoding, errors)
        if header.type in _NAME_TYPES and header.size > MAX_HEADER_BYTES:
            raise _RefusedError(
                f"it holds a name of {header.size:,} bytes, "
                f"longer than any path ({MAX_HEADER_BYTES:,})"
            )
        if header.type in _PAX_TYPES and header.size > MAX_HEADER_BYTES:
            raise _RefusedError(
                f"it holds an extended header of {header.size:,} bytes, "
                f"more than a snapshot needs ({MAX_HEADER_BYTES:,})"
            )
        if header.type == tarfile.GNUTYPE_SPARSE:
            raise _sparse(header.name)
        return header

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> Self:
        """The next member. tarfile reads the header after a long name or pax header by
        calling this again from within (`_proc_gnulong`, `_proc_pax`), so a chain of them
        nests one call each: refused past `MAX_HEADERS`, before Python's recursion limit."""
        deep = _HEADERS_DEEP.get() + 1
        if deep > MAX_HEADERS:
            raise _RefusedError(f"it holds a member with more than {MAX_HEADERS} headers")
        token = _HEADERS_DEEP.set(deep)
        try:
            return super().fromtarfile(archive)
        finally:
            _HEADERS_DEEP.reset(token)

    def _proc_gnusparse_10(
        self, member: tarfile.TarInfo, pax_headers: dict[str, str], archive: tarfile.TarFile
    ) -> None:
        """Refused: a GNU 1.0 sparse map sits in the member's data, and tarfile's
        `TarInfo._proc_gnusparse_10` (called from `_proc_pax` when the pax header says
        GNU.sparse.major=1) reads as many numbers as the map's first line says into a list,
        capped only by the archive's 512 MiB."""
        raise _sparse(pax_headers.get("GNU.sparse.name", member.name))


def read_archive(path: Path) -> dict[str, bytes]:
    """The snapshot files an archive holds, by layout-relative name (`reads/001-….yaml`).

    UsageError, one plain line, for anything that is not a sound snapshot archive."""
    try:
        return _read(path)
    except _RefusedError as refused:
        why = str(refused)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        why = f"it is not a whole .tar.gz file ({type(error).__name__})"
    except OSError as error:
        why = error.strerror or type(error).__name__
    raise UsageError(
        f"snapshot {path} cannot be read",
        terminal_safe(why),
        "pass a folder or an archive written by `truegreen snapshot`",
    )


def _read(path: Path) -> dict[str, bytes]:
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as raw:
        info = os.fstat(raw.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _RefusedError("it is not a regular file")
        if info.st_size > MAX_ARCHIVE_BYTES:
            raise _RefusedError(f"it is larger than {MAX_ARCHIVE_BYTES >> 20} MiB")
        with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
            capped = io.BufferedReader(_Capped(unpacked, MAX_CONTENT_BYTES))
            with tarfile.open(fileobj=capped, mode="r|", tarinfo=_BoundedHeader) as tar:
                return _members(tar)


class _Member(msgspec.Struct, frozen=True):
    """A member as read: its name, the parts of that name, and its bytes (None: a folder)."""

    name: str
    parts: list[str]
    data: bytes | None


def _members(tar: tarfile.TarFile) -> dict[str, bytes]:
    members: list[_Member] = []
    held = 0
    for number, member in enumerate(tar, start=1):
        if number > MAX_MEMBERS:
            raise _RefusedError(f"it holds more than {MAX_MEMBERS:,} members")
        parts = _parts(member.name)
        if member.isdir():
            members.append(_Member(member.name, parts, None))
            continue
        if not member.isreg():
            raise _RefusedError(f"it holds something a snapshot does not: {member.name!r}")
        if member.issparse():
            # tarfile makes up a sparse file's holes itself, past the count of decompressed
            # bytes: a few kilobytes of archive would unpack to any size. (The pax forms whose
            # map fits in their bounded header reach here; the others are refused from it.)
            raise _sparse(member.name)
        # Refused from the header, before a byte is read: a compression bomb says its size.
        if member.size > MAX_FILE_BYTES:
            raise _RefusedError(
                f"it holds a file larger than {MAX_FILE_BYTES >> 20} MiB: {member.name!r}"
            )
        held += member.size
        if held > MAX_CONTENT_BYTES:
            raise _RefusedError(f"it holds more than {MAX_CONTENT_BYTES >> 20} MiB")
        stream = tar.extractfile(member)
        if stream is None:  # pragma: no cover - isreg() members always have a stream
            raise _RefusedError(f"{member.name!r} cannot be read")
        members.append(_Member(member.name, parts, stream.read(member.size)))
    return _layout(members)


def _layout(members: list[_Member]) -> dict[str, bytes]:
    """The snapshot files by layout-relative name: under the one top folder every member
    shares, or at the root (`tar -czf x.tar.gz snapshot.yaml reads`), whatever the top
    folder's name (`reads` and `snapshot.yaml` too)."""
    top = _top(members)
    files: dict[str, bytes] = {}
    for member in members:
        relative = "/".join(member.parts[0 if top is None else 1 :])
        if member.data is None and relative in ("", READS):
            continue
        if member.data is None or not _is_file_of_layout(relative):
            raise _RefusedError(f"it holds something a snapshot does not: {member.name!r}")
        if relative in files:
            raise _RefusedError(f"it holds {member.name!r} twice")
        files[relative] = member.data
    return files


def _top(members: list[_Member]) -> str | None:
    """The top folder: the first part every member shares, unless that is the layout's own
    `snapshot.yaml` file at the root; None when the layout is at the root."""
    firsts = {member.parts[0] for member in members}
    if len(firsts) != 1:
        return None
    (first,) = firsts
    at_root = first == META and any(m.parts == [META] and m.data is not None for m in members)
    return None if at_root else first


def _parts(name: str) -> list[str]:
    """The parts of a member's name; refused when unsafe."""
    parts = name.rstrip("/").split("/")
    if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise _RefusedError(f"it holds a member named {name!r}")
    return parts


def top_folder(archive: Path) -> str:
    """The folder an archive unpacks into: its own name without `.tar.gz`, made of safe
    characters; never `.` or `..`, which name no folder of its own (GNU tar and tarfile's
    data filter refuse `..` members)."""
    name = archive.name
    for suffix in (".tar.gz", ".tgz"):
        name = name.removesuffix(suffix)
    name = _UNSAFE.sub("-", name)
    return "truegreen-snapshot" if name in ("", ".", "..") else name


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _is_file_of_layout(relative: str) -> bool:
    if relative == META:
        return True
    folder, _, leaf = relative.partition("/")
    return folder == READS and leaf.endswith(".yaml") and "/" not in leaf
