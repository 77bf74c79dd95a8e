"""The kubelet's own reasons for a failed pull, `RegistryUnavailable` and
`SignatureValidationFailed`, read wherever a failed pull is.

pkg/kubelet/images/image_manager.go `evalCRIPullErr` turns a runtime error that starts with the
cri-api's `RegistryUnavailable` (CRI-O server/image_pull.go `PullImage`: a refused connection)
or `SignatureValidationFailed` (CRI-O: the machine's signature policy refused the image) into
the container's waiting reason, with the message `image pull failed for %s because the
registry is unavailable%s` or `... because the signature validation failed%s`. It is a failed
pull like ErrImagePull: recorded in the pull back-off (`backOff.Next`), retried after it, and
from 1.30 repeated in the back-off's message (`Back-off pulling image %q: %s`, the reason and
message of the pull before).
"""

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.scenarios import job_pod, training_job
from truegreen.cluster import Listed
from truegreen.doctor.knowledge.evidence import Ending, job_failure
from truegreen.doctor.knowledge.image_presence import kubelet_pulled
from truegreen.doctor.knowledge.training import from_job
from truegreen.pull_errors import PullError, failed_pull
from truegreen.pull_reasons import FAILED_PULL_REASONS
from truegreen.refresh.annotations import PendingRestart
from truegreen.refresh.steps import stuck_new_pod
from truegreen.refresh.template import RESTARTED_AT

IMAGE = "registry.example.com/team/runner:stable"
UNAVAILABLE = (
    f"image pull failed for {IMAGE} because the registry is unavailable: initializing source "
    f"docker://{IMAGE}: pinging container registry registry.example.com: Get "
    '"https://registry.example.com/v2/": dial tcp 10.0.0.7:443: connect: connection refused'
)
UNSIGNED = (
    f"image pull failed for {IMAGE} because the signature validation failed: Source image "
    "rejected: A signature was required, but no signature exists"
)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STAMP = "2026-11-30T12:00:00.000001Z"
MARKER = PendingRestart({"runner": f"sha256:{'1' * 64}"}, STAMP)


def test_the_failed_pull_reasons_are_the_kubelet_s_four() -> None:
    assert (
        frozenset(
            {"ErrImagePull", "ImagePullBackOff", "RegistryUnavailable", "SignatureValidationFailed"}
        )
        == FAILED_PULL_REASONS
    )


@pytest.mark.parametrize(
    ("reason", "message", "said"),
    [
        ("RegistryUnavailable", UNAVAILABLE, PullError.UNREACHABLE),
        ("RegistryUnavailable", "", PullError.UNREACHABLE),
        ("SignatureValidationFailed", UNSIGNED, PullError.SIGNATURE_REFUSED),
        ("SignatureValidationFailed", "", PullError.SIGNATURE_REFUSED),
        (
            "ImagePullBackOff",
            f'Back-off pulling image "{IMAGE}": RegistryUnavailable: {UNAVAILABLE}',
            PullError.UNREACHABLE,
        ),
        (
            "ImagePullBackOff",
            f'Back-off pulling image "{IMAGE}": SignatureValidationFailed: {UNSIGNED}',
            PullError.SIGNATURE_REFUSED,
        ),
        ("ErrImagePull", UNSIGNED, PullError.SIGNATURE_REFUSED),
        ("ErrImagePull", "", None),
        ("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"', None),
    ],
)
def test_the_reason_says_what_stopped_the_pull_before_the_words(
    reason: str, message: str, said: PullError | None
) -> None:
    assert failed_pull(reason, message, [IMAGE]) is said


def _new_pod(reason: str, message: str) -> dict[str, Any]:
    """refresh's new pod (its restart stamp), its runner waiting in `reason`."""
    return {
        "metadata": {"name": "new", "annotations": {RESTARTED_AT: STAMP}},
        "spec": {"containers": [{"name": "runner", "image": IMAGE}]},
        "status": {
            "phase": "Pending",
            "containerStatuses": [
                {"name": "runner", "state": {"waiting": {"reason": reason, "message": message}}}
            ],
        },
    }


def test_refresh_counts_a_refused_signature_as_a_pull_no_retry_heals() -> None:
    """Every retry meets the same policy until someone signs the image or changes it."""
    for reason, message in [
        ("SignatureValidationFailed", UNSIGNED),
        ("SignatureValidationFailed", ""),  # the reason alone says it
        (
            "ImagePullBackOff",
            f'Back-off pulling image "{IMAGE}": SignatureValidationFailed: {UNSIGNED}',
        ),
    ]:
        assert stuck_new_pod([_new_pod(reason, message)], MARKER) == (
            "new pod new cannot pull its image: its machine's signature policy refuses it "
            f"({reason})"
        )


def test_refresh_waits_out_a_registry_the_machine_could_not_reach() -> None:
    """A refused connection heals when the registry is back: still starting, not stuck."""
    assert stuck_new_pod([_new_pod("RegistryUnavailable", UNAVAILABLE)], MARKER) == ""


@pytest.mark.parametrize("reason", ["RegistryUnavailable", "SignatureValidationFailed"])
def test_a_container_failing_to_pull_its_new_image_has_not_pulled_it(reason: str) -> None:
    """Its status's imageID is the image it ran before (kuberuntime keeps the old one while
    the new image fails to pull), not the one its spec names now."""
    pods = Listed(
        (
            {
                "spec": {"containers": [{"name": "main", "image": "registry.example.com/new:2"}]},
                "status": {
                    "containerStatuses": [
                        {
                            "name": "main",
                            "imageID": "registry.example.com/new@sha256:5",
                            "state": {"waiting": {"reason": reason}},
                        }
                    ]
                },
            },
        )
    )
    assert kubelet_pulled(pods).copies == frozenset()


@pytest.mark.parametrize("reason", ["RegistryUnavailable", "SignatureValidationFailed"])
def test_a_failed_job_whose_pod_could_not_pull_ended_on_its_image(reason: str) -> None:
    job = training_job("train-002", NOW, finished=False)
    job["status"] = {
        "failed": 1,
        "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}],
    }
    pod = job_pod(job, NOW, suffix="f0", node_name="gpu-1", phase="Failed")
    pod["status"]["containerStatuses"] = [
        {"name": "trainer", "state": {"waiting": {"reason": reason}}}
    ]
    failure = job_failure(from_job(job), [pod])
    assert failure is not None
    assert (failure.ending, failure.detail) == (
        Ending.IMAGE,
        f"pod {pod['metadata']['name']} container trainer: {reason}",
    )
