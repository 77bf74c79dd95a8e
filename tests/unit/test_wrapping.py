"""Text wrapped to a terminal: at word boundaries, a command in backticks never split."""

from truegreen.wrapping import words, wrap

REMEDY = (
    "Let the environment pull from the registry: "
    "`kubectl -n train create secret docker-registry regcred --docker-server=registry.example.com` "
    "then run doctor again."
)


def test_without_a_width_the_text_is_one_line() -> None:
    assert wrap(REMEDY, None) == [REMEDY]


def test_sixty_columns_never_breaks_a_word() -> None:
    lines = wrap(REMEDY, 60)
    assert len(lines) > 1, "precondition: the text is wider than 60 columns"
    assert " ".join(line.strip() for line in lines).split() == REMEDY.split()
    assert all(len(line) <= 60 for line in lines if "`" not in line), lines


def test_a_backticked_command_is_one_word_on_one_line() -> None:
    command = (
        "`kubectl -n train create secret docker-registry regcred "
        "--docker-server=registry.example.com`"
    )
    assert command in list(words(REMEDY))
    assert command in wrap(REMEDY, 60)


def test_the_first_line_leaves_room_for_its_prefix_and_later_lines_are_indented() -> None:
    assert wrap("one two three four", 10, first=4, indent=2) == [
        "one",
        "  two",
        "  three",
        "  four",
    ]
    assert wrap("one two three four", 10) == ["one two", "three four"]


def test_a_word_longer_than_the_width_overflows_rather_than_being_cut() -> None:
    long = "x" * 30
    assert wrap(f"a {long} b", 10) == ["a", long, "b"]
