"""Shell completion for bash, zsh and fish, and for `kubectl truegreen`, answered from the
command line's own parsers.

`_TRUEGREEN_COMPLETE=bash_source truegreen` (or `zsh_source`, `fish_source`) prints the script
a shell sources, for `truegreen` and `kubectl-truegreen` alike. On each TAB the script calls
truegreen back with `_TRUEGREEN_COMPLETE=<shell>_complete` and the words in COMP_WORDS and
COMP_CWORD; truegreen answers one candidate per line: a value to offer (`plain`), or `file`/`dir`
to let the shell complete a path. This is click's protocol, so scripts saved from the
click-based versions keep working. `kubectl truegreen …<TAB>` runs `kubectl_complete-truegreen`
with the words as its arguments (kubectl's pkg/cmd/plugin/plugin_completion.go), which answers
in Cobra's protocol: one value a line, then `:<directive>`. Loaded only when asked.
"""

import argparse
import os
import shlex
import sys
from collections.abc import Callable
from typing import NamedTuple

from truegreen.cli.parser import PathArgument


class Candidate(NamedTuple):
    """One answer to a TAB: `plain` offers `value`; `file` and `dir` hand the shell a path to
    complete. (A NamedTuple: msgspec would cost every TAB ~40 ms of imports.)"""

    kind: str
    value: str
    help: str = ""


class Answer(NamedTuple):
    """What the CLI prints for one `_TRUEGREEN_COMPLETE` run, and the code it exits with."""

    exit_code: int
    stdout: str
    problem: str = ""
    """One line for stderr when the instruction or the words cannot be used."""


def complete(
    instruction: str,
    group: argparse.ArgumentParser,
    command_parser: Callable[[str], argparse.ArgumentParser],
) -> Answer:
    """Carry out `_TRUEGREEN_COMPLETE=instruction`: a shell's script, or the candidates for
    the words the script passed, one a line."""
    shell, _, mode = instruction.partition("_")
    if instruction == KUBECTL_PLUGIN:
        return _for_kubectl(sys.argv[1:], group, command_parser)
    if shell not in _SCRIPTS or mode not in ("source", "complete"):
        known = ", ".join(f"{name}_source" for name in _SCRIPTS)
        return Answer(64, "", f"_TRUEGREEN_COMPLETE={instruction} is not one of {known}")
    if mode == "source":
        return Answer(0, _SCRIPTS[shell])
    words = _words(shell)
    if words is None:
        return Answer(64, "", "COMP_CWORD is not the index of a word")
    args, incomplete = words
    found = candidates(args, incomplete, group, command_parser)
    return Answer(0, "".join(f"{_FORMATS[shell](candidate)}\n" for candidate in found))


KUBECTL_PLUGIN = "kubectl_complete"
"""The instruction of `kubectl_complete-truegreen`, whose words are its own arguments."""
_COBRA_NO_FILES, _COBRA_DIRS, _COBRA_KEEP_ORDER = 4, 16, 32
"""Cobra's ShellCompDirective bits: no file completion, directories only, keep the order."""


def _for_kubectl(
    words: list[str],
    group: argparse.ArgumentParser,
    command_parser: Callable[[str], argparse.ArgumentParser],
) -> Answer:
    """Cobra's answer for `kubectl truegreen WORDS…`: the values, then the directive. A value
    after `--opt=` is offered bare, as Cobra's scripts put the `--opt=` back themselves."""
    args, incomplete = words[:-1], words[-1] if words else ""
    found = candidates(args, incomplete, group, command_parser, joined_prefix=False)
    kinds = {candidate.kind for candidate in found}
    if "file" in kinds:
        return Answer(0, ":0\n")  # the shell completes a path
    if "dir" in kinds:
        return Answer(0, f":{_COBRA_DIRS}\n")
    lines = [f"{c.value}\t{c.help}" if c.help else c.value for c in found]
    return Answer(
        0, "".join(f"{line}\n" for line in lines) + f":{_COBRA_NO_FILES | _COBRA_KEEP_ORDER}\n"
    )


def candidates(
    args: list[str],
    incomplete: str,
    group: argparse.ArgumentParser,
    command_parser: Callable[[str], argparse.ArgumentParser],
    *,
    joined_prefix: bool = True,
) -> list[Candidate]:
    """What may complete `incomplete` after the words `args` (the command name excluded), in
    click's order of questions: an option name, an option's value, a path, a command.

    An option's value after `=` comes two ways. bash splits `--output=j` into `--output`, `=`
    and `j` (`=` is in its COMP_WORDBREAKS), and replaces only what follows the `=`: the value
    is offered bare. zsh and fish pass `--output=j` whole and replace all of it: the value is
    offered as `--output=json` (`joined_prefix`)."""
    commands = _commands(group)
    name = next((word for word in args if not word.startswith("-")), None)
    if name is None:
        if incomplete.startswith("-"):
            return _option_names(group, args, incomplete)
        return [
            Candidate("plain", c, about)
            for c, about in commands.items()
            if c.startswith(incomplete)
        ]
    if name not in commands:
        return []
    parser = command_parser(name)
    rest = args[args.index(name) + 1 :]
    prefix = ""
    if rest[-1:] == ["="] or incomplete == "=":  # bash: `--output`, `=`, the value
        rest = rest[:-1] if rest[-1:] == ["="] else rest
        incomplete = "" if incomplete == "=" else incomplete
    elif incomplete.startswith("-") and "=" in incomplete:  # zsh, fish: `--output=j`
        option, _, incomplete = incomplete.partition("=")
        rest = [*rest, option]
        prefix = f"{option}=" if joined_prefix else ""
    if "--" not in rest and incomplete.startswith("-"):
        return _option_names(parser, rest, incomplete)
    action = _by_name(parser).get(rest[-1]) if rest and "--" not in rest else None
    if action is not None and action.nargs != 0:
        return [
            candidate._replace(value=prefix + candidate.value)
            for candidate in _values(action, incomplete)
        ]
    if any(not action.option_strings for action in parser._actions):  # lint's PATHS
        return [Candidate("file", incomplete)]
    return []


def _commands(group: argparse.ArgumentParser) -> dict[str, str]:
    """The command names and their one-line summaries, from the group's list of commands."""
    for action in group._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def _by_name(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {name: action for action in parser._actions for name in action.option_strings}


def _option_names(
    parser: argparse.ArgumentParser, args: list[str], incomplete: str
) -> list[Candidate]:
    """The option names that start with `incomplete`, but not those already given once (as
    click: only a repeatable option is offered again)."""
    by_name = _by_name(parser)
    given = set()
    for word in args:
        name = word.partition("=")[0] if word.startswith("--") else word[:2]
        if name in by_name:
            given.add(by_name[name])
    return [
        Candidate("plain", name, " ".join((action.help or "").split()))
        for action in parser._actions
        if action not in given or isinstance(action, argparse._AppendAction)
        for name in action.option_strings
        if name.startswith(incomplete)
    ]


def _values(action: argparse.Action, incomplete: str) -> list[Candidate]:
    if action.choices is not None:
        return [
            Candidate("plain", str(choice))
            for choice in action.choices
            if str(choice).startswith(incomplete)
        ]
    if isinstance(action.type, PathArgument):
        return [Candidate("file" if action.type.file_okay else "dir", incomplete)]
    return []


def _words(shell: str) -> tuple[list[str], str] | None:
    """The complete words after `truegreen`, and the word being completed, as each shell's
    script passes them: bash and zsh an index into COMP_WORDS, fish the word itself. None
    when bash's or zsh's index is not a number."""
    words = _split(os.environ.get("COMP_WORDS", ""))
    if shell == "fish":
        current = _split(os.environ.get("COMP_CWORD", ""))
        incomplete = current[0] if current else ""
        args = words[1:]
        if incomplete and args and args[-1] == incomplete:
            args.pop()
        return args, incomplete
    index_text = os.environ.get("COMP_CWORD", "0")
    if not (index_text.isascii() and index_text.isdigit()):
        return None
    index = int(index_text)
    return words[1:index], words[index] if index < len(words) else ""


def _split(text: str) -> list[str]:
    """Words as a shell splits them; an open quote at the end (the word being typed) keeps
    what was typed so far."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[str] = []
    try:
        words.extend(lexer)
    except ValueError:  # no closing quotation: the partial word is the one being completed
        words.append(lexer.token)
    return words


def _bash(candidate: Candidate) -> str:
    return f"{candidate.kind},{candidate.value}"


def _zsh(candidate: Candidate) -> str:
    # Three lines a candidate; `_` for no help (no value truegreen offers holds a colon, which
    # zsh's _describe would take for the end of the value).
    return f"{candidate.kind}\n{candidate.value}\n{candidate.help or '_'}"


def _fish(candidate: Candidate) -> str:
    line = f"{candidate.kind},{candidate.value}"
    return f"{line}\t{candidate.help}" if candidate.help else line


_FORMATS: dict[str, Callable[[Candidate], str]] = {"bash": _bash, "zsh": _zsh, "fish": _fish}

_SCRIPTS = {
    "bash": """\
_truegreen_completion() {
    local IFS=$'\\n'
    local response

    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD \\
        _TRUEGREEN_COMPLETE=bash_complete $1)

    for completion in $response; do
        IFS=',' read type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=($value)
        fi
    done

    return 0
}

complete -o nosort -F _truegreen_completion truegreen kubectl-truegreen
""",
    "zsh": """\
#compdef truegreen kubectl-truegreen

_truegreen_completion() {
    local -a completions
    local -a completions_with_descriptions
    local -a response
    (( ! $+commands[${words[1]}] )) && return 1

    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) \\
        _TRUEGREEN_COMPLETE=zsh_complete ${words[1]})}")

    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done

    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi

    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _truegreen_completion "$@"
else
    compdef _truegreen_completion truegreen kubectl-truegreen
fi
""",
    "fish": """\
function _truegreen_completion
    set -l response (env _TRUEGREEN_COMPLETE=fish_complete COMP_WORDS=(commandline -cp) \\
        COMP_CWORD=(commandline -t) (commandline -opc)[1])

    for completion in $response
        set -l metadata (string split --max 1 "," -- $completion)

        if test $metadata[1] = "dir"
            __fish_complete_directories $metadata[2]
        else if test $metadata[1] = "file"
            __fish_complete_path $metadata[2]
        else if test $metadata[1] = "plain"
            echo $metadata[2]
        end
    end
end

complete --no-files --command truegreen --arguments "(_truegreen_completion)"
complete --no-files --command kubectl-truegreen --arguments "(_truegreen_completion)"
""",
}
