"""What an API server last said it serves, kept between runs, so that the lists which depend
on it can be sent with the first read instead of after its answer.

Over a link tens of milliseconds long each wave of reads that waits for the one before costs
a round trip (bench/wan_bench.py). kubectl keeps discovery on disk for the same reason
(k8s.io/cli-runtime genericclioptions/config_flags.go `ToDiscoveryClient`: under
$KUBECACHEDIR or ~/.kube/cache, for six hours). Unlike kubectl's cache, this memory never
stands in for the answer: doctor reads discovery again in the same wave, and only the fresh
answer decides what is listed and judged. A remembered group the server no longer serves costs
one list whose answer is dropped; one the server serves now and the memory lacks is listed as
soon as the fresh answer is in. A memory that cannot be read, written or trusted is simply not
used: it never changes a verdict, an exit code or a line of output.

The file holds the names and versions of the API groups and how long the answer took, under
the user's cache folder (XDG_CACHE_HOME, else ~/.cache), named as kubectl names its discovery
cache folder: the server's address with every character but letters, digits, `.` and `-`
replaced by `_` (cli-runtime genericclioptions/config_flags.go `computeDiscoverCacheDir`,
`overlyCautiousIllegalFileCharacters`), less any login the address carries (which kubectl
keeps), its query and its fragment. Two addresses that collapse to one name share a memory,
which is harmless: a memory only guesses. A name rather than a digest keeps `hashlib` (OpenSSL's
start, about 5 ms) out of every doctor run.
"""

import contextlib
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import msgspec
from msgspec import Struct

KEPT_SECONDS = 6 * 3600
"""How long a memory is trusted to guess from: kubectl's discovery cache lives as long."""
MAX_BYTES = 256 * 1024
"""A memory file larger than this is not read (a real cluster's groups take a few KiB)."""
MAX_GROUPS = 2000
"""A memory naming more groups than this is not used."""
MAX_NAME = 200
"""A memory file's name is cut to this many characters (file systems allow 255 bytes)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9.\-]")


def memory_name(server: str) -> str | None:
    """The file name of `server`'s memory: its scheme, host, port and path, without the login,
    query or fragment, each unsafe character `_`; None for an address that is no URL."""
    try:
        parts = urlsplit(server)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not host:
        return None
    plain = f"{parts.scheme}_{host}_{port or ''}{parts.path}"
    return _UNSAFE.sub("_", plain)[:MAX_NAME] + ".json"


class RecalledDiscovery(Struct, frozen=True):
    """The API groups a server served, each with its versions, and the seconds its answer
    took, as last read."""

    served: dict[str, tuple[str, ...]]
    seconds: float


class _Kept(Struct, frozen=True):
    saved: float
    seconds: float
    served: dict[str, tuple[str, ...]]


def memory_folder(environ: Mapping[str, str]) -> Path | None:
    """Where memories are kept: $XDG_CACHE_HOME/truegreen/discovery, else
    ~/.cache/truegreen/discovery; None with neither (a relative XDG_CACHE_HOME is ignored, as
    the XDG Base Directory specification says)."""
    cache = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        home = environ.get("HOME", "")
        if not os.path.isabs(home):
            return None
        cache = os.path.join(home, ".cache")
    return Path(cache) / "truegreen" / "discovery"


class DiscoveryMemory:
    """One server's remembered discovery, in `folder` (None: nothing is remembered)."""

    def __init__(
        self,
        folder: Path | None,
        server: str,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`server` is the API server's address as the connection has it (memory_name says
        what of it names the file). `clock` gives seconds since the epoch."""
        name = memory_name(server)
        self._path = None if folder is None or name is None else folder / name
        self._clock = clock
        self._recalled: _Kept | None = None

    def recall(self) -> RecalledDiscovery | None:
        """The memory, if one is kept, readable, well-formed and younger than KEPT_SECONDS."""
        if self._path is None:
            return None
        try:
            with self._path.open("rb") as file:
                data = file.read(MAX_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_BYTES:
            return None
        try:
            kept = msgspec.json.decode(data, type=_Kept)
        except msgspec.DecodeError:  # a ValidationError is one too
            return None
        age = self._clock() - kept.saved
        if not 0 <= age <= KEPT_SECONDS or len(kept.served) > MAX_GROUPS or kept.seconds < 0:
            return None
        self._recalled = kept
        return RecalledDiscovery(kept.served, kept.seconds)

    def keep(self, served: Mapping[str, tuple[str, ...]], seconds: float) -> None:
        """Remember what the server serves now. Written whole or not at all (a file beside it,
        then renamed over it); a folder that cannot be written is left as it is."""
        if self._path is None or len(served) > MAX_GROUPS:
            return
        now = self._clock()
        before = self._recalled
        if (
            before is not None
            and before.served == dict(served)
            and now - before.saved < KEPT_SECONDS / 2
        ):
            return  # nothing new to say: no write on every run
        data = msgspec.json.encode(_Kept(now, round(seconds, 4), dict(served)))
        if len(data) > MAX_BYTES:
            return
        part = self._path.with_name(f"{self._path.name}.{os.getpid()}.part")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            part.write_bytes(data)
            os.replace(part, self._path)
        except OSError:
            with contextlib.suppress(OSError):
                part.unlink(missing_ok=True)
