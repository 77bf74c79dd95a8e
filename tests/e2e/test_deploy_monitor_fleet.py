"""deploy/monitor/fleet: one monitor for every training namespace renders with kustomize,
passes our own lint, and its ClusterRoles grant exactly what a fleet's monitor asked for: the
cluster-wide one its shared watches and cluster reads, the per-namespace one (bound by a
RoleBinding in each training namespace) its reads by name and its Events there, and the
optional logins one its watch of the registry logins by name."""

import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.test_deploy_monitor import _kustomize, _status_watched, every_read
from tests.scenario.test_fleet_monitor import _moved, _namespace
from tests.support import rbac
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault, RequestRecord
from tests.support.monitoring import BOUND, wait_for
from tests.support.scenarios import NAMESPACE
from truegreen.cluster.label_selector import parse_selector
from truegreen.cluster.namespace_selection import (
    NamespaceSelection,
    SelectionMode,
)
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.request import DoctorRequest
from truegreen.monitor.command import MonitorRequest, RunningMonitor

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "deploy" / "monitor" / "fleet"
LABEL = "truegreen.io/training"


def test_the_fleet_package_renders_one_monitor_of_the_labelled_namespaces() -> None:
    objects = {(o["kind"], o["metadata"]["name"]): o for o in _kustomize(FLEET)}
    assert sorted(objects) == [
        ("ClusterRole", "truegreen-monitor-fleet"),
        ("ClusterRole", "truegreen-monitor-fleet-namespace"),
        ("ClusterRoleBinding", "truegreen-monitor-fleet"),
        ("Deployment", "truegreen-monitor"),
        ("Service", "truegreen-monitor"),
        ("ServiceAccount", "truegreen-monitor"),
    ]
    container = objects[("Deployment", "truegreen-monitor")]["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["args"] == [
        *("monitor", "--listen", ":9108"),
        *("--namespace-selector", f"{LABEL}=true"),
    ]
    assert "livenessProbe" not in container
    clean = run_cli("lint", "-", "-o", "json", stdin=yaml.safe_dump_all(list(objects.values())))
    assert (clean.exit_code, clean.json()["findings"]) == (0, [])


def _fleet_grants(
    requests: list[RequestRecord], selected: set[str]
) -> tuple[set[rbac.Grant], set[rbac.Grant]]:
    """(inside a selected namespace, cluster-wide) of the requests the server granted: a read
    in any other namespace (the autoscaler's status in kube-system) needs the cluster-wide
    role; watches and creates named as RBAC names them."""
    inside: set[rbac.Grant] = set()
    cluster: set[rbac.Grant] = set()
    for request in requests:
        if request.status == 403:
            continue
        parts = request.path.strip("/").split("/")
        where = parts[parts.index("namespaces") + 1] if "namespaces" in parts[:-1] else None
        namespaced, cluster_wide = rbac.used(
            [
                RequestRecord(
                    "GET" if request.method == "GET" else request.method, request.path, {}, 200
                )
            ],
            namespace=where if where in selected else "-",
        )
        verb = "watch" if "watch" in request.query else None
        inside |= {(g, r, verb or v) for g, r, v in namespaced}
        cluster |= {(g, r, verb or v) for g, r, v in cluster_wide}
    return inside, cluster


def _run_fleet_monitor(
    fake_api: FakeApiServer, tmp_path: Path, linger: float = 0.0
) -> list[RequestRecord]:
    """A fleet monitor over two labelled namespaces, each holding test_deploy_monitor's
    scenario of every read (`every_read`: devices, Kueue, priorities, bound volumes, gang
    schedulers, autoscalers, webhooks, every training kind), until a claim's change made its
    second Event (and `linger` seconds more). Every request the fake received."""
    fake_api.watch_bookmark_seconds = 0.2
    objects = every_read(fake_api, datetime.now(UTC))
    fake_api.add(_namespace(NAMESPACE, **{LABEL: "true"}), _namespace("team-a", **{LABEL: "true"}))
    fake_api.add(*objects, *_moved(objects, "team-a"))
    # the autoscaler's status: its first list by name refused (a role granting the get alone),
    # so that round gets it at kube-system; listed again after the back-off, and watched
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/configmaps$", count=1)
    kubeconfig = fake_api.write_kubeconfig(tmp_path / "kubeconfig", namespace="default")
    request = MonitorRequest(
        DoctorRequest(ConnectionSettings(kubeconfig, None, None, 5.0, False, None)),
        listen=None,
        min_interval=0.1,
        interval=5.0,
        max_age=30.0,
        watch_timeout=2.0,
        selection=NamespaceSelection(
            SelectionMode.SELECTOR, selector=parse_selector(f"{LABEL}=true")
        ),
    )

    def verdict_events(namespace: str) -> list[dict[str, Any]]:
        return [
            e
            for e in fake_api.list_objects("Event", namespace)
            if e.get("reason") != "TriggeredScaleUp"
        ]

    with RunningMonitor(request, on_evaluation=lambda n, o: None, on_event=lambda e: None) as run:
        thread = threading.Thread(target=run.run, daemon=True)
        thread.start()
        wait_for(
            "an Event in each namespace",
            lambda: all(verdict_events(ns) for ns in (NAMESPACE, "team-a")),
        )
        # ready first, the webhook's servers read in its own namespace, outside the selection
        assert [e["reason"] for e in verdict_events("team-a")] == ["TrainingReady"]
        claim = fake_api.get_object("PersistentVolumeClaim", "datasets", "team-a")
        assert claim is not None
        claim["status"] = {"phase": "Pending"}
        fake_api.update_object(claim)
        wait_for("a second Event in team-a", lambda: len(verdict_events("team-a")) == 2)
        wait_for("the autoscaler's status watched", lambda: _status_watched(fake_api))
        time.sleep(linger)
        run.stop()
        thread.join(BOUND)
    return fake_api.requests()


def test_the_fleet_roles_grant_exactly_what_a_fleet_monitor_asked_for(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    # The package as kustomize renders it: no logins role, so the cluster refuses a watch of
    # the registry logins in every namespace (as RBAC would), and they are read one by one.
    fake_api.inject(Fault.FORBIDDEN, r"^/api/v1/secrets$")
    # past a reflector's first back-off (0.8 s to 1.6 s, cluster/reflector.py Backoff): a
    # refused watch still retried would have been asked for again
    requests = _run_fleet_monitor(fake_api, tmp_path, linger=2.0)
    inside, cluster_wide = _fleet_grants(requests, {NAMESPACE, "team-a"})
    paths = {r.path for r in requests}
    assert "/api/v1/namespaces/team-a/secrets/regcred" in paths, "precondition"
    assert "/api/v1/persistentvolumeclaims" in paths, "precondition: shared watches"
    assert "/apis/discovery.k8s.io/v1/namespaces/policy/endpointslices" in paths, "precondition"
    # every feature the one-namespace monitor's roles are derived from was read here too
    assert {
        "/apis/resource.k8s.io/v1/resourceslices",
        "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaimtemplates/one-gpu",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        "/api/v1/persistentvolumes/pvc-0a1b2c",
        "/api/v1/persistentvolumes",
        "/apis/karpenter.sh/v1/nodeclaims",
        "/apis/kueue.x-k8s.io/v1beta2/admissionchecks",
        "/apis/kueue.x-k8s.io/v1beta2/localqueues",
    } <= paths, "precondition: every feature read"
    # the refused watch is asked for once, not again at each back-off
    assert [r.status for r in requests if r.path == "/api/v1/secrets"] == [403]
    # `patch events` is for a verdict that comes back (test_monitor_cli.py, a flapping verdict)
    assert inside == rbac.granted("monitor/fleet/clusterrole-namespace.yaml") - {
        ("", "events", "patch")
    }
    assert cluster_wide == rbac.granted("monitor/fleet/clusterrole.yaml")


def test_with_the_logins_role_the_fleet_watches_each_login_by_name_and_gets_none(
    fake_api: FakeApiServer, tmp_path: Path
) -> None:
    requests = _run_fleet_monitor(fake_api, tmp_path)
    inside, cluster_wide = _fleet_grants(requests, {NAMESPACE, "team-a"})
    logins = [r for r in requests if r.path == "/api/v1/secrets"]
    assert logins, "precondition: the logins are watched"
    # every list and watch of them names the login: what RBAC's resourceNames can grant
    assert {r.query.get("fieldSelector") for r in logins} == {"metadata.name=regcred"}
    assert not [r.path for r in requests if "/secrets/" in r.path]
    assert not [
        r.path
        for r in requests
        if r.path.startswith("/api/v1/namespaces/") and r.path.count("/") == 4
    ]
    role = yaml.safe_load((FLEET / "clusterrole-logins.yaml").read_text())
    assert [rule["resourceNames"] for rule in role["rules"]] == [["regcred"]]
    assert inside == rbac.granted("monitor/fleet/clusterrole-namespace.yaml") - {
        ("", "secrets", "get"),
        ("", "events", "patch"),
    }
    assert cluster_wide == rbac.granted("monitor/fleet/clusterrole.yaml") | rbac.granted(
        "monitor/fleet/clusterrole-logins.yaml"
    )


def test_the_fleet_grants_every_feature_the_one_namespace_monitor_is_granted() -> None:
    # Both packages are derived from the same scenario (test_deploy_monitor.every_read); this
    # holds them together without a cluster: what a fleet monitor reads differs only in the
    # Namespaces, which it lists and watches (the selection) where a one-namespace monitor
    # gets its own.
    one = set().union(
        *(
            rbac.granted(f"monitor/{name}")
            for name in (
                "role.yaml",
                "events-role.yaml",
                "clusterrole.yaml",
                "clusterrole-admission.yaml",
                "clusterrole-queue.yaml",
            )
        )
    )
    fleet = rbac.granted("monitor/fleet/clusterrole.yaml") | rbac.granted(
        "monitor/fleet/clusterrole-namespace.yaml"
    )
    assert one - fleet == {("", "namespaces", "get")}
    assert fleet - one == {("", "namespaces", "list"), ("", "namespaces", "watch")}
