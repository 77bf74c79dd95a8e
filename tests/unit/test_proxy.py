"""Which proxy kubectl would use: client-go's `proxy-url` rules and Go's environment rules.

The tables below are golang.org/x/net `http/httpproxy/proxy_test.go`'s own (`proxyForURLTests`,
`UseProxyTests` with its `noProxy` list), so a difference from Go shows up as a failing row.
"""

import pytest

from truegreen.cluster.classify import classify
from truegreen.cluster.reads import CantRead, ReadFailure
from truegreen.http.errors import ProxyFailedError
from truegreen.http.proxy import (
    Proxy,
    ProxyUrlError,
    parse_proxy_url,
    proxy_from_environment,
    split_host_port,
)


def _chosen(environ: dict[str, str], url: str) -> str:
    """The proxy picked for `url`, written as Go's test table writes it."""
    scheme, _, rest = url.partition("://")
    authority = rest.split("/", 1)[0]
    split = split_host_port(authority)
    host, port = split if split is not None else (authority, "")
    default = {"https": 443, "http": 80}.get(scheme, 0)
    proxy = proxy_from_environment(environ, scheme, host.strip("[]"), int(port or default))
    if proxy is None:
        return "<nil>"
    return f"{proxy.scheme}://{proxy.host}:{proxy.port}"


@pytest.mark.parametrize(
    ("environ", "url", "expected"),
    [
        ({"HTTP_PROXY": "127.0.0.1:8080"}, "http://example.com", "http://127.0.0.1:8080"),
        (
            {"HTTP_PROXY": "cache.corp.example.com:1234"},
            "http://example.com",
            "http://cache.corp.example.com:1234",
        ),
        (
            {"HTTP_PROXY": "cache.corp.example.com"},
            "http://example.com",
            "http://cache.corp.example.com:80",
        ),
        ({"HTTP_PROXY": "localhost"}, "http://example.com", "http://localhost:80"),
        (
            {"HTTP_PROXY": "https://cache.corp.example.com"},
            "http://example.com",
            "https://cache.corp.example.com:443",
        ),
        ({"HTTP_PROXY": "https://127.0.0.1:8080"}, "http://example.com", "https://127.0.0.1:8080"),
        ({"HTTP_PROXY": "socks5://127.0.0.1"}, "http://example.com", "socks5://127.0.0.1:1080"),
        (
            {"HTTP_PROXY": "http.proxy.tld", "HTTPS_PROXY": "secure.proxy.tld"},
            "http://insecure.tld/",
            "http://http.proxy.tld:80",
        ),
        (
            {"HTTP_PROXY": "http.proxy.tld", "HTTPS_PROXY": "secure.proxy.tld"},
            "https://secure.tld/",
            "http://secure.proxy.tld:80",
        ),
        (
            {"HTTP_PROXY": "http.proxy.tld", "HTTPS_PROXY": "https://secure.proxy.tld"},
            "https://secure.tld/",
            "https://secure.proxy.tld:443",
        ),
        ({"HTTP_PROXY": "http.proxy.tld"}, "https://secure.tld/", "<nil>"),
        ({"HTTP_PROXY": "http.proxy.tld"}, "ftp://insecure.tld/", "<nil>"),
        ({}, "http://example.com", "<nil>"),
        ({"NO_PROXY": "example.com", "HTTP_PROXY": "proxy"}, "http://example.com/", "<nil>"),
        (
            {"NO_PROXY": ".example.com", "HTTP_PROXY": "proxy"},
            "http://example.com/",
            "http://proxy:80",
        ),
        (
            {"NO_PROXY": "ample.com", "HTTP_PROXY": "proxy"},
            "http://example.com/",
            "http://proxy:80",
        ),
        ({"NO_PROXY": "example.com", "HTTP_PROXY": "proxy"}, "http://foo.example.com/", "<nil>"),
        ({"NO_PROXY": ".foo.com", "HTTP_PROXY": "proxy"}, "http://example.com/", "http://proxy:80"),
        ({"NO_PROXY": ".示例.com", "HTTP_PROXY": "proxy"}, "http://www.示例.com", "<nil>"),
        ({"NO_PROXY": "xn--fsq092h.com", "HTTP_PROXY": "proxy"}, "http://www.示例.com", "<nil>"),
        ({"NO_PROXY": "示例.com", "HTTP_PROXY": "proxy"}, "http://www.xn--fsq092h.com", "<nil>"),
        # Beyond Go's table: lower-case names, upper case first, and ports on both sides.
        ({"https_proxy": "lower:3128"}, "https://api.corp:6443", "http://lower:3128"),
        (
            {"HTTPS_PROXY": "upper:3128", "https_proxy": "lower:3128"},
            "https://api.corp:6443",
            "http://upper:3128",
        ),
        (
            {"HTTPS_PROXY": "p:3128", "no_proxy": "api.corp:6443"},
            "https://api.corp:6443",
            "<nil>",
        ),
        (
            {"HTTPS_PROXY": "p:3128", "NO_PROXY": "api.corp:443"},
            "https://api.corp:6443",
            "http://p:3128",
        ),
        (
            {"HTTPS_PROXY": "p:3128", "NO_PROXY": "*.corp"},
            "https://api.corp:6443",
            "<nil>",
        ),
        (
            {"HTTPS_PROXY": "p:3128", "NO_PROXY": "10.0.0.0/8"},
            "https://10.1.2.3:6443",
            "<nil>",
        ),
        ({"HTTPS_PROXY": "p:3128"}, "https://[::ffff:127.0.0.1]:6443", "<nil>"),
        ({"HTTPS_PROXY": "p:3128"}, "https://localhost:6443", "<nil>"),
        ({"HTTPS_PROXY": "p:3128", "NO_PROXY": ":1"}, "https://api.corp", "http://p:3128"),
        # A value Go's url.Parse refuses is read again after `http://` (httpproxy `parseProxy`),
        # and `http://http://…` parses, as the proxy `http:` (port 80); kubectl 1.32 measured:
        # `proxyconnect tcp: dial tcp: lookup http … no such host`. Never the login written.
        ({"HTTPS_PROXY": "http://[not"}, "https://api.corp", "http://http:80"),
        ({"HTTPS_PROXY": "http://u:pa ss@p:3128"}, "https://api.corp", "http://http:80"),
        # ... and ignored where that reading fails too (`%zz` is then in its path): kubectl
        # dials the server itself
        ({"HTTPS_PROXY": "http://u:p%zz@p:3128"}, "https://api.corp", "<nil>"),
    ],
)
def test_the_environment_proxy_is_go_s(environ: dict[str, str], url: str, expected: str) -> None:
    assert _chosen(environ, url) == expected


_GO_NO_PROXY = (
    "foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, "
    "10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, "
    "2002:db8:a::45/64"
)
_USE_PROXY = [
    ("localhost", False),
    ("127.0.0.1", False),
    ("127.0.0.2", False),
    ("[::1]", False),
    ("[::2]", True),
    ("192.168.1.1", False),
    ("192.168.1.2", True),
    ("192.168.1.3", False),
    ("192.168.1.4", True),
    ("10.0.0.2", False),
    ("[2001:db8::52:0:1]", False),
    ("[2001:db8::52:0:2]", True),
    ("[2001:db8::52:0:3]", False),
    ("[2002:db8:a::123]", False),
    ("[fe80::424b:c8be:1643:a1b6]", True),
    ("barbaz.net", True),
    ("www.barbaz.net", False),
    ("foobar.com", False),
    ("www.foobar.com", False),
    ("foofoobar.com", True),
    ("baz.com", True),
    ("localhost.net", True),
    ("local.localhost", True),
    ("barbarbaz.net", True),
    ("wildcard.io", True),
    ("nested.wildcard.io", False),
    ("awildcard.io", True),
]


@pytest.mark.parametrize(("host", "proxied"), _USE_PROXY)
def test_no_proxy_matches_as_go_s_use_proxy(host: str, proxied: bool) -> None:
    environ = {"HTTP_PROXY": "proxy.corp:3128", "NO_PROXY": _GO_NO_PROXY}
    chosen = proxy_from_environment(environ, "http", host.strip("[]"), 80)
    assert (chosen is not None) is proxied


@pytest.mark.parametrize(("host", "_"), _USE_PROXY)
def test_a_star_exempts_every_host(host: str, _: bool) -> None:
    environ = {"HTTP_PROXY": "proxy.corp:3128", "NO_PROXY": "other.com, *"}
    assert proxy_from_environment(environ, "http", host.strip("[]"), 80) is None


def test_http_proxy_is_refused_in_a_cgi_environment_and_https_proxy_is_not() -> None:
    # Go's table: "refusing to use HTTP_PROXY value in CGI environment", HTTPS_PROXY still used
    cgi = {"REQUEST_METHOD": "GET", "HTTP_PROXY": "10.1.2.3:8080", "HTTPS_PROXY": "p:3128"}
    with pytest.raises(ProxyUrlError) as caught:
        proxy_from_environment(cgi, "http", "example.com", 80)
    assert str(caught.value) == "it is not trusted in a CGI environment (REQUEST_METHOD is set)"
    assert proxy_from_environment(cgi, "https", "example.com", 443) == Proxy("http", "p", 3128)
    with pytest.raises(ProxyUrlError):  # refused before NO_PROXY is read, as in Go
        proxy_from_environment({**cgi, "NO_PROXY": "*"}, "http", "example.com", 80)
    assert proxy_from_environment({"REQUEST_METHOD": "GET"}, "http", "example.com", 80) is None


def test_the_lower_case_http_proxy_is_read_when_the_upper_case_one_is_unset() -> None:
    # FromEnvironment: HTTPProxy is getEnvAny("HTTP_PROXY", "http_proxy")
    environ = {"http_proxy": "p:3128", "https_proxy": "s:3128"}
    assert proxy_from_environment(environ, "http", "api.corp", 80) == Proxy("http", "p", 3128)
    assert proxy_from_environment(environ, "https", "api.corp", 443) == Proxy("http", "s", 3128)


@pytest.mark.parametrize(
    ("no_proxy", "host"),
    [
        ("other.corp,,api.corp", "api.corp"),  # an empty entry is skipped, not the end
        ("other.corp, ,api.corp", "api.corp"),
        (":443,api.corp", "api.corp"),  # no host part: that entry alone is ignored
        ("2001:0db8::52:0:1", "2001:db8::52:0:1"),  # IPs compare as addresses (ip.Equal) ...
        ("::ffff:10.0.0.1", "10.0.0.1"),  # ... so an IPv4-mapped entry is that IPv4 address
    ],
)
def test_no_proxy_entries_as_go_s_config_init_reads_them(no_proxy: str, host: str) -> None:
    # golang.org/x/net http/httpproxy/proxy.go `config.init`: empty and host-less entries are
    # skipped (`continue`), an entry net.ParseIP accepts is an ipMatch, not a name
    environ = {"HTTPS_PROXY": "p:3128", "NO_PROXY": no_proxy}
    assert proxy_from_environment({"HTTPS_PROXY": "p:3128"}, "https", host, 443) is not None
    assert proxy_from_environment(environ, "https", host, 443) is None


def test_an_unknown_proxy_kind_in_the_environment_is_refused() -> None:
    with pytest.raises(ProxyUrlError, match='unsupported scheme "foo", must be http'):
        proxy_from_environment({"HTTPS_PROXY": "foo://host"}, "https", "api.corp", 443)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://proxy.corp:3128", Proxy("http", "proxy.corp", 3128)),
        ("https://proxy.corp", Proxy("https", "proxy.corp", 443)),
        ("socks5://10.0.0.1", Proxy("socks5", "10.0.0.1", 1080)),
        ("HTTP://Proxy.Corp:3128", Proxy("http", "proxy.corp", 3128)),
        ("http://[fd00::1]:3128", Proxy("http", "fd00::1", 3128)),
        ("socks5://al%40ice:p%3Ass@p:1", Proxy("socks5", "p", 1, "al@ice", "p:ss")),
        ("http://alice@p:1", Proxy("http", "p", 1, "alice", "")),
        ("http://:@p:1", Proxy("http", "p", 1, "", "")),
        # what Go's url.Parse takes: an empty port, a query it never reads, a fragment's space
        ("http://p:", Proxy("http", "p", 80)),
        ("http://u:p%41@p:1?x=%zz", Proxy("http", "p", 1, "u", "pA")),
        ("http://p:1#a b", Proxy("http", "p", 1)),
    ],
)
def test_a_proxy_url_as_client_go_reads_it(text: str, expected: Proxy) -> None:
    assert parse_proxy_url(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("socks5h://p:1080", 'unsupported scheme "socks5h", must be http, https, or socks5'),
        ("ftp://user:secret@p", 'unsupported scheme "ftp", must be http, https, or socks5'),
        ("proxy.corp:3128", 'unsupported scheme "proxy.corp", must be http, https, or socks5'),
        ("10.0.0.1:3128", "it has no scheme; it must start with http://, https:// or socks5://"),
        ("http://p:99999", "its port is not a number from 0 to 65535"),
        ("http://", "it names no host"),
        ("http://[::1:3128", "could not parse (missing ']' in host)"),
        # Go's url.Parse first (kubectl: `invalid 'proxy-url' … could not parse`), in its order
        ("http://u:pa ss@p:1", "could not parse (net/url: invalid userinfo)"),
        ("http://üser:secret@p:1", "could not parse (net/url: invalid userinfo)"),
        ("http://u:p%zz@p:1", "could not parse (invalid URL escape in the address's user part)"),
        ("ftp://u:sec ret@p", "could not parse (net/url: invalid userinfo)"),  # before the scheme
        ("http://p :1", 'could not parse (invalid character " " in host name)'),
        ("http://p:1a", 'could not parse (invalid port ":1a" after host)'),
        ("http://h%41:1", 'could not parse (invalid URL escape "%41")'),
        ("http://p:1\t", "could not parse (invalid control character in URL)"),
        ("http://p:1/%zz", 'could not parse (invalid URL escape "%zz")'),
        ("http://p:1#%zz", 'could not parse (invalid URL escape "%zz")'),
        # a `/` in the password ends the authority: Go's port would be the password's start
        ("http://u:secret/x@p:1", "could not parse"),
    ],
)
def test_a_proxy_url_kubectl_refuses_is_refused(text: str, message: str) -> None:
    with pytest.raises(ProxyUrlError) as caught:
        parse_proxy_url(text)
    assert str(caught.value) == message
    assert "secret" not in str(caught.value)


def test_the_proxy_login_is_basic_and_never_shown() -> None:
    proxy = parse_proxy_url("http://alice:s3cret@p:3128")
    assert proxy.basic_authorization() == "Basic YWxpY2U6czNjcmV0"  # base64("alice:s3cret")
    assert "s3cret" not in repr(proxy)
    assert parse_proxy_url("http://alice@p:1").basic_authorization() == "Basic YWxpY2U6"
    assert parse_proxy_url("http://p:1").basic_authorization() is None
    # Go sends a login whenever the URL has userinfo, even an empty one
    assert parse_proxy_url("http://:@p:1").basic_authorization() == "Basic Og=="
    assert Proxy("http", "fd00::1", 3128).address == "[fd00::1]:3128"
    # net.JoinHostPort brackets only a host with a colon in it
    assert Proxy("http", "proxy.corp", 3128).address == "proxy.corp:3128"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("host:80", ("host", "80")),
        ("[::1]:80", ("::1", "80")),
        ("host:", ("host", "")),
        ("host", None),
        ("::1", None),
        ("[::1]", None),
        ("[::1]x:80", None),
        ("a]:80", None),
        # Go's net/ipsock.go SplitHostPort: an empty host is no error; a stray bracket is
        (":80", ("", "80")),
        ("a[b:80", None),
        ("host:8[0", None),
        ("host:8]0", None),
    ],
)
def test_host_and_port_split_as_go_splits_them(text: str, expected: tuple[str, str] | None) -> None:
    assert split_host_port(text) == expected


def test_a_proxy_failure_reads_as_an_unreached_cluster_in_the_proxy_s_words() -> None:
    cause = "the proxy 10.0.0.1:3128 refused the tunnel: 407 Proxy Authentication Required"
    assert classify(ProxyFailedError(cause), "list pods") == CantRead(
        ReadFailure.UNREACHABLE, f"list pods: could not connect ({cause})", False
    )
