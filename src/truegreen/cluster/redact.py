"""Secrets are read, used and dropped: a reader that replaces every secret value on arrival.

What survives is what the checks need and nothing more: key names, whether each value is
empty, and for registry logins which registries have credentials. Redaction is idempotent, so a
snapshot (written redacted) reads back to exactly what the live doctor saw.
"""

import base64
import binascii
import copy
import json
from collections.abc import Mapping
from typing import Any

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import ClusterReader, FieldSelector, Fold
from truegreen.cluster.reads import FoldRead, GetRead, Got, KubeObject, Listed, ListRead

REDACTED = "REDACTED"
UNPARSABLE = "REDACTED-UNPARSABLE"
DOCKER_CONFIG_KEYS = (".dockerconfigjson", ".dockercfg")
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _has_credentials(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    return bool(
        entry.get("auth")
        or entry.get("identitytoken")
        or (entry.get("username") and entry.get("password"))
    )


def _redact_docker_config(key: str, value: str) -> str:
    """Keep only which registries hold credentials; anything unparsable stays unparsable."""
    try:
        parsed = json.loads(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return _encode(UNPARSABLE)
    if not isinstance(parsed, Mapping):
        return _encode(UNPARSABLE)
    auths = parsed.get("auths") if key == ".dockerconfigjson" else parsed
    if not isinstance(auths, Mapping):
        return _encode(UNPARSABLE)
    kept = {
        str(host): ({"auth": REDACTED} if _has_credentials(entry) else {})
        for host, entry in auths.items()
    }
    return _encode(json.dumps({"auths": kept} if key == ".dockerconfigjson" else kept))


def redact_secret(secret: KubeObject) -> dict[str, Any]:
    """A copy of `secret` that holds no secret value."""
    redacted: dict[str, Any] = copy.deepcopy(dict(secret))
    redacted.pop("stringData", None)
    annotations = (redacted.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(_LAST_APPLIED, None)
    data = redacted.get("data")
    if isinstance(data, Mapping):
        redacted["data"] = {
            str(key): (
                ""
                if not value
                else _redact_docker_config(str(key), str(value))
                if key in DOCKER_CONFIG_KEYS
                else _encode(REDACTED)
            )
            for key, value in data.items()
        }
    elif data is not None:
        redacted["data"] = {}
    return redacted


class RedactingReader:
    """Wraps a reader so that no secret value leaves it."""

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
        """The inner list, secrets redacted."""
        read = self._inner.list(kind, namespace=namespace, labels=labels, fields=fields)
        if kind is Kind.SECRET and isinstance(read, Listed):
            return Listed(tuple(redact_secret(item) for item in read.items))
        return read

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The inner fold: a fold keeps only its summary, and doctor folds only pods."""
        return self._inner.fold(kind, fold, namespace=namespace, fields=fields)

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """The inner get, a secret redacted."""
        read = self._inner.get(kind, name, namespace=namespace)
        if kind is Kind.SECRET and isinstance(read, Got):
            return Got(redact_secret(read.obj))
        return read
