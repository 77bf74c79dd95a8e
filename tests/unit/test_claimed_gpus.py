"""The GPUs a pod asks for through dynamic resource allocation, counted from its claims in the
shapes the API server stores (resource.k8s.io/v1: staging/src/k8s.io/api/resource/v1/types.go;
NVIDIA's DeviceClass and templates, tests/support/nvidia_dra.py), and handed to the trial's
trainer container."""

from typing import Any

import pytest

from tests.support.nvidia_dra import nvidia_alternatives, nvidia_class, nvidia_template
from truegreen.cluster import CantRead, Got, Listed, ReadFailure
from truegreen.doctor.knowledge.claimed_gpus import claimed_gpus
from truegreen.gpu_resources import ClaimedGpus
from truegreen.trial.pods import TrialSettings, trial_pod

NS = "ml"
CLASSES = Listed((nvidia_class(),))
NO_CLAIMS = Listed(())


def _spec(*refs: dict[str, str]) -> dict[str, Any]:
    return {"resourceClaims": list(refs)}


def _template(obj: dict[str, Any]) -> dict[str, Got]:
    return {obj["metadata"]["name"]: Got(obj)}


def _all(template: dict[str, Any]) -> dict[str, Any]:
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["allocationMode"] = "All"
    del exactly["count"]
    return template


NIC = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "nic", "namespace": NS},
    "spec": {
        "spec": {
            "devices": {
                "requests": [{"name": "nic", "exactly": {"deviceClassName": "rdma.example.com"}}]
            }
        }
    },
}


@pytest.mark.parametrize(
    ("templates", "classes", "expected"),
    [
        (_template(nvidia_template("h200", NS, count=4)), CLASSES, [ClaimedGpus("g", "gpu", 4)]),
        # count defaults to one under ExactCount, the default mode.
        (
            _template(nvidia_template("h200", NS)),
            Listed(()),
            [ClaimedGpus("g", "gpu", 1)],
        ),
        # All: every matching device in a pool, at least one; not fixed ahead.
        (
            _template(_all(nvidia_template("h200", NS))),
            CLASSES,
            [ClaimedGpus("g", "gpu", 1, exact=False)],
        ),
        # Alternatives of the same size are one number; of different sizes, the fewest.
        (
            _template(nvidia_alternatives("h200", NS, ("big", "true", 2), ("small", "true", 2))),
            CLASSES,
            [ClaimedGpus("g", "gpu", 2)],
        ),
        (
            _template(nvidia_alternatives("h200", NS, ("big", "true", 4), ("small", "true", 2))),
            CLASSES,
            [ClaimedGpus("g", "gpu", 2, exact=False)],
        ),
        # Devices that are not GPUs are not counted.
        ({"h200": Got(NIC)}, CLASSES, []),
        # A template that could not be read may hold GPUs: none counted, not fixed.
        (
            {"h200": CantRead(ReadFailure.FORBIDDEN, "forbidden")},
            CLASSES,
            [ClaimedGpus("g", "", 0, exact=False)],
        ),
    ],
)
def test_the_gpus_each_request_of_a_claim_gives(
    templates: dict[str, Any], classes: Listed, expected: list[ClaimedGpus]
) -> None:
    spec = _spec({"name": "g", "resourceClaimTemplateName": "h200"})
    assert list(claimed_gpus(spec, NS, templates, NO_CLAIMS, classes)) == expected


def test_a_class_that_stands_for_a_gpu_resource_is_a_gpu_class_and_a_shared_claim_counts() -> None:
    """A DeviceClass of any name whose `extendedResourceName` is a GPU resource; a claim the
    pods share, named by `resourceClaimName`, read from the namespace's claims."""
    accelerators = {**nvidia_class(), "metadata": {"name": "accelerators.example.com"}}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": NS},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpus",
                        "exactly": {"deviceClassName": "accelerators.example.com", "count": 2},
                    }
                ]
            }
        },
    }
    exactly = {"deviceClassName": "accelerators.example.com", "count": 7}
    other_namespace = {
        **claim,
        "metadata": {"name": "shared", "namespace": "else"},
        "spec": {"devices": {"requests": [{"name": "gpus", "exactly": exactly}]}},
    }
    spec = _spec({"name": "s", "resourceClaimName": "shared"})
    assert claimed_gpus(
        spec, NS, {}, Listed((claim, other_namespace)), Listed((accelerators,))
    ) == (ClaimedGpus("s", "gpus", 2),)


def test_the_trainer_is_told_the_gpus_its_claims_give() -> None:
    """The container that names a GPU claim in `resources.claims` is the trainer, even listed
    after a log shipper, and its probe is told their sum; a claim's request named by the
    container is the only one it gets (core/v1 ResourceClaim `request`). A number not fixed
    ahead is marked on the pod."""
    job_pod = {
        "metadata": {"name": "llama", "annotations": {"team": "a"}},
        "spec": {
            "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "h200"}],
            "containers": [
                {"name": "log-shipper", "image": "fluent/fluent-bit:3.0"},
                {
                    "name": "trainer",
                    "image": "ghcr.io/acme/train:2.11",
                    "resources": {"claims": [{"name": "g", "request": "gpu"}]},
                },
            ],
        },
    }
    exact = (ClaimedGpus("g", "gpu", 4), ClaimedGpus("g", "other", 8))
    settings = TrialSettings(run="r1", deadline_seconds=60, claimed_gpus=exact)
    pod = trial_pod("llama", job_pod, settings)
    [trainer] = pod["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in trainer["env"]}
    assert (trainer["name"], env["TRUEGREEN_PROBE_GPUS"]) == ("trainer", "4")
    assert pod["metadata"]["annotations"] == {"team": "a"}
    floor = TrialSettings(
        run="r1", deadline_seconds=60, claimed_gpus=(ClaimedGpus("g", "gpu", 1, exact=False),)
    )
    marked = trial_pod("llama", job_pod, floor)
    assert marked["metadata"]["annotations"] == {
        "team": "a",
        "truegreen.io/trial-gpus-at-least": "true",
    }
