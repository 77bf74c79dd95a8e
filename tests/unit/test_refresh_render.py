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
