"""The console scripts' entry point: the command line, with the cyclic garbage collector off
while the command's modules load.

Loading doctor builds about 35,000 objects that live for the whole run and almost no garbage;
the collector's ~50 passes over them cost ~11 ms of doctor's ~110 ms start-up. Each command
turns it back on once its modules are in (`truegreen.cli.output.loaded`).
"""

import contextlib
import gc
import os
from typing import Any


def main() -> Any:
    """`truegreen` and `kubectl-truegreen`: truegreen.cli's command line. A run that Ctrl-C,
    SIGTERM or SIGHUP stopped ends by that signal, once it has said so."""
    gc.disable()
    from truegreen.cli import main as command_line

    try:
        return command_line()
    except SystemExit as done:
        _end_by_signal(done.code)
        raise


def _end_by_signal(code: object) -> None:
    """A run that ends with 130, 143 or 129 (stopped by Ctrl-C, SIGTERM or SIGHUP, said on
    stderr and in the failure document) ends by the signal itself, with its default action, as
    kubectl does: a shell that waits for a child the signal ended stops its script or loop too
    (bash's wait-and-cooperative-exit), while an ordinary exit with 130 tells it the child
    handled the signal, so the loop goes on. The status the shell reads is 128 + the signal's
    number either way. Where the default action does nothing (the first process of a
    container's process namespace ignores a signal it has no handler for), the run exits with
    the code."""
    if os.name != "posix":
        return
    import signal

    signals = {130: signal.SIGINT, 143: signal.SIGTERM, 129: signal.SIGHUP}
    if not isinstance(code, int) or code not in signals:
        return
    stopping = signals[code]
    import sys

    for stream in (sys.stdout, sys.stderr):
        # A closed or lost stream: nothing more can be said on it.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    signal.signal(stopping, signal.SIG_DFL)
    os.kill(os.getpid(), stopping)


def kubectl_completion() -> Any:
    """`kubectl_complete-truegreen WORDS…`, which kubectl runs to complete `kubectl truegreen
    WORDS…` (pkg/cmd/plugin/plugin_completion.go): the command line's completion, in Cobra's
    protocol, for the words given as arguments."""
    from truegreen.cli.completion import KUBECTL_PLUGIN

    os.environ["_TRUEGREEN_COMPLETE"] = KUBECTL_PLUGIN
    return main()
