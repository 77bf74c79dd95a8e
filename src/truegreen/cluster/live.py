"""The live cluster, read and written over truegreen's own bounded HTTP transport.

Every request has one deadline (the earlier of `--request-timeout` and the run's), every answer
a byte cap, every list a page cap; throttling is retried as client-go retries it; a 401 asks
the credential source once for a fresh credential. Every read is a value, never an exception.

One module past 600 lines: the live client is one class whose reads share the connection
pool, the run's deadline, paging and the classification of what could not be read.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Generator, Mapping
from contextlib import closing
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import msgspec
from msgspec.structs import replace

from truegreen.cluster import throttle
from truegreen.cluster.classify import (
    MalformedAnswerError,
    RunTimeLimitError,
    TooManyPagesError,
    classify,
    from_status,
    names_object,
    no_api_at_address,
    unnamed_not_found,
)
from truegreen.cluster.credentials import Credential
from truegreen.cluster.endpoints import (
    NAME_RULE,
    collection_path,
    get_action,
    is_path_segment_name,
    object_path,
    view_stamper,
)
from truegreen.cluster.kinds import Kind, stamp
from truegreen.cluster.kubeconfig import ResolvedConnection, api_base, resolve
from truegreen.cluster.reader import FieldSelector, Fold, field_selector_text, label_selector_text
from truegreen.cluster.reads import (
    CantRead,
    Conflict,
    Created,
    CreateResult,
    Folded,
    FoldRead,
    GetRead,
    Got,
    KubeObject,
    Listed,
    ListRead,
    Patched,
    PatchResult,
    ReadFailure,
)
from truegreen.cluster.settings import ConnectionSettings
from truegreen.cluster.views import as_object, item_view
from truegreen.http.deadline import Deadline
from truegreen.http.dial import Dialer
from truegreen.http.errors import AnswerCutError, ConnectionDroppedError, TimedOutError
from truegreen.http.framing import Body, BodyBuffers, mappings_can_grow
from truegreen.http.tls import TlsSettings
from truegreen.http.transport import LineStream, Response, Transport
from truegreen.redaction.text import redact_shapes

if TYPE_CHECKING:  # logs (bundles) and watches (the monitor) load when a command uses them
    from truegreen.cluster.logs import LogRead
    from truegreen.cluster.watch import ListedAt, ObjectKey, WatchRefused, WatchStream

PAGE_SIZE = 500
"""Objects per list page, as kubectl asks for."""
MAX_ANSWER_BYTES = 64 << 20
"""Bytes per answer. A real page of 500 pods is 3-4 MB; anything near this is not an answer."""
MAX_PAGES = 10_000
"""Pages per list (5 million objects at PAGE_SIZE): continue tokens that never end stop here."""
FIELD_MANAGER = "truegreen"
"""Who server-side field ownership records as making our writes."""
_MERGE = "application/merge-patch+json"
_STRATEGIC = "application/strategic-merge-patch+json"


class _ListMeta(msgspec.Struct, rename={"continue_": "continue", "version": "resourceVersion"}):
    continue_: str = ""
    version: str = ""


class _Head(msgspec.Struct):
    """What a page holds before its items."""

    metadata: _ListMeta | None = None


_decode_head = msgspec.json.Decoder(_Head).decode
_ITEMS_KEY = re.compile(rb',[ \t\n\r]*"items"[ \t\n\r]*:')
ASK_AHEAD_AFTER = 0.05
"""Seconds a page's request must have taken before the next page is asked for while it is
decoded. A real API server spends tens of milliseconds encoding 500 pods (3-4 MB) and the
network as long again, which asking ahead hides behind our decoding; a server that answers at
once leaves nothing to hide, and a second thread receiving while the first decodes only adds
switching (30,000 pods over loopback: +0.1 s of CPU, the same wall time). Over loopback a
page takes 5-10 ms, up to 46 ms while doctor's other reads are decoded at the same time."""
HEAD_BYTES = 64 << 10
"""How far into a page the start of its items is looked for; a list's metadata is a few hundred
bytes, and a page whose items do not start this early is read one page after another."""


def _head_token(body: Body) -> str:
    """The continue token a page names before its items; "" when its head names none for
    certain (a last page, metadata after the items or missing, a layout not recognised).

    kube-apiserver writes a list's kind, apiVersion and metadata before its items: Go's
    encoding/json writes a struct's fields in declaration order, and a built-in list declares
    TypeMeta, ListMeta, Items in that order (PodList in staging/src/k8s.io/api/core/v1/types.go);
    the streaming list encoder takes only lists of that shape and writes `{`, kind, apiVersion,
    `"metadata":…,` and then `"items":[` (getListMeta, streamingEncodeList in staging/src/
    k8s.io/apimachinery/pkg/runtime/serializer/json/collections.go). A custom resource's list
    is a map, its keys written sorted (streamingEncodeUnstructuredList): items before metadata,
    so it is followed one page after another. The head is the text before the first
    `,"items":`, closed with `}`. A quote inside a JSON string is escaped, so that match is
    never inside a string; a match inside a nested object leaves it open, and the closed head
    does not decode. A head that decodes is therefore the page's own first members. What it
    cannot rule out (a second "metadata" after the items, which the whole page's decoding
    takes) the caller rules out by comparing with the decoded page.
    """
    items = _ITEMS_KEY.search(body, 0, HEAD_BYTES)
    if items is None:
        return ""
    try:
        head = _decode_head(bytes(body[: items.start()]) + b"}")
    except msgspec.DecodeError:
        return ""
    return "" if head.metadata is None else head.metadata.continue_


class _NextPage:
    """A list's next page, asked for on a thread of its own while the caller decodes and uses
    the page before it.

    What the request answers or raises goes only to `answer()`. The request is bounded by its
    own deadline like any other, so waiting for it is bounded too.
    """

    def __init__(self, send: Callable[[], Response]) -> None:
        self._send = send
        self._response: Response | None = None
        self._error: BaseException | None = None
        self.seconds = 0.0
        """How long the request took, once `answer()` has returned."""
        self._thread = threading.Thread(target=self._run, name="next-page", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._response = self._send()
        except BaseException as error:  # noqa: BLE001 - raised to whoever waits for the page
            self._error = error
        self.seconds = time.monotonic() - started

    def answer(self) -> Response:
        """The page's answer once it is in; what the request raised, raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        response, self._response = self._response, None  # handed over, not kept
        assert response is not None  # the thread ended without raising
        return response

    def drop(self) -> None:
        """Wait for the request to end and forget its answer: no request of a list outlives it,
        so a list never holds more than one of the pool's connections."""
        self._thread.join()


_page_decoders: dict[object, Callable[[Body], Any]] = {}


def _page_decoder(view: type[Any]) -> Callable[[Body], Any]:
    """The decoder of a list page whose items decode as `view`, built once per view (a page
    type and its decoder cost about 0.1 ms each; a doctor run lists about 15 times).
    msgspec's decoders are thread-safe (msgspec#402); two threads may build one twice."""
    decoder = _page_decoders.get(view)
    if decoder is None:
        decoder = _page_decoders.setdefault(view, msgspec.json.Decoder(_page_of(view)).decode)
    return decoder


def _page_of(view: type[Any]) -> type[Any]:
    """The Struct of one list page whose items decode as `view`."""
    return msgspec.defstruct(
        "Page",
        [
            # A list always states its items ([] when none, null from some servers); an answer
            # without them is no list, never an empty one.
            ("items", list[view] | None | msgspec.UnsetType, msgspec.UNSET),  # type: ignore[valid-type]
            ("metadata", _ListMeta, msgspec.field(default_factory=_ListMeta)),
            ("kind", str, ""),
            ("code", int, 0),
        ],
    )


def _checked_page(page: Any, response: Response) -> Any:
    """`page`, if it is a list: a `Status` answered with 200 is the failure it states (client-go
    reads a Failure Status as an error whatever the HTTP code: rest/request.go
    `transformResponse`), any other kind or no items is not a list."""
    if page.kind == "Status":
        raise _StatusError(replace(response, status=_failure_code(page.code)))
    if page.items is msgspec.UNSET or (page.kind and not page.kind.endswith("List")):
        raise MalformedAnswerError(f"the answer is not a list (kind {page.kind or 'not stated'})")
    return page


def _failure_code(code: object) -> int:
    """A Failure Status's `code`, where it is one a failure has; 500 otherwise."""
    return code if isinstance(code, int) and 400 <= code <= 599 else 500


def _dialer(connection: ResolvedConnection) -> Dialer | None:
    """How to reach the server: through the connection's proxy, or directly (None)."""
    if connection.proxy is None:
        return None
    # Imported on use: only a cluster reached through a proxy dials one (doctor's start-up on a
    # small namespace, bench/imports.py).
    from truegreen.http.proxy_dial import ProxyDialer

    # an https proxy is verified with the cluster's TLS settings, as Go's transport does
    return ProxyDialer(connection.proxy, connection.tls)


class LiveCluster:
    """Reads and writes a live cluster. Thread-safe: independent reads may run concurrently."""

    def __init__(
        self,
        connection: ResolvedConnection,
        request_timeout: float,
        run_seconds: float | None = None,
        *,
        transport: Transport | None = None,
    ) -> None:
        self._connection = connection
        self._timeout = request_timeout
        self._run_seconds = run_seconds or 0.0
        self._run_deadline = None if run_seconds is None else Deadline.after(run_seconds)
        self._base = api_base(connection.server)
        self._transport = transport or Transport(connection.tls, _dialer(connection))
        acting = connection.impersonation
        self._impersonation = acting.headers() if acting is not None else ()
        self._lock = threading.Lock()
        self._requests = 0
        self._dated: tuple[str, float] | None = None
        """The `Date` header of the newest answer, and this computer's monotonic clock when it
        came: the API server's clock (`server_time`)."""

    @classmethod
    def connect(
        cls,
        settings: ConnectionSettings,
        run_seconds: float | None = None,
        *,
        make_transport: Callable[[TlsSettings, Dialer | None], Transport] = Transport,
    ) -> LiveCluster:
        """Resolve `settings` like kubectl; ConnectionSetupError when they are unusable.

        With `run_seconds`, no request is sent (or lasts) past that many seconds from now.
        Tells `settings.on_warning` when the server's certificate will not be verified.
        `make_transport` builds the HTTP transport from the connection's TLS settings and the
        dialer its proxy needs (None: a direct connection).
        """
        connection = resolve(settings)
        if connection.unverified_because is not None and settings.on_warning is not None:
            settings.on_warning(
                "not verifying the cluster's TLS certificate "
                f"({connection.unverified_because}); anyone on the network path could answer for it"
            )
        return cls(
            connection,
            settings.request_timeout,
            run_seconds,
            transport=make_transport(connection.tls, _dialer(connection)),
        )

    @property
    def namespace(self) -> str:
        """The namespace from `-n`, else the context's, else `default`."""
        return self._connection.namespace

    @property
    def source(self) -> str:
        """Where the connection settings came from: the kubeconfig file of the context's
        cluster, or `in-cluster`."""
        return self._connection.source

    @property
    def login_source(self) -> str:
        """Where the login comes from: the kubeconfig file of the context's user, or
        `in-cluster`."""
        return self._connection.login_source or self._connection.source

    @property
    def server(self) -> str:
        """The API server address, for messages, as requests are sent to it (`api_base`: no
        query or fragment, which are never sent and may hold what is not to be shown); a
        password in it (`https://user:pw@host`) is shown `<redacted>`, as kubectl hides it
        (url.Redacted)."""
        return redact_shapes(self._base)

    @property
    def address_key(self) -> str:
        """The API server's address as the connection has it, a password included: to tell
        one server from another (cluster/discovery_memory.py keeps only its digest), never to
        show."""
        return self._connection.server

    @property
    def cluster_name(self) -> str:
        """The kubeconfig's name for the cluster; "" in a pod (none is known there)."""
        return self._connection.cluster_name

    @property
    def login(self) -> str:
        """Plain words naming how requests log in (`user 'admin'`), for messages."""
        return self._connection.credentials.describe()

    @property
    def login_command(self) -> str | None:
        """The credential plugin's command, when a plugin logs in; None otherwise."""
        return self._connection.credentials.login_command

    @property
    def requests_made(self) -> int:
        """HTTP requests sent so far (each list page and each retry counts)."""
        return self._requests

    def server_time(self) -> float | None:
        """The API server's clock now, in POSIX seconds: the `Date` header of its newest answer
        (Go's net/http server writes one on every answer, to the second: net/http/server.go
        `(*response).WriteHeader` → `appendTime`, RFC 9110 §6.6.1), advanced by this computer's
        monotonic clock since; never this computer's own clock, which may be off. None before an
        answer gave one, or where it could not be read."""
        dated = self._dated
        if dated is None:
            return None
        # Imported here: only a trial asks (startup stays small without it).
        from email.utils import parsedate_to_datetime

        text, came = dated
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        return when.timestamp() + (time.monotonic() - came)

    # -- one request -------------------------------------------------------------------------

    def _request_deadline(self) -> Deadline:
        if self._run_deadline is not None and self._run_deadline.expired:
            raise RunTimeLimitError(self._run_seconds)
        return Deadline.after(self._timeout).earliest(self._run_deadline)

    def _send(
        self,
        method: str,
        path: str,
        query: Mapping[str, str | int] | None = None,
        *,
        body: bytes | None = None,
        content_type: str | None = None,
        max_bytes: int | None = None,
        into: BodyBuffers | None = None,
        gzip: bool = False,
    ) -> Response:
        """One API request, sent again only for throttling or a refreshed credential; its
        answer capped at `max_bytes` (MAX_ANSWER_BYTES unless given), read into one of `into`'s
        buffers when given, and asked for gzip-encoded with `gzip` where the connection says
        compressing pays."""
        deadline = self._request_deadline()
        url = self._base + path + (f"?{urlencode(query)}" if query else "")
        # a login plugin may not outlast the run: stopped at its limit, it is named as the one
        # that did not answer, where a request left without time would blame the cluster
        credential = self._connection.credentials.current(self._run_deadline)
        retries = 0
        reauthenticated = False
        while True:
            with self._lock:
                self._requests += 1
            try:
                response = self._transport.request(
                    method,
                    url,
                    deadline=deadline,
                    max_bytes=MAX_ANSWER_BYTES if max_bytes is None else max_bytes,
                    headers=self._headers(credential, content_type),
                    body=body,
                    tls=self._tls_for(credential),
                    into=into,
                    gzip=gzip and self._connection.compressed_lists,
                )
            except TimedOutError:
                if self._run_deadline is not None and self._run_deadline.expired:
                    raise RunTimeLimitError(self._run_seconds) from None
                raise
            except ConnectionDroppedError as dropped:
                # client-go decides on the error of sending and reading the status line; a body
                # cut short after it is the caller's error (rest/request.go request()).
                if (
                    isinstance(dropped, AnswerCutError)
                    or not throttle.may_resend_after_drop(method, retries)
                    or deadline.expired
                ):
                    raise
                retries += 1
                continue
            if response.status == 401 and not reauthenticated:
                # client-go's exec authenticator asks its plugin again after a 401, once.
                reauthenticated = True
                fresh = self._connection.credentials.after_unauthorized(
                    credential, self._run_deadline
                )
                if fresh is not None:
                    credential = fresh
                    continue
            date = response.header("date")
            if date is not None:
                self._dated = (date, time.monotonic())
            wait = throttle.retry_wait(response.status, response.header("retry-after"))
            if wait is None or not throttle.may_retry(retries, wait, deadline.remaining()):
                return _without_secret(response, credential)
            retries += 1
            time.sleep(wait)

    def _headers(self, credential: Credential, content_type: str | None) -> list[tuple[str, str]]:
        """Every request's headers, built again for each send: a retry, a refreshed credential
        and a watch carry the same identity and impersonation."""
        headers = [("accept", "application/json")]
        if credential.authorization:
            headers.append(("authorization", credential.authorization))
        if self._impersonation:
            headers += self._impersonation
        if content_type:
            headers.append(("content-type", content_type))
        return headers

    def _tls_for(self, credential: Credential) -> TlsSettings | None:
        if credential.certificate is None:
            return None
        return replace(self._connection.tls, client_certificate=credential.certificate)

    # -- reads -------------------------------------------------------------------------------

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """Every matching object, all pages fetched; or why the list could not be read.

        Objects come as sent, less their managedFields (and a machine, less all but what the
        fit reads): those are skipped while decoding, never built (cluster/views.py).
        """
        return self._listing(kind, namespace, labels, fields)

    def _listing(
        self,
        kind: Kind,
        namespace: str | None,
        labels: Mapping[str, str] | str | None,
        fields: FieldSelector | None,
    ) -> ListRead:
        decode = _page_decoder(item_view(kind))
        items: list[KubeObject] = []
        try:
            with closing(self._pages(kind, namespace, labels, fields, decode)) as pages:
                for page in pages:
                    items.extend(as_object(item, kind) for item in page.items or ())
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _list_cant(error, kind, namespace)
        return Listed(tuple(items))

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """Every matching object, folded page by page as it arrives.

        Each page is decoded straight into `fold.view`, skipping every field the fold does not
        read: at cluster scale decoding is the cost, and whole objects would pile up otherwise.
        """
        decode = _page_decoder(fold.view)
        stamp_view = view_stamper(fold.view, kind)
        try:
            with closing(self._pages(kind, namespace, None, fields, decode)) as pages:
                for page in pages:
                    for item in page.items or ():
                        if stamp_view is not None:
                            stamp_view(item)
                        fold.add(item)
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _list_cant(error, kind, namespace)
        return Folded(fold.summary())

    def _pages(
        self,
        kind: Kind,
        namespace: str | None,
        labels: Mapping[str, str] | str | None,
        fields: FieldSelector | None,
        decode: Callable[[Body], Any],
    ) -> Generator[Any, None, None]:
        """Each page of a list, decoded, following continue tokens up to MAX_PAGES.

        A non-success answer on any page raises: a list missing a page is never returned.
        When a page took the server a while (ASK_AHEAD_AFTER), the next page is asked for as
        soon as this one's head names its token (_head_token),
        so the server works on it while this one is decoded and used; its answer is kept only
        when this page, decoded whole, names the same token. A list's requests still go one at
        a time and in the same order: the next is sent once the answer before it is in. Close
        the generator where the read ends (`closing`): closing waits for a page asked for.
        """
        path = collection_path(kind, namespace)
        query: dict[str, str | int] = {"limit": PAGE_SIZE}
        if labels:
            query["labelSelector"] = (
                labels if isinstance(labels, str) else label_selector_text(labels)
            )
        if fields:
            query["fieldSelector"] = field_selector_text(fields)
        # The pages' bodies take turns in a few buffers, all released when the list ends.
        buffers = BodyBuffers() if mappings_can_grow() else None
        ask = partial(self._send, "GET", path, into=buffers, gzip=True)
        answer: Callable[[], Response] = partial(ask, dict(query))
        asked_ahead: _NextPage | None = None  # the page `answer` returns, if asked ahead
        for number in range(1, MAX_PAGES + 1):
            started = time.monotonic()
            response = answer()
            took = time.monotonic() - started if asked_ahead is None else asked_ahead.seconds
            if response.status != 200:
                raise _StatusError(response)
            slow = took >= ASK_AHEAD_AFTER
            ahead = _head_token(response.body) if slow and number < MAX_PAGES else ""
            following = _NextPage(partial(ask, {**query, "continue": ahead})) if ahead else None
            try:
                page = _checked_page(decode(response.body), response)
                yield page
            except BaseException:  # a page that does not decode, or a caller that stopped
                if following is not None:
                    following.drop()
                raise
            token = page.metadata.continue_
            if following is not None:
                if token == ahead:
                    answer, asked_ahead = following.answer, following
                    query["continue"] = token
                    continue
                following.drop()  # asked for with a token this page does not name
            asked_ahead = None
            if not token:
                return
            if number == MAX_PAGES:
                break
            query["continue"] = token
            answer = partial(ask, dict(query))
        raise TooManyPagesError(MAX_PAGES)

    def list_namespaces(self, label_selector: str) -> ListRead:
        """Every namespace whose labels match `label_selector` (a selector's text, set-based
        terms too, as kubectl's `-l` sends it; "" for all), every page: `namespace_selection`."""
        return self._listing(Kind.NAMESPACE, None, label_selector, None)

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """One object by name; the API server's NotFound is a measured absence. Discovery's
        list of groups (`Kind.API_GROUPS`) is read the same way: it is one unnamed object,
        without metadata.

        A 404 is the API server's word only where it can be: every API server serves `/apis`,
        so a 404 there means the address serves no Kubernetes API; and for a kind every server
        serves, the server's NotFound names the object (`names_object`), so one that does not
        came from something else and measures nothing. A custom kind's 404 is its absence: the
        server answers a group it does not serve with a bare `404 page not found`."""
        action = get_action(kind, name)
        if kind is not Kind.API_GROUPS and not is_path_segment_name(name):
            # No object can have this name, so none is asked for: the server would read the
            # path as another object's subresource, and its 404 would not name this one.
            return CantRead(
                ReadFailure.NOT_FOUND,
                f"{action}: not found (no object can have this name: {NAME_RULE})",
            )
        try:
            obj = _object(
                self._send("GET", object_path(kind, name, namespace)),
                metadata=kind is not Kind.API_GROUPS,
            )
        except _StatusError as refused:
            response = refused.response
            if response.status == 404 and kind is Kind.API_GROUPS:
                return no_api_at_address(action)
            if (
                response.status == 404
                and kind.spec.always_served
                and not names_object(response.body, name)
            ):
                return unnamed_not_found(action, response.body)
            return _cant(refused, action, permission("get", kind, namespace))
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("get", kind, namespace))
        return Got(stamp(obj, kind))

    def container_log(
        self,
        pod: str,
        container: str,
        *,
        namespace: str,
        previous: bool,
        tail_lines: int,
        limit_bytes: int,
    ) -> LogRead:
        """The last lines of one container's log (`pods/log`, as `kubectl logs --tail`).

        The kubelet writes forward from the first of those lines and stops at `limit_bytes`
        (cluster/logs.py LIMIT_BYTES): an answer that long is marked `reached_limit`. An answer
        much larger than that is refused, not kept (a server that ignores the limit)."""
        from truegreen.cluster.logs import Logged

        action = f"read the log of {pod}/{container}" + (" (previous)" if previous else "")
        query: dict[str, str | int] = {
            "container": container,
            "tailLines": tail_lines,
            "limitBytes": limit_bytes,
        }
        if previous:
            query["previous"] = "true"
        try:
            response = self._send(
                "GET",
                object_path(Kind.POD, pod, namespace) + "/log",
                query,
                max_bytes=2 * limit_bytes + 4096,
            )
            text = _text(response)
        except _StatusError as refused:
            cant = _cant(refused, action, f"get pods/log in namespace {namespace}")
            if refused.response.status != 400:
                return cant
            # The kubelet answers 400 to every log it cannot serve: no such instance (any
            # more), or none started yet (pkg/kubelet/server/server.go getContainerLogs). The
            # log is measured absent; the server's words say why.
            why = f" ({cant.server_message})" if cant.server_message else ""
            return replace(
                cant, failure=ReadFailure.NOT_FOUND, reason=f"{action}: no such log{why}"
            )
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, f"get pods/log in namespace {namespace}")
        return Logged(text, tail_lines, reached_limit=len(response.body) >= limit_bytes)

    # -- writes ------------------------------------------------------------------------------

    def patch(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None,
        patch: Mapping[str, Any],
        strategic: bool = False,
    ) -> PatchResult:
        """One merge (or strategic-merge) patch. A resourceVersion in `patch` makes it
        conditional: the server answers Conflict when the object changed since."""
        action = f"patch {kind.spec.name.lower()} {name!r}"
        try:
            response = self._send(
                "PATCH",
                object_path(kind, name, namespace),
                {"fieldManager": FIELD_MANAGER},
                body=msgspec.json.encode(patch),
                content_type=_STRATEGIC if strategic else _MERGE,
            )
            if response.status == 409:
                return Conflict()
            obj = _object(response)
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("patch", kind, namespace))
        return Patched(stamp(obj, kind))

    def create(
        self, kind: Kind, obj: Mapping[str, Any], *, namespace: str | None, dry_run: bool
    ) -> CreateResult:
        """Create one object (POST); with `dry_run`, admission runs and nothing is stored.

        A refusal (by admission, quota, validation) is a CantRead carrying the server's words.
        """
        action = f"create {kind.spec.name.lower()}"
        query: dict[str, str | int] = {"fieldManager": FIELD_MANAGER}
        if dry_run:
            query["dryRun"] = "All"
        try:
            response = self._send(
                "POST",
                collection_path(kind, namespace),
                query,
                body=msgspec.json.encode(obj),
                content_type="application/json",
            )
            created = _object(response, succeeded=(200, 201, 202))
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("create", kind, namespace))
        return Created(stamp(created, kind))

    def delete(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """Delete one object (DELETE, a one-second grace as `kubectl delete --now` asks); the
        answer is the object as the server last held it. NotFound (a CantRead) means it is
        already gone."""
        action = f"delete {kind.spec.name.lower()} {name!r}"
        try:
            response = self._send(
                "DELETE",
                object_path(kind, name, namespace),
                {"gracePeriodSeconds": 1},
            )
            obj = _object(response, succeeded=(200, 202))
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("delete", kind, namespace))
        return Got(stamp(obj, kind))

    # -- list, then watch (cluster/watch.py) ---------------------------------------------------

    def list_at(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
        view: type[Any] | None = None,
        each: Callable[[ObjectKey, Any], object] | None = None,
    ) -> ListedAt | CantRead:
        """Every matching object (decoded as `view`, else whole) keyed by namespace and name,
        and the resourceVersion of the list, from which a watch follows it. With `each`, every
        object goes to it as its page arrives and none is kept (`items` is empty)."""
        from truegreen.cluster.watch import ListedAt, key_of, object_decoder

        decode_object = object_decoder(kind, view)
        decode = _page_decoder(msgspec.Raw)
        items: list[tuple[ObjectKey, Any]] = []
        version = ""
        try:
            with closing(self._pages(kind, namespace, labels, fields, decode)) as pages:
                for page in pages:
                    version = version or page.metadata.version
                    for raw in page.items or ():
                        obj = decode_object(raw)
                        if each is None:
                            items.append((key_of(obj), obj))
                        else:
                            each(key_of(obj), obj)
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _list_cant(error, kind, namespace)
        return ListedAt(tuple(items), version)

    def watch(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        resource_version: str,
        timeout_seconds: int,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
        view: type[Any] | None = None,
        wanted: Callable[[tuple[str, str]], bool] | None = None,
    ) -> WatchStream | WatchRefused:
        """Open a watch from `resource_version`, with bookmarks, for `timeout_seconds` (the
        server ends it then; we give up `--request-timeout` later); an object `wanted` says no
        to is not decoded. Connecting and the status
        line are bounded by `--request-timeout`; a 401 asks for a fresh credential once."""
        from truegreen.cluster.watch import MAX_EVENT_BYTES, WatchRefused, WatchStream

        query: dict[str, str | int] = {
            "watch": "1",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": timeout_seconds,
        }
        if labels:
            query["labelSelector"] = label_selector_text(labels)
        if fields:
            query["fieldSelector"] = field_selector_text(fields)
        url = self._base + collection_path(kind, namespace) + f"?{urlencode(query)}"
        action = f"watch {kind.plural}"
        whole = Deadline.after(timeout_seconds + self._timeout)
        credential = self._connection.credentials.current()
        for attempt in range(2):
            with self._lock:
                self._requests += 1
            try:
                lines = self._transport.stream_lines(
                    "GET",
                    url,
                    deadline=whole,
                    idle_seconds=timeout_seconds + self._timeout,
                    max_line=MAX_EVENT_BYTES,
                    headers=self._headers(credential, None),
                    tls=self._tls_for(credential),
                    head_deadline=Deadline.after(self._timeout),
                )
            except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failure
                needed = permission("watch", kind, namespace)
                return WatchRefused(_cant(error, action, needed), None)
            if lines.status == 200:
                return WatchStream(lines, kind, view, action, wanted)
            body = credential.without_secret(_bounded_body(lines))
            if lines.status == 401 and attempt == 0:
                fresh = self._connection.credentials.after_unauthorized(credential)
                if fresh is not None:
                    credential = fresh
                    continue
            refused = _StatusError(Response(lines.status, (), body))
            return WatchRefused(
                _cant(refused, action, permission("watch", kind, namespace)), lines.status
            )
        raise AssertionError("unreachable: the loop returns on its second attempt")

    def close(self) -> None:
        """Release the connection pool."""
        self._transport.close()

    def __enter__(self) -> LiveCluster:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _StatusError(Exception):
    """An answer with a status code that is not the success the call expects."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


_decode_object = msgspec.json.Decoder(dict[str, Any]).decode


def _object(
    response: Response, succeeded: tuple[int, ...] = (200,), *, metadata: bool = True
) -> dict[str, Any]:
    """The one object a successful answer holds; _StatusError for any other status,
    MalformedAnswerError when the object has no metadata mapping (where it must have one)."""
    if response.status not in succeeded:
        raise _StatusError(response)
    obj = _decode_object(response.body)
    if obj.get("kind") == "Status" and obj.get("status") == "Failure":
        # A Failure Status is the failure it states, whatever the HTTP code (client-go
        # rest/request.go `transformResponse`).
        raise _StatusError(replace(response, status=_failure_code(obj.get("code"))))
    if metadata and not isinstance(obj.get("metadata"), dict):
        raise MalformedAnswerError("the object has no metadata")
    if not metadata and not isinstance(obj.get("groups"), list):
        raise MalformedAnswerError("the answer lists no API groups")
    return obj


def _bounded_body(lines: LineStream) -> bytes:
    """The body of a refused watch (one line: a Status), for its message."""
    try:
        return next(iter(lines.lines()), b"")
    except Exception:  # noqa: BLE001 - a refusal without a readable body is still a refusal
        return b""
    finally:
        lines.close()


def _text(response: Response) -> str:
    """The text of a successful answer (a log), undecodable bytes replaced; _StatusError for
    any other status."""
    if response.status != 200:
        raise _StatusError(response)
    return str(response.body, "utf-8", errors="replace")


def permission(verb: str, kind: Kind, namespace: str | None) -> str:
    """The RBAC grant a read needs, as `kubectl auth can-i` takes it: `list pods -A`."""
    resource = kind.resource
    if not kind.namespaced:
        return f"{verb} {resource} (cluster-wide: a ClusterRole)"
    if namespace is None:
        return f"{verb} {resource} in every namespace (a ClusterRole)"
    return f"{verb} {resource} in namespace {namespace}"


def _without_secret(response: Response, credential: Credential) -> Response:
    """A refusal with the credential it was sent with taken out of its body (its message is
    quoted to the operator); a success is left as it came (its body is the objects read)."""
    if response.status < 400 or credential.authorization is None:
        return response
    body = bytes(response.body)
    scrubbed = credential.without_secret(body)
    return response if scrubbed == body else replace(response, body=scrubbed)


def _cant(error: Exception, action: str, needed: str) -> CantRead:
    """The classified failure of a call; a refusal names the grant it needed. An exception that
    is not a failure to read is re-raised: it is a bug, not an answer."""
    if isinstance(error, _StatusError):
        cant = from_status(error.response.status, error.response.body, action)
    else:
        found = classify(error, action)
        if found is None:
            raise error
        cant = found
    if cant.failure is ReadFailure.FORBIDDEN:
        return replace(cant, reason=f"{cant.reason}; needs {needed}")
    return cant


def _list_cant(error: Exception, kind: Kind, namespace: str | None) -> CantRead:
    """Why a list could not be read. Every API server serves the collections of the core group
    and `apps` (a namespace that does not exist lists empty), so a 404 for one says that what
    answers at the address is not the API server."""
    if isinstance(error, _StatusError) and error.response.status == 404 and kind.spec.always_served:
        return no_api_at_address(action_of(kind))
    return _cant(error, action_of(kind), permission("list", kind, namespace))


def action_of(kind: Kind) -> str:
    """The plain words for listing `kind`, used in can't-read reasons."""
    return f"list {kind.plural}"
