"""doctor on whole environments, live over HTTP and offline from a snapshot of the same cluster.

Each case pins the exact headline rule and code, not merely the status.
"""

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import (
    REGISTRY_NOT_ASKED,
    REGISTRY_NOT_ASKED_TEXT,
    Doctor,
    without_connection_flags,
)
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import Obj, find, healthy, missing_pull_credentials, pod_for, ts


def _statuses(report: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["check"], set()).add(finding["status"])
    return found


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


@pytest.mark.parametrize(
    ("scenario", "exit_code", "rule", "code"),
    [
        ("healthy", 0, "ready", "ready"),
        # The kubelet pulls without the missing login: whether that works, the registry, not
        # asked here, would say (the warning beside it: image-pull.no-login-not-asked).
        ("missing-pull-credentials", 0, "warning", "image-pull.login-missing-skipped"),
        ("damaged-pull-credentials", 2, "root-cause-failure", "image-pull.login-damaged"),
        ("unbound-dataset-volume", 2, "root-cause-failure", "storage.volume-unbound"),
        ("held-by-running-job", 0, "waiting-for-running-job", "capacity.held-by-running-job"),
        ("job-too-large", 2, "measured-failure", "capacity.too-large"),
        ("crash-looping-manager", 2, "measured-failure", "workloads.crash-loop"),
    ],
)
def test_scenario_verdict_live_equals_snapshot(
    doctor: Doctor, scenario: str, exit_code: int, rule: str, code: str
) -> None:
    doctor.load(scenario)
    live = doctor.live("-o", "json")
    assert live.exit_code == exit_code, live.stdout
    report = live.json()
    assert (report["headline"]["rule"], report["headline"]["code"]) == (rule, code)
    assert report["headline"]["check"] == (
        None if code == "ready" else code.split(".", maxsplit=1)[0]
    )
    assert report["exit_code"] == exit_code
    offline = doctor.offline(doctor.snapshot(), "-o", "json")
    assert offline.exit_code == exit_code
    assert without_connection_flags(offline.json()) == without_connection_flags(report)


def test_healthy_lists_every_check_as_ok(doctor: Doctor) -> None:
    doctor.load("healthy")
    report = doctor.live("-o", "json").json()
    assert report["verdict"] == "ready"
    assert report["headline"]["check"] is None
    assert report["headline"]["text"] == "Ready: training can run."
    assert _statuses(report) == {
        check: {"ok"}
        for check in (
            "credentials",
            "image-pull",
            "storage",
            "queue",
            "admission",
            "workloads",
            "evidence",
            "capacity",
            "probes",
            "freshness",
        )
    }
    assert report["coverage"] == {
        "checked": [
            "credentials",
            "image-pull",
            "storage",
            "queue",
            "admission",
            "workloads",
            "evidence",
            "capacity",
            "probes",
            "freshness",
        ],
        "not_checked": [REGISTRY_NOT_ASKED],
    }


def test_measured_failure_beside_the_wait_wins(doctor: Doctor) -> None:
    """The seed's bug: a comforting wait warning must never shadow a measured failure."""
    objects = doctor.load("held-by-running-job")
    regcred = find(objects, "Secret", "regcred")
    regcred["data"] = {".dockerconfigjson": base64.b64encode(b"not json").decode()}
    doctor.server.update_object(regcred)
    result = doctor.live("-o", "json")
    report = result.json()
    # Precondition, pinned to the exact rule: the wait is still found, as an also-line.
    assert "capacity.held-by-running-job" in _codes(report)
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "root-cause-failure",
        "image-pull.login-damaged",
    )
    assert result.exit_code == 2
    text = doctor.live("--no-color").stdout
    assert "Also:" in text
    assert (
        "the free capacity is held by the running training job 'train-002'"
        in text.split("Also:")[1]
    )


def test_permission_error_beside_the_wait_keeps_the_wait(doctor: Doctor) -> None:
    doctor.load("held-by-running-job")
    doctor.server.inject(Fault.FORBIDDEN, r"/secrets/regcred$")
    result = doctor.live("-o", "json")
    report = result.json()
    image_pull = [f for f in report["findings"] if f["check"] == "image-pull"]
    assert [(f["status"], f["basis"], f["code"]) for f in image_pull] == [
        ("unknown", "cant-check", "image-pull.cant-read")
    ]
    assert (report["headline"]["rule"], report["headline"]["code"]) == (
        "waiting-for-running-job",
        "capacity.held-by-running-job",
    )
    assert result.exit_code == 3


def test_wait_alone_is_ready_with_a_warning(doctor: Doctor) -> None:
    doctor.load("held-by-running-job")
    report = doctor.live("-o", "json").json()
    capacity = [f for f in report["findings"] if f["check"] == "capacity"]
    assert [(f["status"], f["basis"]) for f in capacity] == [("warn", "inferred")]
    # the waiting job's stuck pod is explained by the wait: it is not a failure of its own
    assert "capacity.job-stuck" not in _codes(report)
    assert any("train-003-y1" in d for d in capacity[0]["details"])
    assert report["exit_code"] == 0


def test_no_permission_for_machines_gives_an_honest_partial_answer(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$")
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 3
    assert report["verdict"] == "unknown"
    assert report["headline"]["code"] == "capacity.cant-read"
    assert report["headline"]["text"] == (
        "Couldn't check whether there is room for a training job: "
        "no permission to read the machines."
    )
    statuses = _statuses(report)
    assert statuses.pop("capacity") == {"unknown"}
    assert set(map(frozenset, statuses.values())) == {frozenset({"ok"})}
    assert report["coverage"]["not_checked"] == [
        REGISTRY_NOT_ASKED,
        {"check": "capacity", "reason": "no permission to read the machines"},
    ]


def test_unreachable_cluster(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.stop()
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 3
    assert report["headline"]["rule"] == "nothing-read"
    assert report["headline"]["text"] == (
        f"Couldn't reach the cluster at {doctor.server.url}: connection refused."
    )
    assert {f["status"] for f in report["findings"]} == {"unknown"}
    assert {f["check"] for f in report["findings"]} == {
        "credentials",
        "image-pull",
        "storage",
        "queue",
        "admission",
        "workloads",
        "evidence",
        "capacity",
        "probes",
        "freshness",
    }
    assert report["coverage"]["checked"] == []


def test_unreadable_service_list_never_reports_references_ok(doctor: Doctor) -> None:
    """image-pull and storage learn what to look at from the services: no list, no ok."""
    doctor.load(missing_pull_credentials)
    doctor.server.inject(Fault.FORBIDDEN, r"/deployments$")
    report = doctor.live("-o", "json").json()
    statuses = _statuses(report)
    assert statuses["storage"] == {"unknown"}
    assert "ok" not in statuses["image-pull"]
    assert "unknown" in statuses["image-pull"]


def test_text_output_has_headline_remedy_also_and_coverage(doctor: Doctor) -> None:
    doctor.load("held-by-running-job")
    doctor.server.inject(Fault.FORBIDDEN, r"/secrets/regcred$")
    text = doctor.live("--no-color").stdout.splitlines()
    assert text[0] == (
        "! COULD NOT CHECK  Training can run, but the free capacity is held by the running "
        "training job 'train-002' (4 CPUs, 16 GiB memory, 2 nvidia.com/gpu on gpu-1); the next "
        "training job waits for it."
    )
    assert (
        text[1] == "  → Wait for the running training job 'train-002' to finish, or add capacity."
    )
    assert "Also:" in text
    assert text[-1] == (
        "9 checks measured, 1 could not be checked "
        f"(image-pull: no permission to read the stored logins). {REGISTRY_NOT_ASKED_TEXT}"
    )


def test_namespace_only_access_measures_all_but_capacity(doctor: Doctor) -> None:
    """An account that may read only its namespace: capacity and admission (the cluster's
    webhooks) unknown, the rest measured."""
    doctor.load("healthy")
    for cluster_wide in (
        r"^/api/v1/nodes$",
        r"^/api/v1/pods$",
        r"^/apis/storage\.k8s\.io/",
        r"^/apis/admissionregistration\.k8s\.io/",
    ):
        doctor.server.inject(Fault.FORBIDDEN, cluster_wide)
    result = doctor.live("-o", "json")
    report = result.json()
    statuses = _statuses(report)
    assert statuses.pop("capacity") == {"unknown"}
    assert statuses.pop("admission") == {"unknown"}
    assert set(map(frozenset, statuses.values())) == {frozenset({"ok"})}
    assert result.exit_code == 3


def test_the_same_statement_is_one_finding_with_every_reason(doctor: Doctor) -> None:
    """Three unreadable service lists make one unknown, carrying all three reasons."""
    doctor.load("healthy")
    for kind in ("deployments", "statefulsets", "daemonsets"):
        doctor.server.inject(Fault.FORBIDDEN, rf"/{kind}$")
    report = doctor.live("-o", "json").json()
    workloads = [f for f in report["findings"] if f["check"] == "workloads"]
    assert [f["code"] for f in workloads] == ["workloads.cant-read"]
    assert workloads[0]["details"] == [
        "list deployments: no permission (403); needs list deployments.apps in namespace train",
        "list statefulsets: no permission (403); needs list statefulsets.apps in namespace train",
        "list daemonsets: no permission (403); needs list daemonsets.apps in namespace train",
    ]


def test_the_doctor_roles_grant_exactly_what_doctor_and_snapshot_read(doctor: Doctor) -> None:
    """deploy/doctor: the namespace Role and the ClusterRoles, derived from requests.

    The unbound volume makes doctor read its storage class too, a pod holding room at a
    priority other than 0 its PriorityClasses, a crash-looping container makes the snapshot
    read its log, the newest job's bound volume and device claim make it read their
    objects, and a run over the namespaces a label selector picks lists the namespaces, so
    every read is exercised."""
    from tests.scenario.test_admission import webhook_behind
    from tests.scenario.test_capi_provision_time import PATH, _machine_deployment, _triggered
    from tests.support import rbac
    from tests.support.cli import run_cli
    from tests.support.filter_objects import every_filter_read
    from tests.support.gang_objects import GANG_GROUPS, every_gang_read
    from tests.support.kueue_objects import every_queue_read, handed_to_team_a
    from tests.support.scenarios import crash_looping_manager, job_pod, training_job
    from tests.support.training_kinds import ALL_GROUPS, every_training_read

    def build(now: datetime) -> list[Obj]:
        objects = crash_looping_manager(now)
        volume = next(o for o in objects if o["kind"] == "PersistentVolumeClaim")
        volume["status"] = {"phase": "Pending"}
        database = next(o for o in objects if o["metadata"]["name"] == "mysql-def34")
        database["spec"]["priority"] = 1000  # as the Priority plugin sets it from a class
        # A training pod the scheduler could not place: its warnings and the autoscalers' word
        # on it are read too.
        waiting = training_job("train-002", now, finished=False)
        pods = [
            job_pod(waiting, now, suffix=s, node_name=None, phase="Pending")
            for s in ("w", "w2", "w3")
        ]
        # cluster-autoscaler adds machines for them from Cluster API groups of each kind it
        # scales: each group is got.
        scaling = [
            _triggered(now, pod, timedelta(minutes=2), kind)
            for pod, kind in zip(
                pods, ("MachineDeployment", "MachineSet", "MachinePool"), strict=True
            )
        ]
        groups = [
            _machine_deployment(now, "30m", kind=kind)
            for kind in ("MachineDeployment", "MachineSet", "MachinePool")
        ]
        return [*objects, waiting, *pods, *scaling, *groups]

    doctor.server.install(
        *ALL_GROUPS, "kueue.x-k8s.io", "karpenter.sh", "cluster.x-k8s.io", *GANG_GROUPS
    )
    doctor.load(build)
    doctor.server.add(*webhook_behind(ready=True), *every_training_read(datetime.now(UTC)))
    filtered = handed_to_team_a(every_filter_read(datetime.now(UTC)))
    doctor.server.add(*every_gang_read(filtered, "filtered", datetime.now(UTC)))
    doctor.server.add(*every_queue_read(datetime.now(UTC)))
    doctor.live("-o", "json")
    paths = {r.path for r in doctor.server.requests()}
    assert "/api/v1/persistentvolumes/pvc-0a1b2c" in paths, "precondition: the volume read"
    assert "/api/v1/persistentvolumes" in paths, "precondition: every volume listed"
    assert "/apis/storage.k8s.io/v1/csidrivers/ebs.csi.aws.com" in paths, "precondition"
    assert "/apis/resource.k8s.io/v1/resourceclaims" in paths, "precondition: devices read"
    assert "/apis/kueue.x-k8s.io/v1beta2/admissionchecks" in paths, "precondition: Kueue read"
    assert "/apis/kueue.x-k8s.io/v1beta2/cohorts" in paths, "precondition"
    assert "/apis/karpenter.sh/v1/nodeclaims" in paths, "precondition: NodeClaims read"
    assert "/apis/kubeflow.org/v2beta1/namespaces/train/mpijobs" in paths, "precondition"
    assert "/api/v1/configmaps" in paths, "precondition: the autoscaler's status listed"
    assert PATH in paths, "precondition: the Cluster API machine group got"
    assert "/apis/trainer.kubeflow.org/v1alpha1/namespaces/train/trainingruntimes/torch-local" in (
        paths
    ), "precondition: both kinds of runtime read"
    assert "/apis/storage.k8s.io/v1/storageclasses/standard" in paths, "precondition: all read"
    assert "/apis/discovery.k8s.io/v1/namespaces/policy/endpointslices" in paths, "precondition"
    assert "/apis/scheduling.k8s.io/v1/priorityclasses" in paths, "precondition"
    assert "/apis/node.k8s.io/v1/runtimeclasses/nvidia" in paths, "precondition: runtime read"
    assert "/apis/scheduling.volcano.sh/v1beta1/queues/default" in paths, "precondition: gangs"
    assert (
        "/apis/scheduling.run.ai/v2alpha2/namespaces/train/podgroups/pg-filtered-uid-filtered"
        in (paths)
    ), "precondition: every kind of group read"
    doctor.snapshot(exit_code=0)
    asked = {r.path for r in doctor.server.requests()} - paths
    assert "/api/v1/namespaces/train/pods/jobs-manager-abc12/log" in asked, "precondition"
    labelled = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "train"}}
    doctor.server.add({**labelled, "metadata": {"name": "train", "labels": {"fleet": "yes"}}})
    # A role that grants the autoscaler's status by `get` alone refuses the list by name: the
    # status is got at its default place (the role grants both).
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/configmaps$")
    fleet = run_cli(
        "doctor", "--kubeconfig", str(doctor.kubeconfig), "--namespace-selector", "fleet=yes"
    )
    assert fleet.exit_code in (0, 2, 3), fleet.stderr
    assert doctor.server.requests("GET", r"^/api/v1/namespaces$"), "precondition: listed"
    assert doctor.server.requests("GET", r"^/api/v1/namespaces/kube-system/configmaps/"), (
        "precondition: the status got where its list was refused"
    )
    namespaced, cluster_wide = rbac.used(doctor.server.requests(), namespace="train")
    assert namespaced == rbac.granted("doctor/role.yaml")
    assert cluster_wide == rbac.granted("doctor/clusterrole.yaml") | rbac.granted(
        "doctor/clusterrole-admission.yaml"
    ) | rbac.granted("doctor/clusterrole-queue.yaml")


@pytest.mark.parametrize(
    "state",
    [{"ready": False}, {"ready": False, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
    ids=["unready", "crash-looping"],
)
def test_a_terminating_old_pod_is_not_the_service_s_state(
    doctor: Doctor, state: dict[str, Any]
) -> None:
    """After a rollout the replaced pod lingers Terminating (kubectl#1628): stopping, not ready,
    perhaps restarting on its way out. The service is what its staying pods are."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        manager = next(o for o in objects if o["metadata"]["name"] == "jobs-manager")
        old = pod_for(manager, now, suffix="old99", age=timedelta(days=1))
        old["metadata"]["deletionTimestamp"] = ts(now + timedelta(seconds=30))
        old["metadata"]["deletionGracePeriodSeconds"] = 30
        old["status"]["conditions"][1].update(
            status="False", lastTransitionTime=ts(now - timedelta(hours=1))
        )
        old["status"]["containerStatuses"][0].update(state)
        return [*objects, old]

    doctor.load(build)
    result = doctor.live("-o", "json")
    workloads = [f for f in result.json()["findings"] if f["check"] == "workloads"]
    assert [(f["code"], f["status"]) for f in workloads] == [("workloads.ok", "ok")]
    assert result.exit_code == 0
    pods = doctor.server.list_objects("Pod", "train")
    assert "jobs-manager-old99" in {p["metadata"]["name"] for p in pods}, "precondition"
