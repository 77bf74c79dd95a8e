"""deploy/monitor's Prometheus rules: the plain rules file and the PrometheusRule hold the same
groups, promtool accepts them, and promtool's own rule engine runs their unit test
(deploy/monitor/prometheus/truegreen-rules.test.yaml), in which every rule is evaluated and
every alert is seen firing. Under CI a missing promtool fails these tests."""

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_deploy_monitor import _kustomize
from tests.support.monitoring import promtool_binary

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "monitor" / "prometheus" / "truegreen-rules.yaml"
RULE_TESTS = RULES.with_name("truegreen-rules.test.yaml")


def _groups() -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = yaml.safe_load(RULES.read_text())["groups"]
    return groups


def _names(kind: str) -> set[str]:
    return {r[kind] for g in _groups() for r in g["rules"] if kind in r}


@pytest.fixture
def promtool() -> str:
    found = promtool_binary()
    if found is None:
        pytest.skip("promtool is not installed (Debian package prometheus)")
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), capture_output=True, text=True, check=False, timeout=120, cwd=RULES.parent
    )


def test_the_prometheus_rule_holds_the_plain_rules_files_groups() -> None:
    (rule,) = [
        d
        for d in _kustomize(ROOT / "deploy/monitor/prometheus-operator")
        if d["kind"] == "PrometheusRule"
    ]
    assert rule["spec"]["groups"] == _groups()


def test_promtool_accepts_every_rule(promtool: str) -> None:
    result = _run(promtool, "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    count = len(_names("alert")) + len(_names("record"))
    assert (count, f"SUCCESS: {count} rules found") == (
        12,
        re.findall(r"SUCCESS: .*", result.stdout)[0],
    )


def test_the_rule_tests_pass_in_promtool(promtool: str) -> None:
    result = _run(promtool, "test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_is_seen_firing_and_every_recording_rule_is_evaluated() -> None:
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    fired = {
        t["alertname"] for case in tests for t in case.get("alert_rule_test", []) if t["exp_alerts"]
    }
    quiet = {
        t["alertname"]
        for case in tests
        for t in case.get("alert_rule_test", [])
        if not t["exp_alerts"]
    }
    evaluated = {
        name
        for case in tests
        for t in case.get("promql_expr_test", [])
        if t["exp_samples"]
        for name in re.findall(r"[a-z_]+:[a-z_]+(?::[a-z_]+)?", t["expr"])
    }
    assert _names("alert") - fired == set(), "alerts never seen firing"
    assert _names("alert") - quiet == set(), "alerts never seen holding back"
    assert _names("record") - evaluated == set(), "recording rules never evaluated"
