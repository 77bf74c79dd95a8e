"""Which names a server certificate names, as Go's crypto/x509 decides it.

The tables are Go's own: `src/crypto/x509/x509_test.go` `matchHostnamesTests` (run through
`VerifyHostname` on a certificate whose one DNS name is the pattern) and `TestMatchIP`, and
`src/crypto/tls/handshake_client_test.go` `hostnameInSNITests`; so a difference from Go shows
up as a failing row. The same rules against kubectl itself: `tests/e2e/test_kubeconfig_kubectl.py`.
"""

import pytest

from truegreen.http.certname import CertificateNames, names_host, only_common_name_names, sni_name


def _names(*dns: str, ips: tuple[str, ...] = (), common_name: str = "") -> CertificateNames:
    """A certificate's names as `ssl`'s getpeercert() gives them."""
    alternatives = (*(("DNS", n) for n in dns), *(("IP Address", a) for a in ips))
    peer = {"subject": ((("commonName", common_name),),) if common_name else ()}
    return CertificateNames.of_peer(
        {**peer, "subjectAltName": alternatives} if alternatives else peer
    )


MATCH_HOSTNAMES = [
    ("a.b.c", "a.b.c", True),
    ("a.b.c", "b.b.c", False),
    ("", "b.b.c", False),
    ("a.b.c", "", False),
    ("example.com", "example.com", True),
    ("example.com", "www.example.com", False),
    ("*.example.com", "example.com", False),
    ("*.example.com", "www.example.com", True),
    ("*.example.com", "www.example.com.", True),
    ("*.example.com", "xyz.www.example.com", False),
    ("*.example.com", "https://www.example.com", False),
    ("*.example..com", "www.example..com", False),
    ("www.example..com", "www.example..com", True),
    ("*.*.example.com", "xyz.www.example.com", False),
    ("*.www.*.com", "xyz.www.example.com", False),
    ("*bar.example.com", "foobar.example.com", False),
    ("f*.example.com", "foobar.example.com", False),
    ("www.example.com", "*.example.com", False),
    ("", ".", False),
    (".", "", False),
    (".", ".", False),
    ("example.com", "example.com.", True),
    ("example.com.", "example.com", False),
    ("example.com.", "example.com.", True),
    ("*.com.", "example.com.", False),
    ("*.com.", "example.com", False),
    ("*.com", "example.com", True),
    ("*.com", "example.com.", True),
    ("foo:bar", "foo:bar", True),
    ("*.foo:bar", "xxx.foo:bar", False),
    ("*.2.3.4", "1.2.3.4", False),
    ("*.2.3.4", "[1.2.3.4]", False),
    ("*:4860:4860::8888", "2001:4860:4860::8888", False),
    ("*:4860:4860::8888", "[2001:4860:4860::8888]", False),
    ("2001:4860:4860::8888", "2001:4860:4860::8888", False),
    ("2001:4860:4860::8888", "[2001:4860:4860::8888]", False),
    ("[2001:4860:4860::8888]", "2001:4860:4860::8888", False),
    ("[2001:4860:4860::8888]", "[2001:4860:4860::8888]", False),
]


@pytest.mark.parametrize(("pattern", "host", "named"), MATCH_HOSTNAMES)
def test_a_dns_name_matches_as_go_matches_it(pattern: str, host: str, named: bool) -> None:
    assert names_host(_names(pattern), host) is named


def test_addresses_match_ip_names_only_brackets_or_not() -> None:
    """Go's TestMatchIP, and `net.IP.Equal`: an IPv4 address is its IPv4-mapped IPv6 form."""
    assert names_host(_names("*.foo.bar.baz", common_name="*.foo.bar.baz"), "quux.foo.bar.baz")
    assert not names_host(_names("*.2.3.4", common_name="*.2.3.4"), "1.2.3.4")
    loopbacks = _names(ips=("127.0.0.1", "0:0:0:0:0:0:0:1"))
    assert [names_host(loopbacks, h) for h in ("127.0.0.1", "::1", "[::1]")] == [True] * 3
    assert names_host(loopbacks, "::ffff:127.0.0.1")
    assert names_host(_names(ips=("0:0:0:0:0:FFFF:7F00:1",)), "127.0.0.1")
    # net.ParseIP reads no zone and no leading zero; such a name is matched as a host name.
    assert not names_host(loopbacks, "::1%lo")
    assert not names_host(loopbacks, "127.000.0.1")
    assert not names_host(_names("127.0.0.1"), "127.0.0.1")


def test_case_differs_only_in_ascii_letters() -> None:
    assert names_host(_names("API.Internal"), "api.INTERNAL")
    assert names_host(_names("*.Internal"), "API.internal")
    # The Kelvin sign is a K to str.lower, not to Go's toLowerCaseASCII.
    assert not names_host(_names("k.internal"), "\u212a.internal")


def test_the_common_name_is_told_only_where_it_alone_names_the_host() -> None:
    """verify.go `HostnameError.Error`: "relies on legacy Common Name field" when the Common
    Name matches the host (for an address, the address without brackets)."""
    assert only_common_name_names(_names(common_name="api.internal"), "api.internal")
    assert only_common_name_names(_names(common_name="::1"), "[::1]")
    assert only_common_name_names(_names("other", common_name="api.internal"), "api.internal")
    assert not only_common_name_names(_names(common_name="api.internal"), "other.internal")
    assert not only_common_name_names(_names("api.internal", common_name="x"), "other.internal")
    assert not only_common_name_names(_names(), "api.internal")
    assert not only_common_name_names(
        _names("api.internal", common_name="api.internal"), "api.internal"
    )


@pytest.mark.parametrize(
    "alternative",
    [
        ("DNS", "ÿ.internal"),
        ("email", "ÿ@internal"),
        ("URI", "https://ÿ"),
        ("IP Address", "<invalid>"),
    ],
)
def test_a_name_go_cannot_parse_refuses_the_certificate(alternative: tuple[str, str]) -> None:
    """parser.go `parseSANExtension`: DNS names, emails and URIs are IA5 (ASCII) and an
    address is 4 or 16 bytes, or the certificate is refused whole."""
    with pytest.raises(ValueError, match="Go cannot parse"):
        CertificateNames.of_peer({"subjectAltName": (alternative, ("IP Address", "127.0.0.1"))})
    assert names_host(_names("<invalid>"), "<invalid>")


SNI = [
    ("", None),
    ("localhost", "localhost"),
    ("foo, bar, baz and qux", "foo, bar, baz and qux"),
    ("golang.org", "golang.org"),
    ("golang.org.", "golang.org"),
    ("1.2.3.4", None),
    ("::1", None),
    ("::1%lo0", None),
    ("[::1]", None),
    ("[::1%lo0]", None),
]


@pytest.mark.parametrize(("name", "announced"), SNI)
def test_the_name_announced_in_the_handshake_is_go_s(name: str, announced: str | None) -> None:
    assert sni_name(name) == announced
