"""doctor's text at a terminal's width: wrapped at word boundaries, commands kept whole."""

from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.present.report import to_text
from truegreen.doctor.rollup import roll_up
from truegreen.markup import plain as plain_text

COMMAND = "`kubectl -n train uncordon gpu-node-7`"


def _report() -> list[Finding]:
    return [
        Finding(
            CheckId.CAPACITY,
            Status.FAIL,
            Basis.MEASURED,
            "capacity.no-room",
            "No machine has room for a training job: the only graphics card is held by the "
            "notebook 'alice-notebook'.",
            f"Stop the notebook, or let work run on the machine set aside again with {COMMAND}.",
            ("node gpu-node-7 is cordoned",),
        )
    ]


def _plain(lines: list[str]) -> list[str]:
    return [plain_text(line) for line in lines]


def test_without_a_width_each_statement_is_one_line() -> None:
    lines = _plain(to_text(roll_up(_report(), [CheckId.CAPACITY]), verbose=False))
    assert lines[0].startswith("✗ NOT READY  No machine has room")
    assert lines[0].endswith("'alice-notebook'.")
    assert lines[1] == f"  → {_report()[0].remedy}"


def test_at_sixty_columns_no_word_breaks_and_the_command_stays_whole() -> None:
    report = roll_up(_report(), [CheckId.CAPACITY])
    lines = _plain(to_text(report, verbose=True, width=60))
    assert all(len(line) <= 60 for line in lines if "`" not in line), lines
    assert any(COMMAND in line for line in lines), "the command is on one line"
    shown_words = " ".join(lines).split()
    for word in ("notebook", "graphics", "'alice-notebook'."):
        assert word in shown_words, f"{word!r} was broken across lines"
    assert lines[1:5] == [
        "  only graphics card is held by the notebook",
        "  'alice-notebook'.",
        "  → Stop the notebook, or let work run on the machine set",
        f"    aside again with {COMMAND}.",
    ], "wrapped lines are indented under their first"


def test_the_checks_table_is_as_wide_as_its_entries_and_wraps_only_when_it_must() -> None:
    report = roll_up(_report(), [CheckId.CAPACITY])
    assert _plain(to_text(report, verbose=True, width=60))[-1] == (
        "  ✗ capacity  capacity.no-room  measured"
    )
    narrow = _plain(to_text(report, verbose=True, width=30))
    assert narrow[-2:] == ["  ✗ capacity capacity.no-room", "      measured"]
