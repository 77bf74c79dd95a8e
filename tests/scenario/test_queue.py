"""The queue check: does Kueue let the judged training job start, as Kueue decides it?

Every object is in Kueue's real shape (tests/support/kueue_objects.py cites each), served by
the fake at the versions a real Kueue serves: v1beta2 and v1beta1, or v1beta1 alone.
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support import kueue_objects as kq
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import NAMESPACE, Obj, healthy, job_pod, node, training_job, ts
from tests.support.training_kinds import pytorch_job

JOB = "train-042"
HOLDER = "train-041"
GPU = "nvidia.com/gpu"
FLAVOR = "gpu-a100"
WAITING = (
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in "
    "flavor gpu-a100, 8 more needed"
)


def _findings(report: dict[str, Any], check: str = "queue") -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == check]


def _finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, [f["code"] for f in report["findings"]]
    return found[0]


def _gpu_queue(
    version: str,
    *,
    nominal: str = "8",
    reserved: str = "8",
    covered: tuple[str, ...] = ("cpu", "memory", GPU),
    **queue: Any,
) -> Obj:
    quotas: kq.Quotas = {"cpu": "64", "memory": "512Gi", GPU: nominal}
    return kq.cluster_queue(
        "team-a-cq",
        [(list(covered), [(FLAVOR, {r: q for r, q in quotas.items() if r in covered})])],
        version=version,
        reserved={(FLAVOR, GPU): reserved, (FLAVOR, "cpu"): "4", (FLAVOR, "memory"): "16Gi"}
        if reserved != "0"
        else {},
        **queue,
    )


def queued(
    version: str = kq.V1BETA2,
    *,
    said: list[Obj] | None = None,
    cluster_queue: Callable[[str], Obj] | None = None,
    local_queue: bool = True,
    gpus: int = 8,
    extra: Callable[[datetime], list[Obj]] | None = None,
    label: bool = True,
    age: timedelta | None = None,
) -> Callable[[datetime], list[Obj]]:
    """A GPU job handed to the queue 'team-a' and suspended by Kueue, next to an idle 8-GPU
    machine; the ClusterQueue's 8 GPUs of flavor gpu-a100 are reserved by the running
    training job 'train-041' (its admitted Workload). `said`: the conditions Kueue wrote on
    the job's own Workload (None: no Workload yet). `age`: the job's; by default 20 seconds
    where Kueue has made no Workload yet (its reconciler makes one within seconds of the
    job's creation, jobframework/reconciler.go), else 10 minutes."""

    def build(now: datetime) -> list[Obj]:
        holder = training_job(HOLDER, now, gpus=8, age=timedelta(hours=1), finished=False)
        holder = with_shared_memory(holder)
        holder["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
        holder["metadata"]["uid"] = f"uid-{HOLDER}"
        job = training_job(JOB, now, gpus=gpus, age=age or timedelta(minutes=10), finished=False)
        job = kq.queued_job(with_shared_memory(job), "team-a", f"uid-{JOB}")
        if not label:
            del job["metadata"]["labels"]
        objects = [
            *healthy(now),
            node("gpu-a", "64", "512Gi", gpus=8),
            node("gpu-b", "64", "512Gi", gpus=8),
            holder,
            job_pod(holder, now, suffix="x7k2p", node_name="gpu-a"),
            job,
            kq.resource_flavor(FLAVOR, version=version, node_labels={"accelerator": "gpu"}),
            (cluster_queue or _gpu_queue)(version),
            kq.workload(
                holder,
                "team-a",
                version=version,
                conditions=kq.admitted("team-a-cq"),
                admitted_to="team-a-cq",
                flavors={"cpu": FLAVOR, "memory": FLAVOR, GPU: FLAVOR},
                usage={"cpu": "4", "memory": "16Gi", GPU: "8"},
            ),
        ]
        if local_queue:
            objects.append(kq.local_queue("team-a", "team-a-cq", version=version))
        if said is not None:
            objects.append(kq.workload(job, "team-a", version=version, conditions=said))
        objects += extra(now) if extra else []
        owners = {r["uid"] for w in objects if w["kind"] == "Workload" for r in _owners(w)}
        if age is None and f"uid-{JOB}" not in owners:
            job["metadata"]["creationTimestamp"] = ts(now - timedelta(seconds=20))
        return objects

    return build


def _owners(obj: Obj) -> list[Obj]:
    return list(obj["metadata"].get("ownerReferences", []))


def with_shared_memory(job: Obj) -> Obj:
    """A multi-GPU job's template with a memory-backed /dev/shm, as PyTorch needs (else doctor
    warns about it: docs/scheduling.md, what the programs need)."""
    spec = job["spec"]["template"]["spec"]
    spec["volumes"] = [*spec.get("volumes", []), {"name": "shm", "emptyDir": {"medium": "Memory"}}]
    for container in spec["containers"]:
        container["volumeMounts"] = [{"name": "shm", "mountPath": "/dev/shm"}]
    return job


def _install(doctor: Doctor, version: str) -> None:
    versions = ["v1beta2", "v1beta1"] if version == kq.V1BETA2 else ["v1beta1"]
    doctor.server.install("kueue.x-k8s.io", versions=versions)


@pytest.mark.parametrize("version", [kq.V1BETA2, kq.V1BETA1])
def test_a_queued_job_whose_quota_is_in_use_waits_for_who_holds_it(
    doctor: Doctor, version: str
) -> None:
    """kubernetes-sigs/kueue#2391's case: the Workload says `insufficient unused quota`, an
    8-GPU machine is idle. The queue's word is measured and names the holder; it is the wait
    rule (exit 0), not `ready`. Discovery picks the version read: v1beta2 where served."""
    _install(doctor, version)
    doctor.load(queued(version, said=kq.waiting(WAITING)))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.held", "warn", "measured")]
    assert _findings(report, "capacity") == [("capacity.fits", "ok", "measured")], "precondition"
    assert _findings(report, "workloads") == [("workloads.ok", "ok", "measured")], (
        "the queue check judges the queued job: no second word from the workloads check"
    )
    found = _finding(report, "queue.held")
    assert found["headline"] == (
        "The training job 'train-042' waits in the queue 'team-a': its quota of nvidia.com/gpu "
        "of type 'gpu-a100' is in use by the training job 'train-041'."
    )
    assert report["headline"]["code"] == "queue.held"
    assert report["headline"]["rule"] == "waiting-for-running-job"
    assert result.exit_code == 0
    read = {r.path for r in doctor.server.requests() if "kueue" in r.path}
    assert f"/apis/kueue.x-k8s.io/{version}/clusterqueues" in read
    assert not [p for p in read if f"/{version}/" not in p], "one version read"


def test_the_job_s_place_in_line_where_kueue_reports_it(doctor: Doctor) -> None:
    """A v1beta1 ClusterQueue's `status.pendingWorkloadsStatus` lists its first pending
    workloads in order: the job's place is said."""
    version = kq.V1BETA1

    def with_line(v: str) -> Obj:
        job = kq.queued_job(
            training_job(JOB, datetime.now(), finished=False), "team-a", f"uid-{JOB}"
        )
        return _gpu_queue(v, pending=["job-other-1a2b3", kq.workload_name(job)])

    _install(doctor, version)
    doctor.load(queued(version, said=kq.waiting(WAITING), cluster_queue=with_line))
    found = _finding(doctor.live("-o", "json").json(), "queue.held")
    assert found["headline"].endswith("the training job 'train-041'; it is number 2 in line.")


def test_before_kueue_has_said_anything_the_quota_arithmetic_says_it_waits(
    doctor: Doctor,
) -> None:
    """No Workload yet: the flavor assignment rebuilt from the ClusterQueue's reserved quota
    says it waits, and says that it is inferred, in Kueue's words: a Job's one pod set is
    `main` (apis/kueue/v1beta2/constants.go `DefaultPodSetName`,
    pkg/controller/jobs/job/job_controller.go `PodSets`)."""
    _install(doctor, kq.V1BETA2)
    doctor.load(queued())
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.held", "warn", "inferred")]
    found = _finding(report, "queue.held")
    assert "inferred: Kueue's flavor assignment rebuilt from the queues' quota" in found["details"]
    assert WAITING in found["details"]
    assert "pod set main x1: 4 CPUs, 16 GiB, 8 nvidia.com/gpu each" in found["details"]


def test_a_kubeflow_job_s_pod_sets_are_named_as_kueue_names_them(doctor: Doctor) -> None:
    """Kueue names a Kubeflow job's pod sets after its replica types, lower-cased
    (pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go `PodSets`,
    apis/kueue/v1beta2/workload_types.go `NewPodSetReference`): a PyTorchJob's are `master`
    and `worker`, and the rebuilt flavor assignment says those."""

    def pytorch(now: datetime) -> list[Obj]:
        job = pytorch_job("ddp", now, workers=1, gpus=4, age=timedelta(seconds=10))
        job["metadata"].update(labels={"kueue.x-k8s.io/queue-name": "team-a"}, uid="uid-ddp")
        job["spec"]["runPolicy"] = {"suspend": True}
        job["status"] = {}
        return [job]

    _install(doctor, kq.V1BETA2)
    doctor.server.install("kubeflow.org")
    doctor.load(queued(extra=pytorch))
    found = _finding(doctor.live("-o", "json").json(), "queue.held")
    assert [d for d in found["details"] if "pod set" in d and "flavors {" not in d] == [
        "pod set master x1: 8 CPUs, 64 GiB, 4 nvidia.com/gpu each",
        "pod set worker x1: 8 CPUs, 64 GiB, 4 nvidia.com/gpu each",
        "couldn't assign flavors to pod set master: insufficient unused quota for "
        "nvidia.com/gpu in flavor gpu-a100, 4 more needed",
        "couldn't assign flavors to pod set worker: insufficient unused quota for "
        "nvidia.com/gpu in flavor gpu-a100, 8 more needed",
    ]


def test_a_queue_with_room_lets_the_job_in(doctor: Doctor) -> None:
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(cluster_queue=lambda v: _gpu_queue(v, nominal="16")))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.fits", "ok", "inferred")]
    assert report["headline"]["code"] == "ready"
    assert result.exit_code == 0


NOT_TAKEN_DETAIL = (
    "Kueue ignores a job whose namespace its managedJobsNamespaceSelector does not match, "
    "queue label or not (v0.15 on), and one whose kind its integrations.frameworks leave out; "
    "doctor does not read its Configuration"
)


@pytest.mark.parametrize(
    ("nominal", "would"),
    [("16", "queue.fits"), ("8", "queue.held")],
    ids=["room", "quota-in-use"],
)
def test_a_job_kueue_has_not_taken_up_is_unknown_not_room_in_the_queue(
    doctor: Doctor, nominal: str, would: str
) -> None:
    """The job names the queue and Kueue's webhook suspended it, but 10 minutes on no
    Workload is its: Kueue's reconciler makes one within seconds for a job it manages
    (jobframework/reconciler.go `ReconcileGenericJob`), and ignores, label or not, one in a
    namespace its `managedJobsNamespaceSelector` does not match ("Namespace not opted in for
    Kueue management"; `ManagedJobsNamespaceSelectorAlwaysRespected` on since v0.15, locked
    since v0.19), which the webhook still suspends (jobframework/utils.go
    `WorkloadShouldBeSuspended`: a queue label is enough). That setting lives in Kueue's
    Configuration, which doctor does not read: the room in the queue would say ready (or
    waiting), so it says it can't tell."""
    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(cluster_queue=lambda v: _gpu_queue(v, nominal=nominal), age=timedelta(minutes=10))
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.not-taken", "unknown", "cant-check")]
    found = _finding(report, "queue.not-taken")
    assert found["headline"] == (
        "Couldn't tell whether Kueue will ever start the training job 'train-042': it has "
        "waited 10 minutes for the queue 'team-a', and Kueue, which takes up a job it manages "
        "within seconds, has not taken it up."
    )
    assert found["remedy"].startswith(
        "Ask your cluster admin whether Kueue manages this environment and this kind of job "
        "(its settings `managedJobsNamespaceSelector` and `integrations.frameworks`; for a "
        "Kueue installed with its defaults, `kubectl "
    ), found["remedy"]
    assert found["remedy"].endswith(
        "-n kueue-system get configmap kueue-manager-config -o yaml` shows them) and whether "
        "Kueue is running; until Kueue takes the job up, it stays paused."
    ), found["remedy"]
    assert found["details"][:3] == [
        "Job/train-042 names LocalQueue team-a and is suspended; no Workload is owned by it or "
        "labelled kueue.x-k8s.io/job-uid=uid-train-042",
        NOT_TAKEN_DETAIL,
        f"were Kueue to take it up: {would}",
    ]
    assert report["headline"]["code"] == "queue.not-taken"
    assert result.exit_code == 3


def test_a_young_job_kueue_has_not_taken_up_yet_is_judged_by_the_room(doctor: Doctor) -> None:
    """Within the pending grace (5 minutes) a job without a Workload is one Kueue has not
    reached yet: the queue's room is the verdict (inferred)."""
    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(cluster_queue=lambda v: _gpu_queue(v, nominal="16"), age=timedelta(minutes=4))
    )
    result = doctor.live("-o", "json")
    assert _findings(result.json()) == [("queue.fits", "ok", "inferred")]
    assert result.exit_code == 0


def test_a_job_kueue_has_not_taken_up_that_no_queue_would_take_stays_a_failure(
    doctor: Doctor,
) -> None:
    """Taken up or not, a job no flavor of its queue will ever take never starts: the unknown
    is said only where it changes the verdict."""
    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(
            cluster_queue=lambda v: _gpu_queue(v, covered=("cpu", "memory"), reserved="0"),
            age=timedelta(minutes=10),
        )
    )
    result = doctor.live("-o", "json")
    assert _findings(result.json()) == [("queue.never-fits", "fail", "inferred")]
    assert result.exit_code == 2


def test_an_admitted_job_is_measured_ok(doctor: Doctor) -> None:
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(said=kq.admitted("team-a-cq")))
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.admitted", "ok", "measured")]


def test_a_missing_local_queue_is_a_measured_failure(doctor: Doctor) -> None:
    """Kueue's own words for it: `LocalQueue team-a doesn't exist` (workload_controller.go
    `getQueueBlocker`); the job never starts."""
    said = kq.waiting("LocalQueue team-a doesn't exist", reason="Inadmissible")
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(said=said, local_queue=False))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.missing", "fail", "measured")]
    found = _finding(report, "queue.missing")
    assert found["headline"] == (
        "The training job 'train-042' waits for the queue 'team-a', which doesn't exist: it "
        "will never start."
    )
    assert "`kubectl" in found["remedy"]
    assert "get localqueues" in found["remedy"]
    assert report["headline"]["code"] == "queue.missing"
    assert result.exit_code == 2


def test_an_admitted_job_runs_on_after_its_local_queue_is_deleted(doctor: Doctor) -> None:
    """workload_controller.go `reconcileOnLocalQueueActiveState`: an admitted Workload is left
    alone unless the stop policy is HoldAndDrain; only one without a reservation is made
    inadmissible for a LocalQueue "terminating or missing". The job's pod runs; its queue
    was deleted afterwards."""

    def running(now: datetime) -> list[Obj]:
        objects = queued(
            said=kq.admitted("team-a-cq"),
            local_queue=False,
            cluster_queue=lambda v: _gpu_queue(v, nominal="16", reserved="16"),
        )(now)
        job = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == JOB)
        job["spec"]["suspend"] = False
        job["status"] = {"active": 1, "startTime": job["metadata"]["creationTimestamp"]}
        own = next(o for o in objects if o["kind"] == "Workload" and JOB in o["metadata"]["name"])
        own["status"]["admission"] = {
            "clusterQueue": "team-a-cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "flavors": {"cpu": FLAVOR, "memory": FLAVOR, GPU: FLAVOR},
                    "resourceUsage": {"cpu": "4", "memory": "16Gi", GPU: "8"},
                    "count": 1,
                }
            ],
        }
        return [*objects, job_pod(job, now, suffix="r2d2x", node_name="gpu-b")]

    _install(doctor, kq.V1BETA2)
    doctor.load(running)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.admitted", "ok", "measured")]
    found = _finding(report, "queue.admitted")
    assert found["headline"] == "The queue 'team-a' has let the training job 'train-042' start."
    assert found["details"][-1] == (
        "LocalQueue team-a doesn't exist in train: Kueue lets admitted work run on"
    )
    assert result.exit_code == 0


def test_an_older_job_held_for_a_missing_queue_never_starts_either(doctor: Doctor) -> None:
    """Only the judged (newest) job's queue is judged whole; an older unfinished job held for a
    LocalQueue that does not exist is a measured failure too."""

    def older(now: datetime) -> list[Obj]:
        job = training_job("train-040", now, gpus=1, age=timedelta(hours=2), finished=False)
        return [kq.queued_job(job, "gone", "uid-train-040")]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(said=kq.waiting(WAITING), extra=older))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [
        ("queue.held", "warn", "measured"),
        ("queue.missing", "fail", "measured"),
    ]
    assert "'train-040'" in _finding(report, "queue.missing")["headline"]
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("queue", "code", "why"),
    [
        (
            {"stop_policy": "Hold"},
            "queue.stopped",
            "the shared queue 'team-a-cq' it feeds is stopped",
        ),
        (
            {
                "active": (
                    "False",
                    "FlavorNotFound",
                    "Can't admit new workloads: references missing ResourceFlavor(s): gpu-a100",
                )
            },
            "queue.inactive",
            "the shared queue 'team-a-cq' it feeds is not active: a machine type it offers "
            "doesn't exist",
        ),
        (
            {
                "active": (
                    "False",
                    "MultiKueueWithProvisioningRequest",
                    "Can't admit new workloads: Cannot use both MultiKueue and "
                    "ProvisioningRequest AdmissionChecks together, found: multikueue, provision.",
                )
            },
            "queue.inactive",
            "the shared queue 'team-a-cq' it feeds is not active: Kueue says "
            "“MultiKueueWithProvisioningRequest: Can't admit new workloads: Cannot use both "
            "MultiKueue and ProvisioningRequest AdmissionChecks together, found: multikueue, "
            "provision”.",
        ),
        (
            {"active": ("False", "Unknown", "Can't admit new workloads.")},
            "queue.inactive",
            "the shared queue 'team-a-cq' it feeds is not active: Kueue says “Unknown: Can't "
            "admit new workloads”.",
        ),
    ],
    ids=["stopped", "inactive", "inactive-unruled", "inactive-unknown"],
)
def test_a_stopped_or_inactive_cluster_queue_admits_nothing(
    doctor: Doctor, queue: dict[str, Any], code: str, why: str
) -> None:
    """`stopPolicy` Hold or HoldAndDrain, or the Active condition False (apis/kueue/v1beta2
    clusterqueue_types.go `ClusterQueueActiveReason*`); a reason doctor has no words for is
    quoted with its message, as cache/scheduler/clusterqueue.go `inactiveReason` writes it."""
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(cluster_queue=lambda v: _gpu_queue(v, **queue)))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [(code, "fail", "measured")]
    assert why in _finding(report, code)["headline"]
    assert result.exit_code == 2


def test_a_stopped_local_queue_says_how_to_start_it(doctor: Doctor) -> None:
    def extra(now: datetime) -> list[Obj]:
        return [kq.local_queue("team-a", "team-a-cq", stop_policy="HoldAndDrain")]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(local_queue=False, extra=extra))
    found = _finding(doctor.live("-o", "json").json(), "queue.stopped")
    assert "patch localqueue team-a --type=merge -p" in found["remedy"]


def test_a_resource_no_flavor_offers_is_never_admitted(doctor: Doctor) -> None:
    """The queue covers cpu and memory only: `resource nvidia.com/gpu unavailable in
    ClusterQueue` (flavorassigner.go findFlavorForPodSets), even with borrowing."""
    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(cluster_queue=lambda v: _gpu_queue(v, covered=("cpu", "memory"), reserved="0"))
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.never-fits", "fail", "inferred")]
    found = _finding(report, "queue.never-fits")
    assert found["headline"] == (
        "The training job 'train-042' can never start from the queue 'team-a': it offers no "
        "nvidia.com/gpu."
    )
    assert (
        "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in "
        "ClusterQueue"
    ) in found["details"]
    assert result.exit_code == 2


def test_more_than_the_quota_even_borrowing_is_never_admitted(doctor: Doctor) -> None:
    """16 GPUs asked of a queue of 8 whose cohort lends 4 more: over `potentialAvailable`
    (ExceedsMaxQuota), whatever finishes."""

    def cohort_queue(v: str) -> Obj:
        return _gpu_queue(v, cohort="research", reserved="0")

    def lender(now: datetime) -> list[Obj]:
        return [
            kq.cluster_queue(
                "team-b-cq",
                [([GPU], [(FLAVOR, {GPU: ("4", None, None)})])],
                cohort="research",
            )
        ]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(cluster_queue=cohort_queue, gpus=16, extra=lender))
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.never-fits", "fail", "inferred")]
    found = _finding(report, "queue.never-fits")
    assert "more than its quota is, even borrowing all it may" in found["headline"]
    assert any("> maximum capacity (12)" in d for d in found["details"])


def test_borrowing_unused_quota_in_the_cohort_admits_it(doctor: Doctor) -> None:
    """The queue's own 8 GPUs are in use; its cohort's other queue lends 8 it does not use."""

    def cohort_queue(v: str) -> Obj:
        return _gpu_queue(v, cohort="research")

    def lender(now: datetime) -> list[Obj]:
        return [kq.cluster_queue("team-b-cq", [([GPU], [(FLAVOR, {GPU: "8"})])], cohort="research")]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(cluster_queue=cohort_queue, extra=lender))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.fits-borrowing", "ok", "inferred")]
    assert "'research'" in _finding(report, "queue.fits-borrowing")["headline"]
    assert any(r.path.endswith("/cohorts") for r in doctor.server.requests()), "cohorts read"
    assert result.exit_code == 0


def test_an_admission_check_in_progress_is_a_wait_with_its_message(doctor: Doctor) -> None:
    """Quota reserved, a ProvisioningRequest check still Pending: Kueue copies the request's
    message to the Workload (kubernetes-sigs/kueue#1749)."""
    message = "Waiting for resources. Currently there are not enough resources available"
    said = [kq.admitted("team-a-cq")[0]]
    checks = [
        {
            "name": "provision-gpus",
            "state": "Pending",
            "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]

    def extra(now: datetime) -> list[Obj]:
        job = kq.queued_job(training_job(JOB, now, finished=False), "team-a", f"uid-{JOB}")
        return [
            kq.admission_check("provision-gpus"),
            kq.workload(job, "team-a", conditions=said, checks=checks, admitted_to="team-a-cq"),
        ]

    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(
            cluster_queue=lambda v: _gpu_queue(v, admission_checks=["provision-gpus"]), extra=extra
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.check-pending", "warn", "measured")]
    found = _finding(report, "queue.check-pending")
    assert found["headline"] == (
        "The training job 'train-042' has its place in the queue 'team-a' and waits for the "
        f"start check 'provision-gpus', which asks the cluster for machines for it: {message}."
    )
    assert any(r.path.endswith("/admissionchecks") for r in doctor.server.requests())
    assert result.exit_code == 0


def test_a_rejected_admission_check_is_a_failure(doctor: Doctor) -> None:
    said = [kq.admitted("team-a-cq")[0]]
    checks = [
        {
            "name": "provision-gpus",
            "state": "Rejected",
            "message": "capacity is not available",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]

    def extra(now: datetime) -> list[Obj]:
        job = kq.queued_job(training_job(JOB, now, finished=False), "team-a", f"uid-{JOB}")
        return [kq.workload(job, "team-a", conditions=said, checks=checks)]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(extra=extra))
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.check-rejected", "fail", "measured")]


def test_a_deactivated_workload_is_a_failure(doctor: Doctor) -> None:
    """`spec.active: false` after too many requeues (RequeuingLimitExceeded)."""
    said = [
        kq.condition(
            "Evicted",
            "True",
            "Deactivated",
            "The workload is deactivated due to exceeding the maximum number of re-queuing retries",
        ),
        kq.condition("QuotaReserved", "False", "Pending", "The workload is deactivated"),
    ]

    def extra(now: datetime) -> list[Obj]:
        job = kq.queued_job(training_job(JOB, now, finished=False), "team-a", f"uid-{JOB}")
        return [kq.workload(job, "team-a", conditions=said, active=False)]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(extra=extra))
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.deactivated", "fail", "measured")]
    found = _finding(report, "queue.deactivated")
    assert "re-queuing retries" in found["headline"]
    assert "patch workload job-train-042-" in found["remedy"]


def test_a_queue_closed_to_this_environment_never_admits(doctor: Doctor) -> None:
    """A ClusterQueue's namespaceSelector that the namespace's labels do not match."""
    selector = {"matchLabels": {"team": "vision"}}
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(cluster_queue=lambda v: _gpu_queue(v, namespace_selector=selector)))
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.not-allowed", "fail", "measured")]


def test_a_planned_job_without_a_queue_goes_to_the_default_local_queue(
    doctor: Doctor, tmp_path: Any
) -> None:
    """Kueue hands a job that names no queue to the namespace's LocalQueue `default`
    (jobframework/defaults.go ApplyDefaultLocalQueue): `--job-file` is judged there."""
    import json

    def extra(now: datetime) -> list[Obj]:
        return [kq.local_queue("default", "team-a-cq")]

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(extra=extra))
    planned = training_job("planned", datetime.now(), gpus=8, finished=False)
    del planned["status"]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(planned))
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert _findings(report) == [("queue.held", "warn", "inferred")]
    assert "in the queue 'default'" in _finding(report, "queue.held")["headline"]


def _nightly(now: datetime, labels: dict[str, dict[str, str]]) -> Obj:
    """A batch/v1 CronJob of one GPU pod, `labels` on its `metadata` or its `jobTemplate`'s."""
    template = training_job("nightly", now, gpus=1, finished=False)["spec"]
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": "nightly",
            "namespace": NAMESPACE,
            "uid": "uid-cron",
            "creationTimestamp": ts(now - timedelta(minutes=5)),
            "labels": labels.get("metadata", {}),
        },
        "spec": {
            "schedule": "0 2 * * *",
            "jobTemplate": {
                "metadata": {"labels": labels.get("jobTemplate", {})},
                "spec": template,
            },
        },
        "status": {},
    }


@pytest.mark.parametrize("where", ["live", "job-file"])
def test_a_cron_job_names_its_queue_in_its_job_template(
    doctor: Doctor, tmp_path: Any, where: str
) -> None:
    """Kueue's docs put a CronJob's queue label in `jobTemplate.metadata` (site/content/en/docs/
    tasks/run/run_cronjobs.md, site/static/examples/jobs/sample-cronjob.yaml): every Job the
    CronJob makes carries its template's labels (kubernetes pkg/controller/cronjob/utils.go
    getJobFromTemplate2, `copyLabels(&cj.Spec.JobTemplate)`), so each waits for that queue;
    here 'user-queue' does not exist. A label on the CronJob's own metadata reaches no Job."""
    import json

    label = {"kueue.x-k8s.io/queue-name": "user-queue"}
    _install(doctor, kq.V1BETA2)

    def build(now: datetime) -> list[Obj]:
        quota: kq.Quotas = {"cpu": "64", "memory": "512Gi", GPU: "8"}
        return [
            *healthy(now),
            node("gpu-a", "64", "512Gi", gpus=8),
            kq.resource_flavor(FLAVOR),
            kq.cluster_queue("cq", [(list(quota), [(FLAVOR, quota)])]),
            kq.local_queue("other", "cq"),
        ]

    doctor.load(build)
    args: tuple[str, ...] = ("-o", "json")
    if where == "live":
        doctor.server.add(_nightly(datetime.now(), {"jobTemplate": label}))
    else:
        path = tmp_path / "cron.json"
        path.write_text(json.dumps(_nightly(datetime.now(), {"jobTemplate": label})))
        args += ("--job-file", str(path))
    result = doctor.live(*args)
    report = result.json()
    assert _findings(report) == [("queue.missing", "fail", "measured")]
    found = _finding(report, "queue.missing")
    assert found["headline"] == (
        "The training job 'nightly' waits for the queue 'user-queue', which doesn't exist: it "
        "will never start."
    )
    assert found["details"] == ["CronJob/nightly: LocalQueue user-queue doesn't exist in train"]
    assert result.exit_code == 2
    doctor.server.add(_nightly(datetime.now(), {"metadata": label}))
    if where == "job-file":
        path.write_text(json.dumps(_nightly(datetime.now(), {"metadata": label})))
    report = doctor.live(*args).json()
    assert _finding(report, "queue.not-used")["details"] == [
        "CronJob/nightly names no queue and there is no LocalQueue 'default'"
    ], "the CronJob's own label is on none of its Jobs"


def test_a_job_still_to_be_created_has_no_workload_to_miss(doctor: Doctor, tmp_path: Any) -> None:
    """Kueue makes a Workload for a job once it is created: a `--job-file` job (here one
    exported from the cluster, its creation time, uid, label and suspension kept) has none
    yet, however old its creation time, and the queue's room is its verdict
    (knowledge/kueue.py `still_to_create`)."""
    import json

    _install(doctor, kq.V1BETA2)
    doctor.load(queued(cluster_queue=lambda v: _gpu_queue(v, nominal="16")))
    now = datetime.now()
    exported = kq.queued_job(
        training_job("planned", now, gpus=8, finished=False), "team-a", "uid-planned"
    )
    assert exported["metadata"]["creationTimestamp"] == ts(now - timedelta(hours=3))
    path = tmp_path / "job.json"
    path.write_text(json.dumps(exported))
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert _findings(report) == [("queue.fits", "ok", "inferred")]
    assert "Job/planned" in _finding(report, "queue.fits")["objects"]


def _default_queue_only(version: str) -> Callable[[datetime], list[Obj]]:
    """An 8-GPU machine and, in `version`, the namespace's LocalQueue `default` feeding an
    unused 8-GPU ClusterQueue."""

    def build(now: datetime) -> list[Obj]:
        quota: kq.Quotas = {"cpu": "64", "memory": "512Gi", GPU: "8"}
        return [
            *healthy(now),
            node("gpu-a", "64", "512Gi", gpus=8),
            kq.resource_flavor(FLAVOR, version=version),
            kq.cluster_queue("cq", [(list(quota), [(FLAVOR, quota)])], version=version),
            kq.local_queue("default", "cq", version=version),
        ]

    return build


def test_a_cron_job_without_a_queue_starts_jobs_the_default_queue_takes(doctor: Doctor) -> None:
    """Each Job a CronJob starts is created then, and Kueue's Job webhook labels one that names
    no queue with the LocalQueue `default` where it exists (jobs/job/job_webhook.go `Default`
    → jobframework/defaults.go `ApplyDefaultLocalQueue`; a CronJob is no Kueue integration,
    so integrationmanager.go `IsOwnerManagedByKueueForObject` does not stop it; Kueue's
    site/content/en/docs/tasks/run/run_cronjobs.md). On by default in every Kueue serving
    v1beta2 (pkg/features/kube_features.go `LocalQueueDefaulting`: beta on since v0.12, GA
    locked on since v0.17, no gate since v0.19): the next Job waits in 'default'. (A
    `--job-file` job goes there too: test_a_planned_job_without_a_queue_goes_to_the_...)"""
    _install(doctor, kq.V1BETA2)
    doctor.load(_default_queue_only(kq.V1BETA2))
    doctor.server.add(_nightly(datetime.now(), {}))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.fits", "ok", "inferred")]
    found = _finding(report, "queue.fits")
    assert found["headline"] == "The queue 'default' has room for the training job 'nightly'."
    assert result.exit_code == 0
    read = {r.path.rsplit("/", 1)[-1] for r in doctor.server.requests() if "kueue" in r.path}
    assert read >= {"localqueues", "clusterqueues", "resourceflavors", "workloads"}


@pytest.mark.parametrize("kind", ["CronJob", "Job"])
def test_where_kueue_may_not_hand_a_job_to_the_default_queue_doctor_says_so(
    doctor: Doctor, tmp_path: Any, kind: str
) -> None:
    """A Kueue serving v1beta1 alone is v0.14 or older: `LocalQueueDefaulting` is absent before
    v0.10, off by default in v0.10 and v0.11 (alpha), on from v0.12 (pkg/features/
    kube_features.go), and doctor reads no release number. A CronJob's next Job, or a
    `--job-file` Job, that names no queue beside a LocalQueue `default` may wait there or run
    unqueued: unknown, never `queue.not-used`, and no more of Kueue's objects read for it."""
    import json

    _install(doctor, kq.V1BETA1)
    doctor.load(_default_queue_only(kq.V1BETA1))
    args: tuple[str, ...] = ("-o", "json")
    if kind == "CronJob":
        doctor.server.add(_nightly(datetime.now(), {}))
        name, where = "nightly", "the settings of the jobs it starts"
    else:
        planned = training_job("planned", datetime.now(), gpus=1, finished=False)
        del planned["status"]
        path = tmp_path / "job.json"
        path.write_text(json.dumps(planned))
        args += ("--job-file", str(path))
        name, where = "planned", "its settings"
    result = doctor.live(*args)
    report = result.json()
    assert _findings(report) == [("queue.default-unconfirmed", "unknown", "cant-check")]
    found = _finding(report, "queue.default-unconfirmed")
    assert found["headline"] == (
        f"Couldn't tell whether the training job '{name}', which names no queue, will wait in "
        "the queue 'default': this Kueue release (older than v0.15) hands such a job there "
        "only where a setting of its own that doctor can't read is on."
    )
    assert found["remedy"].startswith(
        "Hand the job to the queue for certain with `kueue.x-k8s.io/queue-name: default` in "
        f"{where}"
    ), found["remedy"]
    assert report["headline"]["code"] == "queue.default-unconfirmed"
    assert result.exit_code == 3
    read = [r.path for r in doctor.server.requests() if "kueue" in r.path]
    assert read == ["/apis/kueue.x-k8s.io/v1beta1/namespaces/train/localqueues"]


def test_a_job_held_without_a_queue_never_starts(doctor: Doctor) -> None:
    """Kueue's `manageJobsWithoutQueueName`: a job with no queue label is suspended and gets a
    Workload with no queue, never admitted."""
    _install(doctor, kq.V1BETA2)

    def extra(now: datetime) -> list[Obj]:
        job = kq.queued_job(training_job(JOB, now, finished=False), "", f"uid-{JOB}")
        return [kq.workload(job, "")]

    doctor.load(queued(label=False, extra=extra))
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.none-named", "fail", "measured")]


def test_kueue_not_installed_is_a_measured_absence(doctor: Doctor) -> None:
    doctor.load("healthy")
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.not-used", "ok", "measured")]
    assert _finding(report, "queue.not-used")["details"] == ["Kueue is not installed"]
    assert not [r for r in doctor.server.requests() if "kueue" in r.path], "no Kueue read"


def test_with_kueue_installed_a_job_without_a_queue_costs_one_read(doctor: Doctor) -> None:
    _install(doctor, kq.V1BETA2)
    doctor.load("healthy")
    report = doctor.live("-o", "json").json()
    assert _findings(report) == [("queue.not-used", "ok", "measured")]
    read = [r.path for r in doctor.server.requests() if "kueue" in r.path]
    assert read == ["/apis/kueue.x-k8s.io/v1beta2/namespaces/train/localqueues"]


@pytest.mark.parametrize(
    ("path", "noun"),
    [
        (r"/localqueues$", "localqueues"),
        (r"/clusterqueues$", "clusterqueues"),
        (r"/resourceflavors$", "resourceflavors"),
        (r"/workloads$", "workloads"),
    ],
)
def test_kueue_s_objects_not_readable_is_unknown_naming_the_permission(
    doctor: Doctor, path: str, noun: str
) -> None:
    """A 403 on any of the reads the verdict needs: unknown, never ok; the remedy is the
    permission, with the `kubectl auth can-i` that proves it. The suspended job still gets the
    workloads check's word that it waits for its queue."""
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(said=kq.waiting(WAITING)))
    doctor.server.inject(Fault.FORBIDDEN, path)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.cant-read", "unknown", "cant-check")]
    found = _finding(report, "queue.cant-read")
    assert f"auth can-i list {noun}" in found["remedy"]
    assert result.exit_code == 3
    if noun == "localqueues":
        assert _findings(report, "workloads") == [("workloads.job-queued", "warn", "inferred")]


KUEUE_READS = (
    "localqueues",
    "clusterqueues",
    "resourceflavors",
    "workloads",
    "cohorts",
    "admissionchecks",
)
FAULTS = (
    Fault.FORBIDDEN,
    Fault.SERVER_ERROR,
    Fault.MALFORMED,
    Fault.WRONG_KIND,
    Fault.RESET,
    Fault.DELAY,
    Fault.NOT_FOUND,
)


def test_every_kueue_read_times_every_fault_class(doctor: Doctor) -> None:
    """Each of Kueue's reads, failing as reads fail: never a traceback, always a report; the
    queue check unknown where the verdict needs the read. Two reads do not decide: a Cohort
    list answered 404 is a Kueue without Cohort objects (measured: no cohort quota), and the
    AdmissionChecks only name what a check does."""
    from datetime import UTC

    doctor.round_trip = False  # each fault class's round trip is pinned in test_snapshot.py
    _install(doctor, kq.V1BETA2)
    doctor.load("healthy")
    doctor.server.add(*kq.every_queue_read(datetime.now(UTC)))
    baseline = doctor.live("-o", "json", "--request-timeout", "0.9")
    base = _findings(baseline.json())
    assert base == [("queue.fits", "ok", "inferred")], "precondition"
    made = {r.path.rsplit("/", 1)[-1] for r in doctor.server.requests() if "kueue" in r.path}
    assert made == set(KUEUE_READS), "precondition: every Kueue read is made"
    held = 0
    for resource in KUEUE_READS:
        for fault in FAULTS:
            doctor.server.clear_faults()
            doctor.server.inject(fault, rf"/kueue\.x-k8s\.io/v1beta2/.*{resource}$", delay=3)
            result = doctor.live("-o", "json", "--request-timeout", "0.9")
            cell = f"{fault.name} on {resource}"
            assert result.exit_code != 1, f"{cell}: {result.stderr}"
            found = _findings(result.json())
            decides = resource != "admissionchecks" and not (
                resource == "cohorts" and fault is Fault.NOT_FOUND
            )
            if decides:
                assert found == [("queue.cant-read", "unknown", "cant-check")], cell
                assert result.exit_code == 3, cell
            else:
                assert found == base, cell
            held += 1
    assert held == len(KUEUE_READS) * len(FAULTS)


def _admitted_and_running(
    *,
    local_stop: str | None = None,
    cluster_stop: str | None = None,
    active: tuple[str, str, str] = ("True", "Ready", "Can admit new workloads"),
) -> Callable[[datetime], list[Obj]]:
    """The job 'train-042' admitted by Kueue and running: its pod on gpu-a, its Workload's
    QuotaReserved, Admitted and PodsReady all True, its quota reserved in 'team-a-cq'."""

    def build(now: datetime) -> list[Obj]:
        job = training_job(JOB, now, gpus=8, age=timedelta(minutes=30), finished=False)
        job = with_shared_memory(job)
        job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
        job["metadata"]["uid"] = f"uid-{JOB}"
        job["spec"]["suspend"] = False
        return [
            *healthy(now),
            node("gpu-a", "64", "512Gi", gpus=8),
            job,
            job_pod(job, now, suffix="abcde", node_name="gpu-a"),
            kq.resource_flavor(FLAVOR, node_labels={"accelerator": "gpu"}),
            _gpu_queue(kq.V1BETA2, stop_policy=cluster_stop, active=active),
            kq.local_queue("team-a", "team-a-cq", stop_policy=local_stop),
            kq.workload(
                job,
                "team-a",
                conditions=kq.admitted("team-a-cq"),
                admitted_to="team-a-cq",
                flavors={"cpu": FLAVOR, "memory": FLAVOR, GPU: FLAVOR},
                usage={"cpu": "4", "memory": "16Gi", GPU: "8"},
            ),
        ]

    return build


@pytest.mark.parametrize(
    "queues",
    [
        {"local_stop": "Hold"},
        {
            "cluster_stop": "Hold",
            "active": ("False", "Stopped", "Can't admit new workloads; clusterQueue is stopped"),
        },
        {
            "active": (
                "False",
                "FlavorNotFound",
                "Can't admit new workloads: references missing ResourceFlavor(s): gpu-old",
            )
        },
    ],
    ids=["local-queue-hold", "cluster-queue-hold", "cluster-queue-inactive"],
)
def test_an_admitted_job_runs_on_through_a_held_or_inactive_queue(
    doctor: Doctor, queues: dict[str, Any]
) -> None:
    """`stopPolicy: Hold` stops admitting; "Admitted workloads will run to completion" (apis/
    kueue/v1beta2 localqueue_types.go, clusterqueue_types.go `stopPolicy`). Kueue's
    workload_controller.go `reconcileOnLocalQueueActiveState` and
    `reconcileOnClusterQueueActiveState` leave an admitted Workload alone unless the policy is
    HoldAndDrain; an inactive ClusterQueue evicts nothing either."""
    _install(doctor, kq.V1BETA2)
    doctor.load(_admitted_and_running(**queues))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.admitted", "ok", "measured")]
    assert _finding(report, "queue.admitted")["headline"] == (
        "The queue 'team-a' has let the training job 'train-042' start."
    )
    assert report["headline"]["code"] == "capacity.held-by-running-job"
    assert result.exit_code == 0


@pytest.mark.parametrize("where", ["local_stop", "cluster_stop"])
def test_hold_and_drain_stops_an_admitted_job_too(doctor: Doctor, where: str) -> None:
    """HoldAndDrain evicts admitted Workloads (workload_controller.go
    `reconcileOn*QueueActiveState`: `workloadevict.Evict` with reason LocalQueueStopped /
    ClusterQueueStopped)."""
    _install(doctor, kq.V1BETA2)
    if where == "local_stop":
        doctor.load(_admitted_and_running(local_stop="HoldAndDrain"))
    else:
        doctor.load(_admitted_and_running(cluster_stop="HoldAndDrain"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.stopped", "fail", "measured")]
    assert report["headline"]["code"] == "queue.stopped"
    assert result.exit_code == 2


def test_a_stored_job_without_a_queue_label_is_not_kueue_s(doctor: Doctor) -> None:
    """A running Job created without `kueue.x-k8s.io/queue-name`, in a namespace that has a
    LocalQueue `default` now: the default is applied only by Kueue's create-time webhook
    (pkg/controller/jobs/job/job_webhook.go `verbs=create` → jobframework/defaults.go
    `ApplyDefaultLocalQueue`, which sets the label), and jobframework/reconciler.go ignores a
    job without the label (`!r.manageJobsWithoutQueueName && QueueName(job) == ""`). The
    queue 'default' is too small for it: that is no verdict on this job."""

    def build(now: datetime) -> list[Obj]:
        job = training_job(JOB, now, gpus=8, age=timedelta(minutes=30), finished=False)
        job = with_shared_memory(job)
        job["metadata"]["uid"] = f"uid-{JOB}"
        job["spec"]["suspend"] = False
        small = kq.cluster_queue(
            "small-cq",
            [(["cpu", "memory", GPU], [(FLAVOR, {"cpu": "64", "memory": "512Gi", GPU: "4"})])],
        )
        return [
            *healthy(now),
            node("gpu-a", "64", "512Gi", gpus=8),
            job,
            job_pod(job, now, suffix="abcde", node_name="gpu-a"),
            kq.resource_flavor(FLAVOR, node_labels={"accelerator": "gpu"}),
            small,
            kq.local_queue("default", "small-cq"),
        ]

    _install(doctor, kq.V1BETA2)
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.not-used", "ok", "measured")]
    assert _finding(report, "queue.not-used")["details"] == [
        "Job/train-042 names no queue; the LocalQueue 'default' takes only jobs created after "
        "it, when they are created"
    ]
    assert result.exit_code == 0
    read = [r.path for r in doctor.server.requests() if "kueue" in r.path]
    assert read == ["/apis/kueue.x-k8s.io/v1beta2/namespaces/train/localqueues"]


TWO_POD_SETS = (
    "couldn't assign flavors to pod set master: insufficient unused quota for nvidia.com/gpu in "
    "flavor gpu-a100, 1 more needed; couldn't assign flavors to pod set worker: insufficient "
    "quota for nvidia.com/gpu in flavor gpu-a100, request > maximum capacity (17 > 8)"
)


def test_one_pod_set_that_never_fits_makes_the_job_never_fit(doctor: Doctor) -> None:
    """Kueue before v0.19 (v1beta1 only, reason `Pending`): flavorassigner.go `assignFlavors`
    goes on past `master`, whose quota is in use, and stops at `worker`, more than the
    queue's 8 GPUs ever are; `Assignment.Message` joins both pod sets with "; " (v0.13.4).
    At HEAD, resolveNoFitReason/mostSevereReason make the reason ExceedsMaxQuota: the job
    never fits, whatever waits beside it."""
    import copy

    def two_pod_sets(now: datetime) -> list[Obj]:
        objects = queued(kq.V1BETA1, said=kq.waiting(TWO_POD_SETS))(now)
        own = next(o for o in objects if o["kind"] == "Workload" and JOB in o["metadata"]["name"])
        main = own["spec"]["podSets"][0]
        master, worker = copy.deepcopy(main), copy.deepcopy(main)
        master.update(name="master", count=1)
        master["template"]["spec"]["containers"][0]["resources"] = {
            "requests": {"cpu": "1", "memory": "1Gi", GPU: "1"},
            "limits": {GPU: "1"},
        }
        worker.update(name="worker", count=2)
        own["spec"]["podSets"] = [master, worker]
        return objects

    _install(doctor, kq.V1BETA1)
    doctor.load(two_pod_sets)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.never-fits", "fail", "measured")]
    assert _finding(report, "queue.never-fits")["headline"] == (
        "The training job 'train-042' can never start from the queue 'team-a': the job asks for "
        "more than its quota is, even borrowing all it may."
    )
    assert result.exit_code == 2


TOPOLOGY_NO_FIT = (
    "couldn't assign flavors to pod set main: topology \"default\" doesn't allow to fit any of 1 "
    "pod(s)"
)


def test_kueue_s_topology_refusal_is_never_overruled_by_the_quota(doctor: Doctor) -> None:
    """QuotaReserved=False `TopologyPlacementFailed`: flavorassigner.go sets it when a pod set
    does not fit its topology "even if all workloads are preempted" (`WithSimulateEmpty`);
    the message is tas_flavor_snapshot.go's. The queue's quota has room, which doctor's
    arithmetic (no topology) would call a fit."""
    said = kq.waiting(TOPOLOGY_NO_FIT, reason="TopologyPlacementFailed")
    _install(doctor, kq.V1BETA2)
    doctor.load(queued(said=said, cluster_queue=lambda v: _gpu_queue(v, nominal="16")))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.never-fits", "fail", "measured")]
    found = _finding(report, "queue.never-fits")
    assert found["headline"] == (
        "The training job 'train-042' can never start from the queue 'team-a': its machines' "
        "placement layout has no room for it even were all other work stopped (Kueue says "
        f"“{TOPOLOGY_NO_FIT}”)."
    )
    assert found["remedy"].startswith(
        "Ask for fewer or smaller programs, or ask your cluster admin for more machines in the "
        "layout; `kubectl"
    )
    assert report["headline"]["code"] == "queue.never-fits"
    assert result.exit_code == 2


TOPOLOGY_PENDING = f'{TOPOLOGY_NO_FIT}. Total nodes: 2; excluded: resource "nvidia.com/gpu": 2'
"""The same refusal as Kueue v0.18 words it, with the machines it left out
(tas_flavor_snapshot.go `notFitMessage`, `ExclusionStats.formatReasons`)."""


@pytest.mark.parametrize(
    ("message", "status", "todo", "exit_code"),
    [
        (
            TOPOLOGY_PENDING,
            "fail",
            "Free or add machines in the placement layout Kueue names, or ask for fewer or "
            "smaller programs (Kueue's words here don't say whether other work holds the room "
            "or the layout can never hold the job)",
            2,
        ),
        (
            f"{TOPOLOGY_PENDING}. Pending the preemption of 1 workload(s)",
            "warn",
            "Nothing to do while Kueue waits for what it names",
            0,
        ),
    ],
    ids=["refused", "preempting"],
)
def test_kueue_s_topology_refusal_before_v0_19_is_never_a_fit(
    doctor: Doctor, message: str, status: str, todo: str, exit_code: int
) -> None:
    """Before v0.19 (the UnadmittedWorkloadsObservability gate off) scheduler.go
    `requeueAndUpdate` writes every refusal with reason `Pending` and the flavor assigner's
    message: the topology's words (flavorassigner.go `assignFlavors`, `psAssignment.reason`)
    are the same whether other work holds the room or no placement ever could, so Kueue's
    words are quoted as a refusal; once it asked other work to make room
    (`markPreemptionOutcome`), a wait. The queue has room, which the arithmetic (no
    topology) would call a fit."""
    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(said=kq.waiting(message), cluster_queue=lambda v: _gpu_queue(v, nominal="16"))
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", status, "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        "Kueue holds the training job 'train-042' in the queue 'team-a': it says “Pending: "
        f"{message.rstrip('.')}”."
    )
    assert found["remedy"].startswith(f"{todo}; `kubectl")
    assert result.exit_code == exit_code


@pytest.mark.parametrize(
    ("reason", "message", "status", "todo", "exit_code"),
    [
        (
            "OnHold",
            "Job is on hold",
            "fail",
            "Fix what Kueue names; doctor has no plainer words for this one",
            2,
        ),
        (
            "WaitingForPodsReady",
            "waiting for all admitted workloads to be in PodsReady condition",
            "warn",
            "Nothing to do while Kueue waits for what it names",
            0,
        ),
        (
            "WaitingForPreemptedWorkloads",
            "Workload has overlapping preemption targets with another workload, but will fit "
            "after these preemptions complete",
            "warn",
            "Nothing to do while Kueue waits for what it names",
            0,
        ),
        (
            "AdmissionGated",
            "Admission is gated by: example.com/capacity-controller",
            "warn",
            "Nothing to do while Kueue waits for what it names",
            0,
        ),
    ],
    ids=["no-rule", "pods-ready", "preemptions", "gated"],
)
def test_kueue_s_own_reason_is_quoted_never_overruled_by_room_in_the_queue(
    doctor: Doctor, reason: str, message: str, status: str, todo: str, exit_code: int
) -> None:
    """A QuotaReserved=False reason doctor has no rule for (workload_types.go `WorkloadOnHold`)
    is a failure in Kueue's words; the waits Kueue names (scheduler.go `WaitingForPodsReady`,
    `WaitingForPreemptedWorkloads`; workload_controller.go `AdmissionGated`) are a wait in
    its words. The queue has room, which the arithmetic would call a fit."""
    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(
            said=kq.waiting(message, reason=reason),
            cluster_queue=lambda v: _gpu_queue(v, nominal="16"),
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", status, "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        f"Kueue holds the training job 'train-042' in the queue 'team-a': it says “{reason}: "
        f"{message}”."
    )
    assert found["remedy"].startswith(f"{todo}; `kubectl")
    assert "describe workload job-train-042-" in found["remedy"]
    assert result.exit_code == exit_code


LIMIT_RANGE_REFUSAL = (
    "resources didn't satisfy LimitRange constraints: spec.podSets[0].template.spec."
    'containers[0]: Invalid value: ["nvidia.com/gpu"]: requests must not be above the '
    "limitRange max"
)


@pytest.mark.parametrize("reason", ["Misconfigured", "Inadmissible"])
def test_kueue_s_refusal_stands_where_the_queues_show_no_blocker(
    doctor: Doctor, reason: str
) -> None:
    """QuotaReserved=False `Misconfigured` (`Inadmissible` without the
    UnadmittedWorkloadsObservability gate, workload.go `UnadmittedWorkloadReasonWithFallback`):
    workload_controller.go writes it with `workload.ValidateAdmissibility`'s error, here a
    LimitRange whose max the pod set passes. The queues doctor reads are open and have room:
    Kueue's refusal stands, quoted, and is never `queue.fits`. The admission check says the
    LimitRange in plain words too."""

    def limit_range(now: datetime) -> list[Obj]:
        return [
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "gpu-cap", "namespace": "train"},
                "spec": {"limits": [{"type": "Container", "max": {GPU: "4"}}]},
            }
        ]

    _install(doctor, kq.V1BETA2)
    doctor.load(
        queued(
            said=kq.waiting(LIMIT_RANGE_REFUSAL, reason=reason),
            cluster_queue=lambda v: _gpu_queue(v, nominal="16"),
            extra=limit_range,
        )
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", "fail", "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        f"Kueue holds the training job 'train-042' in the queue 'team-a': it says “{reason}: "
        f"{LIMIT_RANGE_REFUSAL}”."
    )
    assert found["remedy"].startswith("Fix what Kueue names; `kubectl")
    assert _findings(report, "admission") == [("admission.limit-range-refused", "fail", "measured")]
    assert report["headline"]["code"] == "queue.kueue-reported"
    assert result.exit_code == 2


TIMED_OUT_TODO = (
    "Nothing to do for now: not all of its programs were running within the time Kueue allows, "
    "so Kueue stopped it and puts it back in the queue"
)
"""The start of the remedy for a job Kueue evicted for its PodsReady timeout, with requeues
left (workload_controller.go `reconcileNotReadyTimeout`)."""


@pytest.mark.parametrize(
    ("reason", "message", "status", "todo", "exit_code"),
    [
        (
            "Preempted",
            "Preempted to accommodate a workload (UID: uid-9, JobUID: uid-job-9) due to "
            "prioritization in the ClusterQueue",
            "warn",
            "Nothing to do: Kueue puts it back in the queue, where it waits its turn again",
            0,
        ),
        (
            "PodsReadyTimeout",
            "Exceeded the PodsReady timeout train/job-train-042-abcde",
            "warn",
            f"{TIMED_OUT_TODO} in 1 minute; if that keeps happening, find out why its programs "
            "don't start (Kueue may turn the job off after a set number of tries)",
            0,
        ),
    ],
    ids=["preempted", "pods-ready-timeout"],
)
def test_an_admitted_job_kueue_is_evicting_is_not_admitted(
    doctor: Doctor, reason: str, message: str, status: str, todo: str, exit_code: int
) -> None:
    """Admitted and Evicted both True: Kueue is stopping the job (jobframework/reconciler.go
    "handle eviction": `stopJob`, then the quota reservation cleared; workload.go
    `SetQuotaReservation` resets Evicted only at the next admission). Preempted work is put
    back in the queue (`SetRequeuedCondition`). A PodsReady timeout is evicted only while
    requeues remain (workload_controller.go `reconcileNotReadyTimeout`: `triggerDeactivation`
    turns the workload off instead at `backoffLimitCount`), its pods not ready (`PodsReady`
    False, `WaitForStart`), and the same patch writes the backoff (`UpdateRequeueState`: count
    1, about 60 s): Kueue queues it again then, a wait."""

    def build(now: datetime) -> list[Obj]:
        objects = _admitted_and_running()(now)
        evicted = kq.condition("Evicted", "True", reason, message)
        for obj in objects:
            if obj["kind"] == "Workload":
                obj["status"]["conditions"].append(evicted)
                if reason == "PodsReadyTimeout":
                    obj["status"]["conditions"] = [
                        *(c for c in obj["status"]["conditions"] if c["type"] != "PodsReady"),
                        kq.condition(
                            "PodsReady",
                            "False",
                            "WaitForStart",
                            "Not all pods are ready or succeeded",
                        ),
                    ]
                    later = now + timedelta(seconds=90)
                    obj["status"]["requeueState"] = {"count": 1, "requeueAt": ts(later)}
        return objects

    _install(doctor, kq.V1BETA2)
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", status, "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        f"Kueue holds the training job 'train-042' in the queue 'team-a': it says “{reason}: "
        f"{message}”."
    )
    assert found["remedy"].startswith(f"{todo}; `kubectl"), found["remedy"]
    assert result.exit_code == exit_code


PODS_READY_TIMEOUT = "Exceeded the PodsReady timeout train/job-train-042-abcde"


@pytest.mark.parametrize(
    ("version", "unreserved", "backoff", "count", "when"),
    [
        (kq.V1BETA2, "PendingEvaluation", timedelta(minutes=10, seconds=30), 1, "in 10 minutes"),
        (kq.V1BETA1, "Pending", timedelta(minutes=10, seconds=30), 1, "in 10 minutes"),
        (
            kq.V1BETA2,
            "PendingEvaluation",
            timedelta(minutes=16, seconds=10),
            5,
            "in 16 minutes (it has timed out 5 times)",
        ),
        (kq.V1BETA2, "PendingEvaluation", -timedelta(minutes=1), 1, "shortly"),
    ],
    ids=[
        "pods-ready-timeout",
        "pods-ready-timeout-before-v0.19",
        "timed-out-again",
        "backoff-over-not-yet-requeued",
    ],
)
def test_a_job_kueue_evicted_for_its_pods_ready_timeout_waits_out_its_backoff(
    doctor: Doctor,
    version: str,
    unreserved: str,
    backoff: timedelta,
    count: int,
    when: str,
) -> None:
    """The eviction done: jobframework/reconciler.go "handle eviction" stopped the job, set
    Requeued False (every reason but Preempted and NodeFailures) and cleared the reservation
    (`PendingEvaluation`, before v0.19 `Pending`) with the eviction's message.
    workload_controller.go holds it until `status.requeueState.requeueAt` ("Waiting for
    backoff to finish"), then writes Requeued True (`BackoffFinished`) and the queue takes it
    again. A PodsReady timeout is evicted only while requeues remain (`reconcileNotReadyTimeout`,
    `triggerDeactivation`; with no `backoffLimitCount` endlessly:
    site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md), each one counted in
    `requeueState.count` (`UpdateRequeueState`): a wait in Kueue's words, not a failure."""
    reason, message = "PodsReadyTimeout", PODS_READY_TIMEOUT
    said = [
        kq.condition("QuotaReserved", "False", unreserved, message),
        kq.condition("Evicted", "True", reason, message),
        kq.condition("Requeued", "False", reason, message),
        kq.condition("Admitted", "False", "NoReservation", "The workload has no reservation"),
    ]

    seen: dict[str, Any] = {}

    def build(now: datetime) -> list[Obj]:
        objects = queued(version, said=said, cluster_queue=lambda v: _gpu_queue(v, nominal="16"))(
            now
        )
        own = next(o for o in objects if o["kind"] == "Workload" and JOB in o["metadata"]["name"])
        later = now + backoff
        own["status"]["requeueState"] = {"count": count, "requeueAt": ts(later)}
        seen.update(name=own["metadata"]["name"], at=later.replace(microsecond=0))
        return objects

    _install(doctor, version)
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", "warn", "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        f"Kueue holds the training job 'train-042' in the queue 'team-a': it says “{reason}: "
        f"{message}”."
    )
    assert found["remedy"].startswith(
        f"{TIMED_OUT_TODO} {when}; if that keeps happening, find out why its programs don't "
        "start (Kueue may turn the job off after a set number of tries); `kubectl"
    ), found["remedy"]
    assert found["remedy"].endswith(
        f"describe workload {seen['name']}` shows Kueue's full account."
    ), found["remedy"]
    assert [d for d in found["details"] if " requeueAt " in d] == [
        f"Workload {seen['name']} requeueAt {seen['at'].isoformat()}"
    ]
    assert report["headline"]["code"] == "queue.kueue-reported"
    assert result.exit_code == 0


BOOKING_EXPIRED = "Retrying after booking expired: Capacity reservation time is expired"
"""provisioning/controller.go: the machines came, and their booking ran out before the job's
pods did (cluster-autoscaler provisioningrequest/conditions `CapacityReservationTimeExpiredMsg`):
nothing failed, Kueue asks again."""
RETRY_EVICTED = f'Evicted due to AdmissionCheck in Retry state: "provision" ({BOOKING_EXPIRED})'
RETRY_EVICTED_BEFORE_V018 = "At least one admission check is false"
RETRY_TODO = (
    "Nothing to do: the start check 'provision', which asks the cluster for machines for it, "
    "asked to try again later, and Kueue puts the job back in the queue"
)


@pytest.mark.parametrize(
    ("version", "stage", "message", "backoff", "when"),
    [
        (kq.V1BETA2, "evicted", RETRY_EVICTED, timedelta(minutes=10, seconds=30), "in 10 minutes"),
        (kq.V1BETA1, "evicted", RETRY_EVICTED_BEFORE_V018, None, "shortly"),
        (kq.V1BETA2, "evicting", RETRY_EVICTED, None, "shortly"),
    ],
    ids=["backoff-v0.18-on", "no-backoff-before-v0.18", "eviction-under-way"],
)
def test_a_start_check_that_asks_to_retry_is_a_wait_not_a_refusal(
    doctor: Doctor,
    version: str,
    stage: str,
    message: str,
    backoff: timedelta | None,
    when: str,
) -> None:
    """A ProvisioningRequest check in Retry (provisioning/controller.go: the request's
    booking expired, attempts left under `retryStrategy.backoffLimitCount`, "Retrying after
    booking expired: …"; or a failure whose words name no cause doctor has a rule for):
    workload_controller.go `reconcileCheckBasedEviction` evicts the workload with reason
    `AdmissionCheck` (since v0.18 its message names each check and quotes its words,
    `buildAdmissionChecksMessage`; before, "At least one admission check is false"), evict.go
    `resetChecksOnEviction` puts the check back to Pending, and Kueue queues the job again once
    `status.requeueState.requeueAt` passes (`BackoffFinished`). apis/kueue/v1beta2
    admissioncheck_types.go: Retry means "back off … and retry"; only Rejected is for good (it
    turns the workload off). A wait, exit 0; Kueue's words quoted."""
    unreserved = {kq.V1BETA2: "PendingEvaluation", kq.V1BETA1: "Pending"}
    if stage == "evicted":
        said = [
            # Cleared with the eviction's words: `PendingEvaluation`, before v0.19 `Pending`.
            kq.condition("QuotaReserved", "False", unreserved[version], message),
            kq.condition("Evicted", "True", "AdmissionCheck", message),
            kq.condition("Requeued", "False", "AdmissionCheck", message),
            kq.condition("Admitted", "False", "NoReservation", "The workload has no reservation"),
        ]
        check = {
            "name": "provision",
            "state": "Pending",
            "message": "Reset to Pending after eviction. Previously: Retry",
            "retryCount": 1,
        }
    else:
        said = [
            *kq.admitted("team-a-cq"),
            kq.condition("Evicted", "True", "AdmissionCheck", message),
        ]
        check = {"name": "provision", "state": "Retry", "message": BOOKING_EXPIRED}

    def build(now: datetime) -> list[Obj]:
        objects = queued(
            version,
            said=said,
            cluster_queue=lambda v: _gpu_queue(v, nominal="16", admission_checks=["provision"]),
            extra=lambda now: [kq.admission_check("provision", version=version)],
        )(now)
        own = next(o for o in objects if o["kind"] == "Workload" and JOB in o["metadata"]["name"])
        own["status"]["admissionChecks"] = [{**check, "lastTransitionTime": ts(now)}]
        if backoff is not None:
            own["status"]["requeueState"] = {"count": 1, "requeueAt": ts(now + backoff)}
        return objects

    _install(doctor, version)
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", "warn", "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        "Kueue holds the training job 'train-042' in the queue 'team-a': it says "
        f"“AdmissionCheck: {message}”."
    )
    assert found["remedy"].startswith(f"{RETRY_TODO} {when}; `kubectl"), found["remedy"]
    assert [d for d in found["details"] if d.startswith("admission check ")] == [
        "admission check provision (kueue.x-k8s.io/provisioning-request): "
        f"{check['state']} {check['message']}"
    ]
    assert result.exit_code == 0


PROVISION_FAILED = "Retrying after failure: Failed to scale up: max node group size reached"
"""provisioning/controller.go, the request `Failed` ("it is impossible to obtain resources",
cluster-autoscaler apis/provisioningrequest/autoscaling.x-k8s.io/v1 types.go) with attempts
left: Kueue quotes the autoscaler's words after "Retrying after failure: "."""
QUOTA_FAILED = (
    "Retrying after failure: QUOTA_EXCEEDED: Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0 "
    "globally."
)


@pytest.mark.parametrize(
    ("stage", "failed", "todo", "when"),
    [
        (
            "evicted",
            PROVISION_FAILED,
            "Raise the machine groups' limits, or free room (the start check 'provision' could "
            "not get machines for it: its machine groups are at their largest)",
            "in 10 minutes",
        ),
        (
            "evicting",
            QUOTA_FAILED,
            "Ask your cloud admin for more quota or capacity for that machine group, or give "
            "the job a group of another kind or zone (the start check 'provision' could not get "
            "machines for it: the cloud gave its machine group no more machines (no capacity or "
            "quota left there))",
            "shortly",
        ),
    ],
    ids=["group-at-its-largest-evicted", "cloud-quota-evicting"],
)
def test_a_start_check_that_retries_a_scale_up_the_autoscaler_refused_is_a_failure(
    doctor: Doctor, stage: str, failed: str, todo: str, when: str
) -> None:
    """The ProvisioningRequest check retries after the autoscaler said why it could add no
    machine: the words that, on a pod, are capacity.no-machine-can-be-added (autoscaling.py's
    rules). Retry is Kueue's mechanism, not a verdict: provisioning/controller.go asks again
    while `attempt <= backoffLimitCount`, then writes Rejected and the workload is turned off
    (workload_controller.go `reconcileCheckBasedEviction`), and with the group at its largest
    every try fails the same way. A measured failure, exit 2, with that rule's remedy; the
    autoscaler's words are Kueue's, quoted (since v0.18 the eviction quotes each check's
    message, `buildAdmissionChecksMessage`, and evict.go `resetChecksOnEviction` then
    overwrites the check's own)."""
    evicted = f'Evicted due to AdmissionCheck in Retry state: "provision" ({failed})'
    if stage == "evicted":
        said = [
            kq.condition("QuotaReserved", "False", "PendingEvaluation", evicted),
            kq.condition("Evicted", "True", "AdmissionCheck", evicted),
            kq.condition("Requeued", "False", "AdmissionCheck", evicted),
            kq.condition("Admitted", "False", "NoReservation", "The workload has no reservation"),
        ]
        check = {
            "name": "provision",
            "state": "Pending",
            "message": "Reset to Pending after eviction. Previously: Retry",
            "retryCount": 1,
        }
    else:
        said = [
            *kq.admitted("team-a-cq"),
            kq.condition("Evicted", "True", "AdmissionCheck", evicted),
        ]
        check = {"name": "provision", "state": "Retry", "message": failed, "retryCount": 1}

    def build(now: datetime) -> list[Obj]:
        objects = queued(
            kq.V1BETA2,
            said=said,
            cluster_queue=lambda v: _gpu_queue(v, nominal="16", admission_checks=["provision"]),
            extra=lambda now: [kq.admission_check("provision", version=kq.V1BETA2)],
        )(now)
        own = next(o for o in objects if o["kind"] == "Workload" and JOB in o["metadata"]["name"])
        own["status"]["admissionChecks"] = [{**check, "lastTransitionTime": ts(now)}]
        if stage == "evicted":
            own["status"]["requeueState"] = {
                "count": 1,
                "requeueAt": ts(now + timedelta(minutes=10, seconds=30)),
            }
        return objects

    _install(doctor, kq.V1BETA2)
    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _findings(report) == [("queue.kueue-reported", "fail", "measured")]
    found = _finding(report, "queue.kueue-reported")
    assert found["headline"] == (
        "Kueue holds the training job 'train-042' in the queue 'team-a': it says "
        f"“AdmissionCheck: {evicted}”."
    )
    assert found["remedy"].startswith(
        f"{todo}; Kueue tries again {when}, and turns the job off after its last try; `kubectl"
    ), found["remedy"]
    assert report["headline"]["code"] == "queue.kueue-reported"
    assert result.exit_code == 2


def test_an_eviction_beside_a_rejected_check_is_no_retry(doctor: Doctor) -> None:
    """Kueue before v0.8 evicted with reason `AdmissionCheck` for a Rejected check too
    (workload_controller.go `reconcileCheckBasedEviction`, `HasRetryOrRejectedChecks`), and
    left the check Rejected: that check said no for good."""
    message = "At least one admission check is false"
    said = [*kq.admitted("team-a-cq"), kq.condition("Evicted", "True", "AdmissionCheck", message)]
    rejected = {"name": "provision", "state": "Rejected", "message": "capacity is not available"}

    def build(now: datetime) -> list[Obj]:
        objects = queued(kq.V1BETA1, said=said)(now)
        own = next(o for o in objects if o["kind"] == "Workload" and JOB in o["metadata"]["name"])
        own["status"]["admissionChecks"] = [{**rejected, "lastTransitionTime": ts(now)}]
        return objects

    _install(doctor, kq.V1BETA1)
    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _findings(result.json()) == [("queue.kueue-reported", "fail", "measured")]
    assert result.exit_code == 2
