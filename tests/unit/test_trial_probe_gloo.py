"""The probe's all-reduce for real: two local processes stand in for two workers on loopback,
each `python -I probe.py` with PyTorch's CPU build importable, as a training image has it.
gloo carries the all-reduce; the TCP exchange before it reaches rank 0 first.

PyTorch lives in a venv of its own (`make .venv-torch/.installed`: torch 2.13.0, CPU build),
apart from the suite's, where it would turn every other trial test's "no GPU library" into a
multi-second import. Without it these tests skip, and under CI (`TRUEGREEN_REQUIRE_REAL_PARTS`)
they fail: .ci/run builds it. TRUEGREEN_TORCH_PYTHON names that venv's interpreter where the tests
run outside the checkout (the mutation gate's scratch copy holds no venvs)."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_kubelet import ipv6_loopback
from tests.support.real_parts import required
from tests.unit.test_trial_probe import _finish, _free_port, _worker
from truegreen.trial.outcomes import Outcome
from truegreen.trial.readback import DEFAULT_THRESHOLDS, probe_report, report_findings

ROOT = Path(__file__).resolve().parents[2]
TORCH_PYTHON = Path(
    os.environ.get("TRUEGREEN_TORCH_PYTHON") or ROOT / ".venv-torch" / "bin" / "python"
)


@pytest.fixture(scope="module")
def torch_python() -> str:
    if not TORCH_PYTHON.exists():
        why = f"{TORCH_PYTHON} is missing: `make .venv-torch/.installed` builds it"
        if required():
            pytest.fail(f"PyTorch is required in CI: {why}")
        pytest.skip(why)
    return str(TORCH_PYTHON)


def _findings(report: dict[str, Any]) -> set[Outcome]:
    read = probe_report(json.dumps(report))
    assert read is not None
    return {f.outcome for f in report_findings("trial-0", read, DEFAULT_THRESHOLDS)}


def test_two_workers_all_reduce_over_gloo(torch_python: str, tmp_path: Path) -> None:
    port = _free_port()
    worker = _worker(tmp_path, 1, port, torch_python)  # the worker first: it waits for rank 0
    rank0 = _worker(tmp_path, 0, port, torch_python)
    # PyTorch may warn on stderr (a pod log holds both streams; the reader takes the JSON line).
    server, client = _finish(rank0), _finish(worker)
    for report in (server, client):
        assert report["tcp"]["status"] == "ok", "precondition: the workers reached rank 0"
        collective, gpu = report["collective"], report["gpu"]
        assert collective["status"] == "ok", (collective, gpu)
        assert (collective["status"], collective["backend"], collective["world"]) == (
            "ok",
            "gloo",
            2,
        ), collective
        assert collective["correct"] is True, "each worker's 1s summed to the world's size"
        assert collective["allreduce_ms"] >= 0
        # PyTorch imported, a CPU build: the GPU part names it rather than failing.
        assert report["gpu"]["library"] == "torch"
        assert report["gpu"]["status"] == "no-cuda-build"
        assert report["gpu"]["libraries"][0]["version"].startswith("2.13.0")
        assert Outcome.COLLECTIVE_OK in _findings(report)


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_a_worker_given_rank_0_s_ipv6_address_joins_the_all_reduce(
    torch_python: str, tmp_path: Path
) -> None:
    """On an IPv6 pod network the worker is given rank 0's IPv6 address (here IPv6's
    loopback), rank 0 loopback, as doctor tells them (pods.LOOPBACK): the TCP exchange
    reaches rank 0's listener of both families, and the init method puts the address in
    brackets, which urllib's urlparse needs to read the host and the port apart
    (torch/distributed/rendezvous.py `_tcp_rendezvous_handler`)."""
    port = _free_port()
    bind = {"TRUEGREEN_PROBE_BIND": ""}  # the probe's own default, as in a pod
    worker = _worker(tmp_path, 1, port, torch_python, TRUEGREEN_PROBE_MASTER_ADDR="::1", **bind)
    rank0 = _worker(tmp_path, 0, port, torch_python, **bind)
    server, client = _finish(rank0), _finish(worker)
    for report in (server, client):
        assert report["tcp"]["status"] == "ok", report["tcp"]
        collective = report["collective"]
        assert (collective["status"], collective.get("correct")) == ("ok", True), collective


def test_a_worker_that_never_joins_the_all_reduce_is_pytorch_s_own_timeout(
    torch_python: str, tmp_path: Path
) -> None:
    """The worker reaches rank 0 by TCP but never joins the process group: rank 0's gloo store
    times out in PyTorch's own words, the shape of the evidence
    ("DistStoreError: Timed out after 9 seconds waiting for clients. 1/2 clients joined.")."""
    port = _free_port()
    quick = {"TRUEGREEN_PROBE_INIT_TIMEOUT_S": "2"}
    worker = _worker(
        tmp_path, 1, port, torch_python, TRUEGREEN_PROBE_SKIP="collective,gpu", **quick
    )
    rank0 = _worker(tmp_path, 0, port, torch_python, **quick)
    server, client = _finish(rank0), _finish(worker)
    assert client["tcp"]["status"] == "ok", "precondition: the worker reached rank 0"
    assert client["collective"] == {"status": "skipped"}
    collective = server["collective"]
    assert collective["status"] == "error"
    assert collective["error"].startswith("DistStoreError: Timed out after ")
    assert collective["error"].endswith(" waiting for clients. 1/2 clients joined.")
    assert Outcome.COLLECTIVE_TIMED_OUT in _findings(server)
