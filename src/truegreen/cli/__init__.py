"""The command line: parse arguments, call one function per command, render, exit.

Nothing below this package prints or exits; expected errors arrive here as TruegreenError and
leave as one plain line on stderr. The parser is the standard library's argparse, held to
click's manners (no abbreviations, one-line usage errors, exit 64) without click's cost: click
alone costs about 58 M instructions of start-up, argparse about 8.5 M.

This module holds `main` and the dispatch to one command; `parser` the argparse machinery, the
options commands share and the list of commands; `output` what a run prints and how it ends;
one module per command (`doctor`, `snapshot`, `lint`, `refresh`, `monitor`) its options and its
thin body, loaded only when that command runs; `completion` the shells' completion, loaded only
when asked. What a command needs below the command line is imported inside its body, after the
parse: `truegreen lint` never loads the Kubernetes client (tests/e2e/test_imports.py).
"""

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from truegreen.cli.output import (
    FAILURE_DOCUMENTS,
    OutputLostError,
    Terminated,
    emit_json,
    guard_stdout,
    output_lost,
    quiet_after_broken_pipe,
    say,
    see_help,
    stopped_by,
    terminate_on_signals,
)
from truegreen.cli.parser import (
    COMMANDS,
    ParseError,
    command_parser,
    did_you_mean,
    group_parser,
    no_such_option,
    output_asked,
    parse,
    registered,
)
from truegreen.exitcodes import ExitCode

if TYPE_CHECKING:
    from truegreen.failure import Failure

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """`truegreen ARGV…` (by default the process's own arguments): parse, run one command,
    exit with its code. With `_TRUEGREEN_COMPLETE` set, answer the shell's completion instead."""
    words = list(sys.argv[1:] if argv is None else argv)
    instruction = os.environ.get("_TRUEGREEN_COMPLETE")
    if instruction:
        from truegreen.cli.completion import complete

        answer = complete(instruction, group_parser(), command_parser)
        sys.stdout.write(answer.stdout)
        if answer.problem:
            print(f"truegreen: {answer.problem}", file=sys.stderr)
        sys.exit(answer.exit_code)
    terminate_on_signals()
    guard_stdout()
    try:
        try:
            _run(words)
        finally:
            sys.stdout.flush()  # a closed pipe or a full disk surfaces here, not at exit
    except BrokenPipeError:
        quiet_after_broken_pipe()
    except OutputLostError as error:
        # Writing stdout failed where no command could catch it: a usage error's document,
        # or the flush at the end.
        output_lost(error)


def _run(words: list[str]) -> None:
    """One command, its usage errors and interruptions said as every command says them."""
    try:
        _dispatch(words)
    except SystemExit as done:
        # --watch's rich Live exits on a closed pipe by itself.
        if isinstance(done.__context__, BrokenPipeError):
            quiet_after_broken_pipe()
        raise
    except ParseError as error:
        _show_usage_error(error, words)
        sys.exit(ExitCode.USAGE)
    except (KeyboardInterrupt, Terminated) as stopped:  # before a command had started
        from truegreen.failure import Failure

        code = stopped_by(stopped)
        say(f"\ntruegreen: {Failure.interrupted(code).line()}")
        sys.exit(code)


def _dispatch(words: list[str]) -> None:
    if not words:
        # No command: the list of them, on stderr as for any other usage error.
        group_parser().print_help(sys.stderr)
        sys.exit(ExitCode.USAGE)
    name = words[0]
    if name.startswith("-") and name != "-":
        group = group_parser()
        _, extras = group.parse_known_args(words)  # -h and --version print and exit here
        unknown = [word for word in extras if word.startswith("-") and word != "-"]
        raise ParseError(no_such_option(unknown[0] if unknown else name, group), None)
    if name not in COMMANDS:
        raise ParseError(f"no such command {name!r}{did_you_mean(name, list(COMMANDS))}", None)
    parser = command_parser(name)
    _, run = registered(name)
    run(**parse(parser, words[1:]))


def _usage_failure(error: ParseError) -> "Failure":
    """A command line that cannot be parsed, as the failure every command reports."""
    from truegreen.failure import Failure

    return Failure(ExitCode.USAGE, "bad-usage", _house_style(error.what), see_help(error.command))


def _show_usage_error(error: ParseError, argv: list[str]) -> None:
    """One line saying what is wrong and where to look, as every other error is said; where
    the command line asks for JSON output as the parser reads it, its JSON document on stdout
    too."""
    failure = _usage_failure(error)
    document = FAILURE_DOCUMENTS.get(error.command or "")
    if document is not None and _json_asked(error.command or "", argv[1:]):
        emit_json(document(failure))
    print(f"truegreen: {failure.line()}", file=sys.stderr)


def _json_asked(command: str, words: list[str]) -> bool:
    return output_asked(command_parser(command), words) == "json"


def _house_style(text: str) -> str:
    """argparse's and click's sentences as truegreen's errors read: one line, starting in
    lower case, no full stop (`No such option '-x'.` -> `no such option '-x'`)."""
    line = _one_line(text).removesuffix(".")
    return line[:1].lower() + line[1:]


def _one_line(text: str) -> str:
    return " ".join(text.split())
