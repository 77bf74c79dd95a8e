"""A GET read off a plain socket, its framing kept: what a server sent, before any client
smooths it over (tests of the fake's framing)."""

import socket
from dataclasses import dataclass

from tests.support.fake_apiserver import FakeApiServer


@dataclass(frozen=True)
class RawAnswer:
    """One answer as it came off the socket."""

    status: int
    headers: dict[str, str]
    """Lower-cased names."""
    chunks: list[bytes] | None
    """The chunks as sent (the terminating empty one left out); None for a Content-Length."""
    body: bytes


def raw_get(server: FakeApiServer, path: str) -> RawAnswer:
    """One GET over a plain socket, its framing kept."""
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        request = f"GET {path} HTTP/1.1\r\nHost: fake\r\nAccept: application/json\r\n\r\n"
        connection.sendall(request.encode())
        stream = connection.makefile("rb")
        status = int(stream.readline().split()[1])
        headers: dict[str, str] = {}
        while (line := stream.readline().rstrip(b"\r\n")) != b"":
            name, _, value = line.decode().partition(":")
            headers[name.lower()] = value.strip()
        if "content-length" in headers:
            return RawAnswer(status, headers, None, stream.read(int(headers["content-length"])))
        chunks: list[bytes] = []
        while (size := int(stream.readline().rstrip(b"\r\n"), 16)) > 0:
            chunks.append(stream.read(size))
            assert stream.readline() == b"\r\n", "a chunk's data ends with CRLF"
        assert stream.readline() == b"\r\n", "no trailers, then the end of the body"
        return RawAnswer(status, headers, chunks, b"".join(chunks))
