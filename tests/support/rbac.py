"""Least privilege, measured: the RBAC grants a run used (from the fake server's log) and the
grants a Role or ClusterRole in deploy/ gives, in one comparable form."""

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.support.fake_apiserver import RequestRecord

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
Grant = tuple[str, str, str]
"""(API group, resource, verb), as an RBAC rule names them."""


def used(
    requests: Iterable[RequestRecord], namespace: str | None = None
) -> tuple[set[Grant], set[Grant]]:
    """The grants the requests needed: (inside a namespace, cluster-wide).

    With `namespace`, a request inside any other namespace needs a ClusterRole too. A get of
    the namespace object itself is authorized inside that namespace (RequestInfo sets the
    namespace to the name: apiserver/pkg/endpoints/request/requestinfo.go). A subresource is
    its own resource to RBAC: `pods/log` (the same file: `Subresource`). Discovery (`/apis`) is
    a non-resource URL every authenticated user may get (the system:discovery ClusterRole,
    plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go): it needs no grant."""
    namespaced: set[Grant] = set()
    cluster: set[Grant] = set()
    for request in requests:
        parts = [p for p in request.path.split("/") if p]
        if parts == ["apis"]:
            continue
        group = "" if parts[0] == "api" else parts[1]
        rest = parts[2:] if parts[0] == "api" else parts[3:]
        inside = rest[:1] == ["namespaces"] and len(rest) > 1  # `/namespaces` alone: the list
        where = rest[1] if inside else None
        if inside and len(rest) > 2:
            rest = rest[2:]
        resource, named = rest[0], len(rest) > 1
        if len(rest) > 2:
            resource = f"{rest[0]}/{rest[2]}"
        verb = {"PATCH": "patch", "POST": "create", "GET": "get" if named else "list"}[
            request.method
        ]
        elsewhere = namespace is not None and where != namespace
        (namespaced if inside and not elsewhere else cluster).add((group, resource, verb))
    return namespaced, cluster


def granted(path: str) -> set[Grant]:
    """Every (group, resource, verb) the Role or ClusterRole at deploy/`path` grants."""
    role: Mapping[str, Any] = yaml.safe_load((DEPLOY / path).read_text())
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
