"""A container in ImagePullBackOff whose message names no error: the kubelet's own Event does.

Before Kubernetes 1.30 the kubelet's back-off message is only `Back-off pulling image "…"`
(pkg/kubelet/images/image_manager.go); the runtime's error is in its `Failed` Warning Event,
`Failed to pull image "…": <error>`. That Event is the measurement of why the pull failed.
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_cluster_reports import event
from tests.support.scenarios import Obj, find, healthy

REF = "registry.example.com/jobs-manager:1.5"
NOT_FOUND = (
    f'rpc error: code = NotFound desc = failed to pull and unpack image "{REF}": failed to '
    f'resolve reference "{REF}": {REF}: not found'
)
"""containerd's error for a tag the registry does not have, as the kubelet quotes it."""


def _backing_off(*, event_uid: str | None) -> Any:
    """The jobs-manager's copy backs off pulling REF; with the kubelet's `Failed` Event about
    the pod of `event_uid` (the copy's own when "", none when None)."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = find(objects, "Pod", "jobs-manager-abc12")
        pod["metadata"]["uid"] = "7d0c6a2e-0000-4000-8000-0000000000aa"
        container = pod["status"]["containerStatuses"][0]
        container.update(
            {
                "image": REF,
                "imageID": "",
                "ready": False,
                "state": {
                    "waiting": {
                        "reason": "ImagePullBackOff",
                        "message": f'Back-off pulling image "{REF}"',
                    }
                },
            }
        )
        pod["spec"]["containers"][0]["image"] = REF
        pod["status"]["phase"] = "Pending"
        if event_uid is None:
            return objects
        named = {
            **pod,
            "metadata": {**pod["metadata"], "uid": event_uid or pod["metadata"]["uid"]},
        }
        failed = event(
            now,
            named,
            "Failed",
            f'Failed to pull image "{REF}": {NOT_FOUND}',
            "kubelet",
            age=timedelta(seconds=40),
        )
        return [*objects, failed]

    return build


def _pull_finding(report: dict[str, Any]) -> dict[str, Any]:
    return next(
        f for f in report["findings"] if f["check"] == "workloads" and f["status"] == "fail"
    )


@pytest.mark.parametrize(
    ("event_uid", "code"),
    [
        pytest.param(None, "workloads.image-download-failing", id="no-event"),
        pytest.param("", "workloads.image-not-in-registry", id="its-event"),
        pytest.param(
            "0b9e7d41-0000-4000-8000-0000000000bb",
            "workloads.image-download-failing",
            id="an-earlier-pod-s-event",
        ),
    ],
)
def test_a_back_off_says_what_the_kubelet_s_failed_pull_said(
    doctor: Doctor, event_uid: str | None, code: str
) -> None:
    doctor.load(_backing_off(event_uid=event_uid))
    result = doctor.live("-o", "json")
    finding = _pull_finding(result.json())
    assert finding["code"] == code, (finding["code"], finding["headline"])
    if event_uid == "":
        assert any(
            "; the kubelet's newest Failed Event 40 seconds ago: Failed to pull image" in d
            for d in finding["details"]
        ), finding["details"]
    assert result.exit_code == 2
