"""Counting the API requests the monitor makes, by verb, resource and outcome.

The count is taken at the transport, under the client, so every request is in it: each list
page, each retry, each watch opened. Outcomes are a small fixed set, never free text, so the
metric's label values stay bounded.
"""

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from truegreen.http.deadline import Deadline
from truegreen.http.dial import Dialer
from truegreen.http.errors import ConnectFailedError, TimedOutError
from truegreen.http.framing import BodyBuffers
from truegreen.http.tls import TlsSettings
from truegreen.http.transport import Headers, LineStream, Response, Transport

CONNECTIONS = 72
"""Connections to the API server at once. Over HTTP/1.1 each open watch holds one for its
whole life (client-go multiplexes them over HTTP/2); the monitor follows up to about 40
collections (every training kind, Kueue's and the devices' kinds where served) and reads and
writes a few objects besides."""
WATCHES = 64
"""Watches open at once, fewer than CONNECTIONS: the rest stay free for the short reads and
the Events the monitor writes, which a full pool of watches would otherwise starve."""
Observe = Callable[[str, str, str], None]
"""Called with (verb, resource, outcome) once per request."""

_OUTCOMES = {
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    409: "conflict",
    410: "expired",
    429: "throttled",
}


def request_kind(method: str, url: str) -> tuple[str, str]:
    """The Kubernetes verb and resource of a request: `("list", "pods")`, `("watch",
    "nodes")`, `("get", "secrets")`; `("other", "")` for what is not a resource path."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments[:1] == ["api"]:
        rest = segments[2:]
    elif segments[:1] == ["apis"]:
        rest = segments[3:]
    else:
        return "other", ""
    if len(rest) > 2 and rest[0] == "namespaces":
        rest = rest[2:]
    if not rest:
        return "other", ""
    resource, named = rest[0], len(rest) > 1
    if method == "GET":
        if parse_qs(parts.query).get("watch", [""])[0] in ("1", "true"):
            return "watch", resource
        return ("get" if named else "list"), resource
    verbs = {"POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}
    return verbs.get(method, method.lower()), resource


def outcome_of(status: int) -> str:
    """`ok` for 2xx, a word for the statuses a client acts on, else the status class."""
    if 200 <= status < 300:
        return "ok"
    return _OUTCOMES.get(status) or ("server-error" if status >= 500 else "refused")


def failure_outcome(error: Exception) -> str:
    """The outcome of a request that got no answer."""
    if isinstance(error, TimedOutError):
        return "timeout"
    if isinstance(error, ConnectFailedError):
        return "unreachable"
    return "broken"


class CountingTransport(Transport):
    """A `Transport` that reports every request it sends to `observe`."""

    def __init__(self, tls: TlsSettings | None, dialer: Dialer | None, observe: Observe) -> None:
        super().__init__(tls, dialer, per_host=CONNECTIONS, streams=WATCHES)
        self._observe = observe

    def request(
        self,
        method: str,
        url: str,
        *,
        deadline: Deadline,
        max_bytes: int,
        headers: Headers = (),
        body: bytes | None = None,
        tls: TlsSettings | None = None,
        into: BodyBuffers | None = None,
        gzip: bool = False,
    ) -> Response:
        """As `Transport.request`, counted."""
        verb, resource = request_kind(method, url)
        try:
            response = super().request(
                method,
                url,
                deadline=deadline,
                max_bytes=max_bytes,
                headers=headers,
                body=body,
                tls=tls,
                into=into,
                gzip=gzip,
            )
        except Exception as error:
            self._observe(verb, resource, failure_outcome(error))
            raise
        self._observe(verb, resource, outcome_of(response.status))
        return response

    def stream_lines(
        self,
        method: str,
        url: str,
        *,
        deadline: Deadline,
        idle_seconds: float,
        max_line: int,
        headers: Headers = (),
        tls: TlsSettings | None = None,
        head_deadline: Deadline | None = None,
    ) -> LineStream:
        """As `Transport.stream_lines`, counted when the answer's head arrives."""
        verb, resource = request_kind(method, url)
        try:
            stream = super().stream_lines(
                method,
                url,
                deadline=deadline,
                idle_seconds=idle_seconds,
                max_line=max_line,
                headers=headers,
                tls=tls,
                head_deadline=head_deadline,
            )
        except Exception as error:
            self._observe(verb, resource, failure_outcome(error))
            raise
        self._observe(verb, resource, outcome_of(stream.status))
        return stream
