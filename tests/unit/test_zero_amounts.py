"""A request stated as zero is stated: the API server keeps it, the scheduler reserves nothing
for it, and the quota plugin counts it as named.

- The API server copies a container's limit into its requests only where the key is absent
  (pkg/apis/core/v1/defaults.go `SetDefaults_Pod`: `if _, exists := ...Requests[key];
  !exists`); component-helpers resource/helpers.go `PodRequests` then sums the stored
  requests, a zero among them.
- The quota plugin's "must specify" asks which keys a container names
  (pkg/quota/v1/evaluator/core/pods.go `enforcePodContainerConstraints` over
  `podComputeUsageHelper`, which reads `requests[cpu]` by presence).
"""

import msgspec

from truegreen.cluster import Folded
from truegreen.doctor.checks.admission.quota import quota_pod
from truegreen.doctor.knowledge.fit import container_requests, pod_requests
from truegreen.doctor.knowledge.usage import (
    CapacityTally,
    ClusterUsage,
    MachineUsage,
    PodView,
    cluster_usage,
)
from truegreen.quantity import Resources

BURSTING = {"requests": {"cpu": "0", "memory": "128Mi"}, "limits": {"cpu": "6", "memory": "128Mi"}}
"""A container that asks for no CPU and may burst to 6, as the API server stores it."""


def test_an_explicit_zero_request_stays_zero_beside_its_limit() -> None:
    assert container_requests({"name": "c", "resources": BURSTING}) == Resources.of(
        {"memory": 128 * 2**20}
    )
    # The key absent, the limit is the request.
    absent = {"requests": {"memory": "128Mi"}, "limits": {"cpu": "6", "memory": "128Mi"}}
    assert container_requests({"name": "c", "resources": absent}) == Resources.of(
        {"cpu": 6000, "memory": 128 * 2**20}
    )


def test_a_pod_of_explicit_zero_requests_reserves_zero_in_every_container() -> None:
    spec = {
        "initContainers": [
            {"name": "i", "resources": {"requests": {"cpu": "0"}, "limits": {"cpu": "12"}}}
        ],
        "containers": [{"name": "c", "resources": BURSTING}],
    }
    assert pod_requests(spec) == Resources.of({"memory": 128 * 2**20})


def test_the_fold_reserves_zero_for_a_running_pod_s_explicit_zero() -> None:
    raw = {
        "metadata": {"name": "burst-0", "namespace": "other"},
        "spec": {"nodeName": "a", "containers": [{"name": "c", "resources": BURSTING}]},
        "status": {"phase": "Running"},
    }
    tally = CapacityTally("train")
    tally.add(msgspec.json.decode(msgspec.json.encode(raw), type=PodView))
    usage = cluster_usage(Folded(tally.summary()))
    assert isinstance(usage, ClusterUsage)
    assert usage.machines == {"a": MachineUsage(1, {"memory": 128 * 2**20})}


def test_the_quota_plugin_takes_an_explicit_zero_as_stated() -> None:
    pod = quota_pod({"containers": [{"name": "c", "resources": BURSTING}]})
    assert pod.stated == (
        (
            "c",
            frozenset(
                {
                    ("requests", "cpu"),
                    ("requests", "memory"),
                    ("limits", "cpu"),
                    ("limits", "memory"),
                }
            ),
        ),
    )
    assert (pod.requests, pod.limits) == (
        Resources.of({"memory": 128 * 2**20}),
        Resources.of({"cpu": 6000, "memory": 128 * 2**20}),
    )
