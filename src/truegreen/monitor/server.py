"""The monitor's HTTP endpoints: `/metrics`, `/healthz`, `/readyz` and the status page `/`.

`/healthz` says the process answers; `/readyz` that a first evaluation has completed (a
readiness probe on it keeps the Service from routing to a monitor with nothing to say yet).
Only GET and HEAD, over HTTP/1.x: a target in absolute form (`http://host/metrics`, as a proxy
forwards it) routes on its path, another method on a path served is 405 with `Allow: GET, HEAD`
(404 on one not served), and every refusal has a status line. Bounded as Go's
http.Server is when given ReadHeaderTimeout: a client has REQUEST_HEAD_SECONDS for its whole
request head, however slowly it trickles it in; at most MAX_CONNECTIONS are served at once. One
more closes the connection that has waited longest for its head to make room (slow clients
cannot keep an honest one out), and is closed at once when every slot is answering. The answer
has WRITE_SECONDS to be taken, as Go's WriteTimeout bounds it: a client that asks and never
reads is closed then. A client that goes away mid-request, or takes no answer, is one line,
never a traceback. `:PORT` listens on every address, IPv6 and IPv4, as Go's listener does;
`[::1]:PORT` on IPv6.
"""

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from msgspec import Struct

REQUEST_HEAD_SECONDS = 10.0
"""The longest a client may take to send its whole request head."""
MAX_CONNECTIONS = 32
"""Connections served at once: Prometheus, a browser or two, a probe; more are refused."""
WRITE_SECONDS = 10.0
"""The longest a client may take to take the whole answer, from its first byte written."""
ROOM_SECONDS = 1.0
"""How long a new connection waits for the slot of one closed to make room for it."""


class AnswerNotTakenError(OSError):
    """The client did not take the answer within its deadline: its connection is closed."""


class Page(Struct, frozen=True):
    """One answer: status, content type and body."""

    status: int
    content_type: str
    body: bytes


Routes = dict[str, Callable[[], Page]]

ALLOWED_METHODS = ("GET", "HEAD")
"""The methods every path served answers; any other gets 405 with these in `Allow`."""
_TEXT = "text/plain; charset=utf-8"
_NOT_FOUND = Page(404, _TEXT, b"not found\n")
# Go's http.Error(w, StatusText(405), 405): the reason phrase as one plain line.
_METHOD_NOT_ALLOWED = Page(405, _TEXT, b"Method Not Allowed\n")


def parse_listen(listen: str) -> tuple[str, int]:
    """`:9108` (every address), `127.0.0.1:9108`, `[::1]:9108`; ValueError saying what is
    wrong otherwise, in the words of Go's net.SplitHostPort (`[::1` is "missing ']' in
    address", `::1:80` has "too many colons"), and a port above 65535 out of range, as the
    socket layer refuses it."""
    host, port = _split_host_port(listen)
    if not port.isascii() or not port.isdigit():
        raise ValueError("it is not HOST:PORT or :PORT")
    if int(port) > 65535:
        raise ValueError(f"port {port} is out of range (0 to 65535)")
    return host or "0.0.0.0", int(port)  # :PORT means every address, as servers take it


WILDCARDS = frozenset({"0.0.0.0", "::"})
"""The addresses a `:PORT` listener binds: every address of the machine, none a URL can name."""


def status_url(host: str, port: int) -> str:
    """Where the bound server answers, as a URL: `http://127.0.0.1:9108/`; an IPv6 literal in
    brackets, its zone's `%` escaped (RFC 3986 §3.2.2, RFC 6874), as Go's net.JoinHostPort
    writes a host with a colon; for every address (`:PORT`), this machine's own name."""
    if host in WILDCARDS:
        host = "localhost"
    elif ":" in host:
        host = "[" + host.replace("%", "%25") + "]"
    return f"http://{host}:{port}/"


def _split_host_port(listen: str) -> tuple[str, str]:
    """Go's net.SplitHostPort: a host in brackets may hold colons, one without may not."""
    colon = listen.rfind(":")
    if colon < 0:
        raise ValueError("it is not HOST:PORT or :PORT")
    start, after = 0, 0
    if listen.startswith("["):
        end = listen.find("]")
        if end < 0:
            raise ValueError("missing ']' in address")
        if end + 1 != colon:
            raise ValueError(
                "too many colons in address"
                if end + 1 < len(listen) and listen[end + 1] == ":"
                else "it is not HOST:PORT or :PORT"
            )
        host, start, after = listen[1:end], 1, end + 1
    else:
        host = listen[:colon]
        if ":" in host:
            raise ValueError("too many colons in address")
    if "[" in listen[start:]:
        raise ValueError("unexpected '[' in address")
    if "]" in listen[after:]:
        raise ValueError("unexpected ']' in address")
    return host, listen[colon + 1 :]


class _Server(ThreadingHTTPServer):
    """A threading server with a bound on its connections, for either address family."""

    daemon_threads = True
    request_queue_size = 128  # refused connections are closed at once, not left in the backlog

    def __init__(
        self,
        listen: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        on_client_error: Callable[[str], None],
        max_connections: int,
    ) -> None:
        host = listen[0]
        self.dual_stack = host == "0.0.0.0" and socket.has_ipv6
        if ":" in host or self.dual_stack:
            self.address_family = socket.AF_INET6
            listen = ("::" if self.dual_stack else host, listen[1])
        self.on_client_error = on_client_error
        self._slots = threading.BoundedSemaphore(max_connections)
        self._heads_lock = threading.Lock()
        self._heads: set[_HeadDeadline] = set()
        super().__init__(listen, handler)

    def waiting_for_head(self, head: "_HeadDeadline") -> None:
        """`head`'s connection is reading its request head: it may be closed to make room."""
        with self._heads_lock:
            self._heads.add(head)

    def head_done(self, head: "_HeadDeadline") -> None:
        """`head`'s connection has its head (or is gone): it is no longer closed to make room."""
        with self._heads_lock:
            self._heads.discard(head)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for its head and take its slot, which
        its thread gives back as it ends; False when none is waiting for one."""
        with self._heads_lock:
            if not self._heads:
                return False
            oldest = min(self._heads, key=lambda head: head.deadline)
            self._heads.discard(oldest)
        oldest.close_to_make_room()
        return self._slots.acquire(timeout=ROOM_SECONDS)

    def server_bind(self) -> None:
        if self.dual_stack:  # IPv4 clients too, as Go's `:PORT` takes them
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False) and not self._make_room():
            self.shutdown_request(request)  # past the bound: closed, no thread started
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line for a client that went away or stalled, instead of a traceback."""
        import sys

        error = sys.exc_info()[1]
        why = type(error).__name__ if error else "unknown"
        if isinstance(error, AnswerNotTakenError):
            why = str(error)
        self.on_client_error(
            f"a client of the status page at {client_address[0]} was dropped ({why})"
        )


class StatusServer:
    """Serves `routes` on a thread; `stop()` ends it. `on_client_error` hears, in one line, a
    client that went away mid-request or did not take its answer within `write_seconds`."""

    def __init__(
        self,
        listen: tuple[str, int],
        routes: Routes,
        *,
        on_client_error: Callable[[str], None] = lambda line: None,
        head_seconds: float = REQUEST_HEAD_SECONDS,
        write_seconds: float = WRITE_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        handler = _handler(routes, head_seconds, write_seconds)
        self._server = _Server(listen, handler, on_client_error, max_connections)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="status-server", daemon=True
        )

    @property
    def address(self) -> tuple[str, int]:
        """The address and port actually bound (port 0 picks a free one)."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> "StatusServer":
        """Start serving."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()


class _HeadDeadline:
    """The request's stream, read line by line under one deadline for the whole head (Go's
    ReadHeaderTimeout): each recv may wait only for what is left of it. A socket timeout bounds
    one recv, so a line is read one recv at a time (`peek` makes at most one), each under the
    time left; a client sending a byte a second would otherwise keep one line open forever."""

    def __init__(self, stream: Any, connection: socket.socket, seconds: float) -> None:
        self._stream = stream
        self._connection = connection
        self.deadline = time.monotonic() + seconds
        self._closed_for_room = False

    def readline(self, limit: int = -1) -> bytes:
        line = bytearray()
        while limit < 0 or len(line) < limit:
            self._wait_at_most_what_is_left()
            chunk: bytes = self._stream.peek(1)
            if not chunk:
                if self._closed_for_room:
                    raise TimeoutError("closed to make room for another client")
                break  # the client closed: the line ends here, as a plain readline's would
            want = len(chunk) if limit < 0 else min(len(chunk), limit - len(line))
            end = chunk.find(b"\n", 0, want)
            line += self._stream.read(want if end < 0 else end + 1)
            if end >= 0:
                break
        return bytes(line)

    def _wait_at_most_what_is_left(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request head took too long")
        self._connection.settimeout(left)

    def close_to_make_room(self) -> None:
        """End the head's wait now: its pending recv returns, and the head reads as closed."""
        self._closed_for_room = True
        with contextlib.suppress(OSError):
            self._connection.shutdown(socket.SHUT_RDWR)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _WriteDeadline:
    """The answer's stream, written under one deadline for the whole answer (Go's http.Server
    WriteTimeout: server.go `(*conn).readRequest` sets one write deadline per request). A
    socket timeout bounds one sendall, so each write may wait only for what is left of it;
    without one, the answer waited on a client that never reads for whatever time the head's
    last read left behind, and said nothing. Go's deadline runs from the end of the head; this
    one from the first byte written, the handler's time being this process's, not the client's.
    """

    def __init__(self, stream: Any, connection: socket.socket, seconds: float) -> None:
        self._stream = stream
        self._connection = connection
        self._seconds = seconds
        self._deadline: float | None = None

    def write(self, data: bytes) -> int:
        if self._deadline is None:
            self._deadline = time.monotonic() + self._seconds
        left = self._deadline - time.monotonic()
        if left > 0:
            self._connection.settimeout(left)
            with contextlib.suppress(TimeoutError):
                return int(self._stream.write(data))
        raise AnswerNotTakenError(f"it did not take its answer within {self._seconds:g} s")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def request_path(target: str) -> str:
    """The path a request target routes on: origin form (`/metrics?x`) or absolute form
    (`http://host/metrics`), which RFC 9112 section 3.2.2 says a server MUST accept; Go's server
    routes on the parsed URL's path (net/http ServeMux, `r.URL.Path`), "/" when it is empty."""
    if target.startswith("/"):
        return target.split("?", 1)[0]
    scheme, _, rest = target.partition("://")
    if scheme.lower() not in ("http", "https") or not rest:
        return target
    slash = rest.find("/")
    return "/" if slash < 0 else rest[slash:].split("?", 1)[0]


def _handler(
    routes: Routes, head_seconds: float, write_seconds: float
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = head_seconds
        server_version = "truegreen"
        # Until its version is read, a request is answered as HTTP/1.0, with a status line:
        # http.server's default, HTTP/0.9, sends a refusal (a version it does not speak) as a
        # bare page no client can tell from an answer.
        default_request_version = "HTTP/1.0"

        def version_string(self) -> str:
            # http.server joins server_version and sys_version with a space: the name alone.
            return self.server_version

        def setup(self) -> None:
            super().setup()
            # The head's reads go through one deadline (the handler reads nothing else).
            self.head = _HeadDeadline(self.rfile, self.connection, head_seconds)
            self.rfile = self.head  # type: ignore[assignment]
            self.server.waiting_for_head(self.head)  # type: ignore[attr-defined]  # a _Server
            # Every answer, refusals included, is written under one deadline.
            answer = _WriteDeadline(self.wfile, self.connection, write_seconds)
            self.wfile = answer  # type: ignore[assignment]

        def finish(self) -> None:
            self.server.head_done(self.head)  # type: ignore[attr-defined]  # a _Server
            super().finish()

        def parse_request(self) -> bool:
            # A request line without a version is HTTP/0.9, which Go's server refuses with 400
            # (net/http request.go `parseRequestLine`: "malformed HTTP request").
            line: bytes = self.raw_requestline  # type: ignore[attr-defined]  # handle_one_request's
            if len(line.split()) == 2:
                self.command, self.request_version = "", self.default_request_version
                self.requestline = str(line, "iso-8859-1").rstrip("\r\n")
                self.close_connection = True
                self.send_error(400, "no HTTP version")
                return False
            parsed = super().parse_request()  # reads the header lines too
            self.server.head_done(self.head)  # type: ignore[attr-defined]  # a _Server
            if parsed and self.command not in ALLOWED_METHODS:
                self._refuse_method()
                return False  # answered: http.server would look for a do_ method, 501 if none
            return parsed

        def _refuse_method(self) -> None:
            """Go's ServeMux (net/http server.go `(*ServeMux).findHandler`): a path served
            under other methods is 405 with those methods in `Allow` (RFC 9110 section 15.5.6:
            a 405 MUST carry it), a path served under none is 404 whatever the method."""
            if request_path(self.path) not in routes:
                self._send(_NOT_FOUND, send_body=True)
                return
            allow = ("Allow", ", ".join(ALLOWED_METHODS))
            self._send(_METHOD_NOT_ALLOWED, send_body=True, headers=(allow,))

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            # The status line keeps the standard reason phrase (http.server would put its own
            # words there); the words go in the body.
            super().send_error(code, None, explain or message)

        def handle(self) -> None:
            with contextlib.suppress(TimeoutError):  # a head past its deadline: just closed
                super().handle()

        def log_message(self, format: str, *args: object) -> None:
            """No access log: the metrics count what matters."""

        def do_GET(self) -> None:
            self._answer(send_body=True)

        def do_HEAD(self) -> None:
            self._answer(send_body=False)

        def _answer(self, *, send_body: bool) -> None:
            route = routes.get(request_path(self.path))
            self._send(route() if route else _NOT_FOUND, send_body=send_body)

        def _send(
            self, page: Page, *, send_body: bool, headers: tuple[tuple[str, str], ...] = ()
        ) -> None:
            self.send_response(page.status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Type", page.content_type)
            self.send_header("Content-Length", str(len(page.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if send_body:
                self.wfile.write(page.body)

    return Handler
