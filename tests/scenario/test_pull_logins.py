"""Which registry logins the kubelet sends with a pull, and which pulls it makes at all, as the
image-pull check judges them.

- The ServiceAccount admission plugin copies the account's imagePullSecrets into a pod only when
  the pod names none (kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go,
  `Admit`: `if len(pod.Spec.ImagePullSecrets) == 0`).
- The kubelet never pulls a container's image under `imagePullPolicy: Never`
  (pkg/kubelet/images/image_manager.go, `shouldPullImage`), and a container status carries an
  `imageID` once the image is on the machine (pkg/kubelet/kubelet_pods.go,
  `convertToAPIContainerStatuses`).
- A login the kubelet cannot get is left out of the pull, with a FailedToRetrieveImagePullSecret
  Warning ("attempting to pull the image may not succeed"), and the pull goes on with the rest
  (pkg/kubelet/kubelet_pods.go, `getPullSecretsForPod`); a secret of another type than a
  registry login is skipped without a word (pkg/credentialprovider/secrets/secrets.go,
  `MakeDockerKeyring`).
"""

from datetime import datetime
from typing import Any

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.scenario.conftest import Doctor
from tests.support.registry import Registry, pull_login, served_from
from tests.support.scenarios import Obj, find, healthy, image_id

SIDECAR = "quay.io/prometheus/node-exporter:v1.8.1"


def _image_pull(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["status"], f["basis"], f["code"])
        for f in report["findings"]
        if f["check"] == "image-pull"
    ]


def _served_without_pulls(host: str, now: datetime) -> list[Obj]:
    """The healthy namespace with its images served from `host` and no registry login yet; no
    machine has pulled an image yet (no container status carries an imageID)."""
    objects = [
        o
        for o in served_from(healthy(now), host)
        if not (o["kind"] == "Secret" and o["metadata"]["name"] == "regcred")
    ]
    for pod in (o for o in objects if o["kind"] == "Pod"):
        for status in pod["status"]["containerStatuses"]:
            status.pop("imageID")
    return objects


def _push(registry: Registry) -> None:
    registry.push_image("jobs-manager", "1.4", content="manager")
    registry.push_image("library/mysql", "8.0", content="mysql")
    registry.push_image("trainer", "2.1", content="trainer")


def test_a_pod_that_names_its_own_login_never_gets_its_account_s(
    doctor: Doctor, registry: Registry
) -> None:
    """The pods name `regcred`, a login for another registry; their ServiceAccount names
    `sa-login`, the one login for the registry their images are in. Admission gives the pods
    only their own (admission.go `Admit`), so the kubelet pulls with no login that applies,
    anonymously, and the registry refuses: no login of the pods covers it."""
    _push(registry)
    host = registry.host

    def build(now: datetime) -> list[Obj]:
        objects = _served_without_pulls(host, now)
        objects.append(pull_login("other-registry.example.com", "robot", REGISTRY_PASSWORD))
        objects.append(pull_login(host, "robot", REGISTRY_PASSWORD, name="sa-login"))
        find(objects, "ServiceAccount", "default")["imagePullSecrets"] = [{"name": "sa-login"}]
        return objects

    doctor.registry = True
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (
        2,
        "image-pull.no-login-for-registry",
    )
    assert report["headline"]["text"] == (
        f"Training images from {host} can't be downloaded: no registry login covers it."
    )
    assert _image_pull(report) == [("fail", "measured", "image-pull.no-login-for-registry")]
    found = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert found["details"] == [f"no imagePullSecret among regcred has credentials for {host}"]
    assert found["objects"] == [
        "Secret/regcred",
        "Deployment/jobs-manager",
        "Deployment/mysql",
        "Job/train-001",
    ]


def test_a_missing_login_only_the_account_names_is_never_sent(doctor: Doctor) -> None:
    """Every pod names `regcred`; the default ServiceAccount names `stale-login`, which does
    not exist. No pod gets it (admission.go `Admit`), so nothing is wrong with the pulls."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        find(objects, "ServiceAccount", "default")["imagePullSecrets"] = [{"name": "stale-login"}]
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    ok = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert ok["objects"] == ["Secret/regcred"]


def _sidecar(policy: str | None, *, pulled: bool) -> Any:
    """The healthy namespace whose manager runs a quay.io sidecar (pull policy `policy`), which
    no login of its pods (`regcred`, for registry.example.com) covers; `pulled`: its pod's
    status says the machine holds the image (imageID)."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        sidecar: Obj = {"name": "exporter", "image": SIDECAR}
        if policy:
            sidecar["imagePullPolicy"] = policy
        template = find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"]
        template["containers"].append(dict(sidecar))
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["spec"]["containers"].append(dict(sidecar))
        status = dict(pod["status"]["containerStatuses"][0], name="exporter", image=SIDECAR)
        status["containerID"] += "1"
        if pulled:
            status["imageID"] = image_id(SIDECAR)
        else:
            status.pop("imageID")
        pod["status"]["containerStatuses"].append(status)
        return objects

    return build


@pytest.mark.parametrize(
    ("policy", "pulled"),
    [("Never", False), ("Never", True), (None, True), ("IfNotPresent", True)],
)
def test_an_image_the_kubelet_will_not_pull_needs_no_login(
    doctor: Doctor, policy: str | None, pulled: bool
) -> None:
    """The registries not asked (--no-registry): a sidecar the kubelet never pulls
    (image_manager.go `shouldPullImage`: PullNever), or whose image a machine already holds
    (its container status carries an imageID), needs no login of the pods."""
    doctor.load(_sidecar(policy, pulled=pulled))
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]


def test_an_image_still_to_pull_that_no_login_covers_is_reported(doctor: Doctor) -> None:
    """The control: the same sidecar, no machine holding its image yet, is uncovered."""
    doctor.load(_sidecar(None, pulled=False))
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (
        2,
        "image-pull.no-login-for-registry",
    )
    assert report["headline"]["text"] == (
        "Training images from quay.io can't be downloaded: no registry login covers it."
    )


def test_a_container_never_pulled_is_never_asked_about_nor_needs_a_login(
    doctor: Doctor, registry: Registry
) -> None:
    """The registries asked: the training job's sidecar is preloaded on the machines
    (`imagePullPolicy: Never`, image_manager.go `shouldPullImage`) from a registry no login of
    its pods covers. The kubelet never pulls it, so neither a login nor the registry matters."""
    _push(registry)
    host = registry.host

    def build(now: datetime) -> list[Obj]:
        objects = _served_without_pulls(host, now)
        objects.append(pull_login(host, "robot", REGISTRY_PASSWORD))
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"].append(
            {
                "name": "side",
                "image": "preloaded.internal.example/tools/side:1",
                "imagePullPolicy": "Never",
            }
        )
        return objects

    doctor.registry = True
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    ok = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert not [d for d in ok["details"] if "preloaded" in d]
