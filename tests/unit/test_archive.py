"""A snapshot archive (cluster/archive.py): any top folder truegreen writes reads back, and a
hostile archive is refused before what it says it holds is read into memory."""

import gzip
import io
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from truegreen.cluster.archive import META, read_archive, top_folder, write_archive
from truegreen.errors import UsageError
from truegreen.yamlsafe import SNAPSHOT_LIMITS

FILES = [(META, b"namespace: train\n"), ("reads/001-list-pods.yaml", b"{}\n")]


@pytest.mark.parametrize(
    ("archive", "top"),
    [
        ("reads.tar.gz", "reads"),
        ("snapshot.yaml.tar.gz", "snapshot.yaml"),
        ("...tar.gz", "truegreen-snapshot"),
        ("..tgz", "truegreen-snapshot"),
        (".tar.gz", "truegreen-snapshot"),
        ("bundle.tar.gz", "bundle"),
    ],
)
def test_every_archive_name_unpacks_into_a_folder_its_reader_takes(
    tmp_path: Path, archive: str, top: str
) -> None:
    """The top folder is the archive's name without `.tar.gz`, but never `.` or `..` (no
    folder: GNU tar refuses `..` members, tarfile's data filter too); the reader takes any
    other top folder, `reads` and `snapshot.yaml` included, for what it is."""
    assert top_folder(tmp_path / archive) == top
    target = tmp_path / archive
    write_archive(target, top_folder(target), FILES, 0)
    assert read_archive(target) == dict(FILES)


def _archive(path: Path, members: list[tuple[str, bytes]]) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue()))
    return path


def test_the_layout_at_the_root_reads_as_it_is(tmp_path: Path) -> None:
    """`tar -czf x.tar.gz snapshot.yaml reads` by hand: no top folder."""
    assert read_archive(_archive(tmp_path / "x.tar.gz", FILES)) == dict(FILES)


def test_a_member_larger_than_a_read_may_be_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A member that says it holds more than the YAML loader reads of one file (256 MiB,
    yamlsafe SNAPSHOT_LIMITS) is refused from its header: a 600 KiB archive of zeros was read
    whole into memory (about a gigabyte) before the caps refused it. The archive here holds
    the header alone: a reader that read on would find it cut short instead."""
    path = tmp_path / "bomb.tar.gz"
    with gzip.open(path, "wb") as packed:
        for name, data in FILES:
            info = tarfile.TarInfo(f"b/{name}")
            info.size = len(data)
            packed.write(info.tobuf(format=tarfile.PAX_FORMAT))
            packed.write(data.ljust(tarfile.BLOCKSIZE, b"\0"))
        info = tarfile.TarInfo("b/reads/900-zeros.yaml")
        info.size = SNAPSHOT_LIMITS.max_bytes + 1
        packed.write(info.tobuf(format=tarfile.PAX_FORMAT))
    with pytest.raises(UsageError) as refused:
        read_archive(path)
    assert str(refused.value) == (
        f"snapshot {path} cannot be read: it holds a file larger than 256 MiB: "
        "'b/reads/900-zeros.yaml'. pass a folder or an archive written by `truegreen snapshot`"
    )


def test_what_members_say_they_hold_is_capped_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Members each under the file cap, together over the archive's: refused at the header
    of the one that passes it (the cap lowered so that the test writes kilobytes)."""
    from truegreen.cluster import archive

    monkeypatch.setattr(archive, "MAX_CONTENT_BYTES", 1 << 20)
    path = tmp_path / "many.tar.gz"
    with gzip.open(path, "wb") as packed:
        for number in range(3):
            info = tarfile.TarInfo(f"b/reads/{number:03}-zeros.yaml")
            info.size = 400 << 10
            packed.write(info.tobuf(format=tarfile.PAX_FORMAT))
            if number < 2:
                packed.write(bytes(info.size))
    with pytest.raises(UsageError) as refused:
        read_archive(path)
    assert "cannot be read: it holds more than 1 MiB. " in str(refused.value)


def _header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _padded(data: bytes) -> bytes:
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def _pax(path: str, size: int) -> bytes:
    """A pax header's records, `size` bytes in all: the member's path, then a comment."""
    record = f" path={path}\n"
    record = f"{len(record) + len(str(len(record) + 2))}{record}"
    rest = size - len(record)
    comment = f"{rest} comment=".ljust(rest - 1, "z") + "\n"
    assert len(comment) == rest, "precondition: the comment's length counts itself"
    return (record + comment).encode()


def _with_header(path: Path, kind: bytes, size: int) -> Path:
    """The files of FILES under `b/`; the read file's name comes in a header of `kind` that
    truly holds `size` bytes (the name, then NULs or a comment)."""
    name = f"b/{FILES[1][0]}"
    body = _pax(name, size) if kind in (tarfile.XHDTYPE, tarfile.XGLTYPE) else name.encode()
    with gzip.open(path, "wb") as packed:
        packed.write(_header("b/snapshot.yaml", tarfile.REGTYPE, len(FILES[0][1])))
        packed.write(_padded(FILES[0][1]))
        packed.write(_header("././@LongLink", kind, size))
        packed.write(_padded(body.ljust(size, b"\0")))
        packed.write(_header(name, tarfile.REGTYPE, len(FILES[1][1])))
        packed.write(_padded(FILES[1][1]))
        packed.write(bytes(2 * tarfile.BLOCKSIZE))
    return path


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        (tarfile.GNUTYPE_LONGNAME, "a name of 4,097 bytes, longer than any path (4,096)"),
        (tarfile.GNUTYPE_LONGLINK, "a name of 4,097 bytes, longer than any path (4,096)"),
        (tarfile.XHDTYPE, "an extended header of 4,097 bytes, more than a snapshot needs (4,096)"),
        (tarfile.XGLTYPE, "an extended header of 4,097 bytes, more than a snapshot needs (4,096)"),
    ],
    ids=["long-name", "long-link", "pax", "pax-global"],
)
def test_a_name_or_pax_header_longer_than_a_path_is_refused_from_its_header(
    tmp_path: Path, kind: bytes, why: str
) -> None:
    """tarfile reads a GNU long name or link and a pax header whole into memory before it
    returns the member they belong to: one that said 400 MiB held 1.3 GB, and the archive
    was read. A header of 4,096 bytes (PATH_MAX) reads; one byte more is refused."""
    assert read_archive(_with_header(tmp_path / "fits.tar.gz", kind, 4096)) == {
        META: FILES[0][1],
        FILES[1][0]: FILES[1][1],
    }
    path = _with_header(tmp_path / "long.tar.gz", kind, 4097)
    with pytest.raises(UsageError) as refused:
        read_archive(path)
    assert str(refused.value) == (
        f"snapshot {path} cannot be read: it holds {why}. "
        "pass a folder or an archive written by `truegreen snapshot`"
    )


@pytest.mark.parametrize(("names", "read"), [(7, True), (8, False), (3000, False)])
def test_a_member_behind_more_headers_than_any_tar_writes_is_refused(
    tmp_path: Path, names: int, read: bool
) -> None:
    """tarfile reads the header after a long name from within the call that read the long
    name: 3,000 in a row ran past Python's recursion limit (an internal error). GNU tar writes
    at most a long link and a long name before a member; 8 headers in all are refused."""
    name = f"b/{FILES[1][0]}".encode()
    path = tmp_path / "chain.tar.gz"
    with gzip.open(path, "wb") as packed:
        packed.write(_header("b/snapshot.yaml", tarfile.REGTYPE, len(FILES[0][1])))
        packed.write(_padded(FILES[0][1]))
        for _ in range(names):
            packed.write(_header("././@LongLink", tarfile.GNUTYPE_LONGNAME, len(name)))
            packed.write(_padded(name))
        packed.write(_header("b/x", tarfile.REGTYPE, len(FILES[1][1])))
        packed.write(_padded(FILES[1][1]))
        packed.write(bytes(2 * tarfile.BLOCKSIZE))
    if read:
        assert read_archive(path) == dict(FILES)
        return
    with pytest.raises(UsageError) as refused:
        read_archive(path)
    assert "cannot be read: it holds a member with more than 8 headers. " in str(refused.value)


def _old_gnu_sparse(packed: gzip.GzipFile) -> None:
    """An old GNU sparse header that says more map blocks follow (byte 482), and none does:
    tarfile read map blocks until one said it was the last, and failed on the missing one."""
    header = bytearray(_header("b/reads/001-list-pods.yaml", tarfile.GNUTYPE_SPARSE, 0))
    header[482] = 1
    header[148:156] = b" " * 8
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    packed.write(bytes(header))


def _pax_sparse_map(packed: gzip.GzipFile) -> None:
    """A GNU 1.0 sparse map (pax GNU.sparse.major=1) that says it holds 10**12 numbers:
    tarfile read numbers into a list as long as the archive gave them (20 MiB of `0\\n` held
    190 MB), then failed where it ended."""
    records = b"22 GNU.sparse.major=1\n22 GNU.sparse.minor=0\n"
    packed.write(_header("././@PaxHeader", tarfile.XHDTYPE, len(records)))
    packed.write(_padded(records))
    packed.write(_header("b/reads/001-list-pods.yaml", tarfile.REGTYPE, 512))
    packed.write(_padded(b"1000000000000\n0\n0\n"))


@pytest.mark.parametrize("sparse", [_old_gnu_sparse, _pax_sparse_map], ids=["gnu", "pax-1.0"])
def test_a_sparse_map_is_refused_before_it_is_read(
    tmp_path: Path, sparse: Callable[[gzip.GzipFile], None]
) -> None:
    """A snapshot never holds a sparse file: refused from the header that says a map
    follows, before tarfile reads the map."""
    path = tmp_path / "sparse.tar.gz"
    with gzip.open(path, "wb") as packed:
        sparse(packed)
    with pytest.raises(UsageError) as refused:
        read_archive(path)
    assert str(refused.value) == (
        f"snapshot {path} cannot be read: it holds a sparse file, which a snapshot never does: "
        "'b/reads/001-list-pods.yaml'. pass a folder or an archive written by `truegreen snapshot`"
    )
