"""Which stored setting a container could not start without, from the kubelet's own words.

The kubelet builds a container's environment and volumes from Secrets and ConfigMaps; when one
is missing it leaves the container waiting in `CreateContainerConfigError` with the error as its
message (pkg/kubelet/kubelet_pods.go `makeEnvironmentVariables`: `couldn't find key %v in Secret
%v/%v`, `couldn't find key %v in ConfigMap %v/%v`; the object itself missing is the API's
NotFound through the kubelet's secret and configmap managers: `secret "%s" not found`,
`configmap "%s" not found`). Everything here is pure.
"""

import re
from enum import StrEnum

from msgspec import Struct

from truegreen.patterns import LazyPattern


class StoredKind(StrEnum):
    """What kind of stored setting: a Secret or a ConfigMap."""

    SECRET = "Secret"
    CONFIG_MAP = "ConfigMap"


class MissingSetting(Struct, frozen=True):
    """The stored setting a container needs and the kubelet could not find."""

    kind: StoredKind
    name: str
    key: str = ""
    """The entry of it that is missing; "" when the whole object is."""

    def words(self) -> str:
        """`the stored private settings 'db-creds'`, `the entry 'password' of …`."""
        noun = "stored private settings" if self.kind is StoredKind.SECRET else "stored settings"
        whole = f"the {noun} '{self.name}'"
        return f"the entry '{self.key}' of {whole}" if self.key else whole


_KEY = LazyPattern(
    r"couldn't find key (?P<key>\S+) in (?P<kind>Secret|ConfigMap) [^/\s]+/(?P<name>\S+)", re.I
)
_OBJECT = LazyPattern(r'(?P<kind>secrets?|configmaps?) "(?P<name>[^"]+)" not found', re.I)


def missing_setting(message: str) -> MissingSetting | None:
    """The setting the kubelet's message names; None for any other message."""
    found = _KEY.search(message)
    if found is not None:
        kind = StoredKind.SECRET if found["kind"].lower() == "secret" else StoredKind.CONFIG_MAP
        return MissingSetting(kind, found["name"], found["key"])
    found = _OBJECT.search(message)
    if found is not None:
        secret = found["kind"].lower().startswith("secret")
        return MissingSetting(StoredKind.SECRET if secret else StoredKind.CONFIG_MAP, found["name"])
    return None
