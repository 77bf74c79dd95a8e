"""The command line: parse arguments, call one function per command, render, exit.

Nothing below this module prints or exits; expected errors arrive here as TruegreenError
and leave as one plain line on stderr. The parser is the standard library's argparse, held to
click's manners (no abbreviations, one-line usage errors, exit 64) without click's cost: click
alone costs about 58 M instructions of start-up, argparse about 8.5 M.
"""

import argparse
import contextlib
import functools
import gc
import itertools
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

from truegreen import __version__
from truegreen.exitcodes import ExitCode

if TYPE_CHECKING:
    from truegreen.cluster.settings import ActAs
    from truegreen.console import Consoles
    from truegreen.failure import Failure

F = TypeVar("F", bound=Callable[..., Any])
_Number = TypeVar("_Number", int, float)


FailureDocument = Callable[["Failure"], object]
"""A command's JSON document of a run that failed before it had a result (truegreen.failure)."""

Arguments = Callable[[argparse.ArgumentParser], None]
"""Adds one command's options (and arguments) to its parser."""

COMMANDS: dict[str, tuple[Arguments, Callable[..., None]]] = {}
"""Every command by name: what adds its arguments, and the function that runs it."""

_ABOUT = """Tell the truth about a Kubernetes training environment.

Exit codes: 0 measured good, 2 measured failure, 3 could not check, 1 truegreen broke,
64 bad usage."""


def _reporting_errors(failure_json: FailureDocument) -> Callable[[F], F]:
    """Turn expected errors into one line and their exit code; tracebacks only with --debug.
    With `-o json`, stdout still gets one JSON document saying why (truegreen.failure)."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from truegreen.errors import TruegreenError

            debug = bool(kwargs.get("debug"))
            try:
                return command(*args, **kwargs)
            except TruegreenError as error:
                if debug:
                    _print_traceback()
                failure = _failure_of(error, command.__name__)
                _fail(failure, failure_json, kwargs.get("output"), error.line())
            except BrokenPipeError:
                _quiet_after_broken_pipe()  # the reader went away (`| head -1`)
            except Exception as error:  # noqa: BLE001 - a bug still exits 1 with one line
                if debug:
                    _print_traceback()
                from truegreen.failure import Failure

                _fail(Failure.internal(error), failure_json, kwargs.get("output"))

        return wrapper  # type: ignore[return-value]

    return decorate


def _failure_of(error: Any, command: str) -> "Failure":
    """The failure an expected error describes; in JSON, a usage error without advice of its
    own points at the command's help, so that every document says what to do."""
    from truegreen.failure import Failure

    failure = Failure.of(error)
    if not failure.remedy and failure.exit_code == ExitCode.USAGE:
        return Failure(failure.exit_code, failure.code, failure.text, _see_help(command))
    return failure


def _fail(
    failure: "Failure", failure_json: FailureDocument, output: object, line: str = ""
) -> NoReturn:
    """End the run: its JSON document on stdout when JSON was asked for, one line on stderr
    (`line`, the error's own, else the failure's)."""
    if output == "json":
        _emit_json(failure_json(failure))
    print(f"truegreen: {line or failure.line()}", file=sys.stderr)
    sys.exit(failure.exit_code)


def _see_help(command: str | None) -> str:
    return f"see `truegreen {command} --help`" if command else "see `truegreen --help`"


def _command(arguments: Arguments) -> Callable[[F], F]:
    """Register a command under its function's name; its docstring is its help."""

    def register(run: F) -> F:
        COMMANDS[run.__name__] = (arguments, run)
        return run

    return register


class _ParseError(Exception):
    """A command line that cannot be parsed: what is wrong, and the command it was for."""

    def __init__(self, what: str, command: str | None) -> None:
        super().__init__(what)
        self.what = what
        self.command = command


class _Parser(argparse.ArgumentParser):
    """argparse's parser with click's manners: a usage error is raised for `main` to print in
    one line and exit 64, never argparse's usage block and exit 2."""

    command: str | None = None

    def error(self, message: str) -> NoReturn:
        """Every parse error argparse finds ends here (it would print usage and exit 2)."""
        raise _ParseError(message, self.command)


@functools.cache
def _help_width() -> int:
    """click's help width: the terminal's columns less 2, between 50 and 78. Read here, not by
    shutil.get_terminal_size: argparse builds a formatter for every option it adds, and
    shutil would load zlib, bz2 and lzma on the way."""
    try:
        columns = int(os.environ.get("COLUMNS") or os.get_terminal_size().columns)
    except (ValueError, OSError):
        columns = 80
    return max(min(columns, 80) - 2, 50)


class _HelpFormatter(argparse.HelpFormatter):
    """Help laid out as click laid it out: `-o, --output [text|json]`, the default and the
    lower bound after the help text, the description's paragraphs kept."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=34, width=_help_width())

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):  # the commands, with no heading line
            return "".join(map(self._format_action, action._get_subactions()))
        return super()._format_action(action)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        names = ", ".join(action.option_strings)
        if not names:
            return str(action.metavar or action.dest)
        if action.nargs == 0:
            return names
        return f"{names} {action.metavar or 'TEXT'}"

    def _get_help_string(self, action: argparse.Action) -> str | None:
        shown = []
        default = action.default
        if isinstance(default, str | int | float) and default not in (False, argparse.SUPPRESS):
            shown.append("default: %(default)s")
        if isinstance(action.type, _AtLeast):
            shown.append(f"x>={action.type.minimum}")
        return f"{action.help}  [{'; '.join(shown)}]" if shown else action.help

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        # Unbroken at hyphens: truegreen-snapshot-NAMESPACE-TIME.tar.gz stays one name.
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            "\n".join(indent + line for line in self._split_lines(paragraph, width - len(indent)))
            for paragraph in paragraphs
        )


def _new_parser(prog: str, usage: str, description: str) -> _Parser:
    return _Parser(
        prog=prog,
        usage=usage,
        description=description,
        formatter_class=_HelpFormatter,
        add_help=False,
        allow_abbrev=False,  # click never took `--out` for `--output`
    )


class PathArgument:
    """click.Path(path_type=Path) with its file_okay/dir_okay rules: an existing folder where a
    file is wanted (or a file where a folder is) is refused; a missing path is taken."""

    def __init__(self, *, file_okay: bool = True, dir_okay: bool = True) -> None:
        self.file_okay = file_okay
        self.dir_okay = dir_okay

    def __call__(self, text: str) -> Path:
        """The path, or ArgumentTypeError saying why it cannot be one."""
        try:
            mode = os.stat(text).st_mode
        except OSError:
            return Path(text)
        if not self.file_okay and stat.S_ISREG(mode):
            raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
        if not self.dir_okay and stat.S_ISDIR(mode):
            raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
        return Path(text)


_FILE = PathArgument(dir_okay=False)


class _AtLeast(Generic[_Number]):
    """click's IntRange(min=…) and FloatRange(min=…): a number no smaller than `minimum`."""

    def __init__(self, number: type[_Number], minimum: _Number) -> None:
        self.number: type[_Number] = number
        self.minimum: _Number = minimum

    def __call__(self, text: str) -> _Number:
        """The number, or ArgumentTypeError in click's words."""
        try:
            value = self.number(text)
        except ValueError:
            kind = "integer" if self.number is int else "float"
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {kind}") from None
        if not value >= self.minimum:  # `not >=`: NaN is in no range
            raise argparse.ArgumentTypeError(f"{value} is not in the range x>={self.minimum}")
        return value


def _choice(
    parser: argparse.ArgumentParser, *flags: str, choices: tuple[str, ...], help: str
) -> None:
    """An option taking one of `choices`, the first by default, shown as click showed it."""
    parser.add_argument(
        *flags, choices=choices, default=choices[0], metavar=f"[{'|'.join(choices)}]", help=help
    )


def _plain_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-color", action="store_true", help="No colour (NO_COLOR is honoured too)."
    )
    parser.add_argument("--debug", action="store_true", help="Show tracebacks for errors.")


def _common_output(parser: argparse.ArgumentParser) -> None:
    _choice(
        parser,
        "-o",
        "--output",
        choices=("text", "json"),
        help="Text for people, JSON (alone on stdout) for machines.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="Show Kubernetes details.")
    _plain_options(parser)


def _connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig",
        type=_FILE,
        metavar="FILE",
        help="Kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).",
    )
    parser.add_argument("--context", help="Kubeconfig context (default: the current one).")
    parser.add_argument(
        "-n",
        "--namespace",
        help="Namespace (default: the context's namespace, else 'default').",
    )
    parser.add_argument(
        "--request-timeout",
        type=_AtLeast(float, 0.1),
        default=10.0,
        metavar="FLOAT RANGE",
        help="Seconds for each API request, from connecting to the last byte of the "
        "answer; doctor and snapshot also stop reading after 30 times this in all.",
    )
    parser.add_argument(
        "--insecure-skip-tls-verify",
        action="store_true",
        help="Do not verify the cluster's TLS certificate (prints a warning).",
    )
    for flag, metavar, words in (
        ("--as", "USER", "Act as this user (your login must be allowed to impersonate it)."),
        ("--as-group", "GROUP", "Act as a member of this group too; repeat for several."),
        ("--as-uid", "UID", "Act as the user with this UID."),
    ):
        parser.add_argument(flag, action=_ActAs, dest="act_as", metavar=metavar, help=words)


class _ActAs(argparse.Action):
    """`--as`, `--as-uid`, `--as-group`: one ActAs, each flag setting its part of it (every
    `--as-group` adds a group), as kubectl's flags do."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from msgspec.structs import replace

        from truegreen.cluster.settings import ActAs

        acting = getattr(namespace, self.dest, None) or ActAs()
        if option_string == "--as-group":
            acting = replace(acting, groups=(*acting.groups, values))
        else:
            acting = replace(acting, **{"user" if option_string == "--as" else "uid": values})
        setattr(namespace, self.dest, acting)


def _summary(doc: str, limit: int) -> str:
    """A command's one line: the first paragraph of its docstring if it fits in `limit`
    characters, else the words of it that fit followed by `...` (as click's short help)."""
    line = ""
    for word in doc.split("\n\n", maxsplit=1)[0].split():
        longer = f"{line} {word}".lstrip()
        if len(longer) > limit:
            while line and len(line) + 3 > limit:
                line = line.rpartition(" ")[0]
            return f"{line}..."
        line = longer
    return line


def _program() -> str:
    """How the operator called truegreen, for usage lines: `kubectl truegreen` when kubectl ran
    it as its plugin (kubectl executes `kubectl-truegreen` for `kubectl truegreen`)."""
    called = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "kubectl truegreen" if called == "kubectl-truegreen" else "truegreen"


def _group_parser() -> _Parser:
    """The parser of `truegreen` itself: -h/--help, --version, and the list of commands."""
    parser = _new_parser(_program(), "%(prog)s [OPTIONS] COMMAND [ARGS]...", _ABOUT)
    parser.add_argument(
        "--version",
        action="version",
        version=f"truegreen, version {__version__}",
        help="Show the version and exit.",
    )
    parser.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    listing = parser.add_subparsers(title="commands", metavar="COMMAND")
    width = _help_width() - 6 - max(map(len, COMMANDS))
    for name, (_, run) in sorted(COMMANDS.items()):
        listing.add_parser(name, help=_summary(run.__doc__ or "", width), add_help=False)
    return parser


def command_parser(name: str) -> _Parser:
    """The parser of one command, built only for the command being run."""
    arguments, run = COMMANDS[name]
    parser = _new_parser(f"{_program()} {name}", "%(prog)s [OPTIONS]", run.__doc__ or "")
    parser.command = name
    arguments(parser)
    parser.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    return parser


def _parse(parser: _Parser, words: list[str]) -> dict[str, Any]:
    """The command's arguments by name. Options may come anywhere among the positional
    arguments, and every word after `--` is a positional one, as with click."""
    words = _values_joined(parser, words)
    cut = words.index("--") if "--" in words else len(words)
    # argparse's intermixed parsing loses the words after a leading `--`: they are added here.
    namespace, extras = parser.parse_known_intermixed_args(words[:cut])
    verbatim = words[cut + 1 :]
    unknown = [word for word in extras if word.startswith("-") and word != "-"]
    if unknown:
        raise _ParseError(_no_such_option(unknown[0], parser), parser.command)
    positional = [action for action in parser._actions if not action.option_strings]
    if positional:
        dest = positional[0].dest
        setattr(namespace, dest, [*getattr(namespace, dest), *verbatim])
    else:
        extras += verbatim
    if extras:
        s = "s" if len(extras) > 1 else ""
        raise _ParseError(f"unexpected extra argument{s} ({' '.join(extras)})", parser.command)
    return vars(namespace)


def _values_joined(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
    """click's rule, which argparse lacks: an option that takes a value takes the next word,
    even one that starts with `-` (`--job-requests -:`). Such a pair is joined into one word
    (`--job-requests=-:`, `-n-x`), which argparse reads as the option and its value."""
    takes_value = {
        name for action in parser._actions if action.nargs is None for name in action.option_strings
    }
    joined: list[str] = []
    rest = iter(words)
    for word in rest:
        value = next(rest, None) if word in takes_value else None
        if value is None:
            joined.append(word)
        elif value.startswith("-"):
            joined.append(f"{word}={value}" if word.startswith("--") else word + value)
        else:
            joined += [word, value]
        if word == "--":
            joined += rest  # after `--` every word is positional, even an option's name
    return joined


def _no_such_option(word: str, parser: argparse.ArgumentParser) -> str:
    """click's words for an unknown option, with the long options it is close to."""
    if not word.startswith("--"):
        return f"no such option {word[:2]!r}"
    name = word.partition("=")[0]
    known = [name for action in parser._actions for name in action.option_strings]
    return f"no such option {name!r}{_did_you_mean(name, known)}"


def _did_you_mean(word: str, known: Sequence[str]) -> str:
    """` (did you mean '--output'?)` for names close to `word`: difflib's ratio of at least
    0.7, so that `--bogus` is not taken for `--verbose` (0.625) while `--out` still finds
    `--output` (0.77)."""
    from difflib import get_close_matches  # only for a usage error: slow to import

    close = sorted(get_close_matches(word, known, cutoff=0.7))
    if not close:
        return ""
    return f" (did you mean {' or '.join(map(repr, close))}?)"


def main(argv: Sequence[str] | None = None) -> None:
    """`truegreen ARGV…` (by default the process's own arguments): parse, run one command,
    exit with its code. With `_TRUEGREEN_COMPLETE` set, answer the shell's completion instead."""
    words = list(sys.argv[1:] if argv is None else argv)
    instruction = os.environ.get("_TRUEGREEN_COMPLETE")
    if instruction:
        from truegreen.cli.completion import complete

        answer = complete(instruction, _group_parser(), command_parser)
        sys.stdout.write(answer.stdout)
        if answer.problem:
            print(f"truegreen: {answer.problem}", file=sys.stderr)
        sys.exit(answer.exit_code)
    try:
        try:
            _dispatch(words)
        finally:
            sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
    except BrokenPipeError:
        _quiet_after_broken_pipe()
    except SystemExit as done:
        if isinstance(done.__context__, BrokenPipeError):  # rich's own exit on a closed pipe
            _quiet_after_broken_pipe()
        raise
    except _ParseError as error:
        _show_usage_error(error, words)
        sys.exit(ExitCode.USAGE)
    except KeyboardInterrupt:
        print("\ntruegreen: aborted", file=sys.stderr)
        sys.exit(ExitCode.BROKEN)


def _dispatch(words: list[str]) -> None:
    if not words:
        # No command: the list of them, on stderr as for any other usage error.
        _group_parser().print_help(sys.stderr)
        sys.exit(ExitCode.USAGE)
    name = words[0]
    if name.startswith("-") and name != "-":
        group = _group_parser()
        _, extras = group.parse_known_args(words)  # -h and --version print and exit here
        unknown = [word for word in extras if word.startswith("-") and word != "-"]
        raise _ParseError(_no_such_option(unknown[0] if unknown else name, group), None)
    if name not in COMMANDS:
        raise _ParseError(f"no such command {name!r}{_did_you_mean(name, list(COMMANDS))}", None)
    parser = command_parser(name)
    COMMANDS[name][1](**_parse(parser, words[1:]))


def _usage_failure(error: _ParseError) -> "Failure":
    """A command line that cannot be parsed, as the failure every command reports."""
    from truegreen.failure import Failure

    return Failure(ExitCode.USAGE, "bad-usage", _house_style(error.what), _see_help(error.command))


def _show_usage_error(error: _ParseError, argv: list[str]) -> None:
    """One line saying what is wrong and where to look, as every other error is said; with
    `-o json` (or `-ojson`, `--output=json`) its JSON document on stdout too."""
    failure = _usage_failure(error)
    document = _FAILURE_DOCUMENTS.get(error.command or "")
    pairs = itertools.pairwise([*argv, ""])
    asked = any(
        word in ("-ojson", "--output=json") or (word in ("-o", "--output") and value == "json")
        for word, value in pairs
    )
    if document is not None and asked:
        _emit_json(document(failure))
    print(f"truegreen: {failure.line()}", file=sys.stderr)


def _house_style(text: str) -> str:
    """argparse's and click's sentences as truegreen's errors read: one line, starting in
    lower case, no full stop (`No such option '-x'.` -> `no such option '-x'`)."""
    line = _one_line(text).removesuffix(".")
    return line[:1].lower() + line[1:]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quiet_after_broken_pipe() -> None:
    """End as a tool killed by SIGPIPE does: no message, exit 128 + 13. stdout now points at
    /dev/null so that Python's own flush at exit cannot complain about the closed pipe."""
    import signal

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(128 + signal.SIGPIPE)


def _loaded() -> None:
    """The command's modules are in: the cyclic garbage collector goes back on if
    truegreen.start turned it off while they loaded (in-process callers never do)."""
    if not gc.isenabled():
        gc.freeze()  # what start-up built lives for the whole run: never walk it again
        gc.enable()


def _warn(text: str) -> None:
    """`truegreen: warning: TEXT` on stderr, wrapped at word boundaries to the terminal's width
    when stderr is one (a command in backticks kept whole), one line otherwise."""
    from truegreen.wrapping import wrap

    line = f"truegreen: warning: {text}"
    print("\n".join(wrap(line, _stderr_width(), indent=2)), file=sys.stderr)


def _stderr_width() -> int | None:
    """The columns of the terminal stderr is, else None (a pipe, a file: one line)."""
    try:
        if not sys.stderr.isatty():
            return None
        return int(os.environ.get("COLUMNS") or os.get_terminal_size(sys.stderr.fileno()).columns)
    except (ValueError, OSError):
        return None


def _emit_json(document: object) -> None:
    import msgspec  # encodes in C: a fleet's document is megabytes

    print(msgspec.json.format(msgspec.json.encode(document), indent=2).decode())


def _print_traceback() -> None:
    import traceback  # only with --debug: it pulls in linecache and tokenize

    traceback.print_exc()


def _text_consoles(output: str, no_color: bool) -> "Consoles | None":
    """The consoles for text output; None for JSON and SARIF, which never load rich."""
    if output != "text":
        return None
    from truegreen.console import make_consoles

    return make_consoles(no_color)


def _progress(
    consoles: "Consoles | None", no_color: bool
) -> contextlib.AbstractContextManager[Callable[[str], None] | None]:
    """A progress line on stderr when one is wanted there (text output, a person watching a
    terminal); else nothing to call (None)."""
    if consoles is None:
        return contextlib.nullcontext(None)
    from truegreen.console import progress_line, progress_wanted

    return progress_line(consoles.err if progress_wanted(no_color) else None)


def _doctor_failure(failure: "Failure") -> object:
    from truegreen.doctor.present.report import failure_json

    return failure_json(failure)


def _refresh_failure(failure: "Failure") -> object:
    from truegreen.refresh.render import failure_json

    return failure_json(failure)


def _snapshot_failure(failure: "Failure") -> object:
    from truegreen.doctor.present.snapshot_report import failure_json

    return failure_json(failure)


def _lint_failure(failure: "Failure") -> object:
    from truegreen.failure import failure_document

    # lint's own document, empty: nothing was read, so nothing was found
    return failure_document(failure, files=0, objects=0, findings=[])


def _monitor_failure(failure: "Failure") -> object:
    from truegreen.failure import failure_document

    return failure_document(failure)


_FAILURE_DOCUMENTS: dict[str, FailureDocument] = {
    "doctor": _doctor_failure,
    "lint": _lint_failure,
    "monitor": _monitor_failure,
    "refresh": _refresh_failure,
    "snapshot": _snapshot_failure,
}


def _connection(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
) -> Any:
    from truegreen.cluster.settings import ActAs, ConnectionSettings

    def warn(line: str) -> None:
        # The flag and the kubeconfig's insecure-skip-tls-verify both end up here, once.
        _warn(line)

    acting = act_as or ActAs()
    return ConnectionSettings(
        kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, warn, acting
    )


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    _connection_options(parser)
    parser.add_argument(
        "--snapshot",
        type=PathArgument(),
        metavar="PATH",
        help="Check a saved snapshot (an archive or a folder) instead of the live cluster.",
    )
    parser.add_argument(
        "--job-requests",
        metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
        help="One training job pod's requests (default: the newest training job's template).",
    )
    parser.add_argument(
        "--job-file",
        type=_FILE,
        metavar="FILE",
        help="Check this training job's manifest (or - for standard input) before it is "
        "submitted, instead of the newest training job.",
    )
    parser.add_argument(
        "--credentials-secret",
        metavar="NAME:KEY1,KEY2",
        help="The backend credentials and the keys they must hold.",
    )
    parser.add_argument(
        "--config",
        type=_FILE,
        metavar="FILE",
        help="YAML file with the same settings (flags win).",
    )
    parser.add_argument(
        "--admission-dry-run",
        action="store_true",
        help="Also ask the cluster to admit the training job's pod as a dry run (stores "
        "nothing; needs create on pods).",
    )
    parser.add_argument(
        "--no-registry",
        action="store_true",
        help="Do not ask the registries whether the images are there (they are asked with "
        "the pods' own logins; a snapshot's recorded answers are used offline).",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="Keep the report on screen, redrawn when the cluster changes (Ctrl-C ends it and "
        "exits with the last verdict's code).",
    )
    from truegreen.cluster.context_selection import add_context_flags
    from truegreen.cluster.namespace_selection import add_selection_flags

    add_selection_flags(parser)
    add_context_flags(parser)
    _common_output(parser)


@_command(_doctor_arguments)
@_reporting_errors(_doctor_failure)
def doctor(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    snapshot: Path | None,
    job_requests: str | None,
    job_file: Path | None,
    credentials_secret: str | None,
    config: Path | None,
    admission_dry_run: bool,
    no_registry: bool,
    watch: bool,
    namespaces: str | None,
    all_namespaces: bool,
    namespace_selector: str | None,
    contexts: str | None,
    all_contexts: bool,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """Can this environment run training right now? One headline, a remedy, then the rest.

    Exit 0 ready (warnings allowed), 2 not ready, 3 could not check. With --namespaces, -A or
    --namespace-selector: one line per namespace, the worst first, and the worst exit code;
    with --contexts or --all-contexts, of every cluster too.
    """
    from truegreen.cluster.context_selection import contexts_from_flags
    from truegreen.cluster.namespace_selection import selection_from_flags
    from truegreen.doctor.command.request import DoctorRequest, run_doctor
    from truegreen.doctor.present.report import to_json, to_text

    _loaded()
    selection = selection_from_flags(namespace, namespaces, all_namespaces, namespace_selector)
    clusters = contexts_from_flags(context, contexts, all_contexts)
    request = DoctorRequest(
        _connection(
            kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
        ),
        snapshot,
        job_requests,
        credentials_secret,
        config,
        admission_dry_run,
        job_file,
        no_registry,
    )
    if watch:
        if output == "json":
            from truegreen.errors import UsageError

            raise UsageError("--watch draws on the terminal", "", "drop --output json")
        if selection.many or clusters.many:
            from truegreen.errors import UsageError

            flag = clusters.flag() if clusters.many else selection.flag()
            raise UsageError(
                f"--watch follows one namespace; {flag} names many",
                todo="drop --watch, or name one namespace with -n",
            )
        sys.exit(_watch_doctor(request, verbose=verbose, no_color=no_color))
    consoles = _text_consoles(output, no_color)
    if clusters.many:
        sys.exit(_doctor_clusters(request, selection, clusters, consoles, verbose))
    if selection.many:
        sys.exit(_doctor_fleet(request, selection, consoles, verbose, no_color))
    with _progress(consoles, no_color) as told:
        report = run_doctor(request, told)
    if consoles is None:
        _emit_json(to_json(report))
    else:
        for line in to_text(report, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    sys.exit(report.exit_code)


def _doctor_fleet(
    request: Any, selection: Any, consoles: "Consoles | None", verbose: bool, no_color: bool
) -> int:
    """doctor over many namespaces: the fleet's table or document; its exit code."""
    from truegreen.doctor.command.request import run_fleet
    from truegreen.doctor.present.fleet import fleet_json, fleet_text

    with _progress(consoles, no_color) as told:
        fleet = run_fleet(request, selection, told)
    if consoles is None:
        _emit_json(fleet_json(fleet))
    else:
        for line in fleet_text(fleet, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    return int(fleet.exit_code)


def _doctor_clusters(
    request: Any, selection: Any, clusters: Any, consoles: "Consoles | None", verbose: bool
) -> int:
    """doctor over many clusters: the table with a cluster column, or the document."""
    from truegreen.doctor.command.request import run_clusters
    from truegreen.doctor.present.fleet import clusters_json, clusters_text

    run = run_clusters(request, selection, clusters)
    if consoles is None:
        _emit_json(clusters_json(run))
    else:
        for line in clusters_text(run, verbose=verbose, width=consoles.width):
            consoles.out.print(line)
    return int(run.exit_code)


def _snapshot_arguments(parser: argparse.ArgumentParser) -> None:
    _connection_options(parser)
    parser.add_argument(
        "--archive",
        type=_FILE,
        metavar="FILE",
        help="Write the bundle to this new .tar.gz file "
        "(default: truegreen-snapshot-NAMESPACE-TIME.tar.gz in the current folder).",
    )
    parser.add_argument(
        "--output-directory",
        type=PathArgument(file_okay=False),
        metavar="DIRECTORY",
        help="Write a folder instead of an archive (a new or empty folder).",
    )
    parser.add_argument(
        "--job-requests",
        metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
        help="Saved with the snapshot; doctor uses it offline.",
    )
    parser.add_argument(
        "--credentials-secret", metavar="NAME:KEY1,KEY2", help="Also save this read (names only)."
    )
    parser.add_argument("--config", type=_FILE, metavar="FILE", help="doctor's config.")
    parser.add_argument(
        "--no-registry",
        action="store_true",
        help="Do not ask the registries whether the images are there (nor save their answers).",
    )
    _common_output(parser)


@_command(_snapshot_arguments)
@_reporting_errors(_snapshot_failure)
def snapshot(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    archive: Path | None,
    output_directory: Path | None,
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    no_registry: bool,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """Save a support bundle: every read doctor makes (failed reads too), the namespace's
    newest events and the last lines of failing containers' logs, redacted by policy
    (docs/snapshot.md). Check it offline with `truegreen doctor --snapshot FILE`.

    Exit 0 saved, 3 saved but some reads could not be made.
    """
    from truegreen.doctor.command.request import DoctorRequest, SnapshotTarget, take_snapshot
    from truegreen.doctor.present.snapshot_report import exit_code, to_json, to_text
    from truegreen.errors import UsageError

    _loaded()
    if archive is not None and output_directory is not None:
        raise UsageError(
            "--archive and --output-directory cannot be used together",
            todo="choose one",
        )
    request = DoctorRequest(
        _connection(
            kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
        ),
        job_requests=job_requests,
        credentials_secret=credentials_secret,
        config=config,
        no_registry=no_registry,
    )
    target = SnapshotTarget(output_directory or archive, folder=output_directory is not None)
    consoles = _text_consoles(output, no_color)
    with _progress(consoles, no_color) as told:
        summary = take_snapshot(request, target, told)
    if consoles is None:
        _emit_json(to_json(summary))
    else:
        for line in to_text(summary, verbose=verbose):
            consoles.out.print(line, markup=False, highlight=False)
    sys.exit(exit_code(summary))


def _print_rules(
    explain: str | None, output: str, consoles: "Consoles | None", width: int | None
) -> None:
    """lint's --list-rules and --explain RULE, from the one rule table."""
    from truegreen.errors import UsageError
    from truegreen.lint import reports
    from truegreen.lint.rules import ALL_RULES, ALL_RULES_BY_ID

    if output == "sarif":
        raise UsageError("--list-rules and --explain print text or JSON", todo="use -o json")
    if explain is not None and explain not in ALL_RULES_BY_ID:
        known = ", ".join(ALL_RULES_BY_ID)
        raise UsageError(f"no rule {explain!r}", todo=f"known rules are {known}")
    if output == "json":
        if explain is None:
            _emit_json([reports.rule_json(rule) for rule in ALL_RULES])
        else:
            _emit_json(reports.rule_json(ALL_RULES_BY_ID[explain]))
        return
    text = (
        reports.rules_table(width)
        if explain is None
        else reports.rule_explained(ALL_RULES_BY_ID[explain], width)
    )
    assert consoles is not None  # text output has its consoles
    for line in text:
        consoles.out.print(line, markup=False)


def _lint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [OPTIONS] [PATHS]..."
    parser.add_argument(
        "paths", nargs="*", metavar="PATHS", help="Files or folders to check; - reads stdin."
    )
    parser.add_argument(
        "--config",
        type=_FILE,
        metavar="FILE",
        help="YAML with rules to ignore per namespace or name pattern.",
    )
    _choice(
        parser,
        "-o",
        "--output",
        choices=("text", "json", "sarif"),
        help="Text for people, JSON or SARIF 2.1.0 for machines.",
    )
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="Exit 0, not 3, when the paths hold no Kubernetes object (for hooks on any YAML).",
    )
    parser.add_argument(
        "--max-file-size",
        type=_AtLeast(int, 1),
        default=16,
        metavar="MIB",
        help="Refuse a larger file (a finding) or stdin (bad usage), in MiB.",
    )
    parser.add_argument(
        "--no-ignores",
        action="store_true",
        help="truegreen.io/ignore annotations silence nothing and are findings (for CI).",
    )
    parser.add_argument(
        "--chart-root",
        action="append",
        metavar="DIR",
        help="The folder of a chart whose `helm template` output is on stdin (repeatable).",
    )
    parser.add_argument(
        "--list-rules", action="store_true", help="Print every rule: id, severity, summary."
    )
    parser.add_argument("--explain", metavar="RULE", help="Print one rule's reason and fix.")
    _plain_options(parser)


@_command(_lint_arguments)
@_reporting_errors(_lint_failure)
def lint(
    paths: list[str],
    config: Path | None,
    output: str,
    allow_empty: bool,
    max_file_size: int,
    no_ignores: bool,
    chart_root: list[str] | None,
    list_rules: bool,
    explain: str | None,
    no_color: bool,
    debug: bool,
) -> None:
    """Refuse health probes that lie or that kill long-running work.

    PATHS are files or folders (*.yaml, *.yml, *.json, searched recursively); `-` reads stdin,
    so `helm template CHART | truegreen lint -` works. Exit 2 when any finding is an error,
    3 when no Kubernetes object was found (unless --allow-empty).
    """
    from truegreen.errors import UsageError
    from truegreen.lint import reports
    from truegreen.lint.run import lint as run_lint
    from truegreen.yamlsafe import MIB, Limits

    _loaded()

    consoles = _text_consoles(output, no_color)
    width = consoles.out.width if consoles is not None and consoles.out.is_terminal else None
    if list_rules or explain is not None:
        _print_rules(explain, output, consoles, width)
        return
    if not paths and sys.stdin.isatty():
        raise UsageError(
            "nothing to lint",
            "no path was given and stdin is a terminal",
            "pass files, folders or -",
        )
    result = run_lint(
        list(paths),
        config,
        limits=Limits(max_bytes=max_file_size * MIB),
        stdin=sys.stdin.buffer,
        allow_empty=allow_empty,
        no_ignores=no_ignores,
        chart_roots=chart_root,
    )
    if output == "json":
        _emit_json(reports.to_json(result))
    elif consoles is None:
        _emit_json(reports.to_sarif(result))
    else:
        for line in reports.to_text(result, width):
            consoles.out.print(line)
    sys.exit(result.exit_code)


def _refresh_arguments(parser: argparse.ArgumentParser) -> None:
    _connection_options(parser)
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="Every namespace.")
    parser.add_argument(
        "--selector",
        default="truegreen.io/refresh=enabled",
        help="Label selector (key=value[,key=value]) of the opted-in workloads.",
    )
    _choice(
        parser,
        "--mode",
        choices=("restart", "pin"),
        help="restart: restart the workload so it pulls the tag again (needs imagePullPolicy "
        "Always); pin: set the image to tag@digest.",
    )
    parser.add_argument(
        "--max-attempts",
        type=_AtLeast(int, 1),
        default=3,
        metavar="INTEGER RANGE",
        help="Restarts toward the same digests before refresh stops trying (the latch).",
    )
    parser.add_argument(
        "--rollout-timeout",
        type=_AtLeast(float, 1),
        default=600.0,
        metavar="SECONDS",
        help="How long to wait for a restart to roll out before calling it failed.",
    )
    parser.add_argument("--dry-run", action="store_true", help="Print the plan; write nothing.")
    parser.add_argument(
        "--insecure-registry",
        action="append",
        default=[],
        metavar="HOST",
        help="Allow plain HTTP to this registry (loopback registries always may).",
    )
    parser.add_argument(
        "--registry-skip-tls-verify",
        action="store_true",
        help="Do not verify registries' TLS certificates (prints a warning).",
    )
    _common_output(parser)


@_command(_refresh_arguments)
@_reporting_errors(_refresh_failure)
def refresh(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    all_namespaces: bool,
    selector: str,
    mode: str,
    max_attempts: int,
    rollout_timeout: float,
    dry_run: bool,
    insecure_registry: list[str],
    registry_skip_tls_verify: bool,
    output: str,
    verbose: bool,
    no_color: bool,
    debug: bool,
) -> None:
    """One image-refresh tick over the opted-in workloads.

    --request-timeout also bounds each registry look-up as a whole (login, redirects, retries).
    Exit 0 converged, restarted (by this tick or another) or deliberately held, 2 a rollout
    failed (or a pin dangles), 3 a read failed.
    """
    from truegreen.refresh.command import RefreshRequest, run_refresh
    from truegreen.refresh.plan import RefreshMode
    from truegreen.refresh.render import to_json, to_text

    _loaded()

    request = RefreshRequest(
        _connection(
            kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
        ),
        all_namespaces=all_namespaces,
        selector=selector,
        mode=RefreshMode(mode),
        max_attempts=max_attempts,
        rollout_timeout=rollout_timeout,
        dry_run=dry_run,
        insecure_registries=frozenset(insecure_registry),
        verify_registry_tls=not registry_skip_tls_verify,
        on_warning=_warn,
    )
    consoles = _text_consoles(output, no_color)
    run = run_refresh(request, _progress(consoles, no_color))
    report = run.report
    if consoles is None:
        _emit_json(to_json(report, dry_run=dry_run, cluster=run.cluster))
    else:
        lines = to_text(
            report,
            verbose=verbose,
            width=consoles.width,
            kubectl=run.cluster.kubectl,
            selector=selector,
            cluster=run.cluster,
        )
        for line in lines:
            consoles.out.print(line)
    sys.exit(report.exit_code)


def _watch_doctor(request: Any, *, verbose: bool, no_color: bool) -> int:
    """`doctor --watch`: the monitor's engine, its report redrawn in place; the exit code of
    the last verdict when Ctrl-C ends it (3 if no evaluation finished)."""
    from datetime import datetime

    from rich.console import Group
    from rich.live import Live
    from rich.text import Text

    from truegreen.console import make_consoles
    from truegreen.doctor.present.report import to_text
    from truegreen.monitor.command import MonitorRequest, RunningMonitor
    from truegreen.monitor.engine import Evaluation

    consoles = make_consoles(no_color)
    shown: list[Evaluation] = []
    live = Live(console=consoles.out, auto_refresh=False, redirect_stderr=False)

    def draw(evaluation: Evaluation, previous: Evaluation | None) -> None:
        shown[:] = [evaluation]
        changed = evaluation.changed_at.astimezone().strftime("%H:%M:%S")
        checked = datetime.now().astimezone().strftime("%H:%M:%S")
        report_lines = to_text(evaluation.report, verbose=verbose, width=consoles.width)
        lines = [Text.from_markup(line) for line in report_lines]
        footer = f"Last change {changed}; checked {checked}. Ctrl-C to stop."
        live.update(Group(*lines, Text(""), Text(footer, style="dim")), refresh=True)

    watching = MonitorRequest(request, listen=None, min_interval=2.0, events=False)
    with (
        RunningMonitor(watching, on_evaluation=draw, on_event=lambda _: None) as running,
        live,
        contextlib.suppress(KeyboardInterrupt),
    ):
        _stop_on_signals(running.stop)
        running.run()
    return int(shown[-1].report.exit_code) if shown else 3


def _stop_on_signals(stop: Callable[[], None]) -> None:
    """Ctrl-C and SIGTERM end the loop once the evaluation under way is drawn; a second Ctrl-C
    does not wait for it."""
    import signal

    def first(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        stop()

    signal.signal(signal.SIGINT, first)
    signal.signal(signal.SIGTERM, first)


def _monitor_arguments(parser: argparse.ArgumentParser) -> None:
    from truegreen.cluster.namespace_selection import add_selection_flags

    _connection_options(parser)
    add_selection_flags(parser)
    parser.add_argument(
        "--job-requests",
        metavar="cpu=4,memory=16Gi,nvidia.com/gpu=1",
        help="One training job pod's requests (default: the newest training job's template).",
    )
    parser.add_argument(
        "--credentials-secret",
        metavar="NAME:KEY1,KEY2",
        help="The backend credentials and the keys they must hold.",
    )
    parser.add_argument("--config", type=_FILE, metavar="FILE", help="doctor's config.")
    parser.add_argument(
        "--listen",
        default=":9108",
        metavar="[HOST]:PORT",
        help="Where to serve /metrics, /healthz, /readyz and the status page.",
    )
    parser.add_argument(
        "--interval",
        type=_AtLeast(float, 1),
        default=60.0,
        metavar="FLOAT RANGE",
        help="Seconds between evaluations when nothing changes.",
    )
    parser.add_argument(
        "--min-interval",
        type=_AtLeast(float, 0.1),
        default=10.0,
        metavar="FLOAT RANGE",
        help="Seconds at least between two evaluations, however often the cluster changes.",
    )
    parser.add_argument(
        "--max-age",
        type=_AtLeast(float, 1),
        default=180.0,
        metavar="FLOAT RANGE",
        help="Seconds a read or a verdict may go unconfirmed by the cluster before it reads "
        "'could not check'.",
    )
    parser.add_argument(
        "--watch-timeout",
        type=_AtLeast(float, 1),
        default=300.0,
        metavar="FLOAT RANGE",
        help="Each watch is renewed after this many seconds (up to twice it, at random).",
    )
    parser.add_argument(
        "--no-events", action="store_true", help="Write no Event when the verdict changes."
    )
    parser.add_argument(
        "--cluster-name",
        metavar="NAME",
        help="The cluster label of every metric (default: the kubeconfig's name for the "
        "cluster; in a pod, none: Prometheus's external labels name it).",
    )
    _choice(
        parser,
        "-o",
        "--output",
        choices=("text", "json"),
        help="json: a failure to start is one JSON document on stdout, as for every command.",
    )
    _plain_options(parser)


@_command(_monitor_arguments)
@_reporting_errors(_monitor_failure)
def monitor(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
    job_requests: str | None,
    credentials_secret: str | None,
    config: Path | None,
    listen: str,
    interval: float,
    min_interval: float,
    max_age: float,
    watch_timeout: float,
    no_events: bool,
    cluster_name: str | None,
    namespaces: str | None,
    all_namespaces: bool,
    namespace_selector: str | None,
    output: str,
    no_color: bool,
    debug: bool,
) -> None:
    """doctor kept current: watches the namespace, serves Prometheus metrics and a status page.

    Re-evaluates on a change (at most every --min-interval) and at least every --interval;
    writes an Event on the namespace when the verdict changes. Runs until stopped (exit 0).
    With --namespaces, -A or --namespace-selector one process watches many namespaces.
    """
    from truegreen.cluster.namespace_selection import selection_from_flags
    from truegreen.console import make_consoles
    from truegreen.doctor.command.request import DoctorRequest
    from truegreen.monitor.command import EventOutcome, MonitorRequest, RunningMonitor
    from truegreen.monitor.engine import Evaluation

    _loaded()
    err = make_consoles(no_color).err
    request = MonitorRequest(
        DoctorRequest(
            _connection(
                kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, act_as
            ),
            job_requests=job_requests,
            credentials_secret=credentials_secret,
            config=config,
        ),
        listen=listen,
        interval=interval,
        min_interval=min_interval,
        max_age=max_age,
        watch_timeout=watch_timeout,
        events=not no_events,
        cluster_name=cluster_name,
        selection=selection_from_flags(namespace, namespaces, all_namespaces, namespace_selector),
    )
    fleet = request.selection.many

    def evaluated(evaluation: Evaluation, previous: Evaluation | None) -> None:
        if previous is None or previous.changed_at != evaluation.changed_at:
            report = evaluation.report
            where = f"{evaluation.namespace} " if fleet else ""
            err.print(
                f"truegreen: {evaluation.at:%Y-%m-%dT%H:%M:%SZ} {where}{report.verdict.value}: "
                f"{report.headline.text}",
                markup=False,
                highlight=False,
            )

    def event(outcome: EventOutcome) -> None:
        if outcome.failure is not None:
            err.print(
                f"truegreen: warning: could not write the {outcome.reason} Event "
                f"({outcome.failure.reason})",
                markup=False,
            )

    with RunningMonitor(request, on_evaluation=evaluated, on_event=event) as running:
        host, port = running.address or ("", 0)
        watched = running.monitor.namespaces()
        what = (
            f"{len(watched)} namespaces ({request.selection.flag()})"
            if fleet
            else f"namespace '{running.monitor.namespace}'"
        )
        err.print(
            f"truegreen: watching {what}; metrics and status on http://{host}:{port}/",
            markup=False,
        )
        _stop_on_signals(running.stop)
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C
            running.run()
