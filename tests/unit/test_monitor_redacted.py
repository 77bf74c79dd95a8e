"""RedactedOnce: the monitor's reads redacted as RedactingReader redacts them, a cluster-wide
list once per answer of the watch cache (so that doctor's computations kept by the answer's
identity are kept), everything else on every read."""

from collections.abc import Mapping

from truegreen.cluster import Got, Kind, Listed
from truegreen.cluster.reader import FieldSelector, Fold
from truegreen.cluster.reads import Folded, FoldRead, GetRead, ListRead
from truegreen.cluster.redact import RedactingReader
from truegreen.monitor.redacted import RedactedOnce

SECRET = "hunter2-very-secret"


def _pod(namespace: str) -> dict[str, object]:
    env = [{"name": "DB_PASSWORD", "value": SECRET}]
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "p", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "env": env}]},
    }


class _Answers:
    """A reader answering the same objects, in a new answer each time `change()` is called
    (the watch cache hands out its last answer until its objects change)."""

    namespace = "train"

    def __init__(self) -> None:
        self.change()

    def change(self) -> None:
        self.cluster_wide = Listed((_pod("other"),))
        self.summary = Folded({"machines": {}})

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        return self.cluster_wide if namespace is None else Listed((_pod(namespace),))

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        return self.summary

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        return Got(_pod(namespace or ""))


def test_every_read_is_redacted_as_redacting_reader_redacts_it() -> None:
    inner = _Answers()
    reader, plain = RedactedOnce(inner), RedactingReader(inner)
    for namespace in (None, "train"):
        assert reader.list(Kind.POD, namespace=namespace) == plain.list(
            Kind.POD, namespace=namespace
        )
    assert reader.get(Kind.POD, "p", namespace="train") == plain.get(
        Kind.POD, "p", namespace="train"
    )
    assert SECRET not in repr(reader.list(Kind.POD, namespace=None))
    assert SECRET not in repr(reader.list(Kind.POD, namespace="train"))
    assert SECRET not in repr(reader.get(Kind.POD, "p", namespace="train"))


def test_a_cluster_wide_answer_is_redacted_once_while_it_stands() -> None:
    inner = _Answers()
    reader = RedactedOnce(inner)
    first = reader.list(Kind.POD, namespace=None)
    assert reader.list(Kind.POD, namespace=None) is first
    assert reader.list(Kind.POD, namespace=None, labels={"a": "b"}) is not first, "another read"
    assert reader.list(Kind.POD, namespace="train") is not reader.list(Kind.POD, namespace="train")
    assert reader.fold(Kind.POD, None, namespace=None) is inner.summary  # type: ignore[arg-type]
    inner.change()
    changed = reader.list(Kind.POD, namespace=None)
    assert changed is not first
    assert changed == first, "the same objects, redacted alike"
