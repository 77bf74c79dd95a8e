"""doctor over many namespaces in one run, against the fake API server through the real client.

Each namespace is judged as `doctor -n NAMESPACE` judges it (the same document); the reads
outside the namespaces (machines, the cluster's pods, webhooks, discovery) are made once for
all; one namespace that cannot be read is its own unknown; the worst exit code wins.
"""

import copy
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import CREDENTIALS
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import ApiFailureError, FakeApiServer, Fault
from tests.support.hostile import HostileServer, issue, make_authority
from tests.support.scenarios import (
    NAMESPACE,
    damaged_pull_credentials,
    healthy,
    held_by_running_job,
)

Obj = dict[str, Any]


def _moved(objects: list[Obj], namespace: str) -> list[Obj]:
    """`objects` with every namespaced one moved from the scenario's namespace to `namespace`
    (machines and storage types are the cluster's, shared: only the first copy is kept)."""
    moved = []
    for obj in copy.deepcopy(objects):
        meta = obj["metadata"]
        if meta.get("namespace") != NAMESPACE:
            continue
        meta["namespace"] = namespace
        moved.append(obj)
    return moved


def _namespace(name: str, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


@pytest.fixture
def fleet(fake_api: FakeApiServer) -> FakeApiServer:
    """`train` and `team-a` healthy, `team-b` with a damaged registry login; the first two
    labelled `team=ml`."""
    now = datetime.now(UTC)
    fake_api.add(_namespace(NAMESPACE, team="ml"), _namespace("team-a", team="ml"))
    fake_api.add(_namespace("team-b", team="web"))
    fake_api.add(*healthy(now))
    fake_api.add(*_moved(healthy(now), "team-a"))
    fake_api.add(*_moved(damaged_pull_credentials(now), "team-b"))
    return fake_api


def _doctor(kubeconfig: Path, *args: str) -> CliResult:
    return run_cli(
        "doctor",
        "--kubeconfig",
        str(kubeconfig),
        "--request-timeout",
        "2",
        "--no-registry",
        *CREDENTIALS,
        *args,
    )


def _cluster_wide(server: FakeApiServer) -> dict[str, int]:
    """GETs of paths outside any namespace, by path (a namespace's own get excepted)."""
    counted: dict[str, int] = {}
    for record in server.requests("GET"):
        if "/namespaces/" in record.path:
            continue
        counted[record.path] = counted.get(record.path, 0) + 1
    return counted


def test_each_namespace_is_judged_as_doctor_judges_it_alone(
    fleet: FakeApiServer, kubeconfig: Path
) -> None:
    result = _doctor(kubeconfig, "--namespaces", "train,team-a,team-b", "-o", "json")
    assert result.exit_code == 2, result.stderr
    document = result.json()
    assert document["verdict"] == "not-ready"
    assert document["exit_code"] == 2
    assert document["counts"] == {"ready": 2, "not-ready": 1, "unknown": 0}
    assert [n["namespace"] for n in document["namespaces"]] == ["team-b", "team-a", "train"]
    for entry in document["namespaces"]:
        alone = _doctor(kubeconfig, "-n", entry["namespace"], "-o", "json")
        assert entry["report"] == alone.json(), entry["namespace"]
    assert document["namespaces"][0]["report"]["headline"]["code"].startswith("image-pull.")


def test_each_namespace_sees_its_own_pods_in_the_shared_capacity_fold(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """The cluster's pods are folded once for all namespaces: each must still see only its
    own training pods (the one running, the one waiting), as it does alone."""
    now = datetime.now(UTC)
    fake_api.add(*healthy(now))
    fake_api.add(*_moved(held_by_running_job(now), "team-a"))
    result = _doctor(kubeconfig, "--namespaces", "train,team-a", "-o", "json")
    by_name = {n["namespace"]: n["report"] for n in result.json()["namespaces"]}
    team_a = by_name["team-a"]
    assert team_a["job"]["name"] == "train-003", "precondition: team-a judges its waiting job"
    for namespace, report in by_name.items():
        alone = _doctor(kubeconfig, "-n", namespace, "-o", "json").json()
        assert report == alone, namespace


def test_the_reads_outside_the_namespaces_are_made_once(
    fleet: FakeApiServer, kubeconfig: Path
) -> None:
    _doctor(kubeconfig, "-n", "train", "-o", "json")
    alone = _cluster_wide(fleet)
    assert {"/api/v1/nodes", "/api/v1/pods", "/apis"} <= set(alone), alone
    fleet.log.clear()
    result = _doctor(kubeconfig, "--namespaces", "train,team-a,team-b", "-o", "json")
    assert result.exit_code == 2, result.stderr
    assert _cluster_wide(fleet) == alone
    assert all(count == 1 for count in alone.values()), alone
    # and each namespace's own reads are made for it, once
    for namespace in ("train", "team-a", "team-b"):
        deployments = fleet.requests("GET", rf"^/apis/apps/v1/namespaces/{namespace}/deployments$")
        assert len(deployments) == 1, namespace


def test_a_namespace_that_cannot_be_read_is_its_own_unknown_line(
    fleet: FakeApiServer, kubeconfig: Path
) -> None:
    fleet.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/team-a/pods$")
    result = _doctor(kubeconfig, "--namespaces", "train,team-a", "--no-color")
    assert result.exit_code == 3, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert re.match(r"^\? COULD NOT CHECK  team-a  ", lines[0]), lines[0]
    assert re.match(r"^✓ READY            train   ", lines[1]), lines[1]
    assert lines[-1] == "2 namespaces: 0 not ready, 1 could not be checked, 1 ready."
    assert "team-a:" in lines  # the details of the namespace that is not ready follow
    assert "train:" not in lines  # those of a ready one only with --verbose
    assert result.stderr == ""


def test_not_ready_beats_could_not_check(fleet: FakeApiServer, kubeconfig: Path) -> None:
    fleet.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/team-a/pods$")
    result = _doctor(kubeconfig, "--namespaces", "team-a,team-b", "-o", "json")
    assert result.exit_code == 2
    verdicts = [n["report"]["verdict"] for n in result.json()["namespaces"]]
    assert verdicts == ["not-ready", "unknown"]


def test_a_selector_checks_the_namespaces_it_matches(
    fleet: FakeApiServer, kubeconfig: Path
) -> None:
    result = _doctor(kubeconfig, "--namespace-selector", "team in (ml)", "-o", "json")
    assert result.exit_code == 0, result.stdout
    assert sorted(n["namespace"] for n in result.json()["namespaces"]) == ["team-a", "train"]
    (listed,) = fleet.requests("GET", r"^/api/v1/namespaces$")
    assert listed.query["labelSelector"] == "team in (ml)"


def test_all_namespaces_checks_every_one(fleet: FakeApiServer, kubeconfig: Path) -> None:
    result = _doctor(kubeconfig, "-A", "-o", "json")
    names = [n["namespace"] for n in result.json()["namespaces"]]
    assert {"train", "team-a", "team-b"} <= set(names)
    assert result.exit_code == 2


def test_a_selector_matching_nothing_is_one_line_and_exit_3(
    fleet: FakeApiServer, kubeconfig: Path
) -> None:
    result = _doctor(kubeconfig, "--namespace-selector", "team=nobody")
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "truegreen: No namespace has labels matching --namespace-selector 'team=nobody'. "
        f"check the labels with `kubectl --kubeconfig {kubeconfig} get namespaces --show-labels`"
    ]


def test_a_login_that_may_not_list_namespaces_is_one_line_and_exit_3(
    fleet: FakeApiServer, kubeconfig: Path
) -> None:
    fleet.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces$")
    result = _doctor(kubeconfig, "-A", "-o", "json")
    assert result.exit_code == 3
    assert result.json()["headline"]["code"] == "namespaces-not-listed"


@pytest.mark.parametrize(
    ("fault", "status"),
    [
        (Fault.SERVER_ERROR, '500): "Internal error occurred: etcdserver: request timed out"'),
        (Fault.UNAVAILABLE, '503): "the server is currently unable to handle the request"'),
    ],
)
def test_a_namespace_list_the_server_answers_with_an_error_quotes_the_server(
    fleet: FakeApiServer, kubeconfig: Path, fault: Fault, status: str
) -> None:
    """kubectl prints the Status message of a failed list (`Error from server (InternalError):
    Internal error occurred: …`); doctor -A quoted only the status code, and told the operator
    to check a connection that had worked."""
    fleet.inject(fault, r"^/api/v1/namespaces$")
    result = _doctor(kubeconfig, "-A", "-o", "json")
    assert result.exit_code == 3
    headline = result.json()["headline"]
    assert headline["code"] == "namespaces-not-listed"
    assert headline["text"] == (
        "Couldn't list the namespaces: list namespaces: the cluster answered with an error "
        f"({status}"
    )
    assert headline["remedy"] == (
        "Run again; if it stays, ask your cluster admin to check the cluster's health "
        f"(`kubectl --kubeconfig {kubeconfig} get --raw /readyz`)."
    )


class _EchoingServer(FakeApiServer):
    """Answers requests under `refused` with `status` and a message that echoes a login, as a
    webhook or an authenticating proxy in front of the API server may."""

    def __init__(self, refused: str, status: int, reason: str) -> None:
        super().__init__()
        self.refused, self.status, self.reason = refused, status, reason

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, Any, dict[str, str]]:
        if path.startswith(self.refused):
            message = "backend refused: token: PLANTED8812 (user bob)"
            raise ApiFailureError(self.status, self.reason, message)
        return super().handle(method, path, query, headers, body)


@pytest.mark.parametrize(
    ("refused", "status", "reason", "args"),
    [
        ("/api/v1/namespaces", 500, "InternalError", ("-A",)),
        ("/", 401, "Unauthorized", ()),
    ],
)
def test_the_server_s_own_words_are_quoted_redacted(
    tmp_path: Path, refused: str, status: int, reason: str, args: tuple[str, ...]
) -> None:
    """A namespace list the server failed, and a login it refused, quote its message: through
    the redaction every quoted text takes."""
    with _EchoingServer(refused, status, reason) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", namespace="train")
        result = _doctor(kubeconfig, *args, "-o", "json")
    assert result.exit_code == 3
    assert "PLANTED8812" not in result.stdout + result.stderr
    assert "backend refused: token: <redacted> (user bob)" in result.json()["headline"]["text"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--namespace-selector", "team in ml"), "is not a label selector: found 'ml'"),
        (("-A", "-n", "train"), "-n and --all-namespaces cannot be used together"),
        (("--namespaces", "a", "--namespace-selector", "x"), "cannot be used together"),
        (("-A", "--watch"), "--watch follows one namespace"),
        # The same rule for -n as for --namespaces: a DNS-1123 label
        # (pkg/apis/core/validation ValidateNamespaceName) or bad usage.
        (("-n", "Bad_NS"), "'Bad_NS' cannot be a namespace's name: a name is at most 63"),
        (("--namespaces", "Bad_NS"), "'Bad_NS' cannot be a namespace's name: a name is at most"),
    ],
)
def test_bad_usage_is_one_line_and_exit_64_before_any_request(
    fleet: FakeApiServer, kubeconfig: Path, args: tuple[str, ...], said: str
) -> None:
    fleet.log.clear()
    result = _doctor(kubeconfig, *args)
    assert result.exit_code == 64
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert said in result.stderr
    assert fleet.requests() == []


def test_a_snapshot_holds_one_namespace(tmp_path: Path) -> None:
    result = run_cli("doctor", "--snapshot", str(tmp_path), "-A")
    assert result.exit_code == 64
    assert result.stderr.strip().splitlines() == [
        "truegreen: --all-namespaces asks the live cluster; a snapshot holds one namespace. "
        "drop --all-namespaces: doctor --snapshot checks the snapshot's namespace"
    ]


def _untrusted_kubeconfig(server: HostileServer, path: Path) -> Path:
    """A kubeconfig for `server`, whose certificate no authority it trusts has signed: no
    connection is ever made (nothing reached the server)."""
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: '{server.url}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    return path


def test_an_unreachable_cluster_is_every_namespace_unknown_tried_once(tmp_path: Path) -> None:
    certificate = issue(tmp_path, make_authority(tmp_path), "api", "IP:127.0.0.1")
    with HostileServer(lambda peer, _: None, certificate) as server:
        kubeconfig = _untrusted_kubeconfig(server, tmp_path / "kubeconfig")
        alone = _doctor(kubeconfig, "-n", "a", "-o", "json")
        assert alone.json()["headline"]["code"] == "cluster-unreachable"
        tried_alone = server.counts["connections"]
        assert tried_alone >= 1
        result = _doctor(kubeconfig, "--namespaces", "a,b,c", "-o", "json")
        tried = server.counts["connections"] - tried_alone
    assert result.exit_code == 3
    reports = [n["report"] for n in result.json()["namespaces"]]
    assert [r["headline"]["code"] for r in reports] == ["cluster-unreachable"] * 3
    # the first namespace learnt it; the others were told without trying again
    assert tried == tried_alone
