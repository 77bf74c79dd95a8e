"""Capacity over the fake API server: what holds a machine's room, and what the verdict says."""

from datetime import datetime
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.filter_objects import HOSTNAME, ranks_job, running_pod
from tests.support.raw_http import raw_get
from tests.support.scenarios import healthy

GPU_JOB = ("--job-requests", "cpu=1,memory=1Gi,nvidia.com/gpu=1")


def _other_pod(phase: str, node_name: str = "gpu-1", gpus: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"other-{phase.lower()}", "namespace": "someone-else"},
        "spec": {
            "nodeName": node_name,
            "containers": [
                {
                    "name": "x",
                    "image": "x",
                    "resources": {"requests": {"nvidia.com/gpu": str(gpus)}},
                }
            ],
        },
        "status": {"phase": phase},
    }


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def test_gpu_job_fits_on_the_healthy_cluster(doctor: Doctor) -> None:
    doctor.load("healthy")
    (finding,) = _capacity(doctor.live("-o", "json", *GPU_JOB).json())
    assert (finding["status"], finding["code"]) == ("ok", "capacity.fits")
    assert "fits on gpu-1" in finding["details"]


def test_pending_pod_bound_to_a_machine_holds_its_room(doctor: Doctor) -> None:
    """The scheduler reserves a pod's requests once it is bound, before it runs."""
    doctor.load("healthy")
    doctor.server.add(_other_pod("Pending"))
    result = doctor.live("-o", "json", *GPU_JOB)
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["code"]) == ("fail", "capacity.blocked-by-other-work")
    assert "best machine gpu-1 is 1 nvidia.com/gpu short" in finding["details"]
    assert result.exit_code == 2


def test_terminating_pod_holds_its_room_until_it_is_gone(doctor: Doctor) -> None:
    """kube-scheduler keeps a deleted pod's requests on its node until the pod object is gone
    (its grace period), so a terminating pod still blocks the job."""
    doctor.load("healthy")
    leaving = _other_pod("Running")
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:30Z"
    leaving["metadata"]["deletionGracePeriodSeconds"] = 30
    doctor.server.add(leaving)
    result = doctor.live("-o", "json", *GPU_JOB)
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["code"]) == ("fail", "capacity.blocked-by-other-work")
    assert "best machine gpu-1 is 1 nvidia.com/gpu short" in finding["details"]
    assert result.exit_code == 2


def test_succeeded_pod_holds_nothing(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(_other_pod("Succeeded"))
    (finding,) = _capacity(doctor.live("-o", "json", *GPU_JOB).json())
    assert finding["code"] == "capacity.fits"
    # precondition: the pod is in the cluster and would block the job if it counted
    assert doctor.server.get_object("Pod", "other-succeeded", "someone-else") is not None


def test_cordoned_and_tainted_machines_are_not_eligible(doctor: Doctor) -> None:
    def cordoned(now: datetime) -> list[dict[str, Any]]:
        objects = healthy(now)
        for obj in objects:
            if obj["kind"] == "Node":
                obj["spec"] = (
                    {"unschedulable": True}
                    if obj["metadata"]["name"] == "cpu-1"
                    else {
                        "taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
                    }
                )
        return objects

    doctor.load(cordoned)
    result = doctor.live("-o", "json", *GPU_JOB)
    (finding,) = _capacity(result.json())
    assert finding["code"] == "capacity.no-eligible-machine"
    assert finding["headline"] == (
        "No machine may run a training job: 1 machine is closed to new work, "
        "1 machine is reserved for other work."
    )
    assert result.exit_code == 2


def test_machines_reserved_by_different_taints_are_one_count(doctor: Doctor) -> None:
    """Two taints, each "reserved for other work" in plain words: one count, not the same
    phrase twice; the details keep each taint and its machine."""

    def reserved(now: datetime) -> list[dict[str, Any]]:
        objects = healthy(now)
        taints = {"cpu-1": ("dedicated", "infra"), "gpu-1": ("team", "research")}
        for obj in objects:
            if obj["kind"] == "Node":
                key, value = taints[obj["metadata"]["name"]]
                obj["spec"] = {"taints": [{"key": key, "value": value, "effect": "NoSchedule"}]}
        return objects

    doctor.load(reserved)
    result = doctor.live("-o", "json", *GPU_JOB)
    (finding,) = _capacity(result.json())
    assert finding["code"] == "capacity.no-eligible-machine"
    assert finding["headline"] == (
        "No machine may run a training job: 2 machines are reserved for other work."
    )
    assert {
        "excluded (taint dedicated=infra:NoSchedule not tolerated): cpu-1",
        "excluded (taint team=research:NoSchedule not tolerated): gpu-1",
    } <= set(finding["details"])
    assert result.exit_code == 2


def test_job_requests_flag_overrides_the_template(doctor: Doctor) -> None:
    doctor.load("job-too-large")  # the newest template asks for 4 GPUs
    report = doctor.live("-o", "json", *GPU_JOB).json()
    (finding,) = _capacity(report)
    assert finding["code"] == "capacity.fits"
    assert (
        finding["details"][0]
        == "job size 1 CPU, 1 GiB memory, 1 nvidia.com/gpu (from --job-requests)"
    )


def test_without_any_job_size_free_capacity_is_reported(doctor: Doctor) -> None:
    def no_jobs(now: datetime) -> list[dict[str, Any]]:
        return [o for o in healthy(now) if o["kind"] != "Job"]

    doctor.load(no_jobs)
    (finding,) = _capacity(doctor.live("-o", "json").json())
    assert (finding["status"], finding["code"]) == ("ok", "capacity.free-only")
    assert any(
        line.startswith("gpu-1: free") and "2 nvidia.com/gpu" in line for line in finding["details"]
    )


def test_unexplained_stuck_job_pod_fails(doctor: Doctor) -> None:
    """A job pod waits past the grace period although the job fits, and no scheduler has said
    why (it never marked the pod): something else is wrong, inferred from the wait."""
    from tests.support.scenarios import job_pod, training_job

    def stuck(now: datetime) -> list[dict[str, Any]]:
        from datetime import timedelta

        job = training_job("train-009", now, gpus=1, finished=False, age=timedelta(minutes=15))
        pod = job_pod(
            job,
            now,
            suffix="z",
            node_name=None,
            phase="Pending",
            age=timedelta(minutes=15),
            scheduler_said=False,
        )
        return [*healthy(now), job, pod]

    doctor.load(stuck)
    result = doctor.live("-o", "json")
    report = result.json()
    codes = [f["code"] for f in _capacity(report)]
    assert codes == ["capacity.fits", "capacity.job-stuck"]
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "inferred-failure",
        "capacity.job-stuck",
    )
    assert report["headline"]["text"] == (
        "A training job ('train-009') has waited 15 minutes for a machine, and free capacity "
        "doesn't explain it."
    )
    # The pod comes from the capacity fold's views, which a server sends without a kind.
    assert [f["objects"] for f in _capacity(report)][1] == ["Pod/train-009-z"]
    assert result.exit_code == 2


def _many_small_pods(count: int) -> list[dict[str, Any]]:
    """`count` pods of 1 millicore each on a big machine, more than two list pages."""
    big = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "big-1", "labels": {"kubernetes.io/hostname": "big-1"}},
        "spec": {},
        "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "5000"}},
    }
    pods = []
    for index in range(count):
        pod = _other_pod("Running", node_name="big-1")
        pod["metadata"]["name"] = f"small-{index:04d}"
        # Two shapes, alternating: a shape seen before is summed again, not skipped.
        cpu = "1m" if index % 2 else "2m"
        pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu}}
        pods.append(pod)
    return [big, *pods]


def test_every_page_of_the_cluster_s_pods_is_summed(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(*_many_small_pods(1201))
    # 600 pods of 1m and 601 of 2m reserve 1802m of big-1's 64 CPUs: exactly 62198m is left.
    (exact,) = _capacity(doctor.live("-o", "json", "--job-requests", "cpu=62198m").json())
    assert (exact["code"], exact["details"][-1]) == ("capacity.fits", "fits on big-1")
    pages = [r for r in doctor.server.log if r.path == "/api/v1/pods"]
    assert len(pages) == 3, "precondition: the pods came in three pages"
    (over,) = _capacity(doctor.live("-o", "json", "--job-requests", "cpu=62199m").json())
    assert over["code"] == "capacity.blocked-by-other-work"
    assert "best machine big-1 is 0.001 CPUs short" in over["details"]


def test_pages_chunked_as_kube_apiserver_sends_them_are_summed_whole(doctor: Doctor) -> None:
    """truegreen's own client reads pages framed as the real server frames them: chunked, each
    item split across two chunks, some splits inside a two-byte character."""
    doctor.load("healthy")
    pods = _many_small_pods(1201)
    for pod in pods[1:]:
        pod["metadata"]["annotations"] = {"note": "ü" * 1500}  # 3000 bytes: past Go's buffer
    doctor.server.add(*pods)
    page = raw_get(doctor.server, "/api/v1/pods?limit=500")
    assert page.chunks is not None, "precondition: a page is chunked"
    split = [c for c in page.chunks if not _whole_utf8(c)]
    assert split, "precondition: some chunk ends or starts inside a character"
    (exact,) = _capacity(doctor.live("-o", "json", "--job-requests", "cpu=62198m").json())
    assert (exact["code"], exact["details"][-1]) == ("capacity.fits", "fits on big-1")
    (over,) = _capacity(doctor.live("-o", "json", "--job-requests", "cpu=62199m").json())
    assert over["code"] == "capacity.blocked-by-other-work", "a page or an item was lost"


def _whole_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def test_a_page_that_fails_mid_list_sums_nothing(doctor: Doctor) -> None:
    """Two pages summed and the third lost must not read as a lightly loaded cluster."""
    doctor.load("healthy")
    doctor.server.add(*_many_small_pods(1201))
    doctor.server.inject(Fault.SERVER_ERROR, r"^/api/v1/pods$", after=2)
    result = doctor.live("-o", "json", "--job-requests", "cpu=1")
    assert result.exit_code == 3
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["code"]) == ("unknown", "capacity.cant-read")


def test_the_json_job_is_the_job_judged_with_the_sizes_job_requests_gave(doctor: Doctor) -> None:
    """`--job-requests` gives each pod of the training job its requests (README: "one training
    job pod's requests (default: the newest training job's template)"): the verdict judges the
    newest job's pod sets at that size, and the JSON `job` describes that job, its `source`
    naming the flag, never the template's 4 GPUs beside a verdict that judged 1 CPU."""
    doctor.load("job-too-large")
    template = doctor.live("-o", "json").json()
    assert template["job"] == {
        "kind": "Job",
        "name": "train-002",
        "source": "newest",
        "together": False,
        "pod_sets": [
            {
                "name": "worker",
                "count": 1,
                "requests": {"cpu": 4000, "memory": 16 * 2**30, "nvidia.com/gpu": 4},
            }
        ],
    }, "precondition: the template's sizes do not fit"
    assert template["headline"]["code"] == "capacity.too-large"
    result = doctor.live("-o", "json", "--job-requests", "cpu=1")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["code"], finding["headline"]) == (
        "capacity.fits",
        "A training job of 1 CPU fits now.",
    )
    assert report["job"] == {
        "kind": "Job",
        "name": "train-002",
        "source": "job-requests",
        "together": False,
        "pod_sets": [{"name": "worker", "count": 1, "requests": {"cpu": 1000}}],
    }
    assert result.exit_code == 0


def _unread_cluster_pods(doctor: Doctor) -> None:
    """The account may not list the pods of every namespace: what runs on the machines is
    not known (its own namespace's pods are still read)."""
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/pods$", method="GET")


_NOT_READ = (
    "the machines' current use was not read (list pods: no permission (403); needs list pods "
    "in every namespace (a ClusterRole)): judged as if empty"
)


def test_a_job_too_large_for_empty_machines_fails_with_their_use_unread(doctor: Doctor) -> None:
    """4 GPUs where the largest machine has 2: no running program could make room for it, so
    the pods of other namespaces not read hide no part of the failure."""
    doctor.load("job-too-large")
    _unread_cluster_pods(doctor)
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["basis"], finding["code"]) == (
        "fail",
        "measured",
        "capacity.too-large",
    )
    assert report["headline"]["code"] == "capacity.too-large"
    assert _NOT_READ in finding["details"]
    assert "best machine gpu-1 is 2 nvidia.com/gpu short even when empty" in finding["details"]
    assert result.exit_code == 2


def test_closed_machines_fail_with_their_use_unread(doctor: Doctor) -> None:
    """Every machine cordoned: the Node objects alone say no machine may take the job."""
    doctor.load("cordoned-machines")
    _unread_cluster_pods(doctor)
    result = doctor.live("-o", "json")
    report = result.json()
    (finding,) = _capacity(report)
    assert (finding["status"], finding["code"]) == ("fail", "capacity.no-eligible-machine")
    assert report["headline"]["code"] == "capacity.no-eligible-machine"
    assert _NOT_READ in finding["details"]
    assert "excluded (cordoned): cpu-1, gpu-1" in finding["details"]
    assert result.exit_code == 2


def test_a_job_that_fits_on_empty_machines_is_unknown_with_their_use_unread(
    doctor: Doctor,
) -> None:
    """Whether the room the job fits in on empty machines is free now is what was not read."""
    doctor.load("healthy")
    _unread_cluster_pods(doctor)
    result = doctor.live("-o", "json")
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["basis"], finding["code"]) == (
        "unknown",
        "cant-check",
        "capacity.cant-read",
    )
    assert result.exit_code == 3


def test_a_rule_about_other_programs_stays_unknown_with_their_use_unread(doctor: Doctor) -> None:
    """The job must stay apart from the cache, which runs on the only GPU machine (read: it is
    the namespace's own pod): with the machines' use unread, that rule is no measured failure,
    nor the job's room on empty machines a fit."""
    stay_apart = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": HOSTNAME}
            ]
        }
    }
    doctor.load(
        lambda now: [
            *healthy(now),
            running_pod("cache-0", "gpu-1", now, labels={"app": "cache"}),
            ranks_job("solo", now, ranks=1, gpus=1, affinity=stay_apart),
        ]
    )
    _unread_cluster_pods(doctor)
    result = doctor.live("-o", "json")
    (finding,) = _capacity(result.json())
    assert (finding["status"], finding["code"]) == ("unknown", "capacity.cant-read")
    assert result.exit_code == 3


def test_room_the_scheduler_lacks_is_no_failure_while_the_default_sizes_are_unread(
    doctor: Doctor,
) -> None:
    """The scheduler says `Insufficient nvidia.com/gpu` for a pod of a job that waits for the
    running one; with the LimitRanges unread, the job's size (which their defaults may change)
    is not known, so whether the room is short for now or for ever is not known either: an
    unknown with the scheduler's words, never a failure (read, it is a wait: a warning)."""
    doctor.load("held-by-running-job")
    read = _capacity(doctor.live("-o", "json").json())
    assert [(f["code"], f["status"]) for f in read] == [("capacity.held-by-running-job", "warn")]
    doctor.server.inject(Fault.FORBIDDEN, r"/limitranges$", method="GET")
    result = doctor.live("-o", "json")
    findings = _capacity(result.json())
    assert [(f["code"], f["status"], f["basis"]) for f in findings] == [
        ("capacity.cant-read", "unknown", "cant-check")
    ]
    assert any("Insufficient nvidia.com/gpu" in d for d in findings[0]["details"])
    assert result.exit_code == 3
