"""The monitor's HTTP endpoints: `/metrics`, `/healthz`, `/readyz` and the status page `/`.

`/healthz` says the process answers; `/readyz` that a first evaluation has completed (a
readiness probe on it keeps the Service from routing to a monitor with nothing to say yet).
Only GET and HEAD; a slow client is dropped after a few seconds.
"""

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from msgspec import Struct

CLIENT_TIMEOUT_SECONDS = 10.0
"""A client that sends its request slower than this is dropped."""


class Page(Struct, frozen=True):
    """One answer: status, content type and body."""

    status: int
    content_type: str
    body: bytes


Routes = dict[str, Callable[[], Page]]


def parse_listen(listen: str) -> tuple[str, int]:
    """`:9108` (every address), `127.0.0.1:9108`, `[::1]:9108`; ValueError saying what is
    wrong otherwise (a port above 65535 is out of range, as the socket layer refuses it)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit():
        raise ValueError("it is not HOST:PORT or :PORT")
    if int(port) > 65535:
        raise ValueError(f"port {port} is out of range (0 to 65535)")
    host = host.strip("[]") or "0.0.0.0"  # :PORT means every address, as servers take it
    return host, int(port)


class StatusServer:
    """Serves `routes` on a thread; `stop()` ends it."""

    def __init__(self, listen: tuple[str, int], routes: Routes) -> None:
        handler = _handler(routes)
        self._server = ThreadingHTTPServer(listen, handler)
        self._server.daemon_threads = True
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


def _handler(routes: Routes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = CLIENT_TIMEOUT_SECONDS
        server_version = "truegreen"
        sys_version = ""

        def log_message(self, format: str, *args: object) -> None:
            """No access log: the metrics count what matters."""

        def do_GET(self) -> None:
            self._answer(send_body=True)

        def do_HEAD(self) -> None:
            self._answer(send_body=False)

        def _answer(self, *, send_body: bool) -> None:
            route = routes.get(self.path.split("?", 1)[0])
            page = route() if route else Page(404, "text/plain; charset=utf-8", b"not found\n")
            self.send_response(page.status)
            self.send_header("Content-Type", page.content_type)
            self.send_header("Content-Length", str(len(page.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            if send_body:
                self.wfile.write(page.body)

    return Handler
