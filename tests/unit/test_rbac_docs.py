"""docs/rbac.md's tables are the roles in deploy/doctor: each grant a table lists is in the
role's YAML, and each grant the YAML gives is in its table, so the page cannot drift from the
files it documents (the grants themselves are derived from requests in
tests/scenario/test_doctor_scenarios.py,
`test_the_doctor_roles_grant_exactly_what_doctor_and_snapshot_read`).

A grant is as an RBAC PolicyRule names it (k8s.io/api/rbac/v1 `PolicyRule`: apiGroups,
resources, verbs, resourceNames), one (group, resource, verb, names) per combination.
"""

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "rbac.md"
ROLES = ROOT / "deploy" / "doctor"

Grant = tuple[str, str, str, frozenset[str]]
"""(API group, resource, verb, resourceNames: empty for every object)."""

_ROLE_LINE = re.compile(r"^`deploy/doctor/(?P<file>[-a-z]+\.yaml)` — ")
_TICKED = re.compile(r"`([^`]*)`")
_ASIDE = re.compile(r"\s*\([^)]*\)")
"""A parenthesis in a cell, `(all namespaces)`: words about the grant, not part of it."""


def _yaml_grants(path: Path) -> set[Grant]:
    role: dict[str, Any] = yaml.safe_load(path.read_text())
    return {
        (group, resource, verb, frozenset(rule.get("resourceNames") or ()))
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def _groups(cell: str) -> list[str]:
    """`` `apps` `` or `` `""` `` (the core group), several separated by commas."""
    groups = [g.strip('"') for g in _TICKED.findall(cell)]
    assert groups, f"no API group in {cell!r}"
    return groups


def _resources(cell: str) -> list[tuple[str, frozenset[str]]]:
    """`deployments, statefulsets`; a resource's object names follow it ticked:
    ``configmaps `a`, `b` `` is configmaps limited to the names a and b."""
    resources: list[tuple[str, list[str]]] = []
    for item in _ASIDE.sub("", cell).split(","):
        words = item.split()
        if words and not words[0].startswith("`"):
            resources.append((words[0], []))
            words = words[1:]
        assert resources, f"an object name before any resource in {cell!r}"
        resources[-1][1].extend(w.strip("`") for w in words)
    return [(resource, frozenset(names)) for resource, names in resources]


def _verbs(cell: str) -> list[str]:
    return [v.strip() for v in _ASIDE.sub("", cell).split(",")]


def page_tables(text: str) -> dict[str, set[Grant]]:
    """Per role file the page introduces (`` `deploy/doctor/role.yaml` — a **Role** ``), the
    grants of the table that follows it."""
    tables: dict[str, set[Grant]] = {}
    current: str | None = None
    for line in text.splitlines():
        introduced = _ROLE_LINE.match(line)
        if introduced:
            current = introduced["file"]
            assert current not in tables, f"{current} has two tables"
            continue
        if not line.startswith("|"):
            if current in tables:
                current = None  # its table ended: later tables belong to no role
            continue
        assert current is not None, f"a table row no role file introduces: {line!r}"
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "API group" or set(cells[0]) <= {"-"}:
            continue
        grants = tables.setdefault(current, set())
        for group in _groups(cells[0]):
            for resource, names in _resources(cells[1]):
                for verb in _verbs(cells[2]):
                    grants.add((group, resource, verb, names))
    return tables


def test_the_parser_reads_a_row_as_rbac_does() -> None:
    """A precondition of the test below: a table row becomes the grants its YAML rule gives."""
    row = (
        "`deploy/doctor/x.yaml` — a **ClusterRole**:\n\n"
        "| API group | resources | verbs | why |\n|---|---|---|---|\n"
        '| `""`, `apps` | configmaps `a`, `b`, pods (all namespaces) | get, list (by name) | w |\n'
    )
    assert page_tables(row) == {
        "x.yaml": {
            (group, resource, verb, names)
            for group in ("", "apps")
            for resource, names in (("configmaps", frozenset({"a", "b"})), ("pods", frozenset()))
            for verb in ("get", "list")
        }
    }


def _said(grants: set[Grant]) -> list[str]:
    """`verb resource.group [names]`, sorted: a readable failure message."""
    return sorted(
        f"{verb} {resource}{'.' + group if group else ''}" + (f" {sorted(names)}" if names else "")
        for group, resource, verb, names in grants
    )


def test_every_doctor_role_has_a_table_on_the_page() -> None:
    tables = page_tables(PAGE.read_text())
    roles = {p.name for p in ROLES.glob("*.yaml") if p.name != "kustomization.yaml"}
    assert set(tables) == roles


@pytest.mark.parametrize(
    "role", sorted(p.name for p in ROLES.glob("*.yaml") if p.name != "kustomization.yaml")
)
def test_the_page_s_table_grants_exactly_what_the_role_grants(role: str) -> None:
    table = page_tables(PAGE.read_text()).get(role, set())
    shipped = _yaml_grants(ROLES / role)
    assert _said(shipped - table) == [], f"{role} grants these; docs/rbac.md's table omits them"
    assert _said(table - shipped) == [], f"docs/rbac.md's table lists these; {role} lacks them"
