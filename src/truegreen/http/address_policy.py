"""Which addresses a client may connect to, judged on the addresses a name resolved to (a name
may resolve anywhere, so its text alone proves nothing), before anything is dialled.

Never: link-local (169.254.0.0/16, where clouds serve instance metadata, and fe80::/10), the
unspecified addresses and the rest of 0.0.0.0/8 (Linux connects them to this machine),
multicast, the reserved 240.0.0.0/4 and broadcast, and the cloud metadata addresses outside
link-local (AWS's IPv6 fd00:ec2::254). Loopback, and the private networks (10.0.0.0/8,
172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7 and every other address Python's
`ipaddress` calls not global), only where the caller lets them. An IPv4 address mapped into
IPv6 (::ffff:a.b.c.d), and one that carries an IPv4 address to deliver it (NAT64's
64:ff9b::a.b.c.d, SIIT, 6to4, IPv4-compatible), is judged as the IPv4 address it carries.
"""

import ipaddress

from msgspec import Struct

from truegreen.http.errors import AddressRefusedError, Place
from truegreen.http.racing import Address

_METADATA = frozenset({ipaddress.ip_address("fd00:ec2::254")})
"""Instance-metadata addresses that are not link-local (AWS IMDS over IPv6)."""
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")


class AddressPolicy(Struct, frozen=True):
    """Where a client may connect: whether this machine's own addresses, and private network
    addresses, may be dialled for a given `host`/`port` (the host as the URL names it, lower
    case)."""

    named_hosts: frozenset[tuple[str, int | None]] | None = None
    """None: loopback and private addresses always allowed; else only for these (host, port)
    pairs, port None meaning any port of that host."""

    def check(self, host: str, port: int, address: Address) -> None:
        """Raise AddressRefusedError when `address` (one `host` resolved to) is not allowed."""
        ip = _unmapped(ipaddress.ip_address(address[1][0].partition("%")[0]))
        if (
            ip.is_link_local
            or ip.is_unspecified
            or ip.is_multicast
            or ip in _METADATA
            # IPv6's reserved ranges hold ::1; IPv4's are 240.0.0.0/4 and broadcast.
            or (ip.version == 4 and (ip.is_reserved or ip in _THIS_NETWORK))
        ):
            raise AddressRefusedError(
                f"{host} resolves to {ip}, an address truegreen never connects to",
                place=Place.NEVER,
            )
        if ip.is_loopback and not self.named(host, port):
            raise AddressRefusedError(
                f"{host} resolves to {ip}, this machine's own address", place=Place.OWN
            )
        private = not ip.is_global or any(ip in network for network in _NOT_GLOBAL_V6)
        if not ip.is_loopback and private and not self.named(host, port):
            raise AddressRefusedError(
                f"{host} resolves to {ip}, an address of a private network",
                place=Place.PRIVATE,
            )

    def named(self, host: str, port: int) -> bool:
        """Whether this machine's own and private network addresses may be dialled for
        `host`:`port`."""
        named = self.named_hosts
        return named is None or (host, None) in named or (host, port) in named


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""RFC 6052's well-known NAT64 prefix: DNS64 answers a name whose address is a.b.c.d (a
private one too) with 64:ff9b::a.b.c.d, and the NAT64 gateway delivers it there."""
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")
"""RFC 6145's IPv4-translated addresses, ::ffff:0:a.b.c.d."""
_COMPATIBLE = ipaddress.ip_network("::/96")
"""The deprecated IPv4-compatible addresses, ::a.b.c.d (:: and ::1 excepted)."""
_NOT_GLOBAL_V6 = (
    ipaddress.ip_network("64:ff9b:1::/48"),  # RFC 8215: local-use NAT64, a network's own
    ipaddress.ip_network("fec0::/10"),  # site-local, deprecated but still routed by some
)
"""IPv6 networks that are a network's own whatever Python 3.11's `is_global` says."""


def _unmapped(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address an IPv6 address carries and leads to (mapped, NAT64, SIIT, 6to4,
    IPv4-compatible), judged in its stead; else the address itself."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or ip in _SIIT or (ip in _COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip
