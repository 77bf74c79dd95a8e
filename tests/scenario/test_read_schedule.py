"""doctor's reads in flight together give what the same reads one after another give: the same
snapshot, byte for byte, the same environment and the same findings, the reads that depend on
others (a webhook's endpoints, refresh's failure events, the trial start) included. And a
cluster that cannot be reached is asked once, not once per read."""

import copy
import threading
from datetime import UTC, datetime
from pathlib import Path

import yaml
from msgspec.structs import replace

from tests.scenario.test_admission import webhook_behind
from tests.support.auth_echo import make_pki, write_plugin
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import NAMESPACE, unbound_dataset_volume
from truegreen.cluster import Created, Listed
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.redact import RedactingReader
from truegreen.cluster.schedule import IN_MEMORY
from truegreen.cluster.settings import ConnectionSettings
from truegreen.cluster.snapshot import Capture, RecordingReader, SnapshotInfo, render, write_folder
from truegreen.doctor.checks.registry import CHECKS
from truegreen.doctor.environment import (
    CredentialsRequirement,
    DoctorSettings,
    Environment,
    Unreachable,
)
from truegreen.doctor.reads.gather import gather
from truegreen.refresh.annotations import LATCHED

SETTINGS = DoctorSettings(
    credentials=CredentialsRequirement("backend-credentials", ("username", "password")),
    admission_dry_run=True,
)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _take(kubeconfig: Path, directory: Path, in_flight: int) -> Environment:
    """gather with `in_flight` reads at once, recorded and written as `truegreen snapshot` does."""
    with LiveCluster.connect(ConnectionSettings(kubeconfig, request_timeout=10)) as cluster:
        recorder = RecordingReader(RedactingReader(cluster))
        env = gather(recorder, NAMESPACE, NOW, SETTINGS, cluster, in_flight=in_flight)
        info = SnapshotInfo(NAMESPACE, NOW, cluster.server)
    write_folder(directory, render(Capture(info, recorder.recorded)))
    assert isinstance(env, Environment)
    return env


def _unstamped(env: Environment) -> Environment:
    """`env` with the trial start's creationTimestamp dropped: the API server stamps every
    create with its own clock (staging/src/k8s.io/apiserver/pkg/registry/rest/create.go
    `FillObjectMetaSystemFields`), so two takes a second apart differ there alone."""
    if not isinstance(env.trial, Created):
        return env
    obj = copy.deepcopy(env.trial.obj)
    obj["metadata"].pop("creationTimestamp", None)
    return replace(env, trial=Created(obj))


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((directory / "reads").iterdir())}


def test_reads_in_flight_together_give_the_sequential_snapshot_and_findings(
    tmp_path: Path,
) -> None:
    with FakeApiServer() as server:
        objects = unbound_dataset_volume(NOW)
        manager = next(o for o in objects if o["kind"] == "Deployment")
        manager["metadata"].setdefault("annotations", {})[LATCHED] = "3 restarts did not roll out"
        server.add(*objects, *webhook_behind(ready=True))
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
        one_by_one = _take(kubeconfig, tmp_path / "sequential", in_flight=1)
        # The StatefulSet list (asked for first) is answered only once the DaemonSet list (asked
        # for after it) has arrived: both are in flight together and finish out of order.
        daemonsets_arrived = threading.Event()

        def hold_statefulsets(_: FakeApiServer, method: str, path: str) -> None:
            if path.endswith("/daemonsets"):
                daemonsets_arrived.set()
            if path.endswith("/statefulsets"):
                daemonsets_arrived.wait(timeout=10)

        server.request_hooks.append(hold_statefulsets)
        together = _take(kubeconfig, tmp_path / "together", in_flight=6)
        server.request_hooks.remove(hold_statefulsets)
        in_caller = _take(kubeconfig, tmp_path / "in-caller", in_flight=IN_MEMORY)
    assert daemonsets_arrived.is_set(), "precondition: two reads were in flight at once"
    sequential_files = _files(tmp_path / "sequential")
    assert len(sequential_files) == 21, "precondition: every kind of read was made"
    names = list(sequential_files)
    # refresh's failure events follow the workloads; a webhook's endpoints, the webhook lists.
    assert (names[14], names[-1]) == ("015-list-events.yaml", "021-list-endpointslices.yaml")
    assert isinstance(one_by_one.trial, Created), "precondition: the trial start was made"
    assert isinstance(one_by_one.endpoint_slices[("policy", "policy-webhook")], Listed)
    assert isinstance(one_by_one.refresh_failures, Listed), "precondition: refresh tried here"
    # Discovery goes first and alone; every list that depends on nothing follows at once.
    assert list(sequential_files)[:4] == [
        "001-get-apis.yaml",
        "002-list-deployments.yaml",
        "003-list-statefulsets.yaml",
        "004-list-daemonsets.yaml",
    ]
    assert _files(tmp_path / "together") == sequential_files
    assert _unstamped(together) == _unstamped(one_by_one)
    assert _files(tmp_path / "in-caller") == sequential_files
    assert _unstamped(in_caller) == _unstamped(one_by_one)
    findings = [f for c in CHECKS for f in c.check(one_by_one)]
    assert [f for c in CHECKS for f in c.check(together)] == findings


def test_a_cluster_that_cannot_be_reached_is_asked_once(tmp_path: Path) -> None:
    """The first read goes alone: a login plugin that fails runs once, not once per read.
    Over TLS: client-go, and truegreen, send a login only there."""
    plugin = write_plugin(tmp_path / "plugins")
    plugin.plan({"stderr": "token expired\n", "exit": 7})
    pki = make_pki(tmp_path / "pki")
    server = FakeApiServer().start(tls=(pki.server_cert, pki.server_key))
    try:
        kubeconfig = server.write_kubeconfig(
            tmp_path / "kubeconfig", namespace=NAMESPACE, certificate_authority=pki.ca
        )
        config = yaml.safe_load(kubeconfig.read_text())
        config["users"][0]["user"] = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "interactiveMode": "Never",
                "command": str(plugin.path),
            }
        }
        kubeconfig.write_text(yaml.safe_dump(config))
        with LiveCluster.connect(ConnectionSettings(kubeconfig, request_timeout=10)) as cluster:
            gathered = gather(cluster, NAMESPACE, NOW, SETTINGS)
        assert server.log == []
    finally:
        server.stop()
    assert isinstance(gathered, Unreachable)
    assert not gathered.cant_read.reached
    assert len(plugin.runs()) == 1
