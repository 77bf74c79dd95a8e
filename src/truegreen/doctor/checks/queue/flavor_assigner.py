"""Kueue's flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go), rebuilt: for each
pod set, the flavors of its ClusterQueue tried in order, against their machines (taints, node
selector and required affinity reduced to the flavor's label keys) and the quota tree, and how
the job fits: now, after waiting (or preempting), or never. The model it reads (queues,
flavors, workloads, the quota tree) is doctor.knowledge.kueue, as Kueue keeps it in pkg/cache.

Rebuilt value by value: `assignFlavors` (pod sets in order, each resource group once, the `pods`
resource when the queue covers it, usage of earlier pod sets counted), `findFlavorForPodSets`
(flavors in order, FlavorFungibility's `shouldTryNextFlavor` and `isPreferred`),
`checkFlavorForPodSets` (the flavor's taints and tolerations, the node selector and required
affinity reduced to the flavor's label keys: `flavorSelector`) and `fitsResourceQuota` (over
`PotentialAvailable`: never; within `Available`: fits; else waits).
"""

from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.doctor.knowledge.fit import matches_required_affinity, tolerates
from truegreen.doctor.knowledge.kueue import (
    ClusterQueue,
    Flavor,
    FlavorResource,
    PodSetRequest,
    QuotaNode,
    QuotaTree,
    ResourceGroup,
)
from truegreen.quantity import CPU, PODS

TRY_NEXT_FLAVOR = "TryNextFlavor"


PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"


class Mode(IntEnum):
    """How a flavor can take a pod set, worst first (`preemptionMode`, reduced)."""

    NO_FIT = 0
    """Not this flavor, ever: the machines do not match, or the quota is too small."""
    WAITS = 1
    """The quota is there, but in use: it waits (or takes lower-priority work's place)."""
    FITS = 2


class Trial(Struct, frozen=True):
    """One flavor tried for one pod set: how it fits, whether it borrows, and why not."""

    flavor: str
    mode: Mode
    borrows: bool = False
    reasons: tuple[str, ...] = ()
    short: tuple[tuple[str, int], ...] = ()
    """Per resource in use by others, how much more is needed (`more needed`)."""


class PodSetAssignment(Struct, frozen=True):
    """The flavors a pod set gets, and the trials that led there."""

    name: str
    mode: Mode
    flavors: Mapping[str, str]
    """Per resource, the flavor assigned."""
    borrows: bool = False
    reasons: tuple[str, ...] = ()
    short: tuple[tuple[FlavorResource, int], ...] = ()


class Assignment(Struct, frozen=True):
    """The whole job's flavor assignment: its worst pod set decides."""

    pod_sets: tuple[PodSetAssignment, ...]

    @property
    def mode(self) -> Mode:
        """The worst pod set's mode (`RepresentativeMode`)."""
        return min((p.mode for p in self.pod_sets), default=Mode.FITS)

    @property
    def borrows(self) -> bool:
        """Some quota comes from the cohort."""
        return any(p.borrows for p in self.pod_sets)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Kueue's reasons for the pod sets that do not fit, as its `Message` joins them."""
        return tuple(
            f"couldn't assign flavors to pod set {p.name}: {', '.join(sorted(p.reasons))}"
            for p in self.pod_sets
            if p.mode is not Mode.FITS and p.reasons
        )

    @property
    def short(self) -> dict[FlavorResource, int]:
        """Per flavor and resource in use, how much more the job needs."""
        found: dict[FlavorResource, int] = {}
        for pod_set in self.pod_sets:
            for fr, amount in pod_set.short:
                found[fr] = max(found.get(fr, 0), amount)
        return found


def quantity_words(resource: str, amount: int) -> str:
    """An amount as Kueue prints a quantity: `500m`, `4`, `16Gi`."""
    if resource == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    for suffix, power in (("Ei", 6), ("Pi", 5), ("Ti", 4), ("Gi", 3), ("Mi", 2), ("Ki", 1)):
        if amount and amount % (1024**power) == 0:
            return f"{amount // 1024**power}{suffix}"
    return str(amount)


def _flavor_mismatch(found: Flavor | None, name: str, spec: Mapping[str, Any]) -> str | None:
    """Why the flavor's machines never take the pod set (`checkFlavorForPodSets`), else None."""
    if found is None:
        return f"flavor {name} not found"
    tolerations = [*(o.mapping(t) for t in o.sequence(spec.get("tolerations"))), *found.tolerations]
    for taint in found.node_taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            value = f"={taint['value']}" if taint.get("value") else ""
            named = f"{taint.get('key')}{value}:{taint.get('effect')}"
            return f"untolerated taint {named} in flavor {name}"
    keys = set(found.node_labels)
    selector = {k: v for k, v in o.mapping(spec.get("nodeSelector")).items() if k in keys}
    reduced: dict[str, Any] = {"nodeSelector": selector}
    required = o.mapping(
        o.mapping(o.mapping(spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    terms: list[dict[str, Any]] = []
    for term in (o.mapping(t) for t in o.sequence(required.get("nodeSelectorTerms"))):
        kept = [
            o.mapping(e)
            for e in o.sequence(term.get("matchExpressions"))
            if o.mapping(e).get("key") in keys
        ]
        if not kept:
            terms = []  # a term with no key of the flavor's matches any flavor
            break
        terms.append({"matchExpressions": kept})
    if terms:
        reduced["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
            }
        }
    labels = dict(found.node_labels)
    machine = {"metadata": {"name": name, "labels": labels}, "spec": {}}
    if any(labels.get(k) != v for k, v in selector.items()) or not matches_required_affinity(
        machine, reduced
    ):
        return f"flavor {name} doesn't match node affinity"
    return None


def _fits_quota(
    tree: QuotaTree, queue: QuotaNode, fr: FlavorResource, assumed: int, request: int
) -> Trial:
    """One resource of one flavor (`fitsResourceQuota`)."""
    flavor_name, resource = fr
    total = assumed + request
    most = tree.potential(queue, fr)
    if total > most:
        return Trial(
            flavor_name,
            Mode.NO_FIT,
            reasons=(
                f"insufficient quota for {resource} in flavor {flavor_name}, previously "
                f"considered podsets requests ({quantity_words(resource, assumed)}) + current "
                f"podset request ({quantity_words(resource, request)}) > maximum capacity "
                f"({quantity_words(resource, most)})",
            ),
        )
    borrows = tree.borrows_with(queue, fr, total)
    free = tree.available(queue, fr)
    if total <= free:
        return Trial(flavor_name, Mode.FITS, borrows)
    more = total - free
    return Trial(
        flavor_name,
        Mode.WAITS,
        borrows,
        (
            f"insufficient unused quota for {resource} in flavor {flavor_name}, "
            f"{quantity_words(resource, more)} more needed",
        ),
        ((resource, more),),
    )


def _preferred(a: Trial, b: Trial | None, queue: ClusterQueue) -> bool:
    """`a` is a better choice than `b` (`isPreferred`)."""
    if a.mode is Mode.NO_FIT:
        return False
    if b is None or b.mode is Mode.NO_FIT:
        return True
    if queue.preference == PREEMPTION_OVER_BORROWING:
        if a.borrows != b.borrows:
            return not a.borrows
        return a.mode > b.mode
    if a.mode != b.mode:
        return a.mode > b.mode
    return not a.borrows and b.borrows


def _try_next(trial: Trial, queue: ClusterQueue) -> bool:
    """Look at the next flavor before taking this one (`shouldTryNextFlavor`). A flavor whose
    quota is in use is passed over as Kueue passes one with no preemption candidates."""
    if trial.mode is not Mode.FITS:
        return True
    return trial.borrows and queue.when_can_borrow == TRY_NEXT_FLAVOR


def _try_flavors(
    tree: QuotaTree,
    queue: ClusterQueue,
    flavors: Mapping[str, Flavor],
    group: ResourceGroup,
    pod_set: PodSetRequest,
    requests: Mapping[str, int],
    assigned: Mapping[FlavorResource, int],
) -> tuple[Trial | None, list[str]]:
    """The flavor the group's resources get (`findFlavorForPodSets`), and every reason met."""
    reasons: list[str] = []
    best: Trial | None = None
    wanted = [(r, requests[r]) for r in group.covered if r in requests]
    for name in group.flavors:
        mismatch = _flavor_mismatch(flavors.get(name), name, pod_set.spec)
        if mismatch is not None:
            reasons.append(mismatch)
            continue
        # Every resource of the group is tried; the worst decides, and any borrowing borrows.
        trials = [
            _fits_quota(tree, queue.node, (name, r), assigned.get((name, r), 0), amount)
            for r, amount in wanted
        ]
        for trial in trials:
            reasons += trial.reasons
        worst = Trial(
            name,
            min((t.mode for t in trials), default=Mode.FITS),
            any(t.borrows for t in trials),
            short=tuple(s for t in trials for s in t.short),
        )
        if not _try_next(worst, queue):
            return worst, reasons
        if _preferred(worst, best, queue):
            best = worst
    return best, reasons


def assign(
    queue: ClusterQueue,
    tree: QuotaTree,
    flavors: Mapping[str, Flavor],
    pod_sets: Sequence[PodSetRequest],
) -> Assignment:
    """The flavors Kueue would give the job's pod sets now (`assignFlavors`), in order, each
    pod set's quota counted before the next; the first pod set that fits no flavor ends it."""
    assigned: dict[FlavorResource, int] = {}
    done: list[PodSetAssignment] = []
    covers_pods = any(PODS in g.covered for g in queue.node.groups)
    for pod_set in pod_sets:
        requests = (pod_set.requests * pod_set.count).as_dict()
        if covers_pods:
            requests[PODS] = pod_set.count
        chosen: dict[str, str] = {}
        trials: list[Trial] = []
        reasons: list[str] = []
        failed = False
        for resource in sorted(requests):
            if resource in chosen or not requests[resource]:
                continue
            group = next((g for g in queue.node.groups if resource in g.covered), None)
            if group is None:
                reasons.append(f"resource {resource} unavailable in ClusterQueue")
                failed = True
                break
            best, met = _try_flavors(tree, queue, flavors, group, pod_set, requests, assigned)
            reasons += met
            if best is None:
                failed = True
                break
            trials.append(best)
            for covered in group.covered:
                if covered in requests:
                    chosen[covered] = best.flavor
        if failed:
            done.append(PodSetAssignment(pod_set.name, Mode.NO_FIT, {}, reasons=tuple(reasons)))
            break
        for resource, name in chosen.items():
            assigned[(name, resource)] = assigned.get((name, resource), 0) + requests[resource]
        mode = min((t.mode for t in trials), default=Mode.FITS)
        done.append(
            PodSetAssignment(
                pod_set.name,
                mode,
                chosen,
                any(t.borrows for t in trials),
                tuple(reasons) if mode is not Mode.FITS else (),
                tuple(((t.flavor, r), n) for t in trials for r, n in t.short),
            )
        )
    return Assignment(tuple(done))


def checks_for(queue: ClusterQueue, assignment: Assignment) -> list[str]:
    """The admission checks the job meets once its quota is reserved: those for every flavor
    and those on a flavor it is assigned (`AdmissionChecksForWorkload`)."""
    used = {f for p in assignment.pod_sets for f in p.flavors.values()}
    return [name for name, on in queue.admission_checks if not on or used & set(on)]
