"""The namespaces a fleet's monitor watches: doctor's selection (`--namespaces`, `-A`,
`--namespace-selector`), resolved through the live client as doctor resolves it, and again
each time the engine asks (at most every `--interval`)."""

from truegreen.cluster.namespace_selection import (
    NamespaceLister,
    NamespaceSelection,
    NamespacesNotListedError,
    NoNamespaceMatchedError,
    SelectionMode,
    resolve_namespaces,
)
from truegreen.errors import UsageError


class SelectedNamespaces:
    """A `NamespaceSource` over doctor's resolution."""

    def __init__(self, selection: NamespaceSelection, lister: NamespaceLister) -> None:
        self._selection = selection
        self._lister = lister
        self.every = selection.mode is SelectionMode.ALL
        self._first: tuple[str, ...] | None = None

    def first(self) -> tuple[str, ...]:
        """The namespaces at start (the next `names()` answers them without asking again).
        NamespacesNotListedError (exit 3) when the list cannot be read: the monitor cannot know
        what to watch. None matching is not an error here: namespaces labelled later are
        watched once they are."""
        try:
            self._first = resolve_namespaces(self._selection, self._lister)
        except NoNamespaceMatchedError:
            self._first = ()
        return self._first

    def names(self) -> tuple[str, ...] | None:
        """The namespaces now; None when they could not be read again (the last ones stay)."""
        first, self._first = self._first, None
        if first is not None:
            return first
        try:
            return resolve_namespaces(self._selection, self._lister)
        except NoNamespaceMatchedError:
            return ()
        except (NamespacesNotListedError, UsageError):
            return None
