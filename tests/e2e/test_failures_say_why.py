"""Failures that say why, in every command: the address and what to do when the cluster cannot
be reached, the real reason (and exit 64) for a wrong flag value."""

import os
from pathlib import Path

import pytest

from tests.e2e.test_failure_document import _closed_port_kubeconfig
from tests.support.cli import run_cli


def _server(kubeconfig: Path) -> str:
    return kubeconfig.read_text().split("server: '")[1].split("'")[0]


def test_refresh_against_a_closed_port_names_the_address_and_what_to_do(tmp_path: Path) -> None:
    """kubectl's own message names the address too (`The connection to the server
    127.0.0.1:1 was refused - did you specify the right host or port?`)."""
    kubeconfig = _closed_port_kubeconfig(tmp_path)
    server = _server(kubeconfig)
    text = run_cli("refresh", "--kubeconfig", str(kubeconfig))
    assert text.exit_code == 3
    assert text.stdout.splitlines() == [
        f"? Couldn't reach the cluster at {server}: connection refused.",
        f"  → Check the cluster address in {kubeconfig} and your network, then run again; "
        f"`kubectl --kubeconfig {kubeconfig} cluster-info` shows whether kubectl gets through.",
        "0 workloads, 0 distinct images, 0 registry requests.",
    ]
    document = run_cli("refresh", "--kubeconfig", str(kubeconfig), "-o", "json").json()
    assert document["exit_code"] == 3
    assert document["headline"] == {
        "code": "cluster-unreachable",
        "text": f"Couldn't reach the cluster at {server}: connection refused.",
        "remedy": text.stdout.splitlines()[1].removeprefix("  → "),
    }


def test_snapshot_against_a_closed_port_saves_nothing_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing answered: exit 3 with doctor's headline and remedy, and no archive (exit 3 of
    a saved snapshot means "saved, but some reads could not be made")."""
    kubeconfig = _closed_port_kubeconfig(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = run_cli("snapshot", "--kubeconfig", str(kubeconfig))
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == (
        f"truegreen: Couldn't reach the cluster at {_server(kubeconfig)}: connection refused. "
        f"Check the cluster address in {kubeconfig} and your network, then run again; "
        f"`kubectl --kubeconfig {kubeconfig} cluster-info` shows whether kubectl gets through.\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["closed.kubeconfig"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["doctor", "--snapshot", "{tmp}/absent"],
            "truegreen: snapshot {tmp}/absent does not exist. pass a folder or a .tar.gz file "
            "written by `truegreen snapshot`",
        ),
        (
            ["monitor", "--kubeconfig", "{kc}", "--listen", "127.0.0.1:99999"],
            "truegreen: --listen '127.0.0.1:99999' is not an address: port 99999 is out of "
            "range (0 to 65535). pass [HOST]:PORT, such as :9108 or 127.0.0.1:9108",
        ),
        (
            # Not host ":" and port 1: the flag itself is wrong, before any cluster is read.
            ["monitor", "--kubeconfig", "{tmp}/absent", "--listen", "[::1"],
            "truegreen: --listen '[::1' is not an address: missing ']' in address. pass "
            "[HOST]:PORT, such as :9108 or 127.0.0.1:9108",
        ),
        (
            ["doctor", "--kubeconfig", "{kc}", "--context", "nope"],
            "truegreen: context 'nope' is not in kubeconfig {kc}: it has fake. pass one of those "
            "with --context",
        ),
        (
            ["snapshot", "-o", "json", "--bogus"],
            "truegreen: no such option '--bogus'. see `truegreen snapshot --help`",
        ),
    ],
)
def test_a_wrong_flag_value_is_bad_usage_with_the_real_reason(
    args: list[str], line: str, tmp_path: Path, kubeconfig: Path
) -> None:
    def filled(text: str) -> str:
        return text.replace("{tmp}", str(tmp_path)).replace("{kc}", str(kubeconfig))

    result = run_cli(*map(filled, args))
    assert result.exit_code == 64
    assert result.stderr == filled(line) + "\n"
