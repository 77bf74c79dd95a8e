"""`truegreen lint` through its command-line contract."""

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import run_cli

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


def test_sarif_schema_rejects_a_broken_log() -> None:
    """The schema check itself can fail: a log without `version` is refused."""
    log = run_cli("lint", str(INCIDENT), "-o", "sarif").json()
    del log["version"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SARIF_SCHEMA)


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


def test_broken_file_is_a_finding_and_the_others_are_still_linted(tmp_path: Path) -> None:
    (tmp_path / "a-broken.yaml").write_text("kind: Deployment\nmetadata: {name: x\n")
    (tmp_path / "b.yml").write_text(INCIDENT.read_text())
    (tmp_path / "notes.txt").write_text("not a manifest")
    result = run_cli("lint", str(tmp_path), "-o", "json")
    findings = result.json()["findings"]
    parse = [f for f in findings if f["rule"] == "parse-error"]
    assert [(Path(f["file"]).name, f["line"], f["severity"]) for f in parse] == [
        ("a-broken.yaml", 3, "error")
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
    assert result.exit_code in (0, 2)
    for finding in result.json()["findings"]:
        assert Path(finding["file"]).exists()
