"""Loopback proxies that record what passed through them: an HTTP CONNECT proxy (plain, or over
TLS as an https proxy) and a SOCKS5 proxy (RFC 1928, with the RFC 1929 login).

Both serve kubectl and truegreen alike, so a test can hand one kubeconfig to each and compare
what reached the proxy: the target asked for (a name or an address), and the login presented.
A name is resolved through `names` first (`api.internal` → `127.0.0.1`), as a corporate proxy
resolves names its clients cannot; a target of `routes` (`registry-1.docker.io:443`) is taken to
the address and port given instead, so a test can stand in for a public server on loopback.
"""

import base64
import contextlib
import select
import socket
import ssl
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Self


@dataclass(frozen=True)
class Passage:
    """One connection a proxy was asked to open."""

    protocol: str
    """`CONNECT` (http and https proxies) or `SOCKS5`."""
    target: str
    """`host:port` as the client sent it."""
    address_type: str
    """`name`, `ipv4` or `ipv6` (SOCKS5); `authority` for CONNECT."""
    login: tuple[str, str] | None
    """The (user, password) presented, decoded; None when none was."""
    opened: bool
    """Whether the proxy opened the way (login accepted, target reached)."""


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes both ways on ONE thread until either side closes, then close the upstream
    side too: an SSL socket must not be read and written from two threads at once (an https
    proxy's client side is one), and a tunnel whose client left must not stay open to a server
    that may still wait on it (a TLS handshake the client abandoned)."""
    try:
        _copy(client, upstream)
    finally:
        with contextlib.suppress(OSError):
            upstream.close()


def _copy(client: socket.socket, upstream: socket.socket) -> None:
    while True:
        ready: list[socket.socket] = []
        if isinstance(client, ssl.SSLSocket) and client.pending():
            ready = [client]  # decrypted bytes wait inside the SSL object, not in the socket
        if not ready:
            ready, _, _ = select.select([client, upstream], [], [], 30)
        if not ready:
            return
        for source in ready:
            sink = upstream if source is client else client
            data = source.recv(65536)
            if not data:
                return
            sink.sendall(data)


def _read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        piece = sock.recv(count - len(data))
        if not piece:
            raise ConnectionError("the client hung up mid-handshake")
        data += piece
    return data


class _LoopbackProxy:
    """Accepts on 127.0.0.1; each connection is served on its own thread by `_serve`."""

    def __init__(
        self,
        *,
        login: tuple[str, str] | None = None,
        names: Mapping[str, str] | None = None,
        tls: tuple[Path, Path] | None = None,
        routes: Mapping[str, tuple[str, int]] | None = None,
    ) -> None:
        self.passages: list[Passage] = []
        self.connections = 0
        """How many connections it accepted, whatever they then sent (or did not)."""
        self._login = login
        self._names = dict(names or {})
        self._routes = dict(routes or {})
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        """The port the proxy listens on."""
        self._context: ssl.SSLContext | None = None
        if tls is not None:
            self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._context.load_cert_chain(str(tls[0]), str(tls[1]))
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._listener.close()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._open.append(sock)
                self.connections += 1
            threading.Thread(target=self._guarded, args=(sock,), daemon=True).start()

    def _guarded(self, sock: socket.socket) -> None:
        sock.settimeout(30)
        try:
            if self._context is not None:
                sock = self._context.wrap_socket(sock, server_side=True)
                with self._lock:
                    self._open.append(sock)
            self._serve(sock)
        except (OSError, ConnectionError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    def _serve(self, sock: socket.socket) -> None:
        raise NotImplementedError

    def _record(self, passage: Passage) -> None:
        with self._lock:
            self.passages.append(passage)

    def _upstream(self, host: str, port: int) -> socket.socket | None:
        """A connection to the target, its name resolved through `names` (or the whole target
        taken elsewhere by `routes`); None if refused.
        `_relay` closes it when either side ends, as a proxy closes both halves of a tunnel."""
        address = self._routes.get(f"{host}:{port}", (self._names.get(host, host), port))
        try:
            upstream = socket.create_connection(address, timeout=10)
        except OSError:
            return None
        with self._lock:
            self._open.append(upstream)
        return upstream


class HttpConnectProxy(_LoopbackProxy):
    """An HTTP proxy that opens CONNECT tunnels; with `tls`, an https proxy; with `login`, it
    answers 407 to a request without that Basic Proxy-Authorization. `heads` keeps the
    headers of every request it was sent (names lower-cased), so a test can see all that
    reached the proxy itself rather than the server at the tunnel's end."""

    def __init__(
        self,
        *,
        login: tuple[str, str] | None = None,
        names: Mapping[str, str] | None = None,
        tls: tuple[Path, Path] | None = None,
        routes: Mapping[str, tuple[str, int]] | None = None,
    ) -> None:
        super().__init__(login=login, names=names, tls=tls, routes=routes)
        self.heads: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        """The proxy's URL, without a login."""
        scheme = "https" if self._context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def _serve(self, sock: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            piece = sock.recv(4096)
            if not piece or len(head) > 65536:
                return
            head += piece
        lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines[1:])
        }
        with self._lock:
            self.heads.append(headers)
        login = _basic_login(headers.get("proxy-authorization"))
        if method != "CONNECT":
            sock.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        if self._login is not None and login != self._login:
            self._record(Passage("CONNECT", target, "authority", login, False))
            sock.sendall(
                b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                b'Proxy-Authenticate: Basic realm="proxy"\r\nContent-Length: 0\r\n\r\n'
            )
            return
        host, _, port = target.rpartition(":")
        upstream = self._upstream(host.strip("[]"), int(port))
        self._record(Passage("CONNECT", target, "authority", login, upstream is not None))
        if upstream is None:
            sock.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        _relay(sock, upstream)


def _basic_login(header: str | None) -> tuple[str, str] | None:
    if header is None or not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


class Socks5Proxy(_LoopbackProxy):
    """A SOCKS5 proxy (CONNECT only). With `login`, it offers only the username/password
    method and refuses any other login."""

    @property
    def url(self) -> str:
        """The proxy's URL, without a login."""
        return f"socks5://127.0.0.1:{self.port}"

    def _serve(self, sock: socket.socket) -> None:
        version, count = _read_exactly(sock, 2)
        methods = _read_exactly(sock, count)
        if version != 5:
            return
        wanted = 0x02 if self._login is not None else 0x00
        if wanted not in methods:
            sock.sendall(bytes([5, 0xFF]))
            return
        sock.sendall(bytes([5, wanted]))
        login = None
        if self._login is not None:
            _, length = _read_exactly(sock, 2)
            user = _read_exactly(sock, length).decode()
            password = _read_exactly(sock, _read_exactly(sock, 1)[0]).decode()
            login = (user, password)
            if login != self._login:
                self._record(Passage("SOCKS5", "", "", login, False))
                sock.sendall(bytes([1, 1]))
                return
            sock.sendall(bytes([1, 0]))
        _, command, _, kind = _read_exactly(sock, 4)
        if kind == 0x03:
            host = _read_exactly(sock, _read_exactly(sock, 1)[0]).decode()
            address_type = "name"
        else:
            packed = _read_exactly(sock, 4 if kind == 0x01 else 16)
            host = socket.inet_ntop(socket.AF_INET if kind == 0x01 else socket.AF_INET6, packed)
            address_type = "ipv4" if kind == 0x01 else "ipv6"
        (port,) = struct.unpack(">H", _read_exactly(sock, 2))
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        upstream = self._upstream(host, port) if command == 0x01 else None
        self._record(Passage("SOCKS5", target, address_type, login, upstream is not None))
        reply = 0x00 if upstream is not None else 0x04  # host unreachable
        sock.sendall(bytes([5, reply, 0, 1, 127, 0, 0, 1, 0, 0]))
        if upstream is not None:
            _relay(sock, upstream)
