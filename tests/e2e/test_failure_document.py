"""Every command, through every failure before a result, prints one document on stdout with
`-o json`, valid against docs/failure.schema.json, and one line on stderr: the same shape
for doctor, snapshot, refresh, monitor and lint."""

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.monitoring import free_port

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "docs" / "failure.schema.json").read_text(encoding="utf-8")
)
CLUSTER_COMMANDS = ("doctor", "snapshot", "refresh", "monitor")


def _closed_port_kubeconfig(tmp: Path) -> Path:
    """A kubeconfig whose server is a loopback port nothing listens on."""
    path = tmp / "closed.kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{free_port()}'}}}}]\n"
        "users: [{name: u, user: {token: abc}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u, namespace: train}}]\n"
    )
    return path


Setup = Callable[[Path, Path], list[str]]
"""The arguments that make a command fail before a result, from a temporary folder and a
kubeconfig of a running fake cluster."""

FAILURES: dict[str, tuple[tuple[str, ...], Setup, int, str]] = {
    "a flag that does not exist": (
        (*CLUSTER_COMMANDS, "lint"),
        lambda tmp, kc: ["--bogus"],
        64,
        "bad-usage",
    ),
    "a flag value out of range": (
        ("doctor", "snapshot", "refresh", "monitor"),
        lambda tmp, kc: ["--request-timeout", "0"],
        64,
        "bad-usage",
    ),
    "a config file that does not exist": (
        ("doctor", "snapshot", "monitor", "lint"),
        lambda tmp, kc: ["--config", str(tmp / "absent.yaml"), str(tmp)],
        64,
        "bad-usage",
    ),
    "a path to lint that does not exist": (
        ("lint",),
        lambda tmp, kc: [str(tmp / "absent")],
        64,
        "bad-usage",
    ),
    "--list-rules with a path": (
        ("lint",),
        lambda tmp, kc: ["--list-rules", str(tmp / "absent")],
        64,
        "bad-usage",
    ),
    "--list-rules with --explain": (
        ("lint",),
        lambda tmp, kc: ["--list-rules", "--explain", "probe-cannot-fail"],
        64,
        "bad-usage",
    ),
    "a snapshot that does not exist": (
        ("doctor",),
        lambda tmp, kc: ["--snapshot", str(tmp / "absent.tar.gz")],
        64,
        "bad-usage",
    ),
    "a context the kubeconfig lacks": (
        CLUSTER_COMMANDS,
        lambda tmp, kc: ["--kubeconfig", str(kc), "--context", "nope"],
        64,
        "bad-usage",
    ),
    "a kubeconfig that does not exist": (
        CLUSTER_COMMANDS,
        lambda tmp, kc: ["--kubeconfig", str(tmp / "absent")],
        64,
        "bad-usage",
    ),
    "a kubeconfig that is not YAML": (
        CLUSTER_COMMANDS,
        lambda tmp, kc: ["--kubeconfig", str(_written(tmp / "bad", "clusters: [unclosed"))],
        3,
        "setup-failed",
    ),
    "a kubeconfig server that is not an address (kubectl: host must be a URL or a host:port "
    "pair)": (
        CLUSTER_COMMANDS,
        lambda tmp, kc: [
            "--kubeconfig",
            str(_written(tmp / "k", kc.read_text().replace(_server(kc), "https://[::1"))),
        ],
        3,
        "setup-failed",
    ),
    "a registry named with --registry-allow that is not a registry name": (
        ("doctor", "snapshot"),
        lambda tmp, kc: ["--kubeconfig", str(kc), "--registry-allow", "evil[.example"],
        64,
        "bad-usage",
    ),
    "a registry named with --insecure-registry that is not a registry name": (
        ("refresh",),
        lambda tmp, kc: ["--kubeconfig", str(kc), "--insecure-registry", "http://evil.example"],
        64,
        "bad-usage",
    ),
    "a cluster that cannot be reached": (
        ("snapshot",),
        lambda tmp, kc: ["--kubeconfig", str(_closed_port_kubeconfig(tmp))],
        3,
        "cluster-unreachable",
    ),
    "every namespace of a cluster that cannot be reached": (
        ("doctor", "monitor"),
        lambda tmp, kc: ["-A", "--kubeconfig", str(_closed_port_kubeconfig(tmp))],
        3,
        "cluster-unreachable",
    ),
    "a listen port out of range": (
        ("monitor",),
        lambda tmp, kc: ["--kubeconfig", str(kc), "--listen", "127.0.0.1:99999"],
        64,
        "bad-usage",
    ),
}


def _server(kubeconfig: Path) -> str:
    """The server address the fake's kubeconfig names."""
    return str(yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"])


def _written(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


CASES = [
    pytest.param(command, failure, id=f"{command}: {failure}")
    for failure, (commands, *_) in FAILURES.items()
    for command in commands
]


@pytest.mark.parametrize(("command", "failure"), CASES)
def test_every_failure_before_a_result_is_one_document_in_one_shape(
    command: str, failure: str, tmp_path: Path, fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    _, setup, exit_code, code = FAILURES[failure]
    lint_path = ["-"] if command == "lint" and failure == "a flag that does not exist" else []
    result = run_cli(command, "-o", "json", *setup(tmp_path, kubeconfig), *lint_path, stdin="")
    assert result.exit_code == exit_code, result.stderr
    document = json.loads(result.stdout)  # one document: json.loads refuses anything after it
    jsonschema.validate(document, SCHEMA)
    headline = document["headline"]
    assert (document["exit_code"], headline["code"]) == (exit_code, code)
    line = result.stderr.removesuffix("\n")
    assert "\n" not in line, "one line on stderr"
    assert line.startswith(f"truegreen: {headline['text']}"), line
    assert list(tmp_path.glob("truegreen-snapshot-*")) == [], "a failed run writes nothing"
    if command == "doctor" and "-A" not in setup(tmp_path, kubeconfig):
        assert list(document) == DOCTOR_REPORT_KEYS, "a report's keys, in a report's order"


DOCTOR_REPORT_KEYS = [
    "schema_version",
    "verdict",
    "exit_code",
    "headline",
    "findings",
    "job",
    "coverage",
]
"""The keys of doctor's report (truegreen.doctor.present.report `to_json`), which its failure
document carries too, so that a reader of one reads the other."""


def test_the_schema_refuses_what_the_commands_used_to_print() -> None:
    """Precondition: the schema tells the shapes apart (a headline string with the remedy
    glued on, an `error` object, a usage error with another code, no remedy)."""
    for wrong in (
        {"schema_version": 1, "exit_code": 3, "headline": "no kubeconfig. set KUBECONFIG"},
        {"schema_version": 1, "exit_code": 3, "error": {"text": "x", "remedy": "y"}},
        {
            "schema_version": 1,
            "exit_code": 64,
            "headline": {"code": "x", "text": "t", "remedy": "r"},
        },
        {"schema_version": 1, "exit_code": 3, "headline": {"code": "x", "text": "t", "remedy": ""}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, SCHEMA)
