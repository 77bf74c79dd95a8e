"""Training work recognised without annotations, from what a container runs, sets and asks for.

Third-party manifests carry no `truegreen.io/*` annotations, so a container counts as training
work when its command runs a distributed launcher, when its env carries the rendezvous variables
those launchers and the training operators set, or when it asks for GPUs and serves no port (it
lists none, its readinessProbe targets none and no Service of the same source routes to it).
Each signal is named in the finding, so a reader can see why lint thought so.
"""

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from truegreen.lint.shells import SHELLS

LAUNCHERS = ("torchrun", "deepspeed", "mpirun", "mpiexec", "horovodrun")
"""Commands that start distributed training (PyTorch elastic, DeepSpeed, MPI, Horovod)."""
PYTHON_MODULES = ("torch.distributed.run", "torch.distributed.launch")
"""`python -m MODULE` launchers."""
DISTRIBUTED_ENV = ("WORLD_SIZE", "MASTER_ADDR", "RANK", "LOCAL_RANK")
"""torch.distributed's rendezvous variables, which Kubeflow's PyTorchJob sets too."""
ACCELERATORS = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")
"""Device-plugin resources of GPUs; `nvidia.com/mig-*` slices count too."""

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")"})
SHELL_KEYWORDS = ("!", "{", "if", "then", "elif", "else", "while", "until", "do")
"""Reserved words after which the next word is a command (POSIX Shell Command Language 2.4,
2.9.2 `!`, 2.9.4 compound commands). `for` and `case` are not among them: a name follows."""
WRAPPERS: Mapping[str, tuple[frozenset[str], int]] = {
    "exec": (frozenset({"-a"}), 0),
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-a", "--argv0"}), 0),
    "command": (frozenset(), 0),
    "time": (frozenset(), 0),
    "nohup": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "tini": (frozenset({"-p", "-e"}), 0),
    "dumb-init": (frozenset({"-r", "--rewrite"}), 0),
    "srun": (frozenset(), 0),
}
"""Programs (and shell built-ins) that run the command after them: name -> (their options that
take the next word as a value, the operands before the command: timeout's duration). Their
other options (`-i`, `--`, `--signal=INT`) are words that start with `-` (GNU coreutils env,
nice, timeout; krallin/tini; Yelp/dumb-init; POSIX exec, command, time)."""
_LOOKS_UP_ONLY = {"command": frozenset("vV")}
"""Wrappers' option letters that make them name the command instead of running it: POSIX
`command -v NAME` and `command -V NAME` (`command -pv`, options joined) only say where it is."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _commands(words: Sequence[str]) -> list[list[str]]:
    """The commands a container runs: the exec form itself, and every `sh -c` script in it
    split at the shell's separators."""
    found = [list(words)]
    for position, word in enumerate(words[:-1]):
        if word.startswith("-") and "c" in word and _is_shell(words[:position]):
            found += _script_commands(words[position + 1])
    return found


def _is_shell(before: Sequence[str]) -> bool:
    return any(word.rpartition("/")[2] in SHELLS for word in before)


def _script_commands(script: str) -> list[list[str]]:
    # shlex keeps a backslash-newline as a newline glued to the next word (`\ntorchrun`); the
    # shell removes it first (POSIX 2.2.1), so a launcher on a continued line is the command.
    # Imported only for a script that has one: doctor reads no probe script for a namespace
    # whose containers run none (tests/e2e/test_imports.py).
    if "\\\n" in script:
        from truegreen.lint.shell_words import join_continued_lines

        joined = join_continued_lines(script)
    else:
        joined = script
    lexer = shlex.shlex(joined, posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t\r"  # a newline ends a command, as `;` does
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = joined.split()
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def _command(words: Sequence[str]) -> Sequence[str]:
    """The command a simple command runs, and its arguments: shell keywords, `VAR=value`
    assignments and wrappers (with their options) skipped; empty when there is none."""
    position, wrapped = 0, False
    while position < len(words):
        word = words[position]
        if (word in SHELL_KEYWORDS and not wrapped) or ("=" in word and not word.startswith("-")):
            position += 1  # `then torchrun`, `VAR=x torchrun`, `env OMP=1 accelerate launch`
            continue
        wrapper = WRAPPERS.get(word.rpartition("/")[2])
        if wrapper is None:
            return words[position:]
        takes_value, operands = wrapper
        lookup = _LOOKS_UP_ONLY.get(word.rpartition("/")[2], frozenset())
        position, wrapped = position + 1, True  # after a wrapper a keyword is a program's name
        while position < len(words) and words[position].startswith("-"):
            option = words[position]
            if not option.startswith("--") and lookup & set(option[1:]):
                return ()  # `command -v torchrun`: looked up, not run
            position += 2 if option in takes_value else 1
            if option == "--":
                break
        position += operands
    return ()


def _python_module(command: Sequence[str]) -> str | None:
    """The launcher module `python -m MODULE` (or `-mMODULE`) runs, if any."""
    for position, word in enumerate(command[1:], 1):
        if word == "-m":
            module = command[position + 1] if position + 1 < len(command) else ""
        elif word.startswith("-m"):
            module = word[2:]
        else:
            continue
        if module in PYTHON_MODULES:
            return module
    return None


def launcher(words: Sequence[str]) -> str | None:
    """The distributed launcher a command line starts, if any (`torchrun`, `accelerate
    launch`, `python -m torch.distributed.run`)."""
    for words_of_one in _commands(words):
        command = _command(words_of_one)
        if not command:
            continue
        name = command[0].rpartition("/")[2]
        if name in LAUNCHERS:
            return name
        if name == "accelerate" and command[1:2] == ["launch"]:
            return "accelerate launch"
        if name.startswith("python"):
            module = _python_module(command)
            if module is not None:
                return f"python -m {module}"
    return None


def gpus(container: Mapping[str, Any]) -> str | None:
    """The GPU resource a container asks for (requests or limits, a non-zero amount)."""
    resources = _mapping(container.get("resources"))
    for amounts in (_mapping(resources.get("limits")), _mapping(resources.get("requests"))):
        for name, amount in amounts.items():
            wanted = str(name)
            if (wanted in ACCELERATORS or wanted.startswith("nvidia.com/mig-")) and str(
                amount
            ).strip() not in ("0", ""):
                return wanted
    return None


_NETWORK_HANDLERS = ("httpGet", "tcpSocket", "grpc")


def serves_a_port(container: Mapping[str, Any]) -> bool:
    """The container lists a port, or its readinessProbe targets one: readiness gates Service
    traffic, which only a server takes (a liveness probe alone says nothing of serving)."""
    if container.get("ports"):
        return True
    readiness = _mapping(container.get("readinessProbe"))
    return any(
        _mapping(readiness.get(handler)).get("port") not in (None, "")
        for handler in _NETWORK_HANDLERS
    )


def training_signal(container: Mapping[str, Any], *, routed: bool = False) -> str | None:
    """Why a container spec looks like training work, in words for a finding; None if it does
    not. `routed`: a Service sends it traffic, so it serves a port whether it lists one or not
    (the EndpointSlice controller resolves a numeric targetPort with no containerPort:
    pkg/api/v1/pod/util.go FindPort)."""
    found = launcher([*_strings(container.get("command")), *_strings(container.get("args"))])
    if found is not None:
        return f"its command runs {found}"
    env = container.get("env")
    names = (
        [str(_mapping(e).get("name")) for e in env if _mapping(e)] if isinstance(env, list) else []
    )
    for name in DISTRIBUTED_ENV:
        if name in names:
            return f"its env sets {name}"
    resource = gpus(container)
    if resource is not None and not routed and not serves_a_port(container):
        return f"it asks for {resource} and declares no port"
    return None
