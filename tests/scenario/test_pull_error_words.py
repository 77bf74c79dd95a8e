"""The runtime's verdict on a failed pull, not the image's own name, says what stopped it.

A repository named `unauthorized-apps` or `toomanyrequests`, or a registry host of that name, is
part of every message about its image: the kubelet quotes it (pkg/kubelet/images/
image_manager.go `Failed to pull image %q: %v`, `Back-off pulling image %q`), containerd prints
it quoted and normalised (pull.go `failed to pull and unpack image %q`, `failed to resolve
reference %q`; remotes/docker/resolver.go Resolve `%s: not found`), CRI-O (containers/image
docker_image_src.go) by transport and registry host (`initializing source docker://%s`,
`pinging container registry %s`).
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event
from tests.support.scenarios import Obj, find, healthy


def _containerd_not_found(ref: str) -> str:
    return (
        f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
        f"{ref}: not found"
    )


def _crio_unreachable(host: str, ref: str) -> str:
    return (
        f"initializing source docker://{ref}: pinging container registry {host}: Get "
        f'"https://{host}/v2/": dial tcp: lookup {host} on 10.96.0.10:53: no such host'
    )


def _failing(ref: str, reason: str, message: str, failed_event: str | None) -> Any:
    """The jobs-manager's copy waits in `reason` pulling `ref`, with the kubelet's `message`
    and, when given, its `Failed` Warning Event."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["spec"]["containers"][0]["image"] = ref
        pod["status"]["phase"] = "Pending"
        pod["status"]["containerStatuses"][0].update(
            {
                "image": ref,
                "imageID": "",
                "ready": False,
                "state": {"waiting": {"reason": reason, "message": message}},
            }
        )
        if failed_event is None:
            return objects
        failed = event(now, pod, "Failed", failed_event, "kubelet", age=timedelta(seconds=40))
        return [*objects, failed]

    return build


UNAUTHORIZED = "registry.example.com/unauthorized-apps/jobs-manager:1.5"
TOO_MANY = "registry.example.com/toomanyrequests/jobs-manager:1.5"
HOST = "toomanyrequests.example.com"
ON_HOST = f"{HOST}/ml/jobs-manager:1.5"


@pytest.mark.parametrize(
    ("ref", "reason", "message", "failed_event", "code"),
    [
        pytest.param(
            UNAUTHORIZED,
            "ErrImagePull",
            _containerd_not_found(UNAUTHORIZED),
            None,
            "workloads.image-not-in-registry",
            id="unauthorized-repository",
        ),
        pytest.param(
            TOO_MANY,
            "ErrImagePull",
            _containerd_not_found(TOO_MANY),
            None,
            "workloads.image-not-in-registry",
            id="toomanyrequests-repository",
        ),
        pytest.param(
            ON_HOST,
            "ErrImagePull",
            _crio_unreachable(HOST, ON_HOST),
            None,
            "workloads.registry-unreachable",
            id="toomanyrequests-host",
        ),
        pytest.param(
            TOO_MANY,
            "ImagePullBackOff",
            f'Back-off pulling image "{TOO_MANY}"',
            f'Failed to pull image "{TOO_MANY}": rpc error: code = NotFound desc = '
            + _containerd_not_found(TOO_MANY),
            "workloads.image-not-in-registry",
            id="back-off-and-its-event",
        ),
        pytest.param(
            ON_HOST,
            "ImagePullBackOff",
            f'Back-off pulling image "{ON_HOST}"',
            f'Failed to pull image "{ON_HOST}": rpc error: code = Unknown desc = '
            + _crio_unreachable(HOST, ON_HOST),
            "workloads.registry-unreachable",
            id="back-off-and-its-event-toomanyrequests-host",
        ),
    ],
)
def test_the_image_s_own_name_is_not_the_registry_s_answer(
    doctor: Doctor, ref: str, reason: str, message: str, failed_event: str | None, code: str
) -> None:
    doctor.load(_failing(ref, reason, message, failed_event))
    result = doctor.live("-o", "json")
    finding = next(
        f for f in result.json()["findings"] if f["check"] == "workloads" and f["status"] == "fail"
    )
    assert (finding["code"], finding["basis"]) == (code, "measured"), finding["headline"]
    assert result.exit_code == 2
