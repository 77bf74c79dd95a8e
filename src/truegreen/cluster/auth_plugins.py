"""Credential plugins named by a kubeconfig: `exec` plugins and `auth-provider` entries.

Each yields a `CredentialSource`. The kubeconfig resolver calls `plugin_credentials` and knows
nothing else about plugins.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from truegreen.cluster.credentials import CredentialSource
from truegreen.errors import ConnectionSetupError


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
