"""Credential plugins named by a kubeconfig: `exec` plugins and `auth-provider` entries.

Each yields a `CredentialSource`. The kubeconfig resolver calls `plugin_credentials` and knows
nothing else about plugins.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from truegreen.cluster.credentials import CredentialSource
from truegreen.cluster.exec_plugin import ExecCredentialSource, parse_exec
from truegreen.cluster.oidc import OidcLogin
from truegreen.cluster.plugin_process import one_line
from truegreen.errors import ConnectionSetupError

# kubectl 1.26 removed these two (client-go `plugin/pkg/client/auth/{gcp,azure}/*_stub.go`);
# the replacement each stub names is what the operator needs to hear.
_REMOVED_PROVIDERS = {
    "gcp": "the gke-gcloud-auth-plugin credential plugin (`gcloud components install "
    "gke-gcloud-auth-plugin`)",
    "azure": "the kubelogin credential plugin (https://github.com/Azure/kubelogin)",
}


def plugin_credentials(
    user_name: str, user: Mapping[str, Any], *, base_dir: Path, cluster: Mapping[str, Any]
) -> CredentialSource:
    """The credential source of a user entry with `exec` or `auth-provider`.

    `base_dir` is the folder of the kubeconfig file that defined the user (relative paths
    resolve against it); `cluster` is the context's cluster settings (the `cluster:` mapping of
    its entry, or the whole named entry), which `provideClusterInfo` hands to the plugin.
    Raises ConnectionSetupError, with kubectl's reason, when the entry cannot be used.
    """
    exec_entry, provider = user.get("exec"), user.get("auth-provider")
    if exec_entry is not None and provider is not None:
        raise _unusable(user_name, "it names both an exec plugin and an auth-provider")
    if isinstance(exec_entry, Mapping):
        plugin = parse_exec(user_name, exec_entry, base_dir=base_dir, cluster=cluster)
        return ExecCredentialSource(plugin)
    if not isinstance(provider, Mapping):
        raise _unusable(user_name, "its exec or auth-provider section is not a mapping")
    name = provider.get("name")
    config = provider.get("config") or {}
    if name == "oidc" and isinstance(config, Mapping):
        return OidcLogin(user_name, config)
    if name in _REMOVED_PROVIDERS:
        raise ConnectionSetupError(
            f"the kubeconfig user {user_name!r} logs in with the {name} auth-provider",
            "kubectl removed it in version 1.26",
            f"Use {_REMOVED_PROVIDERS[name]} instead, then get a new kubeconfig entry",
        )
    known = one_line(str(name), limit=40)
    raise _unusable(user_name, f'no auth-provider is known by the name "{known}"')


def _unusable(user_name: str, why: str) -> ConnectionSetupError:
    return ConnectionSetupError(
        f"the kubeconfig user {user_name!r} cannot log in",
        why,
        "fix the user's entry in the kubeconfig",
    )
