"""How to reach a cluster, resolved the way kubectl resolves it."""

from collections.abc import Callable
from pathlib import Path

from msgspec import Struct


class ActAs(Struct, frozen=True):
    """`--as`, `--as-uid` and `--as-group`: whom requests act as. Each one given replaces the
    kubeconfig user's own `as`, `as-uid` or `as-groups`, as kubectl's flags do."""

    user: str | None = None
    uid: str | None = None
    groups: tuple[str, ...] = ()


class ConnectionSettings(Struct, frozen=True):
    """What the operator said about the connection; unset fields fall back like kubectl's."""

    kubeconfig: Path | None = None
    """`--kubeconfig`; else `$KUBECONFIG`, else `~/.kube/config`, else the in-cluster account."""
    context: str | None = None
    """`--context`; else the kubeconfig's current context."""
    namespace: str | None = None
    """`-n`; else the context's namespace, else `default`."""
    request_timeout: float = 10.0
    """Seconds to wait for any one API request."""
    insecure_skip_tls_verify: bool = False
    """`--insecure-skip-tls-verify`: skip verifying the server certificate (prints a warning)."""
    on_warning: Callable[[str], None] | None = None
    """Told a one-line warning about the connection (certificate not verified), if given."""
    act_as: ActAs = ActAs()
    """`--as`, `--as-uid`, `--as-group`."""
