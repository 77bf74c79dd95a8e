"""Image references as containerd and the kubelet parse them, logins matched as the kubelet's
keyring matches them, and the addresses a registry client may dial.

Grammar: distribution/reference regexp.go and normalize.go (ParseNormalizedNamed); the error
words: reference.go and kubernetes pkg/kubelet/images/image_manager.go (applyDefaultImageTag).
Login matching: kubernetes pkg/credentialprovider/keyring.go (URLsMatchStr, URLsMatch).
"""

import socket
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truegreen.http.address_policy import AddressPolicy
from truegreen.http.errors import AddressRefusedError, Place
from truegreen.images import (
    ImageReferenceError,
    keyring_key,
    kubelet_message,
    login_covers,
    parse_image,
)

HEX = "a" * 64


@pytest.mark.parametrize(
    ("text", "registry", "repository", "host", "port"),
    [
        ("[::1]:5443/team/app:1", "[::1]:5443", "team/app", "::1", 5443),
        ("[2001:db8::1]/app", "[2001:db8::1]", "app", "2001:db8::1", None),
        ("localhost/app", "localhost", "app", "localhost", None),
        ("localhost:5000/team/app", "localhost:5000", "team/app", "localhost", 5000),
        (
            "Registry.Example.com/team/app",
            "Registry.Example.com",
            "team/app",
            "registry.example.com",
            None,
        ),
        ("index.docker.io/busybox", "docker.io", "library/busybox", "docker.io", None),
        ("team/app", "docker.io", "team/app", "docker.io", None),
        (
            "a.b-c.example:8080/x/y__z/w--v",
            "a.b-c.example:8080",
            "x/y__z/w--v",
            "a.b-c.example",
            8080,
        ),
    ],
)
def test_the_domain_is_host_components_or_bracketed_ipv6_with_an_optional_port(
    text: str, registry: str, repository: str, host: str, port: int | None
) -> None:
    reference = parse_image(text)
    assert (reference.registry, reference.repository) == (registry, repository)
    assert (reference.host, reference.port) == (host, port)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[::1]:5443#.corp.example/team/app:1", "invalid reference format"),
        ("localhost:5000#.corp.example/team/app:1", "invalid reference format"),
        ("evil[.example/x:1", "invalid reference format"),
        ("r.example?x=1/team/app", "invalid reference format"),
        ("r.example/team/app:1\n", "invalid reference format"),
        ("-r.example/app", "invalid reference format"),
        ("r.example:port/app", "invalid reference format"),
        ("[::1%eth0]:5000/app", "invalid reference format"),
        ("a_b.example/x", "invalid reference format"),
        ("r.example/app@md5:" + "a" * 32, "unsupported digest algorithm"),
        ("r.example/app@sha256:" + "a" * 63 + "A", "invalid checksum digest format"),
        # go-digest Algorithm.Validate: the length for the algorithm first, then the hex
        ("r.example/app@sha256:" + "e" * 65, "invalid checksum digest length"),
        ("r.example/app@sha256:" + "abc" * 11 + "ab", "invalid checksum digest length"),
        ("r.example/app@sha512:" + "A" * 64, "invalid checksum digest length"),
        ("r.example/" + "a" * 256, "repository name must not be more than 255 characters"),
        (HEX, f"invalid repository name ({HEX}), cannot specify 64-byte hexadecimal strings"),
        (
            "r.example/Team/app",
            "invalid reference format: repository name (Team/app) must be lowercase",
        ),
    ],
)
def test_anything_else_is_an_invalid_name_in_the_kubelet_s_words(text: str, reason: str) -> None:
    with pytest.raises(ImageReferenceError) as raised:
        parse_image(text)
    assert raised.value.reason == reason
    assert str(raised.value) == f"couldn't parse image reference {_go_quoted(text)}: {reason}"


def _go_quoted(text: str) -> str:
    return '"' + text.replace("\n", "\\n") + '"'


def test_the_kubelet_s_message_for_an_invalid_name() -> None:
    with pytest.raises(ImageReferenceError) as raised:
        parse_image('evil"[.example/x:1')
    assert kubelet_message(raised.value) == (
        'Failed to apply default image tag "evil\\"[.example/x:1": couldn\'t parse image '
        'reference "evil\\"[.example/x:1": invalid reference format'
    )


@given(st.text(alphabet="ab.:/[]@#?-_%:0123456789", max_size=40))
def test_a_parsed_reference_has_a_host_and_port_a_url_can_carry(text: str) -> None:
    try:
        reference = parse_image(text)
    except ImageReferenceError:
        return
    assert all(c not in reference.host for c in "#?/@[]%")
    assert reference.port is None or reference.port >= 0


@pytest.mark.parametrize(
    ("pattern", "image", "covered"),
    [
        ("*.corp.example", "a.corp.example/team/app", True),
        ("*.corp.example", "a.b.corp.example/team/app", False),  # one part per glob
        ("*.corp.example", "a.corp.example:5000/team/app", False),  # the port must match
        ("*.corp.example", "::1", False),
        ("a.corp.example:5000", "a.corp.example:5000/team/app", True),
        ("a.corp.example:5000", "a.corp.example/team/app", False),
        ("quay.io/team", "quay.io/team/app", True),  # the login's path: a prefix
        ("quay.io/team", "quay.io/other/app", False),
        ("reg*.example", "registry.example/x", True),
        ("reg?.example", "regs.example/x", False),  # url.Parse: `?` starts a query
        ("[a-z].example", "a.example/x", False),  # a class: not sent rather than sent widely
        ("[::1]:5443", "[::1]:5443/team/app", True),
        ("*.corp.example#", "a.corp.example/x", True),  # url.Parse: `#` starts a fragment
        ("docker.io", "docker.io/library/busybox", True),
    ],
)
def test_a_login_covers_an_image_as_the_kubelet_s_keyring_matches(
    pattern: str, image: str, covered: bool
) -> None:
    assert login_covers(pattern, image) is covered


def test_a_docker_config_key_keeps_its_path_and_drops_the_api_s() -> None:
    """keyring.go BasicDockerKeyring.Add (tests/unit/test_keyring.py has every rule)."""
    assert keyring_key("https://index.docker.io/v1/") == "index.docker.io"
    assert keyring_key("Quay.io/team/") == "Quay.io/team/"
    assert keyring_key("https://r.example:5000/v2/") == "r.example:5000"


def _v4(ip: str) -> tuple[int, tuple[str, int]]:
    return (socket.AF_INET6 if ":" in ip else socket.AF_INET, (ip, 443))


@pytest.mark.parametrize(
    "ip",
    [
        "169.254.169.254",
        "fd00:ec2::254",
        "fe80::1",
        "0.0.0.0",
        "0.1.2.3",
        "::",
        "224.0.0.1",
        "ff02::1",
        "255.255.255.255",
        "::ffff:169.254.169.254",
    ],
)
def test_link_local_metadata_unspecified_and_multicast_are_never_dialled(ip: str) -> None:
    for policy in (AddressPolicy(), AddressPolicy(frozenset({("r.example", None)}))):
        with pytest.raises(AddressRefusedError) as refused:
            policy.check("r.example", 443, _v4(ip))
        assert refused.value.place is Place.NEVER
        assert str(refused.value).endswith("an address truegreen never connects to")


def test_loopback_only_where_it_is_allowed() -> None:
    AddressPolicy().check("localhost", 5000, _v4("127.0.0.1"))  # refresh: as docker allows
    named = AddressPolicy(frozenset({("localhost", 5000), ("127.0.0.1", None)}))
    named.check("localhost", 5000, _v4("127.0.0.1"))
    named.check("127.0.0.1", 9, _v4("127.0.0.1"))
    for host, port, ip in (
        ("localhost", 5001, "127.0.0.1"),
        ("r.example", 443, "127.0.0.2"),
        ("r.example", 443, "::1"),
        ("r.example", 443, "::ffff:127.0.0.1"),
    ):
        with pytest.raises(AddressRefusedError) as refused:
            named.check(host, port, _v4(ip))
        assert refused.value.place is Place.OWN, (host, port, ip)
    named.check("r.example", 443, _v4("93.184.215.14"))  # a global address: anyone's


@pytest.mark.parametrize(
    "ip",
    ["10.0.0.5", "172.16.3.4", "192.168.1.10", "100.64.0.7", "fd12:3456::1", "::ffff:10.1.2.3"],
)
def test_a_private_network_address_only_where_it_is_named(ip: str) -> None:
    """doctor, on the operator's computer, is led to a private address only by a registry the
    operator named; refresh (no names: it runs in the workloads' network) always may."""
    AddressPolicy().check("harbor.corp", 443, _v4(ip))
    named = AddressPolicy(frozenset({("harbor.corp", None)}))
    named.check("harbor.corp", 443, _v4(ip))
    with pytest.raises(AddressRefusedError) as refused:
        named.check("evil.example", 443, _v4(ip))
    assert refused.value.place is Place.PRIVATE
    assert str(refused.value) == (
        f"evil.example resolves to {ip.removeprefix('::ffff:')}, an address of a private network"
    )


@pytest.mark.parametrize(
    ("ip", "carried"),
    [
        ("64:ff9b::a00:1", "10.0.0.1"),  # NAT64 (RFC 6052): DNS64's answer for a 10.x name
        ("2002:a00:1::", "10.0.0.1"),  # 6to4
        ("::ffff:0:a00:1", "10.0.0.1"),  # SIIT (RFC 6145)
        ("::a00:1", "10.0.0.1"),  # IPv4-compatible
        ("64:ff9b:1::a00:1", "64:ff9b:1::a00:1"),  # local-use NAT64 (RFC 8215): its own
        ("fec0::1", "fec0::1"),  # site-local
    ],
)
def test_an_ipv6_address_that_leads_into_a_private_network_is_judged_as_one(
    ip: str, carried: str
) -> None:
    """Python's `is_global` calls each of these global (3.11); each leads to a private
    network, so it is refused unless named, as the address it carries would be."""
    named = AddressPolicy(frozenset({("harbor.corp", None)}))
    with pytest.raises(AddressRefusedError) as refused:
        named.check("evil.example", 443, _v4(ip))
    assert (refused.value.place, str(refused.value)) == (
        Place.PRIVATE,
        f"evil.example resolves to {carried}, an address of a private network",
    )


def test_the_metadata_address_through_nat64_is_never_dialled() -> None:
    with pytest.raises(AddressRefusedError) as refused:
        AddressPolicy().check("r.example", 443, _v4("64:ff9b::a9fe:a9fe"))
    assert refused.value.place is Place.NEVER
    AddressPolicy().check("r.example", 443, _v4("64:ff9b::808:808"))  # 8.8.8.8: anyone's


def test_a_login_host_takes_the_characters_go_lets_through_a_host_unescaped() -> None:
    """net/url's shouldEscape(c, encodeHost): ASCII letters and digits, `-_.~`, the sub-delims
    `!$&'()*+,;=`, `:[]<>"`, and every character past ASCII; everything else stops the host.
    Every code point checked against this list (http/gourl.py, which the login match parses
    its URLs with)."""
    from truegreen.http.gourl import _not_in_host

    allowed_ascii = set(string.ascii_letters + string.digits + "-_.~!$&'()*+,;=:[]<>\"")
    wrong = [
        hex(code)
        for code in range(0x110000)
        if (not _not_in_host(chr(code))) != (code >= 0x80 or chr(code) in allowed_ascii)
    ]
    assert wrong == []
    assert _go_host("https://a<b>.example/x") == "a<b>.example"
    assert _go_host("https://a b.example/x") is None
    assert _go_host("https://a%41.example/x") is None


def _go_host(url: str) -> str | None:
    from truegreen.images import _go_url

    parsed = _go_url(url)
    return None if parsed is None else parsed[0]
