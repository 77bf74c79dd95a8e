"""Whether an exec probe's command can fail: read as the shell reads it, conservatively.

The kubelet runs the command without a shell and counts any exit status but 0 as a failure
(kubernetes pkg/probe/exec/exec.go, execProber.Probe), so `sh -c SCRIPT` is what makes a
shell. A command "cannot fail" only when no path through it can end with a status other than
0; anything this reading does not follow counts as able to fail, since the rule's remedy is to
change or remove the probe.

Without a shell the runtime starts the program the first word names, found on the container's
PATH, with the other words as its arguments, which no shell parses (the kubelet only expands
`$(VAR)` from the container's env: pkg/kubelet/container/helpers.go
ExpandContainerCommandOnlyStatic). A shell's special built-in (`exit`, `:`, `set`: POSIX 2.14
says they "need not be provided in a manner accessible via the exec family of functions", and
a program of such a name is assumed absent) is no program there: the runtime cannot start it
(runc: `exec: "exit": executable file not found in $PATH`) and answers
with an error, not an exit status (containerd internal/cri/server/container_execsync.go
execInternal, "failed to start exec"; CRI-O internal/oci/runtime_oci.go ExecSyncContainer,
ExecSyncError with exit code -1). The kubelet makes that error probe.Unknown (execProber.Probe),
records a warning event and throws the result away (pkg/kubelet/prober/worker.go doProbe,
"Prober error, throw away the result"; kubernetes issue 106682): such a probe never passes,
and never counts a failure either (`truegreen.lint.shells.names_no_program`).

The script is followed as POSIX sh runs it (Shell Command Language 2.9, 2.14): every
command's possible statuses (0 or not), and every point where the shell ends. `exit N` ends it
with N wherever it stands (inside `A || exit 1`, a `{ …; }` group, an `if` branch), a bare
`exit` with the status of the command before it, and `exec CMD` with CMD's; `A || B` runs B
only after A failed, `A && B` only after A succeeded; `if` runs a branch by its condition; a
pipeline's status is its last command's (any command's under `pipefail`); `set -e` (or
`sh -e`) ends the shell at a failing command, `set -u` at an unset variable. A command is
"always true" only when nothing in the container can make it fail: `true`, `:`, `exit 0`,
`echo`, and `test` or `cat` of a path every container has (the kubelet mounts /etc/hosts,
/etc/hostname and /etc/resolv.conf into each one, and /proc/1 is the container's own first
process); any other command may succeed or fail. A command's output in a word (`$(…)`) comes
from a subshell: it ends nothing but that, and the status is the named command's (2.9.1).
Loops, `case`, functions, `eval`, `trap`, background jobs, here-documents, arithmetic and
nesting deeper than _MAX_DEPTH are not followed.
"""

import re
from collections.abc import Sequence

from msgspec import Struct

from truegreen.lint.shell_words import Operator, Token, Word, tokens
from truegreen.lint.shells import SHELLS, SPECIAL_BUILTINS

_ALWAYS_PRESENT_FILES = frozenset({"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"})
_ALWAYS_PRESENT_FOLDERS = frozenset({"/", "/proc", "/proc/1", "/proc/self", "/etc", "/dev"})
_TEST_FILE = frozenset({"-e", "-f", "-r", "-s"})
_TEST_FOLDER = frozenset({"-e", "-d", "-r", "-x"})
# Words that run the rest as a command; `exec` and `nohup` run it as a program found on PATH.
# (bash's `builtin` is not one: dash has no such command and exits 127.)
_PREFIXES = frozenset({"command", "exec", "nohup"})
_RUN_PROGRAMS = frozenset({"exec", "nohup"})
# Reserved words that start a construct this reading does not follow (bash's and ksh's too),
# or that cannot start a command at all.
_NOT_FOLLOWED = frozenset({"while", "until", "for", "case", "select", "function"})
_RESERVED = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "in", "}", "!"})
# Utilities that run other text as script, change how the shell ends, or make a variable
# read-only, after which assigning it (`${X:=…}` too) ends bash (bash's `declare -r`).
_NOT_FOLLOWED_UTILITIES = frozenset({"eval", ".", "source", "trap", "declare", "typeset"})
_SET_LETTERS = frozenset("abCeEfmnuvx")  # the letters dash and bash both know
# The `set -o` names every POSIX shell knows; `pipefail` only bash, ksh, zsh and busybox's ash
# (dash 0.5.12, Debian's and Ubuntu's /bin/sh, refuses it and exits 2).
_SET_NAMES = frozenset(
    {"allexport", "errexit", "ignoreeof", "monitor", "noclobber", "noglob", "noexec", "nolog"}
    | {"notify", "nounset", "verbose", "vi", "xtrace"}
)
_PIPEFAIL_SHELLS = frozenset({"bash", "ksh", "zsh", "ash"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_NUMBER = re.compile(r"[0-9]+")
_REDIRECTION = re.compile(r"[0-9]*(>>|>&|<&|&>|<>|>\||<|>)")
_SEPARATORS = frozenset({";", "\n"})
# How deep groups, `if`s and subshells are followed (250 nested `{ }` would exhaust
# Python's stack). Probes nest a few levels; dash and bash run far deeper scripts to 0, so a
# deeper one is "not followed" (able to fail), never a crash. 32 leaves room on the stack for
# a caller's own frames and for instrumented runs (the mutation gate's trampolines triple the
# frames a level takes: at 64, 64 nested groups overflowed the stack there).
_MAX_DEPTH = 32
_ENDS_COMMAND = frozenset({";", "\n", "&&", "||", "|", "&", "(", ")", ";;"})

OK, FAILED = True, False
_NONE: frozenset[bool] = frozenset()
_OK = frozenset({OK})
_FAILED = frozenset({FAILED})
_EITHER = frozenset({OK, FAILED})


class _Flow(Struct, frozen=True):
    """Where a piece of script may lead: the statuses the shell may go on with (OK is 0), and
    those it may end with there."""

    goes_on: frozenset[bool] = _NONE
    ends: frozenset[bool] = _NONE


_UNREACHED = _Flow()


class _NotFollowedError(Exception):
    """The script holds something this reading does not follow: it may fail."""


def _basename(word: str) -> str:
    return word.rpartition("/")[2]


def always_succeeds(command: Sequence[str]) -> bool:
    """Whether an exec probe's command exits 0 whatever state the container is in."""
    words = [str(word) for word in command]
    if not words:
        return False
    shell = _basename(words[0])
    if shell not in SHELLS:
        return _program_always_succeeds(words)
    knows_pipefail = shell in _PIPEFAIL_SHELLS
    invocation = _shell_script(words[1:], knows_pipefail)
    if invocation is None or invocation.may_refuse:
        return False
    reader = _Reader(tokens(invocation.script), knows_pipefail)
    reader.errexit, reader.pipefail = invocation.errexit, invocation.pipefail
    try:
        flow = reader.script()
    except _NotFollowedError:
        return False
    return flow.goes_on | flow.ends == _OK


def _program_always_succeeds(words: list[str]) -> bool:
    """A command run without a shell: the program its first word names, with the other words
    as its arguments, which no shell reads (`true || x` is `true` given two arguments).
    `nohup` runs the rest the same way, after any number of nohups; with nothing to run it
    exits 125, and a special built-in it cannot find, 127 (POSIX nohup)."""
    start = 0
    while _basename(words[start]) == "nohup" and start < len(words) - 1:
        start += 1
    name = words[start]
    return name not in SPECIAL_BUILTINS and _always_true(_basename(name), words[start + 1 :])


class _Invocation(Struct, frozen=True):
    """`sh [-flags] -c SCRIPT`: the script and the options its flags turn on."""

    script: str
    errexit: bool
    pipefail: bool
    may_refuse: bool
    """A flag the shell may not know (dash refuses `-o pipefail` and exits 2)."""


def _shell_script(arguments: list[str], knows_pipefail: bool) -> _Invocation | None:
    """The script of `sh [-flags] -c SCRIPT`; None when the shell reads a script file."""
    errexit = pipefail = reads_script = may_refuse = False
    position = 0
    while position < len(arguments):
        argument = arguments[position]
        if argument in ("-o", "+o") and position + 1 < len(arguments):
            name = arguments[position + 1]
            on = argument == "-o"
            pipefail |= on and name == "pipefail"
            errexit |= on and name == "errexit"
            may_refuse |= name not in _SET_NAMES and not (knows_pipefail and name == "pipefail")
            position += 2
            continue
        if len(argument) < 2 or argument[0] != "-" or argument == "--":
            break
        errexit |= "e" in argument
        reads_script |= "c" in argument
        position += 1
    if not reads_script or position >= len(arguments):
        return None
    return _Invocation(arguments[position], errexit, pipefail, may_refuse)


class _Reader:
    """Follows one script (POSIX 2.10's grammar, the part named in the module's docstring),
    judging each piece as it reads it. The options only ever turn on: a script that turns
    one off is judged as if it had stayed on, which finds more ways to fail, never fewer."""

    def __init__(
        self, script: Sequence[Token] | None, knows_pipefail: bool, depth: int = 0
    ) -> None:
        self.tokens = list(script or ())
        self.position = 0
        self.knows_pipefail = knows_pipefail
        self.errexit = self.pipefail = self.nounset = False
        self.in_condition = 0
        self.depth = depth

    # -- reading the tokens ----------------------------------------------------------------

    def peek(self) -> Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def at_word(self, *texts: str) -> bool:
        token = self.peek()
        return isinstance(token, Word) and token.text in texts

    def at_operator(self, *texts: str) -> bool:
        token = self.peek()
        return isinstance(token, Operator) and token.text in texts

    def expect_word(self, text: str) -> None:
        if not self.at_word(text):
            raise _NotFollowedError
        self.position += 1

    def skip_newlines(self) -> None:
        while self.at_operator("\n"):
            self.position += 1

    # -- the grammar, judged ---------------------------------------------------------------

    def script(self) -> _Flow:
        """The whole script, started with status 0."""
        if not self.tokens:
            raise _NotFollowedError  # an empty script, or one the shell refuses
        flow = self.compound_list(_OK, stops=())
        if self.peek() is not None:
            raise _NotFollowedError  # a stray `)`, `fi` or `;;`: not a script the shell runs
        return flow

    def compound_list(self, before: frozenset[bool], stops: tuple[str, ...]) -> _Flow:
        """Lists separated by `;` or newlines, up to one of the reserved words in stops (or a
        `)` when it is one of them)."""
        self.skip_newlines()
        ends: frozenset[bool] = _NONE
        goes_on = before
        read_one = False
        while self.peek() is not None and not self.at_stop(stops):
            flow = self.and_or(goes_on)
            if self.errexit and not self.in_condition and FAILED in flow.goes_on:
                # 2.8.1 and `set -e`: a failing list ends the shell with that failure
                flow = _Flow(flow.goes_on - _FAILED, flow.ends | _FAILED)
            ends |= flow.ends
            goes_on = flow.goes_on
            read_one = True
            if self.at_operator(*_SEPARATORS):
                self.position += 1
                self.skip_newlines()
            elif self.peek() is not None and not self.at_stop(stops):
                raise _NotFollowedError  # `&`, `;;`, a function's `(`
        if not read_one:
            raise _NotFollowedError  # an empty list: the shell refuses `{ }` or `if then`
        return _Flow(goes_on, ends)

    def at_stop(self, stops: tuple[str, ...]) -> bool:
        return self.at_word(*stops) or (")" in stops and self.at_operator(")"))

    def and_or(self, before: frozenset[bool]) -> _Flow:
        """`A && B || C`, left to right: `&&` runs the next pipeline only after a success,
        `||` only after a failure, each with the status that let it run."""
        flow = self.pipeline(before)
        goes_on, ends = flow.goes_on, flow.ends
        while self.at_operator("&&", "||"):
            runs_after = _OK if self.peek() == Operator("&&") else _FAILED
            self.position += 1
            self.skip_newlines()
            runs = goes_on & runs_after
            following = self.pipeline(runs)
            goes_on = (goes_on - runs) | following.goes_on
            ends |= following.ends
        return _Flow(goes_on, ends)

    def pipeline(self, before: frozenset[bool]) -> _Flow:
        """`[!] A | B`: every command but a lone one runs in a subshell of its own (2.9.2),
        so its `exit` ends only that; ksh and zsh run the last one in the shell itself, so
        its ending counts both ways."""
        negated = self.at_word("!")
        if negated:
            self.position += 1
        flows = [self.command(before)]
        while self.at_operator("|"):
            self.position += 1
            self.skip_newlines()
            flows.append(self.command(before))
        if len(flows) == 1:
            flow = flows[0]
        else:
            statuses = [each.goes_on | each.ends for each in flows]
            if self.pipefail:
                last = frozenset(
                    ({OK} if all(OK in each for each in statuses) else set())
                    | ({FAILED} if any(FAILED in each for each in statuses) else set())
                )
            else:
                last = statuses[-1]
            flow = _Flow(last, flows[-1].ends)
        if negated:
            flow = _Flow(frozenset(not status for status in flow.goes_on), flow.ends)
        return flow

    def command(self, before: frozenset[bool]) -> _Flow:
        """One command. Groups, branches and subshells nest by recursion: past _MAX_DEPTH
        levels the script is not followed, so no script can exhaust Python's stack."""
        if self.depth >= _MAX_DEPTH:
            raise _NotFollowedError
        self.depth += 1
        try:
            return self.compound_or_simple(before)
        finally:
            self.depth -= 1

    def compound_or_simple(self, before: frozenset[bool]) -> _Flow:
        token = self.peek()
        if isinstance(token, Operator) and token.text == "(":
            return self.subshell(before)
        if not isinstance(token, Word):
            raise _NotFollowedError
        if token.text == "{":
            self.position += 1
            flow = self.compound_list(before, stops=("}",))
            self.expect_word("}")
            return self.with_redirections(flow)
        if token.text == "if":
            return self.with_redirections(self.if_clause(before))
        if token.text in _NOT_FOLLOWED or token.text in _RESERVED:
            raise _NotFollowedError
        return self.simple_command(before)

    def subshell(self, before: frozenset[bool]) -> _Flow:
        """`( list )`: its ending is its status (2.9.4)."""
        self.position += 1
        if self.at_operator("("):
            raise _NotFollowedError  # `((`: arithmetic
        flow = self.compound_list(before, stops=(")",))
        if not self.at_operator(")"):
            raise _NotFollowedError
        self.position += 1
        return self.with_redirections(_Flow(flow.goes_on | flow.ends))

    def if_clause(self, before: frozenset[bool]) -> _Flow:
        """`if A; then B; [elif C; then D;] [else E;] fi`: the status of the branch that ran,
        or 0 when none did (2.9.4.4)."""
        self.position += 1
        goes_on: frozenset[bool] = _NONE
        ends: frozenset[bool] = _NONE
        not_taken = before
        branches_left = True
        while branches_left:
            self.in_condition += 1  # `set -e` does not end the shell at a condition
            condition = self.compound_list(not_taken, stops=("then",))
            self.in_condition -= 1
            self.expect_word("then")
            ends |= condition.ends
            branch = self.compound_list(condition.goes_on & _OK, stops=("elif", "else", "fi"))
            goes_on |= branch.goes_on
            ends |= branch.ends
            not_taken = condition.goes_on & _FAILED
            branches_left = self.at_word("elif")
            if branches_left:
                self.position += 1
        if self.at_word("else"):
            self.position += 1
            otherwise = self.compound_list(not_taken, stops=("fi",))
            goes_on |= otherwise.goes_on
            ends |= otherwise.ends
        elif not_taken:
            goes_on |= _OK
        self.expect_word("fi")
        return _Flow(goes_on, ends)

    def with_redirections(self, flow: _Flow) -> _Flow:
        """A compound command's redirections, only the ones that cannot fail."""
        while isinstance(self.peek(), Operator) and self.redirection() is not None:
            if not self.redirection_is_safe():
                raise _NotFollowedError
        return flow

    def redirection(self) -> str | None:
        token = self.peek()
        if not isinstance(token, Operator):
            return None
        matched = _REDIRECTION.fullmatch(token.text)
        return matched.group(1) if matched else None

    def redirection_is_safe(self) -> bool:
        """Reads one redirection; whether it cannot fail: to or from /dev/null, or to another
        open descriptor (`2>&1`)."""
        operator = self.redirection()
        self.position += 1
        target = self.peek()
        if not isinstance(target, Word):
            raise _NotFollowedError  # `echo >` alone: the shell refuses it
        self.position += 1
        self.follow_substitutions(target)
        if target.value == "/dev/null":
            return True
        return operator in (">&", "<&") and _NUMBER.fullmatch(target.value) is not None

    def simple_command(self, before: frozenset[bool]) -> _Flow:
        """Assignments, words and redirections, up to an operator that ends a command."""
        words: list[Word] = []
        assigned: list[Word] = []
        safe = True
        # Never empty: compound_or_simple calls this only at a Word, which the loop takes first
        # (`&& x` and `;;` stop there, at an operator where a command must start).
        while (token := self.peek()) is not None:
            if isinstance(token, Operator):
                if token.text in _ENDS_COMMAND:
                    break
                if self.redirection() is None:  # `<<`: a here-document
                    raise _NotFollowedError
                safe &= self.redirection_is_safe()
                continue
            if not words and _ASSIGNMENT.match(token.text):
                assigned.append(token)
            else:
                words.append(token)
            self.position += 1
        every = words + assigned
        for word in every:
            self.follow_substitutions(word)
        if not before:
            return _UNREACHED
        flow = self.utility([word.value for word in words], before)
        if not words and any(word.substitutions for word in assigned):
            # 2.9.1: with no command name, the status is the last command substitution's
            flow = _Flow(_EITHER)
        if not safe:  # the redirection may fail: the command does not run (2.8.1)
            flow = _Flow(flow.goes_on | _FAILED, flow.ends | _FAILED)
        if any(word.may_abort for word in every) or (
            self.nounset and any(word.expands for word in every)
        ):
            flow = _Flow(flow.goes_on, flow.ends | _FAILED)
        return flow

    def follow_substitutions(self, word: Word) -> None:
        """A command's output in a word (`$(…)`, backquotes) comes from a subshell (2.6.3):
        its `exit`, `set -e` or `${x?}` end only that, and where the command has a name, its
        status is the command's, not the substitution's (2.9.1), so `echo "$(date)"` cannot
        fail. The shell parses the substitution with the script, so one this reading cannot
        follow leaves the whole script not followed."""
        for script in word.substitutions:
            _Reader(script, self.knows_pipefail, self.depth + 1).script()

    def utility(self, words: list[str], before: frozenset[bool]) -> _Flow:
        """A command by its name and arguments, run after a command with a status in before."""
        if not words:
            return _Flow(_OK)  # only assignments or redirections
        # `exec`, `command` and `nohup` run the rest of the words: read in a loop, since a
        # script may stack thousands of them.
        replaced = runs_program = False
        start = 0
        while words[start] in _PREFIXES and not (runs_program and words[start] != "nohup"):
            if start == len(words) - 1:
                flow = _Flow(_OK) if words[start] == "exec" else _Flow(_EITHER)
                break
            replaced |= words[start] == "exec"
            runs_program |= words[start] in _RUN_PROGRAMS
            start += 1
        else:
            name, arguments = words[start], words[start + 1 :]
            if runs_program and (name == ":" or not _always_true(_basename(name), arguments)):
                # a program found on PATH: the shell's own `:`, `exit` or `command` are not
                # there, and exec's search finds no built-in (POSIX 2.14 exec): status 127
                flow = _Flow(_EITHER)
            else:
                flow = self.named_utility(words[start:], before)
        # after `exec`, the command is the shell: its status is the shell's ending
        return _Flow(ends=flow.goes_on | flow.ends) if replaced else flow

    def named_utility(self, words: list[str], before: frozenset[bool]) -> _Flow:
        """A command that is not `exec` or a prefix, by its name and arguments."""
        name, arguments = words[0], words[1:]
        if name == "exit":
            return _Flow(ends=_exit_status(arguments, before))
        if name == "set":
            return self.set(arguments)
        if name in _NOT_FOLLOWED_UTILITIES:
            raise _NotFollowedError
        if name in SPECIAL_BUILTINS and name != ":":
            return _Flow(_EITHER, _FAILED)  # may end the shell, by its own rule or an error
        return _Flow(_OK if _always_true(_basename(name), arguments) else _EITHER)

    def set(self, arguments: list[str]) -> _Flow:
        """`set -e`, `set -o pipefail`, `set -euo pipefail`: the options turned on; an option
        the shell may not know ends it (2.14, set)."""
        known = True
        position = 0
        while position < len(arguments):
            argument = arguments[position]
            if "$" in argument or "`" in argument:
                return _Flow(_EITHER, _FAILED)  # it may expand to an option the shell refuses
            if argument in ("-", "--") or argument[:1] not in ("-", "+"):
                break
            on = argument[0] == "-"
            for letter in argument[1:]:
                if letter == "o":
                    position += 1
                    name = arguments[position] if position < len(arguments) else ""
                    known &= (
                        name in _SET_NAMES
                        or not name
                        or (self.knows_pipefail and name == "pipefail")
                    )
                    self.turn_on(name, on)
                else:
                    known &= letter in _SET_LETTERS
                    self.turn_on({"e": "errexit", "u": "nounset"}.get(letter, ""), on)
            position += 1
        return _Flow(_OK) if known else _Flow(_EITHER, _FAILED)

    def turn_on(self, option: str, on: bool) -> None:
        if on:
            self.errexit |= option == "errexit"
            self.pipefail |= option == "pipefail"
            self.nounset |= option == "nounset"


def _exit_status(arguments: list[str], before: frozenset[bool]) -> frozenset[bool]:
    """`exit` with no operand: the last command's status; `exit N`: N modulo 256 (dash refuses
    anything but digits, with status 2)."""
    if not arguments:
        return before
    if len(arguments) == 1 and _NUMBER.fullmatch(arguments[0]):
        return _OK if int(arguments[0]) % 256 == 0 else _FAILED
    return _EITHER


def _always_true(name: str, arguments: list[str]) -> bool:
    """A command nothing in the container can make fail."""
    if name in ("true", ":"):
        return not arguments
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
