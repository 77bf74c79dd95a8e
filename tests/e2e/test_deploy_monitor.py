"""deploy/monitor: renders with kustomize, passes our own lint (and lint refuses the liveness
probe it must not have), and its RBAC is exactly what the monitor's own requests needed (its
Prometheus rules: test_prometheus_rules.py)."""

import copy
import shutil
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.support import rbac
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault, RequestRecord
from tests.support.monitoring import BOUND, wait_for
from tests.support.scenarios import NAMESPACE, healthy
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.request import DoctorRequest
from truegreen.monitor.command import MonitorRequest, RunningMonitor

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "monitor"


def _kustomize(path: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl is required (Debian: kubernetes-client)"
    result = subprocess.run(
        [kubectl, "kustomize", str(path)], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_the_package_renders_a_monitor_with_a_readiness_probe_and_no_liveness_probe() -> None:
    objects = {(o["kind"], o["metadata"]["name"]): o for o in _kustomize(DEPLOY)}
    assert sorted(objects) == [
        ("ClusterRole", "truegreen-monitor-admission"),
        ("ClusterRole", "truegreen-monitor-capacity"),
        ("ClusterRole", "truegreen-monitor-queue"),
        ("ClusterRoleBinding", "truegreen-monitor-admission"),
        ("ClusterRoleBinding", "truegreen-monitor-capacity"),
        ("ClusterRoleBinding", "truegreen-monitor-queue"),
        ("Deployment", "truegreen-monitor"),
        ("Role", "truegreen-monitor"),
        ("Role", "truegreen-monitor-events"),
        ("RoleBinding", "truegreen-monitor"),
        ("RoleBinding", "truegreen-monitor-events"),
        ("Service", "truegreen-monitor"),
        ("ServiceAccount", "truegreen-monitor"),
    ]
    deployment = objects[("Deployment", "truegreen-monitor")]
    assert deployment["metadata"]["namespace"] == "training"
    assert deployment["spec"]["replicas"] == 1
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["args"] == ["monitor", "--listen", ":9108"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert "livenessProbe" not in container
    assert "startupProbe" not in container
    assert container["ports"] == [{"name": "metrics", "containerPort": 9108}]
    assert pod["serviceAccountName"] == "truegreen-monitor"
    binding = objects[("ClusterRoleBinding", "truegreen-monitor-capacity")]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "truegreen-monitor", "namespace": "training"}
    ]
    service = objects[("Service", "truegreen-monitor")]
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9108, "targetPort": "metrics"}]


def test_our_own_lint_passes_the_package_and_would_refuse_a_liveness_probe() -> None:
    rendered = _kustomize(DEPLOY)
    clean = run_cli("lint", "-", "-o", "json", stdin=yaml.safe_dump_all(rendered))
    assert (clean.exit_code, clean.json()["findings"]) == (0, [])
    probed = copy.deepcopy(rendered)
    deployment = next(o for o in probed if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": "metrics"}}
    refused = run_cli("lint", "-", "-o", "json", stdin=yaml.safe_dump_all(probed))
    assert refused.exit_code == 2
    assert {(f["rule"], f["severity"]) for f in refused.json()["findings"]} == {
        ("restart-probe-on-keep-running", "error")
    }


def _status_watched(fake_api: FakeApiServer) -> bool:
    """The autoscaler's status ConfigMap is watched by name, cluster-wide."""
    return any(
        r.path == "/api/v1/configmaps" and "watch" in r.query and r.status == 200
        for r in fake_api.requests()
    )


def _grants(requests: list[RequestRecord]) -> tuple[set[rbac.Grant], set[rbac.Grant]]:
    """rbac.used, with watches and creates named as RBAC names them; a read in another
    namespace than the monitor's needs a ClusterRole."""
    plain = [r for r in requests if r.method == "GET" and "watch" not in r.query]
    namespaced, cluster = rbac.used(plain, namespace=NAMESPACE)
    for request in requests:
        if request in plain:
            continue
        verb = "create" if request.method == "POST" else "watch"
        (found_ns, found_cluster) = rbac.used(
            [RequestRecord("GET", request.path, {}, 200)], namespace=NAMESPACE
        )
        for group, resource, _ in found_ns:
            namespaced.add((group, resource, verb))
        for group, resource, _ in found_cluster:
            cluster.add((group, resource, verb))
    return namespaced, cluster


def every_read(fake_api: FakeApiServer, now: datetime) -> list[dict[str, Any]]:
    """Install every API group a monitor can follow and return a training namespace's objects
    (and the cluster's) that make it read every kind it can: an admission webhook behind a
    Service (its EndpointSlices), a TrainJob on each kind of runtime, a training pod the
    scheduler could not place with a machine on its way (the autoscalers' word on it), others
    that cluster-autoscaler adds machines for from a Cluster API group of each kind (the
    groups got), a pod
    holding room at a priority (the PriorityClasses), and the newest job mounting a bound
    volume (its PersistentVolume, its CSIDriver), claiming a device (the DRA objects), on a
    named container runtime, handed to a Kueue LocalQueue and to each gang scheduler. The
    one-namespace monitor's roles and the fleet's are derived from this one scenario, so a
    feature one package grants cannot be missing from the other."""
    from tests.scenario.test_admission import webhook_behind
    from tests.scenario.test_autoscaler import scale_up_event
    from tests.scenario.test_capi_provision_time import _machine_deployment, _triggered
    from tests.support.filter_objects import every_filter_read
    from tests.support.gang_objects import GANG_GROUPS, every_gang_read
    from tests.support.kueue_objects import every_queue_read, handed_to_team_a
    from tests.support.scenarios import job_pod, training_job
    from tests.support.training_kinds import ALL_GROUPS, every_training_read

    fake_api.install(
        *ALL_GROUPS, "karpenter.sh", "kueue.x-k8s.io", "cluster.x-k8s.io", *GANG_GROUPS
    )
    objects = healthy(now)
    for obj in objects:
        if obj["metadata"]["name"] == "mysql-def34":
            obj["spec"]["priority"] = 1000  # so the PriorityClasses are listed too
    waiting = training_job("train-002", now, finished=False)
    pod = job_pod(waiting, now, suffix="w", node_name=None, phase="Pending")
    capi_kinds = ("MachineDeployment", "MachineSet", "MachinePool")
    scaled = [
        job_pod(waiting, now, suffix=f"w{n}", node_name=None, phase="Pending")
        for n in range(2, 2 + len(capi_kinds))
    ]
    filtered = handed_to_team_a(every_filter_read(now))
    return [
        *objects,
        *webhook_behind(ready=True),
        *every_training_read(now),
        waiting,
        pod,
        scale_up_event(now, pod),
        *scaled,
        *(
            _triggered(now, p, timedelta(minutes=2), kind)
            for p, kind in zip(scaled, capi_kinds, strict=True)
        ),
        *(_machine_deployment(now, "30m", kind=kind) for kind in capi_kinds),
        *every_gang_read(filtered, "filtered", now),
        *every_queue_read(now),
    ]


def test_the_roles_grant_exactly_what_the_monitor_asked_for(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    fake_api.watch_bookmark_seconds = 0.2
    fake_api.add(*every_read(fake_api, datetime.now(UTC)))
    # the autoscaler's status: its first list by name refused, as a role granting the get alone
    # refuses it, so that round gets it at kube-system; the reflector lists it again after its
    # back-off and watches it (the roles grant both)
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/configmaps$", count=1)
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace=NAMESPACE)
    request = MonitorRequest(
        DoctorRequest(ConnectionSettings(kubeconfig, None, None, 5.0, False, None)),
        listen=None,
        min_interval=0.1,
        interval=5.0,
        max_age=30.0,
        watch_timeout=2.0,
    )
    with RunningMonitor(request, on_evaluation=lambda n, o: None, on_event=lambda e: None) as run:
        thread = threading.Thread(target=run.run, daemon=True)
        thread.start()

        def monitor_events() -> list[dict[str, Any]]:
            return [
                e
                for e in fake_api.list_objects("Event", NAMESPACE)
                if e.get("reason") != "TriggeredScaleUp"
            ]

        wait_for("the first Event", lambda: bool(monitor_events()))
        claim = fake_api.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
        assert claim is not None
        claim["status"] = {"phase": "Pending"}
        fake_api.update_object(claim)
        wait_for("a second Event", lambda: len(monitor_events()) == 2)
        wait_for("the autoscaler's status watched", lambda: _status_watched(fake_api))
        run.stop()
        thread.join(BOUND)
    namespaced, cluster_wide = _grants(fake_api.requests())
    paths = {r.path for r in fake_api.requests()}
    assert "/apis/discovery.k8s.io/v1/namespaces/policy/endpointslices" in paths, "precondition"
    assert "/apis/scheduling.k8s.io/v1/priorityclasses" in paths, "precondition"
    assert "/api/v1/persistentvolumes/pvc-0a1b2c" in paths, "precondition: the volume read"
    assert "/api/v1/persistentvolumes" in paths, "precondition: every volume listed"
    assert "/apis/resource.k8s.io/v1/resourceslices" in paths, "precondition: devices read"
    assert "/apis/karpenter.sh/v1/nodeclaims" in paths, "precondition: NodeClaims read"
    assert any(p.startswith("/apis/cluster.x-k8s.io/") for p in paths), "precondition: groups"
    writes = {g for g in namespaced if g[2] == "create"}
    assert writes == {("", "events", "create")}
    # and `patch`, for a verdict that comes back (test_monitor_cli.py, a flapping verdict)
    assert rbac.granted("monitor/events-role.yaml") == writes | {("", "events", "patch")}
    assert namespaced - writes == rbac.granted("monitor/role.yaml")
    assert "/apis/kueue.x-k8s.io/v1beta2/admissionchecks" in paths, "precondition: Kueue read"
    assert cluster_wide == rbac.granted("monitor/clusterrole.yaml") | rbac.granted(
        "monitor/clusterrole-admission.yaml"
    ) | rbac.granted("monitor/clusterrole-queue.yaml")
