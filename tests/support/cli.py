"""Run the real `truegreen` command in-process, capturing its exit code, stdout and stderr."""

import json
from dataclasses import dataclass
from typing import Any

from click.testing import CliRunner

from truegreen.cli import main


@dataclass(frozen=True)
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(*args: str, stdin: str | None = None) -> CliResult:
    """`truegreen ARGS…` as the console script runs it; exceptions are never swallowed."""
    runner = CliRunner()
    result = runner.invoke(
        main, list(args), input=stdin, catch_exceptions=False, prog_name="truegreen"
    )
    return CliResult(result.exit_code, result.stdout, result.stderr)
