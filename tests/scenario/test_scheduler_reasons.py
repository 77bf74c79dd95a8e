"""kube-scheduler's FailedScheduling words on a training pod, read as the scheduler writes them.

Two shapes of its message decide what doctor says. A machine the pod may not use (closed,
reserved by a taint, outside its placement rules) is counted by the filter that refuses it
first, and kube-scheduler reports only that one (framework/runtime/framework.go
`RunFilterPlugins` returns at the first failure; NodeUnschedulable, TaintToleration and
NodeAffinity run before NodeResourcesFit: pkg/scheduler/apis/config/v1/default_plugins.go), so
whether those machines have room is never in its words: doctor reads their allocatable. And a
PreFilter plugin's refusal comes with no count, for it holds back every machine
(framework/types.go `FitError.Error`: `0/%v nodes are available:` then ` %v.` with the
PreFilter message, and no filter's reasons)."""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.plain_words import jargon_in
from tests.support.scenarios import (
    Obj,
    find,
    gpu_held_by_notebook,
    job_pod,
    node,
    training_job,
)

CONTROL_PLANE = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
"""kubeadm's taint on its control-plane machines (cmd/kubeadm/app/constants)."""
NO_VICTIM = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
ROOM = "Wait for room to free up, free some, or add a machine"
RESERVED = "Let the job onto the reserved machines in its settings, or use others"


def _waiting(
    message: str,
    *machines: Obj,
    change: Callable[[Obj], None] | None = None,
    closed: str = "",
) -> Callable[[datetime], list[Obj]]:
    """train-002's one pod, marked Unschedulable by kube-scheduler with `message`, on the
    machines cpu-1 (no GPU) and gpu-1 (both GPUs held by a notebook in 'research'), and
    `machines` beside them; `change` edits the pod's spec (and the Job's template with it),
    `closed` names a machine cordoned."""

    def build(now: datetime) -> list[Obj]:
        job = training_job("train-002", now, gpus=1, finished=False, age=timedelta(minutes=3))
        if change is not None:
            change(job["spec"]["template"]["spec"])
        pod = job_pod(
            job, now, suffix="w0", node_name=None, phase="Pending", age=timedelta(minutes=3)
        )
        pod["status"]["conditions"][0]["message"] = message
        objects = [*gpu_held_by_notebook(now), *machines, job, pod]
        if closed:
            find(objects, "Node", closed)["spec"]["unschedulable"] = True
        return objects

    return build


def _on_gpu_machines(spec: Obj) -> None:
    spec["nodeSelector"] = {"accelerator": "gpu"}


def _on_gpu_1(spec: Obj) -> None:
    """A required node affinity to gpu-1 by name (a `matchFields` term on `metadata.name`)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def _said(doctor: Doctor) -> tuple[int, dict[str, Any]]:
    """doctor's exit code and the headline of its JSON report."""
    result = doctor.live("-o", "json")
    return result.exit_code, result.json()["headline"]


def _remedy(doctor: Doctor, todo: str) -> str:
    return (
        f"{todo}; `kubectl --kubeconfig {doctor.kubeconfig} describe pod train-002-w0` shows "
        "the cluster's own words."
    )


def _headline(reasons: str) -> str:
    return f"The cluster found no machine for 1 program of the training job 'train-002': {reasons}."


def test_a_control_plane_without_gpus_is_no_remedy_for_gpus_that_are_taken(
    doctor: Doctor,
) -> None:
    """The everyday message: the control plane, reserved by kubeadm's taint, has no GPU in its
    allocatable, so letting the job onto it places nothing; the GPUs are what is short. Before,
    the remedy was to let the job onto the reserved machines."""
    doctor.load(
        _waiting(
            "0/3 nodes are available: 1 node(s) had untolerated taint "
            "{node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. "
            f"preemption: 0/3 nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIM}.",
            node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]),
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"], headline["status"]) == (
        2,
        "capacity.unschedulable",
        "fail",
    )
    assert headline["text"] == _headline(
        "of 3 machines, 1 is reserved for other work and 2 lack nvidia.com/gpu"
    )
    assert headline["remedy"] == _remedy(doctor, ROOM)


UNSAID_TAINT = "node(s) had untolerated taint(s)"
"""kube-scheduler 1.35's taint reason (and 1.34.2's, kubernetes#135023): the key and value are
only logged (kubernetes#134740, tainttoleration/taint_toleration.go `Filter`)."""


@pytest.mark.parametrize(
    ("machine", "todo"),
    [
        pytest.param(
            node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]), ROOM, id="no-gpu-there"
        ),
        pytest.param(
            node("gpu-2", "16", "64Gi", gpus=2, taints=[CONTROL_PLANE]),
            RESERVED,
            id="free-gpus-there",
        ),
    ],
)
def test_a_taint_the_scheduler_does_not_name_is_a_reservation_all_the_same(
    doctor: Doctor, machine: Obj, todo: str
) -> None:
    """The newer taint reason names no key: the machine is reserved for other work as with the
    keyed one, and letting the job onto it is the remedy only where a machine with any taint
    the job does not tolerate has the room for it; never a reason without words, quoted
    without the scheduler's "node(s)", with the remedy to read the cluster's own words."""
    doctor.load(
        _waiting(
            f"0/3 nodes are available: 1 {UNSAID_TAINT}, 2 Insufficient nvidia.com/gpu. "
            f"preemption: 0/3 nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIM}.",
            machine,
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"], headline["status"]) == (
        2,
        "capacity.unschedulable",
        "fail",
    )
    assert headline["text"] == _headline(
        "of 3 machines, 1 is reserved for other work and 2 lack nvidia.com/gpu"
    )
    assert headline["remedy"] == _remedy(doctor, todo)


def test_a_down_machine_the_scheduler_counts_as_tainted_without_a_key_reads_as_down(
    doctor: Doctor,
) -> None:
    """kube-scheduler 1.35 counts the control plane and a GPU machine that stopped answering
    (the node lifecycle controller's `node.kubernetes.io/unreachable` taint) as `2 node(s) had
    untolerated taint(s)`, naming neither key. The machines' own taints tell the two apart, as
    the keyed reason did: one reserved, one that can't be reached, and the remedy is to look
    after the machine that is down, not to let the job onto "reserved" machines."""
    doctor.load(
        _waiting(
            f"0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 2 {UNSAID_TAINT}, "
            f"1 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are "
            f"available: 1 {NO_VICTIM}, 3 {NOT_HELPFUL}.",
            node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]),
            node("gpu-2", "16", "64Gi", gpus=2, taints=[UNREACHABLE]),
            change=_on_gpu_machines,
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"]) == (2, "capacity.unschedulable")
    assert headline["text"] == _headline(
        "of 4 machines, 1 lacks nvidia.com/gpu, 1 is reserved for other work, 1 can't be "
        "reached and 1 is outside the job's placement rules"
    )
    assert headline["remedy"] == _remedy(
        doctor,
        "Look after the machines that can't be reached (the cluster lets work onto them again "
        "by itself once they are well)",
    )


A100 = {"key": "pool", "value": "a100", "effect": "NoSchedule"}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
"""The GPU operators' taint on GPU machines (kubernetes.io "Taints and Tolerations": special
hardware)."""


@pytest.mark.parametrize(
    ("scene", "reasons", "todo"),
    [
        pytest.param(
            _waiting(
                "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had "
                "untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had "
                "untolerated taint {pool: a100}, 1 node(s) didn't match Pod's node "
                f"affinity/selector. preemption: 0/4 nodes are available: 1 {NO_VICTIM}, 3 "
                f"{NOT_HELPFUL}.",
                node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]),
                node("gpu-2", "16", "64Gi", gpus=2, taints=[A100]),
                change=_on_gpu_machines,
            ),
            "of 4 machines, 1 lacks nvidia.com/gpu, 2 are reserved for other work and 1 is "
            "outside the job's placement rules",
            RESERVED,
            id="reserved-gpu-machine",
        ),
        pytest.param(
            _waiting(
                "0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) had "
                "untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had "
                "untolerated taint {nvidia.com/gpu: present}. preemption: 0/4 nodes are "
                f"available: 4 {NOT_HELPFUL}.",
                node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]),
                node("gpu-2", "16", "64Gi", gpus=2, taints=[GPU_TAINT]),
            ),
            "of 4 machines, 2 lack nvidia.com/gpu and 2 are reserved for other work",
            RESERVED,
            id="gpu-machine-kept-for-gpu-work",
        ),
        pytest.param(
            _waiting(
                "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had "
                "untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had "
                "untolerated taint {node.kubernetes.io/unreachable: }, 1 node(s) didn't match "
                f"Pod's node affinity/selector. preemption: 0/4 nodes are available: 1 "
                f"{NO_VICTIM}, 3 {NOT_HELPFUL}.",
                node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]),
                node("gpu-2", "16", "64Gi", gpus=2, taints=[UNREACHABLE]),
                change=_on_gpu_machines,
            ),
            "of 4 machines, 1 lacks nvidia.com/gpu, 1 is reserved for other work, 1 can't be "
            "reached and 1 is outside the job's placement rules",
            "Look after the machines that can't be reached (the cluster lets work onto them "
            "again by itself once they are well)",
            id="unreachable-gpu-machine-after-the-control-plane",
        ),
        pytest.param(
            _waiting(
                "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match "
                f"Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 "
                f"{NO_VICTIM}, 1 {NOT_HELPFUL}.",
                change=_on_gpu_machines,
            ),
            "of 2 machines, 1 lacks nvidia.com/gpu and 1 is outside the job's placement rules",
            ROOM,
            id="selector-leaves-out-a-machine-without-gpus",
        ),
        pytest.param(
            _waiting(
                "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match "
                f"Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 "
                f"{NO_VICTIM}, 2 {NOT_HELPFUL}.",
                node("gpu-2", "16", "64Gi", gpus=2),
                change=_on_gpu_1,
            ),
            "of 3 machines, 1 lacks nvidia.com/gpu and 2 are outside the job's placement rules",
            "Change where the job may run in its settings, or add a machine that matches them",
            id="affinity-leaves-out-a-free-gpu-machine",
        ),
        pytest.param(
            _waiting(
                "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) were "
                f"unschedulable. preemption: 0/2 nodes are available: 1 {NO_VICTIM}, 1 "
                f"{NOT_HELPFUL}.",
                closed="cpu-1",
            ),
            "of 2 machines, 1 lacks nvidia.com/gpu and 1 is closed to new work",
            ROOM,
            id="closed-machine-without-gpus",
        ),
        pytest.param(
            _waiting(
                "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had "
                "untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) were "
                "unschedulable, 1 node(s) didn't match Pod's node affinity/selector. preemption: "
                f"0/4 nodes are available: 1 {NO_VICTIM}, 3 {NOT_HELPFUL}.",
                node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]),
                node("gpu-2", "16", "64Gi", gpus=2),
                change=_on_gpu_machines,
                closed="gpu-2",
            ),
            "of 4 machines, 1 lacks nvidia.com/gpu, 1 is reserved for other work, 1 is closed "
            "to new work and 1 is outside the job's placement rules",
            "If the maintenance on the closed machines is done, open them to new work again (an "
            "administrator may have closed them on purpose)",
            id="closed-gpu-machine",
        ),
    ],
)
def test_a_machine_the_job_may_not_use_is_the_remedy_only_where_it_could_hold_the_job(
    doctor: Doctor, scene: Callable[[datetime], list[Obj]], reasons: str, todo: str
) -> None:
    """Each reason the scheduler counts a machine out by (a taint by its key, closed, the
    node selector or required affinity) is the remedy where one of the machines doctor finds
    kept out for it has the allocatable room for the pod; the room that is short where none
    has. The headline keeps every reason the scheduler gave."""
    doctor.load(scene)
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"]) == (2, "capacity.unschedulable")
    assert headline["text"] == _headline(reasons)
    assert headline["remedy"] == _remedy(doctor, todo)


RWOP_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
"""VolumeRestrictions' reason where another pod uses a ReadWriteOncePod claim of the pod's, on
any machine (volumerestrictions/volume_restrictions.go `ErrReasonReadWriteOncePodConflict`):
every machine is refused though the volume can be reached from each."""
NO_VOLUME_TO_BIND = "node(s) didn't find available persistent volumes to bind"
"""VolumeBinding's reason where no free volume the machine can reach fits a claim not bound
yet, and the claim's class makes none there (volumebinding/binder.go `ErrReasonBindConflict`,
`FindPodVolumes`: `findMatchingVolumes`, `checkVolumeProvisions`)."""


@pytest.mark.parametrize(
    ("said", "reasons", "todo"),
    [
        pytest.param(
            f"2 {RWOP_CONFLICT}",
            "2 can't take it while another program uses its data volume",
            "Wait for the program that uses the job's data volume to finish, or stop it, or give "
            "the job a volume of its own (this volume may be used by one program at a time)",
            id="volume-one-program-at-a-time",
        ),
        pytest.param(
            f"2 {NO_VOLUME_TO_BIND}",
            "2 have no free volume that fits its storage request",
            "Add a free volume that fits the job's storage request where the job may run, or "
            "free one (the kind of storage it asks for makes no new volumes there by itself)",
            id="no-free-volume",
        ),
    ],
)
def test_a_volume_held_or_missing_is_said_as_what_it_is(
    doctor: Doctor, said: str, reasons: str, todo: str
) -> None:
    """A volume another program holds and a volume there is none of are each said as what
    they are, neither "can't reach its data volume" with the remedy to move the data."""
    doctor.load(
        _waiting(
            f"0/2 nodes are available: {said}. preemption: 0/2 nodes are available: 2 {NO_VICTIM}."
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"]) == (2, "capacity.unschedulable")
    assert headline["text"] == _headline(f"of 2 machines, {reasons}")
    assert headline["remedy"] == _remedy(doctor, todo)
    assert not jargon_in(headline["text"])
    assert not jargon_in(headline["remedy"])


EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
"""InterPodAffinity's reason where a running pod's required anti-affinity matches the pod
(interpodaffinity/filtering.go `ErrReasonExistingAntiAffinityRulesNotMatch`,
`satisfyExistingPodsAntiAffinity`): the running pod's rule, not the pod's own."""


def test_the_running_programs_rules_are_theirs_not_the_job_s(doctor: Doctor) -> None:
    """A job with no rules of its own, kept off a machine by a running program's anti-affinity:
    the remedy finds those programs, never "1 breaks its rules about which programs may run
    together" with the remedy to loosen the job's rules, which it does not have."""
    doctor.load(
        _waiting(
            f"0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 {EXISTING_ANTI_AFFINITY}. "
            f"preemption: 0/2 nodes are available: 1 {NO_VICTIM}, 1 {NOT_HELPFUL}."
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"]) == (2, "capacity.unschedulable")
    assert headline["text"] == _headline(
        "of 2 machines, 1 lacks nvidia.com/gpu and 1 is refused by other programs' rules about "
        "which programs may run together"
    )
    listing = (
        f"`kubectl --kubeconfig {doctor.kubeconfig} get pods --all-namespaces -o "
        "'custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,"
        "MACHINE:.spec.nodeName,KEEPS_AWAY:.spec.affinity.podAntiAffinity."
        "requiredDuringSchedulingIgnoredDuringExecution[*].labelSelector'`"
    )
    assert headline["remedy"] == _remedy(
        doctor,
        f"Find the programs whose rules refuse the job's ({listing} lists each program's "
        "machine and the programs its rules keep away), then wait for them to finish, stop them "
        "or change their rules, or add machines",
    )
    assert not jargon_in(headline["text"])
    assert not jargon_in(headline["remedy"])


_CONTROL_PLANE_ONLY = (
    "0/3 nodes are available: 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 "
    f"nodes are available: 1 {NOT_HELPFUL}, 2 {NO_VICTIM}."
)


def test_with_the_machines_unread_the_scheduler_s_first_reason_stands(doctor: Doctor) -> None:
    """Whether the reserved machine could hold the job is not known: its reservation stays the
    remedy, as the scheduler's first reason that is not room."""
    doctor.load(
        _waiting(_CONTROL_PLANE_ONLY, node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE]))
    )
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/nodes$", method="GET")
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"]) == (2, "capacity.unschedulable")
    assert headline["text"] == _headline(
        "of 3 machines, 1 is reserved for other work and 2 lack nvidia.com/gpu"
    )
    assert headline["remedy"] == _remedy(doctor, RESERVED)


def test_with_a_machine_s_amount_unreadable_the_scheduler_s_first_reason_stands(
    doctor: Doctor,
) -> None:
    """A hand-edited snapshot's machine whose allocatable is no quantity: its room is not
    known, so its reservation stays the remedy."""
    broken = node("control-plane-1", "8", "32Gi", taints=[CONTROL_PLANE])
    broken["status"]["allocatable"]["cpu"] = "lots"
    doctor.load(_waiting(_CONTROL_PLANE_ONLY, broken))
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"]) == (2, "capacity.unschedulable")
    assert headline["remedy"] == _remedy(doctor, RESERVED)


READ_THEIR_WORDS = "Read the cluster's own words on it"


@pytest.mark.parametrize(
    "refusal",
    [
        # VolumeBinding's PreFilter with a claim of an Immediate class not yet bound
        # (plugins/volumebinding/volume_binding.go `PreFilter`: `status.AppendReason(...)`).
        "pod has unbound immediate PersistentVolumeClaims",
        # The same PreFilter when the claim does not exist: `podHasPVCs` returns the claim
        # lister's NotFound, written as its error (`persistentvolumeclaim "datasets" not found`).
        'persistentvolumeclaim "datasets" not found',
        # An out-of-tree PreFilter plugin's words, commas and all (one Status's reasons are
        # joined with ", ": framework Status.Message): one reason, not three.
        "pod waits for a licence, 2 of 2 seats in use, try later",
    ],
    ids=["unbound-claim", "claim-not-found", "made-up-plugin"],
)
def test_a_prefilter_refusal_is_quoted_in_the_scheduler_s_words(
    doctor: Doctor, refusal: str
) -> None:
    """The uncounted reason is quoted, never dropped as "it gave no reason doctor knows"."""
    doctor.load(
        _waiting(
            f"0/2 nodes are available: {refusal}. preemption: 0/2 nodes are available: 2 "
            f"{NOT_HELPFUL}."
        )
    )
    exit_code, headline = _said(doctor)
    assert (exit_code, headline["code"], headline["status"]) == (
        2,
        "capacity.unschedulable",
        "fail",
    )
    assert headline["text"] == _headline(f"of 2 machines, 2 are held back: “{refusal}”")
    assert headline["remedy"] == _remedy(doctor, READ_THEIR_WORDS)


def test_a_prefilter_refusal_beside_the_storage_finding_is_quoted_too(doctor: Doctor) -> None:
    """The claim really is Pending: the storage check's finding leads, and the scheduler's
    own words stand on the capacity finding beside it."""

    def build(now: datetime) -> list[Obj]:
        objects = _waiting(
            "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
            f"preemption: 0/2 nodes are available: 2 {NOT_HELPFUL}."
        )(now)
        find(objects, "PersistentVolumeClaim", "datasets")["status"] = {"phase": "Pending"}
        return objects

    doctor.load(build)
    result = doctor.live("-o", "json")
    report = result.json()
    assert (result.exit_code, report["headline"]["code"]) == (2, "storage.volume-unbound")
    (capacity,) = [f for f in report["findings"] if f["code"] == "capacity.unschedulable"]
    assert capacity["headline"] == _headline(
        "of 2 machines, 2 are held back: “pod has unbound immediate PersistentVolumeClaims”"
    )
    assert capacity["remedy"] == _remedy(doctor, READ_THEIR_WORDS)
