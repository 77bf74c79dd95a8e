"""refresh's text lines: every outcome renders, coloured by what it means for the exit code."""

import pytest

from truegreen.exitcodes import ExitCode
from truegreen.kubectl import Kubectl
from truegreen.markup import plain as plain_text
from truegreen.refresh.plan import ContainerPlan, Decision
from truegreen.refresh.render import ProgressWords, to_text
from truegreen.refresh.report import Outcome, TickReport, WorkloadReport, Write

_COLOURS = {ExitCode.FAILED: {"red"}, ExitCode.UNKNOWN: {"magenta"}}


@pytest.mark.parametrize("outcome", list(Outcome))
def test_every_outcome_renders_in_the_colour_of_its_exit_code(outcome: Outcome) -> None:
    report = TickReport((WorkloadReport("train", "runner", outcome, "why"),))
    lines = to_text(report, verbose=False)
    colour = lines[0].partition("]")[0].lstrip("[")
    assert lines[0] == f"[{colour}]{outcome.value:<18}[/] train/runner: why"
    assert colour in _COLOURS.get(report.exit_code, {"green", "yellow", "cyan"})
    assert lines[-1] == "1 workload, 0 distinct images, 0 registry requests."


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


def test_counts_are_plural_only_when_not_one() -> None:
    one = TickReport(
        (WorkloadReport("train", "a", Outcome.CONVERGED, "why"),),
        registry_requests=1,
        distinct_references=1,
    )
    assert to_text(one, verbose=False)[-1] == "1 workload, 1 distinct image, 1 registry request."
    two = TickReport(
        tuple(WorkloadReport("train", n, Outcome.CONVERGED, "why") for n in "ab"),
        registry_requests=0,
        distinct_references=2,
    )
    assert to_text(two, verbose=False)[-1] == "2 workloads, 2 distinct images, 0 registry requests."


def test_nothing_opted_in_says_how_to_opt_in() -> None:
    lines = to_text(TickReport(()), verbose=False, kubectl=Kubectl(namespace="train"))
    assert lines == [
        "No workload here is opted in to refresh (selector truegreen.io/refresh=enabled). Opt "
        "one in with `kubectl -n train label deployment NAME truegreen.io/refresh=enabled`.",
        "0 workloads, 0 distinct images, 0 registry requests.",
    ]


def test_a_failed_rollout_ends_with_what_to_do() -> None:
    report = TickReport(
        (
            WorkloadReport(
                "train", "api", Outcome.ROLLOUT_FAILED, "the rollout exceeded its progress deadline"
            ),
        )
    )
    lines = to_text(report, verbose=False, kubectl=Kubectl(context="prod"))
    assert lines[1] == (
        "    → See why with `kubectl --context prod -n train describe deployment/api`; the next "
        "run tries again, or go back to the version before with "
        "`kubectl --context prod -n train rollout undo deployment/api`."
    )


def _pinned(write_applied: bool) -> WorkloadReport:
    plan = ContainerPlan(
        container="sidecar",
        image="r/sidecar:2.0@sha256:" + "a" * 64,
        tracked_tag="2.0",
        newest="sha256:" + "b" * 64,
        recorded=None,
        running=(),
        decision=Decision.PINNED,
        reason="pinned by the operator",
    )
    write = Write(
        "stale-pins",
        {"truegreen.io/stale-pin.sidecar": "2.0 sha256:" + "b" * 64},
        applied=write_applied,
    )
    return WorkloadReport("train", "api", Outcome.CONVERGED, "up to date", (plan,), (write,))


@pytest.mark.parametrize("applied", [True, False])
def test_a_stale_pin_is_said_without_verbose(applied: bool) -> None:
    lines = to_text(TickReport((_pinned(applied),)), verbose=False)
    assert lines[1] == (
        "    [yellow]![/] sidecar stays on its pinned image while its tag 2.0 has moved on to "
        "sha256:" + "b" * 64
    )


def test_verbose_writes_are_lines_not_a_python_dict() -> None:
    lines = to_text(TickReport((_pinned(False),)), verbose=True)
    text = "\n".join(lines)
    assert "{'" not in text
    assert "'}" not in text
    assert "    write stale-pins: not written" in lines
    assert "      truegreen.io/stale-pin.sidecar=2.0 sha256:" + "b" * 64 in lines


def test_text_wraps_at_word_boundaries_and_never_inside_a_command() -> None:
    report = TickReport(
        (WorkloadReport("train", "api", Outcome.ROLLOUT_FAILED, "the registry answered slowly"),)
    )
    lines = to_text(report, verbose=False, width=60)
    shown = [plain_text(line) for line in lines]
    assert all(len(line) <= 60 for line in shown if "`" not in line), shown
    assert len(shown) > 3, "precondition: the remedy needed wrapping"
    words = " ".join(lines).split()
    assert "registry" in words, "a word is never broken"
    commands = [line for line in lines if "`" in line]
    assert all(line.count("`") % 2 == 0 for line in commands), "a command stays on one line"


def test_progress_is_told_in_plain_words() -> None:
    told: list[str] = []
    words = ProgressWords(told.append)
    words.looking_up(2)
    words.looked_up()
    words.restarting("train/api")
    words.waiting("train/api", "1 of 3 copies updated")
    assert told == [
        "Looking up image digests: 0 of 2",
        "Looking up image digests: 1 of 2",
        "Restarting train/api",
        "Waiting for train/api: 1 of 3 copies updated",
    ]
