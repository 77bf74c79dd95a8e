"""kubectl is the oracle for how the fake serves Kueue's two versions: discovery lists both,
a plain resource name resolves to the preferred one (v1beta2), and an object stored at one
version is not seen at the other (the fake does not convert; tests store what doctor reads)."""

from pathlib import Path

import pytest

from tests.support import kueue_objects as kq
from tests.support.fake_apiserver import FakeApiServer
from tests.support.kubectl import kubectl

pytestmark = pytest.mark.kubectl


def test_kubectl_sees_both_versions_and_prefers_v1beta2(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.install("kueue.x-k8s.io")
    fake_api.add(kq.cluster_queue("new", [(["cpu"], [("f", {"cpu": "1"})])]))
    fake_api.add(kq.cluster_queue("old", [(["cpu"], [("f", {"cpu": "1"})])], version=kq.V1BETA1))
    versions = kubectl(kubeconfig, "api-versions")
    assert versions.returncode == 0, versions.stderr
    assert {"kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"} <= set(versions.stdout.split())
    preferred = kubectl(kubeconfig, "get", "clusterqueues", "-o", "name")
    assert preferred.returncode == 0, preferred.stderr
    assert preferred.stdout.split() == ["clusterqueue.kueue.x-k8s.io/new"]
    old = kubectl(kubeconfig, "get", "clusterqueues.v1beta1.kueue.x-k8s.io", "-o", "name")
    assert old.returncode == 0, old.stderr
    assert old.stdout.split() == ["clusterqueue.kueue.x-k8s.io/old"]


def test_kubectl_finds_no_kueue_where_it_is_not_installed(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    result = kubectl(kubeconfig, "get", "clusterqueues")
    assert result.returncode == 1
    assert 'the server doesn\'t have a resource type "clusterqueues"' in result.stderr
