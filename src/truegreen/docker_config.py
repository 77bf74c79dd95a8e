"""One entry of a registry login (`auths` of a `.dockerconfigjson`, or a `.dockercfg`) as the
kubelet reads it: kubernetes/kubernetes pkg/credentialprovider/config.go (v1.33).

- `DockerConfigEntry.UnmarshalJSON` reads `username`, `password`, `email` and `auth` with
  encoding/json, which matches member names in any case and refuses a value that is neither
  text nor null; a non-empty `auth`, decoded by `decodeDockerConfigFieldAuth`, then replaces the
  user name and password, whatever they said.
- `decodeDockerConfigFieldAuth`: base64.StdEncoding (padded) when the field, trimmed of white
  space, ends in `=`, else base64.RawStdEncoding (unpadded); the decoded text must hold a `:`.
- The login itself: a `.dockerconfigjson` is a `DockerConfigJSON`, whose `auths` member (any
  case) holds the entries; a `.dockercfg` is the entries. `null` for either, or a missing
  `auths`, is a login of no entries; any other value that is not a JSON object fails.
- An entry that fails either step fails json.Unmarshal of the whole login, whichever registry
  it is for: pkg/credentialprovider/secrets/secrets.go (MakeDockerKeyring) returns the error,
  and pkg/kubelet/kuberuntime/kuberuntime_image.go (PullImage) fails every image pull of a pod
  that names the login.

Pure; never raises on a hostile entry but EntryError, whose message names no value.
"""

import base64
from collections.abc import Mapping

from msgspec import Struct

_FIELDS = frozenset({"username", "password", "email", "auth"})
DOCKER_CONFIG_JSON = ".dockerconfigjson"
"""The data key of a `kubernetes.io/dockerconfigjson` secret (its `.dockercfg` twin holds the
entries at the top)."""
LOGIN_KEYS = {
    "kubernetes.io/dockerconfigjson": DOCKER_CONFIG_JSON,
    "kubernetes.io/dockercfg": ".dockercfg",
}
"""The login types the kubelet reads, and the one key it reads of each
(pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring)."""


class EntryError(ValueError):
    """An entry the kubelet cannot read. The message says what is wrong, never a value."""


class EntryLogin(Struct, frozen=True):
    """The user name and password the kubelet reads from one entry. `repr` hides both."""

    username: str
    password: str
    from_auth: bool
    """Read from a non-empty `auth` (which then replaced `username` and `password`)."""

    def __repr__(self) -> str:
        return f"EntryLogin(username=<hidden>, password=<hidden>, from_auth={self.from_auth})"


def _member(name: str) -> str:
    """A member name as encoding/json compares it with a field's: any case (its fold.go folds
    the long s, U+017F, to `s` too; the Kelvin sign, the other non-ASCII letter that folds to ASCII,
    lowers to `k` here)."""
    return name.lower().replace("\u017f", "s")


def read_entry(entry: object) -> EntryLogin | None:
    """The user name and password the kubelet reads from one entry (empty ones where it holds
    none); None where they are bytes that are not UTF-8, which doctor cannot send. Raises
    EntryError where the kubelet's reading fails."""
    if entry is None:  # encoding/json hands UnmarshalJSON `null`, which reads as nothing
        return EntryLogin("", "", from_auth=False)
    if not isinstance(entry, dict):
        raise EntryError("is not a JSON object")
    fields: dict[str, str] = {}
    for key, value in entry.items():
        name = _member(str(key))
        if name not in _FIELDS or value is None:  # null leaves a field as it was
            continue
        if not isinstance(value, str):
            raise EntryError(f"its {name} is not text")
        fields[name] = value
    auth = fields.get("auth", "")
    if not auth:
        return EntryLogin(fields.get("username", ""), fields.get("password", ""), from_auth=False)
    decoded = go_base64(auth)
    if decoded is None:
        raise EntryError("its auth is not base64")
    username, colon, password = decoded.partition(b":")
    if not colon:
        raise EntryError("its auth is not base64 of a user name, ':' and a password")
    try:
        return EntryLogin(username.decode(), password.decode(), from_auth=True)
    except UnicodeDecodeError:
        return None


def login_entries(key: str, parsed: object) -> dict[str, object]:
    """The entries of a login, by registry as written, as json.Unmarshal fills the kubelet's
    `DockerConfigJSON` (`key` `.dockerconfigjson`) or `DockerConfig` (`.dockercfg`) from the
    decoded JSON `parsed`: `auths` matched in any case, each member so named in turn (`null`
    empties the entries, an object adds to them); nothing where the login or its `auths` is
    `null` or missing. Raises EntryError where the kubelet's json.Unmarshal fails."""
    if parsed is None:
        return {}
    if not isinstance(parsed, dict):
        raise EntryError("is not a JSON object")
    if key != DOCKER_CONFIG_JSON:
        return {str(host): entry for host, entry in parsed.items()}
    entries: dict[str, object] = {}
    for name, value in parsed.items():
        if _member(str(name)) != "auths":
            continue
        if value is None:
            entries = {}
        elif isinstance(value, dict):
            entries.update((str(host), entry) for host, entry in value.items())
        else:
            raise EntryError("its auths is not a JSON object")
    return entries


def go_base64(field: str) -> bytes | None:
    """`field` decoded as decodeDockerConfigFieldAuth decodes it, None where it fails: Go's
    StdEncoding when the field, trimmed of white space, ends in `=`, else RawStdEncoding. Both
    skip `\\r` and `\\n` (encoding/base64) and refuse any other byte outside the alphabet; Raw
    refuses `=`; neither checks the bits past the last byte."""
    padded = field.strip().endswith("=")
    text = field.replace("\r", "").replace("\n", "")
    if padded and len(text) % 4:
        return None
    if not padded:
        if "=" in text or len(text) % 4 == 1:
            return None
        text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:  # binascii.Error, or text that is not ASCII
        return None


def login_data(secret: Mapping[str, object]) -> tuple[str, str] | None:
    """(data key, base64 value) of the login the kubelet reads from `secret`: the one key its
    type holds (`LOGIN_KEYS`); None for a secret of any other type, whatever keys it holds
    (secrets.go MakeDockerKeyring), or one whose key is empty."""
    key = LOGIN_KEYS.get(str(secret.get("type", "")))
    data = secret.get("data")
    value = data.get(key) if key is not None and isinstance(data, Mapping) else None
    return (key, value) if key is not None and isinstance(value, str) and value else None
