"""Each training kind read as its controller reads it: pod sets value by value."""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.support.training_kinds import (
    cluster_training_runtime,
    indexed_job,
    jobset,
    leader_worker_set,
    pytorch_job,
    pytorch_pod,
    ray_job,
    train_job,
)
from truegreen.cluster import CantRead, Got, Kind, Listed, ReadFailure
from truegreen.doctor.knowledge.training import (
    INIT_PYTORCH,
    OPTIONAL_KINDS,
    TrainingJob,
    Unshaped,
    from_cron_job,
    from_job,
    from_jobset,
    from_kubeflow,
    from_leader_worker_set,
    from_ray_job,
    from_train_job,
    indexes_text,
    optional_kinds_served,
    parse_indexes,
    pod_set_of,
    pods_of_job_spec,
    training_owner,
    training_work,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _sets(job: TrainingJob) -> list[tuple[str, int]]:
    return [(s.name, s.count) for s in job.pod_sets]


@pytest.mark.parametrize(
    ("spec", "pods"),
    [
        ({}, 1),
        ({"parallelism": 4}, 4),
        ({"parallelism": 4, "completions": 2}, 2),
        ({"parallelism": 2, "completions": 10}, 2),
        ({"parallelism": 0}, 0),
        ({"parallelism": -3}, 0),
        ({"parallelism": True}, 1),
        ({"completions": 0}, 0),
    ],
)
def test_a_job_runs_parallelism_pods_at_most_its_completions(
    spec: dict[str, Any], pods: int
) -> None:
    assert pods_of_job_spec(spec) == pods


def test_an_indexed_job_whose_ranks_all_run_at_once_runs_together() -> None:
    job = from_job(indexed_job("r", NOW, ranks=4, gpus=8, age=timedelta(0)))
    assert (_sets(job), job.together) == ([("worker", 4)], True)
    plain = indexed_job("p", NOW, ranks=4, gpus=8, age=timedelta(0))
    del plain["spec"]["completionMode"]
    assert from_job(plain).together is False
    fewer = indexed_job("f", NOW, ranks=4, gpus=8, age=timedelta(0))
    fewer["spec"]["completions"] = 8
    assert from_job(fewer).together is False, "more indexes than run at once: not one gang"
    one = indexed_job("o", NOW, ranks=1, gpus=8, age=timedelta(0))
    assert from_job(one).together is False


def test_a_job_s_selector_keys_are_what_its_controller_adopts_pods_by() -> None:
    """The Job controller claims every orphan pod its `spec.selector` matches
    (pkg/controller/job/job_controller.go getPodsForJob -> ClaimPods). The API server writes
    `batch.kubernetes.io/controller-uid` into it (pkg/registry/batch/job/strategy.go
    generateSelector); with `manualSelector` it is the user's own. A CronJob's Jobs take
    their jobTemplate's."""
    job = indexed_job("s", NOW, ranks=2, gpus=1, age=timedelta(0))
    assert from_job(job).selector_keys == ()
    job["spec"]["selector"] = {
        "matchLabels": {"batch.kubernetes.io/controller-uid": "u-1", "app": "llama"},
        "matchExpressions": [{"key": "team", "operator": "In", "values": ["nlp"]}],
    }
    assert from_job(job).selector_keys == ("batch.kubernetes.io/controller-uid", "app", "team")
    job["spec"]["selector"]["matchExpressions"] += [
        {"key": "app", "operator": "Exists"},
        {"operator": "Exists"},
    ]
    assert from_job(job).selector_keys == (
        "batch.kubernetes.io/controller-uid",
        "app",
        "team",
    ), "each key once; an expression without a key names none"
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "ml"},
        "spec": {"jobTemplate": {"spec": {**job["spec"], "selector": {"matchLabels": {"a": "b"}}}}},
    }
    assert from_cron_job(cron).selector_keys == ("a",)


def test_a_job_s_state_comes_from_its_conditions_and_spec() -> None:
    job = indexed_job("s", NOW, ranks=1, gpus=1, age=timedelta(0))
    job["spec"]["suspend"] = True
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    job["status"] = {
        "conditions": [
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "late"}
        ]
    }
    shaped = from_job(job)
    assert (shaped.suspended, shaped.finished, shaped.failed, shaped.queue) == (
        True,
        True,
        True,
        "team-a",
    )
    assert shaped.failure == ("DeadlineExceeded", "late")
    job["status"]["conditions"][0]["status"] = "False"
    assert (from_job(job).finished, from_job(job).failure) == (False, ("", ""))
    job["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert from_job(job).managed_by == "kueue.x-k8s.io/multikueue"
    job["spec"]["managedBy"] = "kubernetes.io/job-controller"
    assert from_job(job).managed_by == ""


def test_a_job_s_terminal_target_condition_finishes_it_before_its_pods_have_stopped() -> None:
    """Since 1.31 the Job controller first writes `FailureTarget` or `SuccessCriteriaMet` and
    adds `Failed` or `Complete` only once every pod has stopped (pkg/controller/job/
    job_controller.go newFailureCondition, newSuccessCondition: delayTerminalCondition(),
    JobPodReplacementPolicy on by default): the job's fate is decided at the first."""
    job = indexed_job("t", NOW, ranks=1, gpus=1, age=timedelta(0))
    job["status"] = {
        "failed": 2,
        "terminating": 1,
        "conditions": [
            {
                "type": "FailureTarget",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    }
    shaped = from_job(job)
    assert (shaped.finished, shaped.failed, shaped.failure) == (
        True,
        True,
        ("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
    )
    job["status"]["conditions"].append(
        {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "late"}
    )
    assert from_job(job).failure == ("DeadlineExceeded", "late"), "Failed's own words first"
    job["status"] = {
        "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached"}
        ]
    }
    shaped = from_job(job)
    assert (shaped.finished, shaped.failed, shaped.failure) == (True, False, ("", ""))
    job["status"]["conditions"][0]["status"] = "False"
    assert (from_job(job).finished, from_job(job).failed) == (False, False)


@pytest.mark.parametrize(
    ("text", "completions", "ranges"),
    [
        ("1,3-5,7", 10, ((1, 1), (3, 5), (7, 7))),
        ("0,1", 4, ((0, 1),)),
        ("0-2,3", 8, ((0, 3),)),
        ("2-9", 5, ((2, 4),)),
        ("1,6,2", 5, ((1, 1),)),
        ("x,2,-1,3-y,4", 10, ((2, 2), (4, 4))),
        ("0-" + "9" * 5000, 3, ()),
        ("0-99999999999", 100000, ((0, 99999),)),
        ("", 4, ()),
    ],
    ids=[
        "ranges",
        "two-as-written",
        "adjacent-merged",
        "cut-at-completions",
        "past-completions-ends-the-list",
        "not-numbers-skipped",
        "a-number-atoi-refuses",
        "a-huge-range-kept-as-one",
        "empty",
    ],
)
def test_failed_indexes_read_as_the_job_controller_reads_them(
    text: str, completions: int, ranges: tuple[tuple[int, int], ...]
) -> None:
    """pkg/controller/job/indexed_job_utils.go parseIndexesFromString: a part that is no
    number is skipped, one from `completions` on ends the list, a range is cut at
    `completions - 1`; orderedIntervals.String writes `0,1` for two and `3-5` for more."""
    assert parse_indexes(text, completions) == ranges
    assert indexes_text(parse_indexes("1,3-5,7,8", 10)) == "1,3-5,7,8"


def test_an_indexed_job_s_failed_indexes_are_given_up_on_and_bind_it_to_fail() -> None:
    """calculateFailedIndexes writes `status.failedIndexes` under `backoffLimitPerIndex`;
    firstPendingIndexes never makes those indexes a pod again, and syncJob fails the Job
    (`FailedIndexes`) once each other index has ended, before it looks at a success policy."""
    job = indexed_job("t", NOW, ranks=4, gpus=1, age=timedelta(0))
    job["spec"]["backoffLimitPerIndex"] = 1
    job["status"] = {"failedIndexes": "1-2", "active": 2}

    def pod(index: str) -> dict[str, Any]:
        return {"metadata": {"annotations": {"batch.kubernetes.io/job-completion-index": index}}}

    shaped = from_job(job)
    assert (shaped.failed_indexes, shaped.failing, shaped.failed, shaped.finished) == (
        ((1, 2),),
        True,
        False,
        False,
    )
    gave_up = [shaped.gave_up_on(pod(i)) for i in ("0", "1", "2", "3", "x", "-1")]
    assert gave_up == [False, True, True, False, False, False]
    assert not shaped.gave_up_on({"metadata": {"labels": {"job-name": "t"}}})
    job["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    assert (from_job(job).failed_indexes, from_job(job).failing) == (((1, 2),), False)
    del job["spec"]["successPolicy"]
    job["status"]["conditions"] = [{"type": "FailureTarget", "status": "True"}]
    assert (from_job(job).failed, from_job(job).failing) == (True, False), "failed already"
    del job["spec"]["backoffLimitPerIndex"]
    assert (from_job(job).failed_indexes, from_job(job).failing) == ((), False), (
        "without backoffLimitPerIndex its controller keeps no failed indexes"
    )


def test_a_cron_job_is_the_job_its_next_run_creates() -> None:
    template = indexed_job("x", NOW, ranks=2, gpus=1, age=timedelta(0))
    cron = {
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {"suspend": True, "jobTemplate": {"spec": template["spec"]}},
    }
    job = from_cron_job(cron)
    assert (job.kind, _sets(job), job.together, job.suspended) == (
        Kind.CRON_JOB,
        [("worker", 2)],
        True,
        True,
    )
    assert job.primary.spec["containers"][0]["name"] == "trainer"


def test_a_cron_job_s_queue_is_the_one_its_job_template_names() -> None:
    """Kueue queues the Jobs a CronJob makes, each labelled from its `jobTemplate.metadata`
    (kubernetes pkg/controller/cronjob/utils.go getJobFromTemplate2: `copyLabels(&cj.Spec.
    JobTemplate)`); Kueue's docs put the label there (site/content/en/docs/tasks/run/
    run_cronjobs.md, site/static/examples/jobs/sample-cronjob.yaml). The CronJob's own labels
    are never copied to its Jobs."""
    template = indexed_job("x", NOW, ranks=1, gpus=1, age=timedelta(0))
    cron: dict[str, Any] = {
        "kind": "CronJob",
        "metadata": {"name": "nightly", "labels": {"kueue.x-k8s.io/queue-name": "own"}},
        "spec": {
            "jobTemplate": {
                "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
                "spec": template["spec"],
            }
        },
    }
    assert from_cron_job(cron).queue == "user-queue"
    del cron["spec"]["jobTemplate"]["metadata"]
    assert from_cron_job(cron).queue == "", "a label on the CronJob itself reaches no Job"


def test_a_jobset_is_its_replicated_jobs_and_skips_those_that_run_before() -> None:
    obj = jobset("j", NOW, workers=3, gpus=2, age=timedelta(0))
    assert _sets(from_jobset(obj)) == [("driver", 1), ("workers", 3)]
    obj["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"] = 2
    obj["spec"]["replicatedJobs"][1]["template"]["spec"]["completions"] = 2
    assert _sets(from_jobset(obj)) == [("driver", 1), ("workers", 6)]
    # The driver waits for the workers to be ready: both run together.
    obj["spec"]["replicatedJobs"][0]["dependsOn"] = [{"name": "workers", "status": "Ready"}]
    assert _sets(from_jobset(obj)) == [("driver", 1), ("workers", 6)]
    # The workers wait for the driver to complete: it has finished before they start.
    obj["spec"]["replicatedJobs"][0].pop("dependsOn")
    obj["spec"]["replicatedJobs"][1]["dependsOn"] = [{"name": "driver", "status": "Complete"}]
    assert _sets(from_jobset(obj)) == [("workers", 6)]


def test_a_trainjob_runs_its_runtime_s_trainer_step_with_its_own_nodes() -> None:
    runtime = Got(cluster_training_runtime())
    job = from_train_job(train_job("t", NOW, nodes=3, gpus=4, age=timedelta(0)), runtime)
    assert isinstance(job, TrainingJob)
    assert _sets(job) == [("node", 3)]
    node = job.primary.spec["containers"][0]
    assert node["resources"]["requests"]["nvidia.com/gpu"] == "4"
    assert node["image"] == "registry.example.com/trainer:2.1"
    without = train_job("t", NOW, nodes=3, gpus=4, age=timedelta(0))
    del without["spec"]["trainer"]["numNodes"]
    shaped = from_train_job(without, runtime)
    assert isinstance(shaped, TrainingJob)
    assert _sets(shaped) == [("node", 1)], "the runtime's mlPolicy.numNodes"


def test_an_mpi_runtime_s_nodes_are_the_job_named_node() -> None:
    """The deepspeed-distributed runtime (kubeflow/trainer manifests/base/runtimes/
    deepspeed_distributed.yaml): `node` workers and a `launcher` that runs as a node."""
    runtime = cluster_training_runtime()
    runtime["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {"runLauncherAsNode": True}}
    node_job = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
    node_job["template"]["metadata"] = {}
    launcher = {
        "name": "launcher",
        "dependsOn": [{"name": "node", "status": "Ready"}],
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"containers": [{"name": "node"}]}}},
        },
    }
    runtime["spec"]["template"]["spec"]["replicatedJobs"].append(launcher)
    job = from_train_job(train_job("t", NOW, nodes=4, gpus=1, age=timedelta(0)), Got(runtime))
    assert isinstance(job, TrainingJob)
    assert _sets(job) == [("node", 3), ("launcher", 1)]
    runtime["spec"]["mlPolicy"]["mpi"] = {"runLauncherAsNode": False}
    job = from_train_job(train_job("t", NOW, nodes=4, gpus=1, age=timedelta(0)), Got(runtime))
    assert isinstance(job, TrainingJob)
    assert _sets(job) == [("node", 4), ("launcher", 1)]


def test_a_trainjob_whose_runtime_is_missing_or_unread_is_unshaped() -> None:
    obj = train_job("t", NOW, nodes=3, gpus=4, age=timedelta(0))
    missing = from_train_job(obj, CantRead(ReadFailure.NOT_FOUND, "not found"))
    assert isinstance(missing, Unshaped)
    assert (missing.why, missing.cant) == (
        "its cluster training runtime 'torch-distributed' doesn't exist",
        None,
    )
    unread = CantRead(ReadFailure.FORBIDDEN, "forbidden")
    forbidden = from_train_job(obj, unread)
    assert isinstance(forbidden, Unshaped)
    assert forbidden.cant is unread
    obj["spec"]["runtimeRef"] = {"name": "local", "kind": "TrainingRuntime"}
    local = from_train_job(obj, CantRead(ReadFailure.NOT_FOUND, "not found"))
    assert isinstance(local, Unshaped)
    assert local.why == "its training runtime 'local' doesn't exist"


def test_kubeflow_jobs_are_their_replica_types() -> None:
    obj = pytorch_job("p", NOW, workers=3, gpus=1, age=timedelta(0))
    job = from_kubeflow(Kind.PYTORCH_JOB, obj)
    assert (_sets(job), job.together) == ([("Master", 1), ("Worker", 3)], True)
    del obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"]
    assert _sets(from_kubeflow(Kind.PYTORCH_JOB, obj)) == [("Master", 1), ("Worker", 1)]
    obj["spec"]["runPolicy"] = {"suspend": True}
    assert from_kubeflow(Kind.PYTORCH_JOB, obj).suspended is True
    mpi = {"spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1}, "Worker": {"replicas": 2}}}}
    assert _sets(from_kubeflow(Kind.MPI_JOB, {"metadata": {"name": "m"}, **mpi})) == [
        ("Launcher", 1),
        ("Worker", 2),
    ]


def _added(job: TrainingJob) -> list[tuple[str, list[str]]]:
    return [(s.name, [str(c["name"]) for c in s.added]) for s in job.pod_sets]


def test_the_operator_adds_its_init_container_to_a_pytorch_job_s_workers() -> None:
    """kubeflow/training-operator pkg/controller.v1/pytorch/initcontainer.go setInitContainer:
    the Workers of a job with a Master, whatever the case the types are written in."""
    obj = pytorch_job("p", NOW, workers=2, gpus=1, age=timedelta(0))
    job = from_kubeflow(Kind.PYTORCH_JOB, obj)
    assert _added(job) == [("Master", []), ("Worker", ["init-pytorch"])]
    specs = obj["spec"]["pytorchReplicaSpecs"]
    specs["master"], specs["worker"] = specs.pop("Master"), specs.pop("Worker")
    assert _added(from_kubeflow(Kind.PYTORCH_JOB, obj)) == [
        ("master", []),
        ("worker", ["init-pytorch"]),
    ]
    del specs["master"]
    assert _added(from_kubeflow(Kind.PYTORCH_JOB, obj)) == [("worker", [])]


def test_other_kubeflow_kinds_get_no_init_container() -> None:
    tf = {"spec": {"tfReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": 2}}}}
    job = from_kubeflow(Kind.TF_JOB, {"metadata": {"name": "t"}, **tf})
    assert _added(job) == [("Master", []), ("Worker", [])]


def test_the_created_pod_has_the_added_init_container_after_the_template_s_own() -> None:
    obj = pytorch_job("p", NOW, workers=1, gpus=1, age=timedelta(0))
    worker = obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    worker["initContainers"] = [{"name": "fetch", "image": "busybox"}]
    (master, workers) = from_kubeflow(Kind.PYTORCH_JOB, obj).pod_sets
    assert [c["name"] for c in workers.created_spec["initContainers"]] == ["fetch", "init-pytorch"]
    assert workers.spec["initContainers"] == [{"name": "fetch", "image": "busybox"}]
    assert master.created_spec is master.spec
    assert "securityContext" not in INIT_PYTORCH
    assert INIT_PYTORCH["resources"] == {
        "limits": {"cpu": "100m", "memory": "20Mi"},
        "requests": {"cpu": "50m", "memory": "10Mi"},
    }


@pytest.mark.parametrize(
    ("kind", "field", "roles", "sets"),
    [
        (Kind.MPI_JOB, "mpiReplicaSpecs", ("Launcher", "Worker"), [("Launcher", 1), ("Worker", 0)]),
        (
            Kind.MPI_JOB_V1,
            "mpiReplicaSpecs",
            ("Launcher", "Worker"),
            [("Launcher", 1), ("Worker", 0)],
        ),
        (
            Kind.PYTORCH_JOB,
            "pytorchReplicaSpecs",
            ("Master", "Worker"),
            [("Master", 1), ("Worker", 1)],
        ),
        (Kind.TF_JOB, "tfReplicaSpecs", ("PS", "Worker"), [("PS", 1), ("Worker", 1)]),
        (
            Kind.XGBOOST_JOB,
            "xgbReplicaSpecs",
            ("Master", "Worker"),
            [("Master", 1), ("Worker", 1)],
        ),
        (
            Kind.PADDLE_JOB,
            "paddleReplicaSpecs",
            ("Master", "Worker"),
            [("Master", 1), ("Worker", 1)],
        ),
        (Kind.JAX_JOB, "jaxReplicaSpecs", ("Worker",), [("Worker", 1)]),
    ],
)
def test_a_kubeflow_replica_type_without_replicas_runs_its_kind_s_default(
    kind: Kind, field: str, roles: tuple[str, ...], sets: list[tuple[str, int]]
) -> None:
    """An MPIJob's Worker defaults to 0 replicas and its Launcher to 1 (mpi-operator
    pkg/apis/kubeflow/v2beta1/default.go setDefaultsTypeWorker, setDefaultsTypeLauncher;
    training-operator release-1.9 pkg/apis/kubeflow.org/v1/mpi_defaults.go SetDefaults_MPIJob);
    every replica type of the other kinds to 1 (pytorch_defaults.go, tensorflow_defaults.go,
    xgboost_defaults.go, paddlepaddle_defaults.go, jax_defaults.go: setDefaultReplicas(spec, 1))."""
    obj = {"metadata": {"name": "j"}, "spec": {field: {role: {"template": {}} for role in roles}}}
    assert _sets(from_kubeflow(kind, obj)) == sets


def test_a_ray_job_is_its_head_and_worker_groups_by_hosts() -> None:
    obj = ray_job("r", NOW, workers=2, gpus=1, age=timedelta(0))
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["numOfHosts"] = 4
    job = from_ray_job(obj)
    assert _sets(job) == [("headgroup", 1), ("gpu-group", 8)]
    assert job.cluster_name == "r-raycluster-x7k2p"
    obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["suspend"] = True
    assert _sets(from_ray_job(obj)) == [("headgroup", 1)]
    obj["status"] = {"jobDeploymentStatus": "Failed", "reason": "AppFailed", "message": "boom"}
    failed = from_ray_job(obj)
    assert (failed.finished, failed.failed, failed.failure) == (True, True, ("AppFailed", "boom"))


@pytest.mark.parametrize(
    ("group", "pods"),
    [
        ({"replicas": 0, "minReplicas": 4, "maxReplicas": 4}, 4),
        ({"replicas": 10, "minReplicas": 1, "maxReplicas": 2}, 2),
        ({"replicas": 3, "minReplicas": 1, "maxReplicas": 8}, 3),
        ({"minReplicas": 2, "maxReplicas": 8}, 2),
        ({"replicas": 5}, 5),
        ({}, 0),
        ({"replicas": 3, "minReplicas": 4, "maxReplicas": 2}, 4),
        ({"replicas": 5, "minReplicas": 4, "maxReplicas": 2}, 2),
        ({"replicas": 1, "minReplicas": 2, "maxReplicas": 3, "numOfHosts": 4}, 8),
        ({"replicas": 9, "minReplicas": 2, "maxReplicas": 3, "numOfHosts": 4}, 12),
        ({"replicas": 1, "minReplicas": 2, "maxReplicas": 3, "suspend": True}, None),
    ],
)
def test_a_ray_worker_group_runs_its_replicas_held_between_min_and_max(
    group: dict[str, Any], pods: int | None
) -> None:
    """kuberay ray-operator/controllers/ray/utils/util.go GetWorkerGroupDesiredReplicas, which
    reconcilePods creates: a suspended group none; absent or below `minReplicas` (default 0)
    that; above `maxReplicas` (default MaxInt32) that (min first, so min > max reads as
    kuberay does); times `numOfHosts` (default 1)."""
    obj = ray_job("r", NOW, workers=1, gpus=1, age=timedelta(0))
    spec = obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    for key in ("replicas", "minReplicas", "maxReplicas"):
        del spec[key]
    spec.update(group)
    expected = [("headgroup", 1)] + ([] if pods is None else [("gpu-group", pods)])
    assert _sets(from_ray_job(obj)) == expected


def test_a_ray_job_on_an_existing_cluster_asks_for_no_pods_and_is_not_empty() -> None:
    """`spec.clusterSelector` names a RayCluster the job runs on: kuberay takes its name from
    the selector's `ray.io/cluster` (rayjob_controller.go initRayJobStatusIfNeed), creates no
    cluster and ignores any rayClusterSpec (getOrCreateRayClusterInstance)."""
    obj = ray_job("r", NOW, workers=2, gpus=1, age=timedelta(0))
    obj["spec"]["clusterSelector"] = {"ray.io/cluster": "shared"}
    del obj["status"]
    job = from_ray_job(obj)
    assert (_sets(job), job.on_existing_cluster, job.empty) == ([], True, False)
    assert job.cluster_name == "shared"
    del obj["spec"]["rayClusterSpec"]
    obj["status"] = {"rayClusterName": "shared", "jobDeploymentStatus": "Running"}
    job = from_ray_job(obj)
    assert (_sets(job), job.on_existing_cluster, job.empty, job.cluster_name) == (
        [],
        True,
        False,
        "shared",
    )
    obj["spec"]["clusterSelector"] = {}
    job = from_ray_job(obj)
    assert (job.on_existing_cluster, job.empty) == (False, True)


def test_a_ray_job_kuberay_refused_has_failed_and_was_refused() -> None:
    """rayjob_controller.go Reconcile: when validateRayJob fails, kuberay sets
    jobDeploymentStatus ValidationFailed, reason ValidationFailed and the error as message,
    and returns: no RayCluster is created and no later state follows (apis/ray/v1/
    rayjob_types.go JobDeploymentStatusValidationFailed)."""
    obj = ray_job("r", NOW, workers=2, gpus=1, age=timedelta(0))
    message = (
        "train/r: The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode"
    )
    obj["status"] = {
        "jobDeploymentStatus": "ValidationFailed",
        "reason": "ValidationFailed",
        "message": message,
    }
    job = from_ray_job(obj)
    assert (job.finished, job.failed, job.refused, job.failure) == (
        True,
        True,
        True,
        ("ValidationFailed", message),
    )
    obj["status"]["jobDeploymentStatus"] = "Failed"
    obj["status"]["reason"] = "AppFailed"
    assert (from_ray_job(obj).failed, from_ray_job(obj).refused) == (True, False)


@pytest.mark.parametrize(
    ("deployment", "ray_job_status", "failed", "finished"),
    [
        ("Complete", "FAILED", True, True),
        ("Running", "FAILED", True, True),
        ("Retrying", "FAILED", False, False),
        ("Complete", "STOPPED", False, True),
        ("Complete", "SUCCEEDED", False, True),
    ],
    ids=["v1.0-complete", "v1.0-cluster-kept", "retrying", "stopped", "succeeded"],
)
def test_a_ray_job_whose_ray_job_failed_has_failed_whatever_its_deployment_says(
    deployment: str, ray_job_status: str, failed: bool, finished: bool
) -> None:
    """KubeRay v1.0.0 ends a failed Ray job at `Complete` once its cluster is gone, and leaves
    it at `Running` while it keeps the cluster (rayjob_controller.go Reconcile,
    `isJobSucceedOrFailed`); v1.2.0 on, `Retrying` still shows the failed try's `FAILED`
    (checkBackoffLimitAndUpdateStatusIfNeeded). `STOPPED` is a person's stop."""
    obj = ray_job("r", NOW, workers=1, gpus=1, age=timedelta(0))
    obj["status"] = {
        "jobDeploymentStatus": deployment,
        "jobStatus": ray_job_status,
        "message": "Job entrypoint command failed with exit code 1",
    }
    job = from_ray_job(obj)
    assert (job.failed, job.finished, job.refused) == (failed, finished, False)
    assert job.failure == (
        ("jobStatus FAILED", "Job entrypoint command failed with exit code 1")
        if failed
        else ("", "")
    )


def test_a_leader_worker_set_is_leaders_and_workers_per_group() -> None:
    obj = leader_worker_set("l", NOW, size=4, gpus=8, age=timedelta(0))
    obj["spec"]["replicas"] = 2
    assert _sets(from_leader_worker_set(obj)) == [("leader", 2), ("worker", 6)]
    obj["spec"]["leaderWorkerTemplate"]["size"] = 1
    assert _sets(from_leader_worker_set(obj)) == [("leader", 2)]


def test_discovery_decides_which_optional_kinds_are_listed() -> None:
    groups = {
        "groups": [
            {"name": "kubeflow.org", "versions": [{"version": "v1"}, {"version": "v2beta1"}]},
            {"name": "ray.io", "versions": [{"version": "v1alpha1"}]},
            {"name": "jobset.x-k8s.io", "versions": [{"version": "v1alpha2"}]},
        ]
    }
    served = optional_kinds_served(groups)
    assert served == [
        Kind.JOB_SET,
        Kind.PYTORCH_JOB,
        Kind.TF_JOB,
        Kind.MPI_JOB,
        Kind.XGBOOST_JOB,
        Kind.PADDLE_JOB,
        Kind.JAX_JOB,
    ], "ray.io at v1alpha1 only is not read; of two MPIJob versions, v2beta1"
    assert optional_kinds_served({}) == []
    assert set(served) <= set(OPTIONAL_KINDS)


def test_pods_belong_to_their_job_by_controller_or_label() -> None:
    pytorch = pytorch_job("p", NOW, workers=1, gpus=1, age=timedelta(0))
    lists = {Kind.PYTORCH_JOB: Listed((pytorch,)), Kind.JOB: Listed(())}
    work = training_work(lists, {})
    pod = pytorch_pod(pytorch, "Worker", 0, NOW, node_name="gpu-1")
    assert work.job_of(pod) is work.jobs[0]
    assert pod_set_of(work.jobs[0], pod) == "Worker"
    assert training_owner(pod) == "p"
    stranger = {"metadata": {"name": "x", "labels": {"app": "web"}}}
    assert (work.job_of(stranger), training_owner(stranger)) == (None, None)
    by_job = {"metadata": {"name": "y", "ownerReferences": [{"kind": "Job", "name": "run-7"}]}}
    assert training_owner(by_job) == "run-7"


def test_an_object_another_training_kind_made_is_read_through_it() -> None:
    """A TrainJob's JobSet and a JobSet's Jobs are the TrainJob's and the JobSet's work."""
    own = {"kind": "Job", "metadata": {"name": "solo"}, "spec": {}}
    child = {
        "kind": "Job",
        "metadata": {
            "name": "sft-workers-0",
            "ownerReferences": [{"kind": "JobSet", "name": "sft"}],
        },
        "spec": {},
    }
    cron = {
        "kind": "Job",
        "metadata": {"name": "nightly-1", "ownerReferences": [{"kind": "CronJob", "name": "n"}]},
        "spec": {},
    }
    work = training_work({Kind.JOB: Listed((own, child, cron))}, {})
    assert [j.name for j in work.jobs] == ["solo", "nightly-1"]


def test_the_judged_job_is_the_newest_and_an_unread_list_is_kept() -> None:
    older = indexed_job("old", NOW, ranks=1, gpus=1, age=timedelta(hours=2))
    newer = indexed_job("new", NOW, ranks=1, gpus=1, age=timedelta(minutes=1))
    forbidden = CantRead(ReadFailure.FORBIDDEN, "forbidden")
    absent = CantRead(ReadFailure.NOT_FOUND, "not found")
    work = training_work(
        {Kind.JOB: Listed((older, newer)), Kind.RAY_JOB: forbidden, Kind.CRON_JOB: absent}, {}
    )
    assert work.judged is not None
    assert work.judged.name == "new"
    assert work.unread == ((Kind.RAY_JOB, forbidden),), "a 404 list is absent, not unread"
    job_absent = training_work({Kind.JOB: absent}, {})
    assert job_absent.unread == ((Kind.JOB, absent),), "Jobs are always served"
