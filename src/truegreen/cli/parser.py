"""The command line's parser: the standard library's argparse held to click's manners (no
abbreviations, one-line usage errors raised for `main` to print, help laid out as click laid it
out), the options several commands share, and the registry of commands.

Each command's module (named as the command) registers it with `command`: its function, whose
docstring is its help, and what adds its arguments. A command's module is loaded, and its
parser built, only for the command being run; listing the commands with their summaries (the
group's help, completion) loads them all.
"""

import argparse
import functools
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

from truegreen import __version__
from truegreen.apinames import NAMESPACE_NAME_RULE, is_namespace_name
from truegreen.cli.output import warn

if TYPE_CHECKING:
    from truegreen.cluster.settings import ActAs, ConnectionSettings

F = TypeVar("F", bound=Callable[..., Any])
_Number = TypeVar("_Number", int, float)


Arguments = Callable[[argparse.ArgumentParser], None]
"""Adds one command's options (and arguments) to its parser."""


COMMANDS = ("doctor", "lint", "monitor", "refresh", "snapshot")
"""Every command's name, which is also the name of its module in this package. A command's
module is loaded when the command runs (or the list of commands is shown), never before."""

_REGISTERED: dict[str, tuple[Arguments, Callable[..., None]]] = {}
"""Each loaded command by name: what adds its arguments, and the function that runs it."""


_ABOUT = """Tell the truth about a Kubernetes training environment.

Exit codes: 0 measured good, 2 measured failure, 3 could not check, 1 truegreen broke,
64 bad usage."""


def command(arguments: Arguments) -> Callable[[F], F]:
    """Register a command under its function's name; its docstring is its help."""

    def register(run: F) -> F:
        _REGISTERED[run.__name__] = (arguments, run)
        return run

    return register


def registered(name: str) -> tuple[Arguments, Callable[..., None]]:
    """The command `name` (one of COMMANDS): what adds its arguments, and its function. Its
    module is loaded now if it was not yet."""
    if name not in COMMANDS:
        raise KeyError(name)
    if name not in _REGISTERED:
        __import__(f"truegreen.cli.{name}")  # the builtin: importlib is one more module to load
    return _REGISTERED[name]


class ParseError(Exception):
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
        raise ParseError(message, self.command)


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
        if isinstance(action.type, InRange):
            shown.append(f"{action.type.minimum}<=x<={action.type.maximum}")
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


FILE = PathArgument(dir_okay=False)


class InRange(Generic[_Number]):
    """click's IntRange(min=…, max=…) and FloatRange: a number from `minimum` to `maximum`.

    Every numeric flag has both bounds: past the largest a flag could sensibly mean (an
    hour for one request, a day between two evaluations), a number is a typo or an attack
    (`inf`, `1e308`), and it would overflow a deadline or a sleep further on."""

    def __init__(self, number: type[_Number], minimum: _Number, maximum: _Number) -> None:
        self.number: type[_Number] = number
        self.minimum: _Number = minimum
        self.maximum: _Number = maximum

    def __call__(self, text: str) -> _Number:
        """The number, or ArgumentTypeError in click's words."""
        try:
            value = self.number(text)
        except ValueError:
            kind = "integer" if self.number is int else "float"
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {kind}") from None
        if not self.minimum <= value <= self.maximum:  # `not`: NaN is in no range
            raise argparse.ArgumentTypeError(
                f"{value} is not in the range {self.minimum}<=x<={self.maximum}"
            )
        return value


def choice(
    parser: argparse.ArgumentParser, *flags: str, choices: tuple[str, ...], help: str
) -> None:
    """An option taking one of `choices`, the first by default, shown as click showed it."""
    parser.add_argument(
        *flags, choices=choices, default=choices[0], metavar=f"[{'|'.join(choices)}]", help=help
    )


def plain_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-color", action="store_true", help="No colour (NO_COLOR is honoured too)."
    )
    parser.add_argument("--debug", action="store_true", help="Show tracebacks for errors.")


def common_output(parser: argparse.ArgumentParser) -> None:
    choice(
        parser,
        "-o",
        "--output",
        choices=("text", "json"),
        help="Text for people, JSON (alone on stdout) for machines.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="Show Kubernetes details.")
    plain_options(parser)


def trial_options(parser: argparse.ArgumentParser) -> None:
    """`--trial` and `--trial-timeout`, as doctor and snapshot take them."""
    parser.add_argument(
        "--trial",
        action="store_true",
        help="Also start the training job's own pods for a few seconds and measure what reading "
        "cannot: the image download, the GPUs, shared memory, the dataset, the workers reaching "
        "each other (docs/trial.md). They hold GPUs and count against the quota while they run, "
        "and are deleted after; one that finds no room can make an autoscaler start a machine, "
        "which stays, and costs, until the autoscaler removes it. They never push other "
        "people's programs off a machine: where the job's priority class would, they run "
        "without it. Needs create and delete on "
        "pods, get on pods/log, list on events.",
    )
    parser.add_argument(
        "--trial-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="The trial's whole time, the image download included (default 300).",
    )


def _namespace(text: str) -> str:
    """`-n`'s value: a name no namespace can have is bad usage, as for `--namespaces`. `.` and
    `..` pass here: the connection refuses them in client-go's own words (`may not be '..'`),
    as it does a kubeconfig context's namespace."""
    if text not in (".", "..") and not is_namespace_name(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} cannot be a namespace's name: {NAMESPACE_NAME_RULE}"
        )
    return text


def connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig",
        type=FILE,
        metavar="FILE",
        help="Kubeconfig (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).",
    )
    parser.add_argument("--context", help="Kubeconfig context (default: the current one).")
    parser.add_argument(
        "-n",
        "--namespace",
        type=_namespace,
        help="Namespace (default: the context's namespace, else 'default').",
    )
    parser.add_argument(
        "--request-timeout",
        type=InRange(float, 0.1, 3600.0),
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
        values: str | Sequence[Any] | None,
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


def connection(
    kubeconfig: Path | None,
    context: str | None,
    namespace: str | None,
    request_timeout: float,
    insecure_skip_tls_verify: bool,
    act_as: "ActAs | None",
) -> "ConnectionSettings":
    """The connection options as the settings every cluster command connects with."""
    from truegreen.cluster.settings import ActAs, ConnectionSettings

    acting = act_as or ActAs()
    # The flag and the kubeconfig's insecure-skip-tls-verify both end up in `warn`, once.
    return ConnectionSettings(
        kubeconfig, context, namespace, request_timeout, insecure_skip_tls_verify, warn, acting
    )


def allowed_registries(names: list[str], flag: str = "--registry-allow") -> frozenset[str]:
    """`--registry-allow` (or `flag`'s) values, each a registry name (`HOST` or `HOST:PORT`, an
    IPv6 address in brackets) as an image names its registry; anything else is a usage error."""
    from truegreen.errors import UsageError
    from truegreen.images import ImageReferenceError, split_domain

    for name in names:
        try:
            split_domain(name)
        except ImageReferenceError:
            raise UsageError(
                f"{flag} {name!r} is not a registry name",
                todo="name it as an image does: HOST or HOST:PORT (registry.example.com:5000)",
            ) from None
    return frozenset(names)


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


def group_parser() -> _Parser:
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
    for name in sorted(COMMANDS):
        _, run = registered(name)
        listing.add_parser(name, help=_summary(run.__doc__ or "", width), add_help=False)
    return parser


def command_parser(name: str) -> _Parser:
    """The parser of one command, built only for the command being run."""
    arguments, run = registered(name)
    parser = _new_parser(f"{_program()} {name}", "%(prog)s [OPTIONS]", run.__doc__ or "")
    parser.command = name
    arguments(parser)
    parser.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    return parser


def parse(parser: _Parser, words: list[str]) -> dict[str, Any]:
    """The command's arguments by name. Options may come anywhere among the positional
    arguments, and every word after `--` is a positional one, as with click."""
    words = _values_joined(parser, words)
    cut = words.index("--") if "--" in words else len(words)
    # argparse's intermixed parsing loses the words after a leading `--`: they are added here.
    namespace, extras = parser.parse_known_intermixed_args(words[:cut])
    verbatim = words[cut + 1 :]
    unknown = [word for word in extras if word.startswith("-") and word != "-"]
    if unknown:
        raise ParseError(no_such_option(unknown[0], parser), parser.command)
    positional = [action for action in parser._actions if not action.option_strings]
    if positional:
        dest = positional[0].dest
        setattr(namespace, dest, [*getattr(namespace, dest), *verbatim])
    else:
        extras += verbatim
    if extras:
        s = "s" if len(extras) > 1 else ""
        raise ParseError(f"unexpected extra argument{s} ({' '.join(extras)})", parser.command)
    return vars(namespace)


def output_asked(parser: argparse.ArgumentParser, words: list[str]) -> str | None:
    """The value `parse` would give --output in WORDS, read even where WORDS cannot be parsed,
    so that a usage error is said in the output asked for. Every spelling argparse takes is
    taken (`-o json`, `-o=json`, `-ojson`, `-vojson`, `--output=json`), the last one wins, and
    none counts after `--` or as another option's value; no value is checked."""
    from contextlib import suppress  # only for a usage error

    reader = _new_parser("", "", "")
    for action in parser._actions:
        if action.option_strings:
            _add_unchecked(reader, action)
    asked = argparse.Namespace(output=None)
    with suppress(ParseError):  # a missing value further on: what was read before it stands
        reader.parse_known_args(_values_joined(parser, words), asked)
    return asked.output if isinstance(asked.output, str) else None


def _add_unchecked(reader: argparse.ArgumentParser, action: argparse.Action) -> None:
    """`action`'s option strings, taking as many words as it does, with no type, choice or
    action of its own: reading them can fail only for a missing value."""
    if action.nargs == 0:
        reader.add_argument(*action.option_strings, dest=action.dest, action="store_const")
    else:
        reader.add_argument(*action.option_strings, dest=action.dest, nargs=action.nargs)


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


def no_such_option(word: str, parser: argparse.ArgumentParser) -> str:
    """click's words for an unknown option, with the long options it is close to."""
    if not word.startswith("--"):
        return f"no such option {word[:2]!r}"
    name = word.partition("=")[0]
    known = [name for action in parser._actions for name in action.option_strings]
    return f"no such option {name!r}{did_you_mean(name, known)}"


def did_you_mean(word: str, known: Sequence[str]) -> str:
    """` (did you mean '--output'?)` for names close to `word`: difflib's ratio of at least
    0.7, so that `--bogus` is not taken for `--verbose` (0.625) while `--out` still finds
    `--output` (0.77)."""
    from difflib import get_close_matches  # only for a usage error: slow to import

    close = sorted(get_close_matches(word, known, cutoff=0.7))
    if not close:
        return ""
    return f" (did you mean {' or '.join(map(repr, close))}?)"
