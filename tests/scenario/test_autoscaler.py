"""A training pod the scheduler could not place, and what an autoscaler said about it: a machine
on its way is a measured wait; a machine that cannot be added is why the job will not run."""

import json
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support import read_faults
from tests.support.cli import run_cli
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import NAMESPACE, Obj, healthy, job_pod, training_job, ts


def _capacity(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == "capacity"
    ]


def _findings(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["code"] == code]


def _waiting(now: datetime) -> tuple[list[Obj], Obj]:
    """A job of 8 GPUs on a cluster whose largest machine has 2; its pod marked unschedulable."""
    job = training_job("big", now, gpus=8, finished=False, age=timedelta(minutes=3))
    pod = job_pod(job, now, suffix="w1", node_name=None, phase="Pending", age=timedelta(minutes=3))
    return [*healthy(now), job], pod


def _scaler_event(
    now: datetime, pod: Obj, reason: str, message: str, *, source: str, age: timedelta
) -> Obj:
    """An Event as cluster-autoscaler (processors/status/eventing_scale_up_processor.go: type
    Normal, component cluster-autoscaler) or Karpenter records it on the pod."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod['metadata']['name']}.{reason.lower()}", "namespace": NAMESPACE},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod["metadata"]["name"],
            "namespace": NAMESPACE,
        },
        "reason": reason,
        "message": message,
        "source": {"component": source},
        "firstTimestamp": ts(now - age),
        "lastTimestamp": ts(now - age),
        "count": 1,
        "type": "Normal",
    }


def scale_up_event(now: datetime, pod: Obj, age: timedelta = timedelta(minutes=2)) -> Obj:
    """cluster-autoscaler's TriggeredScaleUp on `pod`, `age` ago."""
    return _scaler_event(
        now,
        pod,
        "TriggeredScaleUp",
        "pod triggered scale-up: [{eks-gpu-ng 0->1 (max: 4)}]",
        source="cluster-autoscaler",
        age=age,
    )


def test_a_scale_up_in_progress_is_a_wait(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, scale_up_event(now, pod)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    # A wait, as a running job's: it outranks plain warnings (the job's 8 GPUs want shared
    # memory, a warning of its own here).
    assert report["headline"]["rule"] == "waiting-for-running-job"
    assert "workloads.no-shared-memory" in {f["code"] for f in report["findings"]}
    assert report["headline"]["text"] == (
        "A machine is being added for the training job 'big': the machine group eks-gpu-ng goes "
        "from 0 to 1 machines."
    )
    assert result.exit_code == 0


def test_a_scale_up_long_past_is_no_longer_a_machine_on_its_way(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        triggered = _scaler_event(
            now,
            pod,
            "TriggeredScaleUp",
            "pod triggered scale-up: [{eks-gpu-ng 0->1 (max: 4)}]",
            source="cluster-autoscaler",
            age=timedelta(hours=1),
        )
        return [*objects, pod, triggered]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert ("capacity.machine-coming", "warn", "measured") not in _capacity(result.json())
    assert result.exit_code == 2


def test_a_node_group_at_its_maximum_is_why_the_job_will_not_run(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        refused = _scaler_event(
            now,
            pod,
            "NotTriggerScaleUp",
            "pod didn't trigger scale-up: 2 max node group size reached",
            source="cluster-autoscaler",
            age=timedelta(minutes=1),
        )
        return [*objects, pod, refused]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report)[0] == ("capacity.no-machine-can-be-added", "fail", "measured")
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': its machine groups are "
        "at their largest."
    )
    assert result.exit_code == 2


def _half_covered(now: datetime, *, together: bool) -> list[Obj]:
    """A job of 2 pods of 8 GPUs each (an Indexed Job running both indexes at once when
    `together`, else a plain parallel Job); cluster-autoscaler triggered a scale-up for one pod
    and refused the other. It posts on each pod (processors/status/
    eventing_scale_up_processor.go: TriggeredScaleUp for PodsTriggeredScaleUp,
    NotTriggerScaleUp for PodsRemainUnschedulable)."""
    job = training_job("big", now, gpus=8, finished=False, age=timedelta(minutes=5))
    job["spec"].update({"parallelism": 2, "completions": 2})
    if together:
        job["spec"]["completionMode"] = "Indexed"
    first, second = (
        job_pod(job, now, suffix=s, node_name=None, phase="Pending", age=timedelta(minutes=5))
        for s in ("0-aaaaa", "1-bbbbb")
    )
    added = _scaler_event(
        now,
        first,
        "TriggeredScaleUp",
        "pod triggered scale-up: [{eks-gpu-ng 0->1 (max: 1)}]",
        source="cluster-autoscaler",
        age=timedelta(minutes=3),
    )
    refused = _scaler_event(
        now,
        second,
        "NotTriggerScaleUp",
        "pod didn't trigger scale-up: 1 max node group size reached",
        source="cluster-autoscaler",
        age=timedelta(minutes=1),
    )
    return [*healthy(now), job, first, second, added, refused]


def test_a_machine_for_one_pod_of_a_job_that_runs_together_is_no_wait(doctor: Doctor) -> None:
    """The pods must all run at once: the machine coming for one of them starts nothing while
    the autoscaler cannot add one for the other."""
    doctor.load(lambda now: _half_covered(now, together=True))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report)[0] == ("capacity.no-machine-can-be-added", "fail", "measured"), (
        "a scale-up for one pod of a job that runs together overrules the refusal for another"
    )
    assert report["headline"]["text"] == (
        "No machine can be added for 2 programs of the training job 'big': its machine groups "
        "are at their largest."
    )
    [finding] = _findings(report, "capacity.no-machine-can-be-added")
    assert finding["details"][-2:] == [
        "cluster-autoscaler on big-0-aaaaa: pod triggered scale-up: [{eks-gpu-ng 0->1 (max: 1)}]",
        "cluster-autoscaler on big-1-bbbbb: pod didn't trigger scale-up: 1 max node group size "
        "reached",
    ]
    assert result.exit_code == 2


def test_a_machine_for_one_pod_of_a_job_that_starts_pods_one_by_one_is_a_wait(
    doctor: Doctor,
) -> None:
    """Pods that start one by one: the one the machine comes for starts; the refusal for the
    other is said beside the wait."""
    doctor.load(lambda now: _half_covered(now, together=False))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    [finding] = _findings(report, "capacity.machine-coming")
    assert finding["details"][-2:] == [
        "cluster-autoscaler on big-0-aaaaa: pod triggered scale-up: [{eks-gpu-ng 0->1 (max: 1)}]",
        "cluster-autoscaler on big-1-bbbbb: pod didn't trigger scale-up: 1 max node group size "
        "reached",
    ]
    assert result.exit_code == 0


def test_karpenter_s_nomination_is_a_machine_on_its_way(doctor: Doctor) -> None:
    """Karpenter's provisioner nominates the pod for the NodeClaim it launches
    (pkg/controllers/provisioning: `Pod should schedule on: nodeclaim/<name>`)."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        nominated = _scaler_event(
            now,
            pod,
            "Nominated",
            "Pod should schedule on: nodeclaim/gpu-pool-8xk2q",
            source="karpenter",
            age=timedelta(seconds=40),
        )
        return [*objects, pod, nominated]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    assert "Karpenter makes the machine gpu-pool-8xk2q for it" in report["headline"]["text"]


def test_an_unhealthy_autoscaler_says_so(doctor: Doctor) -> None:
    """cluster-autoscaler's status ConfigMap in its YAML form (1.30 and later,
    clusterstate/api/types.go): clusterWide.health.status Unhealthy."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        status = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
            "data": {
                "status": (
                    "time: 2026-12-02 10:00:00.000000000 +0000 UTC\n"
                    "autoscalerStatus: Running\n"
                    "clusterWide:\n  health:\n    status: Unhealthy\n"
                    "    nodeCounts:\n      registered:\n        total: 3\n        ready: 1\n"
                )
            },
        }
        return [*objects, pod, status]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert ("capacity.autoscaler-unhealthy", "fail", "measured") in _capacity(report)


def _sorted_status(now: datetime) -> Obj:
    """cluster-autoscaler's status ConfigMap as it writes it now: sigs.k8s.io/yaml (JSON, then
    YAML with each mapping's keys sorted: pkg/clusterstate/utils/status.go WriteStatusConfigMap
    -> marshalAndTruncateStatus), so `time` is last and `status` follows `lastProbeTime`.
    The cluster Unhealthy (4 of 5 machines unready), the GPU group's scale-up in Backoff with
    GCE's quota error (clusterstate/api/types.go BackoffInfo)."""
    stamp = ts(now - timedelta(seconds=30))
    text = (
        "autoscalerStatus: Running\n"
        "clusterWide:\n"
        f'  health:\n    lastProbeTime: "{stamp}"\n    lastTransitionTime: "{stamp}"\n'
        "    nodeCounts:\n      longUnregistered: 0\n      registered:\n"
        "        notStarted: 0\n        ready: 1\n        total: 5\n"
        "        unready:\n          resourceUnready: 0\n          total: 4\n"
        "      unregistered: 0\n"
        "    status: Unhealthy\n"
        f'  scaleUp:\n    lastProbeTime: "{stamp}"\n    lastTransitionTime: "{stamp}"\n'
        "    status: Backoff\n"
        "nodeGroups:\n"
        "- health:\n    cloudProviderTarget: 0\n"
        f'    lastProbeTime: "{stamp}"\n    lastTransitionTime: "{stamp}"\n'
        "    maxSize: 4\n    minSize: 0\n    status: Healthy\n"
        "  name: eks-gpu-ng\n"
        "  scaleUp:\n"
        "    backoffInfo:\n      errorCode: QUOTA_EXCEEDED\n"
        "      errorMessage: 'Quota ''GPUS_ALL_REGIONS'' exceeded. Limit: 0.0 globally.'\n"
        f'    lastProbeTime: "{stamp}"\n    lastTransitionTime: "{stamp}"\n'
        "    status: Backoff\n"
        f"time: {now.strftime('%Y-%m-%d %H:%M:%S')}.123456789 +0000 UTC\n"
    )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
        "data": {"status": text},
    }


def test_the_status_as_cluster_autoscaler_writes_it_now_is_understood(doctor: Doctor) -> None:
    """A TriggeredScaleUp two minutes old, and the status, keys sorted, showing the group in
    Backoff and the autoscaler Unhealthy: no machine is on its way, for the quota's reason."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, scale_up_event(now, pod), _sorted_status(now)]

    doctor.load(build)
    result = doctor.live("-o", "json", "--verbose")
    report = result.json()
    assert _capacity(report) == [
        ("capacity.no-machine-can-be-added", "fail", "measured"),
        ("capacity.too-large", "fail", "measured"),
        ("capacity.autoscaler-unhealthy", "fail", "measured"),
    ]
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': the cloud gave its "
        "machine group no more machines (no capacity or quota left there)."
    )
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (
        "cluster-autoscaler on big-w1: cluster-autoscaler status: machine group eks-gpu-ng "
        "scale-up Backoff: QUOTA_EXCEEDED: Quota 'GPUS_ALL_REGIONS' exceeded. Limit: 0.0 "
        "globally."
    ) in found["details"]
    assert "cluster-autoscaler health: Unhealthy" in found["details"]
    assert result.exit_code == 2


def test_the_autoscaler_is_asked_only_about_pods_the_scheduler_could_not_place(
    doctor: Doctor,
) -> None:
    doctor.load("healthy")
    doctor.live("-o", "json")
    assert not [r for r in doctor.server.log if "source" in r.query.get("fieldSelector", "")]
    assert not [r for r in doctor.server.log if r.path.endswith("cluster-autoscaler-status")]


def _status(
    now: datetime,
    group_status: str,
    backoff: str = "",
    *,
    since: datetime | None = None,
    written: datetime | None = None,
) -> Obj:
    """cluster-autoscaler's status ConfigMap in its YAML form (1.30 and later,
    clusterstate/api/types.go), its one machine group's scale-up in `group_status`, with the
    backoff's error as the AWS provider gives it (cloudprovider/aws/aws_cloud_provider.go:
    `placeholder-cannot-be-fulfilled`, "AWS cannot provision any more instances for this node
    group") and clusterstate.go `buildScaleUpStatusNodeGroup` writes it; the state unchanged
    `since` (30 s by default), the status `written` now by default."""
    stamp = (since or now - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    written = written or now
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"},
        "data": {
            "status": (
                f"time: {written.strftime('%Y-%m-%d %H:%M:%S')}.000000000 +0000 UTC\n"
                "autoscalerStatus: Running\n"
                "clusterWide:\n  health:\n    status: Healthy\n"
                "nodeGroups:\n"
                "- name: eks-gpu-ng\n"
                "  health:\n    status: Healthy\n    cloudProviderTarget: 1\n"
                "    minSize: 0\n    maxSize: 4\n"
                f"  scaleUp:\n    status: {group_status}\n"
                + (
                    "    backoffInfo:\n      errorCode: placeholder-cannot-be-fulfilled\n"
                    f"      errorMessage: {backoff}\n"
                    if backoff
                    else ""
                )
                + f'    lastProbeTime: "{stamp}"\n    lastTransitionTime: "{stamp}"\n'
            )
        },
    }


@pytest.mark.parametrize(
    "age", [timedelta(minutes=2), timedelta(minutes=25)], ids=["recent", "past-provision-time"]
)
def test_a_scale_up_the_autoscaler_backed_off_from_is_no_machine_on_its_way(
    doctor: Doctor, age: timedelta
) -> None:
    """TriggeredScaleUp two (or 25) minutes ago; cluster-autoscaler's own status now shows the
    group in Backoff (AWS could not launch): the status is the measurement, not the trigger,
    and not the arithmetic either when the trigger is old."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        failed = "AWS cannot provision any more instances for this node group"
        return [*objects, pod, scale_up_event(now, pod, age), _status(now, "Backoff", failed)]

    doctor.load(build)
    result = doctor.live("-o", "json", "--verbose")
    report = result.json()
    assert ("capacity.no-machine-can-be-added", "fail", "measured") in _capacity(report)
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(report)}
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    assert "the cloud gave its machine group no more machines" in report["headline"]["text"]
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    said = [line for line in found["details"] if line.startswith("cluster-autoscaler on ")]
    assert [line.split(": ", 1)[1] for line in said] == [
        "cluster-autoscaler status: machine group eks-gpu-ng scale-up Backoff: "
        "placeholder-cannot-be-fulfilled: AWS cannot provision any more instances for this "
        "node group"
    ]
    assert found["remedy"].endswith(
        "-n kube-system describe configmap cluster-autoscaler-status` shows the autoscaler's "
        "own words."
    ), "the backoff's words are in the status, not on the pod"
    assert result.exit_code == 2


def test_a_scale_up_in_progress_per_the_status_stays_a_wait(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, scale_up_event(now, pod), _status(now, "InProgress")]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]


TRIGGER_AGE = timedelta(minutes=25)


def test_a_scale_up_past_the_default_provision_time_that_the_status_still_shows_in_progress(
    doctor: Doctor,
) -> None:
    """TriggeredScaleUp 25 minutes ago, past the 15-minute default; cluster-autoscaler's own
    status still shows the group's scale-up InProgress (it was given a longer
    --max-node-provision-time, or the group a longer one of its own, which doctor can't
    read): the autoscaler's measurement beats the default."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        since = now - TRIGGER_AGE + timedelta(seconds=10)  # the scan after the trigger
        triggered = scale_up_event(now, pod, TRIGGER_AGE)
        return [*objects, pod, triggered, _status(now, "InProgress", since=since)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _capacity(result.json()) == [("capacity.machine-coming", "warn", "measured")]
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("since", "written"),
    [(timedelta(minutes=3), timedelta(0)), (TRIGGER_AGE, timedelta(minutes=20))],
    ids=["in-progress-for-a-later-scale-up", "status-of-an-autoscaler-that-stopped"],
)
def test_a_scale_up_in_progress_counts_only_since_its_trigger_and_while_the_status_is_fresh(
    doctor: Doctor, since: timedelta, written: timedelta
) -> None:
    """InProgress since 3 minutes ago is a later scale-up of the group (cluster-autoscaler
    restarts the group's clock on each: clusterstate.go `registerOrUpdateScaleUpNoLock`), not
    this 25-minute-old trigger's; a status written 20 minutes ago is from an autoscaler that
    stopped writing. Neither keeps the old trigger a machine on its way."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        status = _status(now, "InProgress", since=now - since, written=now - written)
        return [*objects, pod, scale_up_event(now, pod, TRIGGER_AGE), status]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(result.json())}
    assert result.exit_code == 2


def test_a_scale_up_past_the_default_provision_time_with_no_activity_is_no_machine(
    doctor: Doctor,
) -> None:
    """The same trigger, the group's scale-up NoActivity: nothing is on its way."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, scale_up_event(now, pod, TRIGGER_AGE), _status(now, "NoActivity")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(result.json())}
    assert result.exit_code == 2


def _autoscaler_pod(now: datetime, *flags: str) -> Obj:
    """cluster-autoscaler's own pod as its Helm chart runs it on EKS: the Deployment
    `cluster-autoscaler-aws-cluster-autoscaler` in kube-system, the command `./cluster-autoscaler`
    then each of `extraArgs` as `--NAME=VALUE` (kubernetes/autoscaler charts/cluster-autoscaler
    templates/deployment.yaml), the image registry.k8s.io/autoscaling/cluster-autoscaler."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "cluster-autoscaler-aws-cluster-autoscaler-7d9f8c6b5-x2x9k",
            "namespace": "kube-system",
            "labels": {
                "app.kubernetes.io/instance": "cluster-autoscaler",
                "app.kubernetes.io/name": "aws-cluster-autoscaler",
                "pod-template-hash": "7d9f8c6b5",
            },
            "creationTimestamp": ts(now - timedelta(days=2)),
        },
        "spec": {
            "nodeName": "cpu-1",
            "serviceAccountName": "cluster-autoscaler-aws-cluster-autoscaler",
            "containers": [
                {
                    "name": "aws-cluster-autoscaler",
                    "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2",
                    "command": [
                        "./cluster-autoscaler",
                        "--cloud-provider=aws",
                        "--namespace=kube-system",
                        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled",
                        "--logtostderr=true",
                        "--stderrthreshold=info",
                        "--v=4",
                        *flags,
                    ],
                    "resources": {"requests": {"cpu": "100m", "memory": "300Mi"}},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def _running_pod_reads(doctor: Doctor) -> int:
    """The reads of the cluster's running pods (the fold that finds the autoscaler's own)."""
    return sum(
        r.path == "/api/v1/pods" and r.query.get("fieldSelector") == "status.phase=Running"
        for r in doctor.server.requests("GET")
    )


def _details(report: dict[str, Any]) -> list[str]:
    return [d for f in report["findings"] if f["check"] == "capacity" for d in f["details"]]


def test_a_scale_up_within_the_provision_time_the_autoscaler_was_given_is_a_wait(
    doctor: Doctor,
) -> None:
    """TriggeredScaleUp 25 minutes ago, past the 15-minute default, no status ConfigMap; the
    autoscaler runs with `--max-node-provision-time=30m` (GPU machines are often slower to
    come up than the default allows): the machine is still on its way."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        flagged = _autoscaler_pod(now, "--max-node-provision-time=30m")
        return [*objects, pod, scale_up_event(now, pod, TRIGGER_AGE), flagged]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    assert (
        "cluster-autoscaler waits 30 minutes for a machine: --max-node-provision-time=30m on "
        "kube-system/cluster-autoscaler-aws-cluster-autoscaler-7d9f8c6b5-x2x9k"
    ) in _details(report)
    assert _running_pod_reads(doctor) == 1
    assert result.exit_code == 0


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--max-node-provision-time", "20m"),
        ("--max-node-provision-time=1h", "-v=4", "--max-node-provision-time=20m"),
    ],
    ids=["no-flag", "flag-shorter-than-the-trigger-s-age", "the-last-flag-wins"],
)
def test_a_scale_up_past_the_provision_time_the_autoscaler_was_given_is_no_machine(
    doctor: Doctor, flags: tuple[str, ...]
) -> None:
    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, scale_up_event(now, pod, TRIGGER_AGE), _autoscaler_pod(now, *flags)]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(report)}
    assert (
        "cluster-autoscaler on big-w1, 25 minutes ago, longer ago than it waits for a machine "
        "(no machine is on its way): pod triggered scale-up: [{eks-gpu-ng 0->1 (max: 4)}]"
    ) in _details(report), "the old scale-up is told, never dropped"
    said = [d for d in _details(report) if d.startswith("cluster-autoscaler waits")]
    assert said == (
        ["cluster-autoscaler waits 15 minutes for a machine (its default)"]
        if not flags
        else [
            "cluster-autoscaler waits 20 minutes for a machine: --max-node-provision-time=20m "
            "on kube-system/cluster-autoscaler-aws-cluster-autoscaler-7d9f8c6b5-x2x9k"
        ]
    )
    assert result.exit_code == 2


def test_the_autoscaler_s_own_pod_is_looked_for_only_past_the_default_provision_time(
    doctor: Doctor,
) -> None:
    """A trigger within the default answers without the autoscaler's flags: no read of the
    cluster's running pods is made for them."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        flagged = _autoscaler_pod(now, "--max-node-provision-time=30m")
        return [*objects, pod, scale_up_event(now, pod), flagged]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _capacity(result.json()) == [("capacity.machine-coming", "warn", "measured")]
    assert _running_pod_reads(doctor) == 0


def _node_pool(name: str, limits: dict[str, str], resources: dict[str, str]) -> Obj:
    """A Karpenter NodePool (karpenter.sh/v1, pkg/apis/v1/nodepool.go): `spec.limits`, and the
    resources its machines hold as its counter controller writes them (`status.resources`,
    pkg/controllers/nodepool/counter)."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": name,
                    },
                    "requirements": [
                        {
                            "key": "karpenter.k8s.aws/instance-family",
                            "operator": "In",
                            "values": ["p5"],
                        }
                    ],
                }
            },
            "limits": limits,
        },
        "status": {"resources": resources},
    }


_POOL_LIMIT = (
    'Failed to schedule pod, all available instance types exceed limits for nodepool "gpu"'
)


def test_the_pools_unread_leave_karpenter_s_own_words_standing(doctor: Doctor) -> None:
    """The NodePools refused (403): the failure is Karpenter's measurement still, in its plain
    words, and the details say the limits could not be shown."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        refused = _scaler_event(
            now, pod, "FailedScheduling", _POOL_LIMIT, source="karpenter", age=timedelta(0)
        )
        return [*objects, pod, refused]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, "^/apis/karpenter.sh/v1/nodepools$", method="GET")
    result = doctor.live("-o", "json")
    report = result.json()
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': a machine pool has "
        "reached its limit."
    )
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert [d for d in found["details"] if "NodePools" in d] == [
        "Karpenter's NodePools' limits not shown: list nodepools: no permission (403); needs "
        "list nodepools.karpenter.sh (cluster-wide: a ClusterRole)"
    ]
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "message",
    [
        # Karpenter walks every NodePool for the pod and says why each could not take it.
        'Failed to schedule pod, incompatible with nodepool "system", incompatible requirements, '
        "key karpenter.k8s.aws/instance-gpu-count; all available instance types exceed limits for "
        'nodepool "gpu"',
        # Its structured errors name the pool as a key=value pair.
        "Failed to schedule pod, all available instance types exceed limits for nodepool "
        "(NodePool=gpu)",
    ],
    ids=["quoted", "structured"],
)
def test_a_machine_pool_at_its_limit_is_named_with_its_numbers(
    doctor: Doctor, message: str
) -> None:
    """Karpenter's FailedScheduling names the NodePool whose limits stopped it; the NodePool
    says which limit: 8 GPUs, all held by its machines."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        refused = _scaler_event(
            now, pod, "FailedScheduling", message, source="karpenter", age=timedelta(seconds=30)
        )
        refused["type"] = "Warning"
        pools = [
            _node_pool(
                "gpu",
                {"cpu": "1000", "nvidia.com/gpu": "8"},
                {"cpu": "192", "nvidia.com/gpu": "8", "nodes": "1"},
            ),
            _node_pool("system", {"cpu": "64"}, {"cpu": "16"}),
        ]
        return [*objects, pod, refused, *pools]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': the machine pool gpu "
        "has reached its limit of 8 nvidia.com/gpu."
    )
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (
        "NodePool gpu: cpu 192 in use of its limit 1000, nvidia.com/gpu 8 in use of its limit 8"
        in found["details"]
    )
    assert not [d for d in found["details"] if d.startswith("NodePool system")], "not named"
    assert result.exit_code == 2


def test_pools_are_described_up_to_a_bound_where_karpenter_names_none(doctor: Doctor) -> None:
    """Karpenter's words name no pool: every pool may be the one, and at most 8 are shown (the
    list is the cluster's, its length not ours to trust)."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        said = "Failed to schedule pod, all available instance types exceed limits for nodepool"
        refused = _scaler_event(
            now, pod, "FailedScheduling", said, source="karpenter", age=timedelta(0)
        )
        pools = [_node_pool(f"pool-{i:02}", {"cpu": "8"}, {"cpu": "8"}) for i in range(20)]
        return [*objects, pod, refused, *pools]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    described = [d for d in found["details"] if d.startswith("NodePool ")]
    assert described == [f"NodePool pool-{i:02}: cpu 8 in use of its limit 8" for i in range(8)]
    assert "the machine pool pool-00 has reached its limit of 8 cpu" in report["headline"]["text"]


def _not_ready(pool: Obj, now: datetime) -> Obj:
    """`pool` as Karpenter's readiness controller leaves it when its EC2NodeClass is gone
    (pkg/controllers/nodepool/readiness/controller.go: NodeClassReady False, NodeClassNotFound,
    "NodeClass not found on cluster"; operatorpkg's root condition Ready False,
    UnhealthyDependents, "NodeClassReady=False"), as `kubectl describe nodepool` shows it in
    EKS Auto Mode's troubleshooting guide."""
    at = ts(now - timedelta(minutes=20))
    pool["status"]["conditions"] = [
        {
            "type": "ValidationSucceeded",
            "status": "True",
            "reason": "ValidationSucceeded",
            "message": "",
            "lastTransitionTime": at,
            "observedGeneration": 1,
        },
        {
            "type": "NodeClassReady",
            "status": "False",
            "reason": "NodeClassNotFound",
            "message": "NodeClass not found on cluster",
            "lastTransitionTime": at,
            "observedGeneration": 1,
        },
        {
            "type": "Ready",
            "status": "False",
            "reason": "UnhealthyDependents",
            "message": "NodeClassReady=False",
            "lastTransitionTime": at,
            "observedGeneration": 1,
        },
    ]
    return pool


def _ready(pool: Obj, now: datetime) -> Obj:
    pool["status"]["conditions"] = [
        {"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": ts(now)}
        for t in ("ValidationSucceeded", "NodeClassReady", "Ready")
    ]
    return pool


_GPU_POOL_DOWN = (
    "NodePool gpu is not ready: NodeClassReady=False (NodeClassNotFound): NodeClass not found "
    "on cluster"
)


def test_no_ready_machine_pool_is_why_no_machine_comes(doctor: Doctor) -> None:
    """Karpenter passes over every NodePool that is not Ready and, with none left, says nothing
    on the pod (it only logs `no dynamic nodepools found`): the pool's own condition is the
    measurement, and it outranks placing on bigger machines ("add machines")."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        pool = _not_ready(_node_pool("gpu", {"nvidia.com/gpu": "64"}, {}), now)
        return [*objects, pod, pool]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert report["headline"]["code"] == "capacity.machine-pools-not-ready"
    assert report["headline"]["text"] == (
        "No machine can be added for 1 program of the training job 'big': no machine pool of "
        "Karpenter is ready (gpu: NodeClass not found on cluster)."
    )
    assert "describe nodepool gpu`" in report["headline"]["remedy"]
    [found] = [f for f in report["findings"] if f["code"] == "capacity.machine-pools-not-ready"]
    assert (found["status"], found["basis"]) == ("fail", "measured")
    assert _GPU_POOL_DOWN in found["details"]
    assert _capacity(report)[0] == ("capacity.machine-pools-not-ready", "fail", "measured")
    assert result.exit_code == 2


@pytest.mark.parametrize("other", ["ready", "unstated"])
def test_a_pool_down_beside_one_karpenter_may_use_is_said_not_blamed(
    doctor: Doctor, other: str
) -> None:
    """Another pool is Ready, or states no condition at all (older Karpenter): Karpenter may
    still add a machine from it, so the pool that is down is a detail, not the headline."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        down = _not_ready(_node_pool("gpu", {"nvidia.com/gpu": "64"}, {}), now)
        spare = _node_pool("spare", {"cpu": "64"}, {})
        return [*objects, pod, down, _ready(spare, now) if other == "ready" else spare]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    codes = {f["code"] for f in report["findings"]}
    assert "capacity.machine-pools-not-ready" not in codes
    [found] = [f for f in report["findings"] if f["check"] == "capacity" and f["status"] == "fail"]
    assert _GPU_POOL_DOWN in found["details"]


def test_karpenter_s_own_word_on_the_pod_outranks_its_pools(doctor: Doctor) -> None:
    """Karpenter said why about the pod itself: that stays the headline; the pool that is down
    is in its details."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        refused = _scaler_event(
            now, pod, "FailedScheduling", _POOL_LIMIT, source="karpenter", age=timedelta(0)
        )
        pools = [
            _ready(_node_pool("gpu", {"nvidia.com/gpu": "8"}, {"nvidia.com/gpu": "8"}), now),
            _not_ready(_node_pool("spare", {"cpu": "64"}, {}), now),
        ]
        return [*objects, pod, refused, *pools]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "capacity.no-machine-can-be-added"
    [found] = [f for f in report["findings"] if f["code"] == "capacity.no-machine-can-be-added"]
    assert (
        "NodePool spare is not ready: NodeClassReady=False (NodeClassNotFound): NodeClass not "
        "found on cluster" in found["details"]
    )


def test_pools_unread_are_said_where_karpenter_said_nothing(doctor: Doctor) -> None:
    """The NodePools refused (403) and no word from Karpenter on the pod: whether a pool is
    down is not known, and the details say so beside what placing shows."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, _not_ready(_node_pool("gpu", {"nvidia.com/gpu": "64"}, {}), now)]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, "^/apis/karpenter.sh/v1/nodepools$", method="GET")
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "capacity.too-large"
    [found] = [f for f in report["findings"] if f["code"] == "capacity.too-large"]
    assert (
        "whether Karpenter's machine pools are ready is not known: list nodepools: no permission "
        "(403); needs list nodepools.karpenter.sh (cluster-wide: a ClusterRole)" in found["details"]
    )


_POOLS_PATH = "/apis/karpenter.sh/v1/nodepools"


def test_every_fault_on_the_pools_leaves_placing_s_word_and_says_the_unknown(
    doctor: Doctor,
) -> None:
    """The fault matrix (tests/support/read_faults.py) for the NodePools list, which feeds the
    capacity check beside placing: a pool that could not be read is never a pool down; what
    placing measured stands, the details say the pools' state is not known (a 404 is the
    kind not served: nothing to say), no other check changes, and a throttle is waited out."""
    doctor.server.install("karpenter.sh")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, _not_ready(_node_pool("gpu", {"nvidia.com/gpu": "64"}, {}), now)]

    doctor.load(build)
    doctor.round_trip = False
    baseline = doctor.live("-o", "json", "--request-timeout", "0.9").json()
    assert baseline["headline"]["code"] == "capacity.machine-pools-not-ready", "precondition"
    others = {c: s for c, s in read_faults.statuses(baseline).items() if c != "capacity"}
    for cell in read_faults.cells(doctor, _POOLS_PATH):
        report = cell.result.json()
        found = read_faults.statuses(report)
        assert {c: s for c, s in found.items() if c != "capacity"} == others, cell.name
        if cell.throttled:
            assert report["headline"]["code"] == "capacity.machine-pools-not-ready", cell.name
            continue
        assert report["headline"]["code"] == "capacity.too-large", cell.name
        [placing] = [f for f in report["findings"] if f["code"] == "capacity.too-large"]
        unknown = [d for d in placing["details"] if "machine pools are ready is not known" in d]
        # Either 404 is the server's answer for a group it does not serve: Karpenter absent.
        absent = cell.fault in (Fault.NOT_FOUND, Fault.PAGE_NOT_FOUND)
        assert len(unknown) == (0 if absent else 1), cell.name
        assert cell.result.exit_code == 2, cell.name


def test_every_fault_on_the_autoscaler_s_own_pod_leaves_the_old_scale_up_unknown(
    doctor: Doctor,
) -> None:
    """The fault matrix (tests/support/read_faults.py) for the fold of running pods that finds
    cluster-autoscaler's provision time: a scale-up 25 minutes old stands or not by that time,
    so where it could not be read the capacity check is unknown, never the wait and never the
    failure; no other check changes; a throttle is waited out. The fold shares its path with
    the capacity fold, which is let through (the first GET of the path)."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        flagged = _autoscaler_pod(now, "--max-node-provision-time=30m")
        return [*objects, pod, scale_up_event(now, pod, TRIGGER_AGE), flagged]

    doctor.load(build)
    doctor.round_trip = False
    baseline = doctor.live("-o", "json", "--request-timeout", "0.9")
    assert _capacity(baseline.json()) == [("capacity.machine-coming", "warn", "measured")]
    base = read_faults.statuses(baseline.json())
    # The capacity fold is the path's first GET; the autoscaler's fold, the one faulted.
    for cell in read_faults.cells(doctor, "/api/v1/pods", after=1):
        folds = [r for r in cell.sent if r.query.get("fieldSelector") == "status.phase=Running"]
        assert 1 <= len(folds) <= 1 + cell.resends, cell.name
        report = cell.result.json()
        found = read_faults.statuses(report)
        assert {c: s for c, s in found.items() if c != "capacity"} == {
            c: s for c, s in base.items() if c != "capacity"
        }, cell.name
        if cell.throttled:
            assert found == base, cell.name
            assert cell.result.exit_code == 0, cell.name
            continue
        assert found["capacity"] == {"unknown"}, cell.name
        assert report["headline"]["text"].startswith(
            "Couldn't check whether there is room for a training job"
        ), cell.name
        [unknown] = [f for f in report["findings"] if f["code"] == "capacity.cant-read"]
        assert (
            "cluster-autoscaler on big-w1, 25 minutes ago, longer ago than its default wait of 15 "
            "minutes (whether a machine is still on its way is not known): pod triggered "
            "scale-up: [{eks-gpu-ng 0->1 (max: 4)}]"
        ) in unknown["details"], cell.name
        assert not [d for d in unknown["details"] if "no machine is on its way" in d], cell.name
        assert cell.result.exit_code == 3, cell.name


_NOT_TRIGGERED = [
    (
        "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector",
        "no machine group matches its placement rules",
        "Loosen the job's rules for which machines it may run on, or add a machine group that "
        "matches them",
    ),
    (
        "pod didn't trigger scale-up: 2 node(s) had volume node affinity conflict",
        "its storage is tied to a zone where no machine group can add a machine",
        "Give the job storage in a zone where machines can be added, or add a machine group in "
        "the storage's zone",
    ),
    (
        "pod didn't trigger scale-up: 2 max node group size reached",
        "its machine groups are at their largest",
        "Raise the machine groups' limits, or free room",
    ),
    # The autoscaler's cluster-wide caps (its --cores-total, --memory-total, --gpu-total
    # flags): core/scaleup/orchestrator skippedreasons.go MaxResourceLimitReached, "max cluster
    # %s limit reached", the resources joined by ", "; the processor counts each reason over
    # the groups. The cap stops every group the pod would fit, whatever the others say.
    (
        "pod didn't trigger scale-up: 1 max cluster nvidia.com/gpu limit reached, "
        "2 Insufficient nvidia.com/gpu",
        "the autoscaler's limit on the whole cluster's nvidia.com/gpu is reached",
        "Raise the autoscaler's limit on the whole cluster's nvidia.com/gpu (its --gpu-total "
        "setting), or free room",
    ),
    (
        "pod didn't trigger scale-up: 1 max cluster nvidia.com/gpu limit reached",
        "the autoscaler's limit on the whole cluster's nvidia.com/gpu is reached",
        "Raise the autoscaler's limit on the whole cluster's nvidia.com/gpu (its --gpu-total "
        "setting), or free room",
    ),
    (
        "pod didn't trigger scale-up: 3 max cluster cpu, memory limit reached",
        "the autoscaler's limits on the whole cluster's cpu and memory are reached",
        "Raise the autoscaler's limits on the whole cluster's cpu and memory (its "
        "--cores-total and --memory-total settings), or free room",
    ),
    (
        "pod didn't trigger scale-up: 2 node(s) frobnicated the widget",
        "the autoscaler says “pod didn't trigger scale-up: 2 node(s) frobnicated the widget”",
        "Read the autoscaler's reason in full",
    ),
]


@pytest.mark.parametrize(("message", "why", "todo"), _NOT_TRIGGERED)
def test_each_reason_the_autoscaler_gives_gets_its_own_remedy(
    doctor: Doctor, message: str, why: str, todo: str
) -> None:
    """cluster-autoscaler's NotTriggerScaleUp names the scheduler's predicate reasons for each
    machine group (processors/status/eventing_scale_up_processor.go `ReportEventsForPods`;
    `volume node affinity conflict` is VolumeBinding's ErrReasonNodeConflict): the remedy is
    the one for that reason, never "ask for less" where the job's size is not the cause, and a
    reason no rule names is quoted in the autoscaler's words."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        said = _scaler_event(
            now,
            pod,
            "NotTriggerScaleUp",
            message,
            source="cluster-autoscaler",
            age=timedelta(seconds=30),
        )
        return [*objects, pod, said]

    doctor.load(build)
    result = doctor.live("-o", "json")
    headline = result.json()["headline"]
    assert headline["code"] == "capacity.no-machine-can-be-added"
    assert headline["text"] == (
        f"No machine can be added for 1 program of the training job 'big': {why}."
    )
    assert headline["remedy"].startswith(f"{todo}; `kubectl"), headline["remedy"]
    assert result.exit_code == 2


def _unhealthy_status(now: datetime, namespace: str, written: datetime) -> Obj:
    """cluster-autoscaler's status ConfigMap in `namespace`, as it writes it there: the YAML
    form with the cluster Unhealthy, `time` and the `last-updated` annotation both `written`
    (pkg/clusterstate/utils/status.go WriteStatusConfigMap: ConfigMapLastUpdatedKey)."""
    stamp = f"{written.strftime('%Y-%m-%d %H:%M:%S')}.000000000 +0000 UTC"
    status = _status(now, "NoActivity", written=written)
    status["metadata"] = {
        "name": "cluster-autoscaler-status",
        "namespace": namespace,
        "annotations": {"cluster-autoscaler.kubernetes.io/last-updated": stamp},
    }
    status["data"]["status"] = status["data"]["status"].replace(
        "clusterWide:\n  health:\n    status: Healthy\n",
        "clusterWide:\n  health:\n    status: Unhealthy\n",
    )
    assert "status: Unhealthy" in status["data"]["status"], "precondition"
    return status


def _stale_healthy_status(now: datetime) -> Obj:
    """The status an earlier install left in kube-system, last written two hours ago, Healthy:
    nothing writes it since cluster-autoscaler runs elsewhere."""
    written = now - timedelta(hours=2)
    stale = _status(now, "NoActivity", written=written)
    stale["metadata"]["annotations"] = {
        "cluster-autoscaler.kubernetes.io/last-updated": (
            f"{written.strftime('%Y-%m-%d %H:%M:%S')}.000000000 +0000 UTC"
        )
    }
    return stale


@pytest.mark.parametrize("stale_copy", [False, True], ids=["elsewhere", "beside-a-stale-copy"])
def test_the_status_is_read_where_the_chart_installed_the_autoscaler(
    doctor: Doctor, stale_copy: bool
) -> None:
    """The Helm chart runs cluster-autoscaler with `--namespace={{ .Release.Namespace }}`
    (charts/cluster-autoscaler/templates/deployment.yaml), and it writes its status ConfigMap
    in that namespace (`--namespace`, "Namespace in which cluster-autoscaler run.", default
    kube-system). Installed in its own namespace, its status is found there; beside a copy an
    earlier install left in kube-system, the one it wrote last is its word."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        live = _unhealthy_status(now, "cluster-autoscaler", now)
        return [*objects, pod, live, *([_stale_healthy_status(now)] if stale_copy else [])]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert ("capacity.autoscaler-unhealthy", "fail", "measured") in _capacity(report)
    [found] = [f for f in report["findings"] if f["code"] == "capacity.autoscaler-unhealthy"]
    assert (
        "-n cluster-autoscaler describe configmap cluster-autoscaler-status`" in (found["remedy"])
    ), found["remedy"]
    assert found["objects"] == ["ConfigMap/cluster-autoscaler/cluster-autoscaler-status"]
    asked = [r for r in doctor.server.log if "configmaps" in r.path]
    assert len({(r.path, r.query.get("fieldSelector")) for r in asked}) == 1, [
        (r.path, r.query) for r in asked
    ]


@pytest.mark.parametrize("get_allowed", [True, False], ids=["get-allowed", "get-refused"])
def test_a_refused_list_of_the_status_reads_its_default_place(
    doctor: Doctor, get_allowed: bool
) -> None:
    """A role that grants the status ConfigMap's `get` alone (as truegreen's did) refuses the
    list by name: the status is read where cluster-autoscaler writes it by default. Refused
    there too, nothing is measured of it: a line in the details, never a finding."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, _unhealthy_status(now, "kube-system", now)]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/configmaps$")
    if not get_allowed:
        doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/kube-system/configmaps/")
    result = doctor.live("-o", "json", "--verbose")
    report = result.json()
    codes = {c for c, _, _ in _capacity(report)}
    assert ("capacity.autoscaler-unhealthy" in codes) is get_allowed, _capacity(report)
    if not get_allowed:
        lines = [d for f in report["findings"] if f["check"] == "capacity" for d in f["details"]]
        assert any(d.startswith("the autoscaler's status could not be read: ") for d in lines), (
            lines
        )
        assert result.exit_code == 2, "the job is too large whatever the autoscaler says"


def test_a_snapshot_taken_before_the_status_was_listed_reads_it_at_its_default_place(
    doctor: Doctor,
) -> None:
    """Snapshots taken before doctor listed the status by name hold only its get at
    kube-system: offline, the list was not made, so that get is the status."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, _unhealthy_status(now, "kube-system", now)]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/configmaps$")
    directory = doctor.snapshot()
    listed = [
        path
        for path in (directory / "reads").iterdir()
        if json.loads(path.read_text())["read"]
        == {
            "verb": "list",
            "resource": "configmaps",
            "namespace": None,
            "fields": "metadata.name=cluster-autoscaler-status",
        }
    ]
    assert len(listed) == 1, sorted(p.name for p in (directory / "reads").iterdir())
    listed[0].unlink()
    report = doctor.offline(directory, "-o", "json").json()
    assert ("capacity.autoscaler-unhealthy", "fail", "measured") in _capacity(report)


@pytest.mark.parametrize(
    ("at_default_place", "get_allowed", "code", "failed"),
    [
        (True, True, 0, 0),
        (False, True, 0, 0),
        (True, False, 3, 2),
    ],
    ids=["got-there", "none-there", "get-refused"],
)
def test_a_refused_list_whose_get_read_the_status_leaves_the_snapshot_whole(
    doctor: Doctor, at_default_place: bool, get_allowed: bool, code: int, failed: int
) -> None:
    """With a role that grants the status ConfigMap's `get` alone, doctor reads the status at
    its default place instead of listing it (reads/autoscaler_status.py `read_status`), and the
    refused list is no finding of doctor's: what the status is for was read there (a status, or
    none: a NotFound is a measurement). The snapshot saves both reads, and is not incomplete for
    the list (docs/snapshot.md: exit 3 when some reads could not be made); refused there too,
    nothing of the status was read, and both are counted as before."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, *([_unhealthy_status(now, "kube-system", now)] * at_default_place)]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/configmaps$")
    if not get_allowed:
        doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/kube-system/configmaps/")
    folder = doctor.tmp_path / "bundle"
    result = run_cli(
        "snapshot",
        "--kubeconfig",
        str(doctor.kubeconfig),
        *doctor.registry_flags(),
        "--output-directory",
        str(folder),
        "-o",
        "json",
    )
    document = result.json()
    assert (document["exit_code"], document["failed_reads"]) == (code, failed), document
    assert result.exit_code == code
    saved = [json.loads(p.read_text())["read"] for p in (folder / "reads").iterdir()]
    assert {"verb": "list", "resource": "configmaps", "namespace": None} | {
        "fields": "metadata.name=cluster-autoscaler-status"
    } in saved, "the refused list is saved: offline, doctor falls back as live"
    offline = doctor.offline(folder, "-o", "json").json()
    live = doctor.live("-o", "json").json()
    assert _capacity(offline) == _capacity(live)
