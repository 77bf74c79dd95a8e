"""What doctor is reading, told as it goes: a reader that wraps another and says each read.

Nothing here prints; the CLI shows what it is told on a terminal. Lists that stream page by page
(the cluster's pods) are counted as their objects arrive, so a long wait shows it is moving.
"""

import itertools
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from truegreen.cluster import Kind
from truegreen.cluster.reader import ClusterReader, FieldSelector, Fold
from truegreen.cluster.reads import FoldRead, GetRead, Listed, ListRead
from truegreen.plain_words import kind_noun

Told = Callable[[str], None]
EVERY = 500
"""Objects between two counts of a streaming list: one page."""


class _CountingFold:
    """A fold that tells how many objects have arrived, every EVERY objects."""

    def __init__(self, fold: Fold, noun: str, told: Told) -> None:
        self._fold = fold
        self._noun = noun
        self._told = told
        self._count = 0

    @property
    def name(self) -> str:
        return self._fold.name

    @property
    def view(self) -> type[Any]:
        return self._fold.view

    def add(self, item: Any) -> None:
        self._fold.add(item)
        self._count += 1
        if self._count % EVERY == 0:
            self._told(f"Reading {self._noun}: {self._count:,} so far")

    def summary(self) -> dict[str, Any]:
        return self._fold.summary()


class ProgressReader:
    """A ClusterReader that tells `told` what it reads, and how many objects long lists held.
    Safe to share between threads when `told` is.

    Reads run together (doctor's ReadSchedule): each is told as it starts, and when one ends
    the oldest still under way is told again, so a slow read is what the line shows while it
    is the one being waited for."""

    def __init__(self, reader: ClusterReader, told: Told) -> None:
        self._reader = reader
        self._told = told
        self._lock = threading.Lock()
        self._under_way: dict[int, str] = {}  # in the order the reads started
        self._tokens = itertools.count()

    @property
    def namespace(self) -> str:
        """The wrapped reader's namespace."""
        return self._reader.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The wrapped list, told before it starts and with its count when it is long."""
        noun = _where(kind, namespace)
        with self._reading(f"Reading {noun}"):
            read = self._reader.list(kind, namespace=namespace, labels=labels, fields=fields)
            if isinstance(read, Listed) and len(read.items) >= EVERY:
                self._tell(f"Read {len(read.items):,} of {noun}")
        return read

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The wrapped fold, its objects counted as they arrive."""
        noun = _where(kind, namespace)
        with self._reading(f"Reading {noun}"):
            counting = _CountingFold(fold, noun, self._tell)
            return self._reader.fold(kind, counting, namespace=namespace, fields=fields)

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """The wrapped get, told before it starts."""
        with self._reading(f"Reading {kind_noun(kind)}: '{name}'"):
            return self._reader.get(kind, name, namespace=namespace)

    @contextmanager
    def _reading(self, text: str) -> Iterator[None]:
        """`text` told now; when the read ends, the oldest read still under way told again."""
        with self._lock:
            token = next(self._tokens)
            self._under_way[token] = text
            self._told(text)
        try:
            yield
        finally:
            with self._lock:
                del self._under_way[token]
                if self._under_way:
                    self._told(next(iter(self._under_way.values())))

    def _tell(self, text: str) -> None:
        with self._lock:
            self._told(text)


def _where(kind: Kind, namespace: str | None) -> str:
    """`the running programs of the whole cluster` for a read across every namespace."""
    noun = kind_noun(kind)
    return f"{noun} of the whole cluster" if namespace is None and kind.namespaced else noun
