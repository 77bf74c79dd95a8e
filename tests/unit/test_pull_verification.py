"""Which machine's copy of an image spares a pod the pull where kubelets 1.35 and later check the
pod's logins, value by value.

The kubelet's rules (src/truegreen/doctor/knowledge/pull_verification.py): KubeletEnsureSecret-
PulledImages is on by default from 1.35 (pkg/features/kube_features.go); for an image it pulled
with a pod's login, pkg/kubelet/images/pullmanager/image_pull_manager.go MustAttemptImagePull
lets another pod start from the copy only when it sends one of the recorded logins, or when no
login of a pod pulled it (NodePodsAccessible: image_manager.go trackedToImagePullCreds). The
machine's version is `status.nodeInfo.kubeletVersion` (k8s.io/api core/v1 NodeSystemInfo)."""

import base64
import json
import sys
from typing import Any

import msgspec
import pytest

from truegreen.cluster import CantRead, GetRead, Got, Listed, ReadFailure
from truegreen.cluster.kinds import Kind
from truegreen.cluster.views import as_object, item_view
from truegreen.doctor.knowledge.image_presence import (
    kubelet_pulled,
    pod_logins,
    read_keys,
    spared_pulls,
)
from truegreen.doctor.knowledge.pull_verification import (
    NO_COPIES,
    VERIFYING_KUBELET,
    MachineCopies,
    MachineCopy,
    kubelet_version,
    kubelets_verify,
)
from truegreen.monitor.views import NodeView

IMAGE = "registry.example.com/trainer:2.1"


def _machine(version: object = None, *, info: object = None) -> dict[str, Any]:
    """A machine whose kubelet says `version` (None: says none), or whose nodeInfo is `info`."""
    node_info = info if info is not None else {"kubeletVersion": version} if version else {}
    return {"kind": "Node", "metadata": {"name": "m"}, "status": {"nodeInfo": node_info}}


@pytest.mark.parametrize(
    ("version", "found"),
    [
        ("v1.35.1", (1, 35)),
        ("v1.35.0-eks-4096722", (1, 35)),
        ("v1.35.2+k3s1", (1, 35)),
        ("v1.34.3-gke.1000", (1, 34)),
        ("1.36.0", (1, 36)),
        ("v2.0", (2, 0)),
        ("v1.350.0", (1, 350)),
        ("v1.35rc1", None),
        ("v1", None),
        ("kubelet v1.35.0", None),
        ("", None),
        (135, None),
    ],
)
def test_a_kubelet_s_version_is_read_as_kubelets_and_distributions_write_it(
    version: object, found: tuple[int, int] | None
) -> None:
    assert kubelet_version(_machine(version)) == found


@pytest.mark.parametrize("info", [{}, "v1.35.0", ["v1.35.0"]])
def test_a_machine_that_says_no_version_has_none(info: object) -> None:
    assert kubelet_version(_machine(info=info)) is None
    assert kubelet_version({"kind": "Node"}) is None


def test_the_first_checking_kubelet_is_1_35() -> None:
    assert VERIFYING_KUBELET == (1, 35)


@pytest.mark.parametrize(
    ("versions", "verify"),
    [
        (("v1.34.3", "v1.34.99"), False),
        (("v1.34.3", "v1.35.0"), True),  # an upgrade under way: a pod may land on the new one
        (("v1.36.1",), True),
        (("v2.0.0",), True),
        (("v1.33.0", None), False),
        ((None, "v1.35.0"), True),
        ((None,), False),
        ((), False),
    ],
)
def test_the_kubelets_check_where_any_machine_runs_1_35_or_later(
    versions: tuple[str | None, ...], verify: bool
) -> None:
    assert kubelets_verify(Listed(tuple(_machine(v) for v in versions))) is verify


def test_machines_not_read_are_taken_not_to_check() -> None:
    assert kubelets_verify(CantRead(ReadFailure.FORBIDDEN, "no")) is False


def _login(name: str, *hosts: str) -> Got:
    auths = {host: {"auth": base64.b64encode(b"robot:pw").decode()} for host in hosts}
    value = base64.b64encode(json.dumps({"auths": auths}).encode()).decode()
    return Got(
        {
            "kind": "Secret",
            "metadata": {"name": name},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": value},
        }
    )


SECRETS = {
    "regcred": _login("regcred", "registry.example.com"),
    "teamcred": _login("teamcred", "registry.example.com"),
    "hubcred": _login("hubcred", "docker.io"),
}


def _spec(*logins: str, policy: str = "IfNotPresent") -> dict[str, Any]:
    return {
        "imagePullSecrets": [{"name": n} for n in logins],
        "containers": [{"name": "t", "image": IMAGE, "imagePullPolicy": policy}],
    }


def _spared(copies: MachineCopies, spec: dict[str, Any]) -> bool:
    """Whether a pod of `spec` starts from a machine's copy of IMAGE."""
    logins = pod_logins(spec, None, SECRETS)
    spared = spared_pulls(spec, copies, logins, read_keys(SECRETS))
    assert spared <= {IMAGE}
    return IMAGE in spared


def _copies(*pulled_with: frozenset[str] | None, verified: bool = True) -> MachineCopies:
    return MachineCopies(frozenset(MachineCopy(IMAGE, p) for p in pulled_with), verified)


REGCRED = frozenset({"regcred"})


@pytest.mark.parametrize(
    ("pulled_with", "sent", "spared"),
    [
        # Pulled with a pod's login: only a pod that sends it too.
        ((REGCRED,), ("regcred",), True),
        ((REGCRED,), (), False),
        ((REGCRED,), ("teamcred",), False),
        ((REGCRED,), ("teamcred", "regcred"), True),
        ((frozenset({"teamcred", "regcred"}),), ("teamcred",), True),
        # A login of that pod that covers another registry alone was not sent for the image:
        # it was pulled with no login of a pod, so every pod may start from it.
        ((frozenset({"hubcred"}),), (), True),
        ((frozenset({"hubcred", "regcred"}),), ("teamcred",), False),
        # Pulled with no login of a pod (anonymously, or with the machine's own).
        ((frozenset(),), (), True),
        ((frozenset(),), ("teamcred",), True),
        # A login doctor did not read may be the one sent.
        ((frozenset({"oldcred"}),), (), False),
        ((frozenset({"oldcred"}),), ("regcred",), False),
        # Known from a kubelet's Event alone, its pod gone: its logins unknown.
        ((None,), ("regcred",), False),
        ((None,), (), False),
        # Any copy that lets the pod start is enough.
        ((None, REGCRED), ("regcred",), True),
        ((frozenset({"teamcred"}), frozenset()), (), True),
        ((), ("regcred",), False),
    ],
)
def test_where_the_kubelets_check_a_copy_spares_only_the_pods_its_logins_let_in(
    pulled_with: tuple[frozenset[str] | None, ...], sent: tuple[str, ...], spared: bool
) -> None:
    assert _spared(_copies(*pulled_with), _spec(*sent)) is spared


@pytest.mark.parametrize("pulled_with", [REGCRED, frozenset(), None])
def test_where_the_kubelets_do_not_check_any_copy_spares_every_pod(
    pulled_with: frozenset[str] | None,
) -> None:
    assert _spared(_copies(pulled_with, verified=False), _spec()) is True
    assert _spared(_copies(verified=False), _spec()) is False


def test_the_account_s_logins_are_the_pod_s_own() -> None:
    """A pod that names none sends its account's (the ServiceAccount admission plugin)."""
    spec = {**_spec(), "serviceAccountName": "trainer"}
    del spec["imagePullSecrets"]
    account = Got({"kind": "ServiceAccount", "imagePullSecrets": [{"name": "regcred"}]})
    logins = pod_logins(spec, account, SECRETS)
    assert spared_pulls(spec, _copies(REGCRED), logins, read_keys(SECRETS)) == {IMAGE}


@pytest.mark.parametrize("verified", [True, False])
def test_an_image_pulled_on_every_start_is_never_spared(verified: bool) -> None:
    copies = _copies(frozenset(), verified=verified)
    assert _spared(copies, _spec(policy="Always")) is False
    assert _spared(copies, _spec(policy="IfNotPresent")) is True


def test_only_the_logins_the_kubelet_reads_have_keys() -> None:
    wrong_type = Got({"kind": "Secret", "type": "Opaque", "data": {}})
    reads: dict[str, GetRead] = {
        "regcred": SECRETS["regcred"],
        "opaque": wrong_type,
        "gone": CantRead(ReadFailure.NOT_FOUND, "not found"),
    }
    assert read_keys(reads) == {"regcred": frozenset({"registry.example.com"})}


def _pod(name: str, uid: str, *logins: str, image_id: str = "x@sha256:1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "uid": uid},
        "spec": {
            "imagePullSecrets": [{"name": n} for n in logins],
            "containers": [{"name": "t", "image": IMAGE}],
        },
        "status": {"containerStatuses": [{"name": "t", "imageID": image_id}]},
    }


def _pulled(pod: str, uid: str | None, image: str = IMAGE) -> dict[str, Any]:
    """The kubelet's `Pulled` Event about `pod` (image_manager.go; source `kubelet`)."""
    involved = {"kind": "Pod", "name": pod, **({"uid": uid} if uid else {})}
    return {
        "reason": "Pulled",
        "source": {"component": "kubelet"},
        "involvedObject": involved,
        "message": f'Successfully pulled image "{image}" in 3s',
    }


def test_each_copy_carries_the_logins_of_the_pod_it_was_pulled_for() -> None:
    pods = Listed((_pod("a", "u-a", "regcred", "", "teamcred"), _pod("b", "u-b")))
    assert kubelet_pulled(pods) == MachineCopies(
        frozenset(
            {
                MachineCopy(IMAGE, frozenset({"regcred", "teamcred"})),
                MachineCopy(IMAGE, frozenset()),
            }
        ),
        verified=False,
    )


@pytest.mark.parametrize(
    ("event", "logins"),
    [
        (_pulled("a", "u-a"), REGCRED),
        (_pulled("a", None), REGCRED),
        (_pulled("a", "u-earlier"), None),  # an earlier pod of the same name, gone
        (_pulled("gone", "u-gone"), None),
    ],
)
def test_a_copy_an_event_tells_of_has_its_stored_pod_s_logins_else_none_known(
    event: dict[str, Any], logins: frozenset[str] | None
) -> None:
    pods = Listed((_pod("a", "u-a", "regcred", image_id=""),))
    assert kubelet_pulled(pods, Listed((event,))).copies == {MachineCopy(IMAGE, logins)}


def test_a_copy_of_a_stored_pod_without_a_uid_is_its_events() -> None:
    pod = _pod("a", "", "regcred", image_id="")
    pulled = kubelet_pulled(Listed((pod,)), Listed((_pulled("a", "u-a"),)))
    assert pulled.copies == {MachineCopy(IMAGE, REGCRED)}


def test_the_copies_are_checked_where_the_machines_say_so() -> None:
    pods = Listed((_pod("a", "u-a"),))
    assert kubelet_pulled(pods, None, Listed((_machine("v1.35.0"),))).verified is True
    assert kubelet_pulled(pods, None, Listed((_machine("v1.34.0"),))).verified is False
    assert kubelet_pulled(pods, None, None).verified is False
    assert kubelet_pulled(pods).verified is False


def test_no_copies_spare_nothing() -> None:
    assert MachineCopies(frozenset(), verified=False) == NO_COPIES
    assert NO_COPIES.images == frozenset()
    assert _copies(REGCRED, None).images == {IMAGE}


def _decoded(node: dict[str, Any]) -> dict[str, Any]:
    return dict(
        as_object(
            msgspec.json.decode(msgspec.json.encode(node), type=item_view(Kind.NODE)), Kind.NODE
        )
    )


def test_a_machine_s_kubelet_version_is_read_and_nothing_else_of_its_node_info() -> None:
    info = {
        "kubeletVersion": "v1.35.1",
        "kubeProxyVersion": "v1.35.1",
        "containerRuntimeVersion": "containerd://2.1.4",
        "machineID": "ec2a1b2c3d",
        "osImage": "Ubuntu 24.04.2 LTS",
    }
    first, second = (_decoded({"status": {"nodeInfo": dict(info)}}) for _ in range(2))
    assert first["status"] == {"nodeInfo": {"kubeletVersion": "v1.35.1"}}
    assert first["status"]["nodeInfo"]["kubeletVersion"] is sys.intern("v1.35.1")
    assert (
        second["status"]["nodeInfo"]["kubeletVersion"]
        is first["status"]["nodeInfo"]["kubeletVersion"]
    ), "one string for every machine of a version"


@pytest.mark.parametrize("info", [{}, {"osImage": "Ubuntu"}, {"kubeletVersion": 135}])
def test_a_node_info_without_a_version_text_is_kept_as_far_as_it_came(info: Any) -> None:
    kept = {k: v for k, v in info.items() if k == "kubeletVersion"}
    assert _decoded({"status": {"nodeInfo": info}})["status"] == {"nodeInfo": kept}


@pytest.mark.parametrize("info", ["v1.35.0", ["v1.35.0"], None, 3])
def test_a_node_info_that_is_not_an_object_is_kept_as_it_came(info: Any) -> None:
    assert _decoded({"status": {"nodeInfo": info}})["status"] == {"nodeInfo": info}


def test_the_monitor_keeps_a_machine_s_kubelet_version_as_doctor_reads_it() -> None:
    node = {"status": {"nodeInfo": {"kubeletVersion": "v1.35.1", "osImage": "Ubuntu"}}}
    view = msgspec.json.decode(msgspec.json.encode(node), type=NodeView)
    kept = msgspec.to_builtins(view)
    assert kept["status"] == {"nodeInfo": {"kubeletVersion": "v1.35.1"}}
    assert kubelets_verify(Listed((kept,))) is True
    bare = msgspec.to_builtins(msgspec.json.decode(b'{"status": {}}', type=NodeView))
    assert bare["status"] == {}
