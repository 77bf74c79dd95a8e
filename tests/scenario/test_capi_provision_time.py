"""A Cluster API machine group's own provision time: cluster-autoscaler's clusterapi provider
reads `cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime` on the group's
MachineDeployment over its `--max-node-provision-time` (kubernetes/autoscaler
cluster-autoscaler/cloudprovider/clusterapi/clusterapi_nodegroup.go `GetOptions`,
`getDurationOption`), so a scale-up of that group stands for the group's time."""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.scenario.test_autoscaler import _scaler_event, _waiting
from tests.support import read_faults
from tests.support.fake_apiserver import Fault
from tests.support.scenarios import Obj, ts

GROUP = "MachineDeployment/default/training-gpu-md-0"
ANNOTATION = "cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime"
PATH = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments/training-gpu-md-0"


def _machine_deployment(
    now: datetime, provision: str | None, version: str = "v1beta2", kind: str = "MachineDeployment"
) -> Obj:
    """A GPU MachineDeployment as a Cluster API cluster made with `clusterctl generate cluster`
    holds it, scaled by cluster-autoscaler from zero: the min/max size annotations the
    clusterapi provider requires (cloudprovider/clusterapi/README.md "Enabling Autoscaling"),
    `provision` as the per-group option (README.md "Per-NodeGroup autoscaling options"), the
    v1beta2 references by apiGroup (cluster-api api/core/v1beta2 machinedeployment_types.go,
    `ContractVersionedObjectReference`), v1beta1's by apiVersion. `kind`: the same group as a
    MachineSet or MachinePool, the other kinds the provider scales (their spec is not read)."""
    annotations = {
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "0",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "4",
        "machinedeployment.clusters.x-k8s.io/revision": "1",
    }
    if provision is not None:
        annotations[ANNOTATION] = provision

    def ref(group: str, kind: str) -> dict[str, str]:
        if version == "v1beta1":
            return {"apiVersion": f"{group}/v1beta1", "kind": kind, "name": "training-gpu-md-0"}
        return {"apiGroup": group, "kind": kind, "name": "training-gpu-md-0"}

    selector = {
        "cluster.x-k8s.io/cluster-name": "training",
        "cluster.x-k8s.io/deployment-name": "training-gpu-md-0",
    }
    return {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": kind,
        "metadata": {
            "name": "training-gpu-md-0",
            "namespace": "default",
            "labels": {"cluster.x-k8s.io/cluster-name": "training"},
            "annotations": annotations,
            "creationTimestamp": ts(now - timedelta(days=3)),
        },
        "spec": {
            "clusterName": "training",
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": selector},
                "spec": {
                    "clusterName": "training",
                    "version": "v1.33.1",
                    "bootstrap": {
                        "configRef": ref("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate")
                    },
                    "infrastructureRef": ref(
                        "infrastructure.cluster.x-k8s.io", "AWSMachineTemplate"
                    ),
                },
            },
        },
        "status": {"replicas": 0, "phase": "ScalingUp"},
    }


def _triggered(now: datetime, pod: Obj, age: timedelta, kind: str = "MachineDeployment") -> Obj:
    """cluster-autoscaler's TriggeredScaleUp naming the group by its clusterapi `Id()`
    (clusterapi_unstructured.go `ID`: `path.Join(Kind, Namespace, Name)`)."""
    group = GROUP.replace("MachineDeployment", kind, 1)
    return _scaler_event(
        now,
        pod,
        "TriggeredScaleUp",
        f"pod triggered scale-up: [{{{group} 0->1 (max: 4)}}]",
        source="cluster-autoscaler",
        age=age,
    )


def _scenario(age: timedelta, provision: str | None, version: str = "v1beta2") -> Any:
    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        group = _machine_deployment(now, provision, version)
        return [*objects, pod, _triggered(now, pod, age), group]

    return build


def _capacity(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f["code"], f["status"], f["basis"]) for f in report["findings"] if f["check"] == "capacity"
    ]


def _details(report: dict[str, Any]) -> list[str]:
    return [d for f in report["findings"] if f["check"] == "capacity" for d in f["details"]]


def _said(report: dict[str, Any]) -> list[str]:
    """What the details say of the group's provision time."""
    return [d for d in _details(report) if GROUP in d and not d.startswith("cluster-autoscaler on")]


_STANDS = "the wait cluster-autoscaler was given for every group stands"
_UNSURE = (
    "a scale-up of it older than the wait cluster-autoscaler was given for every group may "
    "still stand"
)
_UNSURE_BY_DEFAULT = (
    f"cluster-autoscaler on big-w1, 20 minutes ago, longer ago than its default wait of 15 "
    f"minutes (whether a machine is still on its way is not known): pod triggered scale-up: "
    f"[{{{GROUP} 0->1 (max: 4)}}]"
)
_EXPIRED_BY_DEFAULT = (
    f"cluster-autoscaler on big-w1, 20 minutes ago, longer ago than it waits for a machine (no "
    f"machine is on its way): pod triggered scale-up: [{{{GROUP} 0->1 (max: 4)}}]"
)


def test_a_group_given_longer_than_the_default_still_waits_past_it(doctor: Doctor) -> None:
    """The group's annotation says 30 minutes; its trigger is 20 minutes old, past the
    15-minute default, and no status ConfigMap says more: the machine is still on its way."""
    doctor.server.install("cluster.x-k8s.io")
    doctor.load(_scenario(timedelta(minutes=20), "30m"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    assert _said(report) == [
        f"cluster-autoscaler waits 30 minutes for a machine of {GROUP}: {ANNOTATION}=30m on {GROUP}"
    ]
    assert result.exit_code == 0
    assert doctor.server.requests("GET", "^" + PATH + "$"), "the group got at v1beta2"


def test_a_group_given_less_than_the_default_is_past_it_sooner(doctor: Doctor) -> None:
    """The annotation says 5 minutes; the trigger is 10 minutes old, within the default: the
    autoscaler no longer waits for that machine."""
    doctor.server.install("cluster.x-k8s.io")
    doctor.load(_scenario(timedelta(minutes=10), "5M"))
    result = doctor.live("-o", "json")
    report = result.json()
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(report)}
    assert (
        f"cluster-autoscaler on big-w1, 10 minutes ago, longer ago than it waits for a machine "
        f"(no machine is on its way): pod triggered scale-up: [{{{GROUP} 0->1 (max: 4)}}]"
    ) in _details(report)
    # The provider lower-cases the value before Go reads it (clusterapi_utils.go
    # `autoscalingOptions`): `5M` is five minutes.
    assert _said(report) == [
        f"cluster-autoscaler waits 5 minutes for a machine of {GROUP}: {ANNOTATION}=5M on {GROUP}"
    ]
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("provision", "said"),
    [
        ("soon", f"{GROUP}'s annotation {ANNOTATION} is “soon”, no duration above zero"),
        ("30 m", f"{GROUP}'s annotation {ANNOTATION} is “30 m”, no duration above zero"),
        (None, f"{GROUP} gives no provision time of its own (no annotation {ANNOTATION})"),
    ],
    ids=["garbage", "spaced", "absent"],
)
def test_a_group_that_gives_no_duration_is_judged_by_the_flag_or_default(
    doctor: Doctor, provision: str | None, said: str
) -> None:
    """What Go's time.ParseDuration does not read, the provider passes over
    (`getDurationOption` logs it and keeps the flag's): the 15-minute default stands."""
    doctor.server.install("cluster.x-k8s.io")
    doctor.load(_scenario(timedelta(minutes=20), provision))
    result = doctor.live("-o", "json")
    report = result.json()
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(report)}
    assert _EXPIRED_BY_DEFAULT in _details(report)
    assert _said(report) == [f"{said}: {_STANDS}"]
    assert "cluster-autoscaler waits 15 minutes for a machine (its default)" in _details(report)
    assert result.exit_code == 2


def test_a_refused_group_leaves_a_scale_up_past_the_default_unknown(doctor: Doctor) -> None:
    """No permission to get the MachineDeployment, whose annotation says 30 minutes: the
    trigger, 20 minutes old, is past the 15-minute default, and whether the group gives a
    longer time of its own could not be read, so whether its machine still comes is not known
    (unknown, exit 3; neither the wait nor a measured failure), as where the autoscaler's flag
    could not be read; the unknown's remedy is the group's get."""
    doctor.server.install("cluster.x-k8s.io")
    doctor.load(_scenario(timedelta(minutes=20), "30m"))
    doctor.server.inject(Fault.FORBIDDEN, "^" + PATH + "$")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.cant-read", "unknown", "cant-check")]
    [unknown] = [f for f in report["findings"] if f["check"] == "capacity"]
    assert unknown["headline"] == (
        "Couldn't check whether there is room for a training job: no permission to read the "
        "autoscaler's machine groups (MachineDeployment)."
    )
    assert "auth can-i get machinedeployments/training-gpu-md-0" in unknown["remedy"]
    assert _UNSURE_BY_DEFAULT in _details(report)
    assert not [d for d in _details(report) if "no machine is on its way" in d]
    [said] = _said(report)
    assert said.startswith(f"whether {GROUP} gives a provision time of its own could not be read")
    assert "needs get machinedeployments.cluster.x-k8s.io in namespace default" in said
    assert said.endswith(_UNSURE)
    assert result.exit_code == 3


def test_a_refused_group_past_the_flag_it_was_given_is_unknown_too(doctor: Doctor) -> None:
    """cluster-autoscaler's own flag gives every group 18 minutes; the trigger is 20 minutes
    old and the group's get is refused: its own time may be longer, so the scale-up is not
    known to stand or not (exit 3), and the details say which wait it is past."""
    from tests.scenario.test_autoscaler import _autoscaler_pod

    doctor.server.install("cluster.x-k8s.io")

    def build(now: datetime) -> list[Obj]:
        flagged = _autoscaler_pod(now, "--max-node-provision-time=18m")
        return [*_scenario(timedelta(minutes=20), "30m")(now), flagged]

    doctor.load(build)
    doctor.server.inject(Fault.FORBIDDEN, "^" + PATH + "$")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.cant-read", "unknown", "cant-check")]
    assert (
        f"cluster-autoscaler on big-w1, 20 minutes ago, longer ago than its wait of 18 minutes "
        f"for every group (whether a machine is still on its way is not known): pod triggered "
        f"scale-up: [{{{GROUP} 0->1 (max: 4)}}]"
    ) in _details(report)
    assert result.exit_code == 3


def test_a_refused_group_within_the_default_is_still_a_machine_coming(doctor: Doctor) -> None:
    """The group's get refused, its trigger 10 minutes old: within the wait given for every
    group, the autoscaler still waits for the machine whatever the group's own time adds, so
    the wait stands (exit 0) and the details say the group could not be read."""
    doctor.server.install("cluster.x-k8s.io")
    doctor.load(_scenario(timedelta(minutes=10), "30m"))
    doctor.server.inject(Fault.FORBIDDEN, "^" + PATH + "$")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    [said] = _said(report)
    assert said.startswith(f"whether {GROUP} gives a provision time of its own could not be read")
    assert result.exit_code == 0


def test_a_group_not_there_or_not_served_leaves_the_default(doctor: Doctor) -> None:
    """The MachineDeployment is gone (NotFound), or the cluster serves no Cluster API (its
    groups are kept in a management cluster apart): the default stands, and the details say
    why; where nothing is served, nothing is asked."""
    doctor.server.install("cluster.x-k8s.io")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, _triggered(now, pod, timedelta(minutes=10))]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    [said] = _said(report)
    assert said.startswith(f"{GROUP} was not found (")
    assert said.endswith(_STANDS)


def test_a_cluster_without_cluster_api_asks_for_no_group(doctor: Doctor) -> None:
    """The workload cluster of a Cluster API cluster whose groups a management cluster holds:
    no cluster.x-k8s.io here, nothing asked, the default stands and the details say why."""

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, _triggered(now, pod, timedelta(minutes=20))]

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(report)}
    assert _said(report) == [
        f"{GROUP} was not looked up (this cluster serves no Cluster API objects, "
        f"cluster.x-k8s.io v1beta2 or v1beta1: they are kept in another cluster): {_STANDS}"
    ]
    assert not doctor.server.requests("GET", "^/apis/cluster.x-k8s.io/"), "nothing asked"
    assert result.exit_code == 2


def test_a_cluster_api_before_v1beta2_is_read_at_v1beta1(doctor: Doctor) -> None:
    """Cluster API before v1.11 serves v1beta1 alone: the group is got there."""
    doctor.server.install("cluster.x-k8s.io", versions=["v1beta1"])
    doctor.load(_scenario(timedelta(minutes=20), "30m", "v1beta1"))
    report = doctor.live("-o", "json").json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    assert doctor.server.requests("GET", "^" + PATH.replace("v1beta2", "v1beta1") + "$")


def test_no_group_is_asked_for_without_a_cluster_api_scale_up(doctor: Doctor) -> None:
    """A scale-up of another provider's group (`eks-gpu-ng`) names no Cluster API object."""
    from tests.scenario.test_autoscaler import scale_up_event

    doctor.server.install("cluster.x-k8s.io")

    def build(now: datetime) -> list[Obj]:
        objects, pod = _waiting(now)
        return [*objects, pod, scale_up_event(now, pod), _machine_deployment(now, "30m")]

    doctor.load(build)
    report = doctor.live("-o", "json").json()
    assert _capacity(report) == [("capacity.machine-coming", "warn", "measured")]
    assert not doctor.server.requests("GET", "^/apis/cluster.x-k8s.io/")
    assert _said(report) == []


def test_every_fault_on_the_group_leaves_an_old_scale_up_unknown(
    doctor: Doctor,
) -> None:
    """The fault matrix (tests/support/read_faults.py) for the group's get, the trigger 20
    minutes old, past the 15-minute default: where the group's own time could not be read,
    whether its machine still comes is not known (unknown, exit 3), never the wait and never
    the failure; a 404 says the group is not there (the API server's NotFound, or Go's `404
    page not found` for a group no longer served), a measurement, so the default stands (past
    it: no machine on its way, exit 2); no other check changes; a throttle is waited out and
    the group's 30 minutes stand."""
    doctor.server.install("cluster.x-k8s.io")
    doctor.load(_scenario(timedelta(minutes=20), "30m"))
    doctor.round_trip = False
    baseline = doctor.live("-o", "json", "--request-timeout", "0.9").json()
    assert _capacity(baseline) == [("capacity.machine-coming", "warn", "measured")]
    others = {c: s for c, s in read_faults.statuses(baseline).items() if c != "capacity"}
    for cell in read_faults.cells(doctor, PATH):
        report = cell.result.json()
        found = read_faults.statuses(report)
        assert {c: s for c, s in found.items() if c != "capacity"} == others, cell.name
        assert 1 <= len(cell.sent) <= 1 + cell.resends, cell.name
        if cell.throttled:
            assert _capacity(report) == _capacity(baseline), cell.name
            continue
        [said] = _said(report)
        if cell.fault in (Fault.NOT_FOUND, Fault.PAGE_NOT_FOUND):
            assert "capacity.machine-coming" not in {c for c, _, _ in _capacity(report)}
            assert found["capacity"] <= {"fail", "warn"}, cell.name
            assert _EXPIRED_BY_DEFAULT in _details(report), cell.name
            assert said.startswith(f"{GROUP} was not found"), cell.name
            assert cell.result.exit_code == 2, cell.name
            continue
        assert _capacity(report) == [("capacity.cant-read", "unknown", "cant-check")], cell.name
        assert _UNSURE_BY_DEFAULT in _details(report), cell.name
        assert said.startswith(f"whether {GROUP} gives a provision time"), cell.name
        assert cell.result.exit_code == 3, cell.name
