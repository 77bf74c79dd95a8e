"""Advice that cannot hurt: a remedy that reverses an administrator's decision says what to check
first.

A machine closed to new work (`kubectl cordon`, `kubectl drain` for maintenance), a taint that
reserves machines, a finalizer that holds an object until a controller is done: each is a
decision someone made, often on purpose. Reversing one blindly (`kubectl uncordon`, `kubectl
taint nodes N KEY-`, removing `metadata.finalizers`) can put training on a machine under repair
or drop a controller's clean-up (kubectl's own docs: `drain` is "in preparation for
maintenance"; `uncordon` "Mark node as schedulable"). So every such command the code can print
stands in a sentence that names the precondition ("if the maintenance on cpu-1 is done").
One decision no precondition makes safe to undo: a taint keyed by an extended resource
(`nvidia.com/gpu`) keeps the machines for the work that asks for it, and lifting it lets every
other program onto them (issue #28), so no remedy ever says `kubectl taint nodes N nvidia.com/gpu-`.

The list is data: `REVERSALS` says how to recognise each reversal and its precondition, so new
wording slots in. The commands come from every place they can: the golden file of doctor's
headlines and remedies, every call in src/ that builds a kubectl command (read from the source,
so a remedy no scenario reaches is still seen), and doctor's real output on the scenarios that
produce them.
"""

import ast
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from msgspec import Struct

from tests.scenario.conftest import Doctor
from tests.support.scenarios import find, healthy, node, training_job
from truegreen.gpu_resources import is_gpu_resource

ROOT = Path(__file__).parents[2]
GOLDEN = ROOT / "tests" / "golden" / "headlines.txt"


class Reversal(Struct, frozen=True):
    """One kind of command that undoes an administrator's decision."""

    what: str
    verbs: frozenset[str]
    """The kubectl verb (first word after the flags) that does it."""
    also: str
    """A regex the rest of the command must match too (a taint's trailing `-`)."""
    precondition: str
    """A regex the sentence around the command must match: what to check first."""
    also_in_source: str = ""
    """The same as `also`, in the source that builds the command (`key + "-"`)."""


# "if the maintenance on cpu-1 is done", "once the work on gpu-1 is finished", "if nobody
# reserved them on purpose", "when the clean-up it waits for is over".
_FIRST = (
    r"\b(if|once|when|after)\b[^;]*\b(done|finished|over|complete|no longer|on purpose|"
    r"was not meant|ended)\b"
)
REVERSALS = (
    Reversal("reopening a machine closed to new work", frozenset({"uncordon"}), r"", _FIRST),
    Reversal(
        "lifting a machine's reservation",
        frozenset({"taint"}),
        r"\S-(\s|$)",
        _FIRST,
        also_in_source=r"""\+\s*['"]-['"]|-['"]\s*[,)]""",
    ),
    Reversal(
        "removing a finalizer",
        frozenset({"patch", "edit"}),
        r"finalizers",
        _FIRST,
        also_in_source="finalizers",
    ),
)


_LIFT = re.compile(r"\btaint\s+nodes?\b.*\s(?P<key>[^\s=:]+)-(\s|$)")
"""`kubectl taint nodes N KEY-`: the key whose taint it removes."""


def _lifted_resource(command: str, resources: frozenset[str]) -> str | None:
    """The key of a taint the command removes where it keeps machines for a resource (a GPU's,
    or one of `resources` the machines offer): a decision no precondition makes safe to undo.

    Kubernetes advises tainting special hardware with its extended resource's name (website
    concepts/scheduling-eviction/taint-and-toleration.md, "Nodes with Special Hardware"; GKE
    does it to every GPU node pool), and the ExtendedResourceToleration admission plugin lets
    exactly the pods asking for it past (plugin/pkg/admission/extendedresourcetoleration).
    Lifting such a taint lets every program that asks for no GPU onto the GPU machines."""
    lifted = _LIFT.search(command)
    key = lifted.group("key") if lifted is not None else None
    return key if key is not None and (is_gpu_resource(key) or key in resources) else None


def _reversal(command: str) -> Reversal | None:
    words = command.split()
    flags_taking_values = {"--kubeconfig", "--context", "-n", "--namespace"}
    rest = iter(words[1:])
    verb = ""
    for word in rest:
        if word in flags_taking_values:
            next(rest, None)
        elif not word.startswith("-"):
            verb = word
            break
    tail = " ".join(rest)
    return next(
        (r for r in REVERSALS if verb in r.verbs and re.search(r.also, tail) is not None), None
    )


def _sentences(text: str) -> Iterator[tuple[str, str]]:
    """Each kubectl command in backticks with the clause it stands in (up to `;` or `.`)."""
    for clause in re.split(r"(?<=[.;])\s+(?=[A-Za-z])|;\s", text):
        for command in re.findall(r"`(kubectl [^`]+)`", clause):
            yield command, clause


def _unsafe(texts: list[str], resources: frozenset[str] = frozenset()) -> list[str]:
    """Each reversal said without its precondition, and each lifted resource reservation
    (`_lifted_resource`) whatever it is said with."""
    return [
        f"{reversal.what}: {clause!r}"
        for text in texts
        for command, clause in _sentences(text)
        if (reversal := _reversal(command)) is not None
        and not re.search(reversal.precondition, clause.replace(f"`{command}`", ""), re.I)
    ] + [
        f"lifting the reservation of '{key}': {clause!r}"
        for text in texts
        for command, clause in _sentences(text)
        if (key := _lifted_resource(command, resources)) is not None
    ]


# -- the rule itself -----------------------------------------------------------------------------


def test_the_rule_tells_a_reversal_with_its_precondition_from_one_without() -> None:
    assert _unsafe(["Open cpu-1 to new work again with `kubectl uncordon cpu-1`."]) == [
        "reopening a machine closed to new work: "
        "'Open cpu-1 to new work again with `kubectl uncordon cpu-1`.'"
    ]
    assert (
        _unsafe(
            [
                "If the maintenance on cpu-1 is done, open it to new work again with "
                "`kubectl --context prod uncordon cpu-1`."
            ]
        )
        == []
    )
    assert _unsafe(["Lift it with `kubectl taint nodes gpu-1 dedicated-`."]) != []
    assert _unsafe(["See them with `kubectl taint nodes gpu-1 dedicated=x:NoSchedule`."]) == []
    # A machine kept for a resource stays kept, whatever precondition comes with lifting it.
    assert _unsafe(
        [
            "If nobody reserved it on purpose, lift it with "
            "`kubectl taint nodes gpu-1 nvidia.com/gpu-`."
        ]
    ) == [
        "lifting the reservation of 'nvidia.com/gpu': 'If nobody reserved it on purpose, lift it "
        "with `kubectl taint nodes gpu-1 nvidia.com/gpu-`.'"
    ]
    assert _unsafe(["`kubectl taint nodes tpu-1 google.com/tpu-`"], frozenset({"google.com/tpu"}))
    assert _unsafe(["`kubectl taint nodes gpu-1 nvidia.com/gpu=present:NoSchedule`"]) == []
    assert _unsafe(['`kubectl patch pvc d --type merge -p \'{"metadata":{"finalizers":null}}\'`'])
    assert _unsafe(["See why with `kubectl -n train describe pvc datasets`."]) == []


# -- every remedy the golden file holds ----------------------------------------------------------


def test_no_remedy_in_the_golden_file_reverses_a_decision_without_its_precondition() -> None:
    remedies = [
        line.removeprefix("  remedy:").strip()
        for line in GOLDEN.read_text().splitlines()
        if line.startswith("  remedy:")
    ]
    assert len(remedies) > 50, "precondition: the golden file holds doctor's remedies"
    assert _unsafe(remedies) == []


# -- every kubectl command the source builds -----------------------------------------------------


class _Site(Struct, frozen=True):
    path: str
    line: int
    verb: str
    statement: str
    """The source of the statement the command is built in: the sentence it stands in."""


def _command_sites() -> list[_Site]:
    """Every `kubectl.cluster(...)`, `.here(...)`, `.elsewhere(ns, ...)` call in src/ whose
    verb is a reversal's, with the source of the statement around it."""
    sites = []
    for path in sorted((ROOT / "src" / "truegreen").rglob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        for statement in ast.walk(tree):
            if not isinstance(statement, ast.stmt) or isinstance(
                statement, ast.FunctionDef | ast.ClassDef | ast.If | ast.For | ast.With
            ):
                continue
            for call in ast.walk(statement):
                if not (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("cluster", "here", "elsewhere")
                ):
                    continue
                words = {a.value for a in call.args if isinstance(a, ast.Constant)}
                text = ast.get_source_segment(source, statement) or ""
                found = sorted(
                    verb
                    for r in REVERSALS
                    for verb in r.verbs & words
                    if re.search(r.also_in_source, ast.get_source_segment(source, call) or "")
                )
                if found:
                    sites.append(_Site(str(path.relative_to(ROOT)), call.lineno, found[0], text))
    return sites


SITES = _command_sites()


def _site_param(site: _Site) -> Any:
    return pytest.param(site, id=f"{site.path}:{site.line}:{site.verb}")


def test_the_source_scan_sees_the_commands_it_must() -> None:
    """Precondition: the scan is not empty-handed (both capacity reversals are found)."""
    assert {(s.path, s.verb) for s in SITES} >= {
        ("src/truegreen/doctor/checks/capacity/machines.py", "uncordon"),
        ("src/truegreen/doctor/checks/capacity/machines.py", "taint"),
    }


@pytest.mark.parametrize("site", [_site_param(s) for s in SITES])
def test_every_reversal_the_source_builds_stands_beside_its_precondition(site: _Site) -> None:
    reversal = next(r for r in REVERSALS if site.verb in r.verbs)
    strings = " ".join(
        node.value
        for node in ast.walk(ast.parse(site.statement))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )
    assert re.search(reversal.precondition, strings, re.I), (
        f"{site.path}:{site.line} builds `kubectl {site.verb}` in a sentence that does not say "
        f"what to check first: {strings!r}"
    )


# -- doctor's real words on the scenarios that produce them --------------------------------------


def _closed_and_reserved(now: datetime) -> list[dict[str, Any]]:
    objects = healthy(now)
    for obj in objects:
        if obj["kind"] == "Node":
            obj["spec"] = (
                {"unschedulable": True}
                if obj["metadata"]["name"] == "cpu-1"
                else {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}
            )
    return objects


def test_doctor_s_remedies_for_closed_and_reserved_machines_say_what_to_check_first(
    doctor: Doctor,
) -> None:
    doctor.load(_closed_and_reserved)
    report = doctor.live("-o", "json", "--job-requests", "cpu=1,nvidia.com/gpu=1").json()
    remedies = [f["remedy"] for f in report["findings"]]
    said = [c for r in remedies for c, _ in _sentences(r) if _reversal(c) is not None]
    assert {(_reversal(c) or REVERSALS[0]).what for c in said} == {
        "reopening a machine closed to new work",
        "lifting a machine's reservation",
    }, f"precondition: both reversals are advised: {remedies}"
    assert _unsafe(remedies) == []


# -- machines kept for a resource the job does not ask for ----------------------------------------


def _kept_for_a_resource(
    resource: str, labels: dict[str, str], value: str, *, only_that_machine: bool = False
) -> Any:
    """The healthy namespace whose unfinished training job asks for 12 CPUs and no GPU, so only
    the 16-CPU machine is big enough, and that machine is tainted `RESOURCE=VALUE:NoSchedule`
    as its provider keeps it for the work that asks for the resource: EKS GPU node groups
    (`nvidia.com/gpu=true`, docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html),
    GKE GPU and TPU node pools (`nvidia.com/gpu=present`, `google.com/tpu=present`:
    cloud.google.com/kubernetes-engine/docs/how-to/gpus, .../tpus). `only_that_machine`: the
    CPU machine is gone too, so no machine may take the job at all."""

    def build(now: datetime) -> list[dict[str, Any]]:
        objects = [
            o
            for o in healthy(now)
            if not (
                o["kind"] == "Job"
                or (only_that_machine and o["kind"] == "Node" and o["metadata"]["name"] == "cpu-1")
            )
        ]
        machine = find(objects, "Node", "gpu-1")
        if resource != "nvidia.com/gpu":
            machine.update(node("gpu-1", "16", "64Gi"))
            for part in ("capacity", "allocatable"):
                machine["status"][part][resource] = "4"
        machine["metadata"]["labels"].update(labels)
        machine["spec"] = {"taints": [{"key": resource, "value": value, "effect": "NoSchedule"}]}
        job = training_job("train-002", now, gpus=0, cpu="12", finished=False)
        job["status"] = {}
        return [*objects, job]

    return build


@pytest.mark.parametrize(
    ("build", "code"),
    [
        pytest.param(
            _kept_for_a_resource(
                "nvidia.com/gpu", {"eks.amazonaws.com/nodegroup": "gpu-ng"}, "true"
            ),
            "capacity.machine-kept-out",
            id="eks-gpu-node-group",
        ),
        pytest.param(
            _kept_for_a_resource("nvidia.com/gpu", {}, "present"),
            "capacity.machine-kept-out",
            id="gpu-taint-no-provider",
        ),
        pytest.param(
            _kept_for_a_resource(
                "google.com/tpu", {"cloud.google.com/gke-nodepool": "tpu-pool"}, "present"
            ),
            "capacity.machine-kept-out",
            id="gke-tpu-node-pool",
        ),
        pytest.param(
            _kept_for_a_resource("nvidia.com/gpu", {}, "present", only_that_machine=True),
            "capacity.no-eligible-machine",
            id="only-the-gpu-machine",
        ),
    ],
)
def test_a_machine_kept_for_a_resource_the_job_does_not_ask_for_is_never_opened_to_it(
    doctor: Doctor, build: Any, code: str
) -> None:
    """Issue #28 names the harm: `kubectl taint nodes … nvidia.com/gpu-` lets every program
    that asks for no GPU onto the GPU machines. What fits instead is a machine or a job of the
    right size, or the job let in by a toleration of its own."""
    doctor.load(build)
    report = doctor.live("-o", "json").json()
    (capacity,) = [f for f in report["findings"] if f["check"] == "capacity"]
    assert capacity["code"] == code, f"precondition: the machine keeps the job out: {capacity}"
    (taint,) = find(build(datetime.now(UTC)), "Node", "gpu-1")["spec"]["taints"]
    resources = frozenset({taint["key"]})
    assert _unsafe([f["remedy"] for f in report["findings"]], resources) == []
    assert f"kept for work that asks for '{taint['key']}'" in capacity["headline"]
    assert f"`tolerations: [{{key: {taint['key']}, operator: Exists}}]`" in capacity["remedy"]
    assert "add a machine big enough" in capacity["remedy"].lower()
