"""The real kubectl against the fake API server: the fake is faithful, not just convenient.

kubectl runs discovery before anything else and applies its own expectations to lists and
patches, so these fail when discovery, selectors, pagination or patch semantics drift. The
answers the fake imitates from kube-apiserver (see the table atop fake_apiserver.py) are read
here by kubectl, which reads a real server's the same way.
"""

import copy
import json
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.raw_http import raw_get
from tests.support.rollout import RolloutSimulator

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


def test_a_chunked_list_read_page_by_page_is_whole(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """Pages framed as kube-apiserver frames them (chunked, items split across chunks, names in
    a multi-byte script) read by kubectl, which reads a real server's."""
    names = [f"p{i:04d}" for i in range(1100)]
    pods = [_pod(name, "a") for name in names]
    for pod, name in zip(pods, names, strict=True):
        # 3000 bytes of annotation: every item is longer than Go's buffer.
        pod["metadata"] = {"name": name, "namespace": "train", "annotations": {"note": "ü" * 1500}}
    fake_api.add(*pods)
    page = raw_get(fake_api, "/api/v1/namespaces/train/pods?limit=500")
    assert page.chunks is not None, "precondition: the fake chunks a page of 500"
    result = kubectl("get", "pods", "-o", "json", "--chunk-size=500")
    assert result.returncode == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    assert [p["metadata"]["name"] for p in items] == names
    assert {p["metadata"]["annotations"]["note"] for p in items} == {"ü" * 1500}
    kubectl_pages = fake_api.requests("GET", r"^/api/v1/namespaces/train/pods$")[1:]
    assert [r.query.get("limit") for r in kubectl_pages] == ["500"] * 3


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


# -- the answers a real kube-apiserver gives, as kubectl reads them ------------------------


def _raw(server: FakeApiServer, path: str) -> tuple[int, dict[str, str], bytes]:
    """One GET on the wire: status, headers, body."""
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_list_items_come_without_kind_and_kubectl_adds_it_back(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """kubernetes#3030: only the list says DeploymentList; kubectl's printers stamp items."""
    fake_api.add(DEPLOYMENT)
    raw = kubectl("get", "--raw", "/apis/apps/v1/namespaces/train/deployments")
    listed = json.loads(raw.stdout)
    assert (listed["kind"], listed["apiVersion"]) == ("DeploymentList", "apps/v1")
    assert [sorted(item.keys() & {"kind", "apiVersion"}) for item in listed["items"]] == [[]]
    printed = json.loads(kubectl("get", "deployments", "-o", "json").stdout)
    assert [(i["kind"], i["apiVersion"]) for i in printed["items"]] == [("Deployment", "apps/v1")]
    single = json.loads(
        kubectl("get", "--raw", "/apis/apps/v1/namespaces/train/deployments/manager").stdout
    )
    assert (single["kind"], single["apiVersion"]) == ("Deployment", "apps/v1")


@pytest.mark.parametrize(
    ("resource", "selector", "refusal"),
    [
        (
            "deployments",
            "status.replicas=1",
            '"status.replicas" is not a known field selector: only "metadata.name", '
            '"metadata.namespace"',
        ),
        ("pods", "spec.foo=bar", "field label not supported: spec.foo"),
        (
            "jobs",
            "status.succeeded=1",
            'field label "status.succeeded" not supported for batchv1.Job',
        ),
        ("secrets", "data.x=1", "field label not supported: data.x"),
        ("nodes", "metadata.namespace=train", "field label not supported: metadata.namespace"),
    ],
)
def test_a_field_selector_the_kind_does_not_support_is_refused(
    fake_api: FakeApiServer, kubectl: Kubectl, resource: str, selector: str, refusal: str
) -> None:
    fake_api.add(DEPLOYMENT)
    result = kubectl("get", resource, "--field-selector", selector)
    assert result.returncode == 1
    assert result.stderr.startswith("Error from server (BadRequest): Unable to find ")
    assert result.stderr.rstrip().endswith(f": {refusal}"), result.stderr


def test_the_fields_each_registry_selects_on(fake_api: FakeApiServer, kubectl: Kubectl) -> None:
    """Values as the registries' ToSelectableFields compute them, defaults included."""
    fake_api.add(_pod("plain", "a"), _pod("done", "a", "Succeeded"))
    fake_api.add(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}},
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train-1", "namespace": "train"},
            "status": {"succeeded": 1},
        },
    )
    selected = {
        ("pods", "spec.hostNetwork=false"): ["pod/done", "pod/plain"],
        ("pods", "spec.host=,status.phase=Running"): ["pod/plain"],
        ("nodes", "spec.unschedulable=false"): ["node/n1"],
        ("jobs", "status.successful=1"): ["job.batch/train-1"],
        ("deployments", "metadata.name=manager"): [],
    }
    for (resource, selector), names in selected.items():
        result = kubectl("get", resource, "--field-selector", selector, "-o", "name")
        assert result.returncode == 0, result.stderr
        assert sorted(result.stdout.split()) == names, (resource, selector)


@pytest.mark.parametrize("fault", [Fault.TOO_MANY_REQUESTS, Fault.TOO_MANY_REQUESTS_STATUS])
def test_kubectl_waits_out_a_busy_server_as_it_would_a_real_one(
    fake_api: FakeApiServer, kubectl: Kubectl, fault: Fault
) -> None:
    """Both 429s carry Retry-After, so client-go retries them (rest/with_retry.go)."""
    fake_api.add(_pod("p0", "a"))
    fake_api.inject(fault, r"^/api/v1/namespaces/train/pods$", count=2)
    result = kubectl("get", "pods", "-o", "name")
    assert (result.returncode, result.stdout.split()) == (0, ["pod/p0"]), result.stderr
    answers = [r.status for r in fake_api.requests("GET", r"^/api/v1/namespaces/train/pods$")]
    assert answers == [429, 429, 200]


def test_a_server_that_stays_busy_is_given_up_after_client_go_s_ten_retries(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """The priority-and-fairness body is not a Status, so kubectl words it generically."""
    fake_api.inject(Fault.TOO_MANY_REQUESTS, r"^/api/v1/namespaces/train/pods$")
    result = kubectl("get", "pods")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Error from server (TooManyRequests): the server has received too many requests and "
        "has asked us to try again later (get pods)"
    )
    assert len(fake_api.requests("GET", r"^/api/v1/namespaces/train/pods$")) == 11


def test_the_two_429s_on_the_wire(fake_api: FakeApiServer) -> None:
    """maxinflight.go tooManyRequests (net/http.Error) versus an ErrorNegotiated Status."""
    fake_api.inject(Fault.TOO_MANY_REQUESTS, r"/pods$", count=1)
    status, headers, body = _raw(fake_api, "/api/v1/pods")
    assert (status, body) == (429, b"Too many requests, please try again later.\n")
    assert headers["Retry-After"] == "1"
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["X-Content-Type-Options"] == "nosniff"
    fake_api.inject(Fault.TOO_MANY_REQUESTS_STATUS, r"/pods$", count=1)
    status, headers, body = _raw(fake_api, "/api/v1/pods")
    assert (status, headers["Retry-After"], headers["Content-Type"]) == (
        429,
        "1",
        "application/json",
    )
    assert json.loads(body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "storage is (re)initializing",
        "reason": "TooManyRequests",
        "details": {"retryAfterSeconds": 1},
        "code": 429,
    }


def test_a_stale_continue_token_is_expired_and_offers_the_rest(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    fake_api.add(*[_pod(f"p{i}", "a") for i in range(3)])
    first = json.loads(kubectl("get", "--raw", "/api/v1/namespaces/train/pods?limit=1").stdout)
    assert [i["metadata"]["name"] for i in first["items"]] == ["p0"]
    fake_api.compact()
    stale = f"/api/v1/namespaces/train/pods?limit=1&continue={first['metadata']['continue']}"
    result = kubectl("get", "--raw", stale)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "Error from server (Expired): The provided continue parameter is too old to display a "
        "consistent list result. You can start a new list without the continue parameter, or "
        "use the continue token in this response to retrieve the remainder of the results."
    )
    status, _, body = _raw(fake_api, stale)
    expired = json.loads(body)
    assert (status, expired["reason"], expired["code"]) == (410, "Expired", 410)
    assert "details" not in expired
    rest = f"/api/v1/namespaces/train/pods?continue={expired['metadata']['continue']}"
    listed = json.loads(kubectl("get", "--raw", rest).stdout)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["p1", "p2"]


def test_status_bodies_name_the_object_as_the_real_server_does(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    fake_api.add(DEPLOYMENT)
    missing = kubectl("get", "deployment", "absent")
    assert (
        missing.stderr.strip()
        == 'Error from server (NotFound): deployments.apps "absent" not found'
    )
    status, _, body = _raw(fake_api, "/apis/apps/v1/namespaces/train/deployments/absent")
    assert (status, json.loads(body)["details"]) == (
        404,
        {"name": "absent", "group": "apps", "kind": "deployments"},
    )
    _, _, body = _raw(fake_api, "/api/v1/namespaces/train/pods/absent")
    assert json.loads(body)["details"] == {"name": "absent", "kind": "pods"}  # core: no group
    failed_test = '[{"op":"test","path":"/spec/replicas","value":5}]'
    invalid = kubectl("patch", "deployment", "manager", "--type", "json", "-p", failed_test)
    assert invalid.returncode == 1
    assert invalid.stderr.strip() == (
        "The request is invalid: the server rejected our request due to an error in our request"
    )


def test_kubectl_reads_a_stuck_rollout_whose_zero_counts_are_omitted(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    stuck: dict[str, Any] = copy.deepcopy(DEPLOYMENT)
    stuck["metadata"]["generation"] = 2
    stuck["status"] = {
        "observedGeneration": 2,
        "replicas": 1,
        "updatedReplicas": 0,
        "readyReplicas": 0,
        "conditions": [
            {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
        ],
    }
    fake_api.add(stuck)
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    assert stored["status"].keys() == {"observedGeneration", "replicas", "conditions"}
    result = kubectl("rollout", "status", "deployment/manager", "--timeout=5s")
    assert result.returncode == 1
    # (kubectl first warns that the fake serves no watch; its verdict is the last line.)
    last = result.stderr.strip().splitlines()[-1]
    assert last == 'error: deployment "manager" exceeded its progress deadline'


def test_kubectl_sees_the_replaced_pod_terminating_after_the_rollout_completes(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """kubectl#1628: `rollout status` is satisfied while the old pod is still Terminating."""
    fake_api.add(DEPLOYMENT)
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    simulator = RolloutSimulator(fake_api, lambda image: "sha256:" + "1" * 64, terminating_reads=9)
    fake_api.add(simulator.make_pod(stored, "manager-old"))
    simulator.remember(stored)
    assert kubectl("rollout", "restart", "deployment/manager").returncode == 0
    done = kubectl("rollout", "status", "deployment/manager", "--timeout=5s")
    assert done.stdout.strip() == 'deployment "manager" successfully rolled out', done.stderr
    described = kubectl("describe", "pod", "manager-old").stdout.splitlines()
    assert [line.split(":", 1)[1].strip() for line in described if line.startswith("Status:")] == [
        "Terminating (lasts <invalid>)"  # deletionTimestamp is the grace period's end, ahead
    ]
    assert "Termination Grace Period:  30s" in described
    assert [line.split()[-1] for line in described if "Image ID:" in line] == [
        "registry.example/manager@sha256:" + "1" * 64
    ]
    simulator.finish_terminating()
    assert kubectl("get", "pods", "-o", "name").stdout.split() == ["pod/manager-g2-0"]


def _restarted(
    fake_api: FakeApiServer, kubectl: Kubectl, spec: dict[str, Any], behaviour: str
) -> RolloutSimulator:
    """`manager` with `spec` merged in, one pod Ready since an hour ago, restarted by kubectl
    into a rollout whose new pods behave as `behaviour` says."""
    deployment: dict[str, Any] = copy.deepcopy(DEPLOYMENT)
    deployment["spec"].update(spec)
    fake_api.add(deployment)
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    simulator = RolloutSimulator(fake_api, lambda image: "sha256:" + "1" * 64, terminating_reads=1)
    simulator.behaviour["manager"] = behaviour
    old = simulator.make_pod(stored, "manager-old")
    for condition in old["status"]["conditions"]:
        condition["lastTransitionTime"] = "2026-01-01T00:00:00Z"
    fake_api.add(old)
    simulator.remember(stored)
    assert kubectl("rollout", "restart", "deployment/manager").returncode == 0
    return simulator


def _pods(kubectl: Kubectl) -> list[tuple[str, bool]]:
    """(name, terminating) of each pod, as kubectl lists them (a read: the controllers act)."""
    listed = json.loads(kubectl("get", "pods", "-o", "json").stdout)["items"]
    return [(p["metadata"]["name"], "deletionTimestamp" in p["metadata"]) for p in listed]


def _waiting(kubectl: Kubectl) -> str:
    """What `kubectl rollout status` says of the rollout when it is not done within 1s."""
    result = kubectl("rollout", "status", "deployment/manager", "--timeout=1s")
    assert result.returncode == 1, result.stdout
    return result.stdout.strip().splitlines()[-1]


def _rolled_out(kubectl: Kubectl) -> None:
    result = kubectl("rollout", "status", "deployment/manager", "--timeout=5s")
    assert result.stdout.strip() == 'deployment "manager" successfully rolled out', result.stderr


def test_recreate_stops_every_old_pod_before_a_new_one_starts(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """recreate.go: old ReplicaSets scaled to 0, the new one scaled up only when no old pod is
    left (`oldPodsRunning` counts the terminating ones)."""
    _restarted(fake_api, kubectl, {"strategy": {"type": "Recreate"}}, "ok")
    assert _waiting(kubectl) == (
        'Waiting for deployment "manager" rollout to finish: 0 out of 1 new replicas have been '
        "updated..."
    )
    assert _pods(kubectl) == [("manager-old", True)]  # this read ends its grace period
    assert _pods(kubectl) == [("manager-g2-0", False)]
    _rolled_out(kubectl)


def test_a_rolling_update_keeps_its_old_pod_beside_a_new_one_that_never_becomes_ready(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """rolling.go with the default 25% surge and unavailability of one replica: the new pod is
    the surge; the old one is kept while the new one is unavailable."""
    _restarted(fake_api, kubectl, {}, "crash")
    assert _pods(kubectl) == [("manager-g2-0", False), ("manager-old", False)]
    assert _waiting(kubectl) == (
        'Waiting for deployment "manager" rollout to finish: 1 old replicas are pending '
        "termination..."
    )


def test_without_surge_the_old_pod_goes_before_the_new_one_is_ready(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """maxSurge: 0 on one replica: maxUnavailable resolves to 1 (ResolveFenceposts), so the old
    pod is stopped and the new one, crashing, is all that stays."""
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}
    _restarted(fake_api, kubectl, {"strategy": strategy}, "crash")
    assert _pods(kubectl) == [("manager-g2-0", False), ("manager-old", True)]
    assert _waiting(kubectl) == (
        'Waiting for deployment "manager" rollout to finish: 0 of 1 updated replicas are '
        "available..."
    )
    assert _pods(kubectl) == [("manager-g2-0", False)]


def test_a_new_pod_is_available_only_after_min_ready_seconds(
    fake_api: FakeApiServer, kubectl: Kubectl
) -> None:
    """IsPodAvailable: Ready for minReadySeconds. Until then the Recreate's new pod is Ready but
    unavailable, and the rollout is not done."""
    import time

    spec = {"strategy": {"type": "Recreate"}, "minReadySeconds": 2}
    _restarted(fake_api, kubectl, spec, "ok")
    _pods(kubectl)
    assert _pods(kubectl) == [("manager-g2-0", False)]
    stored = fake_api.get_object("Deployment", "manager", "train")
    assert stored is not None
    assert (stored["status"]["readyReplicas"], "availableReplicas" in stored["status"]) == (
        1,
        False,
    )
    assert _waiting(kubectl) == (
        'Waiting for deployment "manager" rollout to finish: 0 of 1 updated replicas are '
        "available..."
    )
    time.sleep(2)
    _pods(kubectl)  # a read after minReadySeconds: the controller counts the pod available
    _rolled_out(kubectl)
