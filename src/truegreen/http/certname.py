"""Whether a server's certificate names the server, by Go's rules rather than OpenSSL's.

kubectl checks the name in Go's crypto/x509 (`src/crypto/x509/verify.go`,
`(*Certificate).VerifyHostname`), which differs from OpenSSL's X509_check_host and
X509_check_ip that Python's ssl would use: an address may be written in brackets (`[::1]`),
addresses compare as `net.IP.Equal` compares them (`::ffff:127.0.0.1` is 127.0.0.1), one
trailing dot of the name is dropped, a `*` matches only as a whole left-most label (`*.com`
included, which OpenSSL refuses), and a name or pattern that is no valid host name matches
only letter for letter. So the handshake checks only the chain, and the name is checked here.
"""

import ipaddress
from typing import Any

from msgspec import Struct

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_IPV4_IN_IPV6 = bytes(10) + b"\xff\xff"
"""net.IP's 16-byte form of an IPv4 address starts with this (net/ip.go `v4InV6Prefix`)."""


class CertificateNames(Struct, frozen=True):
    """The names a server certificate holds, as Go's x509.Certificate has them."""

    dns_names: tuple[str, ...]
    """The subject alternative names of type DNS, as written."""
    ip_addresses: frozenset[bytes]
    """The subject alternative names of type IP, each in net.IP's 16-byte form."""
    has_alternative_names: bool
    """Whether the certificate has the subject alternative name extension at all."""
    common_name: str
    """The subject's last Common Name, as pkix.Name's `CommonName` keeps it; "" if none."""

    @classmethod
    def of_peer(cls, peer: dict[str, Any]) -> "CertificateNames":
        """The names of a certificate as `ssl`'s `getpeercert()` decodes it; ValueError for
        alternative names Go's parser refuses, and so the whole certificate (crypto/x509
        parser.go `parseSANExtension`: a DNS name, email or URI not in ASCII, "x509: SAN
        dNSName is malformed"; an address of neither 4 nor 16 bytes, which `ssl` writes as
        `<invalid>`)."""
        alternatives: tuple[tuple[str, str], ...] = peer.get("subjectAltName", ())
        for kind, value in alternatives:
            text = kind in ("DNS", "email", "URI")
            if (text and not value.isascii()) or (kind == "IP Address" and value == "<invalid>"):
                raise ValueError(f"a subject alternative name Go cannot parse ({kind})")
        addresses = (_ip16(value) for kind, value in alternatives if kind == "IP Address")
        common_names = [
            value
            for relative_name in peer.get("subject", ())
            for key, value in relative_name
            if key == "commonName"
        ]
        return cls(
            dns_names=tuple(value for kind, value in alternatives if kind == "DNS"),
            ip_addresses=frozenset(address for address in addresses if address is not None),
            has_alternative_names="subjectAltName" in peer,
            common_name=common_names[-1] if common_names else "",
        )


def names_host(names: CertificateNames, host: str) -> bool:
    """Whether the certificate names `host`: Go's `VerifyHostname`. An address (bracketed or
    not) matches the IP names only; any other name matches the DNS names, case aside, a `*`
    left-most label of a valid pattern matching one label of a valid name."""
    address = _ip16(_unbracketed(host))
    if address is not None:
        # RFC 6125, Appendix B.2: an address is matched against IP names, never DNS names.
        return address in names.ip_addresses
    candidate = host.translate(_ASCII_LOWER)
    valid = _valid_hostname(candidate, pattern=False)
    return any(
        _match_hostnames(pattern, candidate)
        if valid and _valid_hostname(pattern, pattern=True)
        else _match_exactly(pattern, candidate)
        for pattern in names.dns_names
    )


def only_common_name_names(names: CertificateNames, host: str) -> bool:
    """Whether `host`, which the certificate's alternative names do not name, is named by its
    Common Name alone: what Go says as "x509: certificate relies on legacy Common Name field,
    use SANs instead" (verify.go `HostnameError.Error`, `matchHostnames(CommonName, Host)`)
    when the certificate has no alternative names; also said here when it has only others."""
    address = _unbracketed(host)
    subject = address if _ip16(address) is not None else host
    return not names_host(names, host) and _match_hostnames(names.common_name, subject)


def sni_name(name: str) -> str | None:
    """The name the TLS handshake announces for `name` (the server name indication), or None
    for none: crypto/tls handshake_client.go `hostnameInSNI` sends no address (bracketed, or
    with a zone) and drops every trailing dot (RFC 6066, section 3)."""
    address = _unbracketed(name)
    zone = address.rfind("%")
    if _ip16(address[:zone] if zone > 0 else address) is not None:
        return None
    return name.rstrip(".") or None


def _unbracketed(host: str) -> str:
    # verify.go VerifyHostname: "IP addresses may be written in [ ]".
    return host[1:-1] if len(host) >= 3 and host[0] == "[" and host[-1] == "]" else host


def _ip16(text: str) -> bytes | None:
    """`text` as net.ParseIP reads it, in its 16-byte form (so an IPv4 address and its
    IPv4-mapped IPv6 form are one, as `net.IP.Equal` finds), or None when it is no address.
    ParseIP takes no zone (`%eth0`), where `ipaddress` would."""
    if not text.isascii() or "%" in text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    packed = address.packed
    return _IPV4_IN_IPV6 + packed if len(packed) == 4 else packed


def _valid_hostname(host: str, *, pattern: bool) -> bool:
    """verify.go `validHostname`: labels of ASCII letters, digits, `_` and `-` (not first),
    none empty; a pattern may have `*` as its whole first label but is not `*` alone; a name
    (not a pattern) may end in one dot."""
    if not pattern:
        host = host.removesuffix(".")
    if not host or host == "*":
        return False
    for index, label in enumerate(host.split(".")):
        if pattern and index == 0 and label == "*":
            continue
        if not label or not all(_hostname_character(c, first=i == 0) for i, c in enumerate(label)):
            return False
    return True


def _hostname_character(character: str, *, first: bool) -> bool:
    if character == "-":
        return not first
    return character == "_" or (character.isascii() and character.isalnum())


def _match_exactly(pattern: str, host: str) -> bool:
    """verify.go `matchExactly`: equal but for ASCII case, neither empty nor `.`."""
    if pattern in ("", ".") or host in ("", "."):
        return False
    return pattern.translate(_ASCII_LOWER) == host.translate(_ASCII_LOWER)


def _match_hostnames(pattern: str, host: str) -> bool:
    """verify.go `matchHostnames`: label by label but for ASCII case, one trailing dot of the
    host dropped, a first label `*` of the pattern matching any one label."""
    pattern_labels = pattern.translate(_ASCII_LOWER).split(".")
    host_labels = host.removesuffix(".").translate(_ASCII_LOWER).split(".")
    if not pattern or host_labels == [""] or len(pattern_labels) != len(host_labels):
        return False
    return all(
        (index == 0 and label == "*") or label == host_labels[index]
        for index, label in enumerate(pattern_labels)
    )
