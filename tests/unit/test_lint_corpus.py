"""`truegreen lint` on manifests nobody wrote for truegreen: the shapes real projects ship.

Each file under tests/lint_corpus/ follows a real project's manifest (named in its first
comment) and is linted on its own, through the command line, with every finding it must give:
rule, severity, object, pod template and container. Nothing else may be reported.
"""

from pathlib import Path

import pytest

from tests.support.cli import run_cli

CORPUS = Path(__file__).resolve().parents[1] / "lint_corpus"

E, W, INFO = "error", "warning", "info"

EXPECTED: dict[str, tuple[int, list[tuple[str, str, str, str, str | None]]]] = {
    # file -> (exit code, [(rule, severity, kind/name, pod template, container)])
    # the false errors third-party manifests met, now gone or warnings
    "kubebuilder-operator.yaml": (
        0,
        [
            ("probe-port-unlisted", W, "Deployment/kueue-controller-manager", "", "manager"),
            ("probe-port-unlisted", W, "Deployment/kueue-controller-manager", "", "manager"),
        ],
    ),
    "kube-prometheus-setup.yaml": (0, []),
    "mkdocs.yml": (3, []),  # no Kubernetes object: nothing checked, nothing wrong
    "fluent-bit-values.yaml": (3, []),
    "gpu-driver-daemonset.yaml": (0, []),
    "knative-service.yaml": (0, []),
    "knative-gpu-service.yaml": (0, []),  # Knative gives it a port: a server, not training
    "two-repositories": (
        0,
        [("readiness-missing-no-port", INFO, "Deployment/worker", "", "worker")],
    ),
    "lenient-liveness.yaml": (0, []),
    # the same GPU server, its Service in a file beside it: still a server with no readiness
    # probe, never training work with a liveness probe
    "vllm-split-files": (
        2,
        [
            ("probe-port-unlisted", W, "Deployment/mistral-7b", "", "mistral-7b"),
            ("readiness-missing", E, "Deployment/mistral-7b", "", "mistral-7b"),
        ],
    ),
    # GPUs and no containerPort, but a Service routes to it: a server, not training
    "vllm-serving.yaml": (
        0,
        [
            ("probe-port-unlisted", W, "Deployment/mistral-7b", "", "mistral-7b"),
            ("probe-port-unlisted", W, "Deployment/mistral-7b", "", "mistral-7b"),
        ],
    ),
    "argo-analysis-template.yaml": (3, []),
    # training work found without annotations
    "pytorch-statefulset.yaml": (
        2,
        [("restart-probe-on-keep-running", E, "StatefulSet/pytorch-worker", "", "worker")],
    ),
    "batch-job.yaml": (2, [("restart-probe-on-keep-running", E, "Job/pi", "", "pi")]),
    "pytorchjob.yaml": (
        2,
        [("restart-probe-on-keep-running", E, "PyTorchJob/pytorch-simple", "Worker", "pytorch")],
    ),
    "jobset-and-runtime.yaml": (
        2,
        [
            ("restart-probe-on-keep-running", E, "JobSet/pytorch", "workers", "pytorch"),
            (
                "restart-probe-on-keep-running",
                E,
                "ClusterTrainingRuntime/torch-distributed",
                "node",
                "node",
            ),
        ],
    ),
    # a startup probe that cannot fail restarts nothing: only its own warning
    "jobset-depends-on.yaml": (
        0,
        [("probe-cannot-fail", W, "JobSet/depends-on", "launcher", "launcher")],
    ),
    "appwrapper.yaml": (
        2,
        [
            (
                "restart-probe-on-keep-running",
                E,
                "AppWrapper/sample-pytorch-job",
                "component 1 (PyTorchJob) Worker",
                "pytorch",
            )
        ],
    ),
    "ray.yaml": (
        2,
        [
            (
                "restart-probe-on-keep-running",
                E,
                "RayJob/rayjob-sample",
                "worker group small-group",
                "ray-worker",
            )
        ],
    ),
    # the kinds people deploy, each with its pod templates
    "lws-tensorrt.yaml": (
        2,
        [("readiness-missing", E, "LeaderWorkerSet/tensorrt", "leader", "leader")],
    ),
    "argo-rollouts.yaml": (
        2,
        [("readiness-missing", E, "Rollout/rollouts-demo", "", "rollouts-demo")],
    ),
    "openshift-deploymentconfig.yaml": (
        2,
        [("readiness-missing", E, "DeploymentConfig/frontend", "", "helloworld")],
    ),
    "replication-controller.yaml": (
        2,
        [("readiness-missing", E, "ReplicationController/redis-master", "", "master")],
    ),
    "bare-pod.yaml": (2, [("readiness-missing", E, "Pod/nginx", "", "nginx")]),
    # CI controls
    "always-true-probes.yaml": (
        0,
        [
            ("probe-cannot-fail", W, "Deployment/worker", "", "echo"),
            ("probe-cannot-fail", W, "Deployment/worker", "", "proc"),
            ("probe-cannot-fail", W, "Deployment/worker", "", "forgiving"),
        ],
    ),
    "misspelled-probe.yaml": (
        2,
        [
            ("readiness-missing", E, "Deployment/api", "", "api"),
            ("unknown-field", E, "Deployment/api", "", "api"),
        ],
    ),
    "sed-template.yaml": (2, [("unrendered-template", E, "/", "", None)]),
}


def test_every_corpus_file_is_in_the_table() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_third_party_shape_gives_exactly_its_findings(name: str) -> None:
    exit_code, expected = EXPECTED[name]
    result = run_cli("lint", str(CORPUS / name), "-o", "json")
    found = [
        (f["rule"], f["severity"], f"{f['kind']}/{f['name']}", f["role"], f["container"])
        for f in result.json()["findings"]
    ]
    assert sorted(found) == sorted(expected)
    assert result.exit_code == exit_code
    unknown = {"AnalysisTemplate": 1} if name == "argo-analysis-template.yaml" else {}
    assert result.json()["not_understood"] == unknown


def test_the_signal_that_made_it_training_work_is_named() -> None:
    messages = {
        name: [
            f["message"]
            for f in run_cli("lint", str(CORPUS / name), "-o", "json").json()["findings"]
        ]
        for name in ("pytorch-statefulset.yaml", "batch-job.yaml", "ray.yaml")
    }
    assert messages["pytorch-statefulset.yaml"] == [
        "container worker runs work that a restart would kill (its env sets WORLD_SIZE) but has a "
        "livenessProbe: when it fails the kubelet kills the container and the work in it."
    ]
    assert messages["batch-job.yaml"] == [
        "container pi runs work that a restart would kill (the workload is a Job) but has a "
        "livenessProbe: when it fails the kubelet kills the container and the work in it."
    ]
    lws = run_cli("lint", str(CORPUS / "lws-tensorrt.yaml"), "-o", "json").json()["findings"]
    assert "Service tensorrt-service routes to it" in lws[0]["message"], "the LWS name label"
    assert messages["ray.yaml"] == [
        "container ray-worker runs work that a restart would kill (the workload is a RayJob) but "
        "has a livenessProbe: when it fails the kubelet kills the container and the work in it "
        "(KubeRay adds its own liveness check of the Ray node when none is set)."
    ]


def test_kinds_lint_does_not_understand_are_counted_and_named() -> None:
    document = run_cli("lint", str(CORPUS / "argo-analysis-template.yaml"), "-o", "json").json()
    assert (document["objects"], document["checked"], document["not_understood"]) == (
        1,
        0,
        {"AnalysisTemplate": 1},
    )
    text = run_cli("lint", str(CORPUS), "--no-color").stdout.splitlines()[-1]
    assert "not understood: 1 (AnalysisTemplate \u00d71)" in text
    assert "2 other documents (no Kubernetes object) skipped" in text  # mkdocs, values


def test_a_document_that_is_no_object_is_skipped_whatever_its_tags() -> None:
    document = run_cli("lint", str(CORPUS / "mkdocs.yml"), "-o", "json").json()
    assert (document["objects"], document["not_objects"], document["findings"]) == (1 - 1, 1, [])
    allowed = run_cli("lint", str(CORPUS / "mkdocs.yml"), "--allow-empty")
    assert allowed.exit_code == 0


def test_a_service_meets_only_workloads_of_its_own_source() -> None:
    """Without namespaces, the web repository's Service would otherwise make the batch
    repository's port-less worker a server with no readiness probe (an error)."""
    both = CORPUS / "two-repositories"
    assert run_cli("lint", str(both), "-o", "json").json()["findings"][0]["rule"] == (
        "readiness-missing-no-port"
    )
    # precondition: within one source, the same Service does route to the same worker
    merged = (
        (both / "web" / "service.yaml").read_text()
        + "---\n"
        + (both / "batch" / "worker.yaml").read_text()
    )
    one = run_cli("lint", "-", "-o", "json", stdin=merged).json()["findings"]
    assert [f["rule"] for f in one] == ["readiness-missing"]


def test_a_service_meets_the_workloads_of_files_beside_it() -> None:
    """`kubectl apply -f DIR/` applies a folder's files together, into one namespace: a Service
    in service.yaml selects the Deployment in deployment.yaml beside it, whether the folder or
    its files are named."""
    folder = CORPUS / "vllm-split-files"
    named = run_cli(
        "lint", str(folder / "deployment.yaml"), str(folder / "service.yaml"), "-o", "json"
    ).json()["findings"]
    errors = [f for f in named if f["severity"] == E]
    assert [(f["rule"], f["container"]) for f in errors] == [("readiness-missing", "mistral-7b")]
    assert "Service mistral-7b routes to it" in errors[0]["message"]
