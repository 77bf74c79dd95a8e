"""Where Go's URL parser refuses an address that Python's `urlsplit` takes.

kubectl reads the cluster's `server` and `proxy-url` with Go's net/url `Parse` (client-go
rest/url_utils.go DefaultServerURL, tools/clientcmd/helpers.go parseProxyURL). `urlsplit` takes
a space or a letter beyond ASCII in the user part, a port of letters, any `%`, and drops tabs and
line breaks silently, so an address kubectl refuses would be dialled, and a login written in it
sent. These functions say why Go refuses one, in Go's words, checked in Go's order (net/url
url.go `Parse`, `parse`, `getScheme`, `parseAuthority`, `parseHost`, `validOptionalPort`,
`validUserinfo`, `unescape`), or "" where Go accepts it.
"""

_HOST_PUNCTUATION = frozenset("-._~!$&'()*+,;=:[]<>\"")
"""What Go's URL parser lets stand in a host besides letters, digits and `%` escapes (net/url
url.go `shouldEscape` in encodeHost mode)."""

_USERINFO_PUNCTUATION = frozenset("-._:~!$&'()*+,;=%@")
"""What Go lets stand in the user part of an address besides ASCII letters and digits (net/url
`validUserinfo`)."""

_HEX = frozenset("0123456789abcdefABCDEF")
_SCHEME_LATER = frozenset("0123456789+-.")
"""What a scheme may hold after its first letter (net/url `getScheme`)."""

CONTROL_FAULT = "invalid control character in URL"
"""net/url `stringContainsCTLByte`: a control character (a tab, a line break) anywhere."""


def has_control_character(text: str) -> bool:
    """Whether `text` holds a byte below 0x20 or DEL, which Go's parser refuses."""
    return any(c < " " or c == "\x7f" for c in text)


def url_fault(text: str) -> str:
    """Why Go's url.Parse refuses `text` ("" when it accepts it). The fragment after `#` is
    cut first and only its escapes are checked; the query after `?` is never looked at; a
    scheme followed by anything but `/` is an opaque URL, accepted as it is."""
    rest, _, fragment = text.partition("#")
    if has_control_character(rest):
        return CONTROL_FAULT
    scheme, rest = _scheme(rest)
    if scheme is None:
        return "missing protocol scheme"
    rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            return _escape_fault_in(fragment)
        if ":" in rest.partition("/")[0]:
            return "first path segment in URL cannot contain colon"
    path = rest
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        fault = authority_fault(authority)
        if fault:
            return fault
        path = slash + path
    return _escape_fault_in(path) or _escape_fault_in(fragment)


def _scheme(text: str) -> tuple[str | None, str]:
    """Go's `getScheme`: (scheme, the rest); "" for none, None where a `:` starts `text`."""
    for index, char in enumerate(text):
        if char.isascii() and char.isalpha():
            continue
        if char in _SCHEME_LATER and index > 0:
            continue
        if char == ":":
            return (None, text) if index == 0 else (text[:index], text[index + 1 :])
        break
    return "", text


def authority_fault(netloc: str) -> str:
    """Why Go's url.Parse refuses the authority `netloc` (user part, host, port) of an address
    ("" when it accepts it), checked in Go's order (net/url `parseAuthority`, `parseHost`,
    `unescape`): an unclosed `[`; a port that is not all digits (`validOptionalPort`); then,
    left to right, a character no host may hold, such as a space (`shouldEscape`), or a `%`
    escape a host may not hold (only non-ASCII bytes and `%25` may be escaped; in an IPv6
    literal's zone after `%25`, only what a host may hold and a space); then the user part's
    characters (`validUserinfo`) and escapes. Letters beyond ASCII pass in a host, as in Go."""
    user, at, host = netloc.rpartition("@")
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            return "missing ']' in host"
        if not _valid_port(host[end + 1 :]):
            return f"invalid port {_quoted(host[end + 1 :])} after host"
        zone = host.find("%25", 0, end)
        if zone >= 0:
            fault = _escape_fault(host[:zone], zone=False) or _escape_fault(
                host[zone:end], zone=True
            )
            return fault or _escape_fault(host[end:], zone=False)
    else:
        colon = host.rfind(":")
        if colon >= 0 and not _valid_port(host[colon:]):
            return f"invalid port {_quoted(host[colon:])} after host"
    fault = _escape_fault(host, zone=False)
    if fault or not at:
        return fault
    if any(not (c.isascii() and c.isalnum()) and c not in _USERINFO_PUNCTUATION for c in user):
        return "net/url: invalid userinfo"
    # Go quotes a bad escape of the user part; this names none of it, since it may be a password.
    parts = user.split(":", 1)
    if any(_bad_escape(part, i) for part in parts for i, c in enumerate(part) if c == "%"):
        return "invalid URL escape in the address's user part"
    return ""


def _escape_fault(host: str, *, zone: bool) -> str:
    """Go's `unescape` of a host part (encodeHost, or encodeZone for an IPv6 zone): its first
    refusal, or ""."""
    for index, char in enumerate(host):
        if char == "%":
            fault = _bad_escape(host, index)
            if fault:
                return fault
            code = int(host[index + 1 : index + 3], 16)
            if host[index : index + 3] != "%25" and (
                code < 0x80
                if not zone
                else code != 0x20 and (code >= 0x80 or _not_in_host(chr(code)))
            ):
                return f"invalid URL escape {_quoted(host[index : index + 3])}"
        elif _not_in_host(char):
            return f"invalid character {_quoted(char)} in host name"
    return ""


def _escape_fault_in(text: str) -> str:
    """Go's `unescape` of a path or fragment, which refuses only a `%` not followed by two
    hex digits."""
    index = text.find("%")
    while index >= 0:
        fault = _bad_escape(text, index)
        if fault:
            return fault
        index = text.find("%", index + 3)
    return ""


def _bad_escape(text: str, index: int) -> str:
    """Go's EscapeError for the `%` at `index` when two hex digits do not follow it."""
    if set(text[index + 1 : index + 3]) <= _HEX and index + 2 < len(text):
        return ""
    return f"invalid URL escape {_quoted(text[index : index + 3])}"


def _not_in_host(char: str) -> bool:
    """An ASCII character Go's parser refuses in a host (`shouldEscape`, encodeHost)."""
    return char.isascii() and not char.isalnum() and char not in _HOST_PUNCTUATION


def _valid_port(text: str) -> bool:
    """Go's `validOptionalPort`: nothing, or a colon and digits (none too)."""
    digits = text[1:]
    return text == "" or (text[0] == ":" and digits.isascii() and (digits.isdigit() or not digits))


def _quoted(text: str) -> str:
    """`text` in double quotes, control characters escaped, as Go's %q writes ASCII."""
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
