"""Passwords a command line gives a program by that program's own short options.

Part of redaction rule 5 (docs/snapshot.md; cluster/redact.py applies it): the named rule
redacts `--password x` because the flag's name says so; these flags' names do not.
- curl's `-u user:password` (`--user`, and `-U`/`--proxy-user` for its proxy; `--user=…`, and
  a group of short options ending in one, `-sSu`: src/tool_getparam.c getparameter): curl's
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
  to use when connecting to the server"), and the same in its forks: valkey-cli (valkey
  src/valkey-cli.c parseOptions) and keydb-cli (KeyDB src/redis-cli.c parseOptions, built as
  `keydb-cli` by src/Makefile). `--pass` goes by its name already. redis-cli reads no password
  attached (`-aPASSWORD` is "Unrecognized option"), so none is looked for.
- a MongoDB client's `-p PASSWORD`, `-p=PASSWORD` and `-pPASSWORD`: the Database Tools
  (mongodump, mongorestore, mongoexport, mongoimport, mongostat, mongotop, mongofiles; mongo-tools
  common/options/options.go: the `Auth` struct's `Password` field, `short:"p"`, read by
  jessevdk/go-flags: parser.go parseOption takes the next argument unless it looks like an
  option (optstyle_other.go argumentIsOption: `-x`, `--x`), splitShortConcatArg takes a value
  attached, and splitOption the one after `-p=`), the legacy `mongo` shell (mongodb/mongo
  src/mongo/shell/shell_options.idl: `password`, single name `p`, whose own censoring,
  src/mongo/util/cmdline_utils/censor_cmdline.cpp censorArgvArray, hides the same three forms)
  and mongosh (packages/arg-parser/src/arg-parser.ts: `p` is the alias of the string option
  `password`, read by yargs-parser with `short-option-groups` off, which takes the next
  argument unless it starts with `-`, or what follows `=`; a lone `-p` asks for the password).
  A next word starting with `-` is no value to any of them. mongosh reads no password attached
  (`-pPASSWORD` is an unknown argument): after `mongosh` such a word is lost all the same.
  `--password` goes by its name already.
- curl's cookie data, `-b NAME=VALUE` (`--cookie`, `--cookie=…`, `-bNAME=VALUE`): curl
  src/tool_getparam.c, `case C_COOKIE`: an argument holding a `=` is the `Cookie` header's
  content ("A cookie string must have a =-letter"), a login the server handed out as a cookie
  header's is (credential_headers.py); one without is a file's name, kept (docs/cmdline-opts/
  cookie.md: "If no `=` symbol is used in the argument, it is instead treated as a filename").
  curl takes the next argument whatever it is. `-H "Cookie: …"` goes by the cookie header's
  rule (text.py) already.
- a registry login's `-p PASSWORD`, `-p=PASSWORD` and `-pPASSWORD`: `docker login` (docker/cli
  cli/command/registry/login.go: `flags.StringVarP(&opts.password, "password", "p", …)`),
  `podman login`, `buildah login` and `skopeo login` (containers/common pkg/auth/cli.go
  GetLoginFlags: `StringVarP(&flags.Password, "password", "p", …)`), `nerdctl login`,
  `helm registry login` (helm cmd/helm/registry_login.go), `oras login` and `crane auth login`:
  each reads it with spf13/pflag (flag.go parseSingleShortArg: the value after `=`, the rest
  of the word, or else the next argument whatever it is). Only after `login` that follows one
  of those programs' names in the same string or argument list: `docker run -p 8080:80`
  publishes a port. `--password` goes by its name already.
The last four, like MySQL's, only after their client stands earlier in the same string or
argument list (`redis-cli`, `valkey-cli`, `keydb-cli`, `mongo`, `curl`, as text: `mongo` names
mongosh, the tools and the legacy shell alike, and `mongod` or a `mongodb://` URI too; a
registry tool's `login`): to most programs `-a`, `-p` and `-b` mean something else. A value
after the client that another program of the same shell line takes (`redis-cli ping; ls -a
/data`, `docker login …; docker run -p 8080:80 …`) is lost too: found as text, a client's
options never depend on how the shell line was cut, which other rules' redactions may
change.
"""

import re
from enum import Enum

from truegreen.patterns import LazyPattern
from truegreen.redacted import REDACTED

USER_OPTIONS = frozenset({"-u", "--user", "-U", "--proxy-user"})
"""curl's options whose value is `user:password`."""
_GROUPED_USER_OPTION = LazyPattern(r"-[A-TV-Za-tv-z0-9#]*+[uU]")
"""Short options run together, the last of them `-u` or `-U` (`-sSu`, `-4u`): curl reads each
character as its own option (letters, digits, `#`) and gives the first that takes an argument
the rest of the word, or the next argument when the word ends (src/tool_getparam.c
getparameter)."""
_GROUPED_COOKIE_OPTION = LazyPattern(r"-[A-Za-ac-z0-9#]*+b")
"""Short options run together, the last of them `-b` (`-sSLb`)."""
_GROUPED_COOKIE_DATA = LazyPattern(r"(?P<flag>-[A-Za-ac-z0-9#]*+b)(?P<value>[^=]*=.*)", re.DOTALL)
"""`-b` at the end of a group with its cookie data attached (`-sbNAME=VALUE`)."""
COOKIE_OPTIONS = frozenset({"-b", "--cookie"})
"""curl's options whose value is cookie data when it holds a `=`, else a file's name."""

# The option (a word of its own, or a setting's value: `CURL_OPTS=-u …`), then its value
# attached or after blanks, quoted or not: the user name runs to the first `:` (never past a
# quote, a blank or an `=` where unquoted, so each try reads a short run: a line of `=-u=-u…`
# costs linear time), the password to the closing quote, or to a blank or quote when
# unquoted.
# A group of short options takes the first `u` or `U` in it (the characters before it are no
# `u`: one deterministic run, never a backtrack per `u` of a hostile `-uuuu…`). An unquoted
# password may hold quoted parts (`admin:"two words"`: the shell joins them), each to its
# closing quote or the line's end.
_USER_AND_PASSWORD = LazyPattern(
    r"(?<![^\s\"'=])(?P<flag>(?:-[A-TV-Za-tv-z0-9#]*+[uU][ \t]*|--(?:proxy-)?user(?:[ \t]*|=)))"
    r"(?P<q>[\"'])?(?P<user>(?(q)[^\"'\r\n:]*+|[^\s\"':=]*+)):"
    r"(?P<value>(?(q)(?:(?!(?P=q))[^\r\n])++"
    r"|(?:[^\s\"']|\"[^\"\r\n]*+\"?|'[^'\r\n]*+'?)++))"
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
# A MongoDB client's `-p PASSWORD` (a next word not starting with `-`), `-p=PASSWORD` and
# `-pPASSWORD` (attached: quoted, `-p"…"`, or not; after a blank, as MySQL's, which text.py's
# quick look `_plainly_safe` counts on); an empty `-p=` stays as it is.
_MONGO_PASSWORD = LazyPattern(
    r"(?<![^\s\"'])(?P<flag>-p(?:=|[ \t]++(?!-)"
    rf"|(?:(?<=[ \t]-p)|(?<=[ \t][\"']-p))(?=[^\s=]))){_NEXT_WORD}"
)
# A registry login's `-p PASSWORD` (any next word: pflag takes it whatever it starts with),
# `-p=PASSWORD` and `-pPASSWORD` (attached, after a blank, as MongoDB's); an empty `-p=` stays.
_LOGIN_PASSWORD = LazyPattern(
    r"(?<![^\s\"'])(?P<flag>-p(?:=|[ \t]++"
    rf"|(?:(?<=[ \t]-p)|(?<=[ \t][\"']-p))(?=[^\s=]))){_NEXT_WORD}"
)
# curl's `-b`/`--cookie` value holding a `=` (cookie data; one without names a file): attached to
# `-b`, after `--cookie=`, or after blanks; quoted (its `=` before the closing quote) or not.
_CURL_COOKIE = LazyPattern(
    r"(?<![^\s\"'])(?P<flag>(?:-[A-Za-ac-z0-9#]*+b[ \t]*+|--cookie(?:[ \t]++|=)))(?P<q>[\"'])?"
    r"(?P<value>(?(q)(?:(?!(?P=q))[^\r\n=])*+=(?:(?!(?P=q))[^\r\n])*+"
    r"|[^\s\"';|&=]*+=[^\s\"';|&]*+))"
)


class Client(Enum):
    """A client whose own short option takes a password."""

    MYSQL = ("mysql", "mariadb")
    REDIS = ("redis-cli", "valkey-cli", "keydb-cli")
    MONGO = ("mongo",)  # mongosh, mongodump and the other tools, the legacy `mongo` shell
    CURL = ("curl",)
    # `login` after a REGISTRY_TOOLS name (`docker login`, `helm registry login`): named by
    # `clients_named` and `_login_end`, never by its word alone.
    REGISTRY_LOGIN = ("login",)


REGISTRY_TOOLS = ("docker", "podman", "buildah", "skopeo", "nerdctl", "helm", "oras", "crane")
"""The programs whose `login` takes a registry password as `-p` (pflag's `--password` short)."""


# Each client's names and its rule, by plain tuples: looked up for every string redacted, where
# an Enum member's `value` costs several times a tuple's item.
_CLIENT_RULES = (
    (Client.MYSQL.value, _SHORT_PASSWORD),
    (Client.REDIS.value, _REDIS_PASSWORD),
    (Client.MONGO.value, _MONGO_PASSWORD),
    (Client.CURL.value, _CURL_COOKIE),
)
_CLIENTS = tuple((client, client.value) for client in Client if client is not Client.REGISTRY_LOGIN)


def redact_command_logins(text: str) -> str:
    """`text` with the password of every curl `-u user:password`, and of every client's own
    password option after that client (MySQL's `-pPASSWORD`, redis-cli's `-a PASSWORD`, a
    MongoDB client's `-p PASSWORD`, curl's `-b NAME=VALUE`, `docker login`'s and the other
    registry logins' `-p PASSWORD`), replaced; each rule only where
    what it needs is there (`-u` or `-U`, which `--user` and `--proxy-user` hold too, and a `:`;
    the client's name): most text of an object holds neither, and costs a few scans."""
    if "-" in text and ":" in text and ("u" in text or "U" in text):
        text = _USER_AND_PASSWORD.sub(_user_kept, text)
    for names, rule in _CLIENT_RULES:
        end = _client_end(text, names)
        if end >= 0:
            text = _redacted_after(rule.pattern, text, end)
    end = _login_end(text)
    if end >= 0:
        text = _redacted_after(_LOGIN_PASSWORD.pattern, text, end)
    return text


def _redacted_after(rule: re.Pattern[str], text: str, start: int) -> str:
    """`text` with each of `rule`'s matches from `start` on redacted. The rule's look-behind
    still reads the text before `start`, so an option glued to the client's name
    (`mongodb://mongo-p`) is no word of its own here either, as on a second pass that finds
    the client's name later in the text."""
    pieces: list[str] = [text[:start]]
    kept = start
    for found in rule.finditer(text, start):
        pieces += [text[kept : found.start()], _password_redacted(found)]
        kept = found.end()
    return "".join([*pieces, text[kept:]])


def _client_end(text: str, names: tuple[str, ...]) -> int:
    """Where the first of a client's `names` in `text` ends; -1 where none stands."""
    if not any(name in text for name in names):  # most text names no client: a quick look
        return -1
    return min(at + len(name) for name in names if (at := text.find(name)) >= 0)


def _login_end(text: str) -> int:
    """Where the first `login` after a registry tool's name in `text` ends; -1 where none."""
    tool = _client_end(text, REGISTRY_TOOLS)
    if tool < 0:
        return -1
    login = text.find("login", tool)
    return login + len("login") if login >= 0 else -1


def _user_kept(found: re.Match[str]) -> str:
    return f"{found['flag']}{found['q'] or ''}{found['user']}:{REDACTED}"


def _password_redacted(found: re.Match[str]) -> str:
    return f"{found['flag']}{found['q'] or ''}{REDACTED}"


def takes_user(option: object) -> bool:
    """Whether the argument after `option` is curl's `user:password`: `-u`, `--user`, `-U`,
    `--proxy-user`, or a group of short options that ends in `-u` or `-U` (`-sSu`)."""
    return isinstance(option, str) and (
        option in USER_OPTIONS or _GROUPED_USER_OPTION.fullmatch(option) is not None
    )


def user_password_redacted(argument: str) -> str:
    """The argument after curl's `-u` as its own list item: the user name kept, the password
    (after the first `:`) replaced; one that holds no password as it is."""
    user, colon, password = argument.partition(":")
    if not colon or not password:
        return argument
    return f"{user}:{REDACTED}"


def clients_named(argument: str, *, tool_before: bool = False) -> frozenset[Client]:
    """The clients an argument list's item names (`/usr/bin/mysql`, `redis-cli`); a registry
    login where the item holds `login` after a registry tool stood in an earlier item
    (`tool_before`: `["docker", "login"]`) or in the same one (`sh -c "docker login …"`)."""
    named = frozenset(client for client, names in _CLIENTS if _client_end(argument, names) >= 0)
    if "login" in argument and (tool_before or _login_end(argument) >= 0):
        return named | {Client.REGISTRY_LOGIN}
    return named


def names_registry_tool(argument: str) -> bool:
    """Whether an argument list's item names a registry tool (`docker`, `/usr/bin/podman`),
    whose `login` in a later item takes `-p` (`clients_named`)."""
    return _client_end(argument, REGISTRY_TOOLS) >= 0


def client_password_redacted(argument: str, previous: object, clients: frozenset[Client]) -> str:
    """An argument list's item after `clients` stood earlier in the list, `previous` the item
    before it: the password of a client's own option replaced (redis-cli's `-a PASSWORD`, a
    MongoDB client's `-p PASSWORD`, `-p=PASSWORD` and `-pPASSWORD`, MySQL's `-pPASSWORD`, a
    registry login's `-p PASSWORD`, `-p=PASSWORD` and `-pPASSWORD`), and curl's cookie data
    (`-b NAME=VALUE`, `--cookie=…`, `-bNAME=VALUE`); any other as it is, and an empty one
    stays empty."""
    if not argument:
        return argument
    if Client.REDIS in clients and previous == "-a":
        return REDACTED
    if Client.CURL in clients:
        grouped = isinstance(previous, str) and _GROUPED_COOKIE_OPTION.fullmatch(previous)
        if (previous in COOKIE_OPTIONS or grouped) and "=" in argument:
            return REDACTED
        if argument.startswith("--cookie=") and "=" in argument[len("--cookie=") :]:
            return f"--cookie={REDACTED}"
        if (attached := _GROUPED_COOKIE_DATA.fullmatch(argument)) is not None:
            return f"{attached['flag']}{REDACTED}"
    if Client.REGISTRY_LOGIN in clients:
        if previous == "-p":  # pflag takes the next argument whatever it starts with
            return REDACTED
        if argument.startswith("-p=") and len(argument) > len("-p="):
            return f"-p={REDACTED}"
        if argument.startswith("-p") and argument not in ("-p", "-p="):
            return f"-p{REDACTED}"
    if Client.MONGO in clients:
        if previous == "-p" and not argument.startswith("-"):
            return REDACTED
        if argument.startswith("-p=") and len(argument) > len("-p="):
            return f"-p={REDACTED}"
        if argument.startswith("-p") and argument not in ("-p", "-p="):
            return f"-p{REDACTED}"
    if Client.MYSQL in clients and len(argument) > len("-p") and argument.startswith("-p"):
        return f"-p{REDACTED}"
    return argument
