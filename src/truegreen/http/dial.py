"""Opening the TCP connection a request travels on: directly, or through a proxy."""

import socket
from typing import Protocol

from truegreen.http.deadline import Deadline


class Dialer(Protocol):
    """Opens a connection to `host:port`, bounded by `deadline`.

    Raises `ConnectFailedError` (or `TimedOutError` with connected=False) when it cannot; the
    socket it returns is connected end to end, TLS to the target not yet started.
    """

    def connect(self, host: str, port: int, deadline: Deadline) -> socket.socket:
        """A socket connected to `host:port` (through whatever this dialer goes through)."""
        ...

    def describe(self) -> str:
        """Plain words for messages: `directly`, `through the proxy proxy.corp:3128`."""
        ...
