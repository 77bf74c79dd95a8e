"""refresh's text lines: every outcome renders, coloured by what it means for the exit code."""

import pytest

from truegreen.exitcodes import ExitCode
from truegreen.refresh.render import to_text
from truegreen.refresh.report import Outcome, TickReport, WorkloadReport

_COLOURS = {ExitCode.FAILED: {"red"}, ExitCode.UNKNOWN: {"magenta"}}


@pytest.mark.parametrize("outcome", list(Outcome))
def test_every_outcome_renders_in_the_colour_of_its_exit_code(outcome: Outcome) -> None:
    report = TickReport((WorkloadReport("train", "runner", outcome, "why"),))
    lines = to_text(report, verbose=False)
    colour = lines[0].partition("]")[0].lstrip("[")
    assert lines[0] == f"[{colour}]{outcome.value:<18}[/] train/runner: why"
    assert colour in _COLOURS.get(report.exit_code, {"green", "yellow", "cyan"})
    assert lines[1] == "1 workloads, 0 distinct images, 0 registry requests."


def test_text_from_outside_is_shown_never_obeyed() -> None:
    """Control characters, bidirectional overrides and rich markup in names and reasons from
    a cluster or a registry are printed as visible text."""
    report = TickReport(
        (
            WorkloadReport(
                "ns\x1b[2J",
                "app\u202eexe.txt",
                Outcome.COULD_NOT_CHECK,
                "[bold red]registry said\r\nok\x9b",
            ),
        ),
        cant_read=("list deployments: \x07bell",),
    )
    lines = to_text(report, verbose=False)
    assert lines[:2] == [
        "[magenta]could not read:[/] list deployments: \\x07bell",
        "[magenta]could-not-check   [/] ns\\x1b[2J/app\\u202eexe.txt: "
        "\\[bold red]registry said\\r\\nok\\x9b",
    ]


def test_restarted_by_other_is_a_good_outcome() -> None:
    report = TickReport((WorkloadReport("train", "runner", Outcome.RESTARTED_BY_OTHER, "why"),))
    assert report.exit_code == ExitCode.GOOD
