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
- redis-cli's `-a PASSWORD`, the next argument whatever it is (redis src/redis-cli.c
  parseOptions: `-a` and its alias `--pass` take `argv[++i]`; usage: "-a <password> Password
  to use when connecting to the server"). `--pass` goes by its name already. redis-cli reads no
  password attached (`-aPASSWORD` is "Unrecognized option"), so none is looked for.
- mongosh's `-p PASSWORD` and `-p=PASSWORD` (mongosh packages/arg-parser/src/arg-parser.ts:
  `p` is the alias of the string option `password`, read by yargs-parser with
  `short-option-groups` off, which takes the next argument unless it starts with `-`, or what
  follows `=`; a lone `-p` asks for the password). `--password` goes by its name already.
  mongosh reads no password attached (`-pPASSWORD` is an unknown argument).
The last two, like MySQL's, only after their client stands earlier in the same string or
argument list (`redis-cli`, `mongosh`, as text): to most programs `-a` and `-p` mean something
else. A value after the client that another program of the same shell line takes
(`redis-cli ping; ls -a /data`) is lost too: found as text, a client's options never depend on
how the shell line was cut, which other rules' redactions may change.
"""

import re
from enum import Enum

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
# The value of a client's option taking the next word (after blanks), quoted (to the closing
# quote, or the line's end) or not (to a blank, a quote or the end of the shell command).
_NEXT_WORD = r"(?P<q>[\"'])?(?P<value>(?(q)(?:(?!(?P=q))[^\r\n])++|[^\s\"';|&]++))"
# redis-cli's `-a PASSWORD`: any next word, one starting with `-` too.
_REDIS_PASSWORD = LazyPattern(rf"(?<![^\s\"'])(?P<flag>-a[ \t]++){_NEXT_WORD}")
# mongosh's `-p PASSWORD` (a next word not starting with `-`) and `-p=PASSWORD`.
_MONGOSH_PASSWORD = LazyPattern(rf"(?<![^\s\"'])(?P<flag>-p(?:=|[ \t]++(?!-))){_NEXT_WORD}")


class Client(Enum):
    """A client whose own short option takes a password."""

    MYSQL = ("mysql", "mariadb")
    REDIS = ("redis-cli",)
    MONGOSH = ("mongosh",)


# Each client's names and its rule, by plain tuples: looked up for every string redacted, where
# an Enum member's `value` costs several times a tuple's item.
_CLIENT_RULES = (
    (Client.MYSQL.value, _SHORT_PASSWORD),
    (Client.REDIS.value, _REDIS_PASSWORD),
    (Client.MONGOSH.value, _MONGOSH_PASSWORD),
)
_CLIENTS = tuple((client, client.value) for client in Client)


def redact_command_logins(text: str) -> str:
    """`text` with the password of every curl `-u user:password`, and of every client's own
    password option after that client (MySQL's `-pPASSWORD`, redis-cli's `-a PASSWORD`,
    mongosh's `-p PASSWORD`), replaced; each rule only where what it needs is there (`-u` or
    `-U`, which `--user` and `--proxy-user` hold too, and a `:`; the client's name): most text
    of an object holds neither, and costs a few scans."""
    if ("-u" in text or "-U" in text) and ":" in text:
        text = _USER_AND_PASSWORD.sub(_user_kept, text)
    for names, rule in _CLIENT_RULES:
        end = _client_end(text, names)
        if end >= 0:
            text = text[:end] + rule.sub(_password_redacted, text[end:])
    return text


def _client_end(text: str, names: tuple[str, ...]) -> int:
    """Where the first of a client's `names` in `text` ends; -1 where none stands."""
    if not any(name in text for name in names):  # most text names no client: a quick look
        return -1
    return min(at + len(name) for name in names if (at := text.find(name)) >= 0)


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


def clients_named(argument: str) -> frozenset[Client]:
    """The clients an argument list's item names (`/usr/bin/mysql`, `redis-cli`)."""
    return frozenset(client for client, names in _CLIENTS if _client_end(argument, names) >= 0)


def client_password_redacted(argument: str, previous: object, clients: frozenset[Client]) -> str:
    """An argument list's item after `clients` stood earlier in the list, `previous` the item
    before it: the password of a client's own option replaced (redis-cli's `-a PASSWORD`,
    mongosh's `-p PASSWORD` and `-p=PASSWORD`, MySQL's `-pPASSWORD`); any other as it is, and
    an empty one stays empty."""
    if not argument:
        return argument
    if Client.REDIS in clients and previous == "-a":
        return REDACTED
    if Client.MONGOSH in clients:
        if previous == "-p" and not argument.startswith("-"):
            return REDACTED
        if len(argument) > len("-p=") and argument.startswith("-p="):
            return f"-p={REDACTED}"
    if Client.MYSQL in clients and len(argument) > len("-p") and argument.startswith("-p"):
        return f"-p{REDACTED}"
    return argument
