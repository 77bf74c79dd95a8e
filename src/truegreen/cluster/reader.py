"""The read interface shared by the live cluster and a saved snapshot."""

from collections.abc import Mapping
from typing import Protocol

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reads import GetRead, ListRead


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
        fields: Mapping[str, str] | None = None,
    ) -> ListRead:
        """Every object of `kind` in `namespace` (all namespaces when None) matching the selectors.

        `fields` maps a field path to a value; a value starting with `!` means "not equal".
        """
        ...

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """One object by name."""
        ...
