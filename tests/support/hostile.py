"""Hostile HTTP servers on loopback, for the transport's bounds.

Each server runs one behaviour per accepted connection and counts what it managed to do (bytes
sent before the client hung up, requests read, connections accepted), so a test bounds the
client by counting rather than by a clock. Certificates are made with `openssl`.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Self

DRIP_INTERVAL = 0.02
"""Seconds between two dripped bytes."""
DRIP_CAP = 2000
"""A drip stops here on its own; a client that is still listening then was never bounded."""


class Peer:
    """One accepted connection, as a behaviour sees it."""

    def __init__(self, server: HostileServer, sock: socket.socket) -> None:
        self.server = server
        self.sock = sock
        self._buffer = b""
        self.body = b""
        """The body of the last request read."""

    def read_request(self) -> bytes | None:
        """The next request's head (its body, if any, is read and dropped); None at EOF."""
        while b"\r\n\r\n" not in self._buffer:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return None
            if not data:
                return None
            self._buffer += data
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        self.body = b""
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
                while len(self._buffer) < length:
                    self._buffer += self.sock.recv(65536)
                self.body, self._buffer = self._buffer[:length], self._buffer[length:]
        self.server.count("requests")
        return head

    def send(self, data: bytes) -> bool:
        """Send `data`; False once the client has hung up."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        self.server.count("bytes_sent", len(data))
        return True

    def drip(self, data: bytes) -> None:
        """Send `data` one byte at a time, until the client hangs up or DRIP_CAP is reached."""
        for index in range(min(len(data), DRIP_CAP)):
            if not self.send(data[index : index + 1]):
                self.server.hung_up.set()
                return
            time.sleep(DRIP_INTERVAL)
        self.server.drip_capped.set()

    def wait_for_hang_up(self) -> None:
        """Block until the client closes its end (the server sends nothing meanwhile)."""
        self.sock.settimeout(30)
        with contextlib.suppress(OSError):
            while self.sock.recv(65536):
                pass
        self.server.hung_up.set()

    def reset(self) -> None:
        """Close with a TCP reset."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


Behaviour = Callable[[Peer, int], None]
"""What to do with the n-th accepted connection (counting from 0)."""


@dataclass(frozen=True)
class ServerCertificate:
    """PEM files for a TLS server: its certificate and key, and the authority that signed it."""

    cert: Path
    key: Path
    ca: Path


class HostileServer:
    """A TCP server on 127.0.0.1 that runs `behaviour` on each connection (TLS when given)."""

    def __init__(
        self,
        behaviour: Behaviour,
        tls: ServerCertificate | None = None,
        *,
        client_ca: Path | None = None,
    ) -> None:
        self._behaviour = behaviour
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._context: ssl.SSLContext | None = None
        if tls is not None:
            self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._context.load_cert_chain(str(tls.cert), str(tls.key))
            if client_ca is not None:
                self._context.verify_mode = ssl.CERT_REQUIRED
                self._context.load_verify_locations(cafile=str(client_ca))
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {"connections": 0, "requests": 0, "bytes_sent": 0}
        self.hung_up = threading.Event()
        """Set when a drip or a wait ended because the client hung up."""
        self.drip_capped = threading.Event()
        """Set when a drip ran to DRIP_CAP: the client never hung up."""
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._stopped = False
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    @property
    def url(self) -> str:
        scheme = "https" if self._context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    def count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self.counts[name] += amount

    def _accept(self) -> None:
        index = 0
        while not self._stopped:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self.count("connections")
            worker = threading.Thread(target=self._serve, args=(sock, index), daemon=True)
            index += 1
            self._threads.append(worker)
            worker.start()

    def _serve(self, sock: socket.socket, index: int) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._context is not None:
            try:
                sock = self._context.wrap_socket(sock, server_side=True)
            except (OSError, ssl.SSLError):
                sock.close()
                return
        self._sockets.append(sock)
        try:
            self._behaviour(Peer(self, sock), index)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sock.close()

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(OSError):
            self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()
        for worker in self._threads:
            worker.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ok_answer(body: bytes = b'{"ok": true}', *, close: bool = False) -> bytes:
    """A whole 200 answer with a Content-Length."""
    extra = b"Connection: close\r\n" if close else b""
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + extra
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


# -- behaviours ------------------------------------------------------------------------------


def drip_headers(peer: Peer, _: int) -> None:
    """Read the request, then drip an endless header block one byte at a time."""
    if peer.read_request() is not None:
        peer.drip(b"HTTP/1.1 200 OK\r\n" + b"X-Drip: " + b"a" * 10 * DRIP_CAP)


def drip_body(peer: Peer, _: int) -> None:
    """Whole headers at once, then a body that arrives a byte at a time."""
    if peer.read_request() is not None and peer.send(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    ):
        peer.drip(b"x" * 100000)


def huge_content_length(peer: Peer, _: int) -> None:
    """Announce a 1 TB body, send a little of it, and wait for the client to give up."""
    if peer.read_request() is not None:
        peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n" + b"x" * 100)
        peer.wait_for_hang_up()


def endless_chunked(peer: Peer, _: int) -> None:
    """A chunked body that never ends, as fast as the client takes it (up to 64 MiB)."""
    if peer.read_request() is None or not peer.send(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    ):
        return
    chunk = b"10000\r\n" + b"y" * 0x10000 + b"\r\n"
    for _ in range(1024):
        if not peer.send(chunk):
            peer.server.hung_up.set()
            return
    peer.server.drip_capped.set()


def garbage(peer: Peer, _: int) -> None:
    """Answer with bytes that are not HTTP at all."""
    if peer.read_request() is not None:
        peer.send(b"\x16\x03\x01\x00\xa5 this is not HTTP \x00\xff\r\n\r\n")
        peer.wait_for_hang_up()


def reset_mid_body(peer: Peer, _: int) -> None:
    """Promise 1000 bytes, send 100, then reset the connection."""
    if peer.read_request() is not None:
        peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"z" * 100)
        time.sleep(0.05)
        peer.reset()


def silent(peer: Peer, _: int) -> None:
    """Accept, read the request, never answer."""
    if peer.read_request() is not None:
        peer.wait_for_hang_up()


def close_after_first_answer(peer: Peer, _: int) -> None:
    """Answer one request as if keeping the connection alive, then close it at once."""
    if peer.read_request() is not None:
        peer.send(ok_answer())
        time.sleep(0.05)


def close_on_second_request(peer: Peer, _: int) -> None:
    """Keep-alive for one answer; on the same connection, read the next request and close
    without a byte of answer: a kept-alive connection the server had given up on."""
    while peer.read_request() is not None:
        if peer.server.counts["requests"] % 2 == 0:
            return  # every second request: close, answering nothing
        peer.send(ok_answer())


def keep_alive(peer: Peer, _: int) -> None:
    """A well-behaved keep-alive server."""
    while peer.read_request() is not None:
        if not peer.send(ok_answer()):
            return


_OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def huge_manifest(peer: Peer, _: int) -> None:
    """HEAD without a digest; the GET then announces a 2 GiB body and sends until refused."""
    while (head := peer.read_request()) is not None:
        if head.startswith(b"HEAD"):
            peer.send(f"HTTP/1.1 200 OK\r\nContent-Type: {_OCI_MANIFEST}\r\n\r\n".encode())
            continue
        peer.send(f"HTTP/1.1 200 OK\r\nContent-Length: {2 << 30}\r\n\r\n".encode())
        while peer.send(b"x" * 65536):
            if peer.server.counts["bytes_sent"] > 64 << 20:
                return
        peer.server.hung_up.set()
        return


def endless_manifest(peer: Peer, _: int) -> None:
    """HEAD without a digest; the GET body is chunked and never ends."""
    while (head := peer.read_request()) is not None:
        if head.startswith(b"HEAD"):
            peer.send(f"HTTP/1.1 200 OK\r\nContent-Type: {_OCI_MANIFEST}\r\n\r\n".encode())
            continue
        peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"10000\r\n" + b"y" * 0x10000 + b"\r\n"
        while peer.send(chunk):
            if peer.server.counts["bytes_sent"] > 64 << 20:
                return
        peer.server.hung_up.set()
        return


def answering(answer: bytes) -> Behaviour:
    """Answer every request on the connection with the same bytes, for as long as the client
    sends requests (whatever the answer says about keeping the connection)."""

    def behaviour(peer: Peer, _: int) -> None:
        while peer.read_request() is not None:
            if not peer.send(answer):
                return

    return behaviour


def chunked_answer(body: bytes, size: int) -> bytes:
    """A 200 answer whose `body` is sent chunked, `size` bytes a chunk."""
    pieces = [body[at : at + size] for at in range(0, len(body), size)]
    framed = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + framed + b"0\r\n\r\n"


def huge_chunk(peer: Peer, _: int) -> None:
    """Announce a 1 TB chunk, send a little of it, and wait for the client to give up."""
    if peer.read_request() is not None:
        peer.send(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nE8D4A51000\r\n" + b"x" * 100
        )
        peer.wait_for_hang_up()


def lines(*documents: bytes, hold: bool = False) -> Behaviour:
    """A streamed chunked answer: each document on a line; then end, or hold the line open."""

    def behaviour(peer: Peer, _: int) -> None:
        if peer.read_request() is None:
            return
        peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for document in documents:
            line = document + b"\n"
            peer.send(f"{len(line):x}\r\n".encode() + line + b"\r\n")
        if hold:
            peer.wait_for_hang_up()
        else:
            peer.send(b"0\r\n\r\n")
            peer.read_request()

    return behaviour


# -- a listener that never accepts -------------------------------------------------------------


@contextlib.contextmanager
def full_backlog(host: str = "127.0.0.1") -> Iterator[int]:
    """A port on `host` (an IPv4 or IPv6 loopback address) whose listen queue is full, so the
    kernel drops every new SYN and a connection is never completed."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.bind((host, 0))
    listener.listen(0)
    port = int(listener.getsockname()[1])
    fillers = []
    for _ in range(4):
        filler = socket.socket(family, socket.SOCK_STREAM)
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect((host, port))
        fillers.append(filler)
    time.sleep(0.2)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


# -- certificates ----------------------------------------------------------------------------


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is required (.ci/run installs it)"
    subprocess.run([openssl, *args], check=True, capture_output=True)


def make_authority(folder: Path, name: str = "ca") -> tuple[Path, Path]:
    """A self-signed certificate authority: (certificate, key)."""
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-days", "2", "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert),
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=keyCertSign",
    )  # fmt: skip
    return cert, key


def make_intermediate(
    folder: Path, authority: tuple[Path, Path], name: str = "intermediate"
) -> tuple[Path, Path]:
    """An intermediate certificate authority `authority` signed: (certificate, key). A peer
    that trusts only `authority` accepts what it signs only when the intermediate is sent too."""
    cert, key, request = folder / f"{name}.crt", folder / f"{name}.key", folder / f"{name}.csr"
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(request),
    )  # fmt: skip
    extensions = folder / f"{name}.ext"
    extensions.write_text("basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign\n")
    _openssl(
        "x509", "-req", "-in", str(request), "-CA", str(authority[0]), "-CAkey",
        str(authority[1]), "-CAcreateserial", "-days", "2", "-out", str(cert),
        "-extfile", str(extensions),
    )  # fmt: skip
    return cert, key


def issue(
    folder: Path, authority: tuple[Path, Path], name: str, alt_names: str, *, client: bool = False
) -> ServerCertificate:
    """A certificate for `alt_names` (`IP:127.0.0.1,DNS:api.internal`) signed by `authority`;
    with no `alt_names`, one that names its server only in its Common Name, `name`."""
    cert, key, request = folder / f"{name}.crt", folder / f"{name}.key", folder / f"{name}.csr"
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(request),
    )  # fmt: skip
    usage = "clientAuth" if client else "serverAuth"
    extensions = folder / f"{name}.ext"
    named = f"subjectAltName={alt_names}\n" if alt_names else ""
    extensions.write_text(f"{named}extendedKeyUsage={usage}\n")
    _openssl(
        "x509", "-req", "-in", str(request), "-CA", str(authority[0]), "-CAkey",
        str(authority[1]), "-CAcreateserial", "-days", "2", "-out", str(cert),
        "-extfile", str(extensions),
    )  # fmt: skip
    return ServerCertificate(cert, key, authority[0])


def relay_to(port: int, heard: list[bytes] | None = None) -> Behaviour:
    """A stand-in for an https proxy: pipe the (TLS-terminated) connection to 127.0.0.1:`port`,
    keeping every byte the client sent in `heard` when given."""

    def behaviour(peer: Peer, _: int) -> None:
        upstream = socket.create_connection(("127.0.0.1", port), timeout=30)

        def pump(source: socket.socket, sink: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := source.recv(65536):
                    if heard is not None and source is peer.sock:
                        heard.append(data)
                    sink.sendall(data)
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, peer.sock), daemon=True)
        back.start()
        pump(peer.sock, upstream)
        back.join(30)
        upstream.close()

    return behaviour


@dataclass(frozen=True)
class Received:
    """One request a scripted server read."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


Answer = tuple[int, dict[str, str], bytes]
"""Status, headers and body of a scripted answer."""


class ScriptedApi(HostileServer):
    """A keep-alive server answering each request with `answer(request, n)`, n counting from 0;
    every request is kept in `received`."""

    def __init__(
        self, answer: Callable[[Received, int], Answer], tls: ServerCertificate | None = None
    ) -> None:
        self.received: list[Received] = []
        self._answer = answer
        super().__init__(self._serve_scripted, tls)

    def _serve_scripted(self, peer: Peer, _connection: int) -> None:
        while (head := peer.read_request()) is not None:
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, _version = request_line.split(" ", 2)
            headers = {}
            for line in header_lines:
                name, _sep, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            request = Received(method, target, headers, peer.body)
            with self._lock:
                index = len(self.received)
                self.received.append(request)
            status, extra, body = self._answer(request, index)
            lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}"]
            lines += [f"{k}: {v}" for k, v in extra.items()]
            if method == "HEAD":
                body = b""  # the length of the body a GET would bring, and no body
            if not peer.send(("\r\n".join(lines) + "\r\n\r\n").encode() + body):
                return
