"""The shells a container's command can start, and the shell's own commands, which a command
run without a shell cannot name.

A shell's special built-in (`exit`, `:`, `set`: POSIX Shell Command Language 2.14 says they
"need not be provided in a manner accessible via the exec family of functions", and a program
of such a name is assumed absent) is no program: the runtime cannot start it (runc: `exec:
"exit": executable file not found in $PATH`). How an exec probe that names one fares, and how a
shell script is followed, is `truegreen.lint.commands`.
"""

from collections.abc import Sequence

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh"})
# POSIX 2.14's special built-ins: an error of one (a bad option, a failed redirection) ends the
# shell, and none is a program a command run without a shell can name.
SPECIAL_BUILTINS = frozenset(
    {":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return"}
    | {"set", "shift", "times", "trap", "unset"}
)


def names_no_program(command: Sequence[str]) -> bool:
    """Whether an exec probe's command, which runs without a shell, starts with a shell's own
    command (`exit 0`, `:`, `set -e`): there is no such program, so the probe never runs."""
    return bool(command) and str(command[0]) in SPECIAL_BUILTINS
