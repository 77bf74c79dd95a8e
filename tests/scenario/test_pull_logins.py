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

import base64
import socket
from datetime import datetime
from typing import Any

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.scenario.conftest import Doctor
from tests.support.registry import Registry, pull_login, served_from
from tests.support.scenarios import NAMESPACE, Obj, find, healthy, image_id

PINNED_HERE = {
    "image-pull.login-missing-skipped",
    "image-pull.login-wrong-type-skipped",
    "image-pull.no-login-not-asked",
}
"""The catalogue codes whose words and basis these tests pin."""

SIDECAR = "quay.io/prometheus/node-exporter:v1.8.1"
NOTES = {
    "apiVersion": "v1",
    "kind": "Secret",
    "type": "Opaque",
    "metadata": {"name": "notes", "namespace": NAMESPACE},
    "data": {"text": base64.b64encode(b"not a login").decode()},
}
"""A secret of another type than a registry login (kubectl create secret generic)."""


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
    assert _image_pull(report) == [("fail", "inferred", "image-pull.no-login-for-registry")]
    found = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert found["details"] == [f"no imagePullSecret among regcred has credentials for {host}"]
    assert found["objects"] == [
        "Secret/regcred",
        "Deployment/jobs-manager",
        "Deployment/mysql",
        "Job/train-001",
    ]


def test_a_pod_whose_login_list_holds_only_an_empty_name_never_gets_its_account_s(
    doctor: Doctor, registry: Registry
) -> None:
    """The pods name `imagePullSecrets: [{name: ""}]` (Helm's rendering of an empty value, which
    the API server takes: kubernetes/kubernetes#99454); their ServiceAccount names `sa-login`,
    the one login for the registry, which needs one. Admission copies the account's logins only
    into a pod whose list is empty (admission.go `Admit`: `len(pod.Spec.ImagePullSecrets) ==
    0`), here of length one, and the kubelet skips the empty name
    (pkg/kubelet/kubelet_pods.go `getPullSecretsForPod`): it pulls with no login, and the
    registry refuses."""
    _push(registry)
    host = registry.host

    def build(now: datetime) -> list[Obj]:
        objects = _served_without_pulls(host, now)
        objects.append(pull_login(host, "robot", REGISTRY_PASSWORD, name="sa-login"))
        find(objects, "ServiceAccount", "default")["imagePullSecrets"] = [{"name": "sa-login"}]
        for spec in _pod_specs(objects):
            spec["imagePullSecrets"] = [{"name": ""}]
        return objects

    doctor.registry = True
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.login-needed")
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")] * 3
    found = [f for f in report["findings"] if f["check"] == "image-pull"]
    assert [f["objects"] for f in found] == [
        ["Deployment/jobs-manager"],
        ["Deployment/mysql"],
        ["Job/train-001"],
    ]
    assert found[0]["details"] == [
        f"{host} needs a login; the workload's pull secrets hold none for it"
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


@pytest.mark.parametrize(
    ("policy", "pulled"), [(None, False), ("Always", True)], ids=["not-pulled", "always"]
)
def test_an_image_still_to_pull_that_no_login_covers_is_reported(
    doctor: Doctor, policy: str | None, pulled: bool
) -> None:
    """The control: the same sidecar, no machine holding its image yet, is uncovered; and so
    is one a machine holds whose container pulls on every start (`imagePullPolicy: Always`,
    image_manager.go `shouldPullImage`: `case v1.PullAlways: return true`). With no login
    that applies the kubelet pulls anonymously (kuberuntime_image.go PullImage), and quay.io
    hands node-exporter to anyone: the registry not asked, no login is a warning that says so,
    never a measured failure."""
    doctor.load(_sidecar(policy, pulled=pulled))
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["verdict"]) == (0, "ready")
    assert _image_pull(report) == [("warn", "inferred", "image-pull.no-login-not-asked")]
    found = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert found["headline"] == (
        "No registry login covers quay.io: the machines will download its training images "
        "without one, which works only if quay.io hands them out to anyone."
    )
    assert found["details"] == [
        "no imagePullSecret among regcred has credentials for quay.io",
        "the registry was not asked whether it needs one",
    ]


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


def _pod_specs(objects: list[Obj]) -> list[Obj]:
    """Every pod spec of the scenario: the workloads' and jobs' templates, and the pods'."""
    specs = [o["spec"] for o in objects if o["kind"] == "Pod"]
    specs += [o["spec"]["template"]["spec"] for o in objects if o["kind"] in ("Deployment", "Job")]
    return specs


def _second_login(name: str, *, stored: Obj | None, trainer: str | None = None) -> Any:
    """The healthy namespace whose every pod names `name` after `regcred` (which covers
    registry.example.com); `stored`: the secret `name` as stored, None when it does not exist;
    `trainer`: the training job's image, which no machine has pulled yet."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        for spec in _pod_specs(objects):
            spec["imagePullSecrets"].append({"name": name})
        if stored is not None:
            objects.append(stored)
        if trainer is not None:
            find(objects, "Job", "train-001")["spec"]["template"]["spec"]["containers"][0][
                "image"
            ] = trainer
        return objects

    return build


@pytest.mark.parametrize(
    ("name", "stored", "code", "headline", "detail"),
    [
        (
            "old-login",
            None,
            "image-pull.login-missing-skipped",
            "The registry login 'old-login' doesn't exist; the machines download the images "
            "without it.",
            "imagePullSecret old-login not found: read secret 'old-login': not found (404)",
        ),
        (
            "notes",
            NOTES,
            "image-pull.login-wrong-type-skipped",
            "'notes' is not a registry login; the machines download the images without it.",
            "secret notes has type Opaque",
        ),
    ],
    ids=["missing", "wrong-type"],
)
def test_a_login_the_kubelet_skips_is_a_warning_while_another_covers_the_images(
    doctor: Doctor, name: str, stored: Obj | None, code: str, headline: str, detail: str
) -> None:
    """Every pod names `regcred` and a second login the kubelet can't use: one that does not
    exist (kubelet_pods.go getPullSecretsForPod leaves it out, with its Warning, and pulls with
    the rest) or one of another type (secrets.go MakeDockerKeyring skips it). `regcred` covers
    the one image still to pull (the training job's): the pulls work, and the broken login is
    named as a warning."""
    doctor.load(_second_login(name, stored=stored))
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, code)
    assert report["headline"]["text"] == headline
    assert _image_pull(report) == [("warn", "measured", code)]
    found = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert found["headline"] == headline
    assert found["details"] == [detail]
    assert found["objects"] == [
        f"Secret/{name}",
        "Deployment/jobs-manager",
        "Deployment/mysql",
        "Job/train-001",
    ]


@pytest.mark.parametrize(
    ("name", "stored", "code"),
    [
        ("old-login", None, "image-pull.login-missing"),
        ("notes", NOTES, "image-pull.login-wrong-type"),
    ],
    ids=["missing", "wrong-type"],
)
def test_a_login_the_kubelet_skips_fails_where_an_image_still_to_pull_has_no_other(
    doctor: Doctor, registry: Registry, name: str, stored: Obj | None, code: str
) -> None:
    """The same, the training job's new image on a registry `regcred` does not cover, which,
    asked, wants a login: no login the kubelet uses covers it, so the broken login is the
    measured failure."""
    _push(registry)
    doctor.registry = True
    doctor.load(_second_login(name, stored=stored, trainer=f"{registry.host}/trainer:2.1"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, code)
    assert _image_pull(report) == [("fail", "measured", code)]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("wants-a-login", (2, [("fail", "measured", "image-pull.login-missing")])),
        (
            "unreachable",
            (
                3,
                [("unknown", "cant-check", "image-pull.image-unchecked")] * 3
                + [("warn", "measured", "image-pull.login-missing-skipped")],
            ),
        ),
        (
            "not-asked",
            (
                0,
                [
                    ("warn", "inferred", "image-pull.no-login-not-asked"),
                    ("warn", "measured", "image-pull.login-missing-skipped"),
                ],
            ),
        ),
        ("serves-anyone", (0, [("warn", "measured", "image-pull.login-missing-skipped")])),
    ],
)
def test_a_missing_login_fails_only_where_the_registry_wants_one(
    doctor: Doctor,
    registry: Registry,
    open_registry: Registry,
    answer: str,
    expected: tuple[int, list[tuple[str, str, str]]],
) -> None:
    """The pods name only `regcred`, which does not exist, and no machine has pulled their
    images. The kubelet leaves the login out, with a FailedToRetrieveImagePullSecret Warning,
    and pulls as for pods that name no login: anonymously (kubelet_pods.go
    getPullSecretsForPod, kuberuntime_image.go PullImage). That fails only where the registry
    wants a login: asked and wanting one (401), the missing login is the measured failure;
    asked and not answering, the images are unknown; not asked (--no-registry), the warning
    that the machines pull without a login; asked and serving anyone, the login is named only."""
    if answer == "wants-a-login":
        _push(registry)
        host = registry.host
    elif answer == "serves-anyone":
        _push(open_registry)
        host = open_registry.host
    else:
        host = f"127.0.0.1:{_closed_port()}"
    doctor.registry = answer != "not-asked"
    doctor.load(lambda now: _served_without_pulls(host, now))
    result = doctor.live("-o", "json")
    report = result.json()
    exit_code, findings = expected
    assert (result.exit_code, sorted(_image_pull(report))) == (exit_code, sorted(findings))
    skipped = [f for f in report["findings"] if f["code"] == "image-pull.login-missing-skipped"]
    assert [f["details"] for f in skipped] == [
        ["imagePullSecret regcred not found: read secret 'regcred': not found (404)"]
    ] * len(skipped)


def test_a_missing_login_an_image_pulled_on_every_start_needs_fails(
    doctor: Doctor, registry: Registry
) -> None:
    """As below, but the manager's container has `imagePullPolicy: Always`: the kubelet pulls
    its image again on each start, whatever the machine holds (image_manager.go
    `shouldPullImage`: `case v1.PullAlways: return true`), without the missing login
    (kubelet_pods.go `getPullSecretsForPod`), and its registry, asked, wants one: the next
    restart fails to pull."""
    _push(registry)
    host = registry.host

    def build(now: datetime) -> list[Obj]:
        objects = [
            o
            for o in served_from(healthy(now), host)
            if not (o["kind"] == "Secret" and o["metadata"]["name"] == "regcred")
        ]
        objects.append(pull_login(host, "robot", REGISTRY_PASSWORD))
        manager = find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"]
        pod = find(objects, "Pod", "jobs-manager-abc12")["spec"]
        for spec in (manager, pod):
            spec["imagePullSecrets"] = [{"name": "gone"}]
            spec["containers"][0]["imagePullPolicy"] = "Always"
        return objects

    doctor.registry = True
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.login-missing")
    assert report["headline"]["text"] == (
        "Training images can't be downloaded: the registry login 'gone' doesn't exist."
    )
    assert _image_pull(report) == [("fail", "measured", "image-pull.login-missing")]
    found = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert found["objects"] == ["Secret/gone", "Deployment/jobs-manager"]


def test_a_missing_login_no_image_still_to_pull_needs_is_a_warning(doctor: Doctor) -> None:
    """The manager's pods name only `gone`, which does not exist, and its one image is on the
    machine already (imageID): the kubelet runs it without pulling, so nothing waits on the
    login, which is named as a warning."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        manager = find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"]
        manager["imagePullSecrets"] = [{"name": "gone"}]
        find(objects, "Pod", "jobs-manager-abc12")["spec"]["imagePullSecrets"] = [{"name": "gone"}]
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 0
    assert _image_pull(report) == [("warn", "measured", "image-pull.login-missing-skipped")]
    found = next(f for f in report["findings"] if f["check"] == "image-pull")
    assert found["objects"] == ["Secret/gone", "Deployment/jobs-manager"]
    assert found["remedy"].startswith("Create it for registry.example.com with `kubectl")


@pytest.mark.parametrize(
    ("name", "stored", "skipped"),
    [
        ("old-login", None, "image-pull.login-missing-skipped"),
        ("notes", NOTES, "image-pull.login-wrong-type-skipped"),
    ],
    ids=["missing", "wrong-type"],
)
def test_the_registry_s_answer_to_the_logins_the_kubelet_sends_stands_beside_a_skipped_one(
    doctor: Doctor, registry: Registry, name: str, stored: Obj | None, skipped: str
) -> None:
    """The pods name `regcred` and a login the kubelet leaves out (getPullSecretsForPod) or
    skips (MakeDockerKeyring), so it pulls with `regcred` alone; the registry, asked with
    `regcred`, says the training job's tag does not exist: that is what the kubelet would
    meet, a measured failure the skipped login does not hide."""
    _push(registry)
    host = registry.host

    def build(now: datetime) -> list[Obj]:
        objects = _served_without_pulls(host, now)
        objects.append(pull_login(host, "robot", REGISTRY_PASSWORD))
        if stored is not None:
            objects.append(stored)
        for spec in _pod_specs(objects):
            spec["imagePullSecrets"].append({"name": name})
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = f"{host}/trainer:never-pushed"
        return objects

    doctor.registry = True
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.image-missing")
    assert sorted(_image_pull(report)) == [
        ("fail", "measured", "image-pull.image-missing"),
        ("warn", "measured", skipped),
    ]
    missing = next(f for f in report["findings"] if f["code"] == "image-pull.image-missing")
    assert missing["details"] == [
        f"{host}/trainer:never-pushed does not exist in the registry",
        "asked with the imagePullSecrets regcred",
    ]
