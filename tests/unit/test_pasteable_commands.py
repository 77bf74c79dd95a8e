"""A command to paste is never split, at any width: every headline and remedy the golden file
holds, lint's messages and fixes, and doctor's report, wrapped to 40, 60 and 80 columns, keep
each command in backticks whole on one line (the README's promise)."""

import re
from pathlib import Path

import pytest

from truegreen.lint.reports import to_text
from truegreen.lint.rules import ALL_RULES
from truegreen.lint.run import LintFinding, LintResult
from truegreen.wrapping import wrap

ROOT = Path(__file__).parents[2]
GOLDEN = ROOT / "tests" / "golden" / "headlines.txt"
WIDTHS = (40, 60, 80)
# What a placeholder stands for: the longest thing each is filled with, a command where one goes.
COMMAND = "`kubectl --kubeconfig /home/operator/.kube/prod -n training describe pvc datasets`"


def _split_commands(lines: list[str]) -> list[str]:
    """Lines where a command in backticks starts or ends but does not do both."""
    return [line for line in lines if line.count("`") % 2]


def _golden_sentences() -> list[str]:
    said = [
        re.sub(r"<[a-z_]+_>", COMMAND, line.split(":", 1)[1].strip())
        for line in GOLDEN.read_text().splitlines()
        if line.startswith(("  headline:", "  remedy:"))
    ]
    return [s for s in said if s]


def test_the_golden_file_gives_sentences_with_commands() -> None:
    """Precondition: there are sentences to wrap, and commands in them."""
    sentences = _golden_sentences()
    assert len(sentences) > 100
    assert sum("`" in s for s in sentences) > 50


@pytest.mark.parametrize("width", WIDTHS)
def test_no_golden_sentence_splits_a_command(width: int) -> None:
    split = {
        sentence: lines
        for sentence in _golden_sentences()
        if _split_commands(lines := wrap(sentence, width, first=4, indent=4))
    }
    assert split == {}


@pytest.mark.parametrize("width", WIDTHS)
def test_lint_never_splits_a_command_in_a_message_or_a_fix(width: int) -> None:
    findings = tuple(
        LintFinding(
            rule.id,
            rule.severity,
            "chart.yaml",
            3,
            "Deployment",
            "train",
            "api",
            "c",
            f"{rule.summary} (see `truegreen lint --explain {rule.id}`)",
            rule.fix,
        )
        for rule in ALL_RULES
    )
    assert any("`" in rule.fix for rule in ALL_RULES), "precondition: a fix names a command"
    result = LintResult(files=("chart.yaml",), objects=1, findings=findings)
    lines = [re.sub(r"\[/?[a-z ]*\]", "", line) for line in to_text(result, width)]
    assert _split_commands(lines) == []


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "snapshot", sorted(p.name for p in (ROOT / "examples" / "snapshots").iterdir())
)
def test_doctor_never_splits_a_command_in_its_report(width: int, snapshot: str) -> None:
    from truegreen.cluster.settings import ConnectionSettings
    from truegreen.doctor.command.request import DoctorRequest, run_doctor
    from truegreen.doctor.present.report import to_text as doctor_text

    request = DoctorRequest(ConnectionSettings(), ROOT / "examples" / "snapshots" / snapshot)
    lines = doctor_text(run_doctor(request), verbose=True, width=width)
    assert _split_commands([re.sub(r"\[/?[a-z ]*\]", "", line) for line in lines]) == []


def test_a_backtick_without_a_partner_opens_no_command() -> None:
    """Text from a file may hold one backtick: the words after it still wrap."""
    assert wrap("see ` one two three four", 10) == ["see ` one", "two three", "four"]
    assert wrap("run `a b c d` now", 6) == ["run", "`a b c d`", "now"]
