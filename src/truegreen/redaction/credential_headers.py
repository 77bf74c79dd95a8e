"""HTTP headers whose value is a credential by the header's nature, whatever it says.

Part of redaction rules 4 and 6 (docs/snapshot.md; cluster/redact.py applies them). The
`Authorization` and `Proxy-Authorization` headers go by the word list (`auth`); the cookie
headers' names hold no secret word, yet a cookie is a login the server handed out. Go's
net/http treats `Cookie` and `Cookie2` as it treats `Authorization` (client.go
shouldCopyHeaderOnRedirect: copied onto a redirect only to the same host or its subdomains);
`Set-Cookie` (RFC 6265 §4.1; `Set-Cookie2`, RFC 2965) is the server's side of the same
`name=value`, which the agent sends back in `Cookie` (RFC 6265 §8.4: servers keep a session
identifier in a cookie, and whoever replays it is taken for the user). Their values are one or
more `name=value` pairs joined by `; ` (RFC 6265 §4.2.1), so a value in text runs to the
line's end or a quote, as an `Authorization` header's does.
"""

COOKIE_HEADERS = frozenset({"cookie", "cookie2", "set-cookie", "set-cookie2"})
"""The cookie headers' names, lower case: HTTP field names are matched in any case (RFC 9110
§5.1)."""
COOKIE_HEADER_NAME = r"(?:set-)?cookie2?"
"""A cookie header's name as a regular expression, for a rule matching case-insensitively."""


def names_cookie_header(name: str) -> bool:
    """Whether `name` is a cookie header's (`Cookie`, `Set-Cookie`, any case)."""
    return name.lower() in COOKIE_HEADERS


def may_hold_cookie_header(text: str) -> bool:
    """False only where `text` holds no cookie header's name in any case: ASCII text without
    `cookie` (other text is left to the rule, whose case-insensitive match folds the Kelvin
    sign to `k`)."""
    return not text.isascii() or "cookie" in text.lower()
