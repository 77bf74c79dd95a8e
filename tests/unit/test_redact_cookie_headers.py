"""A cookie header's value is a login whatever its name says (redaction/credential_headers.py):
Go's net/http keeps `Cookie` from other hosts as it keeps `Authorization` (client.go
shouldCopyHeaderOnRedirect), and `Set-Cookie` is the server's side of the same `name=value`
(RFC 6265 §4.1). Redacted as an `Authorization` header is: as a `{name, value}` pair (an HTTP
probe's or hook's header), as a map's key, and written as a header in any text."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.cluster.redact import redact_object
from truegreen.redacted import REDACTED
from truegreen.redaction.text import redact_text

SESSION = "s%3AJ0hnD0eSessi0n.kd8Gq2"


def test_a_cookie_header_of_a_probe_or_hook_is_redacted_as_authorization_is() -> None:
    """core/v1 HTTPHeader `{name, value}` in HTTPGetAction.httpHeaders: the kubelet sends each
    as written (pkg/probe/http/request.go NewRequestForHTTPGetAction), so a probe behind a
    session login carries the session."""
    headers = [
        {"name": "Cookie", "value": f"connect.sid={SESSION}; theme=dark"},
        {"name": "set-cookie", "value": f"sid={SESSION}; Path=/; HttpOnly"},
        {"name": "COOKIE2", "value": f'$Version="1"; sid={SESSION}'},
        {"name": "Proxy-Authorization", "value": "Basic cHJveHk6cHJveHlwdw=="},
        {"name": "Cookie", "value": ""},
        {"name": "Accept", "value": "text/plain"},
        {"name": "X-Cookie-Consent", "value": "yes"},
    ]
    get = {"path": "/health", "port": 8080, "httpHeaders": headers}
    container = {
        "name": "web",
        "image": "r/web:1",
        "readinessProbe": {"httpGet": get},
        "lifecycle": {"preStop": {"httpGet": get}},
        "env": [{"name": "COOKIE_DOMAIN", "value": "example.com"}],
    }
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container]}}
    redacted = redact_object(pod)
    kept = redacted["spec"]["containers"][0]
    expected = [
        {"name": "Cookie", "value": REDACTED},
        {"name": "set-cookie", "value": REDACTED},
        {"name": "COOKIE2", "value": REDACTED},
        {"name": "Proxy-Authorization", "value": REDACTED},
        {"name": "Cookie", "value": ""},  # empty stays empty
        {"name": "Accept", "value": "text/plain"},
        {"name": "X-Cookie-Consent", "value": "yes"},  # not a cookie header's name
    ]
    assert kept["readinessProbe"]["httpGet"]["httpHeaders"] == expected
    assert kept["lifecycle"]["preStop"]["httpGet"]["httpHeaders"] == expected
    assert kept["env"] == [{"name": "COOKIE_DOMAIN", "value": "example.com"}]
    assert redact_object(redacted) == redacted


def test_a_map_of_headers_keyed_by_a_cookie_header_is_redacted() -> None:
    headers = {"Cookie": f"sid={SESSION}", "Set-Cookie": f"sid={SESSION}", "Accept": "*/*"}
    # A lower camel case key is a Kubernetes field's name, never a header map's key.
    spec = {"headers": headers, "cookie": {"name": "sid", "ttl": "0s"}}
    redacted = redact_object({"kind": "Example", "spec": spec})
    assert redacted["spec"] == {
        "headers": {"Cookie": REDACTED, "Set-Cookie": REDACTED, "Accept": "*/*"},
        "cookie": {"name": "sid", "ttl": "0s"},
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"curl -fsS -H 'Cookie: connect.sid={SESSION}; theme=dark' http://127.0.0.1:8080/",
            f"curl -fsS -H 'Cookie: {REDACTED}' http://127.0.0.1:8080/",
        ),
        (
            f'wget -q --header="Cookie: sid={SESSION}" -O- http://localhost/health',
            f'wget -q --header="Cookie: {REDACTED}" -O- http://localhost/health',
        ),
        (f"Set-Cookie: sid={SESSION}; Path=/; HttpOnly", f"Set-Cookie: {REDACTED}"),
        (f"< set-cookie: sid={SESSION}\n< server: x", f"< set-cookie: {REDACTED}\n< server: x"),
        (f'{{"Cookie": "sid={SESSION}", "a": 1}}', f'{{"Cookie": "{REDACTED}", "a": 1}}'),
        (f'{{"cookie":"sid={SESSION}"}}', f'{{"cookie":"{REDACTED}"}}'),
        (f"COOKIE2: sid={SESSION}", f"COOKIE2: {REDACTED}"),
    ],
)
def test_a_cookie_header_written_in_text_loses_its_whole_value(text: str, expected: str) -> None:
    """A cookie header's value is `name=value` pairs joined by `; ` (RFC 6265 §4.2.1): all of
    them go, to the line's end or a quote, as an `Authorization` header's value does."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "registry.example.com/cookie:1.2",  # an image: a `:` with no blank after it
        "cookie:1.2",
        "x-cookie-consent: yes",  # another header, whose name holds the word
        "cookies: 3",
        "COOKIE_DOMAIN=example.com",
        "SESSION_COOKIE_SECURE=true",
        "the cookie jar is empty",
    ],
)
def test_what_is_no_cookie_header_is_kept(text: str) -> None:
    assert redact_text(text) == text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *("Cookie", "set-", "COOKIE2", ": ", ":", '"', "'", "\\", "\n", " ", "a=b", ";"),
                *("x", "password", "=", "AKIAIOSFODNN7EXAMPLE", "-u ", "redis-cli", " -a "),
            ]
        ),
        max_size=10,
    ).map("".join)
)
def test_cookie_header_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once
