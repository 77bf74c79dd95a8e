"""A `sh -c` script's tokens, as POSIX sh recognises them (Shell Command Language 2.3, Token
Recognition), as far as lint reads a script: words with their quotes removed, operators,
whether a word expands a parameter, and the tokens of the commands whose output it holds
(`$(…)`, backquotes). Arithmetic (`$((…))`), what the shell would refuse (an open quote, a
`${…}` form dash does not know) and what dash and bash read differently give None: the
reader cannot follow it.
"""

import re

from msgspec import Struct

from truegreen.redacted import REDACTED

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
# Nested `${…}`, `$(…)` and backquotes are read by recursion: deeper than this is not
# followed, so no script can exhaust Python's stack.
_MAX_DEPTH = 64
# 2.6.3: inside backquotes a backslash quotes only these (and `"` inside double quotes).
_BACKQUOTE_ESCAPES = frozenset("$`\\")


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
    substitutions: "tuple[tuple[Token, ...], ...]" = ()
    """The tokens of each command whose output it holds (`$(…)`, backquotes, 2.6.3): each
    runs in a subshell, so its `exit` or `${x?}` ends only that."""


class Operator(Struct, frozen=True):
    """A control or redirection operator; a redirection keeps its descriptor (`2>`)."""

    text: str


Token = Word | Operator


class _Lexer:
    """Reads a script from position to its end or, for the script of a `$(…)` (closes), to
    the `)` that closes it; depth counts the `${…}` and substitutions it is nested in."""

    def __init__(self, script: str, position: int = 0, depth: int = 0, closes: bool = False):
        self.script = script
        self.position = position
        self.depth = depth
        self.closes = closes
        self.open_parentheses = 0
        self.tokens: list[Token] = []
        self.text: list[str] = []
        self.value: list[str] = []
        self.substitutions: list[tuple[Token, ...]] = []
        self.in_word = False
        self.expands = False
        self.may_abort = False

    def end_word(self) -> None:
        if self.in_word:
            self.tokens.append(
                Word(
                    "".join(self.text),
                    "".join(self.value),
                    self.expands,
                    self.may_abort,
                    tuple(self.substitutions),
                )
            )
        self.text, self.value, self.substitutions = [], [], []
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
            elif script.startswith(REDACTED, self.position):
                # doctor reads live objects redacted (cluster/redact.py): `echo s3cret` reads
                # `echo <redacted>`, whose `<` and `>` were never redirections.
                self.add(REDACTED, REDACTED)
                self.position += len(REDACTED)
            elif operator == ")" and self.closes and not self.open_parentheses:
                self.end_word()
                self.position += 1
                return self.tokens
            elif operator is not None:
                self.open_parentheses += {"(": 1, ")": -1}.get(operator, 0)
                self.add_operator(operator)
            elif not self.read_quoted_or_expansion(char, quoted=False):
                return None
        if self.closes:
            return None  # an open `$(`: the shell refuses the script
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
            return self.read_backquoted(quoted)
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
                if not self.read_backquoted(quoted=True):
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
            if script.startswith("((", start + 1) or self.depth >= _MAX_DEPTH:
                return False  # arithmetic, or nested too deep: not followed
            inner = _Lexer(script, start + 2, self.depth + 1, closes=True)
            found = inner.read()
            if found is None:
                return False
            self.substitutions.append(tuple(found))
            self.add(script[start : inner.position], script[start : inner.position])
            self.position = inner.position
            return True
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

    def read_backquoted(self, quoted: bool) -> bool:
        """`` `…` ``, the older form of `$(…)` (2.6.3): its script is the text up to the next
        backquote no backslash quotes, with those backslashes removed."""
        script, start = self.script, self.position
        escapes = _BACKQUOTE_ESCAPES | ({'"'} if quoted else set())
        inner: list[str] = []
        position = start + 1
        while position < len(script) and script[position] != "`":
            if script[position] == "\\" and script[position + 1 : position + 2] in escapes:
                position += 1
            inner.append(script[position])
            position += 1
        if position >= len(script):
            return False  # an open backquote: the shell refuses the script
        if self.depth >= _MAX_DEPTH:
            return False
        found = _Lexer("".join(inner), depth=self.depth + 1).read()
        if found is None:
            return False
        self.substitutions.append(tuple(found))
        self.add(script[start : position + 1], script[start : position + 1])
        self.position = position + 1
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
    return _Lexer(join_continued_lines(script)).read()


# What ends a word: a blank, a newline or an operator's first character. A `#` after one starts
# a comment (2.3 rule 9), and one ends a here-document's delimiter word (2.7.4).
_ENDS_A_WORD = frozenset(" \t\n;&|()<>")


class _HereDocument(Struct, frozen=True):
    """A here-document the line holds (2.7.4): its delimiter with the quotes removed, whether
    any part of it was quoted (its text then keeps every backslash), and whether `<<-` strips
    the lines' leading tabs."""

    delimiter: str
    quoted: bool
    strips_tabs: bool


def join_continued_lines(script: str) -> str:
    """The script with its line continuations removed, as the shell removes them before it
    splits the script into tokens (POSIX Shell Command Language 2.2.1: a backslash that is not
    quoted, followed by a newline; inside double quotes too, 2.2.3). Charts wrap long commands
    so (`cd /w && \\` then `torchrun …`). A backslash-newline stays where the backslash is no
    escape: inside single quotes (2.2.2), at the end of a comment (2.3 rule 9: the comment runs
    to the newline, as dash and bash read it), after an escaped backslash (`\\\\`), and in
    the text of a here-document whose delimiter is quoted (2.7.4; with an unquoted delimiter
    the text loses them as double-quoted text does)."""
    joined: list[str] = []
    here_documents: list[_HereDocument] = []
    position = 0
    while position < len(script):
        char = script[position]
        if char == "\\":
            if script.startswith("\n", position + 1):
                position += 2  # 2.2.1: the continuation goes
                continue
            joined.append(script[position : position + 2])
            position += 2
        elif char == "'":
            end = script.find("'", position + 1)
            stop = len(script) if end < 0 else end + 1
            joined.append(script[position:stop])
            position = stop
        elif char == '"':
            position = _join_double_quoted(script, position, joined)
        elif script.startswith(REDACTED, position):
            joined.append(REDACTED)  # one word, as the lexer reads it: no `<<` in it
            position += len(REDACTED)
        elif char == "#" and (not joined or joined[-1][-1:] in _ENDS_A_WORD):
            end = script.find("\n", position)
            stop = len(script) if end < 0 else end
            joined.append(script[position:stop])
            position = stop
        elif script.startswith("<<", position) and not script.startswith("<<<", position):
            position = _here_document(script, position, joined, here_documents)
        elif char == "\n" and here_documents:
            joined.append(char)
            position = _join_here_documents(script, position + 1, joined, here_documents)
            here_documents = []
        else:
            joined.append(char)
            position += 1
    return "".join(joined)


def _join_double_quoted(script: str, position: int, joined: list[str]) -> int:
    """Copies a double-quoted piece (2.2.3) from its opening quote, without its continuations;
    returns the position after its closing quote (the script's end where none closes it)."""
    joined.append('"')
    position += 1
    while position < len(script) and script[position] != '"':
        if script[position] == "\\":
            if not script.startswith("\n", position + 1):
                joined.append(script[position : position + 2])
            position += 2
        else:
            joined.append(script[position])
            position += 1
    joined.append(script[position : position + 1])
    return position + 1


def _here_document(
    script: str, position: int, joined: list[str], here_documents: list[_HereDocument]
) -> int:
    """Copies `<<` or `<<-` and the delimiter word after it, noting the here-document whose
    text starts at the next line; returns the position after the word."""
    strips_tabs = script.startswith("<<-", position)
    start, position = position, position + (3 if strips_tabs else 2)
    while position < len(script) and script[position] in _BLANKS:
        position += 1
    word: list[str] = []
    quoted = False
    while position < len(script) and script[position] not in _ENDS_A_WORD:
        char = script[position]
        if char in "'\"":
            end = script.find(char, position + 1)
            stop = len(script) if end < 0 else end
            word.append(script[position + 1 : stop])
            position, quoted = stop + 1, True
        elif char == "\\":
            word.append(script[position + 1 : position + 2])
            position, quoted = position + 2, True
        else:
            word.append(char)
            position += 1
    position = min(position, len(script))
    joined.append(script[start:position])
    if word:
        here_documents.append(_HereDocument("".join(word), quoted, strips_tabs))
    return position


def _join_here_documents(
    script: str, position: int, joined: list[str], here_documents: list[_HereDocument]
) -> int:
    """Copies the text of each here-document, line by line up to its delimiter's line (2.7.4),
    without its continuations where the delimiter was not quoted; returns the position after
    the last one."""
    for document in here_documents:
        while position < len(script):
            end = script.find("\n", position)
            stop = len(script) if end < 0 else end + 1
            line = script[position:stop]
            position = stop
            text = line.rstrip("\n")
            if (text.lstrip("\t") if document.strips_tabs else text) == document.delimiter:
                joined.append(line)
                break
            trailing = len(text) - len(text.rstrip("\\"))
            if not document.quoted and line.endswith("\n") and trailing % 2:
                joined.append(text[:-1])  # 2.7.4: a backslash there escapes as in "…"
            else:
                joined.append(line)
    return position
