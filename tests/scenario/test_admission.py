"""Admission over the fake API server: the gates the API server puts before a training pod.

Quota, a webhook with nobody behind it, the namespace's Pod Security level, a namespace being
deleted, and the trial start (`--admission-dry-run`) whose answer is the server's own.
"""

import base64
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.scenario.conftest import Doctor
from tests.support import rbac, scenarios
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import NAMESPACE, find, healthy, job_pod, training_job
from tests.support.training_kinds import ALL_GROUPS, indexed_job, pytorch_job, pytorch_pod

Obj = dict[str, Any]

# The codes this file pins (test_doctor_codes checks that every catalogue code is pinned).
PINNED_HERE = {
    "admission.namespace-terminating",
    "admission.namespace-missing",
    "admission.quota-exceeded",
    "admission.quota-held-by-running-job",
    "admission.quota-needs-sizes",
    "admission.quota-not-counted",
    "admission.security-level",
    "admission.webhook-down",
    "admission.webhook-down-ignored",
    "admission.webhook-unverifiable",
    "admission.trial-refused",
    "admission.trial-not-allowed",
    "admission.trial-failed",
}


def quota(name: str, hard: dict[str, str], used: dict[str, str], **spec: Any) -> Obj:
    """A ResourceQuota as the quota controller leaves it: status.hard copied, status.used
    counted."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"hard": hard, **spec},
        "status": {"hard": hard, "used": used},
    }


def namespace(labels: dict[str, str] | None = None, phase: str = "Active") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": NAMESPACE,
            "labels": {"kubernetes.io/metadata.name": NAMESPACE, **(labels or {})},
        },
        "status": {"phase": phase},
    }


def webhook_behind(
    *, ready: bool, policy: str = "Fail", kind: str = "ValidatingWebhookConfiguration"
) -> list[Obj]:
    """A webhook on every pod create, served by policy/policy-webhook, and its endpoints."""
    hook = {
        "name": "check.policy.example.com",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": policy,
        "clientConfig": {"service": {"namespace": "policy", "name": "policy-webhook"}},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["pods"],
            }
        ],
    }
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": "policy"},
            "webhooks": [hook],
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": "policy-webhook-x7k2p",
                "namespace": "policy",
                "labels": {"kubernetes.io/service-name": "policy-webhook"},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.3.7"], "conditions": {"ready": ready}}],
        },
    ]


def _admission(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "admission"]


def _codes(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["code"], f["status"], f["basis"]) for f in _admission(report)]


def test_healthy_namespace_lets_training_in(doctor: Doctor) -> None:
    doctor.load("healthy")
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]


def test_quota_used_up_refuses_the_training_job(doctor: Doctor) -> None:
    """The issue's case: `pods: 3`, 3 used; the machines have room, the quota has none."""
    doctor.load("healthy")
    doctor.server.add(quota("compute", {"pods": "3"}, {"pods": "3"}))
    result = doctor.live("-o", "json", "--job-requests", "cpu=2,memory=4Gi,nvidia.com/gpu=1")
    report = result.json()
    assert result.exit_code == 2
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert report["headline"]["code"] == "admission.quota-exceeded"
    assert report["headline"]["rule"] == "root-cause-failure"
    assert report["headline"]["text"] == (
        "A training job can't start: the usage limit 'compute' is reached "
        "(running programs: 3 of 3 in use, the job needs 1)."
    )
    assert report["headline"]["remedy"] == (
        "Wait for or stop what uses it ('jobs-manager-abc12', 'mysql-def34'), or ask your "
        "cluster admin to raise the limit 'compute'."
    )
    assert found["details"][0] == "quota compute: pods used 3 + requested 1 > hard 3"
    assert found["objects"] == ["ResourceQuota/compute"]
    # The scheduler's arithmetic alone still says it fits: only admission refuses it.
    capacity = [f["code"] for f in report["findings"] if f["check"] == "capacity"]
    assert capacity == ["capacity.fits"]


def test_quota_with_room_refuses_nothing(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(quota("compute", {"pods": "4"}, {"pods": "3"}))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert "usage limit compute compared" in _admission(report)[0]["details"]


def _running_job_holds_the_gpu_quota(now: datetime) -> list[Obj]:
    """train-002 runs with 2 GPUs; the quota allows 3 and the next job (like it) needs 2."""
    objects = healthy(now)
    running = training_job("train-002", now, gpus=2, age=timedelta(hours=1), finished=False)
    objects += [
        running,
        job_pod(running, now, suffix="x1", node_name="gpu-1"),
        quota("gpus", {"requests.nvidia.com/gpu": "3"}, {"requests.nvidia.com/gpu": "2"}),
    ]
    return objects


def test_quota_used_up_by_a_running_training_job_is_a_wait(doctor: Doctor) -> None:
    doctor.load(_running_job_holds_the_gpu_quota)
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-held-by-running-job", "warn", "inferred")]
    assert result.exit_code == 0
    assert report["headline"]["rule"] == "waiting-for-running-job"
    assert report["headline"]["code"] == "admission.quota-held-by-running-job"
    assert report["headline"]["remedy"] == (
        "Wait for 'train-002' to finish, or ask your cluster admin to raise the limit 'gpus'."
    )
    assert _admission(report)[0]["objects"] == ["ResourceQuota/gpus", "Job/train-002"]


def test_the_quota_wait_never_outranks_a_measured_failure(doctor: Doctor) -> None:
    objects = doctor.load(_running_job_holds_the_gpu_quota)
    regcred = find(objects, "Secret", "regcred")
    regcred["data"] = {".dockerconfigjson": base64.b64encode(b"not json").decode()}
    doctor.server.update_object(regcred)
    report = doctor.live("-o", "json").json()
    assert report["headline"]["code"] == "image-pull.login-damaged"
    assert ("admission.quota-held-by-running-job", "warn", "inferred") in _codes(report)


def test_quota_needs_every_container_to_state_its_cpu(doctor: Doctor) -> None:
    """A quota on limits.cpu refuses a container without a CPU limit (pods.go Constraints)."""
    doctor.load("healthy")
    doctor.server.add(quota("cpu-cap", {"limits.cpu": "64"}, {"limits.cpu": "2"}))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.quota-needs-sizes", "fail", "measured")]
    assert _admission(report)[0]["headline"] == (
        "A training job can't start: the usage limit 'cpu-cap' requires every program to state "
        "its limits.cpu, and 'trainer' doesn't."
    )


def test_limit_range_defaults_state_the_sizes_a_quota_needs(doctor: Doctor) -> None:
    """LimitRanger fills in a default CPU limit before the quota plugin looks."""
    doctor.load("healthy")
    doctor.server.add(
        quota("cpu-cap", {"limits.cpu": "64"}, {"limits.cpu": "2"}),
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "defaults", "namespace": NAMESPACE},
            "spec": {"limits": [{"type": "Container", "default": {"cpu": "8"}}]},
        },
    )
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert "usage limit cpu-cap compared" in _admission(report)[0]["details"]


def test_an_uncounted_quota_refuses_until_counted(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(quota("fresh", {"pods": "10"}, {}))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.quota-not-counted", "fail", "measured")]


def test_a_down_fail_closed_webhook_outranks_the_pending_pods_it_explains(doctor: Doctor) -> None:
    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        waiting = training_job("train-002", now, age=timedelta(minutes=20), finished=False)
        objects += [
            waiting,
            job_pod(waiting, now, suffix="y1", node_name=None, phase="Pending"),
            *webhook_behind(ready=False),
        ]
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert _codes(report) == [("admission.webhook-down", "fail", "measured")]
    assert ("capacity.unschedulable", "fail", "measured") in {
        (f["code"], f["status"], f["basis"]) for f in report["findings"]
    }, "precondition: the pending training pod is reported too"
    assert report["headline"]["code"] == "admission.webhook-down"
    assert report["headline"]["text"] == (
        "Nothing new can start: the cluster's approval hook 'check.policy.example.com' has no "
        "server running behind it ('policy/policy-webhook')."
    )
    assert _admission(report)[0]["details"] == [
        "webhook check.policy.example.com of ValidatingWebhookConfiguration/policy: no ready "
        "endpoints behind service policy/policy-webhook, failurePolicy Fail"
    ]


def test_a_webhook_with_a_ready_server_is_fine(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(*webhook_behind(ready=True, kind="MutatingWebhookConfiguration"))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert (
        "webhook check.policy.example.com of MutatingWebhookConfiguration/policy: 1 ready "
        "endpoints behind policy/policy-webhook"
    ) in _admission(report)[0]["details"]


def test_an_ignore_policy_webhook_that_is_down_is_a_warning(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(*webhook_behind(ready=False, policy="Ignore"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.webhook-down-ignored", "warn", "measured")]
    assert result.exit_code == 0
    assert report["headline"]["rule"] == "warning"


def test_a_webhook_at_a_url_cannot_be_checked(doctor: Doctor) -> None:
    doctor.load("healthy")
    config, _ = webhook_behind(ready=True)
    config["webhooks"][0]["clientConfig"] = {"url": "https://policy.example.com/validate"}
    doctor.server.add(config)
    result = doctor.live("-o", "json")
    assert _codes(result.json()) == [("admission.webhook-unverifiable", "unknown", "cant-check")]
    assert result.exit_code == 3


def _privileged_gpu_job(now: datetime) -> list[Obj]:
    objects = healthy(now)
    job = training_job("train-002", now, age=timedelta(minutes=5))
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    objects += [job, namespace({"pod-security.kubernetes.io/enforce": "restricted"})]
    return objects


def test_a_restricted_namespace_refuses_a_privileged_gpu_template(doctor: Doctor) -> None:
    doctor.load(_privileged_gpu_job)
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert _codes(report) == [("admission.security-level", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "The training job is refused by the environment's security level 'restricted': it "
        "asks for full control of the machine and 4 more."
    )
    assert found["remedy"] == (
        "Change securityContext.privileged of 'trainer', securityContext.allowPrivilegeEscalation"
        " of 'trainer', securityContext.runAsNonRoot, securityContext.seccompProfile, "
        "securityContext.capabilities.drop of 'trainer' in the training job's settings, or ask "
        "your cluster admin for a lower security level."
    )
    assert found["details"][0] == (
        'the pods of Job/train-002 (worker): violates PodSecurity "restricted:latest": '
        'privileged (container "trainer" must not set securityContext.privileged=true)'
    )
    assert found["objects"] == ["Namespace/train", "Job/train-002"]


def test_the_trial_start_quotes_the_servers_refusal(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.admission.webhook_denial = (
        "gpu-policy.example.com",
        "training jobs must name a priority class",
    )
    result = doctor.live("-o", "json", "--admission-dry-run")
    report = result.json()
    assert result.exit_code == 2
    assert _codes(report) == [("admission.trial-refused", "fail", "measured")]
    assert report["headline"]["text"] == (
        "The cluster refused a trial start of the training job: admission webhook "
        '"gpu-policy.example.com" denied the request: training jobs must name a priority class'
    )
    # The one write doctor sends: a create with dryRun=All, which stores nothing.
    writes = [r for r in doctor.server.requests() if r.method != "GET"]
    assert [(r.method, r.path, r.query.get("dryRun")) for r in writes] == [
        ("POST", "/api/v1/namespaces/train/pods", "All")
    ]
    assert doctor.server.get_object("Pod", "truegreen-trial-train-001", NAMESPACE) is None


def test_the_trial_start_redacts_what_the_webhook_echoes(doctor: Doctor) -> None:
    """A policy that quotes the value it refuses puts it in the server's answer, which the API
    server passes on word for word (statuserror.go ToStatusErr); doctor quotes it redacted, as
    `--trial` does (docs/snapshot.md rule 6), in every output."""
    doctor.load("healthy")
    doctor.server.admission.webhook_denial = (
        "policy.example.com",
        "env DB_PASSWORD=PLANTED4461 is not allowed; token: PLANTED4462; see "
        "https://u:PLANTED4463@policy/x",
    )
    outputs = [
        doctor.live(*args, "--admission-dry-run")
        for args in (("--no-color", "-v"), ("-o", "json", "-v"), ("--namespaces", NAMESPACE))
    ]
    assert outputs[1].json()["headline"]["text"] == (
        "The cluster refused a trial start of the training job: admission webhook "
        '"policy.example.com" denied the request: env DB_PASSWORD=<redacted> is not allowed; '
        "token: <redacted>; see https://<redacted>@policy/x"
    )
    for result in outputs:
        assert result.exit_code == 2
        assert "PLANTED446" not in result.stdout + result.stderr


def test_the_trial_start_quotes_the_quota_plugin(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(quota("compute", {"pods": "3"}, {"pods": "3"}))
    lines = doctor.live("--no-color", "-v", "--admission-dry-run").stdout.splitlines()
    assert (
        "  ✗ The cluster refused a trial start of the training job: exceeded quota: compute, "
        "requested: pods=1, used: pods=3, limited: pods=3"
    ) in lines


def test_an_admitted_trial_overrules_what_doctor_could_not_check(doctor: Doctor) -> None:
    """A webhook at a URL is unknown to doctor; the server called it and admitted the pod."""
    doctor.load("healthy")
    config, _ = webhook_behind(ready=True)
    config["webhooks"][0]["clientConfig"] = {"url": "https://policy.example.com/validate"}
    doctor.server.add(config)
    result = doctor.live("-o", "json", "--admission-dry-run")
    report = result.json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]
    assert (
        "overruled by the trial: admission.webhook-unverifiable"
        in (_admission(report)[0]["details"])
    )
    assert result.exit_code == 0
    # admitted, and still nothing stored: the dry run is the only write and keeps nothing
    assert [r.method for r in doctor.server.requests() if r.method != "GET"] == ["POST"]
    assert doctor.server.get_object("Pod", "truegreen-trial-train-001", NAMESPACE) is None


def test_no_permission_for_the_trial_is_could_not_check(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.FORBIDDEN, r"/namespaces/train/pods$", method="POST")
    result = doctor.live("-o", "json", "--admission-dry-run")
    report = result.json()
    assert _codes(report) == [("admission.trial-not-allowed", "unknown", "cant-check")]
    assert result.exit_code == 3
    assert "needs create pods in namespace train" in " ".join(_admission(report)[0]["details"])


def test_a_failed_trial_is_could_not_check(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.inject(Fault.SERVER_ERROR, r"/namespaces/train/pods$", method="POST")
    result = doctor.live("-o", "json", "--admission-dry-run")
    assert _codes(result.json()) == [("admission.trial-failed", "unknown", "cant-check")]
    assert result.exit_code == 3


def test_without_the_flag_doctor_sends_no_write(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.live("-o", "json")
    assert {r.method for r in doctor.server.requests()} == {"GET"}


def test_a_terminating_namespace_comes_first(doctor: Doctor) -> None:
    doctor.load("damaged-pull-credentials")
    doctor.server.add(namespace(phase="Terminating"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert result.exit_code == 2
    assert report["headline"]["rule"] == "namespace-closed"
    assert report["headline"]["text"] == (
        "The environment's space 'train' is being deleted, so nothing new can start there."
    )
    assert ("image-pull.login-damaged", "fail", "measured") in {
        (f["code"], f["status"], f["basis"]) for f in report["findings"]
    }, "precondition: a root cause that would otherwise be the headline"


def test_a_missing_namespace_is_measured(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.delete_object("Namespace", NAMESPACE)
    report = doctor.live("-o", "json").json()
    assert ("admission.namespace-missing", "fail", "measured") in _codes(report)
    assert report["headline"]["rule"] == "namespace-closed"


def test_a_job_file_s_missing_namespace_is_not_blamed_on_dash_n(
    doctor: Doctor, tmp_path: Path
) -> None:
    """No -n: the space is the job file's own `metadata.namespace` (kubectl create -f does the
    same), so the remedy names every place the name may have come from, not -n alone."""
    doctor.round_trip = False  # a snapshot holds one space: 'train', not the file's
    doctor.load("healthy")
    job = training_job("ghost-job", doctor.now, finished=False)
    job["metadata"]["namespace"] = "ghost"
    del job["status"]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert (report["headline"]["code"], report["headline"]["text"]) == (
        "admission.namespace-missing",
        "The environment's space 'ghost' doesn't exist, so nothing can start there.",
    ), "precondition: the file's space is the one read"
    assert report["headline"]["remedy"] == (
        "Check the name (from -n, else the job file, else the connection's default; "
        f"`kubectl --kubeconfig {doctor.kubeconfig} get namespaces` lists the ones that exist), "
        "or set the environment up there."
    )


def test_the_snapshot_replays_the_admission_reads(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.server.add(quota("compute", {"pods": "3"}, {"pods": "3"}), *webhook_behind(ready=False))
    live = doctor.live("-o", "json").json()
    offline = doctor.offline(doctor.snapshot(), "-o", "json").json()
    assert (
        _codes(offline)
        == _codes(live)
        == [
            ("admission.webhook-down", "fail", "measured"),
            ("admission.quota-exceeded", "fail", "measured"),
        ]
    )


def test_a_trial_needs_the_live_cluster(doctor: Doctor) -> None:
    doctor.load("healthy")
    result = doctor.offline(doctor.snapshot(), "--admission-dry-run")
    assert result.exit_code == 64
    assert result.stderr.strip().splitlines() == [
        "truegreen: --admission-dry-run asks the live cluster; a snapshot cannot answer it. drop "
        "--snapshot, or drop --admission-dry-run"
    ]


def test_the_trial_role_grants_exactly_the_trial(doctor: Doctor) -> None:
    doctor.load("healthy")
    doctor.live("-o", "json", "--admission-dry-run")
    namespaced, _ = rbac.used(doctor.server.requests(), namespace="train")
    assert namespaced - rbac.granted("doctor/role.yaml") == rbac.granted("doctor/trial-role.yaml")


def test_the_config_file_can_ask_for_the_trial(doctor: Doctor) -> None:
    doctor.round_trip = False  # a trial start is live-only; the config file hides the flag
    doctor.load("healthy")
    config = doctor.tmp_path / "doctor.yaml"
    config.write_text("admission_dry_run: true\n")
    doctor.live("-o", "json", "--config", str(config))
    assert [(r.method, r.query.get("dryRun")) for r in doctor.server.requests("POST")] == [
        ("POST", "All")
    ]
    config.write_text("admission_dry_run: sometimes\n")
    result = doctor.live("--config", str(config))
    assert result.exit_code == 64
    assert result.stderr.strip() == (
        f"truegreen: config {config}: admission_dry_run must be true or false"
    )


def test_a_batch_job_needs_room_in_the_count_of_batch_jobs(doctor: Doctor) -> None:
    """The judged job is a batch/v1 Job: the next one is charged `count/jobs.batch` (apiserver
    quota/v1/generic/evaluator.go ObjectCountQuotaResourceNameFor), and finished Jobs count
    until deleted."""
    doctor.load("healthy")
    doctor.server.add(quota("objects", {"count/jobs.batch": "3"}, {"count/jobs.batch": "3"}))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    assert result.exit_code == 2
    assert report["headline"]["text"] == (
        "A training job can't start: the usage limit 'objects' is reached (training jobs "
        "(finished ones count until deleted): 3 of 3 in use, the job needs 1)."
    )
    assert _admission(report)[0]["details"] == [
        "quota objects: count/jobs.batch used 3 + requested 1 > hard 3"
    ]


def _finished_pods_fill(now: datetime, resource: str, limit: str) -> list[Obj]:
    """The healthy namespace (2 running services) with the 8 Succeeded pods of finished
    training runs of train-001 left in storage, and a quota of `limit` on `resource`."""
    objects = healthy(now)
    done = next(o for o in objects if o["kind"] == "Job")
    for i in range(8):
        objects.append(
            job_pod(
                done,
                now,
                suffix=f"s{i}",
                node_name="gpu-1",
                phase="Succeeded",
                age=timedelta(hours=3),
            )
        )
    used = {"count/pods": "10", "pods": "2"}[resource]
    objects.append(quota("objects", {resource: limit}, {resource: used}))
    return objects


def test_finished_pods_that_fill_the_count_of_pods_are_named_to_be_deleted(
    doctor: Doctor,
) -> None:
    """`count/pods` counts every pod in storage, finished or not (pkg/quota/v1/evaluator/core/
    pods.go PodUsageFunc: "count/pods tracks all pods independent of state"): waiting frees
    nothing, deleting the finished pods frees what they hold."""
    doctor.load(lambda now: _finished_pods_fill(now, "count/pods", "10"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["remedy"] == (
        "Delete the finished programs, which count until deleted ('train-001-s0', "
        "'train-001-s1', 'train-001-s2' and 5 more), or ask your cluster admin to raise the "
        "limit 'objects'."
    )
    assert found["details"][:3] == [
        "quota objects: count/pods used 10 + requested 1 > hard 10",
        "held by 'jobs-manager-abc12', 'mysql-def34'",
        "held by finished pods, which count until deleted: "
        + ", ".join(f"'train-001-s{i}'" for i in range(8)),
    ]
    assert result.exit_code == 2


def test_finished_pods_free_only_the_count_and_running_ones_the_rest(doctor: Doctor) -> None:
    """One quota full on both: deleting the finished pods frees `count/pods`, never `pods`."""

    def build(now: datetime) -> list[Obj]:
        objects = _finished_pods_fill(now, "count/pods", "10")
        both = {"count/pods": "10", "pods": "2"}
        objects[-1] = quota("objects", both, both)
        return objects

    doctor.load(build)
    (found,) = _admission(doctor.live("-o", "json").json())
    assert found["remedy"] == (
        "Delete the finished programs, which count until deleted ('train-001-s0', "
        "'train-001-s1', 'train-001-s2' and 5 more), and wait for or stop what uses the rest "
        "('jobs-manager-abc12', 'mysql-def34'), or ask your cluster admin to raise the limit "
        "'objects'."
    )


def test_finished_pods_hold_nothing_of_the_running_programs_limit(doctor: Doctor) -> None:
    """`pods` counts the pods not yet finished only (PodUsageFunc: `QuotaV1Pod` false for a
    Succeeded or Failed pod, so no `pods` charge): the running services hold it all."""
    doctor.load(lambda now: _finished_pods_fill(now, "pods", "2"))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["remedy"] == (
        "Wait for or stop what uses it ('jobs-manager-abc12', 'mysql-def34'), or ask your "
        "cluster admin to raise the limit 'objects'."
    )
    assert not any("finished" in d for d in found["details"])


def test_a_quota_of_none_is_not_freed(doctor: Doctor) -> None:
    """`requests.nvidia.com/gpu: 0`: the environment allows no GPU at all (used 0 + requested
    1 > hard 0, resourcequota/controller.go checkRequest). Nothing running holds any of it,
    so the remedy cannot be to free some."""
    doctor.load("healthy")
    gpus = {"requests.nvidia.com/gpu": "0"}
    doctor.server.add(quota("gpu", gpus, gpus))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    assert result.exit_code == 2
    assert report["headline"]["text"] == (
        "A training job can't start: the usage limit 'gpu' is reached "
        "(nvidia.com/gpu: 0 of 0 in use, the job needs 1)."
    )
    assert report["headline"]["remedy"] == (
        "This environment allows none of it, so run the job elsewhere, or ask your cluster "
        "admin to raise the limit 'gpu'."
    )


def test_a_quota_scoped_to_the_default_priority_class_counts_the_job(doctor: Doctor) -> None:
    """A `globalDefault` PriorityClass of value 0, and a quota scoped to it. The job's pods name
    no class; the Priority plugin gives them the default class's name before the quota plugin
    matches scopes (plugin/pkg/admission/priority/admission.go admitPod; quota pods.go
    podMatchesScopeFunc), so the quota's `pods: 0` refuses them. No running pod's priority
    differs from 0, so only the quota's scope makes the classes worth reading."""
    doctor.load("healthy")
    doctor.server.add(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "batch-default"},
            "value": 0,
            "globalDefault": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        quota(
            "batch",
            {"pods": "0"},
            {"pods": "0"},
            scopeSelector={
                "matchExpressions": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["batch-default"]}
                ]
            },
        ),
    )
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")], (
        "the default class puts the pods under the quota"
    )
    assert result.exit_code == 2
    assert _admission(report)[0]["details"] == [
        "quota batch: pods used 0 + requested 1 > hard 0",
        "refuses the pods of Job/train-001 (worker)",
    ]


GPU_QUOTA_HALF_USED = quota(
    "gpus", {"requests.nvidia.com/gpu": "4"}, {"requests.nvidia.com/gpu": "2"}
)
"""Room for 2 more GPUs of 4: a notebook holds the other 2."""


def _gang_of_four(job: Obj) -> Callable[[datetime], list[Obj]]:
    """The healthy namespace with `job` (4 pods of 1 GPU each that run only together) for its
    only training job, one machine with room for all of it, and a notebook holding 2 GPUs."""

    def build(now: datetime) -> list[Obj]:
        kept = [o for o in healthy(now) if o["kind"] not in ("Job", "Node")]
        notebook = scenarios.deployment(
            "notebook",
            [
                scenarios.container(
                    "nb", f"{scenarios.REGISTRY}/nb:1", extra={"nvidia.com/gpu": "2"}
                )
            ],
        )
        return [
            *kept,
            scenarios.node("gpu-1", "64", "512Gi", gpus=8),
            scenarios.node("cpu-1", "8", "32Gi"),
            notebook,
            scenarios.pod_for(notebook, now, suffix="nb111", node_name="gpu-1"),
            job,
            GPU_QUOTA_HALF_USED,
        ]

    return build


def test_a_quota_with_room_for_half_the_ranks_refuses_the_job(doctor: Doctor) -> None:
    """An Indexed Job of 4 ranks, 1 GPU each (torchrun's one pod per rank), with room for 2
    GPUs. Each pod create is admitted on its own, and admission charges the quota as it admits
    (staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go
    checkQuotas: `quotas = newQuotas` after each checkRequest): ranks 0 and 1 are let in, ranks
    2 and 3 are refused `exceeded quota`, and the run never assembles."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=5))
    doctor.load(_gang_of_four(job))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the usage limit 'gpus' is reached (nvidia.com/gpu: 2 of 4 "
        "in use, the job needs 4; only 2 of its 4 programs would be let in, and they run only "
        "all together)."
    )
    assert found["remedy"] == (
        "Wait for or stop what uses it ('notebook-nb111'), or ask your cluster admin to raise "
        "the limit 'gpus'."
    )
    assert found["details"] == [
        "quota gpus: requests.nvidia.com/gpu used 2 + requested 4 > hard 4",
        "held by 'notebook-nb111'",
        "the job's 4 pods are admitted one by one, each charged as it is let in: 2 let in, "
        "2 refused",
        "refuses the pods of Job/bert (worker)",
    ]
    assert result.exit_code == 2


def test_a_pytorch_job_s_master_and_workers_are_charged_together(doctor: Doctor) -> None:
    """Master x1 and Worker x3, 1 GPU each: the whole job's 4 pods against room for 2."""
    doctor.server.install(*ALL_GROUPS)
    job = pytorch_job("bert", doctor.now, workers=3, gpus=1, age=timedelta(minutes=5))
    doctor.load(_gang_of_four(job))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["details"][-2:] == [
        "the job's 4 pods are admitted one by one, each charged as it is let in: 2 let in, "
        "2 refused",
        "refuses the pods of PyTorchJob/bert (Master, Worker)",
    ]


def test_an_admitted_trial_start_of_one_pod_does_not_answer_for_the_whole_job(
    doctor: Doctor,
) -> None:
    """One dry-run pod fits the room left, and checkQuotas never charges a dry run: the
    server's admission of it says nothing of the job's other pods."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=5))
    doctor.load(_gang_of_four(job))
    report = doctor.live("-o", "json", "--admission-dry-run").json()
    # No trial-refused, trial-failed or trial-not-allowed: the server admitted the trial pod.
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]


def test_a_quota_with_room_for_every_rank_lets_the_job_in(doctor: Doctor) -> None:
    job = indexed_job("bert", doctor.now, ranks=2, gpus=1, age=timedelta(minutes=5))
    doctor.load(_gang_of_four(job))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]


def test_a_parallel_job_s_pods_that_do_not_wait_for_each_other_are_judged_one_by_one(
    doctor: Doctor,
) -> None:
    """A plain Job of parallelism 4 whose pods run apart: 2 are let in and run, the Job
    controller creates the others as room frees (FailedCreate meanwhile); the work goes on."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=5))
    del job["spec"]["completionMode"]
    job["spec"]["completions"] = 16
    doctor.load(_gang_of_four(job))
    report = doctor.live("-o", "json").json()
    assert _codes(report) == [("admission.ok", "ok", "measured")]


# -- a job under way: the quota already counts the pods it created --------------------------------


def _under_way(
    job: Obj, pods: list[Obj], hard: str, used: str, notebook_gpus: int = 0
) -> Callable[[datetime], list[Obj]]:
    """The healthy namespace with `job` and the pods its controller created so far (1 GPU
    each), one machine with room for all of it, a notebook holding `notebook_gpus`, and a GPU
    quota whose `used` the quota controller counted from them: every pod not finished
    (pkg/quota/v1/evaluator/core/pods.go QuotaV1Pod)."""

    def build(now: datetime) -> list[Obj]:
        kept = [o for o in healthy(now) if o["kind"] not in ("Job", "Node")]
        objects = [
            *kept,
            scenarios.node("gpu-1", "64", "512Gi", gpus=8),
            scenarios.node("cpu-1", "8", "32Gi"),
            job,
            *pods,
            quota("gpus", {"requests.nvidia.com/gpu": hard}, {"requests.nvidia.com/gpu": used}),
        ]
        if notebook_gpus:
            notebook = scenarios.deployment(
                "notebook",
                [
                    scenarios.container(
                        "nb",
                        f"{scenarios.REGISTRY}/nb:1",
                        extra={"nvidia.com/gpu": str(notebook_gpus)},
                    )
                ],
            )
            objects += [
                notebook,
                scenarios.pod_for(notebook, now, suffix="nb111", node_name="gpu-1"),
            ]
        return objects

    return build


def _half_admitted_pytorch_job(now: datetime) -> tuple[Obj, list[Obj]]:
    """PyTorchJob bert (Master + 3 Workers, 1 GPU each) whose Master-0 and Worker-0 were let in
    and run; Worker-1 and Worker-2 were not created yet."""
    job = pytorch_job("bert", now, workers=3, gpus=1, age=timedelta(minutes=5))
    pods = [
        pytorch_pod(job, "Master", 0, now, node_name="gpu-1"),
        pytorch_pod(job, "Worker", 0, now, node_name="gpu-1"),
    ]
    return job, pods


def test_a_job_under_way_is_charged_only_the_pods_it_has_still_to_create(doctor: Doctor) -> None:
    """Its 2 pods hold 2 of the quota's 4 GPUs, counted in `used`; the operator creates only
    the pods missing (training-operator pkg/controller.v1/common/pod.go ReconcilePods: a pod
    for an index that has none), and the 2 it still creates fit in the 2 GPUs left: each
    create is charged on top of `used` (apiserver admission/plugin/resourcequota/controller.go
    checkQuotas), which already holds the job's own."""
    doctor.server.install(*ALL_GROUPS)
    job, pods = _half_admitted_pytorch_job(doctor.now)
    doctor.load(_under_way(job, pods, hard="4", used="2"))
    result = doctor.live("-o", "json")
    assert _codes(result.json()) == [("admission.ok", "ok", "measured")]
    assert result.exit_code == 0


def test_an_indexed_job_under_way_is_charged_only_its_ranks_still_to_create(
    doctor: Doctor,
) -> None:
    """Ranks 0 and 1 of 4 run and hold 2 of 4 GPUs: the Job controller creates only ranks 2
    and 3 (pkg/controller/job/job_controller.go manageJob: up to `parallelism` active), which
    fit. The job is never told to wait for itself."""
    job = indexed_job("bert", doctor.now, ranks=4, gpus=1, age=timedelta(minutes=5))
    job["status"] = {"active": 2}
    pods = [job_pod(job, doctor.now, suffix=f"r{i}", node_name="gpu-1") for i in range(2)]
    doctor.load(_under_way(job, pods, hard="4", used="2"))
    assert _codes(doctor.live("-o", "json").json()) == [("admission.ok", "ok", "measured")]


def test_a_job_under_way_short_of_room_names_what_else_holds_it_not_itself(
    doctor: Doctor,
) -> None:
    """Its 2 pods and a notebook's 1 GPU hold 3 of 4: of the 2 pods still to create, 1 is let
    in and 1 refused, and the job never assembles. What to free is the notebook's; the job's
    own pods run only with the rest, so they are never what to wait for or stop."""
    doctor.server.install(*ALL_GROUPS)
    job, pods = _half_admitted_pytorch_job(doctor.now)
    doctor.load(_under_way(job, pods, hard="4", used="3", notebook_gpus=1))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-exceeded", "fail", "measured")]
    (found,) = _admission(report)
    assert found["headline"] == (
        "A training job can't start: the usage limit 'gpus' is reached (nvidia.com/gpu: 3 of 4 "
        "in use, the job needs 2 more; only 3 of its 4 programs would be let in, and they run "
        "only all together)."
    )
    assert found["remedy"] == (
        "Wait for or stop what uses it ('notebook-nb111'), or ask your cluster admin to raise "
        "the limit 'gpus'."
    )
    assert found["details"] == [
        "quota gpus: requests.nvidia.com/gpu used 3 + requested 2 > hard 4",
        "held by 'notebook-nb111'",
        "2 of the job's 4 pods were let in and are counted in used: charged the 2 still to create",
        "the job's 4 pods are admitted one by one, each charged as it is let in: 3 let in, "
        "1 refused",
        "refuses the pods of PyTorchJob/bert (Worker)",
    ]
    assert result.exit_code == 2


def test_a_running_pytorch_job_holding_the_quota_is_what_the_next_one_waits_for(
    doctor: Doctor,
) -> None:
    """bert runs whole (Master + 3 Workers, 1 GPU each) and holds 4 of 6 GPUs. As capacity does
    for a job under way with every pod placed, the next run of its shape is judged: it needs 4,
    2 are left, and bert's end frees them. Its pods are a running training job's whatever its
    kind (the operator's `training.kubeflow.org/job-name` label and owner), so this is the
    wait, never a measured refusal naming its pods to stop."""
    doctor.server.install(*ALL_GROUPS)
    job = pytorch_job("bert", doctor.now, workers=3, gpus=1, age=timedelta(minutes=30))
    pods = [pytorch_pod(job, "Master", 0, doctor.now, node_name="gpu-1")]
    pods += [pytorch_pod(job, "Worker", i, doctor.now, node_name="gpu-1") for i in range(3)]
    doctor.load(_under_way(job, pods, hard="6", used="4"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _codes(report) == [("admission.quota-held-by-running-job", "warn", "inferred")]
    (found,) = _admission(report)
    assert found["remedy"] == (
        "Wait for 'bert' to finish, or ask your cluster admin to raise the limit 'gpus'."
    )
    assert found["objects"] == ["ResourceQuota/gpus", "PyTorchJob/bert"]
    assert result.exit_code == 0


def test_a_hook_only_the_master_s_pods_call_is_still_called(doctor: Doctor, tmp_path: Path) -> None:
    """A PyTorchJob whose Master template carries `role: master`, its Workers `role: worker`;
    the webhook selects `role: master` and nothing serves it, with failurePolicy Fail. The
    API server calls a hook per pod created (admission/plugin/webhook/generic `ShouldCallHook`
    on each object), so creating the Master fails: the largest set (the Workers) alone would
    never call it."""
    doctor.round_trip = False  # a planned job: the snapshot holds no job file
    doctor.load("healthy")
    config, slice_ = webhook_behind(ready=False)
    config["webhooks"][0]["objectSelector"] = {"matchLabels": {"role": "master"}}
    doctor.server.add(config, slice_)
    job = pytorch_job("bert", doctor.now, workers=3, gpus=1, age=timedelta(0))
    del job["status"], job["metadata"]["creationTimestamp"]
    specs = job["spec"]["pytorchReplicaSpecs"]
    specs["Master"]["template"]["metadata"] = {"labels": {"role": "master"}}
    specs["Worker"]["template"]["metadata"] = {"labels": {"role": "worker"}}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    report = doctor.live("-o", "json", "--job-file", str(path)).json()
    assert ("admission.webhook-down", "fail", "measured") in _codes(report)
