"""The command line's own contract: help on every flag, usage errors in one line."""

import click
import pytest

from tests.support.cli import run_cli
from truegreen.cli import main

COMMANDS = sorted(main.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_has_help(name: str) -> None:
    command = main.commands[name]
    options = [p for p in command.params if isinstance(p, click.Option)]
    assert options, "precondition: the command has options"
    bare = [p.opts[0] for p in options if not (p.help or "").strip()]
    assert bare == [], f"truegreen {name}: options without help: {bare}"


@pytest.mark.parametrize(
    ("args", "first", "command_path"),
    [
        (["doctor", "--bogus"], "truegreen: No such option '--bogus'.", "truegreen doctor"),
        (
            ["doctor", "-o", "yaml"],
            "truegreen: Invalid value for '-o' / '--output': 'yaml' is not one of 'text', 'json'.",
            "truegreen doctor",
        ),
        (["frobnicate"], "truegreen: No such command 'frobnicate'.", "truegreen"),
        (
            ["refresh", "--max-attempts", "0"],
            "truegreen: Invalid value for '--max-attempts': 0 is not in the range x>=1.",
            "truegreen refresh",
        ),
    ],
)
def test_a_usage_error_is_one_line_and_where_to_look(
    args: list[str], first: str, command_path: str
) -> None:
    result = run_cli(*args)
    assert result.exit_code == 64
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith(first), lines
    assert lines[1:] == [f"Try '{command_path} --help'."]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["doctor", "-o", "json", "--frobnicate"], "No such option '--frobnicate'."),
        (["doctor", "--frobnicate", "--output=json"], "No such option '--frobnicate'."),
        (
            ["refresh", "-ojson", "--mode", "bogus"],
            "Invalid value for '--mode': 'bogus' is not one of 'restart', 'pin'.",
        ),
    ],
)
def test_a_usage_error_with_json_is_still_one_json_document(args: list[str], text: str) -> None:
    result = run_cli(*args)
    assert result.exit_code == 64
    document = result.json()
    assert document["exit_code"] == 64
    said = document["headline"] if args[0] == "doctor" else document["error"]
    assert said["text"] == text
    assert said["remedy"] == f"See `truegreen {args[0]} --help`."
    assert result.stderr.splitlines()[1:] == [f"Try 'truegreen {args[0]} --help'."]
