"""Passwords a command line gives a program by that program's own short options.

Part of redaction rule 5 (docs/snapshot.md; cluster/redact.py applies it): the named rule
redacts `--password x` because the flag's name says so; these flags' names do not.
- curl's `-u user:password` (`--user`, and `-U`/`--proxy-user` for its proxy): curl's
  docs/cmdline-opts/user.md, "The username and passwords are split up on the first colon".
  The user name is kept. Another tool's `-u` with a `:` in its value loses what follows it
  too (`docker run -u 1000:<redacted>`, `ffuf -u https:<redacted>`): a value is judged
  alone, the same whatever other rules did to the text around it, so that a second pass over
  the redacted text changes nothing.
- a MySQL or MariaDB client's `-pPASSWORD` (mysql, mysqldump, mysqladmin, mariadb…): MySQL
  Reference Manual, "Using Options on the Command Line": the short form's password "must
  follow the option letter with no intervening space". Only after `mysql` or `mariadb` stands
  earlier in the same string or argument list (any word holding it: a path, a socket): `-p`
  means something else to most programs. Found as text, not as a word, so that no other
  rule's `<redacted>` before it can make it one on a second pass (redaction is idempotent).
"""

import re

from truegreen.patterns import LazyPattern
from truegreen.redacted import REDACTED

USER_OPTIONS = frozenset({"-u", "--user", "-U", "--proxy-user"})
"""curl's options whose value is `user:password`."""

# The option (a word of its own, or a setting's value: `CURL_OPTS=-u …`), then its value
# attached or after blanks, quoted or not: the user name runs to the first `:` (never past a
# quote, a blank or an `=` where unquoted, so each try reads a short run: a line of `=-u=-u…`
# costs linear time), the password to the closing quote, or to a blank or quote when
# unquoted.
_USER_AND_PASSWORD = LazyPattern(
    r"(?<![^\s\"'=])(?P<flag>(?:-[uU]|--user|--proxy-user)[ \t]*)(?P<q>[\"'])?"
    r"(?P<user>(?(q)[^\"'\r\n:]*+|[^\s\"':=]*+)):"
    r"(?P<value>(?(q)(?:(?!(?P=q))[^\r\n])++|[^\s\"']++))"
)
# `-pPASSWORD` after a blank, its value quoted (to the closing quote: `-p"…"`, or `'-p…'` whose
# quote opens before the option) or not (to a blank, a quote or the end of the shell command);
# `-p` alone asks for the password, `-P` is the port.
_SHORT_PASSWORD = LazyPattern(
    r"(?<=[ \t])(?P<flag>(?P<lead>[\"'])?-p)(?P<q>(?(lead)|[\"']))?"
    r"(?P<value>(?(lead)(?:(?!(?P=lead))[^\r\n])++"
    r"|(?(q)(?:(?!(?P=q))[^\r\n])++|[^\s\"';|&]++)))"
)


def redact_command_logins(text: str) -> str:
    """`text` with the password of every curl `-u user:password`, and of every `-pPASSWORD`
    after a MySQL or MariaDB client, replaced; each rule only where what it needs is there
    (`-u` or `-U`, which `--user` and `--proxy-user` hold too, and a `:`; `mysql` or
    `mariadb`): most text of an object holds neither, and costs a few scans."""
    if ("-u" in text or "-U" in text) and ":" in text:
        text = _USER_AND_PASSWORD.sub(_user_kept, text)
    if "mysql" in text or "mariadb" in text:
        client = _database_client_end(text)
        text = text[:client] + _SHORT_PASSWORD.sub(_password_redacted, text[client:])
    return text


def _database_client_end(text: str) -> int:
    """Where the first `mysql` or `mariadb` in `text` ends; -1 where neither stands."""
    ends = [at + len(name) for name in ("mysql", "mariadb") if (at := text.find(name)) >= 0]
    return min(ends, default=-1)


def _user_kept(found: re.Match[str]) -> str:
    return f"{found['flag']}{found['q'] or ''}{found['user']}:{REDACTED}"


def _password_redacted(found: re.Match[str]) -> str:
    return f"{found['flag']}{found['q'] or ''}{REDACTED}"


def user_password_redacted(argument: str) -> str:
    """The argument after curl's `-u` as its own list item: the user name kept, the password
    (after the first `:`) replaced; one that holds no password as it is."""
    user, colon, password = argument.partition(":")
    if not colon or not password:
        return argument
    return f"{user}:{REDACTED}"


def names_database_client(argument: str) -> bool:
    """Whether an argument list's item names a MySQL or MariaDB client (`/usr/bin/mysql`)."""
    return _database_client_end(argument) >= 0


def short_password_redacted(argument: str) -> str:
    """An argument list's item after a MySQL or MariaDB client: `-pPASSWORD` as
    `-p<redacted>`; any other as it is."""
    if len(argument) > len("-p") and argument.startswith("-p"):
        return f"-p{REDACTED}"
    return argument
