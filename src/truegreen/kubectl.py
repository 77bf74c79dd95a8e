"""kubectl commands a remedy can name, written so that pasted they reach what doctor read.

A command carries `--kubeconfig`, `--context`, `--insecure-skip-tls-verify`, `--as`,
`--as-group`, `--as-uid` and `-n` only when doctor was told them: without them kubectl falls back
exactly as doctor did (the current context, its namespace, the kubeconfig user's own login and
impersonation). kubectl takes each of these flags (k8s.io/cli-runtime
pkg/genericclioptions/config_flags.go). `--request-timeout` is left out: it changes how long a
command waits, not what it reaches. Each command comes back in backticks, the one place
plain-words checks allow Kubernetes words.
"""

import shlex

from msgspec import Struct

from truegreen.cluster.settings import ActAs, ConnectionSettings


class Kubectl(Struct, frozen=True):
    """The flags that point kubectl at the cluster and namespace doctor checked."""

    kubeconfig: str | None = None
    """`--kubeconfig`, when doctor was given one."""
    context: str | None = None
    """`--context`, when doctor was given one."""
    namespace: str | None = None
    """`-n`, when the namespace is not the one kubectl would pick by itself."""
    insecure_skip_tls_verify: bool = False
    """`--insecure-skip-tls-verify`, when doctor was given it: without it a pasted command fails
    the certificate check doctor skipped."""
    act_as: ActAs = ActAs()
    """`--as`, `--as-group` (once per group), `--as-uid`, as doctor was given them: without them
    a pasted command acts as the kubeconfig's user, not whom doctor read as."""

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
        if self.insecure_skip_tls_verify:
            words.append("--insecure-skip-tls-verify")
        if self.act_as.user:
            words += ["--as", self.act_as.user]
        for group in self.act_as.groups:
            words += ["--as-group", group]
        if self.act_as.uid:
            words += ["--as-uid", self.act_as.uid]
        return words


def for_connection(connection: ConnectionSettings) -> Kubectl:
    """kubectl flags that reach what a command reads: only the ones the operator gave, so that
    kubectl falls back (current context, its namespace) exactly as truegreen did."""
    return Kubectl(
        str(connection.kubeconfig) if connection.kubeconfig else None,
        connection.context,
        connection.namespace,
        insecure_skip_tls_verify=connection.insecure_skip_tls_verify,
        act_as=connection.act_as,
    )


def truegreen_command(*args: str) -> str:
    """`truegreen ARGS` in backticks, quoted for a shell."""
    return _quoted(["truegreen", *args])


def _quoted(words: list[str]) -> str:
    return "`" + shlex.join(words) + "`"
