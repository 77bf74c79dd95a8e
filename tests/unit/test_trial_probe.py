"""The trial probe as a container runs it: `python3 -I probe.py` (no truegreen on the path) and
`sh probe.sh`, each printing one JSON line of schema 1; two processes on loopback stand in for
two workers. No PyTorch is installed here: the probe must say so cleanly."""

import ast
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.fake_kubelet import image_bin, ipv6_loopback
from truegreen.trial import probe as probe_module
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.pods import probe_command
from truegreen.trial.readback import ProbeReport, TrialPod, pod_findings, probe_report

TRIAL = Path(probe_module.__file__).parent
PROBE = TRIAL / "probe.py"
PROBE_SH = TRIAL / "probe.sh"
SCHEMA = json.loads((TRIAL / "probe.schema.json").read_text(encoding="utf-8"))
MIB = 1 << 20


def _env(**settings: str) -> dict[str, str]:
    """A bare environment: PATH and the probe's own settings, nothing of this test run."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **settings}


def _parse(stdout: str) -> dict[str, Any]:
    lines = stdout.splitlines()
    assert len(lines) == 1, f"the probe must print exactly one line, printed {lines!r}"
    report: dict[str, Any] = json.loads(lines[0])
    jsonschema.validate(report, SCHEMA)
    assert probe_report(lines[0]) is not None, "the reader must take what the probe prints"
    return report


def run_probe(tmp_path: Path, **settings: str) -> dict[str, Any]:
    """probe.py run isolated (-I: no site-packages, no PYTHONPATH, no current folder) from an
    empty folder, as the container runs it."""
    done = subprocess.run(
        [sys.executable, "-I", str(PROBE)],
        cwd=tmp_path,
        env=_env(**settings),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    return _parse(done.stdout)


def run_sh(tmp_path: Path, **settings: str) -> dict[str, Any]:
    """probe.sh under the system's POSIX sh (dash on Debian)."""
    done = subprocess.run(
        ["sh", str(PROBE_SH)],
        cwd=tmp_path,
        env=_env(**settings),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return _parse(done.stdout)


def test_the_probe_imports_only_the_standard_library_and_reads_as_python_3_8() -> None:
    source = PROBE.read_text(encoding="utf-8")
    tree = ast.parse(source, feature_version=(3, 8))
    top = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            top |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            top.add(node.module.split(".")[0])
    libraries = {"torch", "jax", "cupy"}  # imported where present, inside try
    assert top - libraries <= sys.stdlib_module_names, top - sys.stdlib_module_names - libraries


def test_without_pytorch_the_probe_says_no_library_and_skips_the_all_reduce(
    tmp_path: Path,
) -> None:
    report = run_probe(tmp_path, TRUEGREEN_PROBE_GPUS="1")
    assert report["probe_schema"] == 1
    assert report["runtime"] == "python"
    assert report["gpu"]["status"] == "no-library"
    assert report["gpu"]["requested"] == 1
    assert report["gpu"]["library"] is None
    assert report["gpu"]["libraries"] == [
        {"name": "torch", "status": "absent"},
        {"name": "jax", "status": "absent"},
        {"name": "cupy", "status": "absent"},
    ]
    assert report["collective"] == {"status": "no-pytorch"}
    assert report["tcp"] == {"status": "skipped"}
    assert report["elapsed_s"] < 10


def test_shm_is_measured_against_the_need(tmp_path: Path) -> None:
    stats = os.statvfs(tmp_path)
    report = run_probe(
        tmp_path, TRUEGREEN_PROBE_SHM_PATH=str(tmp_path), TRUEGREEN_PROBE_SHM_NEED_MIB="7"
    )
    assert report["shm"]["status"] == "ok"
    assert report["shm"]["size_bytes"] == stats.f_blocks * stats.f_frsize
    assert report["shm"]["need_bytes"] == 7 * MIB
    missing = run_probe(tmp_path, TRUEGREEN_PROBE_SHM_PATH=str(tmp_path / "nowhere"))
    assert missing["shm"] == {
        "path": str(tmp_path / "nowhere"),
        "need_bytes": 0,
        "status": "absent",
    }


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path).encode())
        if path.is_file():
            digest.update(path.read_bytes())
            digest.update(str(path.stat().st_mtime_ns).encode())
    return digest.hexdigest()


def test_the_dataset_read_stops_at_its_bound_and_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "b").mkdir(parents=True)
    (data / "a.bin").write_bytes(b"x" * (MIB + 5))
    (data / "b" / "c.bin").write_bytes(b"y" * (3 * MIB))
    before = _tree_digest(data)
    report = run_probe(tmp_path, TRUEGREEN_PROBE_DATA=str(data), TRUEGREEN_PROBE_READ_MIB="2")
    found = report["data"]
    assert found["status"] == "ok"
    assert found["bytes_read"] == 2 * MIB
    assert found["files"] == 2
    assert found["limit_bytes"] == 2 * MIB
    assert found["stopped_at_deadline"] is False
    assert _tree_digest(data) == before, "the probe must never write to the dataset"


def test_a_missing_and_an_unreadable_dataset_are_told_apart(tmp_path: Path) -> None:
    missing = run_probe(tmp_path, TRUEGREEN_PROBE_DATA=str(tmp_path / "gone"))
    assert missing["data"] == {
        "path": str(tmp_path / "gone"),
        "limit_bytes": 64 * MIB,
        "status": "absent",
    }
    # /proc/self/mem opens, and its first page cannot be read: EIO, as a failing volume says.
    failing = run_probe(tmp_path, TRUEGREEN_PROBE_DATA="/proc/self/mem")
    assert failing["data"]["status"] == "unreadable"
    assert failing["data"]["error"] == "OSError: [Errno 5] Input/output error"
    # A mount that cannot be listed (here a device, not a folder) is unreadable, not empty.
    unlisted = run_probe(tmp_path, TRUEGREEN_PROBE_DATA="/dev/null")
    assert unlisted["data"]["status"] == "unreadable"
    assert (
        unlisted["data"]["error"] == "NotADirectoryError: [Errno 20] Not a directory: '/dev/null'"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _worker(
    tmp_path: Path, rank: int, port: int, python: str = sys.executable, **settings: str
) -> subprocess.Popen[str]:
    """One of two workers on loopback; `python` is the image's interpreter (this suite's,
    without PyTorch, unless a test names another)."""
    told = {
        "TRUEGREEN_PROBE_RANK": str(rank),
        "TRUEGREEN_PROBE_WORLD": "2",
        "TRUEGREEN_PROBE_MASTER_ADDR": "127.0.0.1",
        "TRUEGREEN_PROBE_MASTER_PORT": str(port),
        "TRUEGREEN_PROBE_BIND": "127.0.0.1",
        "TRUEGREEN_PROBE_TCP_MIB": "3",
    }
    env = _env(**(told | settings))
    return subprocess.Popen(
        [python, "-I", str(PROBE)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    return _parse(stdout)


def test_two_workers_exchange_bytes_over_loopback(tmp_path: Path) -> None:
    port = _free_port()
    worker = _worker(tmp_path, 1, port)  # the worker first: it waits for rank 0
    rank0 = _worker(tmp_path, 0, port)
    server, client = _finish(rank0), _finish(worker)
    assert server["tcp"]["status"] == "ok"
    assert server["tcp"]["role"] == "rank0"
    assert (server["tcp"]["expected"], server["tcp"]["joined"]) == (1, 1)
    assert [(p["rank"], p["bytes"]) for p in server["tcp"]["peers"]] == [(1, 3 * MIB)]
    assert client["tcp"]["status"] == "ok"
    assert client["tcp"]["bytes"] == 3 * MIB
    assert client["tcp"]["mib_per_s"] > 0
    assert client["collective"] == {"status": "no-pytorch"}


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback on this machine")
@pytest.mark.parametrize("address", ["::1", "[::1]", "127.0.0.1"])
def test_rank_0_listens_on_both_families_by_default(tmp_path: Path, address: str) -> None:
    """On an IPv6 pod network a worker is given rank 0's IPv6 address (its `status.podIP`;
    here IPv6's loopback stands in): rank 0, told no address to listen on, listens on both
    families, as PyTorch's rendezvous store does, and an IPv4 worker still reaches it, named
    by its IPv4 address."""
    port = _free_port()
    bind = {"TRUEGREEN_PROBE_BIND": ""}  # the probe's own default, as in a pod
    worker = _worker(tmp_path, 1, port, TRUEGREEN_PROBE_MASTER_ADDR=address, **bind)
    rank0 = _worker(tmp_path, 0, port, **bind)
    server, client = _finish(rank0), _finish(worker)
    assert client["tcp"]["status"] == "ok", client["tcp"]
    assert client["tcp"]["address"] == address.strip("[]")
    assert server["tcp"]["status"] == "ok", server["tcp"]
    assert [p["address"] for p in server["tcp"]["peers"]] == [address.strip("[]")]


def test_a_worker_that_cannot_reach_rank_0_says_what_the_socket_said(tmp_path: Path) -> None:
    port = _free_port()
    lonely = _finish(_worker(tmp_path, 1, port, TRUEGREEN_PROBE_INIT_TIMEOUT_S="1"))
    assert lonely["tcp"]["status"] == "unreachable"
    assert lonely["tcp"]["error"] == "ConnectionRefusedError: [Errno 111] Connection refused"
    assert lonely["collective"] == {"status": "no-pytorch"}
    waiting = _finish(_worker(tmp_path, 0, port, TRUEGREEN_PROBE_INIT_TIMEOUT_S="1"))
    assert waiting["tcp"]["status"] == "incomplete"
    assert (waiting["tcp"]["expected"], waiting["tcp"]["joined"]) == (1, 0)


def test_a_worker_told_a_moment_waits_for_rank_0_until_then(tmp_path: Path) -> None:
    """A worker whose machine had the image starts long before a rank 0 whose machine still
    downloads it: told a moment (TRUEGREEN_PROBE_WAIT_UNTIL, POSIX seconds) later than its own
    wait, it keeps trying until then, and reaches a rank 0 that starts 3 s after it; a moment
    already past leaves its own wait as it was."""
    import time

    port = _free_port()
    until = str(int(time.time()) + 8)
    worker = _worker(
        tmp_path, 1, port, TRUEGREEN_PROBE_INIT_TIMEOUT_S="1", TRUEGREEN_PROBE_WAIT_UNTIL=until
    )
    time.sleep(3)
    rank0 = _worker(tmp_path, 0, port)
    server, client = _finish(rank0), _finish(worker)
    assert (client["tcp"]["status"], server["tcp"]["status"]) == ("ok", "ok")
    assert client["tcp"]["connect_s"] > 2.5, "it was still trying when rank 0 came"
    past = str(int(time.time()) - 60)
    lonely = _finish(
        _worker(
            tmp_path,
            1,
            _free_port(),
            TRUEGREEN_PROBE_INIT_TIMEOUT_S="1",
            TRUEGREEN_PROBE_WAIT_UNTIL=past,
        )
    )
    assert lonely["tcp"]["status"] == "unreachable"
    assert 0.9 < lonely["tcp"]["tried_s"] < 2.0


def test_the_line_is_bounded() -> None:
    long_error = "E" * 5000
    assert len(probe_module.clip(long_error)) == probe_module.MAX_TEXT
    assert probe_module.clip(long_error).startswith("E" * 200)
    huge = {"probe_schema": 1, "runtime": "python", "elapsed_s": 1.0, "x": "y" * 20000}
    assert json.loads(probe_module.line(huge)) == {
        "probe_schema": 1,
        "runtime": "python",
        "truncated": True,
        "elapsed_s": 1.0,
    }


def test_the_driver_version_comes_from_the_kernel_module_line() -> None:
    # tests/trial_evidence/proc-driver-nvidia-version.txt: the real H200 machine's line.
    line = (
        Path(__file__).parents[1] / "trial_evidence" / "proc-driver-nvidia-version.txt"
    ).read_text()
    assert probe_module.driver_version(line) == "580.159.04"
    assert probe_module.driver_version("") is None


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX sh")
def test_the_sh_fallback_reports_what_sh_can(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.bin").write_bytes(b"z" * (2 * MIB))
    stats = os.statvfs(tmp_path)
    report = run_sh(
        tmp_path,
        TRUEGREEN_PROBE_SHM_PATH=str(tmp_path),
        TRUEGREEN_PROBE_DATA=str(data),
        TRUEGREEN_PROBE_READ_MIB="1",
        TRUEGREEN_PROBE_WORLD="2",
        TRUEGREEN_PROBE_GPUS="1",
    )
    assert report["runtime"] == "sh"
    # df -Pk rounds to whole KiB: the size it gives is the statvfs size within one KiB.
    assert abs(report["shm"]["size_bytes"] - stats.f_blocks * stats.f_frsize) < 1024
    assert report["data"]["status"] == "ok"
    assert report["data"]["bytes_read"] == MIB
    assert report["tcp"] == {
        "status": "unavailable",
        "why": "sh has no sockets: no Python in the image",
    }
    assert report["gpu"]["status"] == "unavailable"
    assert report["gpu"]["requested"] == 1
    failing = run_sh(tmp_path, TRUEGREEN_PROBE_DATA="/proc/self/mem")
    assert failing["data"]["status"] == "unreadable"
    assert failing["data"]["error"] == "dd: error reading '/proc/self/mem': Input/output error"


def _launch(tmp_path: Path, python3: str | None) -> dict[str, Any]:
    """The trial pod's command (pods.probe_command) run by sh in an image whose PATH holds sh,
    probe.sh's tools and `python3` (a script of that text, or none), as the fake kubelet's
    image does (tests/support/fake_kubelet.py `image_bin`)."""
    image = image_bin(tmp_path / "image-bin", None)
    if python3 is not None:
        (image / "python3").write_text(python3, encoding="utf-8")
        (image / "python3").chmod(0o755)
    # Two workers, so that probe.sh says why it cannot reach the other; probe.py is told not
    # to wait for it.
    env = {"PATH": str(image), "TRUEGREEN_PROBE_WORLD": "2", "TRUEGREEN_PROBE_SKIP": "tcp"}
    done = subprocess.run(
        probe_command(),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return _parse(done.stdout)


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX sh")
def test_the_launcher_runs_the_sh_probe_where_python3_cannot_run_the_python_one(
    tmp_path: Path,
) -> None:
    """probe.py runs only under a python3 of 3.8 or later (pods.PROBE_PYTHON); under an older
    one, or one that does not start, the launcher runs probe.sh and tells it why."""
    this = f'#!/bin/sh\nexec {sys.executable} "$@"\n'
    assert _launch(tmp_path / "new", this)["runtime"] == "python"
    old = "#!/bin/sh\necho 3.6.15\nexit 1\n"  # what the version check prints under 3.6
    report = _launch(tmp_path / "old", old)
    assert report["runtime"] == "sh"
    why = "the image's python3 is 3.6.15, older than 3.8"
    assert report["gpu"]["why"] == report["collective"]["why"] == why
    assert report["tcp"]["why"] == f"sh has no sockets: {why}"
    broken = _launch(tmp_path / "broken", "#!/bin/sh\nexit 127\n")
    assert broken["gpu"]["why"] == "the image's python3 did not start"
    assert _launch(tmp_path / "none", None)["gpu"]["why"] == "no Python in the image"


def test_what_the_probe_prints_decodes_into_the_reader_s_records(tmp_path: Path) -> None:
    report = run_probe(tmp_path, TRUEGREEN_PROBE_GPUS="2", TRUEGREEN_PROBE_DATA=str(tmp_path))
    decoded = probe_report(json.dumps(report))
    assert isinstance(decoded, ProbeReport)
    assert decoded.gpu.requested == 2
    assert [lib.status for lib in decoded.gpu.libraries] == ["absent", "absent", "absent"]


def _python_3_8() -> str | None:
    """A Python 3.8 interpreter, the oldest the probe supports: pyenv's, where installed."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = sorted(root.glob("3.8*/bin/python3")) if root.is_dir() else []
    return str(found[-1]) if found else shutil.which("python3.8")


@pytest.mark.skipif(_python_3_8() is None, reason="no Python 3.8 on this machine")
def test_the_probe_runs_under_python_3_8(tmp_path: Path) -> None:
    python = _python_3_8()
    assert python is not None
    done = subprocess.run(
        [python, "-I", str(PROBE)],
        cwd=tmp_path,
        env=_env(TRUEGREEN_PROBE_GPUS="1", TRUEGREEN_PROBE_DATA=str(PROBE)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    report = _parse(done.stdout)
    assert report["python"].startswith("3.8.")
    assert report["data"]["bytes_read"] == PROBE.stat().st_size
    assert report["gpu"]["status"] == "no-library"


def test_the_reads_beside_the_gpu_import_are_timed_with_a_short_thread_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`import torch` holds the GIL on its thread; the dataset read and the TCP exchange each
    want it back after every chunk. They run with a switch interval of MEASURING_SWITCH_S, not
    Python's 5 ms (which alone capped a fast dataset near 195 MiB/s, bench/probe_bench.py),
    and the interval is given back once they are done. Pinned by what each part sees, not by
    a clock."""
    seen: dict[str, float] = {}
    data_part, exchange_part = probe_module.data, probe_module._exchange

    def data(settings: Any, deadline: float) -> dict[str, Any]:
        seen["data"] = sys.getswitchinterval()
        return data_part(settings, deadline)

    def exchange(settings: Any, deadline: float) -> dict[str, Any]:
        seen["tcp"] = sys.getswitchinterval()
        return exchange_part(settings, deadline)

    def gpu(settings: Any, found: dict[str, Any]) -> None:
        seen["gpu"] = sys.getswitchinterval()
        found.update(status="no-library")

    monkeypatch.setattr(probe_module, "data", data)
    monkeypatch.setattr(probe_module, "_exchange", exchange)
    monkeypatch.setattr(probe_module, "gpu", gpu)
    (tmp_path / "shard.bin").write_bytes(b"x" * MIB)
    monkeypatch.setenv("TRUEGREEN_PROBE_DATA", str(tmp_path))
    before = sys.getswitchinterval()
    assert before > probe_module.MEASURING_SWITCH_S, "precondition: Python's own is longer"
    report = probe_module.probe(probe_module.Settings())
    assert report["data"]["status"] == "ok", "precondition: the dataset was read"
    # The interpreter keeps the interval in microseconds: 0.0002 reads back a hair under.
    short = pytest.approx(probe_module.MEASURING_SWITCH_S, rel=1e-6)
    assert seen == dict.fromkeys(("data", "tcp", "gpu"), short)
    assert sys.getswitchinterval() == before


ROCM_TORCH = '''
"""A ROCm build of PyTorch (2.5.1+rocm6.2) on one AMD Instinct MI300X, as far as the probe sees
it: torch/version.py as tools/generate_torch_version.py writes it for a HIP build (`cuda = None`,
`hip = "6.2.41133-dd7f95766"`), and torch.cuda working through HIP."""
import types
__version__ = "2.5.1+rocm6.2"
version = types.SimpleNamespace(cuda=None, hip="6.2.41133-dd7f95766")
class _Props:
    name = "AMD Instinct MI300X"
    total_memory = 192 << 30
    major = 9
    minor = 4
class _Rccl:
    @staticmethod
    def version():
        return (2, 20, 5)
cuda = types.SimpleNamespace(init=lambda: None, device_count=lambda: 1, is_available=lambda: True,
                             get_device_properties=lambda index: _Props(), nccl=_Rccl())
'''


def test_a_rocm_build_of_pytorch_starts_the_gpus_through_torch_cuda(tmp_path: Path) -> None:
    """PyTorch's HIP notes (docs/source/notes/hip.rst, "HIP Interfaces Reuse the CUDA
    Interfaces" and "Checking for HIP"): a ROCm build answers through torch.cuda, with
    `torch.version.cuda` None and `torch.version.hip` set. Run as the pod runs the probe
    (`python3 -c <probe.py>`, the image's own site-packages on the path), a stand-in for that
    build in place of PyTorch; an AMD GPU is a GPU doctor counts (gpu_resources.py: amd.com/gpu)."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(ROCM_TORCH, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE.read_text(encoding="utf-8")],
        cwd=tmp_path,
        env=_env(
            PYTHONPATH=str(tmp_path),
            TRUEGREEN_PROBE_GPUS="1",
            # The stand-in has no torch.distributed: the all-reduce is the gloo test's.
            TRUEGREEN_PROBE_SKIP="collective",
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = _parse(done.stdout)
    assert report["gpu"]["status"] == "ok", report["gpu"]
    [torch] = report["gpu"]["libraries"]
    assert torch["status"] == "ok"
    assert torch["cuda_version"] is None
    assert torch["hip_version"] == "6.2.41133-dd7f95766"
    assert torch["device_count"] == 1
    assert torch["devices"] == [
        {"index": 0, "name": "AMD Instinct MI300X", "memory_mib": 196608, "capability": "9.4"}
    ]
    found = pod_findings(TrialPod(pod="p", log=done.stdout))
    gpus = [(f.outcome, f.level, f.value, f.limit) for f in found if f.outcome.startswith("gpu")]
    assert gpus == [(Outcome.GPUS_SEEN, Level.OK, 1.0, 1.0)]


def test_rank_0_s_rendezvous_address_is_its_own_not_the_job_s_master_addr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rank 0 hosts the rendezvous (torch/distributed/rendezvous.py `_tcp_rendezvous_handler`:
    `TCPStore(hostname, port, ..., is_master=rank == 0)`, whose own client connects to
    `hostname`): the job's MASTER_ADDR names the job's pod 0, not this one. A worker falls back
    to it; an address given to the probe wins for both."""
    monkeypatch.setenv("MASTER_ADDR", "train-llm-0.train-llm.train.svc")
    monkeypatch.delenv("TRUEGREEN_PROBE_MASTER_ADDR", raising=False)
    monkeypatch.setenv("TRUEGREEN_PROBE_RANK", "0")
    assert probe_module.Settings().master_addr == "127.0.0.1"
    monkeypatch.setenv("TRUEGREEN_PROBE_RANK", "1")
    assert probe_module.Settings().master_addr == "train-llm-0.train-llm.train.svc"
    monkeypatch.setenv("TRUEGREEN_PROBE_MASTER_ADDR", "10.4.0.17")
    assert probe_module.Settings().master_addr == "10.4.0.17"
    monkeypatch.setenv("TRUEGREEN_PROBE_RANK", "0")
    assert probe_module.Settings().master_addr == "10.4.0.17"
