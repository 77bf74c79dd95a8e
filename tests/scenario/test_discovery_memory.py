"""doctor remembers what a server served (cluster/discovery_memory.py) only to send its lists
sooner: whatever the memory says, the fresh discovery decides what is judged, so the report is
the one a run without a memory gives."""

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.scenarios import healthy
from tests.support.training_kinds import ALL_GROUPS, every_training_read
from truegreen.cluster.discovery_memory import DiscoveryMemory, memory_folder
from truegreen.cluster.schedule import NEAR_ANSWER, NEAR_IN_FLIGHT

TRAINER: dict[str, tuple[str, ...]] = {"trainer.kubeflow.org": ("v1alpha1",)}
"""A memory of Kubeflow Trainer's group: TrainJobs."""
NEWEST = '"on-local-runtime"'
"""The newest training job of every_training_read, a TrainJob: the one judged."""


def _doctor(kubeconfig: Path, *flags: str) -> CliResult:
    return run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json", *flags)


def _remember(server: FakeApiServer, served: dict[str, tuple[str, ...]]) -> None:
    """The memory as an earlier run against this server would have left it (a near server)."""
    folder = memory_folder(os.environ)
    assert folder is not None
    assert str(folder).startswith(os.environ["XDG_CACHE_HOME"])
    DiscoveryMemory(folder, server.url).keep(served, NEAR_ANSWER / 5)


def test_a_remembered_group_the_server_no_longer_serves_is_not_judged(tmp_path: Path) -> None:
    """Kubeflow Trainer was uninstalled since the last run: its TrainJobs are guessed and
    listed, the server answers 404, and the fresh discovery leaves them out."""
    with FakeApiServer() as server:
        server.install(*(g for g in ALL_GROUPS if g != "trainer.kubeflow.org"))
        now = datetime.now(UTC)
        kept = [o for o in every_training_read(now) if "trainer." not in o["apiVersion"]]
        server.add(*healthy(now), *kept)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        cold = _doctor(kubeconfig)
        assert not server.requests("GET", "/trainjobs"), "precondition: not served, not read"
        _remember(server, TRAINER)
        guessed = _doctor(kubeconfig)
        assert server.requests("GET", "/trainjobs"), "precondition: the memory's guess was sent"
    assert NEWEST not in cold.stdout, "precondition: another job is judged"
    assert guessed.exit_code == cold.exit_code
    assert guessed.stdout == cold.stdout


def test_a_group_the_memory_lacks_is_listed_once_discovery_answers(tmp_path: Path) -> None:
    """Kubeflow Trainer was installed since the last run: discovery names its group and its
    TrainJobs are listed then, as without a memory."""
    with FakeApiServer() as server:
        server.install(*ALL_GROUPS)
        now = datetime.now(UTC)
        server.add(*healthy(now), *every_training_read(now))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        cold = _doctor(kubeconfig)
        _remember(server, {})
        before = len(server.requests("GET", "/trainjobs"))
        late = _doctor(kubeconfig)
        assert len(server.requests("GET", "/trainjobs")) == before + 1
    assert NEWEST in cold.stdout, "precondition: the TrainJob is judged"
    assert late.exit_code == cold.exit_code
    assert late.stdout == cold.stdout


def test_a_login_refused_at_discovery_drops_the_reads_not_yet_sent(tmp_path: Path) -> None:
    """Discovery, sent beside the remembered lists, is refused (401): the reads not yet sent
    are dropped, as without a memory none would be sent; the run ends with the reads under way
    (each held here, so that the drop comes before a thread is free)."""
    with FakeApiServer() as server:
        server.install(*ALL_GROUPS)
        now = datetime.now(UTC)
        server.add(*healthy(now), *every_training_read(now))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        server.inject(Fault.UNAUTHORIZED, "^/apis$")
        cold = _doctor(kubeconfig)
        assert [r.path for r in server.requests("GET")] == ["/apis"], "precondition"
        _remember(server, TRAINER)
        server.inject(Fault.DELAY, "^/apis?/", delay=0.5)
        refused = _doctor(kubeconfig)
        asked = [r.path for r in server.requests("GET")][1:]
    assert cold.exit_code == 3, cold.stdout
    assert (refused.exit_code, refused.stdout) == (cold.exit_code, cold.stdout)
    # discovery and the read beside it, and one more a thread may take before the drop
    assert len(asked) <= NEAR_IN_FLIGHT + 1, asked


def test_a_cache_folder_that_cannot_be_written_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory is an aid: a cache folder doctor cannot write (here a file stands where it
    would be) leaves the run, its output and its exit code as they are."""
    with FakeApiServer() as server:
        server.install(*ALL_GROUPS)
        now = datetime.now(UTC)
        server.add(*healthy(now), *every_training_read(now))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        usual = _doctor(kubeconfig)
        blocked = tmp_path / "cache-is-a-file"
        blocked.write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
        unwritable = _doctor(kubeconfig)
        again = _doctor(kubeconfig)
    assert usual.exit_code == 0, usual.stdout
    assert (unwritable.exit_code, unwritable.stdout, unwritable.stderr) == (0, usual.stdout, "")
    assert (again.exit_code, again.stdout) == (0, usual.stdout)
