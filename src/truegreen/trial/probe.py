"""truegreen's trial probe: what a training job's own pod sees in its first seconds.

Run inside the job's container as `python3 probe.py` (or `python3 -c "<this file>"`), with
nothing but the Python 3.8+ standard library: it imports nothing from truegreen, so it runs in
any image that has a Python. It prints exactly one JSON line (`"probe_schema": 1`, described in
docs/trial.md and probe.schema.json) and exits 0; every failure it measures is a value in that
line, never its exit code.

It looks at, each part in its own thread against one deadline:
- the GPUs, through the first of PyTorch (a CUDA or a ROCm build), JAX and CuPy that imports
  (import and CUDA initialisation timed, the library's own error text kept), and the driver through
  /proc/driver/nvidia/version and nvidia-smi;
- /dev/shm: its size and free space against the job's need;
- the dataset mount: the first N MiB of its files read (opened read-only; nothing is written);
- between workers: a plain TCP exchange with rank 0 on the rendezvous port (reachability and
  bandwidth), then, where PyTorch imports, one all-reduce over NCCL (GPUs) or gloo (CPU).

Inputs, all optional (environment variables):
  TRUEGREEN_PROBE_GPUS            GPUs the container asked for (default 0)
  TRUEGREEN_PROBE_SHM_NEED_MIB    the /dev/shm size the job needs, MiB (default 0: not stated)
  TRUEGREEN_PROBE_SHM_PATH        the shared-memory mount (default /dev/shm)
  TRUEGREEN_PROBE_DATA            the dataset mount to read (default: none)
  TRUEGREEN_PROBE_READ_MIB        MiB of it to read (default 64, at most 1024)
  TRUEGREEN_PROBE_RANK            this worker's rank (default 0)
  TRUEGREEN_PROBE_WORLD           how many workers (default 1: no exchange)
  TRUEGREEN_PROBE_MASTER_ADDR     rank 0's address (default: 127.0.0.1 for rank 0 itself;
                                  $MASTER_ADDR, else 127.0.0.1, for a worker)
  TRUEGREEN_PROBE_MASTER_PORT     the rendezvous port (default $MASTER_PORT, else 29500)
  TRUEGREEN_PROBE_BIND            the address rank 0 listens on (default: every address of
                                  both families, `::` with IPv6-only off, else 0.0.0.0)
  TRUEGREEN_PROBE_TCP_MIB         MiB each worker sends to rank 0 (default 16, at most 256)
  TRUEGREEN_PROBE_INIT_TIMEOUT_S  the wait for the other workers, seconds (default 10)
  TRUEGREEN_PROBE_WAIT_UNTIL      a moment, POSIX seconds, until which that wait goes on where
                                  it is later (default: none); the run's deadline still bounds it
  TRUEGREEN_PROBE_TIMEOUT_S       the whole run's deadline, seconds (default 60, at most 3600)
  TRUEGREEN_PROBE_END_AT          a moment, POSIX seconds, by which the run ends where that is
                                  sooner (default: none); the run still has at least 1 s
  TRUEGREEN_PROBE_SKIP            parts not to run, comma-separated: gpu,shm,data,tcp,collective
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

SCHEMA = 1
MAX_LINE_BYTES = 16384
"""The whole line is at most this long: a pod log is read back whole."""
MIN_RUN_S = 1.0
"""The least time a run has, even where the moment it was told to end by has passed."""
MAX_TEXT = 600
"""An error text keeps its first and last characters up to this length: a library's last
line (NCCL's `Last error:` line, CUDA's reason) is what names the cause."""
MAX_DEVICES = 16
MAX_FILES = 1000
"""Files of the dataset mount looked at before the read stops."""
CHUNK = 1 << 20
MEASURING_SWITCH_S = 0.0002
"""The interpreter's thread switch interval while the dataset read and the TCP exchange are
timed beside `import torch` (seconds). The import holds the GIL, and a thread that wants it back
after each chunk waits up to one interval, 5 ms by default: 64 chunks of a fast dataset would
measure about 195 MiB/s where the file reads at 7,600 (bench/probe_bench.py), and a slow one
could fall under the "reads slowly" line for the wait alone."""
MIB = 1 << 20
_HELLO = b"TGPROBE1"
_HEADER = struct.Struct("!8sQI")  # magic, payload bytes, rank
_ACK = struct.Struct("!8sQ")  # magic, bytes received


def clip(text: str) -> str:
    """A text at most MAX_TEXT characters long, keeping its beginning and its end."""
    text = text.strip()
    if len(text) <= MAX_TEXT:
        return text
    head = MAX_TEXT // 3
    return text[:head] + " … " + text[-(MAX_TEXT - head - 3) :]


def error_text(error: BaseException) -> str:
    """The library's own words: `TypeName: message`."""
    return clip(f"{type(error).__name__}: {error}")


def _int_setting(name: str, default: int, low: int, high: int) -> int:
    raw = os.environ.get(name, "")
    try:
        value = int(raw) if raw.strip() else default
    except ValueError:
        value = default
    return max(low, min(high, value))


class Settings:
    """The probe's inputs, read once from the environment and bounded."""

    def __init__(self) -> None:
        self.gpus = _int_setting("TRUEGREEN_PROBE_GPUS", 0, 0, 1024)
        self.shm_need_mib = _int_setting("TRUEGREEN_PROBE_SHM_NEED_MIB", 0, 0, 1 << 24)
        self.shm_path = os.environ.get("TRUEGREEN_PROBE_SHM_PATH") or "/dev/shm"
        self.data = os.environ.get("TRUEGREEN_PROBE_DATA", "")
        self.read_mib = _int_setting("TRUEGREEN_PROBE_READ_MIB", 64, 1, 1024)
        self.rank = _int_setting("TRUEGREEN_PROBE_RANK", 0, 0, 1 << 20)
        self.world = _int_setting("TRUEGREEN_PROBE_WORLD", 1, 1, 64)
        # Rank 0 hosts the rendezvous and its own client connects to this address: the job's
        # MASTER_ADDR names the job's pod 0 (or a live job's store), never this one.
        job_master = os.environ.get("MASTER_ADDR") if self.rank else None
        self.master_addr = unbracketed(
            os.environ.get("TRUEGREEN_PROBE_MASTER_ADDR") or job_master or "127.0.0.1"
        )
        default_port = _int_setting("MASTER_PORT", 29500, 1, 65535)
        self.master_port = _int_setting("TRUEGREEN_PROBE_MASTER_PORT", default_port, 1, 65535)
        # '' listens on both families (`listener`).
        self.bind = unbracketed(os.environ.get("TRUEGREEN_PROBE_BIND") or "")
        self.tcp_mib = _int_setting("TRUEGREEN_PROBE_TCP_MIB", 16, 0, 256)
        self.init_timeout_s = _int_setting("TRUEGREEN_PROBE_INIT_TIMEOUT_S", 10, 1, 300)
        self.timeout_s = _int_setting("TRUEGREEN_PROBE_TIMEOUT_S", 60, 1, 3600)
        self.wait_until = _int_setting("TRUEGREEN_PROBE_WAIT_UNTIL", 0, 0, 1 << 40)
        self.end_at = _int_setting("TRUEGREEN_PROBE_END_AT", 0, 0, 1 << 40)
        self.skip = {
            p.strip() for p in os.environ.get("TRUEGREEN_PROBE_SKIP", "").split(",") if p.strip()
        }


def _run(command: list[str], timeout: float) -> str | None:
    """A command's standard output, or None when it is missing, fails or takes too long."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout[:4096] if done.returncode == 0 else None


def driver_version(line: str) -> str | None:
    """The version in the kernel module's line: `NVRM version: NVIDIA UNIX Open Kernel Module
    for x86_64  580.159.04  Release Build  (…)` gives 580.159.04."""
    words = [w for w in line.split() if w[:1].isdigit() and "." in w]
    return words[0] if words else None


def driver() -> dict[str, Any]:
    """The NVIDIA driver's version from the kernel module, and what nvidia-smi says."""
    found: dict[str, Any] = {"version": None, "nvidia_smi": shutil.which("nvidia-smi") is not None}
    version_file = "/proc/driver/nvidia/version"
    with contextlib.suppress(OSError), open(version_file, encoding="utf-8", errors="replace") as f:
        found["version"] = driver_version(f.readline(512))
    if found["nvidia_smi"]:
        out = _run(
            [
                "nvidia-smi",
                "--query-gpu=name,driver_version,memory.total",
                "--format=csv,noheader,nounits",
            ],
            10,
        )
        rows = [r for r in (out or "").splitlines() if r.strip()][:MAX_DEVICES]
        found["nvidia_smi_gpus"] = [clip(r) for r in rows]
        if rows and found["version"] is None:
            parts = [p.strip() for p in rows[0].split(",")]
            if len(parts) >= 2:
                found["version"] = parts[1]
    return found


def _torch(settings: Settings, found: dict[str, Any]) -> Any:
    start = time.monotonic()
    import torch  # type: ignore[import-not-found]

    found["import_s"] = round(time.monotonic() - start, 3)
    found["version"] = str(torch.__version__)
    found["cuda_version"] = torch.version.cuda
    # A ROCm build answers through torch.cuda with version.cuda None and version.hip set
    # (PyTorch docs/source/notes/hip.rst, "Checking for HIP"); RCCL is behind torch.cuda.nccl.
    found["hip_version"] = getattr(torch.version, "hip", None)
    nccl = getattr(torch.cuda, "nccl", None)
    try:
        found["nccl_version"] = ".".join(str(v) for v in nccl.version()) if nccl else None
    except Exception:  # noqa: BLE001 - a build without NCCL says so by raising
        found["nccl_version"] = None
    if found["cuda_version"] is None and found["hip_version"] is None:
        found["status"] = "no-cuda-build"
        found["device_count"] = 0
        return torch
    start = time.monotonic()
    try:
        torch.cuda.init()
    except Exception as error:  # noqa: BLE001 - the library's words are the finding
        found["init_s"] = round(time.monotonic() - start, 3)
        found["status"] = "error"
        found["error"] = error_text(error)
        found["device_count"] = 0
        return torch
    found["init_s"] = round(time.monotonic() - start, 3)
    count = torch.cuda.device_count()
    found["device_count"] = count
    devices = []
    for index in range(min(count, MAX_DEVICES)):
        p = torch.cuda.get_device_properties(index)
        devices.append(
            {
                "index": index,
                "name": str(p.name),
                "memory_mib": int(p.total_memory) // MIB,
                "capability": f"{p.major}.{p.minor}",
            }
        )
    found["devices"] = devices
    found["status"] = "ok"
    return torch


def _jax(found: dict[str, Any]) -> None:
    start = time.monotonic()
    import jax  # type: ignore[import-not-found]

    found["import_s"] = round(time.monotonic() - start, 3)
    found["version"] = str(jax.__version__)
    start = time.monotonic()
    try:
        devices = [d for d in jax.devices() if d.platform == "gpu"]
    except Exception as error:  # noqa: BLE001 - the library's words are the finding
        found["status"] = "error"
        found["error"] = error_text(error)
        found["device_count"] = 0
        return
    found["init_s"] = round(time.monotonic() - start, 3)
    found["device_count"] = len(devices)
    found["devices"] = [
        {"index": i, "name": str(getattr(d, "device_kind", d))}
        for i, d in enumerate(devices[:MAX_DEVICES])
    ]
    found["status"] = "ok"


def _cupy(found: dict[str, Any]) -> None:
    start = time.monotonic()
    import cupy  # type: ignore[import-not-found]

    found["import_s"] = round(time.monotonic() - start, 3)
    found["version"] = str(cupy.__version__)
    runtime = cupy.cuda.runtime
    start = time.monotonic()
    try:
        found["cuda_version"] = _cuda_version(runtime.runtimeGetVersion())
        found["driver_cuda_version"] = _cuda_version(runtime.driverGetVersion())
        count = runtime.getDeviceCount()
    except Exception as error:  # noqa: BLE001 - the library's words are the finding
        found["status"] = "error"
        found["error"] = error_text(error)
        found["device_count"] = 0
        return
    found["init_s"] = round(time.monotonic() - start, 3)
    found["device_count"] = count
    devices = []
    for index in range(min(count, MAX_DEVICES)):
        p = runtime.getDeviceProperties(index)
        name = p["name"]
        devices.append(
            {
                "index": index,
                "name": name.decode() if isinstance(name, bytes) else str(name),
                "memory_mib": int(p["totalGlobalMem"]) // MIB,
                "capability": f"{p['major']}.{p['minor']}",
            }
        )
    found["devices"] = devices
    found["status"] = "ok"


def _cuda_version(number: int) -> str:
    """CUDA's integer version (13020) as people write it (13.2)."""
    return f"{number // 1000}.{(number % 1000) // 10}"


def gpu(settings: Settings, result: dict[str, Any]) -> None:
    """The first GPU library that imports, tried in order; the others are not imported."""
    result["requested"] = settings.gpus
    result["driver"] = driver()
    libraries: list[dict[str, Any]] = []
    result["libraries"] = libraries
    result["library"] = None
    result["status"] = "no-library"
    for name in ("torch", "jax", "cupy"):
        found: dict[str, Any] = {"name": name, "status": "absent"}
        libraries.append(found)
        try:
            if name == "torch":
                result["_torch"] = _torch(settings, found)
            elif name == "jax":
                _jax(found)
            else:
                _cupy(found)
        except ImportError:
            continue
        except Exception as error:  # noqa: BLE001 - an import that breaks is a finding
            found["status"] = "error"
            found["error"] = error_text(error)
        result["library"] = name
        result["status"] = found["status"]
        break


def shm(settings: Settings) -> dict[str, Any]:
    """The shared-memory mount's size and free space, against what the job needs."""
    found: dict[str, Any] = {"path": settings.shm_path, "need_bytes": settings.shm_need_mib * MIB}
    try:
        stats = os.statvfs(settings.shm_path)
    except FileNotFoundError:
        found["status"] = "absent"
        return found
    except OSError as error:
        found["status"] = "error"
        found["error"] = error_text(error)
        return found
    found["size_bytes"] = stats.f_blocks * stats.f_frsize
    found["free_bytes"] = stats.f_bavail * stats.f_frsize
    found["status"] = "ok"
    return found


def _files(root: str, deadline: float) -> list[str]:
    """Regular files under root in a stable order, at most MAX_FILES looked at; OSError when
    a folder cannot be listed before any file is found."""
    if os.path.isfile(root):
        return [root]
    found: list[str] = []
    refused: list[OSError] = []
    for folder, subfolders, names in os.walk(root, onerror=refused.append):
        subfolders.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append(path)
            if len(found) >= MAX_FILES or time.monotonic() > deadline:
                return found
    if refused and not found:
        raise refused[0]
    return found


def data(settings: Settings, deadline: float) -> dict[str, Any]:
    """The first read_mib MiB of the dataset mount, read once, read-only, timed."""
    found: dict[str, Any] = {"path": settings.data, "limit_bytes": settings.read_mib * MIB}
    if not os.path.exists(settings.data):
        found["status"] = "absent"
        return found
    limit = settings.read_mib * MIB
    total = files = 0
    start = time.monotonic()
    try:
        for path in _files(settings.data, deadline):
            descriptor = os.open(path, os.O_RDONLY)
            files += 1
            try:
                while total < limit and time.monotonic() < deadline:
                    chunk = os.read(descriptor, min(CHUNK, limit - total))
                    if not chunk:
                        break
                    total += len(chunk)
            finally:
                os.close(descriptor)
            if total >= limit or time.monotonic() >= deadline:
                break
    except OSError as error:
        found["status"] = "unreadable"
        found["error"] = error_text(error)
        found["bytes_read"] = total
        found["files"] = files
        return found
    seconds = time.monotonic() - start
    found.update(
        {
            "status": "ok" if total else "empty",
            "bytes_read": total,
            "files": files,
            "seconds": round(seconds, 3),
            "mib_per_s": round(total / MIB / seconds, 1) if total and seconds > 0 else None,
            "stopped_at_deadline": total < limit and time.monotonic() >= deadline,
        }
    )
    return found


def _recv_exactly(connection: socket.socket, size: int) -> bytes:
    parts = []
    left = size
    while left:
        chunk = connection.recv(min(left, CHUNK))
        if not chunk:
            raise ConnectionError(f"closed after {size - left} of {size} bytes")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _drain(connection: socket.socket, size: int) -> int:
    left = size
    while left:
        chunk = connection.recv(min(left, CHUNK))
        if not chunk:
            break
        left -= len(chunk)
    return size - left


def run_seconds(settings: Settings) -> float:
    """The run's time from now: its timeout, or until the moment given where that comes
    sooner (whoever reads the line stops reading then, however long the image took to come
    before this program started), never less than MIN_RUN_S."""
    if not settings.end_at:
        return float(settings.timeout_s)
    return min(float(settings.timeout_s), max(MIN_RUN_S, settings.end_at - time.time()))


def wait_seconds(settings: Settings) -> float:
    """How long to wait for the other workers from now: the wait, or until the moment given
    where that is later (a worker whose machine had the image starts long before a rank 0
    whose machine still downloads it)."""
    until = settings.wait_until - time.time() if settings.wait_until else 0.0
    return max(float(settings.init_timeout_s), until)


def unbracketed(address: str) -> str:
    """An address as a socket takes it: an IPv6 literal without the brackets a URL puts round
    it (`[fd00::1]` gives fd00::1)."""
    text = address.strip()
    return text[1:-1] if text.startswith("[") and text.endswith("]") else text


def url_host(address: str) -> str:
    """An address as a URL's host: an IPv6 literal in brackets (RFC 3986 section 3.2.2), so
    that the port after it is not read as part of it."""
    return f"[{address}]" if ":" in address else address


def _peer_address(host: str) -> str:
    """A peer's address as it connected: an IPv4 one that a dual-stack listener reports
    mapped into IPv6 (`::ffff:10.0.0.7`) as plain IPv4."""
    mapped = "::ffff:"
    return host[len(mapped) :] if host.startswith(mapped) and "." in host else host


def listener(bind: str, port: int, backlog: int) -> socket.socket:
    """Rank 0's listening socket on `port`. Unless told an address (`bind`), it listens on
    both families, as PyTorch's rendezvous store does (torch/csrc/distributed/c10d/socket.cpp
    SocketListenOp::run tries IPv6 and then IPv4; its IPv6 socket takes IPv4 too, IPV6_V6ONLY
    off): an AF_INET6 socket on `::` with IPV6_V6ONLY off, else, where the kernel has no IPv6,
    AF_INET on 0.0.0.0. On an IPv6 pod network the workers are given rank 0's IPv6 address
    (its `status.podIP`); an IPv4 socket would refuse them where the job's own store would
    not."""
    if not bind:
        if socket.has_dualstack_ipv6():
            with contextlib.suppress(OSError):
                return socket.create_server(
                    ("::", port), family=socket.AF_INET6, backlog=backlog, dualstack_ipv6=True
                )
        bind = "0.0.0.0"
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    return socket.create_server((bind, port), family=family, backlog=backlog)


def tcp_server(settings: Settings, deadline: float) -> dict[str, Any]:
    """Rank 0: wait for every other worker on the rendezvous port, take its bytes, then close
    the port before answering (so the all-reduce after it can listen there)."""
    peers = settings.world - 1
    found: dict[str, Any] = {"role": "rank0", "port": settings.master_port, "expected": peers}
    joined: list[tuple[socket.socket, dict[str, Any]]] = []
    server: socket.socket | None = None
    try:
        server = listener(settings.bind, settings.master_port, peers)
        wait_until = min(deadline, time.monotonic() + wait_seconds(settings))
        while len(joined) < peers and time.monotonic() < wait_until:
            server.settimeout(max(0.05, wait_until - time.monotonic()))
            try:
                connection, address = server.accept()
            except socket.timeout:  # noqa: UP041 - an OSError, not TimeoutError, before 3.10
                break
            connection.settimeout(max(0.05, deadline - time.monotonic()))
            start = time.monotonic()
            try:
                magic, size, rank = _HEADER.unpack(_recv_exactly(connection, _HEADER.size))
                if magic != _HELLO:
                    connection.close()
                    continue
                got = _drain(connection, size)
            except OSError:
                connection.close()
                continue
            seconds = time.monotonic() - start
            peer = {
                "rank": rank,
                "address": _peer_address(address[0]),
                "bytes": got,
                "mib_per_s": round(got / MIB / seconds, 1) if got and seconds > 0 else None,
            }
            joined.append((connection, peer))
    except OSError as error:
        found["status"] = "error"
        found["error"] = error_text(error)
        return found
    finally:
        if server is not None:
            server.close()
        for connection, peer in joined:
            with contextlib.suppress(OSError):
                connection.sendall(_ACK.pack(_HELLO, peer["bytes"]))
            connection.close()
    found["joined"] = len(joined)
    found["peers"] = [peer for _, peer in joined]
    found["status"] = "ok" if len(joined) == peers else "incomplete"
    return found


def tcp_client(settings: Settings, deadline: float) -> dict[str, Any]:
    """A worker: reach rank 0 (trying until the wait ends), send its bytes, read the answer."""
    found: dict[str, Any] = {
        "role": "worker",
        "address": settings.master_addr,
        "port": settings.master_port,
    }
    size = settings.tcp_mib * MIB
    wait_until = min(deadline, time.monotonic() + wait_seconds(settings))
    start = time.monotonic()
    last: BaseException | None = None
    connection: socket.socket | None = None
    while time.monotonic() < wait_until:
        try:
            connection = socket.create_connection(
                (settings.master_addr, settings.master_port),
                timeout=max(0.05, min(2.0, wait_until - time.monotonic())),
            )
            break
        except OSError as error:
            last = error
            time.sleep(min(0.2, max(0.0, wait_until - time.monotonic())))
    if connection is None:
        found["status"] = "unreachable"
        found["error"] = error_text(last) if last else "no time left to try"
        found["tried_s"] = round(time.monotonic() - start, 3)
        return found
    found["connect_s"] = round(time.monotonic() - start, 3)
    try:
        connection.settimeout(max(0.05, deadline - time.monotonic()))
        sent_at = time.monotonic()
        connection.sendall(_HEADER.pack(_HELLO, size, settings.rank))
        block = b"\0" * CHUNK
        left = size
        while left:
            connection.sendall(block[: min(left, CHUNK)])
            left -= min(left, CHUNK)
        magic, got = _ACK.unpack(_recv_exactly(connection, _ACK.size))
        seconds = time.monotonic() - sent_at
    except OSError as error:
        found["status"] = "error"
        found["error"] = error_text(error)
        return found
    finally:
        connection.close()
    found["bytes"] = got
    found["seconds"] = round(seconds, 3)
    found["mib_per_s"] = round(got / MIB / seconds, 1) if got and seconds > 0 else None
    found["status"] = "ok" if magic == _HELLO and got == size else "error"
    return found


def collective(settings: Settings, torch: Any, deadline: float) -> dict[str, Any]:
    """One all-reduce over every worker: NCCL where GPUs were asked for and CUDA works,
    gloo otherwise, with a short wait for the others."""
    use_nccl = settings.gpus > 0 and torch.cuda.is_available()
    found: dict[str, Any] = {"backend": "nccl" if use_nccl else "gloo", "world": settings.world}
    import torch.distributed as dist  # type: ignore[import-not-found]

    timeout = max(1.0, min(float(settings.init_timeout_s), deadline - time.monotonic()))
    start = time.monotonic()
    try:
        dist.init_process_group(
            found["backend"],
            # torch/distributed/rendezvous.py `_tcp_rendezvous_handler` reads the host with
            # urllib's urlparse, which takes an IPv6 literal only in brackets.
            init_method=f"tcp://{url_host(settings.master_addr)}:{settings.master_port}",
            rank=settings.rank,
            world_size=settings.world,
            timeout=datetime.timedelta(seconds=timeout),
        )
        found["init_s"] = round(time.monotonic() - start, 3)
        device = f"cuda:{settings.rank % torch.cuda.device_count()}" if use_nccl else "cpu"
        tensor = torch.ones(1 << 20, device=device)
        start = time.monotonic()
        dist.all_reduce(tensor)
        if use_nccl:
            torch.cuda.synchronize()
        found["allreduce_ms"] = round((time.monotonic() - start) * 1000, 2)
        found["correct"] = bool(tensor[0].item() == settings.world)
        found["status"] = "ok"
    except Exception as error:  # noqa: BLE001 - the library's words are the finding
        found["status"] = "error"
        found["error"] = error_text(error)
        found["after_s"] = round(time.monotonic() - start, 3)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    return found


def _in_thread(target: Callable[[], None], deadline: float) -> bool:
    """Run target on a daemon thread until it ends or the deadline passes; True if it ended."""
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    return not thread.is_alive()


def _exchange(settings: Settings, deadline: float) -> dict[str, Any]:
    """The TCP exchange between the workers, where there is more than one."""
    if settings.world < 2 or "tcp" in settings.skip:
        return {"status": "skipped"}
    exchange: dict[str, Any] = {}
    side = tcp_server if settings.rank == 0 else tcp_client
    if not _in_thread(lambda: exchange.update(side(settings, deadline)), deadline + 1):
        return {"status": "timed-out"}
    return exchange


def _all_reduce(
    settings: Settings, torch: Any, exchange: dict[str, Any], deadline: float
) -> dict[str, Any]:
    """The all-reduce, where PyTorch imported and the TCP exchange (if any) went through: a
    worker that cannot reach rank 0 by TCP would only wait out the library's timeout."""
    if "collective" in settings.skip or (settings.world < 2 and settings.gpus == 0):
        return {"status": "skipped"}
    if torch is None:
        return {"status": "no-pytorch"}
    if exchange.get("status") not in ("ok", "skipped"):
        return {"status": "not-tried", "why": "the TCP exchange failed"}
    outcome: dict[str, Any] = {}
    if not _in_thread(lambda: outcome.update(collective(settings, torch, deadline)), deadline):
        return {"status": "timed-out"}
    return outcome


def probe(settings: Settings) -> dict[str, Any]:
    """Every part, run against one deadline; a part still running at the deadline is reported
    as timed out. The GPU part runs beside the others (importing PyTorch takes seconds)."""
    started = time.monotonic()
    deadline = started + run_seconds(settings)
    report: dict[str, Any] = {
        "probe_schema": SCHEMA,
        "runtime": "python",
        "python": platform.python_version(),
        "rank": settings.rank,
        "world": settings.world,
    }
    gpu_result: dict[str, Any] = {}
    gpu_thread = threading.Thread(target=gpu, args=(settings, gpu_result), daemon=True)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(MEASURING_SWITCH_S)
    try:
        if "gpu" not in settings.skip:
            gpu_thread.start()
        report["shm"] = {"status": "skipped"} if "shm" in settings.skip else shm(settings)
        report["data"] = {"status": "skipped"}
        if settings.data and "data" not in settings.skip:
            slot: dict[str, Any] = {}
            done = _in_thread(lambda: slot.update(data(settings, deadline)), deadline + 1)
            report["data"] = slot if done else {"path": settings.data, "status": "timed-out"}
        report["tcp"] = _exchange(settings, deadline)
    finally:
        sys.setswitchinterval(switch)
    report["gpu"] = {"status": "skipped"}
    if "gpu" not in settings.skip:
        gpu_thread.join(max(0.0, deadline - time.monotonic()))
        report["gpu"] = (
            {"status": "timed-out", "requested": settings.gpus}
            if gpu_thread.is_alive()
            else gpu_result
        )
    torch = None if gpu_thread.is_alive() else gpu_result.pop("_torch", None)
    report["collective"] = _all_reduce(settings, torch, report["tcp"], deadline)
    report["elapsed_s"] = round(time.monotonic() - started, 3)
    return report


def line(report: dict[str, Any]) -> str:
    """The report as one JSON line of at most MAX_LINE_BYTES bytes."""
    text = json.dumps(report, separators=(",", ":"), sort_keys=True, default=str)
    if len(text.encode("utf-8")) <= MAX_LINE_BYTES:
        return text
    short = {
        "probe_schema": SCHEMA,
        "runtime": "python",
        "truncated": True,
        "elapsed_s": report.get("elapsed_s"),
    }
    return json.dumps(short, separators=(",", ":"), sort_keys=True)


def main() -> None:
    """Probe, print the one line, and leave at once (a library thread stuck past the
    deadline must not hold the container)."""
    report = probe(Settings())
    sys.stdout.write(line(report) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
