"""The real kubectl against the fake API server: the fake is faithful, not just convenient.

kubectl runs discovery before anything else and applies its own expectations to lists and
patches, so these fail when discovery, selectors, pagination or patch semantics drift.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.fake_apiserver import FakeApiServer

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")


@pytest.fixture
def kubectl(kubeconfig: Path) -> "Kubectl":
    assert KUBECTL is not None, (
        "kubectl is required (Debian: kubernetes-client); .ci/run installs it"
    )
    return Kubectl(kubeconfig)


class Kubectl:
    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        return subprocess.run(
            [KUBECTL, "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )


def _pod(name: str, app: str, phase: str = "Running") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "train", "labels": {"app": app}},
        "status": {"phase": phase},
    }


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "manager", "namespace": "train"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "manager"}},
        "template": {
            "metadata": {"labels": {"app": "manager"}},
            "spec": {"containers": [{"name": "api", "image": "registry.example/manager:1"}]},
        },
    },
}


def test_list_with_label_selector_and_small_pages(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    fake_api.add(*[_pod(f"p{i}", "a" if i % 2 else "b") for i in range(5)])
    result = kubectl("get", "pods", "-l", "app in (a)", "-o", "name", "--chunk-size=1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["pod/p1", "pod/p3"]
    pages = fake_api.requests("GET", r"^/api/v1/namespaces/train/pods$")
    # Two matches in pages of one: kubectl follows the continue token to the end.
    assert [r.query.get("limit") for r in pages] == ["1", "1"]
    assert "continue" in pages[1].query


def test_field_selector_excludes(fake_api: FakeApiServer, kubectl: Kubectl) -> None:
    fake_api.add(_pod("run", "a"), _pod("done", "a", "Succeeded"))
    result = kubectl("get", "pods", "--field-selector", "status.phase!=Succeeded", "-o", "name")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["pod/run"]


def test_all_namespaces_list_uses_cluster_path(fake_api: FakeApiServer, kubectl: Kubectl) -> None:
    other = _pod("elsewhere", "a")
    other["metadata"] = {"name": "elsewhere", "namespace": "other"}
    fake_api.add(_pod("here", "a"), other)
    result = kubectl("get", "pods", "-A", "-o", "json")
    assert result.returncode == 0, result.stderr
    names = sorted(item["metadata"]["name"] for item in json.loads(result.stdout)["items"])
    assert names == ["elsewhere", "here"]
    assert fake_api.requests("GET", r"^/api/v1/pods$"), "expected a cluster-wide list"


def test_get_missing_object_is_not_found(fake_api: FakeApiServer, kubectl: Kubectl) -> None:
    fake_api.add(_pod("present", "a"))
    result = kubectl("get", "pod", "absent")
    assert result.returncode == 1
    assert 'pods "absent" not found' in result.stderr


def test_rollout_restart_bumps_generation(fake_api: FakeApiServer, kubectl: Kubectl) -> None:
    fake_api.add(DEPLOYMENT)
    result = kubectl("rollout", "restart", "deployment/manager")
    assert result.returncode == 0, result.stderr
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    template_annotations = stored["spec"]["template"]["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/restartedAt" in template_annotations
    assert stored["metadata"]["generation"] == 2
    assert (
        stored["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/manager:1"
    )


def test_annotate_bumps_deployment_generation(fake_api: FakeApiServer, kubectl: Kubectl) -> None:
    fake_api.add(DEPLOYMENT)
    result = kubectl("annotate", "deployment", "manager", "truegreen.io/x=y")
    assert result.returncode == 0, result.stderr
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    assert stored["metadata"]["annotations"] == {"truegreen.io/x": "y"}
    # The real Deployment registry bumps generation for annotation changes too.
    assert stored["metadata"]["generation"] == 2


def test_patch_with_stale_resource_version_conflicts(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    fake_api.add(DEPLOYMENT)
    stale = '{"metadata":{"resourceVersion":"1"},"spec":{"replicas":3}}'
    result = kubectl("patch", "deployment", "manager", "--type", "merge", "-p", stale)
    assert result.returncode == 1
    assert "the object has been modified" in result.stderr
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    assert stored["spec"]["replicas"] == 1
