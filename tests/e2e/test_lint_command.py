"""`truegreen lint` through its command-line contract."""

import errno
import fcntl
import json
import os
import pty
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import run_cli
from tests.support.real_parts import find
from truegreen.lint.rules import ALL_RULES, ALL_RULES_BY_ID

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "manifests" / "incident.yaml"
FIXED = ROOT / "examples" / "manifests" / "fixed.yaml"
SARIF_SCHEMA = json.loads((ROOT / "tests" / "support" / "sarif-schema-2.1.0.json").read_text())


def test_incident_fails_with_exact_findings() -> None:
    result = run_cli("lint", str(INCIDENT), "-o", "json")
    assert result.exit_code == 2
    document = result.json()
    assert document["schema_version"] == 1
    assert [
        (f["rule"], f["severity"], f["line"], f["container"]) for f in document["findings"]
    ] == [
        ("readiness-missing", "error", 38, "runner"),
        ("restart-probe-on-keep-running", "error", 38, "runner"),
    ]
    first = document["findings"][0]
    assert (first["kind"], first["namespace"], first["name"], first["file"]) == (
        "Deployment",
        "training",
        "job-runner",
        str(INCIDENT),
    )
    assert "Service job-runner routes to it" in first["message"]


def test_fixed_version_passes() -> None:
    result = run_cli("lint", str(FIXED), "-o", "json")
    assert (result.exit_code, result.json()["findings"]) == (0, [])


def test_sarif_is_valid_and_located() -> None:
    result = run_cli("lint", str(INCIDENT), "-o", "sarif")
    log = result.json()
    jsonschema.validate(log, SARIF_SCHEMA)
    run = log["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "readiness-missing" in rule_ids
    assert all(
        r["fullDescription"]["text"] and r["help"]["text"] for r in run["tool"]["driver"]["rules"]
    )
    first = run["results"][0]
    assert first["ruleId"] == "readiness-missing"
    assert rule_ids[first["ruleIndex"]] == "readiness-missing"
    assert first["level"] == "error"
    location = first["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": str(INCIDENT)}, "region": {"startLine": 38}}
    assert result.exit_code == 2


_URI_CHARACTER = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})"
URI_REFERENCE = re.compile(f"{_URI_CHARACTER}*(?:#{_URI_CHARACTER}*)?")
"""RFC 3986 §4.1 URI-reference, as characters: unreserved, sub-delims, `:@/?`, percent-encoded
octets, one `#` before the fragment (an IP-literal host's brackets are no file's)."""
URIS = jsonschema.FormatChecker(formats=())
URIS.checks("uri-reference")(
    lambda value: not isinstance(value, str) or bool(URI_REFERENCE.fullmatch(value))
)


def test_sarif_uris_are_uri_references(tmp_path: Path) -> None:
    """The schema's `"format": "uri-reference"` on artifactLocation.uri, checked: a folder named
    with a space, `#` and `%` is percent-encoded."""
    folder = tmp_path / "odd dir #1 100%"
    folder.mkdir()
    shutil.copy(INCIDENT, folder / "a b.yaml")
    log = run_cli("lint", str(folder), "-o", "sarif").json()
    jsonschema.validate(log, SARIF_SCHEMA, format_checker=URIS)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri["uri"].endswith("/odd%20dir%20%231%20100%25/a%20b.yaml")
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] = {
        "uri": "odd dir/a.yaml"
    }
    with pytest.raises(jsonschema.ValidationError):  # the check itself can fail
        jsonschema.validate(log, SARIF_SCHEMA, format_checker=URIS)


def test_sarif_schema_rejects_a_broken_log() -> None:
    """The schema check itself can fail: a log without `version` is refused."""
    log = run_cli("lint", str(INCIDENT), "-o", "sarif").json()
    del log["version"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SARIF_SCHEMA)


_SWITCHED_OFF = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {truegreen.io/disabled-by: "8080=METRICS_TOKEN"}
spec:
  template:
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1
        ports: [{containerPort: 8080, name: http}]
        readinessProbe: {httpGet: {port: http, path: /ready}}
        env: [{name: METRICS_TOKEN, value: "tok-918273645021"}]
"""


@pytest.mark.parametrize("output", ["text", "json", "sarif"])
def test_a_setting_that_turns_a_server_off_is_named_never_its_value(
    tmp_path: Path, output: str
) -> None:
    """Any non-empty value turns the server off, so the env var's name says all; its value may
    be a token, and lint's output lands in CI logs and code scanning (docs/ci.md)."""
    (tmp_path / "web.yaml").write_text(_SWITCHED_OFF)
    result = run_cli("lint", str(tmp_path / "web.yaml"), "-o", output, "--no-color")
    assert result.exit_code == 2, result.stdout
    assert "probe-targets-disabled-server" in result.stdout
    assert "918273645021" not in result.stdout + result.stderr
    assert "its env sets METRICS_TOKEN, which turns that server off" in " ".join(
        result.stdout.split()
    )


def test_text_groups_by_file_with_a_summary() -> None:
    result = run_cli("lint", str(INCIDENT), str(FIXED), "--no-color")
    lines = result.stdout.splitlines()
    assert lines[0] == str(INCIDENT)
    assert lines[1].split() == [
        "38",
        "error",
        "readiness-missing",
        "Deployment/job-runner",
        "container",
        "runner",
    ]
    assert lines[-1] == "2 errors, 0 warnings, 0 info in 2 files (4 objects read)."


def test_stdin_like_helm_template() -> None:
    result = run_cli("lint", "-", "-o", "json", stdin=INCIDENT.read_text())
    findings = result.json()["findings"]
    assert {f["file"] for f in findings} == {"<stdin>"}
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "twice", [["-", "-"], [str(INCIDENT), str(INCIDENT)]], ids=["stdin", "one-file"]
)
def test_an_input_named_twice_is_one_input(twice: list[str]) -> None:
    """`lint - -` reads stdin once, and a file named twice is one file: the count of files
    and objects says what was read, not how often it was named."""
    once = run_cli("lint", twice[0], "-o", "json", stdin=INCIDENT.read_text())
    again = run_cli("lint", *twice, "-o", "json", stdin=INCIDENT.read_text())
    assert (once.json()["files"], once.json()["objects"]) == (1, 2), "precondition"
    assert (again.exit_code, again.json()) == (once.exit_code, once.json())
    text = run_cli("lint", *twice, stdin=INCIDENT.read_text()).stdout.splitlines()[-1]
    assert "in 1 file (2 objects read)" in text


@pytest.mark.parametrize(
    "names",
    [
        ["./dir", "dir/a.yaml"],
        ["dir", "{root}/dir/a.yaml"],
        ["dir/", "dir/../dir/a.yaml", "link.yaml"],
        ["dir", "{root}/dir/chart/templates/deployment.yaml"],
    ],
    ids=["dot-folder", "absolute-file", "dotdot-and-symlink", "chart-template-absolute"],
)
def test_a_file_named_beside_its_folder_in_other_words_is_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: list[str]
) -> None:
    """A file is one input however it is spelled (`./dir`, an absolute path, `..`, a symbolic
    link: the same file, os.path.realpath), beside its folder as alone; a chart's template named
    beside its folder leaves one chart."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.yaml").write_text(INCIDENT.read_text())
    _chart(tmp_path / "dir")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "dir" / "a.yaml")
    monkeypatch.chdir(tmp_path)

    def counted(*paths: str) -> tuple[int, int, int, list[str]]:
        result = run_cli("lint", *paths, "-o", "json")
        report = result.json()
        rules = sorted(finding["rule"] for finding in report["findings"])
        return result.exit_code, report["files"], report["objects"], rules

    once = counted("dir")
    assert once[2] == 2, "precondition: a.yaml's two objects (the chart's are not read)"
    assert counted(*(name.format(root=tmp_path) for name in names)) == once


def test_broken_file_is_a_finding_and_the_others_are_still_linted(tmp_path: Path) -> None:
    (tmp_path / "a-broken.yaml").write_text("kind: Deployment\nmetadata: {name: x\n")
    (tmp_path / "b.yml").write_text(INCIDENT.read_text())
    (tmp_path / "notes.txt").write_text("not a manifest")
    result = run_cli("lint", str(tmp_path), "-o", "json")
    findings = result.json()["findings"]
    parse = [f for f in findings if f["rule"] == "parse-error"]
    assert [(Path(f["file"]).name, f["line"], f["severity"]) for f in parse] == [
        ("a-broken.yaml", 2, "error")
    ]
    assert {f["rule"] for f in findings if Path(f["file"]).name == "b.yml"} == {
        "readiness-missing",
        "restart-probe-on-keep-running",
    }
    assert result.exit_code == 2


def test_list_kinds_comments_and_empty_documents(tmp_path: Path) -> None:
    deployment = INCIDENT.read_text().split("---\n")[1]
    import yaml

    wrapped = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(deployment)]}
    path = tmp_path / "list.yaml"
    path.write_text("# comment\n---\n---\n" + yaml.safe_dump(wrapped))
    result = run_cli("lint", str(path), "-o", "json")
    assert [f["rule"] for f in result.json()["findings"]] == [
        "readiness-missing",
        "restart-probe-on-keep-running",
    ]


def test_a_launcher_on_a_continued_line_is_training_a_liveness_probe_would_kill(
    tmp_path: Path,
) -> None:
    """The shell removes a backslash-newline before it reads the script (POSIX 2.2.1), so
    `cd /workspace && \\` then `torchrun …` runs torchrun, which a failed liveness probe kills
    (kubelet pkg/kubelet/prober/worker.go doProbe)."""
    path = tmp_path / "trainer.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: trainer}\nspec:\n"
        "  serviceName: trainer\n  selector: {matchLabels: {app: trainer}}\n  template:\n"
        "    metadata: {labels: {app: trainer}}\n    spec:\n      containers:\n"
        "      - name: trainer\n        image: pytorch\n"
        '        command: ["/bin/bash", "-c"]\n        args:\n        - |\n'
        "          cd /workspace && \\\n          torchrun \\\n"
        "            --nnodes=2 --nproc-per-node=8 \\\n            train.py\n"
        "        livenessProbe:\n          exec: {command: [cat, /tmp/healthy]}\n"
    )
    result = run_cli("lint", str(path), "-o", "json")
    assert [f["rule"] for f in result.json()["findings"]] == ["restart-probe-on-keep-running"]
    assert result.exit_code == 2


def test_config_ignores_by_rule_and_name_pattern(tmp_path: Path) -> None:
    config = tmp_path / "lint.yaml"
    config.write_text(
        "ignore:\n  - rules: [readiness-missing]\n    name: job-*\n    namespace: train*\n"
    )
    result = run_cli("lint", str(INCIDENT), "--config", str(config), "-o", "json")
    assert [f["rule"] for f in result.json()["findings"]] == ["restart-probe-on-keep-running"]
    config.write_text("ignore:\n  - rules: [readiness-missing]\n    namespace: other\n")
    result = run_cli("lint", str(INCIDENT), "--config", str(config), "-o", "json")
    assert "readiness-missing" in [f["rule"] for f in result.json()["findings"]]


def test_config_with_unknown_rule_is_bad_usage(tmp_path: Path) -> None:
    config = tmp_path / "lint.yaml"
    config.write_text("ignore:\n  - rules: [no-such-rule]\n")
    result = run_cli("lint", str(INCIDENT), "--config", str(config))
    assert result.exit_code == 64
    assert "unknown rules: no-such-rule" in result.stderr


FAILURE_SCHEMA = json.loads((ROOT / "docs" / "failure.schema.json").read_text())
PATTERN = "must be text (a name or a pattern such as `train*`)"
RULE_IDS = "must be a rule id or a list of rule ids"


@pytest.mark.parametrize(
    ("config_text", "said"),
    [
        ("ignore: 5\n", "`ignore` must be a list of entries, each with `rules`"),
        (
            "ignore: {rules: [readiness-missing]}\n",
            "`ignore` must be a list of entries, each with `rules`",
        ),
        ("ignore: [{rules: 5}]\n", f"`rules` in ignore entry 1 {RULE_IDS}"),
        ("ignore: [{rules: }]\n", f"`rules` in ignore entry 1 {RULE_IDS}"),
        ("ignore: [{rules: [readiness-missing, 5]}]\n", f"`rules` in ignore entry 1 {RULE_IDS}"),
        ("ignore: [{rules: {readiness-missing: 1}}]\n", f"`rules` in ignore entry 1 {RULE_IDS}"),
        (
            "ignore: [{rules: readiness-missing}, {rules: [readiness-missing], namespace: 5}]\n",
            f"`namespace` in ignore entry 2 {PATTERN}",
        ),
        (
            "ignore: [{rules: [readiness-missing], name: [a]}]\n",
            f"`name` in ignore entry 1 {PATTERN}",
        ),
        (
            "ignore: [{rules: [readiness-missing], kind: {a: 1}}]\n",
            f"`kind` in ignore entry 1 {PATTERN}",
        ),
    ],
    ids=[
        "ignore-number",
        "ignore-mapping",
        "rules-number",
        "rules-null",
        "rules-list-with-number",
        "rules-mapping",
        "namespace-number",
        "name-list",
        "kind-mapping",
    ],
)
def test_a_config_field_of_the_wrong_type_is_bad_usage_in_one_line(
    tmp_path: Path, config_text: str, said: str
) -> None:
    """A mistyped field is the operator's mistake, said in one line naming the file, the field
    and what it must be: never "a bug in truegreen" (exit 1), never accepted as something else."""
    config = tmp_path / "lint.yaml"
    config.write_text(config_text)
    line = f"truegreen: lint config {config}: {said}\n"
    text = run_cli("lint", str(INCIDENT), "--config", str(config))
    assert (text.exit_code, text.stdout, text.stderr) == (64, "", line)
    as_json = run_cli("lint", str(INCIDENT), "--config", str(config), "-o", "json")
    assert (as_json.exit_code, as_json.stderr) == (64, line)
    document = as_json.json()
    jsonschema.validate(document, FAILURE_SCHEMA)
    assert (document["exit_code"], document["headline"]["code"], document["findings"]) == (
        64,
        "bad-usage",
        [],
    )


def test_a_config_s_names_reach_the_terminal_escaped(tmp_path: Path) -> None:
    config = tmp_path / "lint.yaml"
    config.write_text('ignore:\n  - rules: ["x\\e[2J"]\n    "k\\e[31m": 1\n')
    result = run_cli("lint", str(INCIDENT), "--config", str(config))
    assert result.exit_code == 64
    assert "unknown rules: x\\x1b[2J" in result.stderr
    config.write_text('ignore:\n  - rules: [readiness-missing]\n    "k\\e[31m": 1\n')
    again = run_cli("lint", str(INCIDENT), "--config", str(config))
    assert "unknown keys k\\x1b[31m" in again.stderr


def test_missing_path_is_bad_usage(tmp_path: Path) -> None:
    result = run_cli("lint", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 64
    assert (
        result.stderr.strip()
        == f"truegreen: cannot lint {tmp_path / 'nope.yaml'}: no such file or folder"
    )


YAMLISH = st.text(
    alphabet=st.sampled_from(list("abc:-[]{}#'\" \n\t|>&*!%@`,?0123456789kindapiVersion")),
    max_size=200,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        YAMLISH, st.integers(0, len(INCIDENT.read_text())).map(lambda n: INCIDENT.read_text()[:n])
    )
)
def test_any_input_gives_findings_not_tracebacks(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(text)
    result = run_cli("lint", str(path), "-o", "json")
    findings = result.json()["findings"]
    errors = any(f["severity"] == "error" for f in findings)
    # 3 (nothing checked) only when no object was read and nothing failed.
    assert result.exit_code in ((2,) if errors else (0, 3))
    for finding in findings:
        assert Path(finding["file"]).exists()


# -- hostile input: each bad file is one finding, and the others are still linted ------------

BIN = Path(sys.executable).parent / "truegreen"
BOMB = "\n".join(
    ['l0: &l0 "lol"']
    + [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 10)]
    + ["kind: *l9", ""]
)


NOT_UTF8 = "it is not UTF-8 text (byte 31)"
NOT_REGULAR = "it is a device, not a regular file"


@pytest.mark.timeout(60)
def test_each_hostile_file_is_one_finding_and_the_good_one_is_still_linted(
    tmp_path: Path,
) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB)
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "binary.yaml").write_bytes(b"kind: Pod\x00\x01")
    (tmp_path / "latin1.yaml").write_bytes(b"kind: Pod\nmetadata: {name: caf\xe9}\n")
    with (tmp_path / "huge.yaml").open("wb") as huge:
        huge.truncate(200 * 1000 * 1000)  # a 200 MB manifest (sparse on disk)
    (tmp_path / "z-good.yaml").write_text(INCIDENT.read_text())
    result = run_cli("lint", str(tmp_path), "-o", "json")
    found = [
        (Path(f["file"]).name, f["rule"], f["line"], f["message"])
        for f in result.json()["findings"]
    ]
    assert found == [
        ("binary.yaml", "unreadable-file", None, "cannot be read: it is a binary file, not text"),
        ("bomb.yaml", "parse-error", 4, "not valid YAML: document contains excessive aliasing"),
        ("huge.yaml", "unreadable-file", None, "cannot be read: it is larger than 16 MiB"),
        ("latin1.yaml", "unreadable-file", None, "cannot be read: it is not UTF-8 text (byte 31)"),
        ("pipe.yaml", "unreadable-file", None, "cannot be read: it is a pipe, not a regular file"),
        (
            "zero.yaml",
            "unreadable-file",
            None,
            "cannot be read: it is a device, not a regular file",
        ),
        ("z-good.yaml", "readiness-missing", 38, found[-2][3]),
        ("z-good.yaml", "restart-probe-on-keep-running", 38, found[-1][3]),
    ]
    assert result.exit_code == 2


def _where_permissions_bind() -> list[str]:
    """The prefix that runs a command in a process that folder permissions bind. Root lists any
    folder whatever its mode (CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE, capabilities(7)), and
    the suite runs as root in CI, so there the command runs under setpriv without both: listing
    a `chmod 000` folder then fails in os.scandir with PermissionError, as it does for any
    user."""
    if os.geteuid() != 0:
        return []
    setpriv = find("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not installed (Debian package util-linux)")
    dropped = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={dropped}", f"--inh-caps={dropped}"]


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


DENIED = os.strerror(errno.EACCES)


def _said(document: dict[str, Any]) -> list[tuple[str, str, str, int | None, str]]:
    return [
        (f["rule"], f["severity"], f["file"], f["line"], f["message"]) for f in document["findings"]
    ]


def test_a_folder_that_cannot_be_listed_is_a_finding_never_skipped(tmp_path: Path) -> None:
    """Named or met while searching, a folder lint may not list is one `unreadable-file` error
    for that folder: exit 2, never a silent 0 over the manifests it holds."""
    tree = tmp_path / "tree"
    (tree / "good").mkdir(parents=True)
    shutil.copy(FIXED, tree / "good" / "fixed.yaml")
    locked = tree / "locked"
    locked.mkdir()
    shutil.copy(INCIDENT, locked / "incident.yaml")  # two error findings, if it could be read
    locked.chmod(0)
    bound = _where_permissions_bind()
    lint = [*bound, str(BIN), "lint"]
    try:
        listing = _run([*bound, sys.executable, "-c", f"import os; os.listdir({str(locked)!r})"])
        searched = _run([*lint, str(tree), "-o", "json"])
        named = _run([*lint, str(locked), "--allow-empty", "-o", "json"])
        twice = _run([*lint, str(tree), str(locked), f"{tmp_path}/./tree/locked"])
    finally:
        locked.chmod(0o755)
    assert "PermissionError" in listing.stderr  # the precondition: the run may not list it
    unlisted = [("unreadable-file", "error", str(locked), None, f"cannot be read: {DENIED}")]
    document, alone = json.loads(searched.stdout), json.loads(named.stdout)
    assert (searched.returncode, _said(document), document["objects"]) == (2, unlisted, 2)
    assert (named.returncode, _said(alone)) == (2, unlisted)
    assert twice.returncode == 2
    assert twice.stdout.count("unreadable-file") == 1
    assert "1 error, 0 warnings, 0 info" in twice.stdout


HUGE_PORT = "1" + "0" * 5000
"""Past CPython's 4,300-digit limit on int(text); go-yaml v2 reads it as a string."""


def test_an_integer_past_python_s_digit_limit_is_a_finding_and_the_rest_is_linted(
    tmp_path: Path,
) -> None:
    """go.yaml.in/yaml/v2 resolve.go `resolve`: a plain integer too big for ParseInt, ParseUint
    and ParseFloat resolves to `!!str`, so the port is the string kubectl sends and the API
    server refuses (a ContainerPort is an int32)."""
    (tmp_path / "a-big.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
        f"spec: {{containers: [{{name: c, image: x, ports: [{{containerPort: {HUGE_PORT}}}]}}]}}\n"
    )
    (tmp_path / "b-good.yaml").write_text(INCIDENT.read_text())
    for args, stdin in (([str(tmp_path)], None), (["-"], (tmp_path / "a-big.yaml").read_bytes())):
        result = run_cli("lint", *args, "-o", "json", stdin=stdin)
        found = [(Path(f["file"]).name, f["rule"], f["line"]) for f in result.json()["findings"]]
        big = "<stdin>" if stdin else "a-big.yaml"
        good = (
            []
            if stdin
            else [
                ("b-good.yaml", "readiness-missing", 38),
                ("b-good.yaml", "restart-probe-on-keep-running", 38),
            ]
        )
        assert found == [
            (big, "readiness-missing-no-port", 4),
            (big, "wrong-field-type", 4),
            *good,
        ]
        wrong = result.json()["findings"][1]["message"]
        assert wrong.startswith("container c: containers[0].ports[0].containerPort is the string")
        assert result.exit_code == 2


def _probed_deployment(name: str, script: str) -> str:
    """A Deployment whose readiness probe runs `sh -c SCRIPT`."""
    container = {
        "name": "c",
        "image": "registry.example.com/a:1",
        "readinessProbe": {"exec": {"command": ["sh", "-c", script]}},
    }
    return yaml.safe_dump(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [container]},
                },
            },
        }
    )


# Probe scripts and whether lint calls them unable to fail; dash and bash exit 0 for each
# (tests/unit/test_lint_commands.py holds the reading to the real shells).
PROBE_SCRIPTS = {
    "deep-if": ("if " * 1000 + "true" + "; then true; fi" * 1000, False),  # too deep to read
    "deep-group": ("{ " * 1000 + "true; " + "}; " * 999 + "}", False),
    "exit": ("exit 0", True),
    # POSIX 2.6.2, only `${x?}` and `${x:?}` end the shell
    "echo-assign-default": ("echo ready ${READY:=yes}", True),
    "echo-url-default": ('echo "${URL:-http://x/?a=b}"', True),
    "echo-unset-check": ("echo ${URL:?}", False),
    # POSIX 2.9.1, the status of `echo` with a command's output in it is echo's
    "echo-date": ('echo "alive at $(date)"', True),
    "echo-backquote": ('echo "alive at `date`"', True),
    "assign-output": ("STATUS=$(curl -sf localhost:8080/ready)", False),
}


def test_probe_scripts_are_judged_and_a_deep_one_crashes_nothing(tmp_path: Path) -> None:
    """A script nested past what the reading follows is not flagged (it is not followed),
    and the run goes on: before, 200 nested `if`s ended it with "internal error
    (RecursionError)", exit 1, and no file was linted."""
    for name, (script, _) in PROBE_SCRIPTS.items():
        (tmp_path / f"{name}.yaml").write_text(_probed_deployment(name, script))
    result = run_cli("lint", str(tmp_path), "-o", "json")
    assert result.exit_code == 0, result.stderr
    flagged = {f["name"] for f in result.json()["findings"] if f["rule"] == "probe-cannot-fail"}
    assert flagged == {name for name, (_, cannot_fail) in PROBE_SCRIPTS.items() if cannot_fail}


def test_a_duplicate_key_cannot_hide_a_probe_behind_another(tmp_path: Path) -> None:
    """Last-wins would keep the httpGet probe and hide the one that cannot fail."""
    path = tmp_path / "dup.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: api\n"
        "        readinessProbe: {exec: {command: [sh, -c, 'exit 0']}}\n"
        "        readinessProbe: {httpGet: {port: 8080}}\n"
    )
    result = run_cli("lint", str(path), "-o", "json")
    assert [(f["rule"], f["line"], f["message"]) for f in result.json()["findings"]] == [
        ("parse-error", 10, 'duplicate key: key "readinessProbe" already set in map')
    ]
    assert result.exit_code == 2


def test_stdin_that_is_not_utf_8_is_bad_usage_in_one_line() -> None:
    result = run_cli("lint", "-", stdin=b"kind: Pod\nmetadata: {name: caf\xe9}\n")
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == "truegreen: cannot lint stdin: it is not UTF-8 text (byte 31)\n"


def test_stdin_over_the_size_cap_is_bad_usage() -> None:
    result = run_cli("lint", "-", "--max-file-size", "1", stdin=b"a" * (2 * 1024 * 1024))
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == "truegreen: cannot lint stdin: it is larger than 1 MiB\n"


# -- Helm and CI ---------------------------------------------------------------------------


def _chart(root: Path) -> Path:
    chart = root / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("replicas: 1\n")
    (chart / "templates" / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-api\n"
    )
    (chart / "templates" / "service.yaml").write_text("apiVersion: v1\nkind: Service\n")
    return chart


def test_a_chart_s_templates_are_one_finding_that_says_render_first(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    (tmp_path / "fixed.yaml").write_text(FIXED.read_text())
    result = run_cli("lint", str(tmp_path), "-o", "json")
    assert [(f["rule"], f["file"], f["message"]) for f in result.json()["findings"]] == [
        (
            "helm-template",
            str(chart / "templates" / "deployment.yaml"),
            f"2 unrendered Helm templates in chart {chart}: "
            f"render it first: `helm template {chart} | truegreen lint -`",
        )
    ]
    assert result.exit_code == 2


def test_a_raw_template_on_stdin_is_recognised_not_a_parse_error(tmp_path: Path) -> None:
    template = _chart(tmp_path) / "templates" / "deployment.yaml"
    result = run_cli("lint", "-", "-o", "json", stdin=template.read_text())
    assert [(f["rule"], f["line"], f["message"]) for f in result.json()["findings"]] == [
        (
            "helm-template",
            4,
            "this is an unrendered Helm template: render it first: "
            "`helm template <chart> | truegreen lint -`",
        )
    ]


def _helm_output() -> str:
    """What `helm template` prints (helm pkg/action: "---\\n# Source: %s\\n%s\\n")."""
    service, deployment = INCIDENT.read_text().split("---\n")
    return (
        f"---\n# Source: training/templates/service.yaml\n{service}"
        f"---\n# Source: training/templates/deployment.yaml\n{deployment}"
    )


def test_helm_source_comments_locate_findings_in_sarif_json_and_text() -> None:
    rendered = _helm_output()
    runner_line = next(
        n for n, line in enumerate(rendered.splitlines(), 1) if "- name: runner" in line
    )
    source_line = rendered.splitlines().index("# Source: training/templates/deployment.yaml") + 1
    # In the template, the Deployment starts on line 1: the line after its Source comment.
    relative = runner_line - source_line
    assert relative == 38 - 15  # incident.yaml: `---` on line 15, the container on 38
    log = run_cli("lint", "-", "-o", "sarif", stdin=rendered).json()
    jsonschema.validate(log, SARIF_SCHEMA)
    locations = [r["locations"][0]["physicalLocation"] for r in log["runs"][0]["results"]]
    # The line counts in the rendered document, so the location says it is that document's
    # (no template file on disk to map it back to exactly).
    assert locations == 2 * [
        {
            "artifactLocation": {
                "uri": "training/templates/deployment.yaml",
                "uriBaseId": "HELM_RENDERED",
            },
            "region": {"startLine": relative},
        }
    ]
    assert (
        "rendered" in log["runs"][0]["originalUriBaseIds"]["HELM_RENDERED"]["description"]["text"]
    )
    findings = run_cli("lint", "-", "-o", "json", stdin=rendered).json()["findings"]
    assert {(f["file"], f["line"], f["rendered"]) for f in findings} == {
        ("training/templates/deployment.yaml", relative, True)
    }
    text = run_cli("lint", "-", "--no-color", stdin=rendered).stdout.splitlines()
    assert text[0] == "training/templates/deployment.yaml (lines of the document helm rendered)"
    assert text[1].split()[:2] == [str(relative), "error"]


def test_a_document_without_a_source_comment_is_not_given_the_one_before() -> None:
    """`{ helm template chart; cat extra.yaml; } | truegreen lint -`: the extra document is
    stdin's, at its line in the stream."""
    deployment = INCIDENT.read_text().split("---\n")[1]
    rendered = f"---\n# Source: training/templates/other.yaml\nkind: ConfigMap\n---\n{deployment}"
    runner_line = rendered.splitlines().index("        - name: runner") + 1
    findings = run_cli("lint", "-", "-o", "json", stdin=rendered).json()["findings"]
    assert {(f["file"], f["line"]) for f in findings} == {("<stdin>", runner_line)}


def test_a_parse_error_in_helm_output_names_its_template() -> None:
    rendered = _helm_output() + "---\n# Source: training/templates/broken.yaml\nkind: [x\n"
    findings = run_cli("lint", "-", "-o", "json", stdin=rendered).json()["findings"]
    assert [(f["file"], f["line"]) for f in findings if f["rule"] == "parse-error"] == [
        ("training/templates/broken.yaml", 1)
    ]


def test_a_value_the_api_server_refuses_in_helm_output_names_its_template() -> None:
    refused = "apiVersion: v1\nkind: ConfigMap\ndata:\n  ratio: .nan\n"
    rendered = _helm_output() + f"---\n# Source: training/templates/config.yaml\n{refused}"
    findings = run_cli("lint", "-", "-o", "json", stdin=rendered).json()["findings"]
    assert [
        (f["file"], f["line"], f["message"]) for f in findings if f["rule"] == "parse-error"
    ] == [
        (
            "training/templates/config.yaml",
            4,
            "the API server cannot take it: json: unsupported value: NaN",
        )
    ]


# `helm template` output (helm pkg/action: "---\n# Source: %s\n%s\n"): a PrometheusRule that
# passes Prometheus's alert templating through, as charts do on purpose (prometheus
# docs/configuration/alerting_rules.md, Templating: `{{ $labels.<labelname> }}`), and a
# Deployment that repeats a key.
ALERTS_RENDERED = """\
---
# Source: stack/templates/rules.yaml
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: stack-rules
spec:
  groups:
  - name: pods
    rules:
    - alert: PodCrashLooping
      expr: rate(kube_pod_container_status_restarts_total[5m]) > 0
      annotations:
        description: 'Pod {{ $labels.namespace }}/{{ $labels.pod }} is crash looping.'
"""
DUPLICATE_IMAGE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: stack-api
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: example/api:1
        image: example/api:2
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {port: 8080, path: /ready}}
"""


@pytest.mark.parametrize("via", ["stdin", "file"])
def test_a_parse_error_in_rendered_helm_output_is_one_whatever_its_alerts_hold(
    tmp_path: Path, via: str
) -> None:
    """`{{ $labels.pod }}` in a rendered PrometheusRule is no unrendered template: the document
    that fails is judged, and its `# Source:` comment says helm rendered it."""
    rendered = f"{ALERTS_RENDERED}---\n# Source: stack/templates/deployment.yaml\n{DUPLICATE_IMAGE}"
    path = tmp_path / "rendered.yaml"
    path.write_text(rendered)
    args = ["-"] if via == "stdin" else [str(path)]
    result = run_cli("lint", *args, "-o", "json", stdin=rendered if via == "stdin" else None)
    findings = [(f["rule"], f["file"], f["line"], f["message"]) for f in result.json()["findings"]]
    duplicate = 'duplicate key: key "image" already set in map'
    second = rendered.splitlines().index("        image: example/api:2") + 1
    source = rendered.splitlines().index("# Source: stack/templates/deployment.yaml") + 1
    assert findings == (
        [("parse-error", "stack/templates/deployment.yaml", second - source, duplicate)]
        if via == "stdin"
        else [("parse-error", str(path), second, duplicate)]
    )
    assert result.exit_code == 2


@pytest.mark.parametrize("via", ["stdin", "file"])
def test_a_broken_rendered_document_holding_alert_templating_is_a_parse_error(
    tmp_path: Path, via: str
) -> None:
    """The failing document itself holds `{{ $labels.pod }}`: its `# Source:` comment says
    helm rendered it, so the `{{ }}` it passes through is no unrendered template."""
    rendered = ALERTS_RENDERED.replace("      expr:", "      for: 5m\n      for: 10m\n      expr:")
    path = tmp_path / "rendered.yaml"
    path.write_text(rendered)
    args = ["-"] if via == "stdin" else [str(path)]
    result = run_cli("lint", *args, "-o", "json", stdin=rendered if via == "stdin" else None)
    assert [(f["rule"], f["message"]) for f in result.json()["findings"]] == [
        ("parse-error", 'duplicate key: key "for" already set in map')
    ]


def test_a_template_elsewhere_in_the_file_does_not_make_a_broken_document_one(
    tmp_path: Path,
) -> None:
    """Only the document that fails is judged: another one's `{{ .Values.x }}` (here inside a
    quoted string, which YAML reads) says nothing about it."""
    quoted = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: '{{ .Values.x }}'}\n"
    path = tmp_path / "mixed.yaml"
    path.write_text(f"{quoted}---\n{DUPLICATE_IMAGE}")
    findings = run_cli("lint", str(path), "-o", "json").json()["findings"]
    assert [(f["rule"], f["line"]) for f in findings] == [("parse-error", 18)]


@pytest.mark.parametrize("kind", ["notes", "empty-folder", "other-yaml"])
def test_nothing_to_check_is_said_plainly_and_exits_3(tmp_path: Path, kind: str) -> None:
    target = {
        "notes": tmp_path / "notes.txt",
        "empty-folder": tmp_path / "empty",
        "other-yaml": tmp_path / "workflow.yaml",
    }[kind]
    if kind == "empty-folder":
        target.mkdir()
    else:
        target.write_text("on: [push]\njobs: {}\n" if kind == "other-yaml" else "some notes\n")
    result = run_cli("lint", str(target), "--no-color")
    files = "0 files" if kind == "empty-folder" else "1 file"
    # notes and a workflow are each one YAML document that is no Kubernetes object
    skipped = "" if kind == "empty-folder" else "; 1 other document (no Kubernetes object) skipped"
    assert result.stdout.splitlines() == [
        f"0 errors, 0 warnings, 0 info in {files} (0 objects read{skipped}). No Kubernetes "
        "objects found, so nothing was checked. Pass --allow-empty where that is expected (a "
        "hook on any YAML file)."
    ]
    assert result.exit_code == 3
    allowed = run_cli("lint", str(target), "--allow-empty", "-o", "json")
    assert (allowed.exit_code, allowed.json()["objects"], allowed.json()["findings"]) == (0, 0, [])


def test_an_unknown_rule_in_an_ignore_annotation_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(
        INCIDENT.read_text().replace(
            'truegreen.io/keep-running: "runner"',
            'truegreen.io/keep-running: "runner"\n'
            '    truegreen.io/ignore: "readiness-mising, restart-probe-on-keep-running"',
        )
    )
    result = run_cli("lint", str(path), "-o", "json")
    found = [(f["rule"], f["severity"], f["message"]) for f in result.json()["findings"]]
    assert found == [
        (
            "ignore-unknown-rule",
            "error",
            "truegreen.io/ignore names an unknown rule: readiness-mising; known rules are "
            "readiness-missing, restart-probe-on-keep-running, probe-port-undeclared, "
            "probe-targets-disabled-server, liveness-same-as-readiness, probe-cannot-fail, "
            "probe-cannot-pass, readiness-missing-no-port, probe-port-unlisted, "
            "readiness-missing-after-startup, unknown-field, wrong-field-type",
        ),
        ("readiness-missing", "error", found[1][2]),  # the known rule is still silenced
    ]
    assert result.exit_code == 2


def test_pre_commit_hook_skips_chart_templates_and_tolerates_other_yaml() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])
    for path in ("deploy/job.yaml", "chart/values.yml", "k8s/list.json"):
        assert files.search(path), path
        assert not exclude.search(path), path
    for path in ("chart/templates/deployment.yaml", "templates/x.yaml"):
        assert files.search(path), path
        assert exclude.search(path), path
    assert "--allow-empty" in [*hook["entry"].split(), *hook.get("args", [])]


def test_ci_docs_pin_no_tag_that_does_not_exist() -> None:
    """The snippets install from the repository (`repo: local`) or pin a commit by its hash."""
    for doc in (ROOT / "docs" / "ci.md", ROOT / "README.md"):
        for rev in re.findall(r"^\s*rev:\s*(\S+)", doc.read_text(), re.MULTILINE):
            assert re.fullmatch(r"[0-9a-f]{40}|<[A-Z-]+>", rev), f"{doc.name} pins rev {rev}"
    assert "repo: local" in (ROOT / "docs" / "ci.md").read_text()


# -- the rule table from the command line --------------------------------------------------


def test_list_rules_prints_every_rule_from_the_table() -> None:
    """With -o json, one document with `schema_version` 1, as every run of every command
    prints (README, "--output json prints JSON alone on stdout with schema_version 1")."""
    result = run_cli("lint", "--list-rules")
    assert result.exit_code == 0
    rows = [line.split(None, 2) for line in result.stdout.splitlines()]
    assert [(rule.id, rule.severity.value, rule.summary) for rule in ALL_RULES] == [
        (row[0], row[1], row[2]) for row in rows
    ]
    listed = run_cli("lint", "--list-rules", "-o", "json").json()
    assert isinstance(listed, dict), "a document with schema_version, not a bare list"
    assert list(listed) == ["schema_version", "rules"]
    assert listed["schema_version"] == 1
    assert [r["id"] for r in listed["rules"]] == [rule.id for rule in ALL_RULES]


def test_explain_prints_one_rule_s_reason_and_fix() -> None:
    rule = ALL_RULES_BY_ID["restart-probe-on-keep-running"]
    result = run_cli("lint", "--explain", rule.id)
    assert result.exit_code == 0
    assert result.stdout == (
        f"{rule.id} ({rule.severity.value})\n{rule.summary}\n\nWhy: {rule.rationale}\n\n"
        f"Fix: {rule.fix}\n"
    )
    assert run_cli("lint", "--explain", rule.id, "-o", "json").json() == {
        "schema_version": 1,
        "rule": {
            "id": rule.id,
            "severity": rule.severity.value,
            "summary": rule.summary,
            "rationale": rule.rationale,
            "fix": rule.fix,
        },
    }


def test_explain_of_an_unknown_rule_names_the_known_ones() -> None:
    result = run_cli("lint", "--explain", "readiness")
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        "truegreen: no rule 'readiness'. known rules are " + ", ".join(ALL_RULES_BY_ID) + "\n"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--list-rules", "/nonexistent", "manifests/"],
            "--list-rules takes no paths: 2 were given, the first '/nonexistent'. "
            "drop them, or lint them without --list-rules",
        ),
        (
            ["--explain", "probe-cannot-fail", "/nonexistent"],
            "--explain takes no paths: '/nonexistent' was given. "
            "drop them, or lint them without --explain",
        ),
        (
            ["--explain", "probe-cannot-fail", "-"],
            "--explain takes no paths: '-' was given. drop them, or lint them without --explain",
        ),
        (
            ["--list-rules", "--explain", "probe-cannot-fail"],
            "--list-rules and --explain cannot be used together. choose one",
        ),
        (
            ["--list-rules", "--explain", "probe-cannot-fail", str(FIXED)],
            "--list-rules and --explain cannot be used together. choose one",
        ),
    ],
)
def test_list_rules_and_explain_refuse_paths_and_each_other(args: list[str], line: str) -> None:
    """Paths beside --list-rules or --explain, or both flags at once, are bad usage, as a path
    that does not exist is (docs/ci.md) and as cobra refuses flags marked mutually exclusive
    (spf13/cobra flag_groups.go, validateExclusiveFlagGroups: "if any flags in the group ...
    are set none of the others can be"): one line, exit 64, nothing printed as if it worked."""
    result = run_cli("lint", *args)
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == f"truegreen: {line}\n"
    document = run_cli("lint", *args, "-o", "json").json()
    assert document["exit_code"] == 64
    assert document["headline"]["code"] == "bad-usage"
    assert f"{document['headline']['text']}. {document['headline']['remedy']}" == line


# -- text: terminal-safe, wrapped at word boundaries, quiet on a closed pipe -----------------


def test_escape_sequences_from_a_file_never_reach_the_terminal(tmp_path: Path) -> None:
    path = tmp_path / "ansi.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\n"
        'metadata: {name: "a\\e[31mRED\\e]0;title\\a\\u202eevil"}\n'
        "spec: {template: {spec: {containers: "
        '[{name: "c\\e[2J\\nfake", ports: [{containerPort: 80}]}]}}}\n'
    )
    text = run_cli("lint", str(path), "--no-color").stdout
    assert not {"\x1b", "\x07", "\u202e"} & set(text)
    shown = "Deployment/a\\x1b[31mRED\\x1b]0;title\\x07\\u202eevil container c\\x1b[2J\\nfake"
    assert shown in text
    names = {f["name"] for f in run_cli("lint", str(path), "-o", "json").json()["findings"]}
    assert names == {"a\x1b[31mRED\x1b]0;title\x07\u202eevil"}  # JSON stays exact


def _in_a_terminal(columns: int, *args: str) -> str:
    """Run truegreen on a real pseudo-terminal `columns` wide; what the terminal shows."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    process = subprocess.Popen([str(BIN), *args], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    process.wait(timeout=60)
    os.close(leader)
    # Bold and dim stay with --no-color; only the text is compared.
    return re.sub(r"\x1b\[[0-9;]*m", "", shown.decode().replace("\r\n", "\n"))


def test_sixty_columns_wrap_between_words_never_inside_one() -> None:
    shown = _in_a_terminal(60, "lint", str(INCIDENT), "--no-color")
    whole = run_cli("lint", str(INCIDENT), "--no-color").stdout  # a pipe: lines left whole
    assert max(len(line) for line in shown.splitlines()) <= 60
    assert max(len(line) for line in whole.splitlines()) > 60  # so wrapping had work to do
    assert shown.split() == whole.split()  # the same words, none broken


def test_a_closed_pipe_ends_the_run_quietly() -> None:
    """`truegreen lint … | head -1`: the reader is gone before the first write."""
    for output in ("text", "json"):
        reader, writer = os.pipe()
        os.close(reader)
        done = subprocess.run(
            [str(BIN), "lint", str(INCIDENT), "-o", output],
            stdout=writer,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
        os.close(writer)
        assert (done.returncode, done.stderr) == (128 + signal.SIGPIPE, b""), output


# -- kustomize folders: linted as what they build -------------------------------------------

KUBECTL_ON_PATH = shutil.which("kubectl") is not None
needs_kubectl = pytest.mark.skipif(
    not KUBECTL_ON_PATH and not os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"),
    reason="kubectl is not installed",
)
BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: api:1.0
        ports:
        - containerPort: 8443
        readinessProbe:
          httpGet: {path: /readyz, port: 8443}
      - name: worker
        image: api:1.0
        ports:
        - containerPort: 9000
"""
# A strategic-merge patch: a Deployment in shape, but no object of its own (kustomize's
# examples/patchMultipleObjects shape).
PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
      - name: api
        ports:
        - containerPort: 8443
        resources: {limits: {cpu: "1"}}
"""


def _kustomized(root: Path) -> Path:
    """base/ (a Deployment whose `worker` has no readiness probe) and overlay/ patching it and
    renaming it (`namePrefix`: the built object is no longer named as in its source)."""
    (root / "base").mkdir(parents=True)
    (root / "base" / "deployment.yaml").write_text(BASE)
    (root / "base" / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    (root / "overlay").mkdir()
    (root / "overlay" / "patch.yaml").write_text(PATCH)
    (root / "overlay" / "kustomization.yaml").write_text(
        "namePrefix: prod-\nresources: [../base]\npatches:\n- path: patch.yaml\n"
    )
    return root / "overlay"


@needs_kubectl
def test_a_kustomize_folder_is_what_it_builds_located_in_its_source_files(tmp_path: Path) -> None:
    overlay = _kustomized(tmp_path)
    result = run_cli("lint", str(overlay), "-o", "json")
    document = result.json()
    # The patch is no object: only the built Deployment is judged, at its source's lines.
    assert [(f["rule"], f["file"], f["line"], f["container"]) for f in document["findings"]] == [
        ("readiness-missing", str(tmp_path / "base" / "deployment.yaml"), 19, "worker")
    ]
    assert document["objects"] == 1
    assert document["kustomizations"] == [
        {"folder": str(overlay), "built_with": "kubectl kustomize"}
    ]
    text = run_cli("lint", str(overlay), "--no-color").stdout.splitlines()[-1]
    assert text.endswith(f"Kustomize folders built with kubectl kustomize: {overlay}.")
    assert result.exit_code == 2


@needs_kubectl
def test_a_healthy_kustomize_folder_with_patches_exits_0(tmp_path: Path) -> None:
    overlay = _kustomized(tmp_path)
    (tmp_path / "base" / "deployment.yaml").write_text(
        BASE.replace("9000\n", "9000\n        readinessProbe: {tcpSocket: {port: 9000}}\n")
    )
    result = run_cli("lint", str(tmp_path), "-o", "json")
    assert (result.exit_code, result.json()["findings"]) == (0, [])
    # precondition: both folders were built (the base on its own, the overlay over it)
    assert [k["folder"] for k in result.json()["kustomizations"]] == [
        str(tmp_path / "base"),
        str(overlay),
    ]


@needs_kubectl
def test_a_patch_named_alone_is_linted_as_its_kustomization_builds(tmp_path: Path) -> None:
    """pre-commit passes the changed files one by one: a patch is never a whole object."""
    overlay = _kustomized(tmp_path)
    result = run_cli("lint", str(overlay / "patch.yaml"), "-o", "json")
    assert [k["folder"] for k in result.json()["kustomizations"]] == [str(overlay)]
    assert [f["file"] for f in result.json()["findings"]] == [
        str(tmp_path / "base" / "deployment.yaml")
    ]


def _root_kustomization(root: Path) -> None:
    """A kustomization at the root whose build holds a/deploy.yaml (healthy) only; b/ (a plain
    folder) and the root's unlisted.yaml hold a Deployment whose worker has no readiness probe,
    which no kustomization names."""
    for folder in ("a", "b"):
        (root / folder).mkdir()
    healthy = BASE.replace("9000\n", "9000\n        readinessProbe: {tcpSocket: {port: 9000}}\n")
    (root / "a" / "deploy.yaml").write_text(healthy)
    (root / "b" / "deploy.yaml").write_text(BASE)
    (root / "unlisted.yaml").write_text(BASE)
    (root / "kustomization.yaml").write_text("resources:\n- a/deploy.yaml\n")


@pytest.mark.parametrize("named", ["b/deploy.yaml", "unlisted.yaml"])
def test_a_file_no_kustomization_above_it_builds_is_read_as_the_file_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """`kubectl kustomize .` leaves the file out and `kubectl apply -f FILE` applies it: a file
    named on its own stands for a kustomization's build only where that build reads it."""
    _root_kustomization(tmp_path)
    monkeypatch.chdir(tmp_path)  # pre-commit runs at the repository's root, and names files so
    document = run_cli("lint", named, "-o", "json").json()
    assert [(f["rule"], f["file"], f["container"]) for f in document["findings"]] == [
        ("readiness-missing", named, "worker")
    ]
    assert (document["objects"], document["kustomizations"]) == (1, [])


@needs_kubectl
@pytest.mark.parametrize("named", ["a/deploy.yaml", "conf/app.yaml"])
def test_a_file_a_kustomization_above_it_builds_stands_for_that_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """A resource, and a generator's file (`key=path`): the build reads both."""
    _root_kustomization(tmp_path)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "app.yaml").write_text(BASE)  # a ConfigMap's data, no object
    with (tmp_path / "kustomization.yaml").open("a") as kustomization:
        kustomization.write("configMapGenerator:\n- name: app\n  files: [app=conf/app.yaml]\n")
    monkeypatch.chdir(tmp_path)
    result = run_cli("lint", named, "-o", "json")
    assert [k["folder"] for k in result.json()["kustomizations"]] == ["."]
    assert (result.exit_code, result.json()["findings"]) == (0, [])


def test_a_file_under_a_kustomization_that_cannot_be_read_is_never_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether its build reads the file cannot be told: the build is tried, and says why not."""
    _root_kustomization(tmp_path)
    (tmp_path / "kustomization.yaml").write_text("resources: [a/deploy.yaml\n")
    monkeypatch.chdir(tmp_path)
    result = run_cli("lint", "b/deploy.yaml", "-o", "json")
    assert [f["rule"] for f in result.json()["findings"]] == ["kustomize-error"]
    assert result.exit_code == 2


def test_without_kustomize_a_folder_is_its_resources_never_its_patches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    overlay = _kustomized(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    result = run_cli("lint", str(overlay), "-o", "json")
    document = result.json()
    assert document["kustomizations"] == [{"folder": str(overlay), "built_with": "resources only"}]
    assert [(f["rule"], f["container"], Path(f["file"]).name) for f in document["findings"]] == [
        ("readiness-missing", "worker", "deployment.yaml")
    ]
    assert document["objects"] == 1  # the base's Deployment; the patch was not read as one
    summary = run_cli("lint", str(overlay), "--no-color").stdout.splitlines()[-1]
    assert "read without kustomize, from their resources only (no patches applied)" in summary


# A kustomize Component (kustomize.config.k8s.io/v1alpha1): a patch every overlay that lists
# it under `components:` gets, and a resource of its own.
COMPONENT = """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [worker.yaml]
patches:
- target: {kind: Deployment, name: api}
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/resources
      value: {limits: {nvidia.com/gpu: 1}}
"""
GPU_WORKER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-worker
spec:
  selector:
    matchLabels: {app: gpu-worker}
  template:
    metadata:
      labels: {app: gpu-worker}
    spec:
      containers:
      - name: worker
        image: worker:1.0
        ports:
        - containerPort: 9000
"""


def _with_component(root: Path) -> Path:
    """base/ (healthy), components/gpu/ (a Component: a patch and a Deployment whose worker has
    no readiness probe), overlays/prod/ using both."""
    (root / "base").mkdir(parents=True)
    (root / "base" / "deployment.yaml").write_text(
        BASE.replace("9000\n", "9000\n        readinessProbe: {tcpSocket: {port: 9000}}\n")
    )
    (root / "base" / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    component = root / "components" / "gpu"
    component.mkdir(parents=True)
    (component / "kustomization.yaml").write_text(COMPONENT)
    (component / "worker.yaml").write_text(GPU_WORKER)
    (root / "overlays" / "prod").mkdir(parents=True)
    (root / "overlays" / "prod" / "kustomization.yaml").write_text(
        "resources: [../../base]\ncomponents: [../../components/gpu]\n"
    )
    return component


@needs_kubectl
@pytest.mark.parametrize("named", ["folder", "kustomization.yaml"])
def test_a_kustomize_component_is_linted_as_what_it_builds(tmp_path: Path, named: str) -> None:
    """kustomize refuses a Component only where a kustomization lists it under `resources:`
    (kustomize api/krusty/component_test.go TestComponentErrors
    "components-cannot-be-added-to-resources": "expected kind != 'Component'"); alone, or under
    `components:`, it builds. lint's own wrapper must list it where kustomize accepts it."""
    component = _with_component(tmp_path)
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    built = subprocess.run(
        [kubectl, "kustomize", str(component)], capture_output=True, text=True, check=False
    )
    assert (built.returncode, "name: gpu-worker" in built.stdout) == (0, True), (
        "precondition: kubectl kustomize builds the component alone"
    )
    target = component if named == "folder" else component / "kustomization.yaml"
    result = run_cli("lint", str(target), "-o", "json")
    document = result.json()
    assert [(f["rule"], f["file"], f["container"]) for f in document["findings"]] == [
        ("readiness-missing", str(component / "worker.yaml"), "worker")
    ]
    assert document["kustomizations"] == [
        {"folder": str(component), "built_with": "kubectl kustomize"}
    ]


@needs_kubectl
def test_a_tree_with_a_kustomize_component_builds_every_folder(tmp_path: Path) -> None:
    _with_component(tmp_path)
    result = run_cli("lint", str(tmp_path), "-o", "json")
    document = result.json()
    assert {f["rule"] for f in document["findings"]} == {"readiness-missing"}
    assert [k["folder"] for k in document["kustomizations"]] == [
        str(tmp_path / "base"),
        str(tmp_path / "components" / "gpu"),
        str(tmp_path / "overlays" / "prod"),
    ]


PATCH_ONLY_COMPONENT = """\
apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
patches:
- path: gpu.yaml
"""
GPU_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  template:
    spec:
      containers:
      - name: api
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@needs_kubectl
def test_a_component_whose_patch_names_its_object_does_not_build_alone(tmp_path: Path) -> None:
    """docs/ci.md: a strategic-merge patch with no `target:` is applied to the object of the
    patch's own kind and name, which must be there (kustomize api/internal/builtins/
    PatchTransformer.go transformStrategicMerge: `GetById(patch.OrgId())`), so a Component of
    such patches alone does not build, in kubectl as in lint (one kustomize-error, exit 2);
    with a `target:` that selects nothing (`Select`), it builds and patches nothing."""
    component = tmp_path / "gpu"
    component.mkdir()
    (component / "kustomization.yaml").write_text(PATCH_ONLY_COMPONENT)
    (component / "gpu.yaml").write_text(GPU_PATCH)
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    cause = "failed to find unique target for patch Deployment.v1.apps/api.[noNs]"

    def build() -> subprocess.CompletedProcess[str]:
        command = [kubectl, "kustomize", str(component)]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    built = build()
    assert built.returncode == 1
    assert "no resource matches strategic merge patch" in built.stderr
    assert cause in built.stderr
    result = run_cli("lint", str(component), "-o", "json")
    findings = result.json()["findings"]
    assert [f["rule"] for f in findings] == ["kustomize-error"]
    assert findings[0]["message"].rstrip('"').endswith(cause)
    assert result.exit_code == 2

    (component / "kustomization.yaml").write_text(
        PATCH_ONLY_COMPONENT + "  target: {kind: Deployment, name: api}\n"
    )
    assert (build().returncode, build().stdout) == (0, "")
    selected = run_cli("lint", str(component), "-o", "json")
    assert (selected.json()["findings"], selected.json()["objects"]) == ([], 0)


@needs_kubectl
def test_a_kustomization_that_does_not_build_is_one_finding(tmp_path: Path) -> None:
    """kubectl logs its failure through klog (`E1206 … run.go:72] "command failed" err="…"`)
    and kustomize nests its errors, repeating the folder's path, the cause last: quoted from
    its start, a long path (here about 130 characters) pushed the missing file's name past the
    quote's bound. The header is left out and a long error keeps its end."""
    folder = tmp_path / ("overlays-" * 6) / "production"
    folder.mkdir(parents=True)
    (folder / "kustomization.yaml").write_text("resources: [missing.yaml]\n")
    (folder / "other.yaml").write_text(FIXED.read_text())
    result = run_cli("lint", str(folder), "-o", "json")
    ((finding),) = result.json()["findings"]
    assert (finding["rule"], finding["file"]) == (
        "kustomize-error",
        str(folder / "kustomization.yaml"),
    )
    message = finding["message"]
    assert message.startswith("kustomize could not build it: "), message
    assert "run.go" not in message, message
    assert message.endswith("missing.yaml: no such file or directory"), message
    assert len(message) <= len("kustomize could not build it: ") + 500
    assert result.exit_code == 2


def _fake_kubectl(folder: Path, script: str) -> None:
    folder.mkdir()
    tool = folder / "kubectl"
    tool.write_text(f"#!/bin/sh\n{script}\n")
    tool.chmod(0o755)


def test_a_build_that_writes_without_end_is_cut_at_the_size_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources: []\n")
    _fake_kubectl(tmp_path / "bin", "exec yes 'kind: Pod'")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    result = run_cli("lint", str(tmp_path / "app"), "--max-file-size", "1", "-o", "json")
    assert [(f["rule"], f["message"]) for f in result.json()["findings"]] == [
        ("kustomize-error", "kustomize wrote more than 1,048,576 bytes")
    ]
    assert result.exit_code == 2


def test_a_build_that_hangs_is_stopped_at_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the deadline nothing was checked, and nothing was found wrong either: a remote it
    fetches may be slow to answer (kustomize-unchecked, exit 3)."""
    from truegreen.lint.kustomize import lint_folder

    (tmp_path / "kustomization.yaml").write_text("resources: []\n")
    _fake_kubectl(tmp_path / "bin", "exec sleep 600")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    built = lint_folder(str(tmp_path), seconds=0.5)
    assert [(item.rule, item.message) for item in built.items] == [  # type: ignore[union-attr]
        ("kustomize-unchecked", "kustomize took longer than 0.5 s")
    ]


# -- --no-ignores ----------------------------------------------------------------------------


def _waived(tmp_path: Path) -> Path:
    path = tmp_path / "waived.yaml"
    path.write_text(
        INCIDENT.read_text().replace(
            'truegreen.io/keep-running: "runner"',
            'truegreen.io/keep-running: "runner"\n    truegreen.io/ignore: "readiness-missing"',
        )
    )
    return path


def test_no_ignores_makes_an_ignore_annotation_a_finding_that_silences_nothing(
    tmp_path: Path,
) -> None:
    path = _waived(tmp_path)
    honoured = run_cli("lint", str(path), "-o", "json").json()["findings"]
    assert [f["rule"] for f in honoured] == ["restart-probe-on-keep-running"], "precondition"
    refused = run_cli("lint", str(path), "--no-ignores", "-o", "json").json()["findings"]
    assert [(f["rule"], f["severity"]) for f in refused] == [
        ("ignore-forbidden", "error"),
        ("readiness-missing", "error"),
        ("restart-probe-on-keep-running", "error"),
    ]
    assert refused[0]["message"] == (
        "truegreen.io/ignore waives readiness-missing, but this run forbids waivers in manifests "
        "(--no-ignores): the rules still apply."
    )
    config = tmp_path / "lint.yaml"
    config.write_text("no-ignores: true\n")
    by_config = run_cli("lint", str(path), "--config", str(config), "-o", "json").json()
    assert [f["rule"] for f in by_config["findings"]] == [f["rule"] for f in refused]


def test_no_ignores_in_the_config_must_be_true_or_false(tmp_path: Path) -> None:
    config = tmp_path / "lint.yaml"
    config.write_text("no-ignores: sometimes\n")
    result = run_cli("lint", str(INCIDENT), "--config", str(config))
    assert (result.exit_code, result.stderr) == (
        64,
        f"truegreen: lint config {config}: `no-ignores` is true or false\n",
    )


# -- SARIF: Helm lines mapped back exactly, fingerprints, properties --------------------------


def test_a_chart_root_maps_rendered_lines_to_the_template_where_they_are_exact(
    tmp_path: Path,
) -> None:
    chart = tmp_path / "charts" / "training"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: training\nversion: 0.1.0\n")
    deployment = INCIDENT.read_text().split("---\n")[1]
    template = "{{- /* the runner */}}\n" + deployment.replace(
        "name: job-runner\n  namespace", "name: {{ .Release.Name }}\n  namespace", 1
    )
    (chart / "templates" / "deployment.yaml").write_text(template)
    rendered = _helm_output()
    template_line = template.splitlines().index("        - name: runner") + 1
    log = run_cli("lint", "-", "--chart-root", str(chart), "-o", "sarif", stdin=rendered).json()
    jsonschema.validate(log, SARIF_SCHEMA)
    run = log["runs"][0]
    assert [r["locations"][0]["physicalLocation"] for r in run["results"]] == 2 * [
        {
            "artifactLocation": {"uri": str(chart / "templates" / "deployment.yaml")},
            "region": {"startLine": template_line},
        }
    ]
    assert "originalUriBaseIds" not in run  # nothing left on rendered lines
    findings = run_cli("lint", "-", "--chart-root", str(chart), "-o", "json", stdin=rendered)
    assert {(f["line"], f["rendered"]) for f in findings.json()["findings"]} == {
        (template_line, False)
    }
    # A line the template holds twice cannot be placed: it stays a line of the rendered output.
    (chart / "templates" / "deployment.yaml").write_text(template + "        - name: runner\n")
    twice = run_cli("lint", "-", "--chart-root", str(chart), "-o", "json", stdin=rendered)
    assert {(f["line"], f["rendered"]) for f in twice.json()["findings"]} == {(23, True)}


def test_a_chart_root_without_a_chart_is_bad_usage(tmp_path: Path) -> None:
    result = run_cli("lint", "-", "--chart-root", str(tmp_path), stdin=_helm_output())
    assert result.exit_code == 64
    assert result.stderr.startswith(f"truegreen: --chart-root {tmp_path}: cannot read ")


def test_sarif_results_carry_fingerprints_and_the_object_they_are_about(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(INCIDENT.read_text())
    log = run_cli("lint", str(path), "-o", "sarif").json()
    jsonschema.validate(log, SARIF_SCHEMA)
    first, second = log["runs"][0]["results"]
    assert first["properties"] == {
        "kind": "Deployment",
        "namespace": "training",
        "name": "job-runner",
        "container": "runner",
    }
    prints = [r["partialFingerprints"]["truegreenFinding/v1"] for r in (first, second)]
    assert len(set(prints)) == 2
    assert all(len(p) == 32 for p in prints)
    # The same findings two lines lower keep their fingerprints: code scanning keeps the alert.
    path.write_text("# a\n# b\n" + INCIDENT.read_text())
    moved = run_cli("lint", str(path), "-o", "sarif").json()["runs"][0]["results"]
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in moved]
    assert lines == [40, 40], "precondition: the findings moved"
    assert [r["partialFingerprints"]["truegreenFinding/v1"] for r in moved] == prints


TWO_PROBES = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: pytorch
        command: [torchrun, train.py]
        ports: [{containerPort: 8080, name: http}]
        readinessProbe: {tcpSocket: {port: metrics}}
        livenessProbe: {httpGet: {path: /live, port: admin}}
        startupProbe: {tcpSocket: {port: http}}
"""


def test_sarif_fingerprints_tell_apart_findings_on_two_probes_of_one_container(
    tmp_path: Path,
) -> None:
    """SARIF 2.1.0 §3.27.17: partialFingerprints are part of a result's unique identity, and code
    scanning merges results that share them. probe-port-undeclared fires twice on this
    container, once per probe (and port), and restart-probe-on-keep-running once (the probes on
    undeclared names never run, so they restart nothing): three alerts, kept when the lines
    move."""
    path = tmp_path / "job.yaml"
    path.write_text(TWO_PROBES)
    results = run_cli("lint", str(path), "-o", "sarif").json()["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == 2 * ["probe-port-undeclared"] + [
        "restart-probe-on-keep-running"
    ]
    prints = [r["partialFingerprints"]["truegreenFinding/v1"] for r in results]
    assert len(set(prints)) == 3
    path.write_text("# moved\n" + TWO_PROBES)
    moved = run_cli("lint", str(path), "-o", "sarif").json()["runs"][0]["results"]
    assert [r["partialFingerprints"]["truegreenFinding/v1"] for r in moved] == prints


def test_helm_and_other_templates_are_told_apart_on_stdin() -> None:
    argo = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  q: {{args.name}}\n"
    helm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-x\n"
    rules = [
        run_cli("lint", "-", "-o", "json", stdin=t).json()["findings"][0]["rule"]
        for t in (argo, helm)
    ]
    assert rules == ["unrendered-template", "helm-template"]


def test_a_broken_document_leaves_the_file_s_other_documents_linted(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\ndata: {a: [1\n---\n" + INCIDENT.read_text())
    result = run_cli("lint", str(path), "-o", "json")
    assert [(f["rule"], f["line"]) for f in result.json()["findings"]] == [
        ("parse-error", 3),
        ("readiness-missing", 38 + 4),  # the incident's container, four lines down
        ("restart-probe-on-keep-running", 38 + 4),
    ]
    assert result.json()["objects"] == 2


def test_json_files_are_read_the_same_way(tmp_path: Path) -> None:
    """`kubectl get deploy -o json` writes a List; a package.json is no Kubernetes object."""
    deployment = yaml.safe_load(INCIDENT.read_text().split("---\n")[1])
    listed = {"apiVersion": "v1", "kind": "List", "items": [deployment]}
    (tmp_path / "deployments.json").write_text(json.dumps(listed, indent=2))
    (tmp_path / "package.json").write_text('{"name": "ui", "version": "1.0.0"}\n')
    document = run_cli("lint", str(tmp_path), "-o", "json").json()
    assert [(Path(f["file"]).name, f["rule"]) for f in document["findings"]] == [
        ("deployments.json", "readiness-missing"),
        ("deployments.json", "restart-probe-on-keep-running"),
    ]
    assert (document["objects"], document["not_objects"]) == (1, 1)


def test_a_workload_without_its_apiversion_is_refused_not_passed_over(tmp_path: Path) -> None:
    """A Deployment whose `apiVersion:` rendered empty: kubectl refuses it (`apiVersion not
    set`), so lint fails, even under the hook's --allow-empty, and still checks the rest."""
    broken = INCIDENT.read_text().split("---\n")[1].replace("apiVersion: apps/v1", "apiVersion:")
    path = tmp_path / "noapi.yaml"
    path.write_text(broken)
    result = run_cli("lint", str(path), "--allow-empty", "-o", "json")
    assert [(f["rule"], f["line"], f["message"]) for f in result.json()["findings"]] == [
        (
            "parse-error",
            1,
            "this document has no apiVersion: kubectl refuses it (apiVersion not set).",
        )
    ]
    assert result.exit_code == 2
    path.write_text(f"{broken}---\n{FIXED.read_text()}")
    document = run_cli("lint", str(path), "-o", "json").json()
    assert [f["rule"] for f in document["findings"]] == ["parse-error"]
    assert (document["objects"], document["not_objects"]) == (
        2,
        0,
    )  # the fixed Service and Deployment


def test_a_build_that_fails_loudly_is_told_by_its_last_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 kB of noise on stderr, then the error: only the last 64 KiB are kept, and the
    finding gives the last line, cut at 500 characters."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources: []\n")
    noise = "yes noise | head -c 200000 >&2; echo >&2"
    _fake_kubectl(tmp_path / "bin", f"{noise}; echo 'Error: no such base' >&2; exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    result = run_cli("lint", str(tmp_path / "app"), "-o", "json")
    assert [f["message"] for f in result.json()["findings"]] == [
        "kustomize could not build it: Error: no such base"
    ]


def _probe_deployment(name: str, command: list[str]) -> dict[str, Any]:
    container = {
        "name": name,
        "image": "nginx:1.27",
        "readinessProbe": {"exec": {"command": command}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container]},
            },
        },
    }


# Probes lint refuses (probe-cannot-pass: a shell's own command run without a shell), each with
# a login in the shape an operator writes one: an assignment, a secret-named flag, redis-cli's
# own option, a URL's userinfo.
SECRET_PROBES = {
    "pg": ["export", "PGPASSWORD=pg-Secret-4417"],
    "flagged": ["exec", "psql-check", "--db-password", "flag-Secret-8812"],
    "redis": ["exec", "redis-cli", "-a", "redis-Secret-3390", "ping"],
    "url": ["exec", "curl", "-f", "https://deploy:url-Secret-5561@config.example.com/ready"],
}


@pytest.mark.parametrize("output", ["text", "json", "sarif"])
def test_lint_never_prints_a_manifest_s_secret(tmp_path: Path, output: str) -> None:
    """lint's lines land in CI logs: a login a probe's command holds is `<redacted>` there, by
    the policy doctor and snapshot redact what they read with (redaction/text.py)."""
    manifest = tmp_path / "probes.yaml"
    manifest.write_text(
        yaml.safe_dump_all(_probe_deployment(n, c) for n, c in SECRET_PROBES.items())
    )
    result = run_cli("lint", str(manifest), "-o", output)
    assert result.exit_code == 2, "precondition: lint refused the probes"
    printed = result.stdout + result.stderr
    assert printed.count("probe-cannot-pass") >= len(SECRET_PROBES), (
        "precondition: every probe is quoted in a finding"
    )
    leaked = sorted(set(re.findall(r"[a-z]+-Secret-\d{4}", printed)))
    assert leaked == []
    assert "<redacted>" in printed


def test_sarif_fingerprints_tell_apart_two_documents_that_cannot_be_read(tmp_path: Path) -> None:
    """Two documents of one file that kubectl refuses alike have no object to tell them apart:
    their order in the file does, so code scanning keeps two alerts, kept when lines move."""
    path = tmp_path / "two.yaml"
    unnamed = "kind: ConfigMap\nmetadata: {name: a}\n"
    path.write_text(unnamed + "---\n" + unnamed.replace("name: a", "name: b"))
    results = run_cli("lint", str(path), "-o", "sarif").json()["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == 2 * ["parse-error"], "precondition: both refused"
    prints = [r["partialFingerprints"]["truegreenFinding/v1"] for r in results]
    assert len(set(prints)) == 2
    path.write_text("# moved\n" + path.read_text())
    moved = run_cli("lint", str(path), "-o", "sarif").json()["runs"][0]["results"]
    assert [r["partialFingerprints"]["truegreenFinding/v1"] for r in moved] == prints
