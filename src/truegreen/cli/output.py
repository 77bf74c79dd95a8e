"""What a command's run prints, and how it ends: its JSON on stdout, warnings on stderr, the
consoles and progress line of text output; expected errors as one line and their exit code
(with the command's failure document under `-o json`), a closed pipe ended as SIGPIPE would,
tracebacks only with --debug; Ctrl-C, SIGTERM and SIGHUP ending a loop that runs until
stopped; and the garbage collector turned back on once a command's modules are loaded.
"""

import contextlib
import errno
import functools
import gc
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, ParamSpec

from truegreen.exitcodes import ExitCode
from truegreen.left_behind import LeftBehind

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

    from truegreen.console import Consoles
    from truegreen.errors import TruegreenError
    from truegreen.failure import Failure

P = ParamSpec("P")


FailureDocument = Callable[["Failure"], object]
"""A command's JSON document of a run that failed before it had a result (truegreen.failure)."""

FAILURE_DOCUMENTS: dict[str, FailureDocument] = {}
"""Each command's failure document by the command's name, for a command line that cannot be
parsed (registered by `reporting_errors`)."""


class Terminated(BaseException):
    """SIGTERM arrived: raised where the run is, as Ctrl-C raises KeyboardInterrupt, so that
    the run ends through the same path (its failure document, exit 143)."""


class HungUp(Terminated):
    """SIGHUP arrived: the terminal or ssh session the run was started from went away (the
    kernel hangs up the session's processes: drivers/tty/tty_io.c `__tty_hangup`). It ends the
    run as SIGTERM does, its trial pods deleted, with exit 129."""


def stopped_by(signal_raised: BaseException) -> ExitCode:
    """The exit code of a run a signal ended: 129 for SIGHUP (`HungUp`), 143 for SIGTERM
    (`Terminated`), 130 for Ctrl-C."""
    if isinstance(signal_raised, HungUp):
        return ExitCode.HUNG_UP
    return ExitCode.TERMINATED if isinstance(signal_raised, Terminated) else ExitCode.INTERRUPTED


def raised_for(code: ExitCode) -> BaseException:
    """What the signal that `stopped_by` names as `code` raises where the run is."""
    if code is ExitCode.HUNG_UP:
        return HungUp()
    return Terminated() if code is ExitCode.TERMINATED else KeyboardInterrupt()


def hang_up_heard() -> bool:
    """Whether this process may take SIGHUP as a stop: not where it was started to ignore it
    (`nohup`, which leaves SIGHUP ignored for the program it runs, an ignored signal staying
    ignored across exec: signal(7)), nor where the system has no SIGHUP."""
    import signal

    hangup = getattr(signal, "SIGHUP", None)
    return hangup is not None and signal.getsignal(hangup) is not signal.SIG_IGN


def terminate_on_signals() -> None:
    """SIGTERM, and SIGHUP where it is heard (`hang_up_heard`), end the run as Ctrl-C does
    (`Terminated`, `HungUp`), instead of killing it mid-write or mid-trial with its pods
    left."""
    import signal

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated

    def raise_hung_up(signum: int, frame: object) -> None:
        raise HungUp

    signal.signal(signal.SIGTERM, raise_terminated)
    if hang_up_heard():
        signal.signal(signal.SIGHUP, raise_hung_up)


def reporting_errors(
    failure_json: FailureDocument,
) -> Callable[[Callable[P, None]], Callable[P, None]]:
    """Turn expected errors into one line and their exit code; tracebacks only with --debug.
    With `-o json`, stdout still gets one JSON document saying why (truegreen.failure): the
    command's `failure_json`, which a usage error of the command prints too."""

    def decorate(command: Callable[P, None]) -> Callable[P, None]:
        FAILURE_DOCUMENTS[command.__name__] = failure_json

        @functools.wraps(command)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
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
                quiet_after_broken_pipe()  # the reader went away (`| head -1`)
            except (KeyboardInterrupt, Terminated, LeftBehind) as stopped:
                say()  # past the ^C the terminal echoed
                _fail(_stopped(stopped), failure_json, kwargs.get("output"))
            except Exception as error:  # noqa: BLE001 - a bug still exits 1 with one line
                if isinstance(error, OutputLostError):
                    output_lost(error)
                if debug:
                    _print_traceback()
                from truegreen.failure import Failure

                _fail(Failure.internal(error), failure_json, kwargs.get("output"))

        return wrapper

    return decorate


def _stopped(stopped: BaseException) -> "Failure":
    """The failure of a run a signal stopped; where it left something in the cluster it could
    not remove (LeftBehind), saying what and the command that removes it."""
    from truegreen.failure import Failure

    if isinstance(stopped, LeftBehind):
        failure = Failure.interrupted(stopped_by(stopped.signal))
        return failure.leaving(stopped.what, stopped.todo)
    return Failure.interrupted(stopped_by(stopped))


def _failure_of(error: "TruegreenError", command: str) -> "Failure":
    """The failure an expected error describes; in JSON, a usage error without advice of its
    own points at the command's help, so that every document says what to do."""
    from truegreen.failure import Failure

    failure = Failure.of(error)
    if not failure.remedy and failure.exit_code == ExitCode.USAGE:
        return Failure(failure.exit_code, failure.code, failure.text, see_help(command))
    return failure


def _fail(
    failure: "Failure", failure_json: FailureDocument, output: object, line: str = ""
) -> NoReturn:
    """End the run: its JSON document on stdout when JSON was asked for, one line on stderr
    (`line`, the error's own, else the failure's)."""
    if output == "json":
        emit_json(failure_json(failure))
    say(f"truegreen: {line or failure.line()}")
    sys.exit(failure.exit_code)


def say(line: str = "") -> None:
    """`line` on stderr, where it can still be written: stderr lost (the terminal of a run that
    SIGHUP stopped is gone, and its writes fail) leaves the exit code to say how the run
    ended, never a bug's."""
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr)


def see_help(command: str | None) -> str:
    """Where a usage error points: the command's help, else truegreen's own."""
    return f"see `truegreen {command} --help`" if command else "see `truegreen --help`"


class OutputLostError(OSError):
    """stdout could not be written, and not because its reader went away (a closed pipe is
    BrokenPipeError): a full disk, a failing device."""


class _GuardedStdout(io.RawIOBase):
    """stdout's file descriptor, whose failed writes say they are the output's."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: "ReadableBuffer") -> int:
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputLostError(error.errno, error.strerror) from error


class _ClosedStdout(io.RawIOBase):
    """stdout when its descriptor was closed before the run (`>&-`), where Python gives no
    sys.stdout at all: the first write says the output is lost; what comes after it (the
    failure's own document, the flush at exit) goes nowhere."""

    def __init__(self) -> None:
        super().__init__()
        self._said = False

    def writable(self) -> bool:
        return True

    def write(self, data: "ReadableBuffer") -> int:
        if not self._said:
            self._said = True
            raise OutputLostError(errno.EBADF, "standard output is closed")
        return len(memoryview(data))


def guard_stdout() -> None:
    """Make a failed write of stdout an OutputLostError, wherever it surfaces (a print, a
    console, the flush at exit), so that a full disk or a closed stdout is told from a bug.
    stdout that is no file (a test's capture) is left as it is."""
    current = sys.stdout
    if current is None:
        # Descriptor 1 stays taken (by /dev/null), so that no file the run opens becomes it.
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:
            os.dup2(devnull, 1)
            os.close(devnull)
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(_ClosedStdout()), encoding="utf-8")
        return
    try:
        fd = current.fileno()
    except (AttributeError, OSError, ValueError):
        return
    current.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_GuardedStdout(fd)),
        encoding=current.encoding,
        errors=current.errors,
        line_buffering=bool(current.line_buffering),
    )


def output_lost(error: OSError) -> NoReturn:
    """End a run whose output could not be written: one line on stderr naming why, exit 3
    (`write-failed`, as a snapshot that cannot be written ends); stdout now points at
    /dev/null, so that neither a JSON document nor Python's own flush at exit tries again."""
    from truegreen.failure import Failure

    _stdout_to_devnull()
    why = error.strerror or type(error).__name__
    failure = Failure(
        ExitCode.UNKNOWN,
        "write-failed",
        f"couldn't write the output: {why.lower()}",
        "make room where the output goes, or send it elsewhere, and run again"
        if error.errno in (errno.ENOSPC, errno.EDQUOT)
        else "send the output somewhere it can be written, and run again",
    )
    print(f"truegreen: {failure.line()}", file=sys.stderr)
    sys.exit(failure.exit_code)


def quiet_after_broken_pipe() -> None:
    """End as a tool killed by SIGPIPE does: no message, exit 128 + 13. stdout now points at
    /dev/null so that Python's own flush at exit cannot complain about the closed pipe."""
    import signal

    _stdout_to_devnull()
    sys.exit(128 + signal.SIGPIPE)


def _stdout_to_devnull() -> None:
    """stdout's descriptor now /dev/null: what it still holds flushes there at exit (a closed
    stdout's stands in for one already, and has no descriptor of its own)."""
    try:
        fd = sys.stdout.fileno()
    except OSError:
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


def loaded() -> None:
    """The command's modules are in: the cyclic garbage collector goes back on if
    truegreen.start turned it off while they loaded (in-process callers never do)."""
    if not gc.isenabled():
        gc.freeze()  # what start-up built lives for the whole run: never walk it again
        gc.enable()


def warn(text: str) -> None:
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


def emit_json(document: object) -> None:
    """`document` on stdout as indented JSON."""
    import msgspec  # encodes in C: a fleet's document is megabytes

    print(msgspec.json.format(msgspec.json.encode(document), indent=2).decode())


def _print_traceback() -> None:
    import traceback  # only with --debug: it pulls in linecache and tokenize

    traceback.print_exc()


def text_consoles(output: str, no_color: bool) -> "Consoles | None":
    """The consoles for text output; None for JSON and SARIF, which write no styles."""
    if output != "text":
        return None
    from truegreen.console import make_consoles

    return make_consoles(no_color)


def progress(
    consoles: "Consoles | None", no_color: bool
) -> contextlib.AbstractContextManager[Callable[[str], None] | None]:
    """A progress line on stderr when one is wanted there (text output, a person watching a
    terminal); else nothing to call (None)."""
    if consoles is None:
        return contextlib.nullcontext(None)
    from truegreen.console import progress_line, progress_wanted

    return progress_line(consoles.err if progress_wanted(no_color) else None)


def stop_on_signals(stop: Callable[[], None]) -> Callable[[], ExitCode]:
    """Ctrl-C, SIGTERM and SIGHUP (where it is heard: `hang_up_heard`) call `stop`, which must
    return at once (it runs in the signal handler); a second Ctrl-C raises KeyboardInterrupt.
    The function returned says which signal came first, as the exit code of a run it ended
    (`stopped_by`): SIGTERM's or SIGHUP's once one came first, else Ctrl-C's (the only other
    way such a loop ends is a KeyboardInterrupt)."""
    import signal

    codes = {signal.SIGTERM: ExitCode.TERMINATED}
    if hang_up_heard():
        codes[signal.SIGHUP] = ExitCode.HUNG_UP
    came: list[ExitCode] = []

    def first(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if not came:
            came.append(codes.get(signal.Signals(signum), ExitCode.INTERRUPTED))
        stop()

    for signum in (signal.SIGINT, *codes):
        signal.signal(signum, first)
    return lambda: came[0] if came else ExitCode.INTERRUPTED
