"""From Kubernetes 1.35 a machine's copy of an image spares a pod the pull only where its logins
let it start from that copy: doctor asks the registry as for an image no machine holds.

The kubelet's rule (KubeletEnsureSecretPulledImages, beta and on by default from 1.35:
pkg/features/kube_features.go; imagePullCredentialsVerificationPolicy defaults to
NeverVerifyPreloadedImages: pkg/kubelet/apis/config/v1beta1/defaults.go): for an image it pulled
with a pod's registry login, pkg/kubelet/images/image_manager.go EnsureImageExists asks
pkg/kubelet/images/pullmanager/image_pull_manager.go MustAttemptImagePull, which lets a pod
start from the copy only when it sends one of the logins recorded for the image, or when the
image was pulled with no login of a pod (NodePodsAccessible, image_manager.go
trackedToImagePullCreds); any other pod pulls again with its own logins. The machines say
their kubelet's version in `status.nodeInfo.kubeletVersion` (k8s.io/api core/v1 types.go
NodeSystemInfo, set by pkg/kubelet/nodestatus/setters.go VersionInfo).
"""

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.scenario.conftest import Doctor
from tests.support.monitoring import free_port
from tests.support.registry import Registry, pull_login, served_from
from tests.support.scenarios import Obj, find, healthy, job_pod, training_job, ts

Scene = Callable[[datetime], list[Obj]]


@pytest.fixture
def asking(doctor: Doctor) -> Doctor:
    """The scenario kit with the registries asked (it passes --no-registry otherwise)."""
    doctor.registry = True
    return doctor


def _node_info(kubelet: str) -> Obj:
    """A machine's nodeInfo as its kubelet reports it (pkg/kubelet/nodestatus/setters.go
    VersionInfo, NodeSystemInfo less the machine's ids)."""
    return {
        "kubeletVersion": kubelet,
        "kubeProxyVersion": kubelet,
        "containerRuntimeVersion": "containerd://2.1.4",
        "kernelVersion": "6.8.0-1021-aws",
        "osImage": "Ubuntu 24.04.2 LTS",
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


def _old_job_s_pod(now: datetime, logins: tuple[str, ...]) -> tuple[Obj, Obj]:
    """Last run's job, finished, and its pod, kept: it ran the trainer's image on gpu-1, named
    `logins`, and its container's status still carries the imageID the kubelet set
    (pkg/kubelet/kuberuntime)."""
    job = training_job("train-002", now, age=timedelta(hours=5), finished=True)
    pod = job_pod(job, now, suffix="x1", node_name="gpu-1", phase="Succeeded")
    pod["spec"]["serviceAccountName"] = "trainer"
    if logins:
        pod["spec"]["imagePullSecrets"] = [{"name": n} for n in logins]
    else:
        pod["spec"].pop("imagePullSecrets")
    container = pod["spec"]["containers"][0]
    pod["status"]["containerStatuses"] = [
        {
            "name": container["name"],
            "image": container["image"],
            "imageID": container["image"].rsplit(":", 1)[0] + "@sha256:" + "ab" * 32,
            "ready": False,
            "restartCount": 0,
            "state": {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": ts(now - timedelta(hours=5)),
                    "finishedAt": ts(now - timedelta(hours=4)),
                }
            },
        }
    ]
    return job, pod


def _pulled_event(now: datetime, pod: str, image: str) -> Obj:
    """The kubelet's Normal `Pulled` Event about the old job's pod (pkg/kubelet/images/
    image_manager.go pullImage; source `kubelet` on the machine, pkg/kubelet/kubelet.go)."""
    said = ts(now - timedelta(minutes=50))
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.18a1c2d3e4f5a6b7", "namespace": "train"},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod,
            "namespace": "train",
            "uid": f"uid-{pod}",
            "fieldPath": "spec.containers{trainer}",
        },
        "reason": "Pulled",
        "message": f'Successfully pulled image "{image}" in 41.2s (41.2s including waiting). '
        "Image size: 8123456789 bytes.",
        "source": {"component": "kubelet", "host": "gpu-1"},
        "firstTimestamp": said,
        "lastTimestamp": said,
        "count": 1,
        "type": "Normal",
        "reportingComponent": "kubelet",
        "reportingInstance": "gpu-1",
    }


def _scene(
    host: str,
    *,
    kubelets: tuple[str, str] = ("v1.35.1", "v1.35.1"),
    old_logins: tuple[str, ...] = ("regcred",),
    new_logins: tuple[str, ...] = (),
    account_logins: tuple[str, ...] = (),
    old_pod_kept: bool = True,
) -> Scene:
    """The healthy namespace served from `host`, its services running their images, with its
    login 'regcred' for `host`; its machines' kubelets at `kubelets`. Last run's job pulled
    the trainer's image with `old_logins` (its pod kept, else only the kubelet's Event about
    it left). Today's job, just submitted, uses the same image under IfNotPresent, names
    `new_logins`, and runs as the account 'trainer', which names `account_logins`."""

    def build(now: datetime) -> list[Obj]:
        objects = [
            o
            for o in healthy(now)
            if not (o["kind"] == "Secret" and o["metadata"]["name"] == "regcred")
        ]
        for machine, kubelet in zip(
            (find(objects, "Node", "cpu-1"), find(objects, "Node", "gpu-1")), kubelets, strict=True
        ):
            machine["status"]["nodeInfo"] = _node_info(kubelet)
        old_job, old_pod = _old_job_s_pod(now, old_logins)
        new_job = training_job("train-003", now, age=timedelta(minutes=1), finished=False)
        new_job["status"] = {}
        spec = new_job["spec"]["template"]["spec"]
        spec["serviceAccountName"] = "trainer"
        spec["containers"][0]["imagePullPolicy"] = "IfNotPresent"
        spec["imagePullSecrets"] = [{"name": n} for n in new_logins]
        if not new_logins:
            spec.pop("imagePullSecrets")
        account: Obj = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "trainer", "namespace": "train"},
            "imagePullSecrets": [{"name": n} for n in account_logins],
        }
        gone = _pulled_event(now, "train-002-x1", "registry.example.com/trainer:2.1")
        scene = [*objects, old_job, old_pod if old_pod_kept else gone, new_job, account]
        return [*served_from(scene, host), pull_login(host, "robot", REGISTRY_PASSWORD)]

    return build


def _image_pull(report: Obj) -> list[tuple[str, str, str]]:
    return [
        (f["status"], f["basis"], f["code"])
        for f in report["findings"]
        if f["check"] == "image-pull"
    ]


def _spared_line(host: str) -> str:
    return (
        f"{host}/trainer:2.1 (the training job 'train-003'): pulled by a machine for a program here"
    )


def test_a_new_job_that_sends_none_of_the_logins_that_pulled_the_image_must_pull_it(
    asking: Doctor, registry: Registry
) -> None:
    """Last run pulled the trainer's image with 'regcred'; today's job
    sends no login. On 1.35 machines the kubelet pulls again for it, anonymously, and the
    registry refuses: doctor asks the registry as the pod would (without a login), and the
    registry wants one (inferred: the machines may hold a login of their own)."""
    registry.push_image("jobs-manager", "1.4", content="manager")
    registry.push_image("library/mysql", "8.0", content="mysql")
    registry.push_image("trainer", "2.1", content="trainer")
    host = registry.host
    asking.load(_scene(host))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.login-needed")
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")]
    assert report["headline"]["text"] == (
        f"The registry {host} won't hand out {host}/trainer:2.1 without a login (it "
        "doesn't exist there, or needs a login), and the training job 'train-003' has no "
        "registry login for it."
    )


@pytest.mark.parametrize(
    ("kubelets", "old_pod_kept"),
    [
        (("v1.35.1", "v1.35.1"), True),
        (("v1.34.3", "v1.35.0-eks-4096722"), True),
        (("v1.35.1", "v1.35.1"), False),
    ],
    ids=["1.35", "one-machine-upgraded", "pod-gone"],
)
def test_where_the_copy_spares_no_pull_the_registry_is_asked(
    asking: Doctor, kubelets: tuple[str, str], old_pod_kept: bool
) -> None:
    """The same scene with the registry on a port nothing listens on: asked, it can't say, so
    the image is unknown, never ready. So it is where one machine of two runs 1.35 (a pod may
    land there), and where the old pod is gone and only the kubelet's Event says the machine
    holds the image: the logins it was pulled with are unknown."""
    host = f"127.0.0.1:{free_port()}"
    asking.load(_scene(host, kubelets=kubelets, old_pod_kept=old_pod_kept))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")]
    assert report["headline"]["text"] == (
        f"Couldn't check whether the image {host}/trainer:2.1 is in its registry: "
        f"couldn't connect to {host}."
    )


@pytest.mark.parametrize(
    ("kubelets", "old_logins", "new_logins", "account_logins"),
    [
        (("v1.35.1", "v1.35.1"), ("regcred",), ("regcred",), ()),
        (("v1.35.1", "v1.35.1"), ("regcred",), (), ("regcred",)),
        (("v1.35.1", "v1.35.1"), (), (), ()),
        (("v1.34.3", "v1.34.3"), ("regcred",), (), ()),
    ],
    ids=["same-login", "same-login-by-its-account", "pulled-without-a-login", "kubelet-1.34"],
)
def test_where_the_copy_spares_the_pull_no_registry_is_asked(
    asking: Doctor,
    kubelets: tuple[str, str],
    old_logins: tuple[str, ...],
    new_logins: tuple[str, ...],
    account_logins: tuple[str, ...],
) -> None:
    """The kubelet starts today's job from the machine's copy: it sends the login the image was
    pulled with (its own, or its account's, which the ServiceAccount admission plugin copies
    into its pods); or the image was pulled with no login of a pod (NodePodsAccessible); or
    the kubelets are older than 1.35 and never check. Ready, with the registry on a port
    nothing listens on: no request made."""
    host = f"127.0.0.1:{free_port()}"
    scene = _scene(
        host,
        kubelets=kubelets,
        old_logins=old_logins,
        new_logins=new_logins,
        account_logins=account_logins,
    )
    asking.load(scene)
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    image_pull = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert _spared_line(host) in image_pull["details"]
