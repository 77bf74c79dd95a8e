"""The live cluster, read and written through lightkube."""

from collections.abc import Iterator, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any

import httpx2
import msgspec
from lightkube import Client
from lightkube.core.exceptions import ConfigError
from lightkube.generic_resource import create_global_resource, create_namespaced_resource
from lightkube.operators import not_in
from lightkube.types import PatchType

from truegreen.cluster.classify import MalformedAnswerError, classify, describe
from truegreen.cluster.kinds import Kind
from truegreen.cluster.kubeconfig import ResolvedConnection, resolve
from truegreen.cluster.reader import FieldIsNot, FieldSelector, Fold, field_selector_text
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
from truegreen.errors import ConnectionSetupError

PAGE_SIZE = 500
"""Objects per list page, as kubectl asks for."""


def _resource(kind: Kind) -> Any:
    """A lightkube resource class that decodes objects of `kind` into plain dictionaries."""
    spec = kind.spec
    make = create_namespaced_resource if spec.namespaced else create_global_resource
    return make(spec.group, spec.version, spec.name, spec.plural)


_RESOURCES = {kind: _resource(kind) for kind in Kind}


class _ListMeta(msgspec.Struct, rename={"continue_": "continue"}):
    continue_: str = ""


def _page_of(view: type[Any]) -> type[Any]:
    """The Struct of one list page whose items decode as `view`."""
    return msgspec.defstruct(
        "Page",
        [("items", list[view]), ("metadata", _ListMeta, msgspec.field(default_factory=_ListMeta))],  # type: ignore[valid-type]
    )


class LiveCluster:
    """Reads a live cluster. Every read is a value; nothing here raises on an API failure."""

    def __init__(self, connection: ResolvedConnection, request_timeout: float) -> None:
        self._connection = connection
        self._requests = 0
        try:
            self._client = Client(
                config=connection.config,
                namespace=connection.namespace,
                timeout=httpx2.Timeout(request_timeout),
                field_manager="truegreen",
            )
        except (ConfigError, OSError, ValueError) as error:
            raise ConnectionSetupError(
                f"cannot use the credentials in {connection.source}",
                type(error).__name__,
                "check the user entry of the kubeconfig",
            ) from None
        # Count every HTTP request, pages and retries of the auth flow included.
        self._client._client._client.event_hooks["request"].append(self._count)

    @classmethod
    def connect(cls, settings: ConnectionSettings) -> "LiveCluster":
        """Resolve `settings` like kubectl; ConnectionSetupError when they are unusable."""
        return cls(resolve(settings), settings.request_timeout)

    def _count(self, _request: object) -> None:
        self._requests += 1

    @property
    def namespace(self) -> str:
        """The namespace from `-n`, else the context's, else `default`."""
        return self._connection.namespace

    @property
    def source(self) -> str:
        """Where the connection settings came from: a kubeconfig path or `in-cluster`."""
        return self._connection.source

    @property
    def server(self) -> str:
        """The API server address, for messages."""
        return self._connection.server

    @property
    def requests_made(self) -> int:
        """HTTP requests sent so far (each list page counts)."""
        return self._requests

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """Every matching object, all pages fetched; or why the list could not be read."""
        action = action_of(kind)
        try:
            items = tuple(self._iterate(kind, namespace, labels, fields))
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("list", kind, namespace))
        return Listed(items)

    def _iterate(
        self,
        kind: Kind,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        fields: FieldSelector | None,
    ) -> Iterator[KubeObject]:
        selector: dict[str, Any] | None = None
        if fields:
            selector = {
                path: not_in(list(value.values)) if isinstance(value, FieldIsNot) else value
                for path, value in fields.items()
            }
        for item in self._client.list(
            _RESOURCES[kind],
            namespace="*" if namespace is None and kind.namespaced else namespace,
            chunk_size=PAGE_SIZE,
            labels=dict(labels) if labels else None,
            fields=selector,
        ):
            if not isinstance(item, Mapping):
                raise MalformedAnswerError(action_of(kind))
            yield dict(item)

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """Every matching object, folded page by page as it arrives.

        Each page is decoded straight into `fold.view`, skipping every field the fold does not
        read: at cluster scale decoding is the cost, and whole objects would pile up otherwise.
        """
        action = action_of(kind)
        # lightkube builds the request (path, auth, timeout); only the decoding is ours.
        api = self._client._client
        decode = msgspec.json.Decoder(_page_of(fold.view)).decode
        try:
            request = api.prepare_request(
                "list",
                _RESOURCES[kind],
                namespace="*" if namespace is None and kind.namespaced else namespace,
                params={"limit": PAGE_SIZE, "fieldSelector": field_selector_text(fields) or None},
            )
            while True:
                response = api.send(api.build_adapter_request(request))
                api.raise_for_status(response)
                page = decode(response.content)
                for item in page.items:
                    fold.add(item)
                if not page.metadata.continue_:
                    break
                request.params["continue"] = page.metadata.continue_
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("list", kind, namespace))
        return Folded(fold.summary())

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """One object by name; NotFound is a measured absence."""
        action = f"read {kind.spec.name.lower()} {name!r}"
        try:
            item = self._client.get(_RESOURCES[kind], name, namespace=namespace)
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            return _cant(error, action, permission("get", kind, namespace))
        if not isinstance(item, Mapping) or not isinstance(item.get("metadata"), Mapping):
            return CantRead(ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action))
        return Got(dict(item))

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
        patch_type = PatchType.STRATEGIC if strategic else PatchType.MERGE
        try:
            stored = self._client.patch(
                _RESOURCES[kind], name, dict(patch), namespace=namespace, patch_type=patch_type
            )
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            if getattr(getattr(error, "response", None), "status_code", None) == 409:
                return Conflict()
            return _cant(error, action, permission("patch", kind, namespace))
        if not isinstance(stored, Mapping):
            return CantRead(ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action))
        return Patched(dict(stored))

    def create(
        self, kind: Kind, obj: Mapping[str, Any], *, namespace: str, dry_run: bool
    ) -> CreateResult:
        """Create one object; with `dry_run` (`?dryRun=All`) the server runs every admission
        step and stores nothing. A refusal keeps the server's own message."""
        action = f"create {kind.plural}"
        try:
            stored = self._client.create(
                _RESOURCES[kind].from_dict(dict(obj)), namespace=namespace, dry_run=dry_run
            )
        except Exception as error:  # noqa: BLE001 - _cant re-raises what is not a failed read
            cant = _cant(error, action, permission("create", kind, namespace))
            status = getattr(error, "status", None)
            return replace(cant, server_message=str(getattr(status, "message", None) or ""))
        if not isinstance(stored, Mapping):
            return CantRead(ReadFailure.MALFORMED, describe(ReadFailure.MALFORMED, action))
        return Created(dict(stored))

    def close(self) -> None:
        """Release the connection pool."""
        self._client.close()

    def __enter__(self) -> "LiveCluster":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def permission(verb: str, kind: Kind, namespace: str | None) -> str:
    """The RBAC grant a read needs, as `kubectl auth can-i` takes it: `list pods -A`."""
    resource = f"{kind.plural}.{kind.spec.group}" if kind.spec.group else kind.plural
    if not kind.namespaced:
        return f"{verb} {resource} (cluster-wide: a ClusterRole)"
    if namespace is None:
        return f"{verb} {resource} in every namespace (a ClusterRole)"
    return f"{verb} {resource} in namespace {namespace}"


def _cant(error: Exception, action: str, needed: str) -> CantRead:
    """The classified failure of a call; a refusal names the grant it needed. An exception that
    is not a failure to read is re-raised: it is a bug, not an answer."""
    cant = classify(error, action)
    if cant is None:
        raise error
    if cant.failure is ReadFailure.FORBIDDEN:
        return replace(cant, reason=f"{cant.reason}; needs {needed}")
    return cant


def action_of(kind: Kind) -> str:
    """The plain words for listing `kind`, used in can't-read reasons."""
    return f"list {kind.plural}"
