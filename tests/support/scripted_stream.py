"""A `Stream` whose peer is a script: for readers of heads and bodies tested without sockets."""

from collections.abc import Sequence

from truegreen.http.deadline import Deadline


class ScriptedStream:
    """The stream side of a connection: each receive returns the next scripted piece, then
    b"" (the peer closed). A reader never sends."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        self.pieces = list(pieces)
        """What the peer has yet to send."""
        self.received = 0
        """Bytes handed to the reader so far."""

    def send_all(self, data: bytes, deadline: Deadline) -> None:
        raise AssertionError("a reader never sends")

    def receive(self, deadline: Deadline) -> bytes:
        if not self.pieces:
            return b""
        piece = self.pieces.pop(0)
        self.received += len(piece)
        return piece

    def is_reusable(self) -> bool:
        return True

    def close(self) -> None:
        pass
