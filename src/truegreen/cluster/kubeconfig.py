"""Finding and loading connection settings with kubectl's precedence rules."""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError

from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError

_IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
_MERGED_SECTIONS = ("clusters", "contexts", "users")


@dataclass(frozen=True)
class ResolvedConnection:
    """A usable connection: the lightkube configuration plus the namespace to work in."""

    config: Any  # lightkube SingleConfig; typed loosely because lightkube is untyped for mypy
    namespace: str
    server: str
    source: str
    """Where the settings came from, for messages: a kubeconfig path or "in-cluster"."""


def resolve(settings: ConnectionSettings) -> ResolvedConnection:
    """Resolve the settings to one cluster, user and namespace; ConnectionSetupError if unusable."""
    paths = _kubeconfig_paths(settings.kubeconfig)
    if not paths:
        return _in_cluster(settings)
    merged = _merge([(path, _load_file(path)) for path in paths])
    if settings.insecure_skip_tls_verify:
        for entry in merged.get("clusters", []):
            cluster = entry["cluster"]
            # lightkube honours the skip only when no certificate authority is configured
            cluster.pop("certificate-authority", None)
            cluster.pop("certificate-authority-data", None)
            cluster["insecure-skip-tls-verify"] = True
    source = str(paths[0])
    try:
        kubeconfig = KubeConfig.from_dict(merged, fname=paths[0])
    except (ConfigError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise ConnectionSetupError(
            f"kubeconfig {source} is not usable",
            f"its clusters, users or contexts are incomplete ({type(error).__name__})",
            "check the file, or pass another with --kubeconfig",
        ) from None
    contexts = sorted(
        c.get("name", "") for c in merged.get("contexts") or [] if isinstance(c, dict)
    )
    if settings.context is not None and settings.context not in contexts:
        raise ConnectionSetupError(
            f"context {settings.context!r} is not in kubeconfig {source}",
            f"it has {', '.join(contexts) or 'no contexts'}",
            "pass one of those with --context",
        )
    if settings.context is None and not merged.get("current-context"):
        raise ConnectionSetupError(
            f"kubeconfig {source} names no current context",
            f"it has {', '.join(contexts) or 'no contexts'}",
            "pass one with --context",
        )
    try:
        single: SingleConfig = kubeconfig.get(context_name=settings.context)
    except (ConfigError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise ConnectionSetupError(
            f"kubeconfig {source} is not usable",
            f"the context's cluster or user is missing ({type(error).__name__})",
            "check the file, or pass another with --kubeconfig",
        ) from None
    server = getattr(getattr(single, "cluster", None), "server", None)
    if not server:
        raise ConnectionSetupError(
            f"kubeconfig {source} names no server address for this context",
            todo="check the file's clusters section",
        )
    namespace = settings.namespace or getattr(single, "namespace", None) or "default"
    return ResolvedConnection(single, namespace, str(server), source)


def _kubeconfig_paths(explicit: Path | None) -> list[Path]:
    """The kubeconfig files to merge, in kubectl's precedence order."""
    if explicit is not None:
        return [explicit]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        listed = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
        existing = [p for p in listed if p.exists()]
        if existing:
            return existing
        raise ConnectionSetupError(
            "KUBECONFIG names no existing file",
            f"it is {env!r}",
            "fix KUBECONFIG or pass --kubeconfig",
        )
    default = Path.home() / ".kube" / "config"
    return [default] if default.exists() else []


def _load_file(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConnectionSetupError(
            f"cannot read kubeconfig {path}",
            error.strerror or type(error).__name__,
            "check the path, or pass another with --kubeconfig",
        ) from None
    except UnicodeDecodeError:
        raise ConnectionSetupError(
            f"kubeconfig {path} is not a text file", todo="pass a kubeconfig with --kubeconfig"
        ) from None
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConnectionSetupError(
            f"kubeconfig {path} is not valid YAML{where}",
            todo="fix the file, or pass another with --kubeconfig",
        ) from None
    if not isinstance(loaded, dict):
        raise ConnectionSetupError(
            f"kubeconfig {path} is not a kubeconfig",
            "it holds no clusters, users or contexts",
            "pass a kubeconfig with --kubeconfig",
        )
    return loaded


def _merge(files: list[tuple[Path, Mapping[str, Any]]]) -> dict[str, Any]:
    """Merge kubeconfig files as kubectl does: the first file to define a name wins."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    for path, content in files:
        for section in _MERGED_SECTIONS:
            entries = content.get(section) or []
            if not isinstance(entries, list):
                raise ConnectionSetupError(
                    f"kubeconfig {path} is not usable",
                    f"its {section} entry is not a list",
                    "fix the file, or pass another with --kubeconfig",
                )
            known = {e.get("name") for e in merged.setdefault(section, [])}
            for entry in entries:
                if not isinstance(entry, dict) or not isinstance(entry.get(section[:-1]), dict):
                    raise ConnectionSetupError(
                        f"kubeconfig {path} is not usable",
                        f"an entry under {section} has no {section[:-1]} settings",
                        "fix the file, or pass another with --kubeconfig",
                    )
                if entry.get("name") not in known:
                    merged[section].append(entry)
                    known.add(entry.get("name"))
        if "current-context" not in merged and content.get("current-context"):
            merged["current-context"] = content["current-context"]
    return merged


def _in_cluster(settings: ConnectionSettings) -> ResolvedConnection:
    if not (os.environ.get("KUBERNETES_SERVICE_HOST") and _IN_CLUSTER_TOKEN.exists()):
        raise ConnectionSetupError(
            "no cluster is configured",
            "there is no ~/.kube/config, KUBECONFIG is unset, and this is not running in a cluster",
            "pass --kubeconfig or set KUBECONFIG",
        )
    try:
        single = KubeConfig.from_service_account().get()
    except (ConfigError, OSError) as error:
        raise ConnectionSetupError(
            "cannot use this pod's service account", type(error).__name__
        ) from None
    namespace = settings.namespace or getattr(single, "namespace", None) or "default"
    return ResolvedConnection(single, namespace, str(single.cluster.server), "in-cluster")
