"""Every filter kube-scheduler applies to a training job's pods, over the fake API server.

Each scenario is one where no machine can take the job although its pods fit by room alone
(doctor said READY before it evaluated the filter), or where a filter cannot be evaluated and
is named as such. The objects follow the shapes real clusters hold (tests/support/
filter_objects.py names each one's source); each doctor run is also checked from a snapshot of
the same cluster (tests/scenario/conftest.py).
"""

from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.filter_objects import (
    DRIVER,
    HOSTNAME,
    ZONE,
    allocated_claim,
    bound_claim,
    claim_template,
    claim_volume,
    claims_from_template,
    device_class,
    gpu_slice,
    local_class,
    local_volume,
    one_per_machine,
    ranks_job,
    running_pod,
    waiting_claim,
    zonal_volume,
    zoned_node,
)
from tests.support.scenarios import (
    Obj,
    find,
    healthy,
    job_pod,
    node,
    running_containers,
    ts,
)


def _capacity(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == "capacity"]


def _only(report: dict[str, Any]) -> dict[str, Any]:
    found = _capacity(report)
    assert len(found) == 1, f"capacity findings: {[f['code'] for f in found]}"
    return found[0]


def _two_gpu_machines(now: datetime) -> list[Obj]:
    """The healthy namespace, and a second 2-GPU machine beside gpu-1."""
    return [*healthy(now), node("gpu-2", "16", "64Gi", gpus=2)]


def _in_zones(now: datetime, zones: dict[str, str]) -> list[Obj]:
    """The healthy namespace with each machine in the zone `zones` names."""
    objects = healthy(now)
    for name, zone in zones.items():
        find(objects, "Node", name)["metadata"]["labels"][ZONE] = zone
    return objects


# -- required inter-pod anti-affinity ---------------------------------------------------------


def test_one_trainer_per_machine_needs_as_many_machines_as_ranks(doctor: Doctor) -> None:
    """Four ranks of one GPU, at most one per machine (required pod anti-affinity on the
    hostname against the Job's own pods; interpodaffinity/filtering.go
    `satisfyPodAntiAffinity`), and two machines with GPUs: four GPUs are free, two ranks can
    start. Certain: four pods kept apart need four machines that can hold one."""
    doctor.load(
        lambda now: [
            *_two_gpu_machines(now),
            ranks_job("ranks-4", now, ranks=4, gpus=1, affinity=one_per_machine("ranks-4")),
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "fail",
        "measured",
        "capacity.rules-block",
    )
    assert found["headline"] == (
        "A training job of 4 programs of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu each can't "
        "start: 2 of its 4 programs fit; the next may not share a machine with another of its "
        "programs."
    )
    assert found["remedy"] == (
        "Add machines with room, one for each program it keeps apart, or let them share a "
        "machine in the training job's settings."
    )
    assert result.exit_code == 2


@pytest.mark.parametrize("key", ["job-name", "batch.kubernetes.io/job-name"])
def test_a_job_file_kept_apart_by_its_own_name_is_judged_as_the_stored_job(
    doctor: Doctor, key: str
) -> None:
    """The four ranks as a job file, whose template carries no labels (as a person writes
    it): the API server labels the template with the Job's name at create
    (pkg/registry/batch/job/strategy.go `PrepareForCreate` -> `generateSelector`), so the
    rule on that label is judged as the stored Job's is, not unknown."""
    import json

    doctor.load(_two_gpu_machines)
    affinity = one_per_machine("ranks-4")
    term = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    term["labelSelector"] = {"matchLabels": {key: "ranks-4"}}
    job = ranks_job("ranks-4", doctor.now, ranks=4, gpus=1, affinity=affinity)
    job["metadata"] = {"name": "ranks-4"}
    job["spec"]["template"]["metadata"] = {}
    job.pop("status", None)
    planned = doctor.tmp_path / "job.yaml"
    planned.write_text(json.dumps(job))
    result = doctor.live("-o", "json", "--job-file", str(planned))
    found = _only(result.json())
    assert (found["basis"], found["code"]) == ("measured", "capacity.rules-block")
    assert result.exit_code == 2


def test_as_many_ranks_as_machines_kept_apart_fit(doctor: Doctor) -> None:
    """The same rule with two ranks: one on each GPU machine."""
    doctor.load(
        lambda now: [
            *_two_gpu_machines(now),
            ranks_job("ranks-2", now, ranks=2, gpus=1, affinity=one_per_machine("ranks-2")),
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert found["code"] == "capacity.fits"
    assert "worker x1 on gpu-1" in found["details"]
    assert "worker x1 on gpu-2" in found["details"]
    assert result.exit_code == 0


def test_a_running_program_the_job_must_stay_apart_from_takes_its_machine(
    doctor: Doctor,
) -> None:
    """The job stays apart from the namespace's cache (`app: cache`, on the hostname), and the
    cache runs on the only GPU machine."""
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
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine "
        "already running a program it may not share a machine with, and best machine cpu-1 is "
        "1 nvidia.com/gpu short."
    )
    assert result.exit_code == 2


def test_a_running_program_that_keeps_others_away_takes_its_machine(doctor: Doctor) -> None:
    """A pod of the namespace keeps every pod of a Job off its machine (its own required
    anti-affinity on `job-name` Exists; `satisfyExistingPodsAntiAffinity`); it runs on the
    only GPU machine."""
    keeps_away = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "job-name", "operator": "Exists"}]
                    },
                    "topologyKey": HOSTNAME,
                }
            ]
        }
    }
    doctor.load(
        lambda now: [
            *healthy(now),
            running_pod("exclusive-0", "gpu-1", now, affinity=keeps_away),
            ranks_job("solo", now, ranks=1, gpus=1),
        ]
    )
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert found["code"] == "capacity.rules-block"
    assert found["headline"].endswith(
        "can't start: 1 machine running a program that won't share its place with the job's "
        "programs, and best machine cpu-1 is 1 nvidia.com/gpu short."
    )
    assert (
        "worker: the required pod anti-affinity of exclusive-0 matches it: gpu-1 refused"
        in found["details"]
    )
    assert result.exit_code == 2


def test_another_space_s_program_that_keeps_others_away_takes_its_machine(
    doctor: Doctor,
) -> None:
    """A pod of another namespace keeps every Job's pods off its machine, whatever their
    namespace (`namespaceSelector: {}`): the scheduler counts every namespace's pods'
    anti-affinity (interpodaffinity/filtering.go `existingAntiAffinityCounts` over every
    NodeInfo); it runs on the only GPU machine."""
    keeps_away = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "job-name", "operator": "Exists"}]
                    },
                    "namespaceSelector": {},
                    "topologyKey": HOSTNAME,
                }
            ]
        }
    }
    doctor.load(
        lambda now: [
            *healthy(now),
            running_pod("exclusive-0", "gpu-1", now, namespace="batch", affinity=keeps_away),
            ranks_job("solo", now, ranks=1, gpus=1),
        ]
    )
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"].endswith(
        "can't start: 1 machine running a program that won't share its place with the job's "
        "programs, and best machine cpu-1 is 1 nvidia.com/gpu short."
    )
    assert (
        "worker: the required pod anti-affinity of batch/exclusive-0 matches it: gpu-1 refused"
        in found["details"]
    )
    assert result.exit_code == 2


def test_a_port_another_space_s_program_holds_takes_its_machine(doctor: Doctor) -> None:
    """A node exporter of another namespace runs on the host's network on the only GPU
    machine, its port 9100 stored with hostPort 9100 (pkg/apis/core/v1/defaults.go
    `defaultHostNetworkPorts`); the job runs on the host's network too (as RDMA jobs do) with
    a metrics port 9100: NodePorts counts every namespace's pods' ports (NodeInfo.UsedPorts)."""
    metrics = [{"containerPort": 9100, "hostPort": 9100, "protocol": "TCP"}]

    def objects(now: datetime) -> list[Obj]:
        exporter = running_pod("node-exporter-0", "gpu-1", now, namespace="monitoring")
        exporter["spec"]["hostNetwork"] = True
        exporter["spec"]["containers"][0]["ports"] = metrics
        job = ranks_job("solo", now, ranks=1, gpus=1, hostNetwork=True)
        job["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 9100}]
        return [*healthy(now), exporter, job]

    doctor.load(objects)
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"].endswith(
        "can't start: 1 machine already running a program that holds a port it needs "
        "(9100/TCP), and best machine cpu-1 is 1 nvidia.com/gpu short."
    )
    assert (
        "NodePorts: worker asks for hostPort 9100/TCP; held on gpu-1 by "
        "monitoring/node-exporter-0" in found["details"]
    )
    assert result.exit_code == 2


def test_a_rule_over_other_spaces_programs_is_unknown(doctor: Doctor) -> None:
    """An anti-affinity term over every namespace (`namespaceSelector: {}`) needs the pods of
    other namespaces, which doctor does not read: unknown, naming the rule, never ready."""
    everywhere = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "cache"}},
                    "namespaceSelector": {},
                    "topologyKey": HOSTNAME,
                }
            ]
        }
    }
    doctor.load(
        lambda now: [*healthy(now), ranks_job("solo", now, ranks=1, gpus=1, affinity=everywhere)]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "unknown",
        "cant-check",
        "capacity.rule-unchecked",
    )
    assert found["headline"] == (
        "Couldn't check the training job's rule about which programs it must stay apart from: "
        "it looks at programs of other spaces, which doctor doesn't read."
    )
    assert "get pods --all-namespaces -o wide -l 'app in (cache)'`" in found["remedy"]
    assert result.exit_code == 3


# -- preemption through ports and anti-affinity ------------------------------------------------


def _training_high(**fields: Any) -> Obj:
    """A PriorityClass (scheduling.k8s.io/v1) as kubernetes.io pod-priority-preemption writes
    one; preemptionPolicy defaults to PreemptLowerPriority."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "training-high"},
        "value": 1000,
        **fields,
    }


def _port_held(now: datetime, priority: int = 0, **policy: Any) -> list[Obj]:
    """An exporter of the namespace at `priority` holds hostPort 9400 on the only GPU machine;
    the job, of class training-high, asks for that port."""
    port = [{"containerPort": 9400, "hostPort": 9400, "protocol": "TCP"}]
    exporter = running_pod("exporter-0", "gpu-1", now, priority=priority)
    exporter["spec"]["containers"][0]["ports"] = port
    job = ranks_job("solo", now, ranks=1, gpus=1, priorityClassName="training-high")
    job["spec"]["template"]["spec"]["containers"][0]["ports"] = port
    return [*healthy(now), _training_high(**policy), exporter, job]


def test_a_higher_priority_job_preempts_the_program_holding_its_port(doctor: Doctor) -> None:
    """NodePorts refuses gpu-1 as Unschedulable, not UnschedulableAndUnresolvable, so
    preemption tries it (framework/preemption/preemption.go `nodesWherePreemptionMightHelp`)
    and SelectVictimsOnNode, the exporter of priority 0 removed, finds the port free: the job
    runs once the exporter is stopped, a warning that names it."""
    doctor.load(_port_held)
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["status"], found["basis"]) == (
        "capacity.preempts",
        "warn",
        "inferred",
    )
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can start only by stopping "
        "work of a lower priority: the program 'exporter-0' (holds port 9400/TCP on gpu-1)."
    )
    assert "would preempt pod train/exporter-0 (priority 0) on gpu-1" in found["details"]
    assert result.exit_code == 0


def test_a_port_held_at_the_job_s_priority_or_by_a_job_that_never_preempts_stays_held(
    doctor: Doctor,
) -> None:
    """Preemption stops only pods of a strictly lower priority, and never for a pod whose
    preemptionPolicy is Never (defaultpreemption `PodEligibleToPreemptOthers`)."""
    for build in (
        lambda now: _port_held(now, priority=1000),
        lambda now: _port_held(now, preemptionPolicy="Never"),
    ):
        doctor.load(build)
        result = doctor.live("-o", "json")
        assert _only(result.json())["code"] == "capacity.rules-block"
        assert result.exit_code == 2


def test_a_higher_priority_job_preempts_the_program_it_must_stay_apart_from(
    doctor: Doctor,
) -> None:
    """The job's required anti-affinity against the namespace's cache on the hostname fails as
    Unschedulable (interpodaffinity `satisfyPodAntiAffinity`), and InterPodAffinity's RemovePod
    forgets the cache of priority 0 that SelectVictimsOnNode removes: preempted, the job runs
    there. A cache on each machine leaves the job none until one is preempted; only the GPU
    machine's is."""
    stay_apart = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": HOSTNAME}
            ]
        }
    }

    def build(now: datetime) -> list[Obj]:
        return [
            *healthy(now),
            _training_high(),
            running_pod("cache-0", "gpu-1", now, labels={"app": "cache"}),
            running_pod("cache-1", "cpu-1", now, labels={"app": "cache"}),
            ranks_job(
                "solo",
                now,
                ranks=1,
                gpus=1,
                affinity=stay_apart,
                priorityClassName="training-high",
            ),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert found["code"] == "capacity.preempts"
    assert found["headline"].endswith(
        "can start only by stopping work of a lower priority: the program 'cache-0' (the job "
        "may not share a machine with it on gpu-1)."
    )
    assert result.exit_code == 0


# -- required inter-pod affinity ----------------------------------------------------------------


def test_a_job_that_must_run_beside_a_program_in_its_zone_has_no_gpu_there(
    doctor: Doctor,
) -> None:
    """The job must run in the zone of the dataset cache (required pod affinity on the zone;
    `satisfyPodAffinity`); the cache runs on cpu-1 in zone b, the GPUs are in zone a."""
    beside_cache = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "dataset-cache"}}, "topologyKey": ZONE}
            ]
        }
    }
    doctor.load(
        lambda now: [
            *_in_zones(now, {"cpu-1": "zone-b", "gpu-1": "zone-a"}),
            running_pod("dataset-cache-0", "cpu-1", now, labels={"app": "dataset-cache"}),
            ranks_job("near-cache", now, ranks=1, gpus=1, affinity=beside_cache),
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert found["code"] == "capacity.rules-block"
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: it must run in "
        "the same zone as the programs it must run beside."
    )
    assert result.exit_code == 2


def test_ranks_that_must_share_a_zone_may_start_one_but_not_split(doctor: Doctor) -> None:
    """Two ranks of two GPUs that must share a zone with each other (affinity to the Job's own
    pods): none runs yet, so the first may start a zone (`satisfyPodAffinity`: a pod matching
    its own terms), the second must follow it; each zone's one GPU machine holds one."""
    together = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"job-name": "pair"}}, "topologyKey": ZONE}
            ]
        }
    }
    doctor.load(
        lambda now: [
            *_in_zones(now, {"cpu-1": "zone-a", "gpu-1": "zone-a"}),
            zoned_node("gpu-2", "zone-b", "16", "64Gi", gpus=2),
            ranks_job("pair", now, ranks=2, gpus=2, affinity=together),
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert found["code"] == "capacity.rules-block"
    assert found["headline"].endswith(
        "can't start: 1 of its 2 programs fit; the next must run in the same zone as its other "
        "programs."
    )
    assert result.exit_code == 2


# -- topology spread ----------------------------------------------------------------------------


def _spread(when: str) -> list[Obj]:
    """One rank per zone at most beyond the emptiest (website content/en/docs/concepts/
    scheduling-eviction/topology-spread-constraints.md, "Example: one TopologySpreadConstraint",
    with the Job's own label)."""
    return [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"job-name": "spread"}},
        }
    ]


def _spread_cluster(now: datetime, when: str) -> list[Obj]:
    """Zone a's gpu-1 has both GPUs free; zone b's gpu-2 has its GPUs held by a notebook."""
    notebook = running_pod(
        "notebook-0", "gpu-2", now, namespace="research", labels={"app": "notebook"}
    )
    notebook["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "2"
    return [
        *_in_zones(now, {"cpu-1": "zone-a", "gpu-1": "zone-a"}),
        zoned_node("gpu-2", "zone-b", "16", "64Gi", gpus=2),
        notebook,
        ranks_job("spread", now, ranks=2, gpus=1, topologySpreadConstraints=_spread(when)),
    ]


def test_spreading_over_zones_where_one_zone_is_full_does_not_start(doctor: Doctor) -> None:
    """Two ranks spread over zones with maxSkew 1 and DoNotSchedule (podtopologyspread
    `Filter`: existing + self - minimum <= maxSkew): the first goes to zone a, the second may
    not (2 - 0 > 1), and zone b has no room: both fit on gpu-1 by room, the rule refuses."""
    doctor.load(lambda now: _spread_cluster(now, "DoNotSchedule"))
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "inferred")
    assert found["headline"].endswith(
        "can't start: 1 of its 2 programs fit; the next would put more than 1 program in one "
        "zone beyond the zone with the fewest."
    )
    assert result.exit_code == 2


def test_spreading_that_may_be_unmet_is_no_filter(doctor: Doctor) -> None:
    """`whenUnsatisfiable: ScheduleAnyway` only scores: both ranks fit on gpu-1."""
    doctor.load(lambda now: _spread_cluster(now, "ScheduleAnyway"))
    result = doctor.live("-o", "json")
    assert _only(result.json())["code"] == "capacity.fits"
    assert result.exit_code == 0


def test_spreading_with_an_empty_selector_counts_every_program_of_the_namespace(
    doctor: Doctor,
) -> None:
    """`labelSelector: {}` selects everything (apimachinery pkg/apis/meta/v1/helpers.go
    `LabelSelectorAsSelector`: no requirements is `labels.Everything()`), so the scheduler counts
    every pod of the namespace per zone and the incoming pod matches itself (podtopologyspread
    common.go `filterTopologySpreadConstraints`, `countPodsMatchSelector`; filtering.go
    `Filter`). The namespace's jobs-manager and mysql run on gpu-1 in zone b, zone a holds
    none: the rank fits only on gpu-1, where 2 + 1 - 0 > maxSkew 1."""

    def build(now: datetime) -> list[Obj]:
        objects = _in_zones(now, {"cpu-1": "zone-a", "gpu-1": "zone-b"})
        for pod in (o for o in objects if o["kind"] == "Pod"):
            pod["spec"]["nodeName"] = "gpu-1"
        spread = [{**_spread("DoNotSchedule")[0], "labelSelector": {}}]
        job = ranks_job("spread", now, ranks=1, gpus=1, topologySpreadConstraints=spread)
        return [*objects, job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"], found["headline"]) == (
        "fail",
        "inferred",
        "capacity.rules-block",
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: it would put "
        "more than 1 program in one zone beyond the zone with the fewest.",
    )
    assert (
        "worker: topology spread on topology.kubernetes.io/zone, maxSkew 1, minDomains 1: "
        "counts {'zone-a': 0, 'zone-b': 2}" in found["details"]
    )
    assert result.exit_code == 2


def test_spreading_without_a_selector_counts_nothing(doctor: Doctor) -> None:
    """No `labelSelector` is a nil selector, which selects nothing (`LabelSelectorAsSelector`:
    `labels.Nothing()`): no pod is counted, the rank itself neither, and the skew never grows."""

    def build(now: datetime) -> list[Obj]:
        objects = _in_zones(now, {"cpu-1": "zone-a", "gpu-1": "zone-b"})
        for pod in (o for o in objects if o["kind"] == "Pod"):
            pod["spec"]["nodeName"] = "gpu-1"
        spread = [{k: v for k, v in _spread("DoNotSchedule")[0].items() if k != "labelSelector"}]
        job = ranks_job("spread", now, ranks=1, gpus=1, topologySpreadConstraints=spread)
        return [*objects, job]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _only(result.json())["code"] == "capacity.fits"
    assert result.exit_code == 0


# -- a bound volume's node affinity ---------------------------------------------------------------


def _volume(
    now: datetime, zones: dict[str, str], zone: str | None, modes: tuple[str, ...]
) -> list[Obj]:
    """The healthy namespace in `zones`, and the bound claim `checkpoints` of an EBS volume in
    `zone` (None: usable in every zone)."""
    volume = zonal_volume("pvc-1f2e3d", "checkpoints", zone or "", modes)
    if zone is None:
        del volume["spec"]["nodeAffinity"]
    return [*_in_zones(now, zones), bound_claim("checkpoints", "pvc-1f2e3d", modes), volume]


def _checkpoints(
    now: datetime, zones: dict[str, str], zone: str | None, modes: tuple[str, ...], ranks: int = 1
) -> list[Obj]:
    """`_volume`, and a job of `ranks` one-GPU ranks that mounts it."""
    job = ranks_job("ckpt", now, ranks=ranks, gpus=1, volumes=claim_volume("checkpoints"))
    return [*_volume(now, zones, zone, modes), job]


def test_a_volume_in_another_zone_than_the_gpus_keeps_the_job_off_them(doctor: Doctor) -> None:
    """The job's checkpoints are on a volume in zone b (its PersistentVolume's node affinity,
    volumebinding `checkBoundClaims`); the GPU machine is in zone a."""
    doctor.load(
        lambda now: _checkpoints(
            now, {"cpu-1": "zone-b", "gpu-1": "zone-a"}, "zone-b", ("ReadWriteMany",)
        )
    )
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine "
        "can't reach its volume 'checkpoints', and best machine cpu-1 is 1 nvidia.com/gpu "
        "short."
    )
    assert found["remedy"] == (
        "Run the training job where its volume 'checkpoints' can be used (cpu-1), or keep its "
        "data on storage the job's machines can reach."
    )
    assert (
        "PersistentVolume pvc-1f2e3d (claim checkpoints): node affinity refuses gpu-1"
        in (found["details"])
    )
    assert "/api/v1/persistentvolumes/pvc-1f2e3d" in {r.path for r in doctor.server.requests()}
    assert result.exit_code == 2


def test_a_volume_no_machine_can_reach_leaves_no_machine(doctor: Doctor) -> None:
    doctor.load(
        lambda now: _checkpoints(
            now, {"cpu-1": "zone-a", "gpu-1": "zone-a"}, "zone-c", ("ReadWriteMany",)
        )
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.no-eligible-machine", "measured")
    assert found["headline"] == (
        "No machine may run a training job: 2 machines can't reach its volume 'checkpoints'."
    )
    assert result.exit_code == 2


def test_a_claim_waiting_for_its_first_program_is_no_constraint_yet(doctor: Doctor) -> None:
    """A WaitForFirstConsumer claim of a class that makes volumes anywhere is bound where the
    first pod lands, to a volume made there: no volume to read yet."""

    def build(now: datetime) -> list[Obj]:
        claim = bound_claim("checkpoints", "", ("ReadWriteOnce",), storage_class="local-wffc")
        del claim["spec"]["volumeName"]
        claim["status"] = {"phase": "Pending"}
        wait = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local-wffc"},
            "provisioner": "ebs.csi.aws.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        return [
            *healthy(now),
            claim,
            wait,
            ranks_job("ckpt", now, ranks=1, gpus=1, volumes=claim_volume("checkpoints")),
        ]

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _only(result.json())["code"] == "capacity.fits"
    paths = {r.path for r in doctor.server.requests()}
    assert not any("/persistentvolumes" in p for p in paths)
    assert "/api/v1/namespaces/train/persistentvolumeclaims/checkpoints" in paths, "precondition"


# -- a claim waiting for its first program --------------------------------------------------------


_ZONES = {"cpu-1": "zone-b", "gpu-1": "zone-a"}


def _waiting_for_first(
    now: datetime, storage_type: Obj, *volumes: Obj, annotations: dict[str, str] | None = None
) -> list[Obj]:
    """The healthy namespace, its GPU machine in zone a and cpu-1 in zone b, the claim
    `scratch` of `storage_type` not bound yet, `volumes`, and a one-GPU job that mounts it."""
    claim = waiting_claim("scratch", storage_type["metadata"]["name"], "500Gi")
    claim["metadata"]["annotations"] = annotations or {}
    job = ranks_job("ckpt", now, ranks=1, gpus=1, volumes=claim_volume("scratch"))
    return [*_in_zones(now, _ZONES), storage_type, claim, *volumes, job]


def _ebs_class(*zones: str) -> Obj:
    """The EBS CSI driver's class that waits for the first pod, making volumes only in `zones`
    when any are given (website content/en/docs/concepts/storage/storage-classes.md "Allowed
    topologies")."""
    storage_type: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "ebs-b"},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    if zones:
        term = {"matchLabelExpressions": [{"key": ZONE, "values": list(zones)}]}
        storage_type["allowedTopologies"] = [term]
    return storage_type


def test_a_local_claim_keeps_the_job_where_a_free_volume_is(doctor: Doctor) -> None:
    """The class makes no volumes and the one free volume that fits is local to cpu-1:
    kube-scheduler's VolumeBinding refuses gpu-1 (binder.go `FindPodVolumes`:
    `findMatchingVolumes` finds no volume whose node affinity admits it, and
    `checkVolumeProvisions` refuses `kubernetes.io/no-provisioner`: "node(s) didn't find
    available persistent volumes to bind"), and cpu-1 has no GPU. The pod would wait forever."""
    doctor.load(
        lambda now: _waiting_for_first(
            now, local_class(), local_volume("local-cpu", machine="cpu-1")
        )
    )
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine "
        "can't reach free storage made in advance for its volume 'scratch', and best machine "
        "cpu-1 is 1 nvidia.com/gpu short."
    )
    assert found["remedy"] == (
        "Run the training job where free storage of type 'local-storage' fits its volume "
        "'scratch' (cpu-1), or ask your cluster admin for such storage on the machines it can "
        "use."
    )
    assert (
        "PersistentVolumeClaim scratch: not bound, storageclass local-storage (provisioner "
        "kubernetes.io/no-provisioner, WaitForFirstConsumer): no Available PersistentVolume "
        "that fits it has a node affinity admitting gpu-1 (volumebinding: node(s) didn't find "
        "available persistent volumes to bind)" in found["details"]
    )
    assert result.exit_code == 2


def test_a_local_claim_with_a_free_volume_on_the_gpu_machine_fits(doctor: Doctor) -> None:
    """The free volume that fits is local to gpu-1 (a smaller one there does not fit, and one
    of cpu-1 does not reach it): the job fits there."""
    doctor.load(
        lambda now: _waiting_for_first(
            now,
            local_class(),
            local_volume("local-small", "100Gi"),
            local_volume("local-cpu", machine="cpu-1"),
            local_volume("local-gpu"),
        )
    )
    result = doctor.live("-o", "json")
    assert _only(result.json())["code"] == "capacity.fits"
    assert result.exit_code == 0


def test_a_class_that_makes_volumes_in_one_zone_keeps_the_job_there(doctor: Doctor) -> None:
    """The class makes volumes only in zone b (`checkVolumeProvisions`:
    `MatchTopologySelectorTerms(class.AllowedTopologies, node labels)`), the GPU machine is in
    zone a, and no volume made in advance fits the claim: gpu-1 is refused."""
    doctor.load(lambda now: _waiting_for_first(now, _ebs_class("zone-b")))
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine "
        "can't have its volume 'scratch' made there (its storage type makes volumes only in "
        "zone zone-b), and best machine cpu-1 is 1 nvidia.com/gpu short."
    )
    assert found["remedy"] == (
        "Run the training job in zone zone-b, where its volume 'scratch' can be made (cpu-1), "
        "or give the volume 'scratch' a storage type that makes volumes where the job can run."
    )
    assert "/api/v1/persistentvolumes" in {r.path for r in doctor.server.requests()}
    assert result.exit_code == 2


def test_a_free_volume_of_the_class_lets_the_job_outside_its_zones(doctor: Doctor) -> None:
    """A free volume of the class made in advance in zone a fits the claim: the scheduler
    binds it before it asks the class for one (`findMatchingVolumes` first), so gpu-1 fits."""

    def build(now: datetime) -> list[Obj]:
        volume = local_volume("made-a", storage_class="ebs-b")
        volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] = [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]}
        ]
        return _waiting_for_first(now, _ebs_class("zone-b"), volume)

    doctor.load(build)
    result = doctor.live("-o", "json")
    assert _only(result.json())["code"] == "capacity.fits"
    assert result.exit_code == 0


def test_a_claim_whose_volume_is_being_made_for_another_machine_keeps_the_job_there(
    doctor: Doctor,
) -> None:
    """The scheduler already asked for the claim's volume on cpu-1 (annotation
    `volume.kubernetes.io/selected-node`): `FindPodVolumes` refuses every other machine."""
    doctor.load(
        lambda now: _waiting_for_first(
            now,
            _ebs_class(),
            annotations={"volume.kubernetes.io/selected-node": "cpu-1"},
        )
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine "
        "can't use its volume 'scratch', which is being made for cpu-1, and best machine "
        "cpu-1 is 1 nvidia.com/gpu short."
    )
    assert result.exit_code == 2


def test_volumes_that_cannot_be_listed_leave_a_local_claim_s_machines_unknown(
    doctor: Doctor,
) -> None:
    """Which machines a free volume reaches needs the list of volumes: not read, the rule is
    unknown, never a fit."""
    doctor.load(lambda now: _waiting_for_first(now, local_class(), local_volume("local-gpu")))
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/persistentvolumes$", method="GET")
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "unknown",
        "cant-check",
        "capacity.cant-read",
    )
    assert found["remedy"].endswith(" auth can-i list persistentvolumes` answers yes once you may.")
    assert result.exit_code == 3


def test_a_storage_type_that_cannot_be_read_leaves_a_waiting_claim_s_machines_unknown(
    doctor: Doctor,
) -> None:
    """Whether the claim waits for its first program, and where its volume can be made, is its
    class's to say: not read, the rule is unknown, never a fit."""
    doctor.load(lambda now: _waiting_for_first(now, _ebs_class("zone-b")))
    doctor.server.inject(
        Fault.FORBIDDEN, r"^/apis/storage.k8s.io/v1/storageclasses/ebs-b$", method="GET"
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["code"]) == ("unknown", "capacity.cant-read")
    assert found["remedy"].endswith(" auth can-i get storageclasses` answers yes once you may.")
    assert result.exit_code == 3


def test_a_bound_volume_that_is_gone_refuses_every_machine(doctor: Doctor) -> None:
    """A bound claim whose PersistentVolume does not exist (volumebinding: "pvc(s) bound to
    non-existent pv(s)"): measured, every machine."""
    doctor.load(
        lambda now: [
            o
            for o in _checkpoints(now, {}, "zone-a", ("ReadWriteMany",))
            if o["kind"] != "PersistentVolume"
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.no-eligible-machine", "measured")
    assert found["headline"] == (
        "No machine may run a training job: its volume 'checkpoints' is tied to storage that "
        "doesn't exist."
    )
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "fault", [Fault.FORBIDDEN, Fault.SERVER_ERROR, Fault.MALFORMED, Fault.DELAY], ids=str
)
def test_a_volume_that_cannot_be_read_is_unknown(doctor: Doctor, fault: Fault) -> None:
    """The volume could tie the job to some machines: not read, the verdict is unknown and
    the remedy names the read (Forbidden: the permission, with the `auth can-i` that shows
    it)."""
    doctor.load(
        lambda now: _checkpoints(
            now, {"cpu-1": "zone-a", "gpu-1": "zone-a"}, "zone-a", ("ReadWriteMany",)
        )
    )
    doctor.server.inject(fault, r"^/api/v1/persistentvolumes/pvc-1f2e3d$", delay=3)
    result = doctor.live("-o", "json", "--request-timeout", "1")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "unknown",
        "cant-check",
        "capacity.cant-read",
    )
    if fault is Fault.FORBIDDEN:
        assert found["headline"] == (
            "Couldn't check whether there is room for a training job: no permission to read "
            "the storage behind the dataset volumes."
        )
        assert "auth can-i get persistentvolumes`" in found["remedy"]
    assert result.exit_code == 3


def _zone_labelled(now: datetime, zones: dict[str, str], labels: dict[str, str]) -> list[Obj]:
    """The healthy namespace in `zones`, and the bound claim `checkpoints` of a volume that
    carries its zone in labels alone, no node affinity: a PersistentVolume made by hand or by
    an in-tree provisioner before node affinity (the PersistentVolumeLabel admission controller
    set them; website content/en/docs/reference/labels-annotations-taints/_index.md
    "topology.kubernetes.io/zone": "on PersistentVolume: topology-aware volume provisioning")."""
    volume = zonal_volume("pv-nfs-a", "checkpoints", "", ("ReadWriteMany",))
    del volume["spec"]["nodeAffinity"]
    volume["metadata"]["labels"] = labels
    job = ranks_job("ckpt", now, ranks=1, gpus=1, volumes=claim_volume("checkpoints"))
    claim = bound_claim("checkpoints", "pv-nfs-a", ("ReadWriteMany",))
    return [*_in_zones(now, zones), claim, volume, job]


def test_a_volume_labelled_with_another_zone_leaves_no_machine(doctor: Doctor) -> None:
    """The volume is labelled zone us-east-1a, every machine is in us-east-1b: VolumeZone
    refuses each (volumezone/volume_zone.go `Filter`: UnschedulableAndUnresolvable, "node(s)
    had no available volume zone"). Certain."""
    doctor.load(
        lambda now: _zone_labelled(
            now,
            {"cpu-1": "us-east-1b", "gpu-1": "us-east-1b"},
            {ZONE: "us-east-1a", "topology.kubernetes.io/region": "us-east-1"},
        )
    )
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "fail",
        "measured",
        "capacity.no-eligible-machine",
    )
    assert found["headline"] == (
        "No machine may run a training job: 2 machines can't reach its volume 'checkpoints' "
        "(in zone us-east-1a, region us-east-1)."
    )
    assert found["remedy"] == (
        "Run the training job on machines in zone us-east-1a, region us-east-1, where its "
        "volume 'checkpoints' is, or keep its data on storage the job's machines can reach."
    )
    assert (
        "PersistentVolume pv-nfs-a (claim checkpoints) labelled topology.kubernetes.io/zone="
        "us-east-1a, topology.kubernetes.io/region=us-east-1: cpu-1, gpu-1 refused "
        "(volumezone: node(s) had no available volume zone)" in found["details"]
    )
    assert result.exit_code == 2


def test_a_volume_labelled_with_several_zones_takes_the_machines_outside_them(
    doctor: Doctor,
) -> None:
    """A beta zone label naming two zones (`__`, cloud-provider volume/helpers
    `LabelZonesToSet`), matched against the machines' GA label (`translateToGALabel`): gpu-1
    in zone c is refused, cpu-1 in zone a is not, and has no GPU."""
    doctor.load(
        lambda now: _zone_labelled(
            now,
            {"cpu-1": "zone-a", "gpu-1": "zone-c"},
            {"failure-domain.beta.kubernetes.io/zone": "zone-a__zone-b"},
        )
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine "
        "can't reach its volume 'checkpoints' (in zone zone-a or zone-b), and best machine "
        "cpu-1 is 1 nvidia.com/gpu short."
    )
    assert result.exit_code == 2


def test_a_volume_zone_is_no_filter_on_machines_without_zones(doctor: Doctor) -> None:
    """Machines with no zone or region label (a single-zone cluster) are never refused by it."""
    doctor.load(lambda now: _zone_labelled(now, {}, {ZONE: "us-east-1a"}))
    result = doctor.live("-o", "json")
    assert _only(result.json())["code"] == "capacity.fits"
    assert result.exit_code == 0


# -- volumes one program or one machine at a time --------------------------------------------------


def test_a_one_program_volume_in_use_refuses_every_machine(doctor: Doctor) -> None:
    """A ReadWriteOncePod claim another pod uses (volumerestrictions: "node has pod using
    PersistentVolumeClaim with the same name and ReadWriteOncePod access mode")."""
    doctor.load(
        lambda now: [
            *_checkpoints(now, {}, None, ("ReadWriteOncePod",)),
            running_pod("notebook-0", "cpu-1", now, volumes=claim_volume("checkpoints")),
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.no-eligible-machine", "measured")
    assert found["headline"] == (
        "No machine may run a training job: its volume 'checkpoints' may be used by one "
        "program at a time, and 'notebook-0' uses it."
    )
    assert result.exit_code == 2


def _running(job: Obj, now: datetime, machine: str, suffix: str = "0-x7k2p") -> Obj:
    """A pod the Job controller made, bound to `machine`, running and ready (pkg/kubelet/
    status/status_manager.go: `PodScheduled` and `Ready` True; kubelet_pods.go
    `convertToAPIContainerStatuses`)."""
    pod = job_pod(job, now, suffix=suffix, node_name=machine, age=timedelta(minutes=10))
    started = ts(now - timedelta(minutes=9))
    pod["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "True"},
        {"type": "Ready", "status": "True", "lastTransitionTime": started},
    ]
    pod["status"]["containerStatuses"] = running_containers(
        pod["metadata"]["name"], pod["spec"]["containers"], started
    )
    return pod


def test_a_one_program_volume_the_running_job_uses_is_a_wait_for_it(doctor: Doctor) -> None:
    """The newest training job runs, its one rank on gpu-1 mounting its ReadWriteOncePod
    claim. A next run of it is refused by volumerestrictions/volume_restrictions.go `Filter`
    with `Unschedulable` (ErrReasonReadWriteOncePodConflict), not `UnschedulableAndUnresolvable`:
    it waits for the running job, like room the job holds (docs/scheduling.md), never a machine
    that is missing."""

    def build(now: datetime) -> list[Obj]:
        objects = _checkpoints(now, {}, None, ("ReadWriteOncePod",))
        job = find(objects, "Job", "ckpt")
        job["status"] = {"active": 1, "ready": 1}
        return [*objects, _running(job, now, "gpu-1")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "warn",
        "measured",
        "capacity.volume-held-by-running-job",
    )
    assert found["headline"] == (
        "Training can run, but its volume 'checkpoints' may be used by one program at a time "
        "and is in use by the running training job 'ckpt'; the next training job waits for it."
    )
    assert found["remedy"] == (
        "Wait for the running training job 'ckpt' to finish, or give the training job a volume "
        "of its own."
    )
    headline = result.json()["headline"]
    assert (headline["rule"], headline["code"]) == (
        "waiting-for-running-job",
        "capacity.volume-held-by-running-job",
    )
    assert result.exit_code == 0


def test_a_one_program_volume_another_running_job_uses_is_a_wait_for_it(doctor: Doctor) -> None:
    """An older training job still runs on cpu-1 with the claim the newest job mounts: the
    newest waits for it (volumerestrictions `Filter`: `Unschedulable`)."""

    def build(now: datetime) -> list[Obj]:
        mounts = claim_volume("checkpoints")
        older = ranks_job("prep", now, ranks=1, gpus=0, age=timedelta(hours=1), volumes=mounts)
        older["status"] = {"active": 1, "ready": 1}
        objects = _checkpoints(now, {}, None, ("ReadWriteOncePod",))
        return [*objects, older, _running(older, now, "cpu-1")]

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "warn",
        "measured",
        "capacity.volume-held-by-running-job",
    )
    assert found["headline"] == (
        "Training can run, but its volume 'checkpoints' may be used by one program at a time "
        "and is in use by the running training job 'prep'; the next training job waits for it."
    )
    assert result.exit_code == 0


def test_ranks_sharing_a_one_program_volume_cannot_all_run(doctor: Doctor) -> None:
    """Two ranks mounting one ReadWriteOncePod claim: one at a time, so a two-rank run never
    meets. Certain."""

    doctor.load(lambda now: _checkpoints(now, {}, None, ("ReadWriteOncePod",), ranks=2))
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"].endswith(
        "can't start: 1 of its 2 programs fit; the next can't use the volume 'checkpoints' "
        "while another of its programs does."
    )
    assert result.exit_code == 2


def test_a_disk_attached_to_another_machine_keeps_the_job_there(doctor: Doctor) -> None:
    """A ReadWriteOnce disk attached where the manager runs (cpu-1): a pod elsewhere is placed
    and then waits on the attach-detach controller's Multi-Attach refusal (pkg/volume/util
    `IsMultiAttachAllowed`: RWO only). Inferred, not the scheduler's."""

    def build(now: datetime) -> list[Obj]:
        objects = _checkpoints(now, {}, None, ("ReadWriteOnce",))
        find(objects, "Pod", "jobs-manager-abc12")["spec"]["volumes"] += claim_volume("checkpoints")
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "inferred")
    assert found["headline"] == (
        "A training job of 2 CPUs, 8 GiB memory, 1 nvidia.com/gpu can't start: 1 machine can't "
        "attach its volume 'checkpoints', which is attached to cpu-1 and can be attached to one "
        "machine at a time, and best machine cpu-1 is 1 nvidia.com/gpu short."
    )
    assert result.exit_code == 2


def test_ranks_sharing_a_disk_must_share_a_machine(doctor: Doctor) -> None:
    """Two ranks of two GPUs mounting one ReadWriteOnce disk: both on one machine, and no
    machine has four GPUs."""
    doctor.load(
        lambda now: [
            *_volume(now, {}, None, ("ReadWriteOnce",)),
            node("gpu-2", "16", "64Gi", gpus=2),
            ranks_job("ckpt", now, ranks=2, gpus=2, volumes=claim_volume("checkpoints")),
        ]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "inferred")
    assert found["headline"].endswith(
        "can't start: 1 of its 2 programs fit; the next must run on the machine its other "
        "programs use the volume 'checkpoints' on (it can be attached to one machine at a time)."
    )
    assert result.exit_code == 2


# -- devices of dynamic resource allocation ------------------------------------------------------


def _devices(now: datetime, ranks: int, expression: str | None = None) -> list[Obj]:
    """Two machines with two devices each; a claim of another namespace holds gpu-2's."""
    return [
        *healthy(now),
        node("gpu-2", "16", "64Gi"),
        device_class() if expression is None else device_class(expression),
        gpu_slice("gpu-1", 2),
        gpu_slice("gpu-2", 2),
        allocated_claim("render-gpus", "research", "gpu-2", ["gpu-0", "gpu-1"]),
        claim_template("one-gpu"),
        ranks_job("dra", now, ranks=ranks, gpus=0, **claims_from_template("one-gpu")),
    ]


def test_devices_allocated_elsewhere_leave_too_few_for_the_ranks(doctor: Doctor) -> None:
    """Four ranks, each claiming one device from a ResourceClaimTemplate; of four devices two
    are allocated to another claim (dynamicresources: a device in any claim's
    status.allocation is taken). Certain: four asked, two free."""
    doctor.load(lambda now: _devices(now, 4))
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["code"], found["basis"]) == ("capacity.rules-block", "measured")
    assert found["headline"].endswith(
        f"can't start: 2 of its 4 programs fit; the next needs 1 {DRIVER} device and the most "
        f"free on one machine is 0 {DRIVER} devices (gpu-2)."
    )
    assert found["remedy"] == (
        "Free what it needs on the machines its rules allow, or add machines that have it."
    )
    assert f"gpu-2: 2 {DRIVER} devices (2 allocated)" in found["details"]
    paths = {r.path for r in doctor.server.requests()}
    assert {
        "/apis/resource.k8s.io/v1/resourceslices",
        "/apis/resource.k8s.io/v1/resourceclaims",
        "/apis/resource.k8s.io/v1/deviceclasses",
        "/apis/resource.k8s.io/v1/namespaces/train/resourceclaimtemplates/one-gpu",
    } <= paths
    assert result.exit_code == 2


def test_ranks_within_the_free_devices_fit(doctor: Doctor) -> None:
    doctor.load(lambda now: _devices(now, 2))
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert found["code"] == "capacity.fits"
    assert "worker x2 on gpu-1" in found["details"]
    assert result.exit_code == 0


def test_a_device_rule_no_device_meets_leaves_none(doctor: Doctor) -> None:
    """A DeviceClass selecting by a version attribute (the Kubernetes DRA documentation's
    `isGreaterThan(semver(...))` form): dra-example-driver's devices report driverVersion 1.0.0,
    so none is newer, and no rank gets a device (measured)."""
    expression = (
        f"device.driver == '{DRIVER}' && "
        f"device.attributes['{DRIVER}'].driverVersion.isGreaterThan(semver('1.0.0'))"
    )
    doctor.load(lambda now: _devices(now, 2, expression))
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.rules-block",
        "measured",
    )
    assert found["headline"].endswith(
        f"can't start: 0 of its 2 programs fit; the next needs 1 {DRIVER} device and the most "
        f"free on one machine is 0 {DRIVER} devices (gpu-2)."
    )
    assert result.exit_code == 2


def test_devices_on_a_cluster_that_serves_no_device_claims_are_unknown(doctor: Doctor) -> None:
    """A server without resource.k8s.io/v1 (before 1.34, or turned off): discovery says so, no
    device read is made, and the job's device claims are unknown."""
    doctor.server.disable("resource.k8s.io")
    doctor.load(
        lambda now: [o for o in _devices(now, 2) if "resource.k8s.io" not in o["apiVersion"]]
    )
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["code"]) == ("unknown", "capacity.rule-unchecked")
    assert (
        "the cluster doesn't offer devices the way its programs ask for them" in found["headline"]
    )
    assert not any("resource.k8s.io" in r.path for r in doctor.server.requests())
    assert result.exit_code == 3


@pytest.mark.parametrize(
    ("path", "permission"),
    [
        (r"^/apis/resource\.k8s\.io/v1/resourceslices$", "list resourceslices`"),
        (r"^/apis/resource\.k8s\.io/v1/resourceclaims$", "list resourceclaims --all-namespaces`"),
        (r"^/apis/resource\.k8s\.io/v1/deviceclasses$", "list deviceclasses`"),
        (r"/resourceclaimtemplates/one-gpu$", "get resourceclaimtemplates`"),
    ],
    ids=["slices", "claims", "classes", "template"],
)
def test_a_device_read_not_permitted_is_unknown_naming_the_permission(
    doctor: Doctor, path: str, permission: str
) -> None:
    doctor.load(lambda now: _devices(now, 2))
    doctor.server.inject(Fault.FORBIDDEN, path)
    result = doctor.live("-o", "json")
    found = _only(result.json())
    assert (found["status"], found["basis"], found["code"]) == (
        "unknown",
        "cant-check",
        "capacity.cant-read",
    )
    assert f"auth can-i {permission}" in found["remedy"]
    assert result.exit_code == 3


def _shared_claim(*requests: str, **metadata: Any) -> Obj:
    """A ResourceClaim the training job's pods name directly (`resourceClaimName`), as its
    owner creates it: one device of the class per request, no status until the scheduler
    allocates it (staging/src/k8s.io/api/resource/v1/types.go `ResourceClaim`; website content/
    en/docs/concepts/scheduling-eviction/dynamic-resource-allocation.md, "ResourceClaim")."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "train", **metadata},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": name,
                        "exactly": {
                            "deviceClassName": DRIVER,
                            "allocationMode": "ExactCount",
                            "count": 1,
                        },
                    }
                    for name in requests
                ]
            }
        },
    }


def _one_device_each(now: datetime, *extra: Obj, claims: list[Obj]) -> list[Obj]:
    """gpu-1 and gpu-2 with one dra-example-driver device each, and a one-rank job whose pod
    claims `claims`."""
    return [
        *healthy(now),
        node("gpu-2", "16", "64Gi"),
        device_class(),
        gpu_slice("gpu-1", 1),
        gpu_slice("gpu-2", 1),
        *extra,
        ranks_job("dra", now, ranks=1, gpus=0, resourceClaims=claims),
    ]


def test_a_shared_claim_of_two_devices_needs_two_on_one_machine(doctor: Doctor) -> None:
    """A shared claim with two requests of one device each: the allocator gives each request
    its own device (staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/
    allocator_stable.go `allocateDevice` skips a device `deviceInUse` says is taken, the
    devices picked for earlier requests included). No machine has two."""
    shared = [{"name": "gpu", "resourceClaimName": "shared"}]
    doctor.load(lambda now: _one_device_each(now, _shared_claim("a", "b"), claims=shared))
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.no-eligible-machine",
        "measured",
    )
    assert found["headline"] == (
        "No machine may run a training job: 3 machines lacking the free devices its shared "
        "device claim 'shared' needs."
    )
    assert result.exit_code == 2


def test_a_pod_s_own_device_and_a_shared_one_need_two_on_one_machine(doctor: Doctor) -> None:
    """The pod claims one device from a template and shares a claim of one more: the scheduler
    allocates all of a pod's claims on the machine it tries, each device once (pkg/scheduler/
    framework/plugins/dynamicresources/dynamicresources.go `Filter`, its `claimsToAllocate`;
    allocator_stable.go `deviceInUse`). No machine has two."""
    claims = [
        {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
        {"name": "shared", "resourceClaimName": "shared"},
    ]
    doctor.load(
        lambda now: _one_device_each(
            now, _shared_claim("gpu"), claim_template("one-gpu"), claims=claims
        )
    )
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.rules-block",
        "measured",
    )
    assert found["headline"] == (
        f"A training job of 2 CPUs, 8 GiB memory, 1 {DRIVER} device can't start: 1 machine "
        "lacking the free devices "
        f"its shared device claim 'shared' needs, and best machine gpu-1 is 1 {DRIVER} device "
        "short."
    )
    assert f"gpu-1: 1 {DRIVER} device (0 allocated, 1 for ResourceClaim shared)" in found["details"]
    assert result.exit_code == 2


def test_a_shared_claim_being_deleted_leaves_no_machine(doctor: Doctor) -> None:
    """The shared claim is allocated, and being deleted: its finalizer keeps it while a pod
    still uses it. kube-scheduler refuses every new pod that names it (dynamicresources.go
    `foreachPodResourceClaim`: `resourceclaim %q is being deleted`; PreFilter returns
    UnschedulableAndUnresolvable)."""

    def build(now: datetime) -> list[Obj]:
        claim = allocated_claim("shared", "train", "gpu-1", ["gpu-0"])
        claim["metadata"]["deletionTimestamp"] = ts(now - timedelta(minutes=1))
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        return _one_device_each(now, claim, claims=[{"name": "gpu", "resourceClaimName": "shared"}])

    doctor.load(build)
    result = doctor.live("-o", "json", "-v")
    found = _only(result.json())
    assert (found["status"], found["code"], found["basis"]) == (
        "fail",
        "capacity.no-eligible-machine",
        "measured",
    )
    assert found["headline"] == (
        "No machine may run a training job: its device claim 'shared' is being deleted."
    )
    assert (
        'ResourceClaim shared: resourceclaim "shared" is being deleted (dynamicresources)'
        in (found["details"])
    )
    assert result.exit_code == 2
