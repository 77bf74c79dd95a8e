"""The read interface shared by the live cluster and a saved snapshot."""

from collections.abc import Mapping
from typing import Any, Protocol

from msgspec import Struct

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reads import FoldRead, GetRead, ListRead, PatchResult


class FieldIsNot(Struct, frozen=True):
    """A field selector condition: the field equals none of `values`."""

    values: tuple[str, ...]


FieldSelector = Mapping[str, str | FieldIsNot]


class Fold(Protocol):
    """Reduces a list to a summary as its pages arrive, so a cluster's objects never pile up.

    A fold is used for one read. `view` is the msgspec Struct each object is decoded into:
    only the fields `add` reads are decoded at all.
    """

    @property
    def name(self) -> str:
        """Identifies the fold in a snapshot."""
        ...

    @property
    def view(self) -> type[Any]:
        """The msgspec Struct type of one object, as `add` receives it."""
        ...

    def add(self, item: Any) -> None:
        """Count one object, decoded as `view`."""
        ...

    def summary(self) -> dict[str, Any]:
        """The result, as plain JSON-able values."""
        ...


def label_selector_text(labels: Mapping[str, str] | None) -> str:
    """The canonical label selector string (`a=b,c=d`)."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))


def field_selector_text(fields: FieldSelector | None) -> str:
    """The canonical field selector string (`status.phase!=Failed,status.phase!=Succeeded`)."""
    terms: list[str] = []
    for path, condition in sorted((fields or {}).items()):
        if isinstance(condition, FieldIsNot):
            terms.extend(f"{path}!={value}" for value in sorted(condition.values))
        else:
            terms.append(f"{path}={condition}")
    return ",".join(terms)


class ReadKey(Struct, frozen=True):
    """Identifies one read, so a snapshot can answer exactly the reads it recorded."""

    verb: str  # "list" or "get"
    kind: Kind
    namespace: str | None
    name: str | None = None
    labels: str = ""
    fields: str = ""


class ClusterReader(Protocol):
    """Reads objects; every answer is a value that says whether it could look."""

    @property
    def namespace(self) -> str:
        """The namespace a command works on when none is named."""
        ...

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """Every object of `kind` in `namespace` (all namespaces when None) matching selectors."""
        ...

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """Every matching object, folded by `fold` page by page; or why it could not be read."""
        ...

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """One object by name."""
        ...


class ClusterWriter(ClusterReader, Protocol):
    """Reads, and patches one object at a time (refresh's only writes)."""

    def patch(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None,
        patch: Mapping[str, Any],
        strategic: bool = False,
    ) -> PatchResult:
        """A merge (or strategic-merge) patch; conditional when it carries a resourceVersion."""
        ...
