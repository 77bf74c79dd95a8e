"""Why an HTTP exchange produced no usable answer.

Modelled on httpx's exception tree: each class is one failure mode a caller treats differently.
Messages are plain and never quote a body, a header value or a credential.
"""

from enum import StrEnum


class TransportError(Exception):
    """No usable HTTP answer."""


class ConnectFailedError(TransportError):
    """No connection was made: refused, no route, name not found, or a proxy refused the tunnel.

    Nothing reached the server, so no later request to the same address can succeed either.
    """


class ConnectRefusedError(ConnectFailedError):
    """The address answered that nothing listens on that port."""


class AddressNotFoundError(ConnectFailedError):
    """The host name did not resolve to any address."""


class TlsFailedError(ConnectFailedError):
    """The TLS handshake failed: an unknown certificate authority, a wrong name, a bad client
    certificate."""


class CertificateNameError(TlsFailedError):
    """The server's certificate does not name the server in a subject alternative name: it
    names others, or none at all."""


class CommonNameOnlyError(CertificateNameError):
    """The server's certificate names the server in its legacy Common Name only, which Go, and
    so kubectl, does not accept (crypto/x509 verify.go, "relies on legacy Common Name field")."""


class TlsClosedError(TlsFailedError):
    """The server closed the connection during the TLS handshake, before any certificate was
    judged: an overloaded server, or something in between that cut it."""


class ProxyFailedError(ConnectFailedError):
    """The proxy on the way to the server could not be used: it was out of reach, refused the
    login or the tunnel, could not reach the server itself, or did not speak its protocol."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause
        """Plain words naming the proxy by address and saying what went wrong (no credentials)."""


class TimedOutError(TransportError):
    """The deadline passed before the exchange completed (connect, headers or body)."""

    def __init__(self, message: str, *, connected: bool) -> None:
        super().__init__(message)
        self.connected = connected
        """False when the deadline passed before a connection existed."""


class ConnectionDroppedError(TransportError):
    """The connection closed or reset before a whole answer arrived."""


class AnswerCutError(ConnectionDroppedError):
    """The connection closed or reset after the answer's status line arrived, before its end."""


class SendFailedError(ConnectionDroppedError):
    """The connection broke while the request was being sent: the server cannot have acted on
    a request it did not receive whole."""


class InvalidRequestError(TransportError):
    """The request itself cannot be written as HTTP/1.1 (a header value holding a line break,
    say); nothing was sent."""


class ProtocolViolationError(TransportError):
    """The peer's bytes are not valid HTTP/1.1."""


class AnswerTooLargeError(TransportError):
    """The answer's body exceeded the cap set for it; it was not read further."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer was larger than {limit:,} bytes")
        self.limit = limit


class Place(StrEnum):
    """Where an address refused before dialling leads."""

    NEVER = "never"
    """Link-local, metadata, unspecified, multicast or reserved: never dialled."""
    OWN = "own"
    """This machine's own (loopback), which an operator may name."""
    PRIVATE = "private"
    """A private network's, which an operator may name."""


class AddressRefusedError(ConnectFailedError):
    """The name resolved to an address the caller's policy never connects to (a link-local or
    metadata address, say); nothing was dialled."""

    def __init__(self, message: str, *, place: Place) -> None:
        super().__init__(message)
        self.place = place
        """Which kind of address it is: one never dialled, or one an operator may name."""
