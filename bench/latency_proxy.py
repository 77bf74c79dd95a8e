"""A TCP proxy that adds a round trip of latency to every request and to every new
connection, can hold answers to a bandwidth, and counts both.

`delay` is the link's round trip. A new connection waits one round trip before anything is
forwarded (its TCP handshake, RFC 9293 section 3.5; the bench's servers are plain HTTP, so no
TLS handshake is charged), and each chunk a client sends that starts with a request line (one
HTTP request on a kept-alive connection) waits one more before it is forwarded, like a server
across a network. A client that opens many connections pays for each, as it would over a real
link; kubectl multiplexes over one HTTP/2 connection (kubernetes/apimachinery
pkg/util/net/http.go SetTransportDefaults). With `bytes_per_second`, the answers leave no
faster than that, as over a link of that bandwidth. Requests are counted by their request line
(`GET `, `HEAD `) and connections as accepted, so a benchmark can report how many a run made.
"""

import asyncio
import threading

_METHODS = (b"GET ", b"HEAD ", b"POST ", b"PUT ", b"PATCH ", b"DELETE ")


class LatencyProxy:
    """Start with `with LatencyProxy(upstream_port, delay) as proxy:`; `proxy.port` listens."""

    def __init__(
        self,
        upstream_port: int,
        delay: float,
        *,
        host: str = "127.0.0.1",
        bytes_per_second: float | None = None,
        peers: tuple[str, ...] = (),
    ) -> None:
        """Listen on `host`; forward to 127.0.0.1:`upstream_port`. With `peers`, a connection
        from any other address is closed before anything is forwarded: a proxy on a network
        address answers only this machine."""
        self.upstream_port = upstream_port
        self.delay = delay
        self.host = host
        self.bytes_per_second = bytes_per_second
        self.peers = peers
        self.requests = 0
        self.connections = 0
        self.round_trips_charged = 0
        """Round trips waited out in full, connections' and requests' together."""
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "LatencyProxy":
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, self.host, 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _round_trip(self) -> None:
        await asyncio.sleep(self.delay)
        self.round_trips_charged += 1

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.peers and writer.get_extra_info("peername")[0] not in self.peers:
            writer.close()
            return
        await self._round_trip()  # the handshake, before the client's first byte goes on
        upstream_reader, upstream_writer = await asyncio.open_connection(
            "127.0.0.1", self.upstream_port
        )

        async def forward_requests() -> None:
            while chunk := await reader.read(65536):
                if chunk.startswith(_METHODS):
                    self.requests += 1
                    await self._round_trip()
                upstream_writer.write(chunk)
                await upstream_writer.drain()
            upstream_writer.close()

        async def forward_answers() -> None:
            due = self._loop.time()  # when the link is free to send the next chunk
            while chunk := await upstream_reader.read(65536):
                if self.bytes_per_second:
                    due = max(due, self._loop.time()) + len(chunk) / self.bytes_per_second
                    await asyncio.sleep(due - self._loop.time())
                writer.write(chunk)
                await writer.drain()
            writer.close()

        try:
            await asyncio.gather(forward_requests(), forward_answers())
        except (ConnectionError, asyncio.CancelledError):
            writer.close()
            upstream_writer.close()
