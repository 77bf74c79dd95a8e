"""kubectl commands a remedy can name, written so that pasted they reach what doctor read.

A command carries `--kubeconfig`, `--context` and `-n` only when doctor was told them: without
them kubectl falls back exactly as doctor did (the current context, its namespace). Each command
comes back in backticks, the one place plain-words checks allow Kubernetes words.
"""

import shlex

from msgspec import Struct

from truegreen.cluster.settings import ConnectionSettings


class Kubectl(Struct, frozen=True):
    """The flags that point kubectl at the cluster and namespace doctor checked."""

    kubeconfig: str | None = None
    """`--kubeconfig`, when doctor was given one."""
    context: str | None = None
    """`--context`, when doctor was given one."""
    namespace: str | None = None
    """`-n`, when the namespace is not the one kubectl would pick by itself."""

    def cluster(self, *args: str) -> str:
        """`kubectl [--kubeconfig K] [--context C] ARGS` for a cluster-wide object."""
        return _quoted(["kubectl", *self._connection(), *args])

    def here(self, *args: str) -> str:
        """`kubectl [...] [-n NAMESPACE] ARGS` for an object of the checked namespace."""
        return _quoted(["kubectl", *self.flags(), *args])

    def elsewhere(self, namespace: str, *args: str) -> str:
        """`kubectl [...] -n NAMESPACE ARGS` for an object of another namespace."""
        return _quoted(["kubectl", *self._connection(), "-n", namespace, *args])

    def flags(self) -> list[str]:
        """The flags themselves, which truegreen takes too (`--context C -n NS`)."""
        return [*self._connection(), *(["-n", self.namespace] if self.namespace else [])]

    def _connection(self) -> list[str]:
        words = []
        if self.kubeconfig:
            words += ["--kubeconfig", self.kubeconfig]
        if self.context:
            words += ["--context", self.context]
        return words


def for_connection(connection: ConnectionSettings) -> Kubectl:
    """kubectl flags that reach what a command reads: only the ones the operator gave, so that
    kubectl falls back (current context, its namespace) exactly as truegreen did."""
    return Kubectl(
        str(connection.kubeconfig) if connection.kubeconfig else None,
        connection.context,
        connection.namespace,
    )


def truegreen_command(*args: str) -> str:
    """`truegreen ARGS` in backticks, quoted for a shell."""
    return _quoted(["truegreen", *args])


def _quoted(words: list[str]) -> str:
    return "`" + shlex.join(words) + "`"
