"""The bundled examples that `make demo` runs: each gives its documented verdict."""

import base64
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run_cli
from tests.support.plain_words import assert_plain_report
from tests.support.scenarios import BACKEND_SECRET_VALUE, PULL_SECRET_VALUE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(
    ("example", "exit_code", "code"),
    [
        ("healthy", 0, "ready"),
        ("damaged-pull-credentials", 2, "image-pull.login-damaged"),
        ("unbound-dataset-volume", 2, "storage.volume-unbound"),
        ("held-by-running-job", 0, "capacity.held-by-running-job"),
        ("job-too-large", 2, "capacity.too-large"),
        ("no-permission-for-machines", 3, "capacity.cant-read"),
    ],
)
def test_example_snapshot_verdict(example: str, exit_code: int, code: str) -> None:
    # no flags: the snapshot carries the settings it was taken with
    result = run_cli("doctor", "--snapshot", str(EXAMPLES / "snapshots" / example), "-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (exit_code, code)
    assert_plain_report(report)
    assert "credentials" in report["coverage"]["checked"]


def test_snapshots_hold_no_secret_value() -> None:
    forms = []
    for value in (PULL_SECRET_VALUE, BACKEND_SECRET_VALUE):
        forms += [value, base64.b64encode(value.encode()).decode()]
        forms.append(base64.b64encode(f"robot:{value}".encode()).decode())
    files = list((EXAMPLES / "snapshots").rglob("*.yaml"))
    assert len(files) > 6
    for path in files:
        text = path.read_text()
        for form in forms:
            assert form not in text, f"{path} holds a secret value"
    # the stored logins are still there, by name and key, redacted
    regcred = next(
        (EXAMPLES / "snapshots" / "healthy" / "reads").glob("*-get-secrets-regcred.yaml")
    )
    saved = yaml.safe_load(regcred.read_text())["result"]["object"]["data"][".dockerconfigjson"]
    assert "<redacted>" in base64.b64decode(saved).decode()
