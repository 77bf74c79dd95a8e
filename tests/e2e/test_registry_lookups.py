"""doctor's registry look-ups (doctor/reads/registry_lookups.py) against scripted registries on
loopback: each login the kubelet would send tried in turn, one deadline per look-up however
many requests it takes, a bound on look-ups in flight, and the size of the image for the
machines' platform read from the index's entry for it (containerd/platforms; the OCI image
spec's index and manifest)."""

import base64
import hashlib
import json
import threading
import time
from typing import Any

from tests.support.hostile import Answer, Received, ScriptedApi
from tests.support.registry import pull_login, serving_manifests
from truegreen.doctor.knowledge.image_presence import ImageLookup, Presence, RegistryAnswer
from truegreen.doctor.reads.registry_budget import RegistryBudget
from truegreen.doctor.reads.registry_lookups import LiveRegistry
from truegreen.refresh.registry import LOOKUPS_IN_FLIGHT, RegistryAccess

MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEX = "application/vnd.oci.image.index.v1+json"


def _json(document: dict[str, Any], media_type: str) -> Answer:
    body = json.dumps(document).encode()
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    return 200, {"Content-Type": media_type, "Docker-Content-Digest": digest}, body


def _image(*sizes: int) -> Answer:
    return _json({"schemaVersion": 2, "layers": [{"size": s} for s in sizes]}, MANIFEST)


def _registry(timeout: float = 5) -> LiveRegistry:
    return LiveRegistry(RegistryAccess(timeout=timeout), RegistryBudget(60))


def _basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


def test_each_login_is_tried_in_turn_until_one_is_let_in() -> None:
    """kuberuntime_image.go: the pull fails only when every login failed."""

    def script(request: Received, _: int) -> Answer:
        if request.headers.get("authorization") != _basic("robot", "right"):
            return 401, {"WWW-Authenticate": 'Basic realm="registry"'}, b""
        return serving_manifests(request, 0)

    with ScriptedApi(script) as server:
        host = f"127.0.0.1:{server.port}"
        registry = _registry()
        registry.keep("old", pull_login(host, "robot", "expired"))
        # A login for every host of 127.0.0.*: it applies (keyring.go), and goes to this one.
        registry.keep("new", pull_login(f"127.0.0.*:{server.port}", "robot", "right"))
        both = ImageLookup(f"{host}/team/app:1", ("old", "new"))
        only_old = ImageLookup(f"{host}/team/app:2", ("old",))
        answers = registry.look_up([both, only_old])
        sent = [(r.target, r.headers.get("authorization")) for r in server.received]
    assert answers[both] == RegistryAnswer(Presence.PRESENT)
    assert answers[only_old].presence is Presence.REFUSED
    assert ("/v2/team/app/manifests/1", _basic("robot", "right")) in sent
    assert ("/v2/team/app/manifests/2", _basic("robot", "right")) not in sent


def _token_only(host: str) -> dict[str, Any]:
    """A login whose entry holds an identity token alone (as `az acr login --expose-token`
    style logins do): the kubelet reads no identitytoken (config.go DockerConfigEntry)."""
    token_only = {"auths": {host: {"identitytoken": "refresh-token"}}}
    value = base64.b64encode(json.dumps(token_only).encode()).decode()
    return {"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": value}}


def _anonymous_only(request: Received, count: int) -> Answer:
    if request.headers.get("authorization"):
        return 400, {}, b"a login was sent"
    return serving_manifests(request, count)


def test_a_login_without_a_user_and_password_is_asked_without_one() -> None:
    """The machines pull with an empty login there, that is anonymously (containerd ParseAuth:
    "An empty auth config is valid for anonymous registry"): doctor asks the same way, and an
    image served so is there."""
    with ScriptedApi(_anonymous_only) as server:
        host = f"127.0.0.1:{server.port}"
        registry = _registry()
        registry.keep("acr", _token_only(host))
        lookup = ImageLookup(f"{host}/team/app:1", ("acr",))
        answer = registry.look_up([lookup])[lookup]
        sent = [r.headers.get("authorization") for r in server.received]
    assert sent, "precondition: the registry was asked"
    assert sent == [None] * len(sent)
    assert answer == RegistryAnswer(Presence.PRESENT)


def test_a_login_without_a_user_and_password_refused_leaves_the_image_unchecked() -> None:
    """Refused without a login, the image may still download where the machines hold a login
    of their own: not known, never a measured failure of the pod's login."""

    def script(request: Received, _: int) -> Answer:
        return 401, {"WWW-Authenticate": 'Basic realm="registry"'}, b""

    with ScriptedApi(script) as server:
        host = f"127.0.0.1:{server.port}"
        registry = _registry()
        registry.keep("acr", _token_only(host))
        lookup = ImageLookup(f"{host}/team/app:1", ("acr",))
        answer = registry.look_up([lookup])[lookup]
    assert answer == RegistryAnswer(
        Presence.LOGIN_UNUSABLE,
        f"the registry logins acr hold no user name and password for {host}, which refuses "
        "to answer without one",
    )


def test_only_the_login_types_the_kubelet_reads_are_kept() -> None:
    """secrets.go: a dockerconfigjson login's .dockerconfigjson; an Opaque secret holding the
    same key is no login, and the image is asked for without one."""
    with ScriptedApi(_anonymous_only) as server:
        host = f"127.0.0.1:{server.port}"
        registry = _registry()
        login = pull_login(host, "robot", "pw")
        registry.keep("opaque", {**login, "type": "Opaque"})
        lookup = ImageLookup(f"{host}/team/app:1", ("opaque",))
        answer = registry.look_up([lookup])[lookup]
        sent = [r.headers.get("authorization") for r in server.received]
    assert sent == [None] * len(sent)
    assert answer.presence is Presence.PRESENT


def test_an_index_is_sized_by_its_entry_for_the_platform() -> None:
    amd = _image(7)
    amd_digest = amd[1]["Docker-Content-Digest"]
    forged = "sha256:" + "a" * 64
    index = {
        "schemaVersion": 2,
        "manifests": [
            {"digest": forged, "platform": {"os": "linux", "architecture": "arm64"}},
            {"digest": amd_digest, "platform": {"os": "linux", "architecture": "amd64"}},
        ],
    }

    def script(request: Received, _: int) -> Answer:
        if request.target.endswith(amd_digest):
            return amd
        if request.target.endswith(forged):  # bytes that are not the digest the index names
            status, headers, body = _image(100, 23)
            return status, {**headers, "Docker-Content-Digest": forged}, body
        return _json(index, INDEX)

    with ScriptedApi(script) as server:
        host = f"127.0.0.1:{server.port}"
        wanted = [
            ImageLookup(f"{host}/team/app:multi", (), platform)
            for platform in ("linux/amd64", "linux/s390x", "linux/arm64")
        ]
        answers = _registry().look_up(wanted)
    assert list(answers.values()) == [
        RegistryAnswer(Presence.PRESENT, size=7, layers=1),
        RegistryAnswer(  # containerd on s390x machines: `no match for platform in manifest`
            Presence.NO_BUILD,
            f"{host}/team/app:multi: its image index holds no image for linux/s390x (it holds: "
            "linux/arm64, linux/amd64)",
            note="it holds no image for linux/s390x (it holds: linux/arm64, linux/amd64)",
            offered=("linux/arm64", "linux/amd64"),
        ),
        RegistryAnswer(
            Presence.GARBLED,
            f"{host} sent a manifest whose content does not match its digest",
        ),
    ]


def test_an_index_whose_image_for_the_platform_is_gone_is_missing() -> None:
    child = "sha256:" + "c" * 64
    index = {"manifests": [{"digest": child, "platform": {"os": "linux", "architecture": "amd64"}}]}

    def script(request: Received, _: int) -> Answer:
        if request.target.endswith(child):
            return 404, {}, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}'
        return _json(index, INDEX)

    with ScriptedApi(script) as server:
        lookup = ImageLookup(f"127.0.0.1:{server.port}/team/app:1", (), "linux/amd64")
        answer = _registry().look_up([lookup])[lookup]
    assert answer == RegistryAnswer(
        Presence.MISSING, f"its image for linux/amd64 ({child}) does not exist"
    )


def test_one_deadline_bounds_every_request_of_a_look_up() -> None:
    """The index and its platform's image each answer within the timeout; together they do
    not: the look-up ends at the timeout, as refresh's do (--request-timeout per look-up)."""
    image = _image(1)
    child = image[1]["Docker-Content-Digest"]
    index = {"manifests": [{"digest": child, "platform": {"os": "linux", "architecture": "amd64"}}]}

    def slow(request: Received, _: int) -> Answer:
        time.sleep(0.35)
        return image if request.target.endswith(child) else _json(index, INDEX)

    with ScriptedApi(slow) as server:
        host = f"127.0.0.1:{server.port}"
        lookup = ImageLookup(f"{host}/team/app:1", (), "linux/amd64")
        answer = _registry(timeout=0.5).look_up([lookup])[lookup]
        methods = [(r.method, r.target.rsplit("/", 1)[-1]) for r in server.received]
    assert answer == RegistryAnswer(Presence.TIMEOUT, f"{host} did not answer in time")
    assert methods == [("GET", "1"), ("GET", child)]


def test_look_ups_go_out_together_at_most_the_bound_at_once() -> None:
    """The first LOOKUPS_IN_FLIGHT answers are held until that many are in flight: a pool that
    lets fewer out fails here; no more than the bound are ever in flight."""
    gate = threading.Barrier(LOOKUPS_IN_FLIGHT, timeout=10)
    lock = threading.Lock()
    in_flight = {"now": 0, "most": 0}

    def held(request: Received, index: int) -> Answer:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        try:
            if index < LOOKUPS_IN_FLIGHT:
                gate.wait()
            return serving_manifests(request, index)
        except threading.BrokenBarrierError:
            return 503, {}, b""
        finally:
            with lock:
                in_flight["now"] -= 1

    with ScriptedApi(held) as server:
        wanted = [ImageLookup(f"127.0.0.1:{server.port}/team/app:{i}") for i in range(20)]
        answers = _registry().look_up(wanted)
    assert [a.presence for a in answers.values()] == [Presence.PRESENT] * 20
    assert in_flight["most"] == LOOKUPS_IN_FLIGHT == 8
    assert len(server.received) == 20, "one request per image"


def test_look_ups_to_several_registries_share_the_one_bound() -> None:
    """Each registry would take LOOKUPS_IN_FLIGHT connections of its own: the bound is the
    run's, not each registry's."""
    lock = threading.Lock()
    in_flight = {"now": 0, "most": 0}

    def slow(request: Received, index: int) -> Answer:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        time.sleep(0.2)
        with lock:
            in_flight["now"] -= 1
        return serving_manifests(request, index)

    with ScriptedApi(slow) as first, ScriptedApi(slow) as second:
        wanted = [
            ImageLookup(f"127.0.0.1:{server.port}/team/app:{i}")
            for i in range(12)
            for server in (first, second)
        ]
        answers = _registry().look_up(wanted)
    assert [a.presence for a in answers.values()] == [Presence.PRESENT] * 24
    assert in_flight["most"] == LOOKUPS_IN_FLIGHT
