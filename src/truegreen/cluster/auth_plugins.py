"""The pieces of a kubeconfig that reach outside it: credential plugins and proxies.

`exec` plugins and `auth-provider` entries yield a `CredentialSource`; `proxy-url` (and the
proxy environment variables, as kubectl honours them) yield a `Dialer`. The kubeconfig resolver
calls these two functions and knows nothing else about plugins or proxies.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from truegreen.cluster.credentials import CredentialSource
from truegreen.errors import ConnectionSetupError
from truegreen.http.dial import Dialer


def plugin_credentials(
    user_name: str, user: Mapping[str, Any], *, base_dir: Path, cluster: Mapping[str, Any]
) -> CredentialSource:
    """The credential source of a user entry with `exec` or `auth-provider`.

    `base_dir` is the folder of the kubeconfig file that defined the user (relative paths
    resolve against it); `cluster` is the context's cluster entry (for provideClusterInfo).
    """
    kind = "exec" if "exec" in user else "auth-provider"
    raise ConnectionSetupError(
        f"the kubeconfig user {user_name!r} logs in with {kind}",
        "truegreen cannot run credential plugins yet",
        "use a token or client certificate user",
    )


def dialer_for(server: str, proxy_url: str | None) -> Dialer | None:
    """How to reach `server`: through `proxy_url` when set, else None (directly)."""
    if proxy_url:
        raise ConnectionSetupError(
            f"the kubeconfig names the proxy {proxy_url!r}",
            "truegreen cannot connect through a proxy yet",
            "connect without one",
        )
    return None
