"""The console scripts' entry point: the command line, with the cyclic garbage collector off
while the command's modules load.

Loading doctor builds about 35,000 objects that live for the whole run and almost no garbage;
the collector's ~50 passes over them cost ~11 ms of doctor's ~110 ms start-up. Each command
turns it back on once its modules are in (`truegreen.cli.output.loaded`).
"""

import gc
import os
from typing import Any


def main() -> Any:
    """`truegreen` and `kubectl-truegreen`: truegreen.cli's command line."""
    gc.disable()
    from truegreen.cli import main as command_line

    return command_line()


def kubectl_completion() -> Any:
    """`kubectl_complete-truegreen WORDS…`, which kubectl runs to complete `kubectl truegreen
    WORDS…` (pkg/cmd/plugin/plugin_completion.go): the command line's completion, in Cobra's
    protocol, for the words given as arguments."""
    from truegreen.cli.completion import KUBECTL_PLUGIN

    os.environ["_TRUEGREEN_COMPLETE"] = KUBECTL_PLUGIN
    return main()
