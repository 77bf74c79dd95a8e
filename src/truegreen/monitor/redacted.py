"""doctor's redaction over the watch cache, done once per cluster-wide answer.

doctor reads through `RedactingReader`, which redacts every list it answers into a new one. What
doctor computes from a cluster-wide answer (the machines as the fit reads them, the GPU machines in
trouble) it keeps for the very same answer object (doctor/knowledge/last_answer.py), and the watch
cache hands out the very same one while the objects under it stand: redacting it afresh each time
would throw that away for every namespace of a fleet and every round. Here the redacted answer of a
cluster-wide list is kept for the very same cache answer; everything else is redacted as
RedactingReader redacts it.
"""

import threading
from collections.abc import Mapping

from truegreen.cluster import ClusterReader, Kind, Listed
from truegreen.cluster.reader import FieldSelector, Fold, field_selector_text, label_selector_text
from truegreen.cluster.reads import FoldRead, GetRead, ListRead
from truegreen.cluster.redact import RedactingReader, redact_object

_Key = tuple[Kind, str, str]


class RedactedOnce:
    """A `ClusterReader` over `inner` that no secret value leaves (RedactingReader's policy)."""

    def __init__(self, inner: ClusterReader) -> None:
        self._inner = inner
        self._redacting = RedactingReader(inner)
        self._lock = threading.Lock()
        self._kept: dict[_Key, tuple[Listed, Listed]] = {}
        """Per cluster-wide list, the cache's last answer and its redacted copy."""

    @property
    def namespace(self) -> str:
        """The inner reader's namespace."""
        return self._inner.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The inner list, redacted; a cluster-wide one redacted once per inner answer."""
        if namespace is not None:
            return self._redacting.list(kind, namespace=namespace, labels=labels, fields=fields)
        read = self._inner.list(kind, namespace=None, labels=labels, fields=fields)
        if not isinstance(read, Listed):
            return read
        key = (kind, label_selector_text(labels), field_selector_text(fields))
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and kept[0] is read:
            return kept[1]
        redacted = Listed(tuple(redact_object(item) for item in read.items))
        with self._lock:
            self._kept[key] = (read, redacted)
        return redacted

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """As RedactingReader folds: the summary, built by the fold's own view."""
        return self._redacting.fold(kind, fold, namespace=namespace, fields=fields)

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """The inner get, redacted."""
        return self._redacting.get(kind, name, namespace=namespace)
