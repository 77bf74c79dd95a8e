"""Scenario fixtures: a fake API server loaded with a training environment."""

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.plain_words import assert_plain_report
from tests.support.scenarios import BACKEND_SECRET_VALUE, PULL_SECRET_VALUE, SCENARIOS, Obj

CREDENTIALS = ("--credentials-secret", "backend-credentials:username,password")


class Doctor:
    """Runs `truegreen doctor` against the fake server, live or from a snapshot of it."""

    def __init__(self, server: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> None:
        self.server = server
        self.kubeconfig = kubeconfig
        self.tmp_path = tmp_path
        self.now = datetime.now(UTC)

    def load(self, scenario: str | Callable[[datetime], list[Obj]]) -> list[Obj]:
        build = SCENARIOS[scenario] if isinstance(scenario, str) else scenario
        objects = build(self.now)
        self.server.add(*objects)
        return objects

    def live(self, *args: str) -> CliResult:
        return _checked(
            run_cli(
                "doctor",
                "--kubeconfig",
                str(self.kubeconfig),
                "--request-timeout",
                "2",
                *CREDENTIALS,
                *args,
            ),
            args,
        )

    def snapshot(self, name: str = "snap") -> Path:
        directory = self.tmp_path / name
        result = run_cli(
            "snapshot", "--kubeconfig", str(self.kubeconfig), *CREDENTIALS, "-o", str(directory)
        )
        assert result.exit_code == 0, result.stderr
        return directory

    def offline(self, directory: Path, *args: str) -> CliResult:
        return _checked(run_cli("doctor", "--snapshot", str(directory), *CREDENTIALS, *args), args)


def _checked(result: CliResult, args: tuple[str, ...]) -> CliResult:
    """Every JSON report a scenario produces is checked for jargon and secret values."""
    for secret in (PULL_SECRET_VALUE, BACKEND_SECRET_VALUE):
        assert secret not in result.stdout + result.stderr, "a secret value reached the output"
    if "json" in args:
        assert_plain_report(result.json())
    return result


@pytest.fixture
def doctor(fake_api: FakeApiServer, kubeconfig: Path, tmp_path: Path) -> Doctor:
    return Doctor(fake_api, kubeconfig, tmp_path)
