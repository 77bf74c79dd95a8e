"""The training images are in their registry, for the logins their pods send: doctor against a
real registry (Debian's docker-registry, on loopback, with the images each test pushes), and
against scripted and hostile ones for what a real one will not do.

The registry's answers follow the OCI distribution spec (opencontainers/distribution-spec
spec.md: a manifest that does not exist is 404 MANIFEST_UNKNOWN, a repository NAME_UNKNOWN; a
login refused 401 UNAUTHORIZED); the kubelet's choice of logins is in
src/truegreen/doctor/knowledge/image_presence.py. Every doctor run here is also checked from a
snapshot of the same cluster (tests/scenario/conftest.py): the recorded answers give the same
verdict.
"""

import base64
import json
import shutil
import socket
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.scenario.conftest import Doctor
from tests.support import hostile
from tests.support.cli import run_cli
from tests.support.fake_apiserver import Fault
from tests.support.hostile import HostileServer, Received, ScriptedApi
from tests.support.proxies import HttpConnectProxy
from tests.support.registry import (
    MANIFEST_LAYER_BYTES,
    DockerHub,
    Registry,
    TokenFront,
    docker_hub,
    pull_login,
    running_registry,
    served_from,
    serving_manifests,
)
from tests.support.scenarios import Obj, find, healthy, job_pod, ts
from truegreen.doctor.knowledge.image_presence import MAX_LOOKUPS
from truegreen.http import tlsstream

WRONG_PASSWORD = "not-the-robot-s-password-31x"
LAYER = {"trainer": len(b"layer trainer amd64"), "trainer-arm": len(b"layer multi arm64")}
"""The download size of each pushed image (tests/support/registry.py: one layer of its text)."""


def _push_environment(registry: Registry) -> None:
    """The healthy namespace's three images, in `registry`."""
    registry.push_image("jobs-manager", "1.4", content="manager")
    registry.push_image("library/mysql", "8.0", content="mysql")
    registry.push_image("trainer", "2.1", content="trainer")


def _environment(
    host: str,
    *,
    login: tuple[str, str] | None = ("robot", REGISTRY_PASSWORD),
    pulled: bool = False,
) -> Any:
    """The healthy namespace, its images served from `host`, its registry login for `host`
    (none at all, neither named nor stored, when `login` is None). Unless `pulled`, no machine
    has pulled its images yet (no container status carries an imageID: a new environment, or
    one whose pods are still waiting), so the registry is what can answer."""

    def build(now: datetime) -> list[Obj]:
        objects = [
            o
            for o in served_from(healthy(now), host)
            if not (o["kind"] == "Secret" and o["metadata"]["name"] == "regcred")
        ]
        if not pulled:
            for pod in (o for o in objects if o["kind"] == "Pod"):
                for status in pod.get("status", {}).get("containerStatuses", []):
                    status.pop("imageID", None)
        if login is None:
            for obj in objects:
                template = obj.get("spec", {}).get("template", {}).get("spec")
                for spec in (template, obj.get("spec") if obj["kind"] == "Pod" else None):
                    if isinstance(spec, dict):
                        spec.pop("imagePullSecrets", None)
            return objects
        return [*objects, pull_login(host, *login)]

    return build


def _image_pull(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["status"], f["basis"], f["code"])
        for f in report["findings"]
        if f["check"] == "image-pull"
    ]


def _details(report: dict[str, Any]) -> list[str]:
    return [d for f in report["findings"] if f["check"] == "image-pull" for d in f["details"]]


@pytest.fixture
def asking(doctor: Doctor) -> Doctor:
    """The scenario kit with the registries asked (it passes --no-registry otherwise)."""
    doctor.registry = True
    return doctor


HUB_USER = ("hubuser", "hub-pass-5531")
"""The one account of the test's Docker Hub."""


@pytest.fixture
def hub(
    open_registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DockerHub]:
    """Docker Hub, serving `open_registry`'s images (tests/support/registry.py docker_hub),
    reached as doctor reaches the real one from behind a company proxy: through HTTPS_PROXY,
    its certificate's authority the one SSL_CERT_FILE names. The tests run doctor in this
    process, which reads the system's authorities once (tlsstream caches the context), so the
    cache starts empty here as it does in a fresh `truegreen` process, and again after."""
    folder = tmp_path / "hub"
    folder.mkdir()
    with docker_hub(open_registry, folder, *HUB_USER) as running:
        for name in ("https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", running.proxy.url)
        monkeypatch.setenv("SSL_CERT_FILE", str(running.authority))
        monkeypatch.setattr(tlsstream, "_contexts", {})
        yield running


def test_every_image_is_in_its_registry_and_the_job_s_download_size_is_read(
    asking: Doctor, open_registry: Registry
) -> None:
    _push_environment(open_registry)
    host = open_registry.host
    asking.load(_environment(host))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    assert _details(report) == [
        f"{host}/jobs-manager:1.4 (the workload 'jobs-manager'): in its registry",
        f"{host}/library/mysql:8.0 (the workload 'mysql'): in its registry",
        f"{host}/trainer:2.1 (the training job 'train-001'): in its registry, "
        f"{LAYER['trainer']} bytes to download for linux/amd64 (1 layer)",
    ]
    assert report["coverage"]["not_checked"] == [], "the registries were asked"
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"
    verbose = asking.live("--no-color", "-v").stdout
    assert f"{host}/trainer:2.1 (the training job 'train-001'): in its registry" in verbose


def test_an_index_is_sized_for_the_platform_of_the_machines(
    asking: Doctor, open_registry: Registry
) -> None:
    """containerd pulls the index's entry for the machine's platform (containerd/platforms):
    machines labelled arm64 download the arm64 image, whose size is the one reported."""
    _push_environment(open_registry)
    open_registry.push_index("trainer", "multi", content="multi")
    host = open_registry.host

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = _environment(host)(now)
        for machine in (o for o in objects if o["kind"] == "Node"):
            machine["metadata"]["labels"]["kubernetes.io/arch"] = "arm64"
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = f"{host}/trainer:multi"
        return objects

    asking.load(build)
    report = asking.live("-o", "json").json()
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    assert _details(report)[-1] == (
        f"{host}/trainer:multi (the training job 'train-001'): in its registry, "
        f"{LAYER['trainer-arm']} bytes to download for linux/arm64 (1 layer)"
    )


def _platform_machines(host: str, image: str, *labels: dict[str, str]) -> Any:
    """The environment of `_environment(host)` whose training job runs `image`, its machines
    labelled in turn with `labels` (the kubelet's `kubernetes.io/os` and `kubernetes.io/arch`;
    the healthy scenario's machines carry neither)."""

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = _environment(host)(now)
        machines = [o for o in objects if o["kind"] == "Node"]
        for machine, extra in zip(machines, labels * len(machines), strict=False):
            machine["metadata"]["labels"].update(extra)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = image
        return objects

    return build


AMD64 = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
ARM64 = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64"}


def test_an_index_with_no_build_for_the_machines_platform_can_t_be_downloaded(
    asking: Doctor, open_registry: Registry
) -> None:
    """containerd picks the index's entry for the machine's platform, and with none stops the
    pull with `no match for platform in manifest: not found` (core/images/image.go,
    Manifest; platforms.Default is Only(the machine's platform): containerd/platforms
    defaults_unix.go, compare.go): the pod waits in ErrImagePull, though the tag exists."""
    _push_environment(open_registry)
    open_registry.push_index("trainer", "arm-only", content="arm-only", arches=("arm64",))
    host = open_registry.host
    image = f"{host}/trainer:arm-only"
    asking.load(_platform_machines(host, image, AMD64))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "root-cause-failure",
        "image-pull.no-build-for-platform",
    )
    assert report["headline"]["text"] == (
        f"The image {image} of the training job 'train-001' has no build for the machines' "
        "platform linux/amd64 (its builds: linux/arm64), so it can't be downloaded there."
    )
    assert report["headline"]["remedy"] == (
        f"Build {image} for linux/amd64 too and push it under the same name, or correct its "
        "name or tag in the settings of the training job 'train-001'."
    )
    assert _image_pull(report) == [("fail", "measured", "image-pull.no-build-for-platform")]
    assert (
        f"{image}: its image index holds no image for linux/amd64 (it holds: linux/arm64)"
        in _details(report)
    )
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"


def test_an_index_with_no_build_for_a_platform_doctor_guessed_is_no_failure(
    asking: Doctor, open_registry: Registry
) -> None:
    """Machines of several platforms (or none labelled) and a job whose node selector names
    none: doctor can't tell which platform the pod lands on, so an index without linux/amd64
    (the platform it reads sizes for then) is only noted, never a failure."""
    _push_environment(open_registry)
    open_registry.push_index("trainer", "arm-only", content="arm-only", arches=("arm64",))
    host = open_registry.host
    image = f"{host}/trainer:arm-only"
    asking.load(_platform_machines(host, image, AMD64, ARM64))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    assert _details(report)[-1] == (
        f"{image} (the training job 'train-001'): in its registry; it holds no image for "
        "linux/amd64 (it holds: linux/arm64)"
    )


def test_a_tag_never_pushed_does_not_exist_in_its_registry(
    asking: Doctor, open_registry: Registry
) -> None:
    _push_environment(open_registry)
    host = open_registry.host

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = _environment(host)(now)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = f"{host}/trainer:never-pushed"
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "root-cause-failure",
        "image-pull.image-missing",
    )
    assert report["headline"]["text"] == (
        f"The image {host}/trainer:never-pushed of the training job 'train-001' doesn't exist "
        "in its registry, so it can't be downloaded."
    )
    assert report["headline"]["remedy"] == (
        f"Push {host}/trainer:never-pushed to {host}, or correct its name or tag in the "
        "settings of the training job 'train-001'."
    )
    assert _image_pull(report) == [("fail", "measured", "image-pull.image-missing")]
    assert f"{host}/trainer:never-pushed does not exist in the registry" in _details(report)


def test_the_pods_own_login_reaches_a_private_registry(asking: Doctor, registry: Registry) -> None:
    _push_environment(registry)
    host = registry.host
    asking.load(_environment(host))
    result = asking.live("-o", "json")
    assert result.exit_code == 0
    assert _image_pull(result.json()) == [("ok", "measured", "image-pull.ok")]
    assert _details(result.json())[0] == (
        f"{host}/jobs-manager:1.4 (the workload 'jobs-manager'): in its registry"
    )


def test_the_registry_is_asked_through_the_proxy_the_environment_names(
    asking: Doctor, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where only a proxy reaches the registry (kubectl goes through it too), doctor asks the
    registry through the proxy HTTP_PROXY names for this plain-HTTP registry, by Go's rules
    (docs/image-pull.md): by a name only the proxy resolves, the pods' login inside the
    tunnel, never sent to the proxy. The cluster, on loopback, is never proxied."""
    _push_environment(registry)
    host = f"registry.test:{registry.host.rsplit(':', 1)[1]}"
    asking.load(_environment(host))
    for name in ("HTTPS_PROXY", "https_proxy", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    login = ("ops", "pr0xy-s3cret")
    with HttpConnectProxy(login=login, names={"registry.test": "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://{login[0]}:{login[1]}@127.0.0.1:{proxy.port}")
        result = asking.live("--registry-allow", host, "-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    assert _details(report)[0] == (
        f"{host}/jobs-manager:1.4 (the workload 'jobs-manager'): in its registry"
    )
    assert asking.round_trips == 1, "precondition: the snapshot asked through the proxy too"
    assert {(p.target, p.login, p.opened) for p in proxy.passages} == {(host, login, True)}
    robot = base64.b64encode(f"robot:{REGISTRY_PASSWORD}".encode()).decode()
    for head in proxy.heads:
        assert "authorization" not in head
        assert not any(robot in value for value in head.values())


def test_a_login_the_registry_refuses_is_a_measured_failure_and_never_printed(
    asking: Doctor, registry: Registry
) -> None:
    _push_environment(registry)
    host = registry.host
    asking.load(_environment(host, login=("robot", WRONG_PASSWORD)))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert report["headline"]["code"] == "image-pull.login-refused"
    assert report["headline"]["text"] == (
        f"The registry {host} refuses the registry login 'regcred', so "
        f"{host}/jobs-manager:1.4 can't be downloaded."
    )
    assert _image_pull(report) == [("fail", "measured", "image-pull.login-refused")] * 3
    text = asking.live("--no-color", "-v")
    snapshot = asking.snapshot("refused")
    saved = "".join(p.read_text() for p in snapshot.rglob("*.yaml"))
    for output in (result.stdout + result.stderr, text.stdout + text.stderr, saved):
        assert WRONG_PASSWORD not in output
        assert REGISTRY_PASSWORD not in output
    assert "registry-images" in " ".join(p.name for p in (snapshot / "reads").iterdir()), (
        "precondition: the snapshot saved the registry's answers"
    )


def test_a_bearer_token_login_reaches_the_registry(
    asking: Doctor, open_registry: Registry, token_registry: TokenFront
) -> None:
    """The token flow Docker Hub and others use (a 401 challenge, a token from the realm it
    names for the pod's login): refresh's client, as refresh uses it."""
    _push_environment(open_registry)
    asking.load(_environment(token_registry.host))
    result = asking.live("-o", "json")
    assert result.exit_code == 0
    assert _image_pull(result.json()) == [("ok", "measured", "image-pull.ok")]
    asked = [auth for path, auth in token_registry.seen if path.startswith("/v2/")]
    assert any(path.startswith("/token") for path, _ in token_registry.seen), (
        "precondition: the token service was asked"
    )
    assert f"Bearer {token_registry.token}" in asked


@pytest.mark.parametrize(
    ("password", "code"),
    [
        (REGISTRY_PASSWORD, "image-pull.repository-not-allowed"),
        (WRONG_PASSWORD, "image-pull.login-refused"),
    ],
)
def test_a_login_accepted_but_not_let_read_the_repository_is_no_wrong_password(
    asking: Doctor, open_registry: Registry, token_registry: TokenFront, password: str, code: str
) -> None:
    """The token service grants the robot's login a token with no access to `trainer`, and the
    registry answers the manifest 401 `error="insufficient_scope"` (distribution
    registry/auth/token/accesscontroller.go, Authorized; Docker Hub answers so for a private
    repository the account may not read and for one that does not exist; containerd then says
    `pull access denied, repository does not exist or may require authorization: server
    message: insufficient_scope: authorization failed`, remotes/docker/authorizer.go
    invalidAuthorization and resolver.go Resolve): the login was accepted, the repository was
    not, or is not there. A wrong password is refused by the token service itself (401): the
    login is refused, as ever."""
    _push_environment(open_registry)
    token_registry.no_access.add("trainer")
    host = token_registry.host
    asking.load(_environment(host, login=("robot", password)))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert report["headline"]["code"] == code
    image = f"{host}/trainer:2.1"
    if code == "image-pull.login-refused":
        assert _image_pull(report) == [("fail", "measured", code)] * 3
        return
    assert _image_pull(report) == [("fail", "measured", code)]
    assert report["headline"]["text"] == (
        f"The registry {host} accepts the registry login 'regcred' but won't let it download "
        f"{image}: the image doesn't exist there, or the login's account may not read it."
    )
    assert report["headline"]["remedy"] == (
        f"Check that {image} exists in {host} (its name and tag in the settings of the training "
        "job 'train-001'), and give the account of 'regcred' read access to it there."
    )
    assert _details(report) == [
        f"{host} granted a token, then refused pull access to trainer with it (insufficient_scope)",
        "asked with the imagePullSecrets regcred",
    ]
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"


def test_an_anonymous_token_refused_the_repository_is_no_word_that_the_image_exists(
    asking: Doctor, open_registry: Registry, token_registry: TokenFront
) -> None:
    """Docker Hub hands out a token without a login and answers a repository the token may
    not read 401 `insufficient_scope`, whether the repository is private or does not exist:
    with no login of the pods' own, the registry wants one or has no such image, and the
    words say both."""
    _push_environment(open_registry)
    token_registry.anonymous = True
    host = token_registry.host
    asking.load(_environment(host, login=None))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.login-needed")
    assert report["headline"]["text"] == (
        f"The registry {host} won't hand out {host}/jobs-manager:1.4 without a login (it "
        "doesn't exist there, or needs a login), and the workload 'jobs-manager' has no "
        "registry login for it."
    )
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")] * 3
    assert (
        f"{host} granted a token, then refused pull access to jobs-manager with it "
        "(insufficient_scope)" in _details(report)
    )
    assert [p for p, auth in token_registry.seen if p.startswith("/token") and auth is None], (
        "precondition: the token service handed out a token without a login"
    )
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"


@pytest.mark.parametrize(
    ("image", "expected"),
    [("python:3.12", (0, "ready")), ("pyhton:3.12", (2, "image-pull.login-needed"))],
)
def test_an_official_image_that_does_not_exist_is_refused_though_the_pods_send_logins(
    asking: Doctor, open_registry: Registry, hub: DockerHub, image: str, expected: tuple[int, str]
) -> None:
    """A misspelt Docker Hub official image (`pyhton`): Docker Hub hands out a token without a
    login and answers a repository that does not exist as one that is private, 401
    `insufficient_scope` (docker-archive/docker-registry#1071); containerd stops the pull with
    `pull access denied, repository does not exist or may require authorization`
    (remotes/docker/resolver.go, Resolve). The pods name a login, but none for Docker Hub, so
    the kubelet pulls it anonymously (kuberuntime_image.go PullImage) exactly as for pods that
    name none: the same finding, and never ready. The real `python` is served to anyone."""
    _push_environment(open_registry)
    open_registry.push_image("library/python", "3.12", content="python")
    hub.front.public.add("library/python")
    environment = _environment(open_registry.host)

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = image
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == expected
    official = f"docker.io/library/{image}"
    assert any(p.startswith("/v2/library/") for p, _ in hub.front.seen), (
        "precondition: Docker Hub was asked"
    )
    if expected[0] == 0:
        assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
        assert any(d.startswith(f"{official} (the training job") for d in _details(report))
        return
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")]
    assert report["headline"]["text"] == (
        f"The registry docker.io won't hand out {official} without a login (it doesn't exist "
        "there, or needs a login), and the training job 'train-001' has no registry login for "
        "it."
    )
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"


@pytest.mark.parametrize("split", [False, True], ids=["one-login", "two-logins"])
def test_an_empty_docker_hub_entry_keeps_the_other_login_s_entry_away_in_any_login(
    asking: Doctor, open_registry: Registry, hub: DockerHub, split: bool
) -> None:
    """A private Docker Hub image, and the entries `docker.io: {}` and
    `https://index.docker.io/v1/: <the account's login>`, in one login or in two the pods name.
    The kubelet puts every login of the pod into one keyring (pkg/credentialprovider/secrets/
    secrets.go, MakeDockerKeyring), files the empty entry too (keyring.go, Add), and Lookup
    finds the key `docker.io`, so it never falls back to `index.docker.io`: the machines pull
    without a login, whichever login holds which entry. doctor asks the same way, sends the
    account's login in neither case, and gives one answer."""
    _push_environment(open_registry)
    open_registry.push_image("team/private", "1", content="private")
    host = open_registry.host
    own = {host: {"auth": _b64(f"robot:{REGISTRY_PASSWORD}")}}
    hub_login = {"https://index.docker.io/v1/": {"auth": _b64(":".join(HUB_USER))}}
    environment = _with_login_entries(host, own if split else {**own, "docker.io": {}, **hub_login})

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        spec = find(objects, "Job", "train-001")["spec"]["template"]["spec"]
        spec["containers"][0]["image"] = "team/private:1"
        if split:
            names = ("regcred", "hub-empty", "hub-login")
            spec["imagePullSecrets"] = [{"name": n} for n in names]
            objects += [
                _secret_holding("hub-empty", {"docker.io": {}}),
                _secret_holding("hub-login", hub_login),
            ]
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (3, "image-pull.image-unchecked")
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")]
    empty = "hub-empty" if split else "regcred"
    assert (
        f"the registry logins {empty} hold no user name and password for docker.io, which "
        "refuses to answer without one"
    ) in _details(report)
    tokens = [auth for path, auth in hub.front.seen if path.startswith("/token")]
    assert tokens, "precondition: Docker Hub's token service was asked"
    assert tokens == [None] * len(tokens), "the account's login is never sent"
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"


def _secret_holding(name: str, auths: Mapping[str, object]) -> Obj:
    """A registry login of namespace `train` named `name`, holding `auths` as written."""
    login: Obj = pull_login("unused.example.com", "x", "y", name=name)
    login["data"] = {".dockerconfigjson": _b64(json.dumps({"auths": auths}))}
    return login


def test_a_private_registry_and_no_login_is_a_failure_inferred(
    asking: Doctor, registry: Registry
) -> None:
    """The registry wants a login (measured) and the pods send none: the machines may hold one
    of their own that doctor cannot see (a node's config.json), so the failure is inferred."""
    _push_environment(registry)
    host = registry.host
    asking.load(_environment(host, login=None))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "inferred-failure",
        "image-pull.login-needed",
    )
    assert report["headline"]["text"] == (
        f"The registry {host} won't hand out {host}/jobs-manager:1.4 without a login (it "
        "doesn't exist there, or needs a login), and the workload 'jobs-manager' has no "
        "registry login for it."
    )
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")] * 3


@pytest.mark.parametrize("other_login", [False, True], ids=["no-login", "login-for-another"])
def test_no_login_covering_a_registry_that_wants_one_is_inferred_whatever_else_is_named(
    asking: Doctor, registry: Registry, other_login: bool
) -> None:
    """The registry wants a login (401 to the anonymous look-up) and no login of the pods
    covers it, whether they name none or one for another registry only. Either way the kubelet
    pulls with its keyring of the pod's logins joined to the machine's own
    (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring: UnionDockerKeyring with the
    default keyring), which a node's config.json or a credential provider may fill: a login
    named for another registry measures nothing more, so both failures are inferred."""
    _push_environment(registry)
    host = registry.host
    environment = _environment(host, login=("robot", REGISTRY_PASSWORD) if other_login else None)

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        if other_login:  # `regcred` holds a login for another registry alone
            find(objects, "Secret", "regcred").update(
                pull_login("other.example.com", "robot", REGISTRY_PASSWORD)
            )
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["rule"]) == (2, "inferred-failure")
    assert {basis for _, basis, _ in _image_pull(report)} == {"inferred"}


MANAGER_POD = "jobs-manager-abc12"
"""The manager's running pod in the healthy namespace (tests/support/scenarios.py pod_for)."""


def _pulled_event(now: datetime, pod: str, container: str, message: str, **source: str) -> Obj:
    """The kubelet's Normal `Pulled` Event about `pod`'s `container`, as a kubelet writes it
    (pkg/kubelet/images/image_manager.go EnsureImageExists, `message` naming the image as the
    pod states it; source `kubelet` on the machine, pkg/kubelet/kubelet.go), or as the
    `component` of `source` does."""
    component = source.get("component", "kubelet")
    said = ts(now - timedelta(minutes=50))
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{pod}.17a1c2d3e4f5a6b7",
            "namespace": "train",
            "creationTimestamp": said,
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod,
            "namespace": "train",
            "uid": f"uid-{pod}",
            "fieldPath": f"spec.containers{{{container}}}",
        },
        "reason": "Pulled",
        "message": message,
        "source": {"component": component, "host": source.get("host", "cpu-1")},
        "firstTimestamp": said,
        "lastTimestamp": said,
        "count": 1,
        "type": "Normal",
        "reportingComponent": component,
        "reportingInstance": source.get("host", "cpu-1"),
    }


DOWNLOADED = (
    'Successfully pulled image "{image}" in 3.1s (3.1s including waiting). Image size: 2048 bytes.'
)
"""The kubelet's word that it downloaded the image for the pod (image_manager.go
EnsureImageExists)."""
ALREADY_PRESENT = 'Container image "{image}" already present on machine'
"""The kubelet's word that it downloaded nothing: the image was on the machine (same)."""


def _new_tag_where_the_machines_pulled_without_a_login(
    host: str, *, other_login: bool = False, sign: str = "downloaded"
) -> Any:
    """The healthy namespace on `host`, every pod running its image (imageIDs) though none
    names a registry login, nor does its account. The training job's template asks for a new
    image there, `team/trainer:2.2`, naming no login (`other_login` False), or `regcred`,
    which holds one for another registry only. What the cluster says of the manager's image
    on its machine, `sign`: `downloaded`, the kubelet's `Pulled` Event that it downloaded it
    for the manager's pod; `always`, the manager pulls it on every start (imagePullPolicy
    Always) and runs; `present`, the kubelet's Event that it was already on the machine;
    `present-since-1.33`, the same in its words since Kubernetes 1.33; `no-event`, the imageID
    alone (IfNotPresent); `pod-gone`, the kubelet downloaded it for a pod no longer stored, whose
    logins no one can tell."""
    environment = _environment(host, login=None, pulled=True)
    manager = f"{host}/jobs-manager:1.4"

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        spec = find(objects, "Job", "train-001")["spec"]["template"]["spec"]
        spec["containers"][0]["image"] = f"{host}/team/trainer:2.2"
        if other_login:
            spec["imagePullSecrets"] = [{"name": "regcred"}]
            objects.append(pull_login("other.example.com", "robot", REGISTRY_PASSWORD))
        pod = find(objects, "Pod", MANAGER_POD)
        pod["metadata"]["uid"] = f"uid-{MANAGER_POD}"
        if sign == "always":
            for pod_spec in (
                find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"],
                pod["spec"],
            ):
                pod_spec["containers"][0]["imagePullPolicy"] = "Always"
            return objects
        message = {
            "downloaded": DOWNLOADED,
            "pod-gone": DOWNLOADED,
            "present": ALREADY_PRESENT,
            "present-since-1.33": ALREADY_PRESENT + " and can be accessed by the pod",
        }.get(sign)
        if message is None:
            return objects
        name = "jobs-manager-old77" if sign == "pod-gone" else MANAGER_POD
        container = pod["spec"]["containers"][0]["name"]
        return [*objects, _pulled_event(now, name, container, message.format(image=manager))]

    return build


def _push_new_tag(registry: Registry) -> None:
    for repository, tag in (
        ("jobs-manager", "1.4"),
        ("library/mysql", "8.0"),
        ("team/trainer", "2.2"),
    ):
        registry.push_image(repository, tag, content=repository)


@pytest.mark.parametrize("sign", ["downloaded", "always"])
@pytest.mark.parametrize("other_login", [False, True], ids=["no-login", "login-for-another"])
def test_a_registry_the_machines_pulled_from_without_a_login_may_take_their_own(
    asking: Doctor, registry: Registry, other_login: bool, sign: str
) -> None:
    """The registry wants a login of everyone (401 to an anonymous look-up), yet the kubelet
    downloaded the manager's image from it for a pod that names no login (its `Pulled` Event
    says so, or the pod pulls on every start and runs): the machines hold one of their own (a
    node's config.json, a kubelet credential provider), which the kubelet joins to the pod's
    (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring). Asked without a login, the
    registry refuses the manager's image too, so that download needed one: whether the new
    image downloads is the machines' login's to say, unknown, never a login measured missing.
    Pulled on every start, the manager's image is itself refused doctor's look-up, unknown
    alike."""
    _push_new_tag(registry)
    host = registry.host
    asking.load(
        _new_tag_where_the_machines_pulled_without_a_login(host, other_login=other_login, sign=sign)
    )
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (3, "image-pull.image-unchecked")
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")] * (
        2 if sign == "always" else 1
    )
    found = next(f for f in report["findings"] if f"{host}/team/trainer:2.2" in f["headline"])
    assert found["headline"] == (
        f"Couldn't check whether the image {host}/team/trainer:2.2 is in its registry: the "
        f"machines may log in to {host} on their own (they downloaded {host}/jobs-manager:1.4 "
        "from it for a program that sends no registry login), and doctor can't use that login."
    )
    assert found["remedy"] == (
        "Nothing to do if the image downloads on the machines; if it doesn't, give the programs "
        f"that use it a registry login for {host}; --no-registry skips this look-up."
    )
    details = _details(report)
    proof = {
        "downloaded": "the kubelet's Pulled event says it downloaded it",
        "always": "its container pulls it on every start (imagePullPolicy Always) and runs",
    }[sign]
    assert (
        f"{host}/jobs-manager:1.4 was pulled by a machine for the pod {MANAGER_POD}, which names "
        f"no imagePullSecrets: {proof}"
    ) in details
    assert any(
        d.startswith(
            f"{host}/jobs-manager:1.4: asked without a login, {host} does not hand it out: "
        )
        for d in details
    ), details
    assert asking.round_trips == 1, "precondition: the snapshot's answers gave the same verdict"


@pytest.mark.parametrize("sign", ["present", "present-since-1.33", "no-event", "pod-gone"])
def test_an_image_the_machine_already_held_says_nothing_of_the_machines_logins(
    asking: Doctor, registry: Registry, sign: str
) -> None:
    """The manager's pod names no login and runs its image, but the kubelet downloaded
    nothing for it: the image was already on the machine (its `Pulled` Event says so, or
    nothing does and the pod pulls only when missing). The kubelet sets the container's
    imageID either way, and with IfNotPresent starts a present image without any login
    (pkg/kubelet/images/image_manager.go EnsureImageExists, shouldPullImage; the
    KubeletEnsureSecretPulledImages gate, which would check, is off by default before 1.35):
    another pod's login, or a preloaded machine, put it there. Nor does a download for a pod
    no longer stored say anything: its logins are unknown. So nothing says the machines log
    in on their own: the registry's 401 for the new image stays a login needed, inferred, and
    no look-up more is made."""
    _push_new_tag(registry)
    host = registry.host
    asking.load(_new_tag_where_the_machines_pulled_without_a_login(host, sign=sign))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.login-needed")
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")]
    assert report["headline"]["text"] == (
        f"The registry {host} won't hand out {host}/team/trainer:2.2 without a login (it "
        "doesn't exist there, or needs a login), and the training job 'train-001' has no "
        "registry login for it."
    )
    assert not any("jobs-manager" in d for d in _details(report)), _details(report)


def test_a_pull_without_a_login_of_an_image_served_to_anyone_says_nothing_of_the_machines(
    asking: Doctor, open_registry: Registry, token_registry: TokenFront
) -> None:
    """The registry hands the manager's and the database's images to anyone (public, as a
    token without a login may read them) and wants a login for the new one: the kubelet's
    download of the manager's image for a pod naming no login needed no login, so nothing
    says the machines hold one. The new image is a login needed, inferred as ever."""
    for repository, tag in (("jobs-manager", "1.4"), ("library/mysql", "8.0")):
        open_registry.push_image(repository, tag, content=repository)
    token_registry.anonymous = True
    token_registry.public |= {"jobs-manager", "library/mysql"}
    host = token_registry.host
    asking.load(_new_tag_where_the_machines_pulled_without_a_login(host))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.login-needed")
    assert _image_pull(report) == [("fail", "inferred", "image-pull.login-needed")]
    assert report["headline"]["text"] == (
        f"The registry {host} won't hand out {host}/team/trainer:2.2 without a login (it "
        "doesn't exist there, or needs a login), and the training job 'train-001' has no "
        "registry login for it."
    )
    asked = {p.partition("?")[0] for p, _ in token_registry.seen if "/manifests/" in p}
    assert asked == {"/v2/team/trainer/manifests/2.2", "/v2/jobs-manager/manifests/1.4"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_registry_that_cannot_be_reached_is_unknown_never_a_failure(asking: Doctor) -> None:
    host = f"127.0.0.1:{_closed_port()}"
    asking.load(_environment(host))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")] * 3
    assert report["headline"]["text"] == (
        f"Couldn't check whether the image {host}/jobs-manager:1.4 is in its registry: "
        f"couldn't connect to {host}."
    )
    assert report["headline"]["remedy"] == (
        f"Check that this computer reaches {host} as the machines do, then run again; "
        "--no-registry skips this look-up."
    )
    assert {"check": "image-pull", "reason": f"couldn't connect to {host}"} in report["coverage"][
        "not_checked"
    ]


def test_a_snapshot_counts_a_registry_it_could_not_reach_as_a_read_not_made(
    asking: Doctor, tmp_path: Path
) -> None:
    """snapshot --help: "3 saved but some reads could not be made". doctor on the snapshot
    can't check the images the unreachable registry holds, as live: the snapshot says so."""
    host = f"127.0.0.1:{_closed_port()}"
    asking.load(_environment(host))
    saved = run_cli(
        "snapshot",
        "--kubeconfig",
        str(asking.kubeconfig),
        *asking.registry_flags(),
        "--output-directory",
        str(tmp_path / "snap"),
        "-o",
        "json",
    )
    summary = saved.json()
    assert (saved.exit_code, summary["verdict"]) == (3, "incomplete"), saved.stderr
    unreached = f"(could not connect to {host})"
    assert sorted(r for r in summary["could_not_read"] if r.startswith("whether ")) == [
        f"whether {host}/{image} is in its registry {unreached}"
        for image in ("jobs-manager:1.4", "library/mysql:8.0", "trainer:2.1")
    ]
    assert summary["failed_reads"] == len(summary["could_not_read"])
    offline = asking.offline(tmp_path / "snap", "-o", "json")
    assert offline.exit_code == 3


def test_a_registry_no_login_covers_that_cannot_be_reached_is_unknown_never_a_failure(
    asking: Doctor,
) -> None:
    """The pods' one login is for another registry, and theirs cannot be reached: with no login
    that applies the kubelet pulls anonymously (kuberuntime_image.go PullImage), which may work,
    so the missing login is no measured failure; the unreachable registry's unknowns speak."""
    host = f"127.0.0.1:{_closed_port()}"
    other: dict[str, object] = {"other-registry.example.com": {"auth": _b64("robot:pw")}}
    asking.load(_with_login_entries(host, other))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")] * 3
    assert report["headline"]["text"] == (
        f"Couldn't check whether the image {host}/jobs-manager:1.4 is in its registry: "
        f"couldn't connect to {host}."
    )


def test_no_registry_asks_none_and_says_so(asking: Doctor) -> None:
    with ScriptedApi(serving_manifests) as scripted:
        asking.load(_environment(f"127.0.0.1:{scripted.port}"))
        asked = asking.live("-o", "json")
        made = len(scripted.received)
        skipped = asking.live("-o", "json", "--no-registry")
        text = asking.live("--no-color", "--no-registry").stdout.splitlines()
        assert len(scripted.received) == made, "--no-registry sent a request to the registry"
    assert sorted(r.method for r in scripted.received) == ["GET"] * 2 + ["HEAD"] * 4, (
        "precondition: a run asks once per image (HEAD), the judged job's with a GET; and its "
        "snapshot once more"
    )
    assert asked.json()["coverage"]["not_checked"] == []
    assert skipped.exit_code == asked.exit_code == 0
    assert skipped.json()["coverage"]["not_checked"] == [
        {
            "check": "image-pull",
            "reason": "not asked for: whether the images are in their registry: --no-registry",
        }
    ]
    assert text[-1] == (
        "10 checks measured. Not asked for: image-pull (whether the images are in their "
        "registry: --no-registry)."
    )


def test_the_config_file_turns_the_look_ups_off(asking: Doctor, tmp_path: Path) -> None:
    config = tmp_path / "doctor.yaml"
    config.write_text("no-registry: true\n")
    with ScriptedApi(serving_manifests) as scripted:
        asking.load(_environment(f"127.0.0.1:{scripted.port}"))
        result = asking.live("-o", "json", "--config", str(config))
        assert scripted.received == []
    assert result.json()["coverage"]["not_checked"][0]["reason"].endswith("--no-registry")
    config.write_text("no-registry: sometimes\n")
    refused = run_cli("doctor", "--kubeconfig", str(asking.kubeconfig), "--config", str(config))
    assert (refused.exit_code, refused.stderr.strip()) == (
        64,
        f"truegreen: config {config}: no_registry must be true or false",
    )


def test_offline_doctor_answers_from_the_snapshot_and_never_dials(asking: Doctor) -> None:
    with ScriptedApi(serving_manifests) as scripted:
        asking.load(_environment(f"127.0.0.1:{scripted.port}"))
        live = asking.live("-o", "json").json()
        before = len(scripted.received)
        folder = asking.snapshot("asked")
        made = len(scripted.received)
        offline = asking.offline(folder, "-o", "json").json()
        assert len(scripted.received) == made, "doctor --snapshot asked the registry"
    assert made - before == 3, "precondition: the snapshot asked about the 3 images"
    assert _details(offline) == _details(live)
    assert f"{MANIFEST_LAYER_BYTES / 1e6:.1f} MB to download" in _details(offline)[-1]
    record = json.loads(next((folder / "reads").glob("*-registry-images.yaml")).read_text())
    assert [entry["answer"]["presence"] for entry in record["result"]["lookups"]] == ["present"] * 3


def test_an_image_the_snapshot_holds_no_answer_for_is_unknown(
    asking: Doctor, tmp_path: Path
) -> None:
    """A job file judged offline may name an image the snapshot's registry answers do not
    cover: that image is unknown, and the rest stands."""
    with ScriptedApi(serving_manifests) as scripted:
        host = f"127.0.0.1:{scripted.port}"
        objects = asking.load(_environment(host))
        folder = asking.snapshot("asked")
    job = json.loads(json.dumps(find(objects, "Job", "train-001")))
    job["metadata"]["name"] = "train-next"
    job["spec"]["template"]["spec"]["containers"][0]["image"] = f"{host}/trainer:3.0"
    job_file = tmp_path / "next.json"
    job_file.write_text(json.dumps(job))
    result = asking.offline(folder, "-o", "json", "--job-file", str(job_file))
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")]
    assert report["headline"]["text"] == (
        f"Couldn't check whether the image {host}/trainer:3.0 is in its registry: the snapshot "
        "doesn't include the registry's answer about it."
    )


def test_a_snapshot_that_holds_no_registry_answers_reports_them_not_asked(tmp_path: Path) -> None:
    """A snapshot taken before snapshots held registry answers: a bundled example (taken with
    --no-registry, so it holds none) without that setting, as such a snapshot's settings read."""
    example = Path(__file__).resolve().parents[2] / "examples" / "snapshots" / "healthy"
    folder = tmp_path / "snapshot"
    shutil.copytree(example, folder)
    assert not list((folder / "reads").glob("*-registry-images.yaml")), "precondition"
    meta = folder / "snapshot.yaml"
    assert "  no_registry: 'true'\n" in meta.read_text(), "precondition: taken with --no-registry"
    meta.write_text(meta.read_text().replace("  no_registry: 'true'\n", ""))
    result = run_cli("doctor", "--snapshot", str(folder), "-o", "json")
    assert result.exit_code == 0
    assert result.json()["coverage"]["not_checked"] == [
        {
            "check": "image-pull",
            "reason": "not asked for: whether the images are in their registry: the snapshot "
            "holds no registry answers",
        }
    ]


@pytest.fixture
def slow_registry() -> Iterator[HostileServer]:
    with HostileServer(hostile.drip_headers) as server:
        yield server


def test_a_registry_that_answers_too_slowly_is_unknown_within_the_request_timeout(
    asking: Doctor, slow_registry: HostileServer
) -> None:
    host = f"127.0.0.1:{slow_registry.port}"
    asking.load(_environment(host))
    result = asking.live("-o", "json", "--request-timeout", "0.5")
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")] * 3
    assert f"{host} did not answer in time" in _details(report)
    assert report["headline"]["remedy"].startswith("Run again, or allow each answer more time")


def test_a_manifest_past_the_cap_is_unknown_and_not_read(asking: Doctor) -> None:
    """HEAD answers without a digest, so the manifest is read (GET), as containerd reads it
    then (remotes/docker/resolver.go, Resolve); its body is past the cap (refresh/registry.py
    MAX_ANSWER_BYTES): not read, unknown, for every image."""
    with HostileServer(hostile.huge_manifest) as server:
        host = f"127.0.0.1:{server.port}"
        asking.load(_environment(host))
        result = asking.live("-o", "json")
        assert server.hung_up.wait(10), "the client kept reading past its cap"
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.image-unchecked")] * 3
    assert f"{host}'s answer was larger than 4,194,304 bytes" in _details(report)
    assert report["headline"]["text"] == (
        f"Couldn't check whether the image {host}/jobs-manager:1.4 is in its registry: {host}'s "
        "answer was too large to read."
    )


def test_a_login_goes_only_to_the_registry_it_is_for(asking: Doctor) -> None:
    """The pods' login is for another registry: it is never sent to this one (and as no login
    applies, the image is asked about, and found, anonymously)."""
    with ScriptedApi(serving_manifests) as scripted:
        host = f"127.0.0.1:{scripted.port}"

        def build(now: datetime) -> list[Obj]:
            objects: list[Obj] = _environment(host, login=None)(now)
            for obj in objects:
                template = obj.get("spec", {}).get("template", {}).get("spec")
                if isinstance(template, dict):
                    template["imagePullSecrets"] = [{"name": "regcred"}]
            return [*objects, pull_login(f"127.0.0.1:{_closed_port()}", "robot", "elsewhere")]

        asking.load(build)
        result = asking.live("-o", "json")
        seen = [r.headers.get("authorization") for r in scripted.received]
    report = result.json()
    assert seen, "precondition: the registry was asked"
    assert seen == [None] * len(seen)
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")], (
        "an image the registry serves without a login needs none"
    )


def _every_image_its_own(count: int, host: str) -> Any:
    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = _environment(host)(now)
        manager = find(objects, "Deployment", "jobs-manager")
        containers = manager["spec"]["template"]["spec"]["containers"]
        containers += [
            {**containers[0], "name": f"c{i}", "image": f"{host}/extra:{i}"} for i in range(count)
        ]
        return objects

    return build


def test_a_run_asks_about_at_most_its_bound_of_images(asking: Doctor) -> None:
    """More distinct images than MAX_LOOKUPS: the judged job's are asked first, the rest are
    unknown, said once each; no more requests than the bound."""
    answered: list[Received] = []

    def counting(request: Received, index: int) -> hostile.Answer:
        answered.append(request)
        return serving_manifests(request, index)

    asking.round_trip = False  # the bound is the live run's; its snapshot would ask again
    with ScriptedApi(counting) as scripted:
        host = f"127.0.0.1:{scripted.port}"
        asking.load(_every_image_its_own(MAX_LOOKUPS, host))
        result = asking.live("-o", "json")
    report = result.json()
    # 67 distinct images: the job's (a GET, for its size), the manager's 65, mysql's.
    assert len(answered) == MAX_LOOKUPS == 64
    assert [r.method for r in answered].count("GET") == 1
    assert ("GET", "/v2/trainer/manifests/2.1") in [(r.method, r.target) for r in answered]
    unknown = [f for f in report["findings"] if f["code"] == "image-pull.image-unchecked"]
    assert sorted(f["headline"].split()[5] for f in unknown) == [
        f"{host}/extra:62",
        f"{host}/extra:63",
        f"{host}/library/mysql:8.0",
    ]
    assert all(f["headline"].endswith("at most 64 images a run.") for f in unknown)
    assert result.exit_code == 3


def test_an_answer_without_every_login_of_the_pods_is_no_measurement(asking: Doctor) -> None:
    """The pods' registry login could not be read: the look-up went without it, so what the
    registry said (here: no such image) measures nothing about these pods; the login that
    could not be read is the finding, unknown."""

    def nothing_here(request: Received, _: int) -> hostile.Answer:
        return 404, {}, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'

    with ScriptedApi(nothing_here) as scripted:
        asking.load(_environment(f"127.0.0.1:{scripted.port}"))
        asking.server.inject(Fault.FORBIDDEN, r"/secrets/regcred$")
        result = asking.live("-o", "json")
        assert scripted.received, "precondition: the registry was asked, and said no"
    report = result.json()
    assert result.exit_code == 3
    assert _image_pull(report) == [("unknown", "cant-check", "image-pull.cant-read")]


def _all_pulled(host: str) -> Any:
    """The healthy namespace with every image pulled: the services' pods run theirs, and the
    training job's last pod (Succeeded) ran the trainer, its status still carrying the imageID
    the kubelet set (pkg/kubelet/kuberuntime)."""
    environment = _environment(host, pulled=True)

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        job = find(objects, "Job", "train-001")
        pod = job_pod(job, now, suffix="done", node_name="gpu-1", phase="Succeeded")
        container = pod["spec"]["containers"][0]
        pod["status"]["containerStatuses"] = [
            {
                "name": container["name"],
                "image": container["image"],
                "imageID": f"{host}/trainer@sha256:{'ab' * 32}",
                "ready": False,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
            }
        ]
        return [*objects, pod]

    return build


def test_images_the_machines_pulled_are_the_kubelet_s_word_and_no_registry_is_asked(
    asking: Doctor, open_registry: Registry
) -> None:
    """Each image a container of the namespace runs or ran (its status carries the kubelet's
    imageID) was pulled: that is the measurement. Ready with the real registry serving them,
    and just as ready with every image named on a port nothing listens on: no request made."""
    _push_environment(open_registry)
    for host in (open_registry.host, f"127.0.0.1:{_closed_port()}"):
        asking.load(_all_pulled(host))
        result = asking.live("-o", "json")
        assert (result.exit_code, result.json()["headline"]["code"]) == (0, "ready"), host
        assert _image_pull(result.json()) == [("ok", "measured", "image-pull.ok")]
        assert _details(result.json()) == [
            f"{host}/jobs-manager:1.4 (the workload 'jobs-manager'): pulled by a machine for a "
            "program here",
            f"{host}/library/mysql:8.0 (the workload 'mysql'): pulled by a machine for a "
            "program here",
            f"{host}/trainer:2.1 (the training job 'train-001'): pulled by a machine for a "
            "program here",
        ]
        assert result.json()["coverage"]["not_checked"] == []


def test_an_image_pulled_on_every_start_is_asked_though_a_machine_holds_it(
    asking: Doctor, registry: Registry
) -> None:
    """Every container of every template and pod has `imagePullPolicy: Always`: the kubelet
    pulls again on each start, whatever the machine holds (pkg/kubelet/images/image_manager.go
    shouldPullImage: `case v1.PullAlways: return true`), so the imageIDs spare no request. The
    manager's tag, which its pod runs, is gone from the registry: the next start of its
    container fails to pull."""
    _push_environment(registry)
    host = registry.host
    environment = _all_pulled(host)
    retired = f"{host}/jobs-manager:retired-1.4"

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        find(objects, "Deployment", "jobs-manager")["spec"]["template"]["spec"]["containers"][0][
            "image"
        ] = retired
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["spec"]["containers"][0]["image"] = retired
        pod["status"]["containerStatuses"][0]["image"] = retired
        for obj in objects:
            template = obj.get("spec", {}).get("template", {}).get("spec")
            for spec in (template, obj.get("spec") if obj["kind"] == "Pod" else None):
                for container in spec.get("containers", []) if isinstance(spec, dict) else []:
                    container["imagePullPolicy"] = "Always"
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "image-pull.image-missing")
    assert _image_pull(report) == [("fail", "measured", "image-pull.image-missing")]
    missing = next(f for f in report["findings"] if f["code"] == "image-pull.image-missing")
    assert missing["objects"] == ["Secret/regcred", "Deployment/jobs-manager"]
    assert missing["details"][0] == f"{retired} does not exist in the registry"


def test_an_image_no_machine_has_pulled_is_still_asked(
    asking: Doctor, open_registry: Registry
) -> None:
    """A new tag in the training job's template, which no pod runs yet: the registry is asked
    about that one image (it was never pushed: missing), the running ones are not."""
    _push_environment(open_registry)
    host = open_registry.host
    environment = _environment(host, pulled=True)

    def new_tag(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = f"{host}/trainer:2.2"
        return objects

    asking.load(new_tag)
    result = asking.live("-o", "json")
    assert result.exit_code == 2
    codes = _image_pull(result.json())
    assert ("fail", "measured", "image-pull.image-missing") in codes
    missing = [f for f in result.json()["findings"] if f["code"] == "image-pull.image-missing"]
    assert len(missing) == 1
    assert f"{host}/trainer:2.2" in missing[0]["headline"]
    assert f"{host}/trainer:2.1" not in json.dumps(missing)


def _finished_job_s_pod_gone(host: str, message: str, component: str = "kubelet") -> Any:
    """The healthy namespace whose services run their images, and whose training job finished:
    its pod is gone (PodGC removed it, or the Job's ttlSecondsAfterFinished), and the kubelet's
    Normal `Pulled` Event about it is all that is left, as a kubelet writes it
    (pkg/kubelet/images/image_manager.go EnsureImageExists, `message` naming the image as the
    pod states it; source `kubelet` on the machine, pkg/kubelet/kubelet.go)."""
    environment = _environment(host, pulled=True)

    def build(now: datetime) -> list[Obj]:
        said = message.format(image=f"{host}/trainer:2.1")
        event = _pulled_event(
            now, "train-001-x7k2p", "trainer", said, component=component, host="gpu-1"
        )
        return [*environment(now), event]

    return build


@pytest.mark.parametrize(
    "message",
    [
        'Successfully pulled image "{image}" in 41.2s (41.2s including waiting). Image size: '
        "8123456789 bytes.",
        'Successfully pulled image "{image}" in 41.2s',  # before Kubernetes 1.30
        'Container image "{image}" already present on machine',
        'Container image "{image}" already present on machine and can be accessed by the pod',
    ],
    ids=["pulled", "pulled-before-1.30", "present", "present-since-1.33"],
)
def test_the_kubelet_s_pulled_event_is_its_word_that_a_machine_holds_the_image(
    asking: Doctor, message: str
) -> None:
    """The finished job's pod is gone, its kubelet's `Pulled` Event is not: a machine pulled
    the trainer's image for a pod here (or held it already, which a container status's
    imageID says alike). Counted as the imageID is, so the registry, on a port nothing
    listens on, is never asked: ready, not unknown."""
    host = f"127.0.0.1:{_closed_port()}"
    asking.load(_finished_job_s_pod_gone(host, message))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    assert (
        f"{host}/trainer:2.1 (the training job 'train-001'): pulled by a machine for a program here"
    ) in _details(report)
    asked = {r.query.get("fieldSelector") for r in asking.server.log if r.path.endswith("/events")}
    assert asked == {"reason=Pulled"}


def test_with_the_kubelet_s_events_unread_the_registry_is_asked_as_before(
    asking: Doctor, open_registry: Registry
) -> None:
    """The Pulled Events refused: the kubelet's word is not read, and the registry, asked,
    answers for the trainer's image instead (no finding for the unread Events: the registry's
    answer is the measurement)."""
    _push_environment(open_registry)
    host = open_registry.host
    asking.load(_finished_job_s_pod_gone(host, 'Successfully pulled image "{image}" in 41.2s'))
    asking.server.inject(Fault.FORBIDDEN, "/events$")
    result = asking.live("-o", "json")
    assert (result.exit_code, result.json()["headline"]["code"]) == (0, "ready")
    assert _image_pull(result.json()) == [("ok", "measured", "image-pull.ok")]
    assert any(
        d.startswith(f"{host}/trainer:2.1 (the training job 'train-001'): in its registry")
        for d in _details(result.json())
    )


@pytest.mark.parametrize(
    ("message", "component"),
    [
        ('Successfully pulled image "{image}" in 41.2s', "image-warmer"),
        ('Successfully pulled image "{image}0" in 41.2s', "kubelet"),
        ('Pulling image "{image}"', "kubelet"),
    ],
    ids=["not-the-kubelet", "another-tag", "not-a-pull-done"],
)
def test_a_pulled_event_not_the_kubelet_s_word_on_the_image_leaves_it_to_the_registry(
    asking: Doctor, message: str, component: str
) -> None:
    """Only the kubelet's word that it pulled this very image (or held it) counts: another
    component's Event, another tag, or a pull only begun leaves the registry to answer, and
    on a port nothing listens on it can't."""
    host = f"127.0.0.1:{_closed_port()}"
    asking.load(_finished_job_s_pod_gone(host, message, component))
    result = asking.live("-o", "json")
    assert result.exit_code == 3
    assert _image_pull(result.json()) == [("unknown", "cant-check", "image-pull.image-unchecked")]
    assert result.json()["headline"]["text"] == (
        f"Couldn't check whether the image {host}/trainer:2.1 is in its registry: "
        f"couldn't connect to {host}."
    )


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _with_login_entries(host: str, auths: Mapping[str, object]) -> Any:
    """The healthy namespace served from `host`, its login 'regcred' holding `auths` as written
    (a `.dockerconfigjson` as kubectl or a hand-written file leaves it)."""
    environment = _environment(host)

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        secret = find(objects, "Secret", "regcred")
        config = json.dumps({"auths": auths}).encode()
        secret["data"] = {".dockerconfigjson": base64.b64encode(config).decode()}
        return objects

    return build


def _outputs(doctor: Doctor, tag: str) -> str:
    """Everything a run shows or saves: JSON, verbose text, a snapshot."""
    shown = doctor.live("-o", "json")
    text = doctor.live("--no-color", "-v")
    saved = "".join(p.read_text() for p in doctor.snapshot(tag).rglob("*.yaml"))
    return shown.stdout + shown.stderr + text.stdout + text.stderr + saved


@pytest.mark.parametrize(
    ("username", "password", "auth", "expected"),
    [
        ("robot", REGISTRY_PASSWORD, f"robot:{WRONG_PASSWORD}", (2, "image-pull.login-refused")),
        ("robot", WRONG_PASSWORD, f"robot:{REGISTRY_PASSWORD}", (0, "ready")),
    ],
)
def test_the_login_in_auth_is_the_one_the_kubelet_sends(
    asking: Doctor,
    registry: Registry,
    username: str,
    password: str,
    auth: str,
    expected: tuple[int, str],
) -> None:
    """An entry with both `auth` and `username`/`password`: the kubelet decodes a non-empty
    `auth` and it replaces the user name and password (kubernetes/kubernetes
    pkg/credentialprovider/config.go, DockerConfigEntry.UnmarshalJSON), so that is the login
    the registry is asked with."""
    _push_environment(registry)
    host = registry.host
    entry = {"username": username, "password": password, "auth": _b64(auth)}
    asking.load(_with_login_entries(host, {host: entry}))
    result = asking.live("-o", "json")
    assert (result.exit_code, result.json()["headline"]["code"]) == expected
    output = _outputs(asking, "auth-wins")
    for secret in (REGISTRY_PASSWORD, WRONG_PASSWORD, _b64(auth)):
        assert secret not in output


@pytest.mark.parametrize(
    "entry",
    [{"auth": _b64("robot:")}, {"username": "robot", "password": ""}],
    ids=["auth", "username-and-password"],
)
def test_a_login_with_an_empty_password_asks_a_token_service_without_one(
    asking: Doctor, open_registry: Registry, token_registry: TokenFront, entry: dict[str, str]
) -> None:
    """The same user name and empty password, in `auth` or spelt out: the kubelet reads both
    alike (config.go decodeDockerConfigFieldAuth; keyring.go Add keeps the user name and
    password alone) and hands containerd that user name and no password (CRI ParseAuth), which
    sends credentials to a token service only with a password (core/remotes/docker/
    authorizer.go, doBearerAuth: `if to.Secret != ""`), else asks for a token anonymously. The
    registry serves its images to anyone: both spellings are ready, and no login is sent."""
    _push_environment(open_registry)
    token_registry.anonymous = True
    token_registry.public |= {"jobs-manager", "library/mysql", "trainer"}
    host = token_registry.host
    asking.load(_with_login_entries(host, {host: entry}))
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready")
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    tokens = [auth for path, auth in token_registry.seen if path.startswith("/token")]
    assert tokens, "precondition: the token service was asked"
    assert tokens == [None] * len(tokens), "no login goes to the token service"


PADDED_PASSWORD = "reg-s3cret-PASSWORD-77a1x"
"""A password whose login (`robot:` and it) is base64 with `==` padding: 31 bytes."""


@pytest.fixture(scope="module")
def padded_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A real docker-registry whose login `robot:PADDED_PASSWORD` needs base64 padding."""
    with running_registry(
        tmp_path_factory.mktemp("padded"), username="robot", password=PADDED_PASSWORD
    ) as running:
        yield running


def test_an_unpadded_auth_is_read_as_the_kubelet_reads_it(
    asking: Doctor, padded_registry: Registry
) -> None:
    """`auth` without its `=` padding: decodeDockerConfigFieldAuth (kubernetes/kubernetes
    pkg/credentialprovider/config.go) decodes a field that does not end in `=` with
    base64.RawStdEncoding, so the kubelet logs in with it."""
    _push_environment(padded_registry)
    host = padded_registry.host
    auth = _b64(f"robot:{PADDED_PASSWORD}")
    assert auth.endswith("=="), "precondition: the login's base64 is padded"
    asking.load(_with_login_entries(host, {host: {"auth": auth.rstrip("=")}}))
    result = asking.live("-o", "json")
    assert (result.exit_code, result.json()["headline"]["code"]) == (0, "ready")
    assert _image_pull(result.json()) == [("ok", "measured", "image-pull.ok")]
    assert PADDED_PASSWORD not in _outputs(asking, "unpadded")


@pytest.mark.parametrize(
    ("auths", "broken"),
    [
        # a good user name and password, and an `auth` that is not base64
        ({"{host}": {"username": "robot", "password": REGISTRY_PASSWORD, "auth": "%%%"}}, "{host}"),
        # a good login for the image's registry, and one for another whose `auth` has no `:`
        (
            {
                "{host}": {"auth": _b64(f"robot:{REGISTRY_PASSWORD}")},
                "other.example.com": {"auth": _b64(f"robot-{REGISTRY_PASSWORD}")},
            },
            "other.example.com",
        ),
    ],
)
def test_a_login_the_kubelet_cannot_decode_is_damaged(
    asking: Doctor, registry: Registry, auths: dict[str, Any], broken: str
) -> None:
    """An entry whose `auth` decodeDockerConfigFieldAuth refuses (not base64, or no `:` once
    decoded) fails json.Unmarshal of the whole login, whichever registry the entry is for
    (kubernetes/kubernetes pkg/credentialprovider/config.go, DockerConfigEntry.UnmarshalJSON);
    MakeDockerKeyring (pkg/credentialprovider/secrets/secrets.go) returns that error and
    PullImage (pkg/kubelet/kuberuntime/kuberuntime_image.go) fails every pull of the pod."""
    _push_environment(registry)
    host = registry.host
    written = {k.format(host=host): v for k, v in auths.items()}
    asking.load(_with_login_entries(host, written))
    result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert report["headline"]["code"] == "image-pull.login-damaged"
    assert report["headline"]["text"] == (
        "Training images can't be downloaded: the registry login 'regcred' is damaged."
    )
    assert _image_pull(report) == [("fail", "measured", "image-pull.login-damaged")]
    assert _details(report) == [
        f"secret regcred (kubernetes.io/dockerconfigjson): its login for "
        f"{broken.format(host=host)} does not parse, so the machines read none of its logins"
    ]
    output = _outputs(asking, "damaged")
    assert REGISTRY_PASSWORD not in output
    for entry in written.values():
        assert entry["auth"] not in output


PAGE = b"<html><body><h1>Please sign in</h1></body></html>"
"""What a captive portal or a single sign-on page answers to every request."""


@pytest.mark.parametrize(
    ("content_type", "unknown", "detail"),
    [
        # every answer a web page: no image's presence is measured
        (
            "text/html; charset=utf-8",
            ["jobs-manager:1.4", "library/mysql:8.0", "trainer:2.1"],
            "{host} answered with a web page (text/html), not an image manifest",
        ),
        # a manifest's media type on a web page, and no digest: read, it is no manifest
        (
            "application/vnd.oci.image.manifest.v1+json",
            ["jobs-manager:1.4", "library/mysql:8.0", "trainer:2.1"],
            "{host} sent a manifest that is not a JSON document",
        ),
    ],
)
def test_a_host_that_answers_a_web_page_is_unknown_never_present(
    asking: Doctor, content_type: str, unknown: list[str], detail: str
) -> None:
    """A host answering 200 with a web page to every request (a captive portal, a sign-in
    page): containerd takes the answer's Content-Type as the manifest's media type
    (containerd remotes/docker/resolver.go, Resolve and getManifestMediaType) and refuses one
    that is neither a manifest nor an index (core/images/image.go, Manifest: "unexpected media
    type"); with no Docker-Content-Digest it reads the manifest itself (GET), and a body that is
    not JSON does not unmarshal as one: no pull succeeds there, and doctor has not seen the
    image."""

    def portal(request: Received, _: int) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": content_type}, PAGE

    with ScriptedApi(portal) as scripted:
        host = f"127.0.0.1:{scripted.port}"
        asking.load(_environment(host, login=None))
        result = asking.live("-o", "json")
    report = result.json()
    assert result.exit_code == 3
    unchecked = [f for f in report["findings"] if f["code"] == "image-pull.image-unchecked"]
    assert sorted(f["headline"] for f in unchecked) == [
        f"Couldn't check whether the image {host}/{image} is in its registry: {host}'s answer "
        "could not be understood."
        for image in unknown
    ]
    assert {(f["status"], f["basis"]) for f in unchecked} == {("unknown", "cant-check")}
    assert {f["details"][0] for f in unchecked} == {detail.format(host=host)}
    assert not [f for f in report["findings"] if f["code"] == "image-pull.ok"]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("localhost:{port}", (2, "image-pull.no-login-for-registry")),
        ("LOCALHOST:{port}", (0, "ready")),
    ],
)
def test_a_login_covers_a_registry_named_in_its_own_case_only(
    asking: Doctor, registry: Registry, key: str, expected: tuple[int, str]
) -> None:
    """Images named `LOCALHOST:PORT/…`: distribution/reference keeps a domain's case
    (normalize.go ParseNormalizedNamed, splitDockerDomain), so the kubelet looks the login up
    by `LOCALHOST:PORT/trainer` (pkg/util/parsers ParseImageName, pkg/kubelet/images
    image_manager.go), and its keyring compares each host part with filepath.Match, which is
    case-sensitive (pkg/credentialprovider/keyring.go URLsMatch): a login keyed
    `localhost:PORT` is not sent, the registry wants one, and no login of the pods covers it."""
    _push_environment(registry)
    port = registry.host.rsplit(":", 1)[1]
    host = f"LOCALHOST:{port}"
    written = key.format(port=port)
    asking.load(_with_login_entries(host, {written: {"auth": _b64(f"robot:{REGISTRY_PASSWORD}")}}))
    result = asking.live("--registry-allow", "localhost", "-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == expected
    if expected[0] == 2:
        assert _image_pull(report) == [("fail", "inferred", "image-pull.no-login-for-registry")]
        assert report["headline"]["text"] == (
            f"Training images from {host} can't be downloaded: no registry login covers it."
        )
        assert _details(report) == [f"no imagePullSecret among regcred has credentials for {host}"]
    else:
        assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("registry-1.docker.io", (0, "image-pull.no-login-not-asked")),
        ("example.com", (0, "image-pull.no-login-not-asked")),
        ("https://index.docker.io/v1/", (0, "ready")),
        ("index.docker.io", (0, "ready")),
        ("docker.io", (0, "ready")),
    ],
)
def test_a_docker_hub_login_covers_docker_hub_by_the_keyring_s_names(
    doctor: Doctor, key: str, expected: tuple[int, str]
) -> None:
    """A private Docker Hub image (`team/private-trainer:2.1`, the registry not asked): the
    kubelet's keyring matches `docker.io` only by a key of as many host parts, and otherwise
    falls back to the key `index.docker.io` alone, which `https://index.docker.io/v1/` is filed
    under (pkg/credentialprovider/keyring.go Add, Lookup, defaultRegistryHost): a login keyed
    `registry-1.docker.io` is never sent, and the kubelet pulls anonymously, which works only
    if Docker Hub serves the image to anyone: the registry not asked, a warning says so."""

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = healthy(now)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["containers"][0]["image"] = "team/private-trainer:2.1"
        secret = find(objects, "Secret", "regcred")
        auths = {h: {"auth": _b64("robot:pw")} for h in ("registry.example.com", key)}
        config = json.dumps({"auths": auths}).encode()
        secret["data"] = {".dockerconfigjson": base64.b64encode(config).decode()}
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    code = expected[1]
    if code == "ready":
        assert (result.exit_code, report["headline"]["code"]) == expected
        assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    else:
        assert result.exit_code == expected[0]
        assert _image_pull(report) == [("warn", "inferred", code)]
        assert _details(report) == [
            "no imagePullSecret among regcred has credentials for docker.io",
            "the registry was not asked whether it needs one",
        ]


@pytest.mark.parametrize(
    "config",
    [
        {"credsStore": "desktop"},  # a fresh Docker Desktop config.json, no login in it
        {"auths": None},
        {"AUTHS": {}},
    ],
)
def test_a_login_that_holds_no_entries_is_empty_not_damaged(
    asking: Doctor, open_registry: Registry, config: dict[str, object]
) -> None:
    """A docker config.json made into a login (`kubectl create secret generic regcred
    --from-file=.dockerconfigjson=$HOME/.docker/config.json
    --type=kubernetes.io/dockerconfigjson`, as kubernetes.io's "Pull an Image from a Private
    Registry" shows) may hold no `auths`; the API server only checks it is JSON
    (pkg/apis/core/validation ValidateSecret). The kubelet unmarshals it into DockerConfigJSON,
    whose `auths` is then empty (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring):
    no error, the pull goes without a login, and an open registry serves it."""
    _push_environment(open_registry)
    host = open_registry.host
    environment = _environment(host)

    def build(now: datetime) -> list[Obj]:
        objects: list[Obj] = environment(now)
        secret = find(objects, "Secret", "regcred")
        secret["data"] = {".dockerconfigjson": _b64(json.dumps(config))}
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    assert (result.exit_code, result.json()["headline"]["code"]) == (0, "ready")
    assert _image_pull(result.json()) == [("ok", "measured", "image-pull.ok")]


TAG_OF_40 = "Release2024Build7AbCdEfGhIjKlMnOpQrStUvW"
"""A valid tag (distribution/reference regexp.go: `[\\w][\\w.-]{0,127}`) of 40 letters and
digits in both cases: the shape of an AWS secret access key, which the redaction rules look for
in free text."""


def test_a_tag_of_forty_mixed_case_letters_and_digits_is_the_image_s_own(
    asking: Doctor, open_registry: Registry
) -> None:
    """An image reference is never rewritten by the redaction's value-shape rules: doctor reads
    it through the redacting reader, and `trainer:<redacted>` is not a reference at all."""
    assert len(TAG_OF_40) == 40, "precondition: the secret key's length"
    _push_environment(open_registry)
    open_registry.push_image("trainer", TAG_OF_40, content="trainer")
    host = open_registry.host

    def build(now: datetime) -> list[Obj]:
        text = json.dumps(_environment(host)(now))
        objects: list[Obj] = json.loads(
            text.replace(f"{host}/trainer:2.1", f"{host}/trainer:{TAG_OF_40}")
        )
        return objects

    asking.load(build)
    result = asking.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (0, "ready"), report["headline"]
    assert _image_pull(report) == [("ok", "measured", "image-pull.ok")]
    assert f"{host}/trainer:{TAG_OF_40} (the training job 'train-001'): in its registry, " + (
        f"{LAYER['trainer']} bytes to download for linux/amd64 (1 layer)"
    ) in _details(report)
    assert asking.round_trips == 1, "precondition: the snapshot gave the same verdict"
    saved = asking.snapshot()
    text = "".join(p.read_text() for p in (saved / "reads").glob("*.yaml"))
    assert f"{host}/trainer:{TAG_OF_40}" in text, "the snapshot keeps the image as written"
