"""What doctor tells a terminal while it reads: each read in plain words, long lists counted."""

from collections.abc import Mapping
from typing import Any

from truegreen.cluster import Kind
from truegreen.cluster.reader import FieldSelector, Fold
from truegreen.cluster.reads import Folded, FoldRead, GetRead, Got, Listed, ListRead
from truegreen.doctor.command.progress import EVERY, ProgressReader


class _Shelf:
    """A reader holding `count` objects of every kind, handing them to folds one by one."""

    def __init__(self, count: int) -> None:
        self._items = tuple({"metadata": {"name": f"p{i}"}} for i in range(count))

    @property
    def namespace(self) -> str:
        return "train"

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        return Listed(self._items)

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        for item in self._items:
            fold.add(item)
        return Folded(fold.summary())

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        return Got(self._items[0])


class _Count:
    name = "count"
    view: type[Any] = dict

    def __init__(self) -> None:
        self.seen = 0

    def add(self, item: Any) -> None:
        self.seen += 1

    def summary(self) -> dict[str, Any]:
        return {"seen": self.seen}


def test_each_read_is_told_in_plain_words() -> None:
    told: list[str] = []
    reader = ProgressReader(_Shelf(3), told.append)
    listed = reader.list(Kind.NODE, namespace=None)
    assert isinstance(listed, Listed)
    assert len(listed.items) == 3
    reader.get(Kind.NAMESPACE, "train", namespace=None)
    reader.list(Kind.DEPLOYMENT, namespace="train")
    assert told == [
        "Reading the machines",
        "Reading the environment's space: 'train'",
        "Reading the workloads",
    ]


def test_a_long_list_is_counted_and_a_cluster_wide_one_says_so() -> None:
    told: list[str] = []
    reader = ProgressReader(_Shelf(2 * EVERY + 1), told.append)
    fold = _Count()
    assert reader.fold(Kind.POD, fold, namespace=None) == Folded({"seen": 2 * EVERY + 1})
    reader.list(Kind.POD, namespace="train")
    assert told == [
        "Reading the running programs of the whole cluster",
        f"Reading the running programs of the whole cluster: {EVERY:,} so far",
        f"Reading the running programs of the whole cluster: {2 * EVERY:,} so far",
        "Reading the running programs",
        f"Read {2 * EVERY + 1:,} of the running programs",
    ]
