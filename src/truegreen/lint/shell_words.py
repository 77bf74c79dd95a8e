"""A `sh -c` script's tokens, as POSIX sh recognises them (Shell Command Language 2.3, Token
Recognition), as far as lint reads a script: words with their quotes removed, operators, and
whether a word expands a parameter. Anything whose words depend on another command's output
(`$(…)`, backquotes, `$((…))`), that the shell would refuse (an open quote, a `${…}` form
dash does not know) or that dash and bash read differently gives None: the reader cannot
follow it.
"""

import re

from msgspec import Struct

# Longest first: POSIX 2.3 rule 2, an operator grows while the longer one is still an operator.
# `&>` is bash's "both outputs to", which probes often use.
_OPERATORS = (
    "&&",
    "||",
    ";;",
    ">>",
    ">&",
    "<&",
    "&>",
    "<<",
    "<>",
    ">|",
    ";",
    "&",
    "|",
    "<",
    ">",
    "(",
    ")",
    "\n",
)
_BLANKS = frozenset(" \t")
_DIGITS = re.compile(r"[0-9]+")
# POSIX 2.6.2: `${name…}` names a variable, a positional parameter or a special parameter;
# `${#name}` is a length. Anything else (`${}`, bash's `${!x}`) dash refuses: "Bad substitution".
_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]")
_LENGTH = re.compile(r"#(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+)(?=})")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The operators after the name that dash and bash both know (2.6.2); bash's own (`${x:1}`,
# `${x/a/b}`, `${x^^}`) dash refuses, so the reader does not follow them.
_PARAMETER_OPERATOR = re.compile(r":?[-=?+]|%%?|##?")
# Nested `${…}` are read by recursion: deeper than this is not followed (review R6).
_MAX_DEPTH = 64


class Word(Struct, frozen=True):
    """One word: `text` as written (its quotes decide whether it is a reserved word or an
    assignment), `value` with the quotes removed (not expanded)."""

    text: str
    value: str
    expands: bool = False
    """It holds a parameter expansion (`$x`, `${x}`): under `set -u`, an unset one ends the
    shell."""
    may_abort: bool = False
    """It holds an expansion that may end the shell (2.6.2): `${x?…}` or `${x:?…}` when x is
    unset (or null), or `${x=…}`/`${x:=…}` where x cannot be assigned so: a positional or
    special parameter, or a variable of bash's own (`FUNCNAME`, `BASH_SOURCE`; bash 5.2
    ends the script). `${x-…}`, `${x:-…}`, `${x+…}`, `${x:+…}`, a `?` or `=` inside the word,
    and `${x=…}` of an ordinary variable (it assigns it) end nothing."""


class Operator(Struct, frozen=True):
    """A control or redirection operator; a redirection keeps its descriptor (`2>`)."""

    text: str


Token = Word | Operator


class _Lexer:
    def __init__(self, script: str) -> None:
        # 2.2.1: a backslash-newline outside single quotes joins the lines (charts wrap long
        # commands so); inside single quotes it would stay, which no probe relies on.
        self.script = script.replace("\\\n", "")
        self.position = 0
        self.tokens: list[Token] = []
        self.text: list[str] = []
        self.value: list[str] = []
        self.in_word = False
        self.expands = False
        self.may_abort = False
        self.depth = 0

    def end_word(self) -> None:
        if self.in_word:
            self.tokens.append(
                Word("".join(self.text), "".join(self.value), self.expands, self.may_abort)
            )
        self.text, self.value = [], []
        self.in_word = self.expands = self.may_abort = False

    def add(self, text: str, value: str) -> None:
        self.text.append(text)
        self.value.append(value)
        self.in_word = True

    def operator(self) -> str | None:
        return next((o for o in _OPERATORS if self.script.startswith(o, self.position)), None)

    def read(self) -> list[Token] | None:
        script = self.script
        while self.position < len(script):
            char = script[self.position]
            operator = self.operator()
            if char in _BLANKS:
                self.end_word()
                self.position += 1
            elif char == "#" and not self.in_word:  # 2.3 rule 9: a comment, to the newline
                end = script.find("\n", self.position)
                self.position = len(script) if end < 0 else end
            elif operator is not None:
                self.add_operator(operator)
            elif not self.read_quoted_or_expansion(char, quoted=False):
                return None
        self.end_word()
        return self.tokens

    def add_operator(self, operator: str) -> None:
        self.position += len(operator)
        number = "".join(self.text)
        if operator[0] in "<>" and self.in_word and _DIGITS.fullmatch(number):
            operator = number + operator  # 2.10.1: digits right before < or > name a descriptor
            self.text, self.value, self.in_word = [], [], False
        self.end_word()
        self.tokens.append(Operator(operator))

    def read_quoted_or_expansion(self, char: str, quoted: bool) -> bool:
        """One piece of a word (inside double quotes when quoted: only the word of a `${…}`
        there); False where the reader cannot follow the script."""
        script, start = self.script, self.position
        if char == "'":
            if quoted:
                return False  # dash keeps it as a letter in "${x:-'…'}", bash quotes with it
            end = script.find("'", start + 1)
            if end < 0:
                return False
            self.add(script[start : end + 1], script[start + 1 : end])
            self.position = end + 1
        elif char == '"':
            return self.read_double_quoted()
        elif char == "\\":
            self.add(script[start : start + 2], script[start + 1 : start + 2])
            self.position = start + 2
        elif char == "`":
            return False
        elif char == "$":
            return self.read_expansion(quoted)
        else:
            self.add(char, char)
            self.position += 1
        return True

    def read_double_quoted(self) -> bool:
        script = self.script
        self.add('"', "")
        self.position += 1
        while self.position < len(script) and script[self.position] != '"':
            char = script[self.position]
            if char == "\\" and script[self.position + 1 : self.position + 2] in (
                "$",
                "`",
                '"',
                "\\",
            ):
                self.add(script[self.position : self.position + 2], script[self.position + 1])
                self.position += 2
            elif char == "`":
                return False
            elif char == "$":
                if not self.read_expansion(quoted=True):
                    return False
            else:
                self.add(char, char)
                self.position += 1
        if self.position >= len(script):
            return False  # an open quote: the shell refuses the script
        self.add('"', "")
        self.position += 1
        return True

    def read_expansion(self, quoted: bool) -> bool:
        script, start = self.script, self.position
        following = script[start + 1 : start + 2]
        if following == "(":
            return False  # a command's output or arithmetic: not followed
        if following == "{":
            return self.read_braced(quoted)
        if following == "'" and not quoted:
            self.position += 1  # bash's $'…': a quoted word
            return True
        self.expands = True
        self.add("$", "$")
        self.position += 1
        return True

    def read_braced(self, quoted: bool) -> bool:
        """`${…}` (2.6.2): its name, its operator and its word, whose quotes and expansions
        are read as a word's are, up to the `}` that closes it; the piece is kept as written."""
        script, start = self.script, self.position
        if self.depth >= _MAX_DEPTH:
            return False
        length = _LENGTH.match(script, start + 2)
        name = _PARAMETER.match(script, start + 2)
        if length is not None:
            self.position = length.end()
        elif name is None:
            return False
        else:
            self.position = name.end()
            operator = _PARAMETER_OPERATOR.match(script, self.position)
            if operator is not None:
                self.position = operator.end()
                self.may_abort |= operator.group().endswith("?") or (
                    operator.group().endswith("=") and not _assignable(name.group())
                )
            elif not script.startswith("}", self.position):
                return False
        marks = len(self.text), len(self.value)
        self.depth += 1
        while self.position < len(script) and script[self.position] != "}":
            if not self.read_quoted_or_expansion(script[self.position], quoted):
                return False
        self.depth -= 1
        if self.position >= len(script):
            return False  # an open `${`: the shell refuses the script
        self.position += 1
        del self.text[marks[0] :], self.value[marks[1] :]
        self.expands = True
        self.add(script[start : self.position], script[start : self.position])
        return True


def _assignable(name: str) -> bool:
    """Whether `${name=…}` may assign name without ending the shell: an ordinary variable.
    bash refuses some of its own (FUNCNAME, BASH_ARGV, BASH_LINENO, BASH_SOURCE) and ends the
    script; its read-only ones (UID, EUID, PPID, SHELLOPTS, BASHOPTS) are always set."""
    return (
        _VARIABLE.fullmatch(name) is not None and name != "FUNCNAME" and not name.startswith("BASH")
    )


def tokens(script: str) -> list[Token] | None:
    """The script's tokens, or None where the reader cannot follow it."""
    return _Lexer(script).read()
