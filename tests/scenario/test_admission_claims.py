"""Admission of the claims a training job's pods make (generic ephemeral volumes), over the fake
API server.

The ephemeral volume controller creates `<pod>-<volume>` once the pod exists
(pkg/controller/volume/ephemeral/controller.go `handleVolume`); the create is refused by a
ResourceQuota on claims (pkg/quota/v1/evaluator/core/persistent_volume_claims.go `Usage`) or a
LimitRange `PersistentVolumeClaim` item (plugin/pkg/admission/limitranger/admission.go
`PersistentVolumeClaimValidateLimitFunc`), and the pod waits forever.
"""

from datetime import datetime, timedelta
from typing import Any

from tests.scenario.conftest import Doctor
from tests.scenario.test_admission import quota
from tests.support import scenarios
from tests.support.scenarios import NAMESPACE, find, healthy, job_pod
from tests.support.training_kinds import ALL_GROUPS, indexed_job, pytorch_job, pytorch_pod

Obj = dict[str, Any]


def scratch(size: str = "200Gi", storage_class: str | None = "standard") -> Obj:
    """The docs' per-pod scratch space (website content/en/docs/concepts/storage/
    ephemeral-volumes.md "Generic ephemeral volumes"): a claim template in the pod's volumes."""
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": spec}}}


def _with_scratch(*extra: Obj, volume: Obj | None = None) -> Any:
    """The healthy namespace whose training job's pods each get a scratch volume, and `extra`."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        job = find(objects, "Job", "train-001")
        job["spec"]["template"]["spec"]["volumes"].append(volume or scratch())
        return [*objects, *extra]

    return build


def _admission(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "admission"]


def _codes(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in _admission(report)]


FULL = quota(
    "storage",
    {"persistentvolumeclaims": "1", "requests.storage": "1Ti"},
    {"persistentvolumeclaims": "1", "requests.storage": "1Ti"},
)
"""A quota of one claim and 1 TiB, all in use."""


def test_a_full_claim_quota_refuses_the_volume_each_pod_makes(doctor: Doctor) -> None:
    """The pod is let in; its claim is not (`exceeded quota: storage, requested:
    persistentvolumeclaims=1,requests.storage=200Gi`), so it never starts."""
    doctor.load(_with_scratch(FULL))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the usage limit 'storage' is reached (volumes: 1 of 1 in "
        "use, the job needs 1; volume space: 1 TiB of 1 TiB in use, the job needs 200 GiB)."
    )
    assert found["remedy"].startswith("Delete volumes that are no longer needed (`kubectl ")
    assert found["remedy"].endswith(
        " get persistentvolumeclaims` lists them), or ask your cluster admin to raise the "
        "limit 'storage'."
    )
    assert found["details"] == [
        "quota storage: persistentvolumeclaims used 1 + requested 1 > hard 1",
        "quota storage: requests.storage used 1099511627776 + requested 214748364800 > hard "
        "1099511627776",
        "refuses the claims of volume scratch of the pods of Job/train-001 (worker): the "
        "ephemeral volume controller makes one for each pod once it exists, and the pod waits "
        "for it",
    ]
    assert found["objects"] == ["ResourceQuota/storage", "Job/train-001"]
    assert result.exit_code == 2


def test_an_admitted_trial_start_does_not_answer_for_the_claims(doctor: Doctor) -> None:
    """A dry-run pod create makes no claim: the server letting it in says nothing of them."""
    doctor.load(_with_scratch(FULL))
    report = doctor.live("-o", "json", "--admission-dry-run").json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    assert any(r.method == "POST" for r in doctor.server.requests()), "precondition: tried"


def test_a_quota_per_storage_type_counts_the_claims_of_that_type(doctor: Doctor) -> None:
    """`<class>.storageclass.storage.k8s.io/requests.storage` charges the claims of that class
    alone."""
    per_type = quota(
        "standard-space",
        {"standard.storageclass.storage.k8s.io/requests.storage": "100Gi"},
        {"standard.storageclass.storage.k8s.io/requests.storage": "0"},
    )
    doctor.load(_with_scratch(per_type))
    report = doctor.live("-o", "json").json()
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the usage limit 'standard-space' is reached (volume space "
        "of storage type 'standard': 0 bytes of 100 GiB in use, the job needs 200 GiB)."
    )


def test_a_claim_quota_with_room_is_compared_and_one_of_other_things_is_not(
    doctor: Doctor,
) -> None:
    """The ok finding says which quotas the job was compared with: none covering only what the
    job never creates is said to be compared."""
    room = quota("storage", {"requests.storage": "1Ti"}, {"requests.storage": "100Gi"})
    services = quota("objects", {"services": "5"}, {"services": "1"})
    doctor.load(_with_scratch(room, services))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    details = _admission(report)[0]["details"]
    assert "usage limit storage compared" in details
    assert "usage limit objects: counts nothing the training job creates" in details
    assert "usage limit objects compared" not in details


def test_a_claim_quota_without_volumes_to_charge_compares_nothing(doctor: Doctor) -> None:
    """The job makes no claim, so a quota of claims compares nothing."""
    doctor.load("healthy")
    doctor.server.add(FULL)
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert (
        "usage limit storage: counts nothing the training job creates"
        in (_admission(report)[0]["details"])
    )


def test_a_claim_larger_than_the_size_limit_of_a_volume_is_refused(doctor: Doctor) -> None:
    """LimitRanger refuses the claim: `persistentvolumeclaims "<pod>-scratch" is forbidden:
    maximum storage usage per PersistentVolumeClaim is 100Gi, but request is 200Gi`."""
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "storage-limits", "namespace": NAMESPACE},
        "spec": {"limits": [{"type": "PersistentVolumeClaim", "max": {"storage": "100Gi"}}]},
    }
    doctor.load(_with_scratch(limits))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.limit-range-refused", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the environment's size limits 'storage-limits' refuse it "
        "(the volume 'scratch' each program makes asks for 200 GiB, more than the 100 GiB each "
        "volume may have)."
    )
    assert found["details"] == [
        "LimitRange storage-limits refuses the claim of volume scratch of the pods of "
        "Job/train-001 (worker): forbidden: maximum storage usage per PersistentVolumeClaim is "
        "100Gi, but request is 200Gi; the ephemeral volume controller makes one for each pod "
        "once it exists, and the pod waits for it"
    ]
    assert found["objects"] == ["LimitRange/storage-limits", "Job/train-001"]
    assert result.exit_code == 2


def test_a_job_whose_pods_run_together_needs_room_for_every_pod_s_volume(
    doctor: Doctor,
) -> None:
    """4 ranks, 200 GiB of scratch each, 700 GiB of room: each claim alone fits, the ranks' four
    do not. The controller's creates are admitted one by one, each charged as it is let in
    (checkQuotas), so the fourth rank waits forever and the run never assembles."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=5))
    job["spec"]["template"]["spec"]["volumes"] = [scratch()]
    space = quota("storage", {"requests.storage": "1Ti"}, {"requests.storage": "324Gi"})

    def build(now: datetime) -> list[Obj]:
        kept = [o for o in healthy(now) if o["kind"] not in ("Job", "Node")]
        return [*kept, scenarios.node("gpu-1", "64", "512Gi", gpus=8), job, space]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the usage limit 'storage' is reached (volume space: 324 "
        "GiB of 1 TiB in use, the job needs 800 GiB; only 3 of its 4 volumes would be made, and "
        "its programs run only all together)."
    )
    assert found["details"][-1] == (
        "the job's 4 volumes are made one by one, each charged as it is let in: 3 made, 1 refused"
    )
    assert result.exit_code == 2


def _pytorch_with_scratch(now: datetime) -> Obj:
    """A PyTorchJob of a Master and 3 Workers, 1 GPU each, each pod with 100 GiB of scratch."""
    job = pytorch_job("bert", now, workers=3, gpus=1, age=timedelta(minutes=5))
    for role in ("Master", "Worker"):
        job["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["volumes"] = [scratch("100Gi")]
    return job


def _pytorch_under_way(space_used: str, count_used: str) -> Any:
    """bert's Master-0 and Worker-0 run, their 2 claims counted in the claim quota's `used`."""

    def build(now: datetime) -> list[Obj]:
        job = _pytorch_with_scratch(now)
        kept = [o for o in healthy(now) if o["kind"] not in ("Job", "Node")]
        return [
            *kept,
            scenarios.node("gpu-1", "64", "512Gi", gpus=8),
            job,
            pytorch_pod(job, "Master", 0, now, node_name="gpu-1"),
            pytorch_pod(job, "Worker", 0, now, node_name="gpu-1"),
            quota("gpus", {"requests.nvidia.com/gpu": "4"}, {"requests.nvidia.com/gpu": "2"}),
            quota(
                "storage",
                {"requests.storage": "400Gi", "persistentvolumeclaims": "4"},
                {"requests.storage": space_used, "persistentvolumeclaims": count_used},
            ),
        ]

    return build


def test_a_job_under_way_is_charged_only_the_volumes_of_the_pods_it_still_creates(
    doctor: Doctor,
) -> None:
    """Master-0 and Worker-0 run, and their 2 claims are in used; the quota has room for exactly
    the 2 Workers' claims still to make. The ephemeral volume controller makes a claim only for
    a pod that exists and lacks it (controller.go `handleVolume`), and the training operator
    creates only the pods it lacks (training-operator common/pod.go ReconcilePods): nothing of
    the 2 present pods is charged again."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load(_pytorch_under_way("200Gi", "2"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert result.exit_code == 0


def test_a_job_under_way_short_of_volume_room_is_told_what_more_it_needs(doctor: Doctor) -> None:
    """Something else holds 100 GiB more: of the 2 claims still to make, 1 fits."""
    doctor.server.install(*ALL_GROUPS)
    doctor.load(_pytorch_under_way("300Gi", "2"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the usage limit 'storage' is reached (volume space: 300 "
        "GiB of 400 GiB in use, the job needs 200 GiB more; only 3 of its 4 volumes would be "
        "made, and its programs run only all together)."
    )
    assert found["details"][-2:] == [
        "2 of the job's 4 volumes were made and are counted in used: charged the 2 still to make",
        "the job's 4 volumes are made one by one, each charged as it is let in: 3 made, 1 refused",
    ]
    assert result.exit_code == 2


def test_volumes_of_a_running_job_s_programs_are_what_the_next_run_waits_for(
    doctor: Doctor,
) -> None:
    """bert (Indexed, 4 ranks, 1 GPU and 100 GiB of scratch each) runs whole; its 4 pods' claims
    fill the claim quota (400 GiB, 4 of 4) and its pods the GPU quota. The ephemeral volume
    controller makes each claim owned by its pod (pkg/controller/volume/ephemeral/
    controller.go `handleVolume`: an OwnerReference to the pod, controller: true), so the
    garbage collector deletes the claims with bert's pods: the same wait the GPU quota names,
    never "delete volumes" a running job's programs use."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=30))
    job["status"] = {"active": 4}
    job["spec"]["template"]["spec"]["volumes"] = [scratch("100Gi")]
    pods = [job_pod(job, doctor.now, suffix=f"r{i}", node_name="gpu-1") for i in range(4)]

    def build(now: datetime) -> list[Obj]:
        kept = [o for o in healthy(now) if o["kind"] not in ("Job", "Node")]
        return [
            *kept,
            scenarios.node("gpu-1", "64", "512Gi", gpus=8),
            job,
            *pods,
            quota("gpus", {"requests.nvidia.com/gpu": "4"}, {"requests.nvidia.com/gpu": "4"}),
            quota(
                "storage",
                {"requests.storage": "400Gi", "persistentvolumeclaims": "4"},
                {"requests.storage": "400Gi", "persistentvolumeclaims": "4"},
            ),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [
        ("admission.quota-held-by-running-job", "warn", "inferred"),
        ("admission.quota-held-by-running-job", "warn", "inferred"),
    ]
    by_quota = {f["objects"][0]: f for f in _admission(report)}
    held = by_quota["ResourceQuota/storage"]
    assert held["remedy"] == (
        "Wait for 'bert' to finish, or ask your cluster admin to raise the limit 'storage'."
    )
    assert held["objects"] == ["ResourceQuota/storage", "Job/bert"]
    assert held["details"][2] == (
        "held by the claims of the running programs of 'bert', each owned by its program and "
        "deleted with it"
    )
    assert result.exit_code == 0


def test_volumes_of_finished_programs_are_not_waited_for(doctor: Doctor) -> None:
    """The same quota full, but bert's pods have finished: they keep their claims until they
    are deleted (the claims go with the pod objects, not with their end), so no wait frees
    the room: the refusal stands, measured."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=30))
    job["spec"]["template"]["spec"]["volumes"] = [scratch("100Gi")]
    pods = [
        job_pod(job, doctor.now, suffix=f"r{i}", node_name="gpu-1", phase="Succeeded")
        for i in range(4)
    ]

    def build(now: datetime) -> list[Obj]:
        kept = [o for o in healthy(now) if o["kind"] not in ("Job", "Node")]
        return [
            *kept,
            scenarios.node("gpu-1", "64", "512Gi", gpus=8),
            job,
            *pods,
            quota(
                "storage",
                {"requests.storage": "400Gi", "persistentvolumeclaims": "4"},
                {"requests.storage": "400Gi", "persistentvolumeclaims": "4"},
            ),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert ("admission.quota-exceeded", "fail", "measured") in _codes(result.json())
    assert result.exit_code == 2
