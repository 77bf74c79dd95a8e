"""Whether an exec probe's command can fail: read as the shell reads it, conservatively.

The kubelet runs the command without a shell, so `sh -c SCRIPT` is what makes one; a script's
status is its last command's, `A || B` succeeds when B always does, and `set -e` (or `sh -e`)
makes every earlier command count too. A command is "always true" only when nothing in the
container can make it fail: `true`, `:`, `exit 0`, `echo`, and `test` or `cat` of a path every
container has (the kubelet mounts /etc/hosts, /etc/hostname and /etc/resolv.conf into each one,
and /proc/1 is the container's own first process). Anything unclear counts as able to fail.
"""

import shlex
from collections.abc import Sequence

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh"})
_ALWAYS_PRESENT_FILES = frozenset({"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"})
_ALWAYS_PRESENT_FOLDERS = frozenset({"/", "/proc", "/proc/1", "/proc/self", "/etc", "/dev"})
_TEST_FILE = frozenset({"-e", "-f", "-r", "-s"})
_TEST_FOLDER = frozenset({"-e", "-d", "-r", "-x"})
_SEPARATORS = frozenset({";", "\n"})
_AND_OR = frozenset({"&&", "||"})
_PREFIXES = frozenset({"exec", "command", "builtin", "nohup"})


def _basename(word: str) -> str:
    return word.rpartition("/")[2]


def always_succeeds(command: Sequence[str]) -> bool:
    """Whether an exec probe's command exits 0 whatever state the container is in."""
    words = [str(word) for word in command]
    if not words:
        return False
    if _basename(words[0]) in SHELLS:
        found = _shell_script(words[1:])
        return found is not None and _script_always_succeeds(*found)
    return _simple_always_succeeds(words)


def _shell_script(arguments: list[str]) -> tuple[str, bool, bool] | None:
    """The script of `sh [-flags] -c SCRIPT`, with errexit and pipefail as its flags set them;
    None when the shell reads a script file instead."""
    errexit = pipefail = reads_script = False
    position = 0
    while position < len(arguments):
        argument = arguments[position]
        if argument in ("-o", "+o") and position + 1 < len(arguments):
            pipefail |= argument == "-o" and arguments[position + 1] == "pipefail"
            position += 2
            continue
        if len(argument) < 2 or argument[0] != "-" or argument == "--":
            break
        errexit |= "e" in argument
        reads_script |= "c" in argument
        position += 1
    if not reads_script or position >= len(arguments):
        return None
    return arguments[position], errexit, pipefail


def _tokens(script: str) -> list[str] | None:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"  # a newline ends a command, as `;` does
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: the shell refuses the script
        return None


def _script_always_succeeds(script: str, errexit: bool, pipefail: bool) -> bool:
    tokens = _tokens(script)
    if not tokens:
        return False
    lists: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            lists.append([])
        else:
            lists[-1].append(token)
    succeeds = True  # the status before any command ran
    for and_or in (tokens for tokens in lists if tokens):
        if and_or == ["exit"]:
            return succeeds  # exits with the last command's status
        if and_or == ["exit", "0"]:
            return True
        if and_or[0] == "set":
            errexit |= any(f.startswith("-") and "e" in f for f in and_or[1:])
            pipefail |= "pipefail" in and_or
            continue
        succeeds = _and_or_always_succeeds(and_or, pipefail)
        if errexit and not succeeds:
            return False  # `set -e` ends the script with that failure
    return succeeds


def _and_or_always_succeeds(tokens: list[str], pipefail: bool) -> bool:
    """`A && B || C`: left to right, each operator deciding whether the next pipeline runs: the
    first as if after `true &&`."""
    pipelines: list[tuple[str, list[str]]] = [("&&", [])]
    for token in tokens:
        if token in _AND_OR:
            pipelines.append((token, []))
        else:
            pipelines[-1][1].append(token)
    succeeds = True
    for operator, pipeline in pipelines:
        this = _pipeline_always_succeeds(pipeline, pipefail)
        # `&&` runs it only after a success and its status decides; `||` only after a failure
        succeeds = succeeds and this if operator == "&&" else succeeds or this
    return succeeds


def _pipeline_always_succeeds(tokens: list[str], pipefail: bool) -> bool:
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token == "|":
            commands.append([])
        else:
            commands[-1].append(token)
    judged = [_simple_always_succeeds(command) for command in commands]
    return all(judged) if pipefail else judged[-1]


def _simple_always_succeeds(command: list[str]) -> bool:
    words = _without_redirections(command)
    if words is None:
        return False
    if not words:
        return False
    while words and ("=" in words[0] or words[0] in _PREFIXES):
        words = words[1:]  # `VAR=x cmd`, `exec cmd`
    if not words:
        return True  # only assignments (or a bare `exec`): the shell exits 0
    name, arguments = _basename(words[0]), words[1:]
    if name in ("true", ":", "exit"):
        return arguments == [] or (name == "exit" and arguments == ["0"])
    if name == "echo":
        return True
    if name == "[" and arguments[-1:] == ["]"]:
        name, arguments = "test", arguments[:-1]
    if name == "test" and len(arguments) == 2:
        flag, path = arguments
        return (flag in _TEST_FILE and path in _ALWAYS_PRESENT_FILES) or (
            flag in _TEST_FOLDER and path.rstrip("/") in _ALWAYS_PRESENT_FOLDERS | {""}
        )
    if name == "cat":
        return bool(arguments) and all(path in _ALWAYS_PRESENT_FILES for path in arguments)
    return False


def _without_redirections(words: list[str]) -> list[str] | None:
    """The words without output redirections to /dev/null (or to another descriptor); None
    for anything else a shell does around a command (input, a file, a subshell, `&`)."""
    kept: list[str] = []
    position = 0
    while position < len(words):
        word = words[position]
        if word in (">", ">>", ">&", "&>"):
            target = words[position + 1] if position + 1 < len(words) else ""
            if target != "/dev/null" and not (word == ">&" and target.isdigit()):
                return None
            if kept and kept[-1].isdigit():
                kept.pop()  # the `2` of `2>&1`
            position += 2
            continue
        if word and word[0] in "<>&()":
            return None
        kept.append(word)
        position += 1
    return kept
