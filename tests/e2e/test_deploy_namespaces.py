"""Every kustomization in deploy/ follows `kustomize edit set namespace`: rendered under two
namespaces, the two renders differ only by the namespace, and every namespaced reference
(objects, binding subjects) names the one set.

`kustomize edit set namespace NAME` writes the kustomization's `namespace:` field
(kubernetes-sigs/kustomize, kustomize/commands/edit/set/setnamespace.go); the test writes that
field and renders with kubectl's own kustomize (`kubectl kustomize`), the one `kubectl apply -k`
uses. kustomize's namespace transformer sets a binding subject's namespace only where it is
blank or the subject is named `default` (api/filters/namespace, SetRoleBindingSubjects
`defaultOnly`), so a subject that names its namespace stays behind.
"""

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.real_parts import find

DEPLOY = Path(__file__).parents[2] / "deploy"
KUSTOMIZATIONS = sorted(p.parent.relative_to(DEPLOY) for p in DEPLOY.rglob("kustomization.yaml"))


def _render(folder: Path, namespace: str, tmp: Path) -> tuple[str, list[dict[str, Any]]]:
    copy = tmp / namespace
    shutil.copytree(DEPLOY, copy)
    kustomization = copy / folder / "kustomization.yaml"
    text, count = re.subn(
        r"(?m)^namespace: .*$", f"namespace: {namespace}", kustomization.read_text()
    )
    assert count == 1, f"precondition: {folder}/kustomization.yaml sets one namespace"
    kustomization.write_text(text)
    kubectl = find("kubectl")
    assert kubectl is not None, "kubectl is required (Debian: kubernetes-client)"
    done = subprocess.run(
        [kubectl, "kustomize", str(copy / folder)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _namespaces(objects: list[dict[str, Any]]) -> set[str]:
    """Every namespace an object or a binding's subject names."""
    found = {o["metadata"]["namespace"] for o in objects if "namespace" in o["metadata"]}
    for obj in objects:
        for subject in obj.get("subjects") or ():
            if subject.get("kind") == "ServiceAccount":
                found.add(subject.get("namespace", "<none>"))
    return found


@pytest.mark.parametrize("folder", KUSTOMIZATIONS, ids=str)
def test_every_namespaced_reference_follows_the_kustomization_s_namespace(
    folder: Path, tmp_path: Path
) -> None:
    first_text, first = _render(folder, "first-ns", tmp_path)
    second_text, second = _render(folder, "second-ns", tmp_path)
    assert _namespaces(first) == {"first-ns"}, first_text
    assert _namespaces(second) == {"second-ns"}, second_text
    assert first_text.replace("first-ns", "second-ns") == second_text


def test_every_kustomization_is_rendered() -> None:
    assert {str(k) for k in KUSTOMIZATIONS} == {
        "doctor",
        "monitor",
        "monitor/fleet",
        "monitor/prometheus-operator",
        "refresh",
    }
