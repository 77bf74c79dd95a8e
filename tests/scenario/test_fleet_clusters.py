"""doctor over many clusters in one run: two fake API servers, one kubeconfig with a context
for each (and one for a cluster that cannot be reached), through the real client."""

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.scenario.conftest import CREDENTIALS
from tests.scenario.test_fleet_doctor import _moved
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import HostileServer, issue, make_authority
from tests.support.scenarios import damaged_pull_credentials, healthy


@pytest.fixture
def two() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def down(tmp_path: Path) -> Iterator[HostileServer]:
    """A cluster no connection reaches: its certificate is signed by no authority we trust."""
    certificate = issue(tmp_path, make_authority(tmp_path), "api", "IP:127.0.0.1")
    with HostileServer(lambda peer, _: None, certificate) as server:
        yield server


def _kubeconfig(path: Path, servers: dict[str, tuple[str, str]]) -> Path:
    """One context per entry: name → (server address, the context's namespace)."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": next(iter(servers)),
        "clusters": [{"name": n, "cluster": {"server": url}} for n, (url, _) in servers.items()],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [
            {"name": n, "context": {"cluster": n, "user": "u", "namespace": ns}}
            for n, (_, ns) in servers.items()
        ],
    }
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def clusters(
    fake_api: FakeApiServer, two: FakeApiServer, down: HostileServer, tmp_path: Path
) -> Path:
    """`one`: `train` healthy (the context's namespace); `two`: `team-a` with a damaged
    registry login (the context's namespace); `down`: unreachable."""
    now = datetime.now(UTC)
    fake_api.add(*healthy(now))
    two.add(*[o for o in healthy(now) if "namespace" not in o["metadata"]])
    two.add(*_moved(damaged_pull_credentials(now), "team-a"))
    return _kubeconfig(
        tmp_path / "kubeconfig",
        {"one": (fake_api.url, "train"), "two": (two.url, "team-a"), "down": (down.url, "x")},
    )


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


def test_each_context_is_checked_in_its_own_namespace_worst_first(
    clusters: Path, fake_api: FakeApiServer, two: FakeApiServer
) -> None:
    result = _doctor(clusters, "--contexts", "one,two", "-o", "json")
    assert result.exit_code == 2, result.stderr
    document = result.json()
    assert document["verdict"] == "not-ready"
    by_context = {c["context"]: c for c in document["clusters"]}
    assert [n["namespace"] for n in by_context["one"]["namespaces"]] == ["train"]
    assert [n["namespace"] for n in by_context["two"]["namespaces"]] == ["team-a"]
    assert by_context["one"]["verdict"] == "ready"
    assert by_context["two"]["exit_code"] == 2
    alone = _doctor(clusters, "--context", "two", "-o", "json").json()
    headline = by_context["two"]["namespaces"][0]["report"]["headline"]
    assert (headline["code"], headline["text"]) == (
        alone["headline"]["code"],
        alone["headline"]["text"],
    )
    # its remedy names the cluster and the namespace, as kubectl must be told both here
    assert "--context two -n team-a" in headline["remedy"]
    # each cluster was asked about its own namespace only
    assert fake_api.requests("GET", r"/namespaces/train/")
    assert not fake_api.requests("GET", r"/namespaces/team-a/")
    assert two.requests("GET", r"/namespaces/team-a/")
    assert not two.requests("GET", r"/namespaces/train/")


def test_a_selector_matching_nothing_names_each_cluster_in_its_remedy(clusters: Path) -> None:
    """docs/fleet.md: remedies name the cluster with `--context` over clusters; pasted without
    it, the command would ask the current context's cluster for every one."""
    result = _doctor(clusters, "--contexts", "one,two", "--namespace-selector", "team=nobody")
    assert result.exit_code == 3
    document = _doctor(
        clusters, "--contexts", "one,two", "--namespace-selector", "team=nobody", "-o", "json"
    ).json()
    remedies = {c["context"]: c["failure"]["remedy"] for c in document["clusters"]}
    assert remedies == {
        name: "check the labels with "
        f"`kubectl --kubeconfig {clusters} --context {name} get namespaces --show-labels`"
        for name in ("one", "two")
    }


def test_an_unreachable_cluster_is_its_own_unknown_line(clusters: Path) -> None:
    result = _doctor(clusters, "--all-contexts", "--no-color")
    assert result.exit_code == 2, result.stdout  # two's not ready beats down's unknown
    lines = result.stdout.splitlines()
    assert lines[0].startswith("✗ NOT READY        two   team-a  "), lines[0]
    assert lines[1].startswith("? COULD NOT CHECK  down  x       "), lines[1]
    assert "the cluster at https://127.0.0.1:" in lines[1]
    assert lines[2].startswith("✓ READY            one   train   "), lines[2]
    assert lines[-1] == "3 clusters, 3 namespaces: 1 not ready, 1 could not be checked, 1 ready."


def test_unknown_beats_ready_across_clusters(clusters: Path) -> None:
    result = _doctor(clusters, "--contexts", "one,down", "-o", "json")
    assert result.exit_code == 3
    assert [c["verdict"] for c in result.json()["clusters"]] == ["ready", "unknown"]


def test_a_namespace_selection_applies_in_every_cluster(
    clusters: Path, fake_api: FakeApiServer, two: FakeApiServer
) -> None:
    result = _doctor(clusters, "--contexts", "one,two", "-A", "-o", "json")
    by_context = {c["context"]: c for c in result.json()["clusters"]}
    assert "train" in [n["namespace"] for n in by_context["one"]["namespaces"]]
    assert "team-a" in [n["namespace"] for n in by_context["two"]["namespaces"]]
    assert fake_api.requests("GET", r"^/api/v1/namespaces$")
    assert two.requests("GET", r"^/api/v1/namespaces$")


def test_the_count_names_clusters_and_namespaces_each_by_its_own_number(
    clusters: Path, fake_api: FakeApiServer
) -> None:
    """Cluster `one` holds two namespaces (`train` healthy, `team-b` with a damaged
    registry login), `two` one: the table has a line per namespace, and the closing count says
    how many clusters and how many namespaces it counts, so the verdicts add up to the
    namespaces, not the clusters."""
    fake_api.add(*_moved(damaged_pull_credentials(datetime.now(UTC)), "team-b"))
    result = _doctor(clusters, "--contexts", "one,two", "-A", "--no-color")
    assert result.exit_code == 2, result.stdout
    lines = result.stdout.splitlines()
    assert [line[:26] for line in lines[:3]] == [
        "✗ NOT READY  one  team-b  ",
        "✗ NOT READY  two  team-a  ",
        "✓ READY      one  train   ",
    ], lines[:3]
    assert lines[-1] == "2 clusters, 3 namespaces: 2 not ready, 0 could not be checked, 1 ready."


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("--contexts", "one,nope"),
            "context 'nope' is not in kubeconfig {kubeconfig}: it has down, one, two. pass "
            "those with --contexts",
        ),
        (
            ("--context", "one", "--all-contexts"),
            "--context and --all-contexts cannot be used together. choose one way to name "
            "the clusters",
        ),
        (("--contexts", ","), "--contexts names no context. give --contexts a,b"),
        (
            ("--all-contexts", "--watch"),
            "--watch follows one cluster; --all-contexts names many. drop --watch, or name one "
            "cluster with --context",
        ),
        # One namespace named already: the remedy names what is many, the clusters.
        (
            ("--contexts", "one,two", "-n", "train", "--watch"),
            "--watch follows one cluster; --contexts names many. drop --watch, or name one "
            "cluster with --context",
        ),
        (
            ("--contexts", "one,two", "-n", "train", "--trial"),
            "--trial runs in one cluster; --contexts names many. drop --trial, or name one "
            "cluster with --context",
        ),
        (
            ("--namespaces", "train,other", "--watch"),
            "--watch follows one namespace; --namespaces names many. drop --watch, or name one "
            "namespace with -n",
        ),
    ],
)
def test_bad_usage_is_one_line_and_exit_64_before_any_request(
    clusters: Path,
    fake_api: FakeApiServer,
    two: FakeApiServer,
    args: tuple[str, ...],
    said: str,
) -> None:
    result = _doctor(clusters, *args)
    assert result.exit_code == 64
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert said.format(kubeconfig=clusters) in line
    assert fake_api.requests() == []
    assert two.requests() == []


def test_a_cluster_that_cannot_be_reached_for_its_namespaces_is_its_own_line(
    clusters: Path,
) -> None:
    result = _doctor(clusters, "--all-contexts", "-A", "--no-color")
    assert result.exit_code == 2, result.stdout
    lines = result.stdout.splitlines()
    (down,) = [line for line in lines if "  down  " in line]
    # No cluster answered the namespaces' list: said as a run that reached nothing says it.
    assert re.match(
        r"^\? COULD NOT CHECK  down  - +Couldn't reach the cluster at https://", down
    ), down
    assert "down:" in lines  # and what to do follows, under its name
    document = _doctor(clusters, "--all-contexts", "-A", "-o", "json").json()
    (failed,) = [c for c in document["clusters"] if c["context"] == "down"]
    assert failed["failure"]["code"] == "cluster-unreachable"
    assert failed["namespaces"] == []
    assert failed["exit_code"] == 3


def test_names_are_shown_with_their_control_characters_made_visible(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    """A context's name is the kubeconfig's text and a namespace's the server's: shown in the
    table and the section titles with their control characters escaped, as kubectl's tables
    show the server's text (cli-runtime pkg/printers/terminal.go `EscapeTerminal`, from
    tableprinter.go `printRows`; kubernetes PR #112553)."""
    now = datetime.now(UTC)
    fake_api.add(*healthy(now), *_moved(damaged_pull_credentials(now), "team-b"))
    fake_api.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x\x1b[2J"}})
    config = _kubeconfig(tmp_path / "kubeconfig", {"one\x1b]0;t\x07": (fake_api.url, "train")})
    result = _doctor(config, "--all-contexts", "-A", "--no-color")
    lines = result.stdout.splitlines()
    assert [line[:46] for line in lines[:3]] == [
        "✗ NOT READY        one\\x1b]0;t\\x07  team-b    ",
        "? COULD NOT CHECK  one\\x1b]0;t\\x07  x\\x1b[2J  ",
        "✓ READY            one\\x1b]0;t\\x07  train     ",
    ]
    assert "one\\x1b]0;t\\x07/team-b:" in lines
    assert "one\\x1b]0;t\\x07/x\\x1b[2J:" in lines
    assert not {"\x1b", "\x07"} & set(result.stdout)
    assert result.exit_code == 2
