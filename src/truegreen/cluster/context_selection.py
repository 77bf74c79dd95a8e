"""Which clusters a run checks: `--contexts a,b` or `--all-contexts`, by kubeconfig context.

Each context is reached with its own cluster, login, proxy and namespace exactly as
`--context NAME` reaches it (cluster/kubeconfig.py `resolve`); a name the kubeconfig lacks is
bad usage (64), refused before any cluster is asked, as `--context` refuses it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from msgspec import Struct

from truegreen.errors import UsageError

if TYPE_CHECKING:
    import argparse

MAX_CONTEXTS = 100
"""Clusters one run checks at most."""


class ContextSelection(Struct, frozen=True):
    """The contexts the operator asked for: named ones, or every one (`every`)."""

    names: tuple[str, ...] = ()
    every: bool = False
    noun: ClassVar[str] = "cluster"
    """What the selection names many of, for lines that refuse it."""
    one_flag: ClassVar[str] = "--context"
    """The flag that names just one instead, for remedies."""

    @property
    def many(self) -> bool:
        """Whether the run is over clusters (a cluster column), not one."""
        return self.every or bool(self.names)

    def flag(self) -> str:
        """The flag the operator used, for lines that name it."""
        return "--all-contexts" if self.every else "--contexts"


def add_context_flags(parser: argparse.ArgumentParser) -> None:
    """`--contexts` and `--all-contexts` (`--context` is the connection's own flag)."""
    parser.add_argument(
        "--contexts",
        metavar="A,B",
        help="Check the clusters of these kubeconfig contexts in one run, each with its own "
        "login and proxy, a few at a time.",
    )
    parser.add_argument(
        "--all-contexts",
        action="store_true",
        help="Check the cluster of every kubeconfig context in one run.",
    )


def contexts_from_flags(
    context: str | None, contexts: str | None, all_contexts: bool
) -> ContextSelection:
    """The selection the flags ask for; UsageError (64) for two of them at once."""
    given = [
        flag
        for flag, value in (
            ("--context", context is not None),
            ("--contexts", contexts is not None),
            ("--all-contexts", all_contexts),
        )
        if value
    ]
    if len(given) > 1:
        raise UsageError(
            f"{' and '.join(given)} cannot be used together",
            todo="choose one way to name the clusters",
        )
    if all_contexts:
        return ContextSelection(every=True)
    if contexts is None:
        return ContextSelection()
    names = tuple(dict.fromkeys(n.strip() for n in contexts.split(",") if n.strip()))
    if not names:
        raise UsageError("--contexts names no context", todo="give --contexts a,b")
    return ContextSelection(names)


def resolve_contexts(selection: ContextSelection, kubeconfig: Path | None) -> tuple[str, ...]:
    """The contexts to check: each named one, which the kubeconfig must have (UsageError
    otherwise, naming those it has), or all of them, sorted."""
    from truegreen.cluster.kubeconfig import context_names

    source, _, known = context_names(kubeconfig)
    if selection.every:
        if not known:
            raise UsageError(f"{source} has no contexts", todo="add one, or pass one")
        chosen = known
    else:
        missing = [name for name in selection.names if name not in known]
        if missing:
            raise UsageError(
                f"context {missing[0]!r} is not in {source}",
                f"it has {', '.join(known) or 'no contexts'}",
                "pass those with --contexts",
            )
        chosen = selection.names
    if len(chosen) > MAX_CONTEXTS:
        raise UsageError(
            f"{selection.flag()} names {len(chosen)} clusters",
            f"doctor checks at most {MAX_CONTEXTS} in one run",
            "name fewer with --contexts",
        )
    return chosen
