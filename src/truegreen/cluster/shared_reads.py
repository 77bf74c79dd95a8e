"""Reads shared by the namespaces of one run: each read outside them is made once.

A run over many namespaces checks each namespace with the reads doctor makes for one. The
reads that do not belong to a checked namespace (the machines, the cluster's pods, webhooks,
discovery, a webhook's Service in its own namespace, the autoscaler's status) give every
namespace the same answer within a run, so the first namespace that asks makes the read and
every other one is given its answer; one asked while it is under way waits for it. Reads of a
checked namespace go through that namespace's own reader: they are its alone, and keeping them
would hold every namespace's objects for the whole run.
"""

import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import (
    ClusterReader,
    FieldSelector,
    Fold,
    ReadKey,
    field_selector_text,
    label_selector_text,
)
from truegreen.cluster.reads import FoldRead, GetRead, ListRead
from truegreen.cluster.schedule import Pending

T = TypeVar("T", ListRead, GetRead, FoldRead)


class SharedReads:
    """The answers of one run's reads outside its checked namespaces, each made once through
    `reader`; `seen_by` gives each namespace a reader over them."""

    def __init__(self, reader: ClusterReader, checked: Collection[str]) -> None:
        self._reader = reader
        self._checked = frozenset(checked)
        self._lock = threading.Lock()
        self._answers: dict[tuple[ReadKey, str], Pending[Any]] = {}
        self.shared = 0
        """Reads answered from one already made (or under way)."""

    def seen_by(self, own: ClusterReader) -> ClusterReader:
        """A reader that makes the checked namespaces' reads through `own` and answers every
        other read from this run's shared answers."""
        return _Sharing(self, own)

    def owns(self, namespace: str | None) -> bool:
        """Whether a read in `namespace` belongs to a checked namespace (and is not shared)."""
        return namespace is not None and namespace in self._checked

    def once(self, key: ReadKey, fold: str, read: Callable[[], T]) -> T:
        """`read`'s answer, made by the first caller with this key (and fold name)."""
        with self._lock:
            pending: Pending[T] | None = self._answers.get((key, fold))
            if pending is not None:
                self.shared += 1
                waiting = pending
            else:
                waiting = self._answers[(key, fold)] = Pending()
        if pending is not None:
            return pending.result()
        try:
            answer = read()
        except BaseException as error:  # a bug: every waiter hears it too
            waiting._settle(None, error)
            raise
        waiting._settle(answer, None)
        return answer

    @property
    def reader(self) -> ClusterReader:
        """The reader the shared reads are made through."""
        return self._reader


class _Sharing:
    """One namespace's reader: its own reads through `own`, the rest shared."""

    def __init__(self, shared: SharedReads, own: ClusterReader) -> None:
        self._shared = shared
        self._own = own

    @property
    def namespace(self) -> str:
        """The namespace the reader works on when none is named."""
        return self._own.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The list, made once per run when it is outside the checked namespaces."""
        if self._shared.owns(namespace):
            return self._own.list(kind, namespace=namespace, labels=labels, fields=fields)
        key = ReadKey(
            "list", kind, namespace, None, label_selector_text(labels), field_selector_text(fields)
        )
        reader = self._shared.reader
        return self._shared.once(
            key, "", lambda: reader.list(kind, namespace=namespace, labels=labels, fields=fields)
        )

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The fold, made once per run (by its name) outside the checked namespaces: every
        namespace's fold of one name must keep the same things (the capacity fold keeps the
        pods of every checked namespace)."""
        if self._shared.owns(namespace):
            return self._own.fold(kind, fold, namespace=namespace, fields=fields)
        key = ReadKey("fold", kind, namespace, None, "", field_selector_text(fields))
        reader = self._shared.reader
        return self._shared.once(
            key, fold.name, lambda: reader.fold(kind, fold, namespace=namespace, fields=fields)
        )

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """One object, read once per run when it is outside the checked namespaces."""
        if self._shared.owns(namespace):
            return self._own.get(kind, name, namespace=namespace)
        reader = self._shared.reader
        return self._shared.once(
            ReadKey("get", kind, namespace, name),
            "",
            lambda: reader.get(kind, name, namespace=namespace),
        )
