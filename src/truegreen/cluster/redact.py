"""Redaction by policy: no secret value leaves `cluster/`, for doctor and for snapshots alike.
The one exception is a registry login's credentials, kept below this reader for the registry
look-ups and sent to that registry alone (doctor/reads/registry_lookups.py).

The policy, listed for operators in docs/snapshot.md:
- Secrets: every `data` and `stringData` value and every annotation value. What survives is
  what the checks need: key names, whether each value is empty, and for registry logins which
  registries have credentials and which entries the kubelet cannot read.
- ConfigMaps (doctor reads cluster-autoscaler's status and YuniKorn's configuration): every
  value but those doctor reads (`status`, `*.yaml`, `service.policyGroup`), which are kept as
  written, and every `binaryData` value.
- Every object: `metadata.managedFields` and the `kubectl.kubernetes.io/last-applied-configuration`
  annotation (a second copy of everything, secrets included); the value of every `{name,
  value}` pair whose name looks secret (an env var, an HTTP probe's header) or is a cookie
  header's (`Cookie`, `Set-Cookie`: redaction/credential_headers.py); a setting's value whose key
  looks secret (`redis-password: …` in a map, an annotation `example.com/db-password`);
  the value after a command-line flag whose name looks secret, curl's `-u user:password`, and
  the password of a client's own option after that client: MySQL's `-pPASSWORD`, redis-cli's
  (valkey-cli's, keydb-cli's) `-a PASSWORD`, a MongoDB client's `-p PASSWORD` (mongosh, the
  legacy `mongo` shell, mongodump and the other Database Tools), and curl's cookie data
  (`-b NAME=VALUE`; one without `=` names a file, kept), and a registry login's `-p PASSWORD`
  (`docker login`, `podman login`, `helm registry login`…) (redaction/command_logins.py).
- Every string anywhere (log lines and event messages too; not an image reference or a
  label value that selectors match on): URL userinfo
  (`postgres://user:pass@host`), AWS access key ids and secret-key shapes, JWTs, GitHub and
  Hugging Face tokens and signed URLs' signatures (redaction/credential_shapes.py), and
  `name=value`, `name: value` and `--name value` where the name looks secret (not a Go error
  chain's own words, `token: unexpected status …`: redaction/text.py), and a cookie header's
  whole value (`Cookie: sid=…; theme=dark`).
truegreen's own annotations (`truegreen.io/…`) hold intent, never secrets, and are kept whole.

A redacted value reads `<redacted>`, so the reader knows something was there; an empty value
stays empty, because emptiness is what some checks measure. Redaction is idempotent: a
snapshot, written redacted, reads back to exactly what the live doctor saw. It never raises,
whatever shape an object has: a snapshot may be hostile.
"""

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import ClusterReader, FieldSelector, Fold
from truegreen.cluster.reads import FoldRead, GetRead, Got, KubeObject, Listed, ListRead
from truegreen.docker_config import EntryError, login_entries, read_entry
from truegreen.images import ImageReferenceError, keyring_key, parse_image
from truegreen.patterns import LazyPattern
from truegreen.redacted import REDACTED
from truegreen.redaction.command_logins import (
    Client,
    client_password_redacted,
    clients_named,
    names_registry_tool,
    takes_user,
    user_password_redacted,
)
from truegreen.redaction.credential_headers import names_cookie_header
from truegreen.redaction.text import looks_secret, redact_text, secret_flag

UNPARSABLE = "<redacted: unparsable>"
DOCKER_CONFIG_KEYS = (".dockerconfigjson", ".dockercfg")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
OWN_PREFIX = "truegreen.io/"


def redact_object(obj: KubeObject) -> dict[str, Any]:
    """A redacted copy of one object (a Secret's values too); `obj` is left as it was."""
    redacted = _walk(obj)
    assert isinstance(redacted, dict)  # _walk maps a mapping to a dict
    if obj.get("kind") == Kind.SECRET.spec.name:
        _redact_secret_values(redacted, obj)
    elif obj.get("kind") == Kind.CONFIG_MAP.spec.name:
        _keep_only_read_values(redacted, obj)
    return redacted


def _read_key(key: str) -> bool:
    """A ConfigMap key doctor reads: cluster-autoscaler's `status`, YuniKorn's
    `<policy group>.yaml` and `service.policyGroup`."""
    return key in ("status", "service.policyGroup") or key.endswith(".yaml")


def _keep_only_read_values(config_map: dict[str, Any], original: KubeObject) -> None:
    """A ConfigMap may keep anything beside what doctor reads (a key such as `ldap.bindpw`
    whose name no rule finds secret): every other value is replaced, every `binaryData` value
    too. The values doctor reads are kept as written, not searched for secret shapes: a rule
    matching inside YuniKorn's YAML (`example.com/private-gpu: 2}`) would break the document
    the queue check parses."""
    data = original.get("data")
    if isinstance(data, Mapping):
        config_map["data"] = {
            key: value if isinstance(key, str) and _read_key(key) else REDACTED
            for key, value in data.items()
        }
    binary = config_map.get("binaryData")
    if isinstance(binary, dict):
        for key in binary:
            binary[key] = _encode(REDACTED)


def redact_value(value: object) -> object:
    """Any JSON-like value (a fold's summary, an event list) redacted by the same policy."""
    return _walk(value)


def _walk(value: object) -> object:
    # What a JSON decoder makes is asked for first, by exact type: a run over many namespaces
    # redacts every object of each, and the abstract checks cost several times more.
    kind = type(value)
    if kind is str:
        return redact_text(value)  # type: ignore[arg-type]
    if kind is dict:
        walked = {
            key: _member(key, item)
            if type(key) is not str or key in _RULED_MEMBERS
            else (REDACTED if item and _names_a_secret(key) else redact_text(item))
            if type(item) is str
            else _walk(item)
            for key, item in value.items()  # type: ignore[attr-defined]
        }
        if "args" in walked and "command" in walked:
            _one_command_line(walked, value)  # type: ignore[arg-type]
        return _pair_redacted(walked, value) if "value" in walked else walked  # type: ignore[arg-type]
    if kind is list:
        return [redact_text(item) if type(item) is str else _walk(item) for item in value]  # type: ignore[attr-defined]
    if kind in _PLAIN_SCALARS:
        return value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        walked = {key: _member(key, item) for key, item in value.items()}
        if "args" in walked and "command" in walked:
            _one_command_line(walked, value)
        return _pair_redacted(walked, value) if "value" in walked else walked
    if isinstance(value, list | tuple):
        return [_walk(item) for item in value]
    return value


_PLAIN_SCALARS = frozenset({int, float, bool, type(None)})
_IMAGE_MEMBERS = frozenset({"image", "imageID"})
"""A container's image (containers, initContainers, ephemeralContainers) and the runtime's in
its status (`imageID`: `docker-pullable://repo@sha256:…`)."""
_LABEL_MAPS = frozenset({"labels", "nodeSelector", "matchLabels", "nodeLabels"})
"""Maps of label keys to values: an object's labels, a pod's node selector, a selector's, and
a Kueue ResourceFlavor's `nodeLabels` (matched against the machines' labels: knowledge/kueue.py);
a label key may read like a secret setting's name (`private-pool`), its value matched as is."""
_LABEL_TERMS = frozenset({"matchExpressions", "matchFields", "tolerations", "taints"})
"""Selector requirements (`key`, `values`), taints and tolerations (`key`, `value`)."""
_RULED_MEMBERS = frozenset(
    {"metadata", "command", "args", *_IMAGE_MEMBERS, *_LABEL_MAPS, *_LABEL_TERMS}
)
"""The members `_member` has a rule for; any other member is walked as it is."""
# apimachinery validation.go IsValidLabelValue: 63 characters at most, no `:`, `=`, `/` or
# blank, so no rule but a key's shape could match one.
_LABEL_VALUE = LazyPattern(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
# What a runtime puts before an image ID's reference (`docker-pullable://`, `docker://`).
_RUNTIME_SCHEME = LazyPattern(r"[a-z][a-z0-9+.\-]*://")


def _member(key: object, value: object) -> object:
    key = str(key)
    if key == "metadata" and isinstance(value, Mapping):
        return _metadata(value)
    if key in ("command", "args") and isinstance(value, list):
        return _arguments(value)
    if key in _IMAGE_MEMBERS and isinstance(value, str):
        return redact_image(value)
    if key in _LABEL_MAPS and isinstance(value, Mapping):
        return {name: _label_value(item) for name, item in value.items()}
    if key in _LABEL_TERMS and isinstance(value, list):
        return [_label_term(term) for term in value]
    if isinstance(value, str) and value and _names_a_secret(key):
        return REDACTED
    return _walk(value)


def _one_command_line(walked: dict[Any, Any], container: Mapping[Any, Any]) -> None:
    """A container's `command` and `args` redacted as the one argument list the runtime runs
    (k8s.io/api core/v1 Container: `args` are the entrypoint's arguments, after `command`): a
    client named in `command` (`["mysql"]`) makes its password option in `args` (`["-pX"]`)
    one, as a flag at the end of `command` does for the first of `args`. `walked` holds each
    list redacted alone; its `args` are replaced."""
    command, args = container.get("command"), container.get("args")
    if isinstance(command, list) and isinstance(args, list) and command and args:
        walked["args"] = _arguments([*command, *args])[len(command) :]


def _pair_redacted(walked: dict[Any, Any], pair: Mapping[Any, Any]) -> dict[Any, Any]:
    """A `{name, value}` pair's value replaced when its name looks secret, wherever the pair
    stands: an env var (core/v1 EnvVar) and an HTTP probe's or hook's header (core/v1
    HTTPHeader in HTTPGetAction.httpHeaders: `{name: Authorization, value: "Basic …"}`,
    `X-Api-Key`; a cookie header, `Cookie` or `Set-Cookie`: credential_headers.py) alike. An
    empty value stays empty; `walked` is the pair already walked."""
    if pair.get("value") and "name" in pair and _names_a_credential(str(pair["name"])):
        walked["value"] = REDACTED
    return walked


def _names_a_credential(name: str) -> bool:
    """Whether a pair's name says its value is a credential: a secret word, or a cookie
    header's name."""
    return looks_secret(name) or names_cookie_header(name)


@lru_cache(maxsize=4096)  # a pure answer per key: an object's keys repeat in every object
def _names_a_secret(key: str) -> bool:
    """Whether a map's key names a secret setting, its text value redacted: `redis-password`
    (KubeRay's rayStartParams, which ray-operator's pod.go convertParamMap passes as
    `--redis-password=VALUE`), `spark.ssl.keyPassword`, `DB_PASSWORD`. Not a Kubernetes
    field's name (lower camel case: `secretName`, `topologyKey`, `key` name a Secret, a label
    or an entry; they never hold one), nor a prefixed name (`example.com/private-gpu: 2` is a
    resource's amount, a Kueue flavor's resource, a device's attribute). A cookie header's name
    is one too, as `Authorization` is (a map of headers: `Cookie: sid=…`)."""
    if (key.isalnum() and key[:1].islower()) or "/" in key:
        return False
    return _names_a_credential(key)


def redact_image(text: str) -> str:
    """An image's text as the policy keeps it: a reference whole (`_is_image_reference`), any
    other text redacted as text (`https://user:pass@host/app:1` loses its userinfo)."""
    return text if _is_image_reference(text) else redact_text(text)


def _is_image_reference(text: str) -> bool:
    """Whether `text` is an image reference (a runtime's `docker-pullable://` before it or
    not): kept as written, since the image checks and the registry look-ups read it whole and
    a tag may have a key's shape (`[\\w][\\w.-]{0,127}`). A repository is lower case, so a key
    standing alone is never one; text that is no reference is redacted as text."""
    scheme = _RUNTIME_SCHEME.pattern.match(text)
    try:
        parse_image(text[scheme.end() :] if scheme else text)
    except ImageReferenceError:
        return False
    return True


def _label_value(value: object) -> object:
    """A label value as written: Kubernetes matches selectors, taints and tolerations on it by
    equality, and two values both read as `<redacted>` would match. Anything that is no label
    value is redacted as any value is."""
    if isinstance(value, str) and _LABEL_VALUE.pattern.fullmatch(value):
        return value
    return _walk(value)


def _label_term(term: object) -> object:
    """A selector requirement, a taint or a toleration, its key and values as label values."""
    if not isinstance(term, Mapping):
        return _walk(term)
    return {
        key: _label_value(value)
        if key in ("key", "value")
        else [_label_value(item) for item in value]
        if key == "values" and isinstance(value, list)
        else _walk(value)
        for key, value in term.items()
    }


def _metadata(metadata: Mapping[Any, Any]) -> dict[Any, Any]:
    kept = {key: _member(key, value) for key, value in metadata.items() if key != "annotations"}
    if "managedFields" in metadata:
        kept["managedFields"] = REDACTED
    if "annotations" in metadata:
        kept["annotations"] = _annotations(metadata["annotations"])
    return kept


def _annotations(annotations: object) -> object:
    if not isinstance(annotations, Mapping):
        return _walk(annotations)
    return {
        key: (
            value
            if str(key).startswith(OWN_PREFIX)
            else REDACTED
            if key == LAST_APPLIED or (value and _annotation_names_a_secret(str(key)))
            else _walk(value)
        )
        for key, value in annotations.items()
    }


def _annotation_names_a_secret(key: str) -> bool:
    """Whether an annotation's name (after its prefix) looks secret: `example.com/db-password`.
    Not one under Kubernetes' own prefixes (`kubernetes.io/`, `k8s.io/` and their subdomains,
    reserved for Kubernetes' components: Kubernetes docs, "Annotations", Syntax and character
    set), whose names hold a container's (`container.apparmor.security.beta.kubernetes.io/
    auth-proxy`, which Pod Security reads) and never a secret."""
    prefix, _, name = key.rpartition("/")
    if prefix in ("kubernetes.io", "k8s.io") or prefix.endswith((".kubernetes.io", ".k8s.io")):
        return False
    return looks_secret(name)


def _arguments(arguments: list[Any]) -> list[Any]:
    """Each argument's text redacted, the argument after a secret-named flag
    (`--password hunter2`) replaced whole, the password of the one after curl's `-u`
    (`admin:hunter2`), and the password of a client's own option after that client: MySQL's
    `-pPASSWORD`, redis-cli's `-a PASSWORD`, a MongoDB client's `-p PASSWORD`, curl's
    `-b NAME=VALUE`, a registry login's `-p PASSWORD` (`docker login`: redaction/
    command_logins.py)."""
    redacted: list[Any] = []
    clients: frozenset[Client] = frozenset()
    tool_before = False  # a registry tool named, whose `login` in a later item takes `-p`
    for index, argument in enumerate(arguments):
        previous = arguments[index - 1] if index else None
        if not isinstance(argument, str):
            redacted.append(_walk(argument))
            continue
        if (
            not argument.startswith("-")
            and isinstance(previous, str)
            and looks_secret(previous)  # the flag's rule needs a secret word: a quick look first
            and secret_flag().fullmatch(previous)
        ):
            redacted.append(REDACTED)
            continue
        text = argument
        if takes_user(previous) and not argument.startswith("-"):
            text = user_password_redacted(argument)
        elif clients:
            text = client_password_redacted(argument, previous, clients)
        text = redact_text(text)
        # Named by what is left: a client's name inside a secret (`password=mongo…`) is gone
        # from the item once redacted, and a second pass must find the same clients.
        clients |= clients_named(text, tool_before=tool_before)
        tool_before = tool_before or names_registry_tool(text)
        redacted.append(text)
    return redacted


def redact_arguments(arguments: Sequence[str]) -> list[str]:
    """A command line's arguments by the policy for a container's: each one's text redacted,
    and the one after a secret-named flag replaced whole."""
    return [str(argument) for argument in _arguments(list(arguments))]


def _redact_secret_values(secret: dict[str, Any], original: KubeObject) -> None:
    """Replace a Secret's values in `secret` (a copy of `original`): data, stringData, every
    annotation. Registry logins are read from the original: text rules must not touch them."""
    data = original.get("data")
    if isinstance(data, Mapping):
        secret["data"] = {
            key: (
                ""
                if not value
                else _redact_docker_config(str(key), str(value))
                if key in DOCKER_CONFIG_KEYS
                else _encode(REDACTED)
            )
            for key, value in data.items()
        }
    elif "data" in secret:
        secret["data"] = {}
    string_data = original.get("stringData")
    if isinstance(string_data, Mapping):
        secret["stringData"] = {
            key: REDACTED if value else "" for key, value in string_data.items()
        }
    elif "stringData" in secret:
        secret["stringData"] = {}
    metadata = secret.get("metadata")
    if isinstance(metadata, dict) and "annotations" in metadata:
        annotations = metadata["annotations"]
        metadata["annotations"] = (
            dict.fromkeys(annotations, REDACTED) if isinstance(annotations, Mapping) else REDACTED
        )


def _encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _entry_verdict(entry: object) -> dict[str, str]:
    """What a redacted entry keeps: `{"auth": "<redacted>"}` for one holding credentials,
    `{"auth": "<redacted: unparsable>"}` for one the kubelet cannot read (which fails the whole
    login: docker_config.py), `{}` for one holding none. An entry that is already a verdict
    stays one, so redaction stays idempotent (a live `auth` of that very text, which the
    kubelet could not decode either, reads as the verdict it spells)."""
    if isinstance(entry, Mapping) and len(entry) == 1 and entry.get("auth") in _VERDICTS:
        return {"auth": str(entry["auth"])}
    try:
        read = read_entry(entry)
    except EntryError:
        return {"auth": UNPARSABLE}
    # An empty password gives the machines nothing to send, whichever field it came from
    # (refresh/registry.py `_login`): that entry holds none. A password without a user name,
    # from `auth`, is kept as one (containerd sends it to a token service).
    if (
        read is None
        or (read.from_auth and read.password)
        or (read.username and read.password)
        or (isinstance(entry, Mapping) and entry.get("identitytoken"))
    ):
        return {"auth": REDACTED}
    return {}


_VERDICTS = (REDACTED, UNPARSABLE)


def _redact_docker_config(key: str, value: str) -> str:
    """Keep only which registries hold credentials, and which entries the kubelet cannot read;
    anything unparsable stays unparsable."""
    try:
        parsed = json.loads(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return _encode(UNPARSABLE)
    try:
        auths = login_entries(key, parsed)
    except EntryError:
        return _encode(UNPARSABLE)
    kept: dict[str, dict[str, str]] = {}
    for host, entry in auths.items():
        shown, verdict = _shown_registry(host), _entry_verdict(entry)
        # Two keys that differed only in what was taken out stay one damaged entry if either was.
        if kept.get(shown, {}).get("auth") != UNPARSABLE:
            kept[shown] = verdict
    return _encode(json.dumps({"auths": kept} if key == ".dockerconfigjson" else kept))


_UNREADABLE_REGISTRY = "<redacted: unparsable address>"
"""The key of an entry the kubelet ignores (url.Parse refuses it) whose text may hold a secret."""


def _shown_registry(host: str) -> str:
    """An entry's registry as a snapshot keeps it: as written, but a key that may carry more
    than the registry (a user name and password, a query, a fragment) as the keyring files it
    (keyring.go Add keeps only Host and path), which the kubelet's matching reads the same."""
    if not any(c in host for c in "@?#"):
        return host
    return keyring_key(host) or _UNREADABLE_REGISTRY


class RedactingReader:
    """Wraps a reader so that no secret value leaves it: every object by the policy."""

    def __init__(self, inner: ClusterReader) -> None:
        self._inner = inner

    @property
    def namespace(self) -> str:
        """The inner reader's namespace."""
        return self._inner.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The inner list, redacted."""
        read = self._inner.list(kind, namespace=namespace, labels=labels, fields=fields)
        if isinstance(read, Listed):
            return Listed(tuple(redact_object(item) for item in read.items))
        return read

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The inner fold: a fold keeps only the summary it builds, redacted by its own view."""
        return self._inner.fold(kind, fold, namespace=namespace, fields=fields)

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """The inner get, redacted."""
        read = self._inner.get(kind, name, namespace=namespace)
        if isinstance(read, Got):
            return Got(redact_object(read.obj))
        return read
