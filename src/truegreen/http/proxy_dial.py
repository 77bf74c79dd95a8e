"""Reaching a server through a proxy, byte for byte as Go's net/http does it for kubectl.

Go `src/net/http/transport.go` (`dialConn`): an http proxy is asked for a tunnel with CONNECT,
an https proxy the same after a TLS handshake with the proxy itself (checked with the
cluster's own TLS settings, as Go clones `TLSClientConfig`); a socks5 proxy is asked with RFC
1928, with the RFC 1929 login when the URL has userinfo (golang.org/x/net `internal/socks`), and
is sent the server's NAME, not an address, so the proxy resolves it. The stream returned reaches
the server; the transport then starts the server's TLS inside it.

`EnvironmentProxies` picks the way to each server of a client that talks to many (the registry
client: a registry, its token service, the hosts it redirects to), per origin, as Go's
`http.ProxyFromEnvironment` picks it per request.
"""

import ipaddress
import struct
from collections.abc import Mapping

from truegreen import __version__
from truegreen.http.deadline import Deadline
from truegreen.http.dial import AddressCheck, Dialer, DirectDialer, Stream, resolve_name
from truegreen.http.errors import (
    AddressNotFoundError,
    ConnectFailedError,
    ConnectionDroppedError,
    ConnectRefusedError,
    ProtocolViolationError,
    ProxyFailedError,
    TimedOutError,
)
from truegreen.http.head import read_final_head, request_head
from truegreen.http.proxy import (
    Proxy,
    ProxyUrlError,
    ascii_host,
    join_host_port,
    proxy_from_environment,
)
from truegreen.http.tls import TlsSettings

MAX_PROXY_HEAD_BYTES = 16384
"""The proxy's answer to CONNECT (status line and headers) may not exceed this."""
_REASON_LIMIT = 80
"""Characters of a proxy's reason phrase quoted in a message."""

# RFC 1928 / RFC 1929 wire constants (golang.org/x/net internal/socks/socks.go).
_SOCKS5 = 0x05
_NO_LOGIN, _USERNAME_PASSWORD, _NO_ACCEPTABLE = 0x00, 0x02, 0xFF
_CONNECT = 0x01
_IPV4, _NAME, _IPV6 = 0x01, 0x03, 0x04
_LOGIN_VERSION = 0x01
_REPLIES = {
    0x01: "general SOCKS server failure",
    0x02: "connection not allowed by ruleset",
    0x03: "network unreachable",
    0x04: "host unreachable",
    0x05: "connection refused",
    0x06: "TTL expired",
    0x07: "command not supported",
    0x08: "address type not supported",
}


class ProxyDialer:
    """A `Dialer` that reaches every server through one proxy (http, https or socks5)."""

    def __init__(
        self,
        proxy: Proxy,
        tls: TlsSettings,
        first_hop: Dialer | None = None,
        target_check: AddressCheck | None = None,
    ) -> None:
        """`tls` verifies an https proxy (the cluster's settings, as Go uses them for both).
        `target_check`, when given, judges a server written as an address before the proxy is
        reached; a server's name is the proxy's to resolve, and the proxy's own address is
        not judged by it."""
        self._proxy = proxy
        self._tls = tls
        self._first_hop = first_hop or DirectDialer()
        self._target_check = target_check

    def connect(self, host: str, port: int, deadline: Deadline) -> Stream:
        """A stream to `host:port` through the proxy; ProxyFailedError when the proxy fails,
        AddressRefusedError when `target_check` refuses the address `host` is."""
        if self._target_check is not None and _is_address(host):
            for address in resolve_name(host, port, deadline):  # an address: no one is asked
                self._target_check(host, port, address)
        stream = self._reach_proxy(deadline)
        try:
            if self._proxy.scheme == "socks5":
                _socks5_connect(stream, self._proxy, host, port, deadline)
            else:
                _http_connect(stream, self._proxy, host, port, deadline)
        except TimedOutError:
            stream.close()
            raise TimedOutError(
                f"the proxy {self._proxy.address} did not open the way before the deadline",
                connected=False,
            ) from None
        except ConnectionDroppedError:
            stream.close()
            raise ProxyFailedError(
                f"the proxy {self._proxy.address} closed the connection"
            ) from None
        except BaseException:
            stream.close()
            raise
        return stream

    def _reach_proxy(self, deadline: Deadline) -> Stream:
        proxy = self._proxy
        try:
            stream = self._first_hop.connect(proxy.host, proxy.port, deadline)
        except ConnectRefusedError:
            raise ProxyFailedError(f"the proxy {proxy.address} refused the connection") from None
        except AddressNotFoundError:
            raise ProxyFailedError(f"the proxy's name {proxy.host} was not found") from None
        except ConnectFailedError:
            raise ProxyFailedError(f"the proxy {proxy.address} could not be reached") from None
        if proxy.scheme != "https":
            return stream
        from truegreen.http.tlsstream import start_tls  # ssl only when a proxy speaks it

        try:
            return start_tls(stream, self._tls, proxy.host, deadline)
        except ConnectFailedError as error:
            stream.close()
            raise ProxyFailedError(f"TLS with the proxy {proxy.address} failed: {error}") from None
        except BaseException:
            stream.close()
            raise

    def describe(self) -> str:
        """How this dialer reaches a server."""
        return f"through the proxy {self._proxy.address}"


def _is_address(host: str) -> bool:
    """Whether `host` is an IP address (an IPv6 one maybe with its zone), not a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class EnvironmentProxies:
    """The way to each server, as Go's `http.ProxyFromEnvironment` picks it per request: through
    the proxy `HTTPS_PROXY` (https) or `HTTP_PROXY` (http) names, unless `NO_PROXY` exempts the
    server or it is this machine (`proxy.proxy_from_environment`, the rules kubectl follows for
    the cluster); else `direct`. The variables are read once, as Go's `envProxyFunc` reads them.

    Through a proxy, the proxy resolves the server's name and only a server written as an
    address is judged by `check` (the same check `direct` applies to every address it dials);
    the proxy's own address is the operator's setting and is not judged by it. An https proxy
    is verified with `tls`, as Go verifies it with the transport's `TLSClientConfig`.
    """

    def __init__(
        self,
        environ: Mapping[str, str],
        tls: TlsSettings,
        direct: Dialer,
        check: AddressCheck | None = None,
    ) -> None:
        """`environ`: the process's environment (copied now)."""
        self._environ = dict(environ)
        self._tls = tls
        self._direct = direct
        self._check = check

    def dialer(self, scheme: str, host: str, port: int) -> Dialer:
        """The dialer for `scheme://host:port` (a `transport.Route`). Raises ProxyFailedError
        when the variable for `scheme` names a proxy of a kind that cannot be used, as Go then
        fails every request it would send through it."""
        try:
            proxy = proxy_from_environment(self._environ, scheme, host, port)
        except ProxyUrlError as error:
            named = f"{scheme.upper()}_PROXY (or {scheme}_proxy)"
            raise ProxyFailedError(f"{named} names a proxy that cannot be used: {error}") from None
        if proxy is None:
            return self._direct
        return ProxyDialer(proxy, self._tls, target_check=self._check)


def _http_connect(stream: Stream, proxy: Proxy, host: str, port: int, deadline: Deadline) -> None:
    """Ask an http(s) proxy for a tunnel to `host:port`; only a 200 opens it, as in Go."""
    target = join_host_port(host, port)
    headers = [("host", target), ("user-agent", f"truegreen/{__version__}")]
    authorization = proxy.basic_authorization()
    if authorization is not None:
        headers.append(("proxy-authorization", authorization))
    stream.send_all(request_head("CONNECT", target, headers), deadline)
    try:
        read = read_final_head(stream, b"", deadline, MAX_PROXY_HEAD_BYTES)
    except ProtocolViolationError:
        raise ProxyFailedError(
            f"the proxy {proxy.address} did not answer the tunnel request in HTTP"
        ) from None
    if read is None:
        raise ProxyFailedError(f"the proxy {proxy.address} closed the connection unanswered")
    head = read[0]
    if head.status != 200:
        reason = _printable(head.reason)
        raise ProxyFailedError(
            f"the proxy {proxy.address} refused the tunnel: {head.status} {reason}".rstrip()
        )
    # Bytes after the answer's head are dropped, as Go drops its buffered reader here: a TLS
    # server does not speak before it is spoken to.


def _printable(text: str) -> str:
    kept = "".join(c for c in text if " " <= c <= "~")
    return kept if len(kept) <= _REASON_LIMIT else kept[:_REASON_LIMIT] + "…"


class _Exactly:
    """Reads exactly the bytes a SOCKS5 answer is made of; the proxy cannot drip forever (the
    deadline) nor send more than the protocol allows (checked at the end)."""

    def __init__(self, stream: Stream, proxy: Proxy) -> None:
        self._stream = stream
        self._proxy = proxy
        self._buffer = b""

    def take(self, count: int, deadline: Deadline) -> bytes:
        while len(self._buffer) < count:
            data = self._stream.receive(deadline)
            if not data:
                raise _socks_failure(self._proxy, "it closed the connection during the handshake")
            self._buffer += data
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        return taken

    def check_drained(self) -> None:
        if self._buffer:
            raise _socks_failure(self._proxy, "it sent more than its answer")


def _socks_failure(proxy: Proxy, why: str) -> ProxyFailedError:
    return ProxyFailedError(f"the SOCKS5 proxy {proxy.address} could not be used: {why}")


def _socks5_connect(stream: Stream, proxy: Proxy, host: str, port: int, deadline: Deadline) -> None:
    """Open a SOCKS5 connection to `host:port` (golang.org/x/net internal/socks/client.go)."""
    answer = _Exactly(stream, proxy)
    with_login = proxy.username is not None
    stream.send_all(
        bytes(
            [_SOCKS5, 2, _NO_LOGIN, _USERNAME_PASSWORD] if with_login else [_SOCKS5, 1, _NO_LOGIN]
        ),
        deadline,
    )
    version, method = answer.take(2, deadline)
    _check_version(proxy, version)
    if method == _NO_ACCEPTABLE:
        raise _socks_failure(proxy, "it accepts none of the login methods offered")
    if with_login:  # without a login Go installs no authenticator and goes on regardless
        _socks5_login(stream, answer, proxy, method, deadline)
    stream.send_all(_socks5_request(proxy, host, port), deadline)
    version, reply, reserved, kind = answer.take(4, deadline)
    _check_version(proxy, version)
    if reply != 0:
        why = _REPLIES.get(reply, f"unknown code: {reply}")
        raise _socks_failure(proxy, f"it could not connect to {join_host_port(host, port)} ({why})")
    if reserved != 0:
        raise _socks_failure(proxy, "its answer has a non-zero reserved field")
    if kind == _IPV4:
        length = 4
    elif kind == _IPV6:
        length = 16
    elif kind == _NAME:
        length = answer.take(1, deadline)[0]
    else:
        raise _socks_failure(proxy, f"its answer has an unknown address type {kind}")
    answer.take(length + 2, deadline)  # the proxy's own address and port: not needed
    answer.check_drained()


def _check_version(proxy: Proxy, version: int) -> None:
    if version != _SOCKS5:
        raise _socks_failure(proxy, f"it answered protocol version {version}, not 5")


def _socks5_login(
    stream: Stream, answer: _Exactly, proxy: Proxy, method: int, deadline: Deadline
) -> None:
    """RFC 1929 username/password, when the proxy chose it (internal/socks UsernamePassword)."""
    if method == _NO_LOGIN:
        return
    if method != _USERNAME_PASSWORD:
        raise _socks_failure(proxy, f"it asks for login method {method}, which is not supported")
    user, password = (proxy.username or "").encode(), proxy.password.encode()
    if not user or len(user) > 255 or len(password) > 255:
        raise _socks_failure(proxy, "the proxy login is empty or longer than 255 bytes")
    stream.send_all(
        bytes([_LOGIN_VERSION, len(user)]) + user + bytes([len(password)]) + password, deadline
    )
    version, status = answer.take(2, deadline)
    if version != _LOGIN_VERSION:
        raise _socks_failure(proxy, f"its login answer has version {version}, not 1")
    if status != 0:
        raise _socks_failure(proxy, "it refused the login (username/password)")


def _socks5_request(proxy: Proxy, host: str, port: int) -> bytes:
    """CONNECT to `host:port`: an address as an address, any name as a name (Go's dialer
    resolves nothing itself, so the proxy resolves the cluster's name)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        name = ascii_host(host).encode("utf-8")
        if len(name) > 255:
            raise _socks_failure(proxy, "the server's name is longer than 255 bytes") from None
        address = bytes([_NAME, len(name)]) + name
    else:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # Go's To4() sends a mapped address as IPv4
        address = bytes([_IPV4 if ip.version == 4 else _IPV6]) + ip.packed
    return bytes([_SOCKS5, _CONNECT, 0]) + address + struct.pack(">H", port)
