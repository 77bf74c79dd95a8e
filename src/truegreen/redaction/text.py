"""Secrets in text: the rules that find a secret's value in any string (a log line, an event's
message, a command line, a finding's words) and replace it with `<redacted>`.

The policy they serve, and what of an object is secret beyond its strings, is cluster/redact.py's
(listed for operators in docs/snapshot.md); lint runs every message it prints through
`redact_text` too, so a manifest's password never reaches a CI log. Pure, and never raises.
"""

import re
from functools import cache

from truegreen.patterns import LazyPattern
from truegreen.redacted import REDACTED
from truegreen.redaction.command_logins import redact_command_logins
from truegreen.redaction.credential_headers import COOKIE_HEADER_NAME, may_hold_cookie_header
from truegreen.redaction.credential_shapes import redact_credential_shapes

# A name looks secret when it contains one of these (case-insensitive, anywhere in the name);
# `cookie` only as the last word of a longer name (`SESSION_COOKIE` holds a session, which is a
# login: RFC 6265 §8.4), so a cookie's settings (`COOKIE_DOMAIN`, `SESSION_COOKIE_SECURE`) stay
# readable and a cookie header (`Cookie`, `Set-Cookie`) is left to its own rule.
SECRET_WORDS = (
    r"pass(?:wd|word|phrase)?|pwd|secret|token|key|cred|auth|private|dsn"
    r"|conn(?:ection)?[_.\-]?str(?:ing)?|(?:database|db)[_.\-]?url"
    r"|(?<=[a-z0-9][_.\-])(?<!set-)cookie(?![a-z0-9_.\-])"
)
# Atomic: a name is its whole run of name characters, never a part of it; without this, a long
# run holding many secret words ("keykeykey…" in a log line) takes quadratic time to reject.
_NAME = rf"(?>[a-z0-9_.\-]*(?:{SECRET_WORDS})[a-z0-9_.\-]*)"
_SECRET_NAME = LazyPattern(SECRET_WORDS, re.IGNORECASE)
# What every secret word holds, lower case: an alternation searched case-insensitively costs
# about 10 µs on a 70-character digest, a lookup of these in lowered ASCII text about 1.
_WORD_STEMS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "private", "dsn", "cookie")
_SECRET_STEMS = (*_WORD_STEMS, "conn", "url")  # conn…str(ing), (database|db)…url
# `scheme://`, where a URL's userinfo may start.
_SCHEME = LazyPattern(r"(?i)(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://")
_URL_END = LazyPattern(r"[\s\"']")
# A user name never holds these: before the first `:`, they mean the `@` is in the path.
_URL_PATH = LazyPattern(r"[/?#]")
# What follows the `@` of an image digest (`docker-pullable://repo@sha256:…`): not userinfo.
# The grammar of distribution/reference's `digest`: an algorithm, `:`, and 32 or more hex
# digits running to the end of the reference.
_DIGEST = LazyPattern(r"(?i)[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-f]{32,}(?![0-9a-z_.+/-])")
_AWS_KEY_ID = LazyPattern(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")
# 40 base64 characters with upper case, lower case and a digit, standing alone: the shape of an
# AWS secret access key. Hex digests (no upper case) and names (no upper case) never match.
_SECRET_KEY_LENGTH = 40
_AWS_SECRET_SHAPE = LazyPattern(
    r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
    rf"[A-Za-z0-9/+]{{{_SECRET_KEY_LENGTH}}}(?![A-Za-z0-9/+=])"
)
# The shortest text an AWS rule matches: `AKIA` and 16 more, within a secret key's alphabet.
_KEY_RUN_LENGTH = 20
_KEY_RUN = LazyPattern(rf"[A-Za-z0-9/+]{{{_KEY_RUN_LENGTH}}}")
# After a secret name: whether it is an authorization header's (`Proxy-Authorization` too),
# and the opening quote of its value, if any, which the value runs to.
_AUTHORIZATION = r"(?:(?<=authorization)(?P<authz>)|)"
_OPENING = r"(?P<q>[\"'])?"
# A quoted value runs to its closing quote (a backslash escapes one), or the line's end; an
# authorization header's is its scheme and what follows to the line's end or a quote (RFC 7235
# 2.1: `auth-scheme [ 1*SP ( token68 / #auth-param ) ]`, any scheme); any other value is one
# word, or two after `bearer` or `basic`, with the quoted parts a shell joins to it
# (`PGPASSWORD=pa'ss word'`), each to its closing quote or the line's end (an empty quoted
# value, `"token": ""`, stays: it starts with no quote).
_VALUE = (
    r"(?P<value>(?(q)(?:\\.|(?!(?P=q))[^\\\r\n])++"
    r"|(?(authz)[^\s\"'&;,]++(?:[ \t][^\r\n\"']*+)?"
    r"|(?:(?:bearer|basic)[ \t]+)?[^\s\"'&;,](?:[^\s\"'&;,]|\"[^\"\r\n]*+\"?|'[^'\r\n]*+'?)*+)))"
)
# Not a `name: value` but a Go error chain (fmt.Errorf("...: %w")): the container runtime's
# words for a failed pull, which the kubelet quotes, end a phrase with a secret word and go on
# with the wrapped error after `: `. Each value below is kept where it follows exactly `: `
# (no quote before the colon, no quote after it, one space), case as written:
# - a word that opens a wrapped error in these grammars, with a space and a lower-case word
#   after it: containerd's `failed to authorize: failed to fetch oauth token: unexpected
#   status from POST request to …` (core/remotes/docker resolver.go request.do, authorizer.go
#   doBearerAuth, core/remotes/errors ErrUnexpectedStatus.Error), `token: unable to decode
#   token response` and `token: authorization server did not include a token` (auth/fetch.go,
#   ErrNoToken), `authorization: server message: insufficient_scope: authorization failed`
#   and `authorization: authorization failed: no basic auth credentials` (resolver.go Resolve
#   around authorizer.go invalidAuthorization and ErrInvalidAuthorization); distribution's
#   `unauthorized: authentication required` (registry/api/errcode errors.go Error.Error,
#   register.go ErrorCodeUnauthorized), which CRI-O quotes (containers/image docker/errors.go);
# - an HTTP error status and its reason phrase: containerd's `…/token: 403 Forbidden`
#   (ErrUnexpectedStatus prints the response's Status after the token service's URL);
# - Go's url.Error, a method as net/http's urlErrorOp writes it and the quoted URL: containerd's
#   `failed to fetch oauth token: Post "https://…": dial tcp …` (auth/fetch.go returns the
#   client's error as it is);
# - Go's own error texts after a step, each whole: net.OpError's operation and network
#   (`dial tcp …`, `read udp4 …`), net.DNSError's `lookup HOST: ` and `no such host`, `i/o
#   timeout`, `connection refused`, `connection reset by peer`, context's `context deadline
#   exceeded`, os/exec's `exit status N` (a login plugin's error: `failed to get a token: exit
#   status 1`);
# - the next step of the chain, when it is client-go's `exec: ` (`getting credentials: exec:
#   executable … failed`, plugin/pkg/client/auth/exec exec.go) or itself named with a secret
#   word (`credentials: token: …`), whose own value the rule then takes.
# A step's `: ` has no quote before it (`"token": "failed to"` is a setting), unless the name
# ends a path (`_PATH_STEP`).
# The trade-off: a credential that is one of these words, written unquoted after `: ` with a
# lower-case word after it (`password: server room`), three digits from 400 to 599 before a
# capitalised word, or one of Go's error texts above word for word (`token: no such host`), is
# kept. Random tokens, base64, JWTs and passwords of any other shape are not: `token: abc def`,
# `token: Failed to`, `password: letmein: please` and `passphrase: lookup table` still lose
# their value.
# A name that is the last step of a path (`…/token`) may have a quote before its `: ` and still
# be a chain's: the quote closes the URL the name ends (Go's url.Error: `Post "https://…/token":
# dial tcp`). Atomic, so that a path's step never backs off into a name that is not one.
_PATH_STEP = r"(?>(?<=/)(?P<path>)|)"
_ERROR_CHAIN = (
    r"(?!(?(path)(?<=: )|(?<=[^\"']: ))(?-i:"
    r"(?:failed|unexpected|unable|authorization|authentication|server) [a-z]"
    r"|[45][0-9]{2} [A-Z]"
    r"|(?:Get|Head|Post|Put|Patch|Delete|Options) \""
    r"|(?:dial|read|write) (?:tcp|udp|unix|ip)[46]?(?![a-z0-9])"
    r"|lookup [^\s:]+(?: on [^\s]+)?: "
    r"|no such host(?![a-z0-9])|i/o timeout(?![a-z0-9])|connection refused(?![a-z0-9])"
    r"|connection reset by peer(?![a-z0-9])|context deadline exceeded(?![a-z0-9])"
    r"|exit status -?[0-9]+(?![a-z0-9])"
    r"|exec: )"
    rf"|{_NAME}: )"
)


# The rules for a secret-named value are compiled on first use (about 3 ms of start-up): each is
# tried only on text holding a secret word, which most runs' text never does.
@cache
def secret_flag() -> re.Pattern[str]:
    """A command-line flag whose name looks secret (`--db-password`), its whole text."""
    return re.compile(rf"--?{_NAME}", re.IGNORECASE)


@cache
def _assignment() -> re.Pattern[str]:
    """`password=x`, `"token": "x"`, `api-key: x`; a colon needs a space after it, or quotes
    around it, so that an image reference (`auth-proxy:1.2`) is never taken for one. A Go
    error chain's `token: unexpected status …` is none (`_ERROR_CHAIN`)."""
    return re.compile(
        rf"(?i)(?<![a-z0-9_.\-]){_PATH_STEP}(?P<name>{_NAME}){_AUTHORIZATION}"
        rf"(?P<sep>(?:[\"']?[ \t]*=[ \t]*|[\"']?:[ \t]+|[\"']:){_OPENING}){_ERROR_CHAIN}{_VALUE}"
    )


@cache
def _cookie_header() -> re.Pattern[str]:
    """`Cookie: sid=x; theme=dark`, `"Set-Cookie": "sid=x; Path=/"`: a cookie header's whole
    value (redaction/credential_headers.py), as an authorization header's: to its closing quote
    or, unquoted, to the line's end or a quote. Its separator is a header's `:`, with a space
    after it or quotes around it as for a secret-named setting (`cookie:1.2` is an image)."""
    return re.compile(
        rf"(?i)(?<![a-z0-9_.\-])(?P<name>{COOKIE_HEADER_NAME})"
        rf"(?P<sep>(?:[\"']?:[ \t]+|[\"']:){_OPENING})"
        r"(?P<value>(?(q)(?:\\.|(?!(?P=q))[^\\\r\n])++|[^\s\"'][^\r\n\"']*+))"
    )


@cache
def _flag_and_value() -> re.Pattern[str]:
    return re.compile(
        rf"(?i)(?<![^\s\"'])(?P<name>--?{_NAME}){_AUTHORIZATION}"
        rf"(?P<sep>[\"']?[ \t]+{_OPENING})(?!-){_VALUE}"
    )


def looks_secret(name: str) -> bool:
    """Whether an env var or flag named `name` holds a secret by the policy's word list."""
    return _has_secret_word(name)


def _has_secret_word(text: str) -> bool:
    # Only ASCII text is ruled out by the stems: case-insensitive matching also folds other
    # letters (the Kelvin sign is a `k`), which the regular expression alone knows.
    if text.isascii():
        lowered = text.lower()
        if not any(stem in lowered for stem in _SECRET_STEMS):
            return False
    return _SECRET_NAME.search(text) is not None


def redact_shapes(text: str) -> str:
    """`text` with URL userinfo, AWS key shapes and credentials known by their form (JWTs,
    GitHub and Hugging Face tokens, URL signatures) replaced: the rules that never mistake
    plain words for a secret (for truegreen's own lines naming what it read, such as a failed
    read's reason, and the addresses it prints: the server's, a registry login's)."""
    if _plainly_safe(text):
        return text
    return _redact_shapes(text)


def _redact_shapes(text: str) -> str:
    # Each rule only where what it needs is there: userinfo lies between `://` and `@`, a key
    # id starts with AKIA or ASIA, a secret key is 40 characters with an upper-case one (a
    # digest's hex has none). Most text of an object (times, images, digests) needs none.
    # The credential shapes go first: a JWT, a token or a signature holds runs of an AWS
    # secret key's alphabet, and one of those redacted alone would leave the rest of it. The
    # key rules go next: a digest-shaped run they have redacted cannot hide the userinfo
    # before it, and the userinfo rule never joins or splits a key's run, so a second pass is
    # a no-op.
    text = redact_credential_shapes(text)
    if "AKIA" in text or "ASIA" in text:
        keyed = _AWS_KEY_ID.sub(REDACTED, text)
        # A key id may stand right before a token it hid from the credential shapes
        # (`AKIA…EXAMPLEeyJ…`, `…EXAMPLEhf_…`: not a token's start inside a run): once more,
        # so a second pass finds nothing. Their redaction never uncovers a key id (each takes
        # a whole run of a key's letters), so once is enough.
        text = redact_credential_shapes(keyed) if keyed != text else text
    if len(text) >= _SECRET_KEY_LENGTH and text.lower() != text:
        text = _AWS_SECRET_SHAPE.sub(REDACTED, text)
    if "@" in text and "://" in text:
        text = _redact_userinfo(text)
    return text


def _redact_userinfo(text: str) -> str:
    """`postgres://user:pass@host` as `postgres://<redacted>@host`. A URL ends at a space or a
    quote, or where the next `scheme://` starts; its userinfo runs to the `@` that ends it
    (`_userinfo_end`). Done by hand, not by one regular expression: those spans never overlap,
    so a hostile line (many `a://b:`) costs linear time."""
    schemes = list(_SCHEME.finditer(text))
    pieces: list[str] = []
    kept = 0
    for index, scheme in enumerate(schemes):
        start = scheme.end()
        stop = schemes[index + 1].start() if index + 1 < len(schemes) else len(text)
        end = _URL_END.pattern.search(text, start, stop)
        stop = end.start() if end else stop
        at = _userinfo_end(text, start, stop)
        if at >= 0:
            pieces += [text[kept:start], REDACTED]
            kept = at
    return "".join([*pieces, text[kept:]])


def _userinfo_end(text: str, start: int, stop: int) -> int:
    """The `@` that ends the userinfo of the URL `text[start:stop]`, or -1 for none: the last
    `@` that is not an image digest's (`repo@sha256:…`) and has no `/`, `?` or `#` in the user
    name before it (before the first `:`), which would put that `@` in the path. So the
    authority's own `@` (RFC 3986 3.2: the authority ends at the first `/`) always ends it,
    whatever `@` the path holds, and a later one may: a password may hold `/` and `@`."""
    colon = text.find(":", start, stop)
    path = _URL_PATH.pattern.search(text, start, stop)
    first_path = path.start() if path else stop
    at = text.rfind("@", start, stop)
    while at >= 0:
        user_end = colon if 0 <= colon < at else at
        if first_path >= user_end and not _DIGEST.pattern.match(text, at + 1, stop):
            return at
        at = text.rfind("@", start, at)
    return -1


def redact_text(text: str) -> str:
    """`text` with every secret shape of the policy replaced by `<redacted>`."""
    if _plainly_safe(text):
        return text
    return _redact_every_rule(text)


def _redact_every_rule(text: str) -> str:
    """`text` through every rule that can match it: a named rule needs a secret word, and what
    its separator needs (a timestamp or a service account's mount path needs neither rule)."""
    # The command-line logins first: one may break an image digest after a userinfo's `@`
    # (`--user@sha256:…`), which the userinfo rule must see broken on the first pass too.
    text = _redact_shapes(redact_command_logins(text))
    if ":" in text and may_hold_cookie_header(text):  # a header's separator, and its name
        text = _cookie_header().sub(_value_redacted, text)
    if not _has_secret_word(text):
        return text
    if "=" in text or ":" in text:  # what an assignment's separator needs
        text = _assignment().sub(_value_redacted, text)
    if "-" in text and (" " in text or "\t" in text):  # a flag, and the blank before its value
        text = _flag_and_value().sub(_value_redacted, text)
    return text


def _value_redacted(named: re.Match[str]) -> str:
    return f"{named['name']}{named['sep']}{REDACTED}"


def _plainly_safe(text: str) -> bool:
    """True when no rule can match: most strings (names, labels, numbers) are this, and cheap
    to see. Userinfo, assignments, URL signatures, curl's `-u` and `-b` need `:` or `=`, a
    flag's value and a client's option (a MySQL or MongoDB client's `-p`, redis-cli's `-a`) a
    space or tab before a `-`, an AWS key a run of 20 or more of its characters (a GitHub or
    Hugging Face token holds a longer run), and a JWT `eyJ`."""
    return (
        "=" not in text
        and ":" not in text
        and not ("-" in text and (" " in text or "\t" in text))
        and (len(text) < _KEY_RUN_LENGTH or _KEY_RUN.search(text) is None)
        and "eyJ" not in text
    )
