"""Which namespaces a run checks: one, a list, every one, or those whose labels match.

`--namespace-selector` takes the label-selector syntax kubectl's `-l` takes, parsed as
apimachinery parses it (cluster/label_selector.py), so a selector kubectl refuses is refused
here, before any request, and one it accepts is sent as `labelSelector` on
`GET /api/v1/namespaces` for the API server to match, as `kubectl get namespaces -l SELECTOR`
sends it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, ClassVar, Protocol

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.apinames import NAMESPACE_NAME_RULE, is_namespace_name
from truegreen.cluster.reads import CantRead, ListRead, ReadFailure
from truegreen.errors import TruegreenError, UsageError
from truegreen.exitcodes import ExitCode

if TYPE_CHECKING:
    import argparse

MAX_NAMESPACES = 1000
"""Namespaces one run checks at most: a selection past it is refused (narrow it)."""


class Operator(StrEnum):
    """A requirement's operator, spelled as apimachinery's `selection.Operator`."""

    EXISTS = "exists"
    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


class Requirement(Struct, frozen=True):
    """One term of a label selector: a key, an operator, and its values (sorted, as a set)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def text(self) -> str:
        """The term as apimachinery's `Requirement.String` writes it."""
        if self.operator is Operator.EXISTS:
            return self.key
        if self.operator is Operator.DOES_NOT_EXIST:
            return f"!{self.key}"
        joined = ",".join(self.values)
        if self.operator in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {self.operator.value} ({joined})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(
            self.operator, self.operator.value
        )
        return f"{self.key}{symbol}{joined}"


class LabelSelector(Struct, frozen=True):
    """A parsed label selector: every requirement must hold (sorted by key, as Parse sorts)."""

    requirements: tuple[Requirement, ...]

    def text(self) -> str:
        """The selector as sent to the API server (apimachinery's `Selector.String`)."""
        return ",".join(r.text() for r in self.requirements)


class SelectionMode(StrEnum):
    """How the namespaces of a run were chosen."""

    ONE = "one"
    """`-n NAME`, or the context's namespace: today's single-namespace run."""
    LIST = "list"
    """`--namespaces a,b,c`: exactly those, no namespace list is read."""
    ALL = "all"
    """`-A`/`--all-namespaces`: every namespace the cluster has."""
    SELECTOR = "selector"
    """`--namespace-selector LABELS`: the namespaces whose labels match."""


class NamespaceSelection(Struct, frozen=True):
    """The namespaces the operator asked for, before the cluster is asked which exist."""

    mode: SelectionMode = SelectionMode.ONE
    names: tuple[str, ...] = ()
    """`ONE`: the `-n` name, if given; `LIST`: the names in the order given, each once."""
    selector: LabelSelector | None = None
    """`SELECTOR` only."""
    noun: ClassVar[str] = "namespace"
    """What the selection names many of, for lines that refuse it."""
    one_flag: ClassVar[str] = "-n"
    """The flag that names just one instead, for remedies."""

    @property
    def many(self) -> bool:
        """More than one namespace may be checked: the fleet's report, not one namespace's."""
        return self.mode is not SelectionMode.ONE

    def flag(self) -> str:
        """The flag the operator used, for lines that name it."""
        return {
            SelectionMode.ONE: "-n",
            SelectionMode.LIST: "--namespaces",
            SelectionMode.ALL: "--all-namespaces",
            SelectionMode.SELECTOR: "--namespace-selector",
        }[self.mode]


class NamespaceLister(Protocol):
    """Lists namespaces with a label selector's text (the live client)."""

    def list_namespaces(self, label_selector: str) -> ListRead:
        """Every namespace matching `label_selector` ("" for every namespace), all pages."""
        ...


class NamespacesNotListedError(TruegreenError):
    """The namespaces could not be listed, or none matched: nothing was checked (exit 3)."""

    exit_code = ExitCode.UNKNOWN
    code = "namespaces-not-listed"
    cant: CantRead | None = None
    """The list's failure, for a caller that knows the cluster's address and can say it as a
    run that reached nothing says it."""


class NoNamespaceMatchedError(TruegreenError):
    """The selector is well formed and the list was read, but no namespace matched (exit 3):
    nothing was checked, which is never a pass; and the labels may simply not be set yet, which
    is a fact about the cluster rather than a wrong command."""

    exit_code = ExitCode.UNKNOWN
    code = "no-namespace-matched"


# -- flags -------------------------------------------------------------------------------------


def add_selection_flags(parser: argparse.ArgumentParser) -> None:
    """`--namespaces`, `-A/--all-namespaces` and `--namespace-selector` (`-n` is the
    connection's own flag)."""
    parser.add_argument(
        "--namespaces",
        metavar="A,B,C",
        help="Check these namespaces in one run (cluster-wide reads are made once).",
    )
    parser.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        help="Check every namespace in one run (needs list on namespaces).",
    )
    parser.add_argument(
        "--namespace-selector",
        metavar="LABELS",
        help="Check the namespaces whose labels match, as kubectl's -l takes them "
        "(team=ml,tier in (train,eval),!scratch; needs list on namespaces).",
    )


def selection_from_flags(
    namespace: str | None,
    namespaces: str | None,
    all_namespaces: bool,
    namespace_selector: str | None,
) -> NamespaceSelection:
    """The selection the flags ask for; UsageError (exit 64) for two ways at once, a name that
    cannot be a namespace's, or a selector kubectl would refuse."""
    given = [
        flag
        for flag, value in (
            ("-n", namespace is not None),
            ("--namespaces", namespaces is not None),
            ("--all-namespaces", all_namespaces),
            ("--namespace-selector", namespace_selector is not None),
        )
        if value
    ]
    if len(given) > 1:
        raise UsageError(
            f"{' and '.join(given)} cannot be used together",
            todo="choose one way to name the namespaces",
        )
    if namespaces is not None:
        return NamespaceSelection(SelectionMode.LIST, _namespace_names(namespaces))
    if all_namespaces:
        return NamespaceSelection(SelectionMode.ALL)
    if namespace_selector is not None:
        # Imported on use: only --namespace-selector is parsed (doctor's start-up on a small
        # namespace, bench/imports.py).
        from truegreen.cluster.label_selector import parse_selector

        return NamespaceSelection(
            SelectionMode.SELECTOR, selector=parse_selector(namespace_selector)
        )
    return NamespaceSelection(names=() if namespace is None else (namespace,))


def _namespace_names(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        raise UsageError("--namespaces names no namespace", todo="give --namespaces a,b,c")
    for name in names:
        if not is_namespace_name(name):
            raise UsageError(
                f"--namespaces: {name!r} cannot be a namespace's name", NAMESPACE_NAME_RULE
            )
    if len(names) > MAX_NAMESPACES:
        raise UsageError(
            f"--namespaces names {len(names)} namespaces",
            f"doctor checks at most {MAX_NAMESPACES} in one run",
            "name fewer",
        )
    return names


# -- asking the cluster -------------------------------------------------------------------------


def resolve_namespaces(selection: NamespaceSelection, lister: NamespaceLister) -> tuple[str, ...]:
    """The namespaces to check, in the cluster's order (a list: as given), each once.
    `--namespaces` makes no request: a named namespace that does not exist is that namespace's
    own finding. A listed name no namespace can have is kept: its check says so.

    NamespacesNotListedError when the list could not be read (a refusal says which grant it
    needs), NoNamespaceMatchedError when nothing matched, UsageError past MAX_NAMESPACES.
    """
    if selection.mode in (SelectionMode.ONE, SelectionMode.LIST):
        return selection.names
    selector = "" if selection.selector is None else selection.selector.text()
    read = lister.list_namespaces(selector)
    if isinstance(read, CantRead):
        raise _not_listed(read)
    # A namespace's name is unique in its cluster: a list naming one twice is not the API
    # server's own answer, and the name is checked once, where it came first.
    names = tuple(dict.fromkeys(o.name_of(item) for item in read.items if o.name_of(item)))
    if not names:
        raise NoNamespaceMatchedError(
            f"No namespace has labels matching --namespace-selector '{selector}'"
            if selector
            else "The cluster listed no namespaces",
            todo="check the labels with `kubectl get namespaces --show-labels`",
        )
    if len(names) > MAX_NAMESPACES:
        raise UsageError(
            f"{selection.flag()} selects {len(names)} namespaces",
            f"doctor checks at most {MAX_NAMESPACES} in one run",
            "narrow it with --namespace-selector",
        )
    return names


def _not_listed(read: CantRead) -> NamespacesNotListedError:
    if read.failure is ReadFailure.FORBIDDEN:
        return NamespacesNotListedError(
            "This login may not list namespaces",
            "so doctor cannot learn which namespaces to check",
            "name them with --namespaces a,b,c, or ask an administrator for list on "
            "namespaces (cluster-wide)",
        )
    error = NamespacesNotListedError(
        "Couldn't list the namespaces", read.reason, "check the connection, then retry"
    )
    error.cant = read
    return error
