"""Whether an exec probe's command can fail, read as a shell reads it (lint/commands.py).

The real shells are the judge: every script judged unable to fail is run with dash (Debian's
and Ubuntu's /bin/sh) and bash, once with the check it holds failing and once passing, and must
exit 0 both times; every script that exits non-zero when its check fails must be judged able
to fail. `check`, `curl`, `pg_isready` and `wget` are stubs that exit with $CHECK_STATUS, and
`{ready}` is a file that exists only while the check passes.
"""

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.real_parts import find
from truegreen.lint.commands import always_succeeds
from truegreen.lint.shells import SHELLS, names_no_program


class Shell:
    """The real shells a script runs in, with the stubs on PATH and the ready file."""

    def __init__(self, shells: dict[str, str], stubs: Path, ready: Path) -> None:
        self.shells, self.stubs, self.ready = shells, stubs, ready

    def script(self, text: str) -> str:
        """The script, naming the ready file."""
        return text.replace("{ready}", str(self.ready))

    def statuses(self, command: list[str], check_passes: bool) -> list[int]:
        """The command's exit status in each real shell (a `sh` one in dash and bash)."""
        named = Path(command[0]).name
        shells = list(self.shells.values()) if named == "sh" else [self.shells[named]]
        if check_passes:
            self.ready.touch()
        else:
            self.ready.unlink(missing_ok=True)
        environment = {
            **os.environ,
            "PATH": f"{self.stubs}:{os.environ['PATH']}",
            "CHECK_STATUS": "0" if check_passes else "1",
        }
        return [
            subprocess.run(
                [path, *command[1:]], check=False, env=environment, capture_output=True, timeout=10
            ).returncode
            for path in shells
        ]


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Shell:
    shells = {name: find(name) for name in ("dash", "bash")}
    if None in shells.values():
        pytest.skip("dash and bash are needed to run the scripts")
    stubs = tmp_path_factory.mktemp("stubs")
    for name in ("check", "curl", "pg_isready", "wget"):
        (stubs / name).write_text('#!/bin/sh\nexit "$CHECK_STATUS"\n')
        (stubs / name).chmod(0o755)
    found = {name: path for name, path in shells.items() if path is not None}
    return Shell(found, stubs, stubs / "ready")


CANNOT_FAIL = [
    ["true"],
    ["/bin/true"],
    ["echo", "ok"],
    ["/bin/echo"],
    ["test", "-d", "/proc/1"],
    ["test", "-e", "/etc/hosts"],
    ["[", "-f", "/etc/resolv.conf", "]"],
    ["cat", "/etc/hostname"],
    ["sh", "-c", "exit 0"],
    ["/bin/sh", "-c", "true"],
    ["bash", "-ec", "true"],
    ["sh", "-ce", "exit 0"],
    ["sh", "-c", "echo ok"],
    ["sh", "-c", "curl -f localhost:8080/healthz || true"],
    ["sh", "-c", "wget -q -O- x >/dev/null 2>&1 || exit 0"],
    ["sh", "-c", "check; exit 0"],
    ["sh", "-c", "check\ntrue"],
    ["sh", "-c", "check | true"],
    ["sh", "-c", "true || check"],
    ["sh", "-c", "exec echo ready"],
    ["sh", "-c", "test -d /proc/1 && echo up"],
    ["bash", "-o", "pipefail", "-c", "true | echo x"],
    ["bash", "+o", "pipefail", "-c", "check | true"],  # pipefail turned off again
    ["sh", "-c", "-e", "true"],  # -e after -c is still an option
    ["sh", "-c", "'true'"],  # quotes are the shell's
    ["sh", "-c", "set -e"],
    ["sh", "-c", "exit"],
    ["sh", "-c", "exit 0; check"],  # never reaches check
    ["sh", "-c", "set +e; check; true"],
    ["sh", "-c", "A=1 true"],
    ["sh", "-c", "A=1"],
    ["sh", "-c", "echo ok >/dev/null"],
    ["sh", "-c", "echo ok >> /dev/null"],
    ["sh", "-c", "echo ok 2>&1"],
    ["sh", "-c", "echo ok &>/dev/null"],
    ["sh", "-c", "test -d /proc/1 2>/dev/null"],
    ["sh", "-c", "true >/dev/null >/dev/null"],
    ["sh", "-c", "test >/dev/null -d /proc/1"],  # a redirection may stand anywhere
    ["sh", "-c", "echo Xyz"],
    ["test", "-d", "/proc/1/"],
    ["test", "-d", "/"],
    ["sh", "-c", "(true)"],  # a subshell's status is its last command's
    ["sh", "-c", "(check); true"],
    ["sh", "-c", "if check; then echo ok; else echo no; fi"],
    ["sh", "-c", "if check; then echo ok; fi"],  # no branch ran: status 0
    ["sh", "-c", "check || { echo not ready; }; echo ready"],
    ["sh", "-c", "check || echo failed; exit 0"],
    ["sh", "-c", "test -f {ready} || exit 0"],
    ["sh", "-c", "check && exit 0; echo ok"],
    ["sh", "-c", "! check; true"],
    ["sh", "-c", "check; echo ok # || exit 1"],  # a comment
    ["sh", "-c", "check ||\n  true"],
    ["sh", "-c", "exit 256"],  # 256 modulo 256
    ["bash", "-c", "set -euo pipefail; true | echo x"],
    # of the `${…}` forms only `${x?}` and `${x:?}` end the shell (POSIX 2.6.2);
    # `=` assigns, `-` and `+` substitute, and a `?` or `=` inside the word is a letter
    ["sh", "-c", "echo ready ${TG_READY:=yes}"],
    ["sh", "-c", 'echo "${TG_URL:-http://x/?a=b}"'],
    ["sh", "-c", "echo ${TG_X-a=b} ${TG_X:+?} ${TG_X+x} ${TG_X=1}"],
    ["sh", "-c", "echo ${#TG_X} ${#} ${TG_X%%=*} ${TG_X#?}"],
    ["sh", "-c", 'echo "${TG_A:-"b}c"}" ${TG_A:-\\}} ${TG_A:-${TG_B:-${TG_C}}}'],
    # a command's output in an argument leaves the status the command's (POSIX
    # 2.9.1), and its `exit`, `${x?}` or `set -u` end only its subshell (2.6.3)
    ["sh", "-c", 'echo "alive at $(date)"'],
    ["sh", "-c", 'echo "alive at `date`"'],
    ["sh", "-c", "cat /etc/hostname; echo $(check)"],
    ["sh", "-c", "echo $(exit 3) `check` ${TG_A:-$(check)} $(echo ${TG_UNSET?})"],
    ["sh", "-ec", "echo $(check); set -u; echo $(echo $TG_UNSET)"],
    ["sh", "-c", 'echo "$(echo "$(check)")" `echo \\`check\\``'],
    ["sh", "-c", "TG_A=$(check) true"],
    ["sh", "-c", "echo $(echo a # )\n)"],
    ["sh", "-c", "set -- $TG_A $(check); true"],
    ["sh", "-c", "exec nohup echo ok"],
    ["sh", "-c", "command exec true"],  # `command` finds the shell's own exec
    # without a shell, nohup runs the rest as a program and exits with its status
    ["nohup", "true"],
    ["/usr/bin/nohup", "echo", "ok"],
    ["nohup", "nohup", "test", "-e", "/etc/hosts"],
]

CAN_FAIL = [
    [],
    ["pg_isready"],
    ["sh", "-c", "test -f /tmp/ready"],
    ["true", "x"],
    ["cat", "/tmp/ready", "true"],
    ["cat"],
    ["sh", "-x", "true"],  # runs a script file named true
    ["sh", "-c"],
    ["sh", "-c", "check; exit"],  # exits with check's status
    ["sh", "-c", "true && check"],
    ["sh", "-ec", "check; true"],
    ["sh", "-c", "set -e; check; true"],
    ["sh", "-c", "'true"],  # the shell refuses it
    ["sh", "-c", "echo ok > /tmp/x"],
    ["sh", "-c", "cat < /etc/hosts"],
    ["sh", "-c", "true &"],
    ["sh", "-c", "exit 1"],
    ["sh", "-o", "pipefail", "-c", "check | true"],
    ["test", "-d", "/tmp"],
    ["test", "-f", "/proc/1"],
    ["python", "-c", "import torch"],
    ["sh", "-c", ""],
    ["sh", "-o"],
    ["sh", "--", "-c", "true"],  # after `--`, -c is a script file's name
    ["sh", "-e", "-c", "check; true"],
    ["sh", "-ec", "set -x; check; true"],  # set -x leaves -e on
    ["bash", "-o", "pipefail", "-o", "xtrace", "-c", "check | true"],
    ["sh", "-o", "pipefail", "-c", "set -x; check | true"],
    ["sh", "-c", "set -o pipefail; check | true"],
    ["sh", "-c", "test -e /etc/hostnameX"],
    ["sh", "-c", "echo ok >"],
    ["sh", "-c", "echo ok > 1"],  # writes a file, which may fail
    ["sh", "-c", "echo ok 2>&x"],
    ["test", "-d", "/proc/1", "]"],
    ["test", "-d"],
    ["test", "-d", "/procX"],
    ["sh", "-c", "check &&"],
    ["sh", "-c", "A=1 check"],
    # dash refuses `-o pipefail` (exit 2), and /bin/sh may be dash
    ["sh", "-x", "-o", "pipefail", "-c", "true"],
    ["sh", "-c", "set -o pipefail; true"],
    ["sh", "-c", "set -h; true"],  # an option dash does not know ends it
    ["sh", "-c", "echo $((1 + 1))"],  # arithmetic: not followed
    ["sh", "-c", "echo $()"],  # an empty substitution: not followed
    ["sh", "-c", "echo $(case x in a) echo;; esac)"],  # `case`: not followed
    ["sh", "-c", "while check; do exit 1; done; true"],  # loops: not followed
    ["sh", "-c", "f() { exit 1; }; f; true"],  # functions: not followed
    ["sh", "-c", "eval 'exit 1'; true"],
    ["sh", "-c", "trap 'exit 1' EXIT; true"],
    ["sh", "-c", "cat <<EOF\nx\nEOF"],
    ["sh", "-c", "echo ok >&-"],  # writes to a closed descriptor
    ["sh", "-c", "set -u; echo $X"],  # X unset ends the shell
    ["sh", "-c", "echo ${X?}"],
    ["sh", "-c", "echo \"${TG_A:-'}'}\""],  # dash and bash close this `${` at different braces
    ["sh", "-c", "exit -1"],
    ["sh", "-c", "if check; then true fi"],  # the shell refuses it
    ["sh", "-c", "{ true }"],
    ["sh", "-c", "true )"],
    # without a shell, `set` is a program PATH does not hold; pipefail is never known there
    ["set", "-o", "pipefail"],
    # without a shell nothing reads the words: `A=1` and `command` would be the programs'
    # names, `||` and `>/dev/null` arguments of `true` (which exits 0 only with none)
    ["A=1", "true"],
    ["command", "true"],  # a program on some images (Fedora's bash package), on most none
    ["true", "||", "false"],
    ["true", ">/dev/null"],
    # nohup finds no `:` or `exit` program (127) and, given nothing to run, exits 125
    ["nohup", ":"],
    ["nohup", "exit", "0"],
    ["nohup"],
    ["/usr/bin/exit", "0"],  # a path, run as it is: a file the image may or may not hold
    # dash and bash end only the pipeline's subshell; ksh and zsh run `exit 1` in the shell
    ["sh", "-c", "check | exit 1; echo ok"],
]

# Without a shell, the runtime starts the program the first word names, found on PATH (runc:
# `exec: "exit": executable file not found in $PATH`), and a shell's special built-in (POSIX
# 2.14) is none: the probe never runs, so it never passes (lint/commands.py's docstring).
NO_PROGRAM = [
    [":"],
    ["exit", "0"],
    ["exit"],
    ["set", "-e"],
    ["exec", "true"],
    ["export", "READY=1"],
    [".", "/etc/profile"],
    ["eval", "true"],
    ["trap", "", "TERM"],
    ["unset", "X"],
    ["readonly", "X"],
    ["return", "0"],
    ["shift"],
    ["times"],
    ["break"],
    ["continue"],
]

A_PROGRAM = [
    [],
    ["true"],
    ["/bin/true"],
    ["sh", "-c", "exit 0"],
    ["sh", "-c", ":"],
    ["bash", "-c", "set -e; true"],
    ["nohup", "exit", "0"],  # nohup is the program; it exits 127, a plain failure
    ["/usr/bin/exit", "0"],  # a path is run as it is, not looked up
    ["command", "true"],  # a regular built-in: Fedora's bash package ships it as a program
    ["exit0"],
    ["EXIT", "0"],
    ["sh"],
]


@pytest.mark.parametrize("command", NO_PROGRAM, ids=repr)
def test_a_shell_s_own_command_without_a_shell_names_no_program(command: list[str]) -> None:
    assert shutil.which(command[0]) is None, "precondition: no program of that name on PATH"
    # started as the runtime starts it: an error, no exit status (`.` finds PATH's folders)
    with pytest.raises((FileNotFoundError, PermissionError)):
        subprocess.run(command, check=False, capture_output=True, timeout=10)
    assert names_no_program(command)
    assert not always_succeeds(command)


@pytest.mark.parametrize("command", A_PROGRAM, ids=repr)
def test_a_program_or_a_shell_is_not_judged_to_name_no_program(command: list[str]) -> None:
    assert not names_no_program(command)


@pytest.mark.parametrize("command", [c for c in CANNOT_FAIL if c[0] not in SHELLS], ids=repr)
def test_a_command_without_a_shell_that_cannot_fail_runs_to_0(command: list[str]) -> None:
    """Run as the runtime runs it: the program found on PATH, with no shell between."""
    assert subprocess.run(command, check=False, capture_output=True, timeout=10).returncode == 0


# Scripts that exit non-zero when their check fails (review F1: the shapes Helm charts write).
# POSIX Shell Command Language 2.14 `exit`: "exit [n]" ends the shell with n, or, with no n,
# with "the exit status of the last command executed"; the kubelet counts any status but 0 as
# a failed probe (kubernetes pkg/probe/exec/exec.go, execProber.Probe).
EXIT_WHEN_CHECK_FAILS = [
    "curl -sf http://localhost:8080/ready || exit 1\necho ok",
    "if ! pg_isready -h 127.0.0.1; then exit 1; fi; exit 0",
    "test -f {ready} || exit",
    "[ -f {ready} ] || { echo not ready; exit 1; }; echo ready",
    "curl -sf http://localhost:8080/ready \\\n  || exit 1\necho ok",  # a wrapped line
    "check ||\n  exit 1\ntrue",
    "check && echo ok || exit 2\necho done",
    "if check; then :; else exit 1; fi; true",
    "if false; then :; elif check; then echo ok; else exit 3; fi; echo end",
    "exec check; echo never",
    "check || exit $?; true",
    "(check) || exit 1; true",
    "{ check; } || exit 1; echo ok",
    "check >/dev/null 2>&1 || exit 1; echo ok",
    "test -f {ready} || exit 1 # not ready yet\necho ok",
    "set -o errexit; check; echo ok",
    "set -eu; check; echo ok",
    "wget -q -O- localhost:8080 >/dev/null || { exit 1; }\nexit 0",
    # 2.9.1: with no command name, the status is the last command substitution's
    "TG_X=$(check)",
    "set -e; TG_X=$(check); true",
    "TG_A=1 $(check)",
    "`check`",
    # 2.2.1: a backslash-newline joins lines only where the backslash escapes: a comment ends
    # at its newline (2.3 rule 9), and a doubled backslash is one escaped backslash
    "echo ok # a note \\\ncheck",
    "echo \\\\\ncheck",
]


# Expansions that end dash or bash, or that one of them refuses (POSIX 2.6.2; bash 5.2 will
# not assign FUNCNAME, nor a variable `declare -r` made read-only; dash refuses bash's
# `${x:1:2}`, "Bad substitution"). Each is able to fail.
ENDS_A_SHELL = [
    "echo ${TG_UNSET:?}; true",
    'echo "${TG_UNSET?not set}"; true',
    "echo ${1=x}; true",  # a positional parameter cannot be assigned so
    "echo ${!=x}; true",
    "echo ${FUNCNAME:=x}; true",
    "declare -r TG_A= || true; echo ${TG_A:=y}; true",
    "echo ${TG_A:1:2}; true",
    "echo ${}; true",
    "echo ${TG_A:-${TG_UNSET?}}; true",
    "echo ${TG_A:-; true",
    # a substitution the shell cannot parse ends the script; `set` of an expanded word may
    # meet an option the shell refuses (dash: "set: Illegal option -h", exit 2)
    "echo $(if); true",
    "echo $(; true",
    "echo `date; true",
    "set $(echo -h); true",
    "TG_X=-h; set $TG_X; true",
]


# `exec` and `nohup` run a program found on PATH (POSIX 2.14 exec; nohup is a program):
# the shell's own `:`, `exit`, `exec` or `command` are not found there, status 127. `builtin`
# is bash's alone; dash has no such command.
NOT_FOUND = ["exec :", "exec exec true", "exec command true", "nohup :", "nohup exit 0"]
NOT_FOUND += ["builtin true"]


@pytest.mark.parametrize("script", NOT_FOUND)
def test_a_shell_s_own_command_run_as_a_program_can_fail(script: str, shell: Shell) -> None:
    assert any(shell.statuses(["sh", "-c", script], check_passes=True)), (
        "precondition: dash or bash does not find it"
    )
    assert not always_succeeds(["sh", "-c", script])


@pytest.mark.parametrize("script", ENDS_A_SHELL)
def test_an_expansion_that_ends_a_shell_can_fail(script: str, shell: Shell) -> None:
    assert any(shell.statuses(["sh", "-c", script], check_passes=True)), (
        "precondition: dash or bash exits non-zero"
    )
    assert not always_succeeds(["sh", "-c", script])


@pytest.mark.parametrize("command", CANNOT_FAIL)
def test_a_command_that_cannot_fail(command: list[str]) -> None:
    assert always_succeeds(command)


@pytest.mark.parametrize("command", CAN_FAIL)
def test_a_command_that_can_fail(command: list[str]) -> None:
    assert not always_succeeds(command)


@pytest.mark.parametrize("script", EXIT_WHEN_CHECK_FAILS)
def test_a_script_that_exits_non_zero_when_its_check_fails_can_fail(
    script: str, shell: Shell
) -> None:
    command = ["sh", "-c", shell.script(script)]
    assert 0 not in shell.statuses(command, check_passes=False), (
        "precondition: the real shells exit non-zero when the check fails"
    )
    assert set(shell.statuses(command, check_passes=True)) == {0}, (
        "precondition: the real shells exit 0 when the check passes"
    )
    assert not always_succeeds(command)


@pytest.mark.parametrize(
    "command", [c for c in CANNOT_FAIL if c[0] in SHELLS], ids=lambda c: repr(c[-1])
)
def test_the_shells_agree_that_it_cannot_fail(command: list[str], shell: Shell) -> None:
    command = [*command[:-1], shell.script(command[-1])]
    for passes in (False, True):
        assert set(shell.statuses(command, check_passes=passes)) == {0}, passes


# Review R6: nesting past what the reading follows is "not followed", never a crash. dash and
# bash run each of these to 0; the reading stops at _MAX_DEPTH levels and calls them able to
# fail (the rule never flags what it has not followed), and shallower ones are still read.
_DEEP = 1000
NESTED = {
    "groups": "{ " * _DEEP + "true; " + "}; " * (_DEEP - 1) + "}",
    "ifs": "if " * _DEEP + "true" + "; then true; fi" * _DEEP,
    "expansions": "echo " + "${TG_A:-" * _DEEP + "x" + "}" * _DEEP,
}


@pytest.mark.parametrize("script", NESTED.values(), ids=NESTED.keys())
def test_a_script_nested_past_the_reading_s_depth_can_fail_and_does_not_crash(
    script: str, shell: Shell
) -> None:
    assert set(shell.statuses(["sh", "-c", script], check_passes=False)) == {0}, (
        "precondition: the real shells run it to 0"
    )
    assert not always_succeeds(["sh", "-c", script])


def test_a_thousand_prefixes_are_read_without_crashing(shell: Shell) -> None:
    """`command command … true` runs `true` however many there are: read in a loop."""
    script = "command " * _DEEP + "true"
    assert set(shell.statuses(["sh", "-c", script], check_passes=False)) == {0}
    assert always_succeeds(["sh", "-c", script])
    assert always_succeeds(["nohup"] * _DEEP + ["true"])  # no shell: nohup runs nohup …


@pytest.mark.parametrize(
    "script",
    [
        "{ " * 20 + "true; " + "}; " * 19 + "}",
        "if " * 20 + "true" + "; then true; fi" * 20,
        "command " * 20 + "true",
    ],
    ids=["groups", "ifs", "command prefixes"],
)
def test_a_script_nested_twenty_deep_is_still_read(script: str) -> None:
    assert always_succeeds(["sh", "-c", script])


def _substitutions(depth: int) -> str:
    return "echo " + '"$(echo ' * depth + "x" + ')"' * depth


def test_nested_command_substitutions_are_read_to_a_depth_and_never_crash(shell: Shell) -> None:
    """Ten nested `$(…)` are read (the shells run them to 0); a thousand are not followed
    (dash and bash need a process each, so only the reading runs them)."""
    assert set(shell.statuses(["sh", "-c", _substitutions(10)], check_passes=False)) == {0}
    assert always_succeeds(["sh", "-c", _substitutions(10)])
    assert not always_succeeds(["sh", "-c", _substitutions(_DEEP)])


_PIECES = [
    *("check", "true", "false", ":", "echo ok", "exit", "exit 0", "exit 1", "exit 256"),
    *("test -f /etc/hosts", "[ -d /proc/1 ]", "cat /etc/hostname", "A=1", "exec check"),
    *("exec true", "command check", "check >/dev/null 2>&1", "echo ok >&2", "set -e", "set +e"),
    *("set -u", "set -x", "echo $NOPE", "echo ${NOPE:-a}", "exit $?", "return 1", "check # x"),
    *("echo $(check)", "A=$(check)", "echo `exit 1`", "$(check)", "echo ${NOPE:=a} ${NOPE?}"),
]


def _script(rng: random.Random, depth: int) -> str:
    choice = rng.random()
    if depth == 0 or choice < 0.3:
        return rng.choice(_PIECES)
    a, b = _script(rng, depth - 1), _script(rng, depth - 1)
    forms = [
        f"{a} || {b}",
        f"{a} && {b}",
        f"{a} | {b}",
        f"{{ {a}; {b}; }}",
        f"( {a}; {b} )",
        f"! {a}",
        f"if {a}; then {b}; fi",
        f"if {a}; then {b}; else {_script(rng, depth - 1)}; fi",
        f"{a}\n{b}",
        f"{a} ||\n  {b}",
    ]
    return rng.choice(forms)


def test_every_script_judged_unable_to_fail_exits_0_in_the_shells(shell: Shell) -> None:
    """Generated scripts of exits, groups, branches and lists: whatever the reading calls
    unable to fail, dash and bash run to status 0 with the check failing and passing."""
    rng = random.Random(20250101)
    scripts = ["; ".join(_script(rng, 3) for _ in range(rng.randint(1, 3))) for _ in range(300)]
    judged = [s for s in scripts if always_succeeds(["sh", "-c", s])]
    assert len(judged) > 50, "precondition: many scripts are judged unable to fail"
    wrong = {
        script: statuses
        for script in judged
        for statuses in [
            shell.statuses(["sh", "-c", script], check_passes=False)
            + shell.statuses(["sh", "-c", script], check_passes=True)
        ]
        if any(statuses)
    }
    assert wrong == {}


# Cases that pin each step of the reading (the mutation gate's survivors): how `sh`'s own
# flags, `set`, `if … elif … else`, pipelines, prefixes and redirections change what can fail.
# POSIX Shell Command Language 2.14 `set` (the options, `-`/`--`, `+` turning one off), 2.9.2
# (a pipeline's status is its last command's), 2.9.4.4 (`if`), 2.8.1 (a redirection error
# ends the shell at a special built-in), and `sh` in the Shell & Utilities volume (`-o name`
# and `-c` with its operands, the first becoming $0). The real shells run each one first.
SHELLS_RUN_TO_0 = [
    ["bash", "-o", "noglob", "-c", "check | true"],  # `-o name` other than pipefail
    ["sh", "-o", "errexit", "-c", "true", "probe"],  # an operand after the script is $0
    ["sh", "-c", "! exit 0"],  # `exit` in a lone command ends the shell: `!` never applies
    ["bash", "-o", "pipefail", "-c", "exit 1 | true && exit 1; true"],  # the pipeline failed
    ["sh", "-c", "check | check | true"],  # only the last command's status counts
    ["sh", "-c", "true | exit 1 | true"],  # `exit` ends only its part of the pipeline
    ["sh", "-c", "{ true; } >/dev/null 2>&1"],
    ["sh", "-c", "(check) 2>/dev/null; true"],
    ["sh", "-c", "echo ok <&1"],  # to an open descriptor
    ["sh", "-c", "echo $(set -o pipefail)"],  # dash refuses it, ending only the subshell
    ["sh", "-ec", "if if true; then true; fi; check; then true; fi; true"],  # still a condition
    ["sh", "-c", "if exit 0; then exit 1; fi"],  # the condition ended the shell
    ["sh", "-c", "if check; then true; elif check; then true; else true; fi"],
    ["sh", "-c", "if true; then true; else exit 1; fi"],  # the else never runs
    ["sh", "-c", "exec"],  # `exec` alone changes nothing and succeeds
    ["sh", "-c", "exec nohup true; exit 1"],  # the shell became nohup: `exit 1` never runs
    ["sh", "-c", "exec cat /etc/hosts"],
    ["sh", "-c", "set - -h; true"],  # after `-`, -h is an operand, not an option
    ["sh", "-c", "set -o; true"],  # `set -o` alone prints the options
    ["sh", "-c", "set -x -o noglob; true"],
    ["bash", "-c", "set -x; check | true"],  # -x leaves pipefail off
]

SHELLS_CAN_EXIT_NON_0 = [
    ["sh", "-c", "-o", "true"],  # `-o` takes `true` as an option's name: no script
    ["sh", "-e", "-o", "noglob", "-c", "check; true"],  # -o noglob leaves -e on
    ["sh", "-o", "errexit", "-c", "check; true"],
    ["sh", "-o", "pipefail", "-o", "errexit", "-c", "true"],  # dash refuses pipefail
    ["sh", "-c", "{ }"],  # an empty list: the shells refuse it
    ["sh", "-c", "if true; then fi"],
    ["sh", "-c", "((true))"],  # bash: arithmetic, `true` is 0, status 1
    ["sh", "-c", "if ! check; then exit 1; elif true; then true; fi"],
    ["sh", "-c", "if check; then ! check; elif true; then true; fi"],
    ["sh", "-c", "if check; then ! check; else true; fi"],
    ["sh", "-c", "if check; then ! check; fi"],
    ["sh", "-c", "echo ok >/nonexistent/x 2>&1"],  # the first redirection fails
    ["sh", "-c", ": >/nonexistent/x || true"],  # dash ends at a special built-in's error
    ["sh", "-c", "nohup"],  # nohup with no command exits 125
    ["sh", "-c", "set `echo -h`; true"],  # dash: "set: Illegal option -h"
    ["sh", "-c", "TG_X=-h; set $TG_X"],
    ["sh", "-c", "set +h; true"],  # dash refuses +h as it refuses -h
    ["sh", "-c", "set -h"],
    ["sh", "-c", "set -h -o noglob; true"],
    ["sh", "-c", "set -hx; true"],
    ["sh", "-c", "set -x -e; check; true"],  # -e in a later argument
    ["bash", "-c", "set -o pipefail; set -x; check | true"],  # -x leaves pipefail on
    ["bash", "-c", "set -o pipefail -x; check | true"],
    ["sh", "-c", "set -u; set -x; echo $TG_UNSET"],  # -x leaves nounset on
    # an operator where a command must start: the shells refuse the script (2.10's grammar)
    ["sh", "-c", "&& true"],
    ["sh", "-c", ";; true"],
    ["sh", "-c", "true; && true"],
    ["sh", "-c", "true | && true"],
    ["sh", "-c", "true && ;; true"],
    ["sh", "-c", "! && true"],
]


@pytest.mark.parametrize("command", SHELLS_RUN_TO_0, ids=lambda c: repr(c[1:]))
def test_a_command_the_shells_run_to_0_cannot_fail(command: list[str], shell: Shell) -> None:
    for passes in (False, True):
        assert set(shell.statuses(command, check_passes=passes)) == {0}, (
            f"precondition: the real shells exit 0 (check passes: {passes})"
        )
    assert always_succeeds(command)


@pytest.mark.parametrize("command", SHELLS_CAN_EXIT_NON_0, ids=lambda c: repr(c[1:]))
def test_a_command_a_shell_can_end_non_zero_can_fail(command: list[str], shell: Shell) -> None:
    statuses = shell.statuses(command, check_passes=False)
    statuses += shell.statuses(command, check_passes=True)
    assert any(statuses), "precondition: dash or bash exits non-zero"
    assert not always_succeeds(command)


def _groups(depth: int) -> str:
    return "{ " * depth + "true; " + "}; " * (depth - 1) + "}"


def test_the_reading_follows_exactly_thirty_two_levels(shell: Shell) -> None:
    """_MAX_DEPTH is 32: `true` inside 31 groups is read, inside 32 it is not, after any
    number of commands before it; each `$(…)` takes two levels (its command and its own)."""
    scripts = [_groups(31), _groups(32), "true; " + _groups(31), "true; " + _groups(32)]
    scripts += [_substitutions(15), _substitutions(16)]
    for script in scripts:
        assert set(shell.statuses(["sh", "-c", script], check_passes=False)) == {0}, script
    assert always_succeeds(["sh", "-c", _groups(31)])
    assert not always_succeeds(["sh", "-c", _groups(32)])
    assert always_succeeds(["sh", "-c", "true; " + _groups(31)])
    assert not always_succeeds(["sh", "-c", "true; " + _groups(32)])
    assert always_succeeds(["sh", "-c", _substitutions(15)])
    assert not always_succeeds(["sh", "-c", _substitutions(16)])


@pytest.mark.parametrize(
    ("command", "succeeds"),
    [
        (["sh", "-c", "echo <redacted>"], True),
        (["sh", "-c", "echo -p<redacted> && exit 0"], True),
        (["sh", "-c", "redis-cli -a <redacted> ping"], False),
    ],
)
def test_a_redacted_value_is_one_word_never_a_redirection(
    command: list[str], succeeds: bool
) -> None:
    """doctor reads live objects redacted (cluster/redact.py): `echo s3cret` reads
    `echo <redacted>`, whose `<` and `>` are the marker's, not the shell's redirections."""
    assert always_succeeds(command) is succeeds
