"""Where each kind keeps its pod templates, and what its controller adds (lint/kinds.py).

Shapes follow the projects' own API types: JobSet api/jobset/v1alpha2, LeaderWorkerSet
api/leaderworkerset/v1, KubeRay ray-operator/apis/ray/v1, Kubeflow training-operator
pkg/apis/kubeflow.org/v1, Kubeflow Trainer trainer.kubeflow.org/v1alpha1, Argo Rollouts
argoproj.io/v1alpha1, Knative serving.knative.dev/v1, AppWrapper workload.codeflare.dev/v1beta2.
"""

from typing import Any

import pytest

from truegreen.lint.kinds import PodTemplate, Work, group_of, understand
from truegreen.lint.probes import ProbeKind, workload_models
from truegreen.lint.rules import Context, evaluate

Obj = dict[str, Any]


def pod(*names: str, **fields: Any) -> Obj:
    return {"spec": {"containers": [{"name": n, "image": "x"} for n in names], **fields}}


def templates(obj: Obj) -> tuple[PodTemplate, ...]:
    understood = understand(obj)
    assert understood is not None, f"precondition: {obj.get('kind')} is understood"
    return understood.templates


def shape(obj: Obj) -> list[tuple[str, Work, str, dict[str, str]]]:
    return [(t.role, t.work, t.by_kind, dict(t.labels)) for t in templates(obj)]


@pytest.mark.parametrize(
    ("api_version", "group"),
    [("v1", ""), ("apps/v1", "apps"), ("ray.io/v1", "ray.io"), (None, ""), (7, "")],
)
def test_the_group_of_an_api_version(api_version: object, group: str) -> None:
    assert group_of({"apiVersion": api_version}) == group


@pytest.mark.parametrize(
    ("api_version", "kind", "work"),
    [
        ("apps/v1", "Deployment", Work.ROLLED_OUT),
        ("apps/v1", "StatefulSet", Work.ROLLED_OUT),
        ("apps/v1", "DaemonSet", Work.ROLLED_OUT),
        ("apps/v1", "ReplicaSet", Work.LONG_RUNNING),
        ("v1", "ReplicationController", Work.LONG_RUNNING),
        ("apps.openshift.io/v1", "DeploymentConfig", Work.ROLLED_OUT),
        ("argoproj.io/v1alpha1", "Rollout", Work.ROLLED_OUT),
        ("batch/v1", "Job", Work.BATCH),
    ],
)
def test_kinds_with_one_template_under_spec(api_version: str, kind: str, work: Work) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "spec": {"template": pod("a")}}
    (template,) = templates(obj)
    assert template.work is work
    assert template.by_kind == ("a Job" if kind == "Job" else "")


def test_a_cron_job_s_template_is_under_its_job_template() -> None:
    obj: Obj = {"apiVersion": "batch/v1", "kind": "CronJob"}
    obj["spec"] = {"jobTemplate": {"spec": {"template": pod("a")}}}
    assert shape(obj) == [("", Work.BATCH, "a CronJob", {})]


@pytest.mark.parametrize(("policy", "work"), [("Never", Work.BATCH), ("Always", Work.LONG_RUNNING)])
def test_a_bare_pod_is_its_own_template(policy: str, work: Work) -> None:
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"a": "b"}}}
    obj["spec"] = {"restartPolicy": policy, "containers": []}
    (template,) = templates(obj)
    assert (template.work, dict(template.metadata)) == (work, {"labels": {"a": "b"}})


def test_a_rollout_with_a_workload_ref_has_no_template_of_its_own() -> None:
    obj: Obj = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "spec": {}}
    obj["spec"]["workloadRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
    assert templates(obj) == ()


def test_a_jobset_has_one_template_per_replicated_job_labelled_as_its_controller_does() -> None:
    obj: Obj = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"}
    obj["metadata"] = {"name": "train"}
    obj["spec"] = {
        "replicatedJobs": [
            {"name": "driver", "template": {"spec": {"template": pod("d")}}},
            {"name": "workers", "template": {"spec": {"template": pod("w")}}},
        ]
    }
    assert shape(obj) == [
        (
            role,
            Work.BATCH,
            "a JobSet",
            {
                "jobset.sigs.k8s.io/jobset-name": "train",
                "jobset.sigs.k8s.io/replicatedjob-name": role,
            },
        )
        for role in ("driver", "workers")
    ]


@pytest.mark.parametrize(
    ("kind", "key", "port"),
    [
        ("PyTorchJob", "pytorchReplicaSpecs", ("pytorch", "pytorchjob-port", 23456)),
        ("TFJob", "tfReplicaSpecs", ("tensorflow", "tfjob-port", 2222)),
        ("MPIJob", "mpiReplicaSpecs", None),
        ("PaddleJob", "paddleReplicaSpecs", ("paddle", "master", 36543)),
        ("XGBoostJob", "xgbReplicaSpecs", ("xgboost", "xgboostjob-port", 9999)),
        ("JAXJob", "jaxReplicaSpecs", ("jax", "jaxjob-port", 6666)),
    ],
)
def test_kubeflow_jobs_have_a_template_per_replica_type(
    kind: str, key: str, port: tuple[str, str, int] | None
) -> None:
    obj: Obj = {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "j"}}
    obj["spec"] = {key: {"Master": {"template": pod("a")}, "Worker": {"template": pod("a")}}}
    found = templates(obj)
    assert [(t.role, t.work, t.by_kind) for t in found] == [
        ("Master", Work.BATCH, f"a {kind}"),
        ("Worker", Work.BATCH, f"a {kind}"),
    ]
    assert dict(found[1].labels) == {
        "training.kubeflow.org/job-name": "j",
        "training.kubeflow.org/replica-type": "worker",
    }
    assert found[0].ports_by_controller == ((port,) if port else ())


def test_the_training_operator_s_default_port_is_declared_unless_the_name_is() -> None:
    obj: Obj = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}
    probe = {"tcpSocket": {"port": 23456}}
    worker = {"name": "pytorch", "livenessProbe": probe}
    custom = {"name": "pytorch", "ports": [{"name": "pytorchjob-port", "containerPort": 29500}]}
    obj["spec"] = {
        "pytorchReplicaSpecs": {
            "Worker": {"template": {"spec": {"containers": [worker]}}},
            "Master": {"template": {"spec": {"containers": [custom]}}},
        }
    }
    models = workload_models(obj)
    assert models is not None
    ports = {m.role: [(p.number, p.name) for p in m.containers[0].ports] for m in models}
    assert ports == {
        "Worker": [(23456, "pytorchjob-port")],
        "Master": [(29500, "pytorchjob-port")],
    }


def test_a_training_runtime_s_nodes_are_its_jobset_template_s() -> None:
    for kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
        obj: Obj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind}
        jobs = [{"name": "node", "template": {"spec": {"template": pod("node")}}}]
        obj["spec"] = {"template": {"spec": {"replicatedJobs": jobs}}}
        assert shape(obj) == [("node", Work.BATCH, f"a {kind}", {})]
    assert templates({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}) == ()


def _ray(kind: str) -> Obj:
    cluster = {
        "headGroupSpec": {"template": pod("ray-head", "sidecar")},
        "workerGroupSpecs": [{"groupName": "gpu", "template": pod("ray-worker")}],
    }
    spec = {
        "RayCluster": cluster,
        "RayJob": {"rayClusterSpec": cluster, "submitterPodTemplate": pod("submit")},
        "RayService": {"rayClusterConfig": cluster},
    }[kind]
    return {"apiVersion": "ray.io/v1", "kind": kind, "metadata": {"name": "r"}, "spec": spec}


def test_kuberay_probes_the_first_container_of_every_group() -> None:
    head, worker = templates(_ray("RayCluster"))
    assert (head.role, head.ready_by_controller, head.restarted_by_controller) == (
        "head",
        ("ray-head",),
        ("ray-head",),
    )
    assert (worker.role, worker.ready_by_controller) == ("worker group gpu", ("ray-worker",))
    assert dict(head.labels) == {"ray.io/node-type": "head", "ray.io/group": "headgroup"} | {
        "ray.io/cluster": "r"
    }
    assert head.controller == "KubeRay"


@pytest.mark.parametrize("kind", ["RayCluster", "RayJob", "RayService"])
def test_kuberay_declares_the_metrics_port_on_the_ray_container_unless_the_name_is(
    kind: str,
) -> None:
    """ray-operator/controllers/ray/common/pod.go DefaultHeadPodTemplate and
    DefaultWorkerPodTemplate: "If the metrics port does not exist in the Ray container, add a
    default one" (`metrics`, 8080), looked up by name (utils.FindContainerPort)."""
    obj = _ray(kind)
    key = {"RayCluster": "", "RayJob": "rayClusterSpec", "RayService": "rayClusterConfig"}[kind]
    cluster = obj["spec"][key] if key else obj["spec"]
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    head["ports"] = [{"name": "metrics", "containerPort": 9090}]
    head["readinessProbe"] = {"httpGet": {"path": "/metrics", "port": "metrics"}}
    worker = cluster["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    worker["readinessProbe"] = {"httpGet": {"path": "/metrics", "port": "metrics"}}
    worker["livenessProbe"] = {"tcpSocket": {"port": 8080}}
    models = workload_models(obj)
    assert models is not None
    ports = {m.role: [[(p.number, p.name) for p in c.ports] for c in m.containers] for m in models}
    assert ports["head"] == [[(9090, "metrics")], []]  # the sidecar is no Ray container
    assert ports["worker group gpu"] == [[(8080, "metrics")]]
    findings = [(rule.id, hit.container) for m in models for rule, hit in evaluate(m, Context({}))]
    assert not [f for f in findings if f[0].startswith("probe-port")], findings


def test_a_ray_job_is_batch_work_with_a_submitter() -> None:
    assert [(t.role, t.work, t.by_kind) for t in templates(_ray("RayJob"))] == [
        ("head", Work.BATCH, "a RayJob"),
        ("worker group gpu", Work.BATCH, "a RayJob"),
        ("submitter", Work.BATCH, "a RayJob"),
    ]
    assert "ray.io/cluster" not in templates(_ray("RayJob"))[0].labels  # its name is generated
    assert [t.work for t in templates(_ray("RayService"))] == 2 * [Work.LONG_RUNNING]


def test_a_ray_container_without_readiness_is_still_gated() -> None:
    models = workload_models(_ray("RayCluster"))
    assert models is not None
    head = models[0]
    assert [(c.name, c.gated_until_ready) for c in head.containers] == [
        ("ray-head", True),
        ("sidecar", False),
    ]
    assert head.containers[0].probe(ProbeKind.READINESS) is None, "precondition: none declared"


def test_a_leader_worker_set_has_a_leader_and_workers_labelled_with_its_name() -> None:
    obj: Obj = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"}
    obj["metadata"] = {"name": "vllm"}
    obj["spec"] = {"leaderWorkerTemplate": {"leaderTemplate": pod("l"), "workerTemplate": pod("w")}}
    name = {"leaderworkerset.sigs.k8s.io/name": "vllm"}
    assert shape(obj) == [
        ("leader", Work.ROLLED_OUT, "", name),
        ("worker", Work.ROLLED_OUT, "", name),
    ]
    del obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert shape(obj) == [("", Work.ROLLED_OUT, "", name)]  # the leader runs the worker template


@pytest.mark.parametrize(
    ("containers", "ready", "ports"),
    [
        ([{"image": "x"}], ("user-container",), (("user-container", "user-port", 8080),)),
        ([{"name": "app"}, {"name": "log"}], (), ()),
        ([{"name": "app", "ports": [{"containerPort": 8000}]}, {"name": "log"}], ("app",), ()),
    ],
)
def test_knative_probes_serves_and_routes_to_its_serving_container(
    containers: list[Obj], ready: tuple[str, ...], ports: tuple[tuple[str, str, int], ...]
) -> None:
    """The serving container (the only one, or the one with ports) gets Knative's readiness
    probe, its `user-port` (8080 when it lists none) and all the traffic: deploy.go
    BuildUserContainers, makeServingContainer."""
    obj: Obj = {"apiVersion": "serving.knative.dev/v1", "kind": "Service"}
    obj["metadata"] = {"name": "hello"}
    obj["spec"] = {"template": {"spec": {"containers": containers}}}
    (template,) = templates(obj)
    assert (template.ready_by_controller, template.controller) == (ready, "Knative")
    assert (template.ports_by_controller, template.routed_by_controller) == (ports, ready)
    assert dict(template.labels) == {"serving.knative.dev/service": "hello"}


def test_a_knative_gpu_server_is_no_training_work_unless_it_runs_a_launcher() -> None:
    gpu = {"resources": {"limits": {"nvidia.com/gpu": 1}}}
    obj: Obj = {"apiVersion": "serving.knative.dev/v1", "kind": "Service"}
    obj["spec"] = {"template": {"spec": {"containers": [{"image": "x", **gpu}]}}}
    (model,) = workload_models(obj) or ()
    (server,) = model.containers
    assert (server.training, server.resolve("user-port")) == (None, 8080)
    obj["spec"]["template"]["spec"]["containers"][0]["command"] = ["torchrun", "t.py"]
    (model,) = workload_models(obj) or ()
    assert model.containers[0].training == "its command runs torchrun"


def test_an_app_wrapper_is_understood_through_its_components() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": pod("a")}}
    obj: Obj = {"apiVersion": "workload.codeflare.dev/v1beta2", "kind": "AppWrapper"}
    obj["spec"] = {"components": [{"template": job}]}
    assert shape(obj) == [("component 1 (Job)", Work.BATCH, "a Job", {})]
    obj["spec"]["components"].append({"template": {"apiVersion": "x.io/v1", "kind": "Thing"}})
    assert understand(obj) is None  # a component lint cannot read: the whole is not understood


@pytest.mark.parametrize(
    ("api_version", "kind", "understood"),
    [
        ("v1", "ConfigMap", True),
        ("v1", "Service", True),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition", True),
        ("monitoring.coreos.com/v1", "ServiceMonitor", True),
        ("kueue.x-k8s.io/v1beta1", "ClusterQueue", True),
        ("apps/v1", "Deploymnet", False),  # a typo in a built-in group is not passed over
        ("monitoring.coreos.com/v1", "Prometheus", False),  # its operator builds the pods
        ("argoproj.io/v1alpha1", "AnalysisTemplate", False),
        ("example.com/v1", "Widget", False),
    ],
)
def test_kinds_without_pods_are_understood_and_others_are_not(
    api_version: str, kind: str, understood: bool
) -> None:
    result = understand({"apiVersion": api_version, "kind": kind})
    assert (result is not None) is understood
    if result is not None:
        assert result.templates == ()


def test_a_live_object_without_an_api_version_is_matched_among_kubernetes_kinds() -> None:
    """doctor's objects may reach the model unstamped: their kind alone finds the built-in."""
    assert shape({"kind": "Deployment", "spec": {"template": pod("a")}}) == [
        ("", Work.ROLLED_OUT, "", {})
    ]
    assert understand({"kind": "RayCluster"}) is None


def test_a_way_to_the_pod_spec_that_is_no_object_gives_one_empty_template() -> None:
    """The first field on the way that holds no object is named, with its value, once; the
    deeper ones are not looked at. A well-formed template names none."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": 5}}
    (only,) = templates(deployment)
    assert (only.spec, only.metadata, only.work) == ({}, {}, Work.ROLLED_OUT)
    assert only.not_objects == (("spec.template", 5),)
    job = {"apiVersion": "batch/v1", "kind": "Job", "spec": "x"}
    (only,) = templates(job)
    assert (only.work, only.not_objects) == (Work.BATCH, (("spec", "x"),))
    bare = {"apiVersion": "v1", "kind": "Pod", "spec": [1]}
    (only,) = templates(bare)
    assert (only.work, only.not_objects) == (Work.LONG_RUNNING, (("spec", [1]),))
    sets = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"template": {"spec": 2}}}
    (only,) = templates(sets)
    assert (only.work, only.not_objects) == (Work.LONG_RUNNING, (("spec.template.spec", 2),))
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"jobTemplate": {"spec": 3}}}
    (only,) = templates(cron)
    assert (only.work, only.not_objects) == (Work.BATCH, (("spec.jobTemplate.spec", 3),))
    fine = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"template": pod("web")}}
    (only,) = templates(fine)
    assert only.not_objects == ()
    assert only.spec == pod("web")["spec"]
