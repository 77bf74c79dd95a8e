"""A `sh -c` script's tokens, as POSIX sh recognises them (Shell Command Language 2.3, Token
Recognition), as far as lint reads a script: words with their quotes removed, operators, and
whether a word expands a parameter. Anything whose words depend on another command's output
(`$(…)`, backquotes, `$((…))`) or that the shell would refuse (an open quote) gives None:
the reader cannot follow it.
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


class Word(Struct, frozen=True):
    """One word: `text` as written (its quotes decide whether it is a reserved word or an
    assignment), `value` with the quotes removed (not expanded)."""

    text: str
    value: str
    expands: bool = False
    """It holds a parameter expansion (`$x`, `${x}`): under `set -u`, an unset one ends the
    shell."""
    may_abort: bool = False
    """It holds `${x?…}` or `${x=…}`, which end the shell when x is unset (2.6.2)."""


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
            elif not self.read_quoted_or_expansion(char):
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

    def read_quoted_or_expansion(self, char: str) -> bool:
        """One piece of a word; False where the reader cannot follow the script."""
        script, start = self.script, self.position
        if char == "'":
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
            return self.read_expansion(quoted=False)
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
            end = script.find("}", start)
            inner = script[start + 2 : end]
            if end < 0 or any(quote in inner for quote in "'\"`$"):
                return False
            self.may_abort |= "?" in inner or "=" in inner
            self.expands = True
            self.add(script[start : end + 1], script[start : end + 1])
            self.position = end + 1
            return True
        if following == "'" and not quoted:
            self.position += 1  # bash's $'…': a quoted word
            return True
        self.expands = True
        self.add("$", "$")
        self.position += 1
        return True


def tokens(script: str) -> list[Token] | None:
    """The script's tokens, or None where the reader cannot follow it."""
    return _Lexer(script).read()
