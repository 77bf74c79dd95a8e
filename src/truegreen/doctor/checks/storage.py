"""Dataset storage: every volume claim the environment uses exists and is bound."""

from collections.abc import Mapping
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind, KubeObject, Listed, ReadFailure
from truegreen.doctor.checks.base import Words
from truegreen.doctor.environment import Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.evidence import (
    attach_failures,
    attach_reported,
    waiting_to_attach,
)
from truegreen.doctor.knowledge.no_provisioner import awaits_made_volume
from truegreen.plain_words import Wording
from truegreen.quantity import MEMORY, QuantityError, format_amount, parse_quantity, scheduler_units

CHECK = CheckId.STORAGE

OK: Final = "storage.ok"
VOLUME_MISSING: Final = "storage.volume-missing"
VOLUME_UNBOUND: Final = "storage.volume-unbound"
VOLUME_NO_MATCH: Final = "storage.volume-no-match"
NO_FREE_VOLUME: Final = "storage.no-free-volume"
VOLUME_LOST: Final = "storage.volume-lost"
VOLUME_BEING_DELETED: Final = "storage.volume-being-deleted"
TYPE_MISSING: Final = "storage.type-missing"
NOT_ITS_OWN: Final = "storage.volume-not-its-own"
ATTACHED_ELSEWHERE: Final = "storage.attached-elsewhere"
ATTACH_FAILED: Final = "storage.attach-failed"
CANT_READ: Final = "storage.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("Every dataset volume is ready.", ""),
    VOLUME_MISSING: Wording(
        "The dataset volume '{name}' doesn't exist, so what uses it can't start.",
        "Create the volume '{name}', or fix its name in the environment's settings; "
        "{command} lists the volumes there are.",
    ),
    VOLUME_UNBOUND: Wording(
        "The dataset volume '{name}' has no storage behind it yet ({state}).",
        "See why with {command}; check that the storage type '{storage_type}' can provide "
        "it, and ask your cluster admin whether storage has run out.",
    ),
    VOLUME_NO_MATCH: Wording(
        "The dataset volume '{name}' has no storage behind it yet: it names no storage type, "
        "so it waits for an existing volume that matches it, and none does.",
        "Ask your cluster admin for a volume that matches it (its size and access modes, no "
        "storage type), or create it again naming a storage type that can provide it "
        "({command} lists them).",
    ),
    NO_FREE_VOLUME: Wording(
        "The dataset volume '{name}' has no storage behind it: its storage type "
        "'{storage_type}' only uses volumes made in advance, and none that is free fits it.",
        "Ask your cluster admin for a volume of storage type '{storage_type}' that fits it "
        "({size}, and its access modes), or create it again naming a storage type that makes "
        "volumes ({command} lists the volumes there are).",
    ),
    VOLUME_LOST: Wording(
        "The dataset volume '{name}' lost its storage.",
        "Restore the volume from a backup or recreate it; {command} shows what it was bound "
        "to. Ask your cluster admin.",
    ),
    VOLUME_BEING_DELETED: Wording(
        "The dataset volume '{name}' is being deleted, so nothing new that uses it can start.",
        "A deletion can't be called off: the volume goes once nothing uses it ({command} shows "
        "what still does). Then create '{name}' again, or point the environment at another "
        "volume.",
    ),
    TYPE_MISSING: Wording(
        "The dataset volume '{name}' asks for a storage type '{storage_type}' that doesn't exist.",
        "Use an existing storage type for '{name}' ({command} lists them), or ask your cluster "
        "admin to add it.",
    ),
    NOT_ITS_OWN: Wording(
        "The volume '{name}' that {owner} makes for itself already exists and isn't its own, "
        "so it can't start.",
        "Delete or rename the other volume '{name}' ({command} shows whose it is), or rename "
        "the volume in the settings of {owner}.",
    ),
    ATTACHED_ELSEWHERE: Wording(
        "A volume of {owner} is in use on another machine, and can be attached to one machine "
        "at a time, so it can't start.",
        "Stop what uses the volume on the other machine, or run it on that machine; "
        "{command} shows which volume.",
    ),
    ATTACH_FAILED: Wording(
        "A volume of {owner} can't be attached to its machine.",
        "See why with {command}, and ask your cluster admin about the storage.",
    ),
    CANT_READ: Wording("Couldn't check the dataset volumes: {why}.", "{remedy}"),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CHECK, WORDS)


def _waits_for_first_use(storage_type: Mapping[str, Any] | None) -> bool:
    """A WaitForFirstConsumer class binds only once a pod using the claim is scheduled."""
    return (
        storage_type is not None and storage_type.get("volumeBindingMode") == "WaitForFirstConsumer"
    )


def check(env: Environment) -> list[Finding]:
    """Findings about the dataset volumes the environment mounts."""
    findings = [SAY.cant_check(env, kind, read) for kind, read in env.unread_template_sources()]
    ephemeral = o.waiting_ephemeral_claims(env.pods.items) if isinstance(env.pods, Listed) else {}
    made_later: set[str] = set()
    awaiting: list[KubeObject] = []
    for name, read in env.claims.items():
        ref = f"PersistentVolumeClaim/{name}"
        if isinstance(read, CantRead):
            made_with = _made_with_its_pod(env, name, ephemeral) if read.is_measurement else None
            if isinstance(made_with, CantRead):
                findings.append(SAY.cant_check(env, Kind.POD, made_with, ref))
            elif made_with:
                made_later.add(name)
            elif read.is_measurement:
                findings.append(
                    SAY.finding(
                        Status.FAIL,
                        Basis.MEASURED,
                        VOLUME_MISSING,
                        details=(f"persistentvolumeclaim {name} not found",),
                        objects=(ref,),
                        name=name,
                        command=env.settings.kubectl.here("get", "persistentvolumeclaims"),
                    )
                )
            else:
                findings.append(SAY.cant_check(env, Kind.PERSISTENT_VOLUME_CLAIM, read, ref))
            continue
        deleted = _being_deleted(env, name, read.obj)
        if deleted is not None:
            findings.append(deleted)
            continue
        pod = ephemeral.get(name)
        if pod is not None and not o.controlled_by(read.obj, pod):
            findings.append(_not_its_own(env, name, pod))
            continue
        spec, status = o.mapping(read.obj.get("spec")), o.mapping(read.obj.get("status"))
        claim_phase = str(status.get("phase", "Pending"))
        if claim_phase == "Bound":
            continue
        if claim_phase == "Lost":
            findings.append(
                SAY.finding(
                    Status.FAIL,
                    Basis.MEASURED,
                    VOLUME_LOST,
                    details=(f"persistentvolumeclaim {name} is Lost",),
                    objects=(ref,),
                    name=name,
                    command=env.settings.kubectl.here("describe", "pvc", name),
                )
            )
            continue
        type_name = spec.get("storageClassName")
        if not type_name:
            findings.append(_no_match(env, name, claim_phase, type_name))
            continue
        type_read = env.storage_types.get(str(type_name)) if type_name else None
        if isinstance(type_read, CantRead):
            findings.append(_type_unread(env, name, ref, str(type_name), type_read))
            continue
        storage_type = type_read.obj if isinstance(type_read, Got) else None
        if awaits_made_volume(read.obj, storage_type):
            awaiting.append(read.obj)
        elif not _waits_for_first_use(storage_type):
            findings.append(
                SAY.finding(
                    Status.FAIL,
                    Basis.MEASURED,
                    VOLUME_UNBOUND,
                    details=(f"persistentvolumeclaim {name} is {claim_phase}",),
                    objects=(ref,),
                    name=name,
                    state=claim_phase.lower(),
                    storage_type=type_name,
                    command=env.settings.kubectl.here("describe", "pvc", name),
                )
            )
    findings += _no_free_volume(env, awaiting)
    findings += _planned_ephemeral(env)
    findings += _not_attached(env)
    if findings:
        return findings
    return [
        SAY.ok(objects=sorted(f"PersistentVolumeClaim/{n}" for n in env.claims.keys() - made_later))
    ]


def _type_unread(env: Environment, name: str, ref: str, type_name: str, read: CantRead) -> Finding:
    """The storage type a volume asks for could not be read: measured absent (the PV
    controller can't provision the volume: ProvisioningFailed `storageclass.storage.k8s.io
    "<name>" not found`), or an unknown."""
    if not read.is_measurement:
        return SAY.cant_check(env, Kind.STORAGE_CLASS, read, ref)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        TYPE_MISSING,
        details=(f"storageclass {type_name} not found",),
        objects=(ref, f"StorageClass/{type_name}"),
        name=name,
        storage_type=type_name,
        command=env.settings.kubectl.cluster("get", "storageclasses"),
    )


def _no_free_volume(env: Environment, claims: list[KubeObject]) -> list[Finding]:
    """The claims that only a volume made in advance can bind and for which no free volume of
    the cluster fits (doctor/knowledge/made_volumes.py): kube-scheduler refuses every machine
    to the pods that mount them ("node(s) didn't find available persistent volumes to bind").
    Without the list of volumes nothing says whether one is free: unknown."""
    if not claims:
        return []
    # Imported on use: only a claim that awaits a volume made in advance looks for a free one
    # (doctor's start-up on a small namespace, bench/imports.py).
    from truegreen.doctor.knowledge.made_volumes import free_volumes

    refs = [f"PersistentVolumeClaim/{o.name_of(c)}" for c in claims]
    read = env.made_volumes or CantRead(ReadFailure.NOT_CAPTURED, "persistentvolumes not listed")
    if isinstance(read, CantRead):
        return [SAY.cant_check(env, Kind.PERSISTENT_VOLUME, read, *refs, listed=True)]
    try:
        matches = free_volumes(claims, read.items)
    except QuantityError as error:
        cant = CantRead(ReadFailure.MALFORMED, f"a volume's size is not a quantity: {error}")
        return [SAY.cant_check(env, Kind.PERSISTENT_VOLUME, cant, *refs, listed=True)]
    return [
        _none_free(env, claim, match.refused)
        for claim, match in zip(claims, matches, strict=True)
        if match.volume is None
    ]


def _none_free(
    env: Environment, claim: KubeObject, refused: tuple[tuple[str, str], ...]
) -> Finding:
    """One claim no free volume fits, with why each volume of its class would not do."""
    name, spec = o.name_of(claim), o.mapping(claim.get("spec"))
    type_name = str(spec.get("storageClassName"))
    asked = str(o.mapping(o.mapping(spec.get("resources")).get("requests")).get("storage") or 0)
    modes = ", ".join(str(m) for m in o.sequence(spec.get("accessModes"))) or "(none)"
    phase = str(o.mapping(claim.get("status")).get("phase") or "Pending")
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        NO_FREE_VOLUME,
        details=(
            f"persistentvolumeclaim {name} is {phase}; storageclass {type_name}: provisioner "
            "kubernetes.io/no-provisioner, volumeBindingMode WaitForFirstConsumer",
            f"no Available PersistentVolume of storageClassName {type_name} with capacity >= "
            f"{asked}, accessModes {modes}, volumeMode {spec.get('volumeMode') or 'Filesystem'}: "
            "node(s) didn't find available persistent volumes to bind",
            *(f"persistentvolume {volume}: {why}" for volume, why in refused),
        ),
        objects=(f"PersistentVolumeClaim/{name}", f"StorageClass/{type_name}"),
        name=name,
        storage_type=type_name,
        size=f"{_plain_size(asked)} or more",
        command=env.settings.kubectl.cluster("get", "persistentvolumes"),
    )


def _plain_size(text: str) -> str:
    """`500 GiB` from `500Gi`; the text as written where it is not a quantity."""
    try:
        return format_amount(MEMORY, scheduler_units(MEMORY, parse_quantity(text)))
    except QuantityError:
        return text


def _planned_ephemeral(env: Environment) -> list[Finding]:
    """The storage types of the planned job's generic ephemeral volumes. No pod of it exists
    yet, so neither do their claims: the ephemeral volume controller will make each with its
    template's spec (pkg/controller/volume/ephemeral/controller.go handleVolume), and a claim
    of a storage type that doesn't exist is never provisioned."""
    job = env.work().planned
    if job is None:
        return []
    wanted = {
        (volume, str(claim["storageClassName"])): None
        for pod_set in job.pod_sets
        for volume, claim in o.ephemeral_claims(pod_set.spec)
        if claim.get("storageClassName")
    }
    return [
        _type_unread(env, volume, job.ref, type_name, read)
        for volume, type_name in wanted
        if isinstance(read := env.storage_types.get(type_name), CantRead)
    ]


def _not_its_own(env: Environment, name: str, pod: KubeObject) -> Finding:
    """A claim of the name the ephemeral volume controller gives a pod's volume that the pod
    does not control: kube-scheduler's volumebinding refuses the pod (`PVC … was not created
    for pod … (pod is not owner)`, component-helpers storage/ephemeral VolumeIsForPod), and the
    controller never replaces a claim it did not make."""
    owner, owner_ref = _owner(env, pod)
    namespace = o.namespace_of(pod)
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        NOT_ITS_OWN,
        details=(
            f"PVC {namespace}/{name} was not created for pod {namespace}/{o.name_of(pod)} "
            "(pod is not owner)",
        ),
        objects=(f"PersistentVolumeClaim/{name}", *owner_ref),
        name=name,
        owner=owner,
        command=env.settings.kubectl.here("get", "pvc", name, "-o", "yaml"),
    )


def _made_with_its_pod(
    env: Environment, claim: str, ephemeral: Mapping[str, KubeObject]
) -> bool | CantRead | None:
    """Whether a claim that doesn't exist is one a controller makes with its pod, so there is
    nothing to create by hand: a pod's generic ephemeral volume, which the ephemeral volume
    controller makes once the pod exists (pkg/controller/volume/ephemeral/controller.go
    handleVolume), or a StatefulSet's, for a copy not made yet, whose controller makes a copy's
    claims right before the copy (pkg/controller/statefulset/stateful_pod_control.go
    CreateStatefulPod -> createPersistentVolumeClaims). None for any other claim; the pods'
    read when they could not be read."""
    if claim in ephemeral:
        return True
    statefulsets = env.workloads.get(Kind.STATEFUL_SET)
    sets = statefulsets.items if isinstance(statefulsets, Listed) else []
    copy = next((c for s in sets if (c := o.statefulset_claims(s).get(claim))), None)
    if copy is None:
        return None
    if not isinstance(env.pods, Listed):
        return env.pods
    return copy not in {o.name_of(pod) for pod in env.pods.items}


def _no_match(env: Environment, name: str, phase: str, type_name: object) -> Finding:
    """A claim of no storage type (`""`, or none: no default one was there to give it one) is
    never provisioned: the PV controller only binds it to a made volume of no class that
    matches it (pv_controller.go `syncUnboundClaim`: "no persistent volumes available for this
    claim and no storage class is set")."""
    stated = 'storageClassName ""' if type_name == "" else "no storageClassName"
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        VOLUME_NO_MATCH,
        details=(f"persistentvolumeclaim {name} is {phase}, {stated}",),
        objects=(f"PersistentVolumeClaim/{name}",),
        name=name,
        command=env.settings.kubectl.cluster("get", "storageclasses"),
    )


def _being_deleted(env: Environment, name: str, claim: KubeObject) -> Finding | None:
    """A claim being deleted, Bound or not: kube-scheduler refuses every new pod that mounts it
    (volumebinding/volume_binding.go `GetPodVolumeClaims`, UnschedulableAndUnresolvable); the
    pvc-protection finalizer keeps it only while pods already running use it."""
    meta = o.mapping(claim.get("metadata"))
    if not meta.get("deletionTimestamp"):
        return None
    finalizers = ", ".join(str(f) for f in o.sequence(meta.get("finalizers"))) or "none"
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        VOLUME_BEING_DELETED,
        details=(
            f'persistentvolumeclaim "{name}" is being deleted (since {meta["deletionTimestamp"]}; '
            f"finalizers: {finalizers})",
        ),
        objects=(f"PersistentVolumeClaim/{name}",),
        name=name,
        command=env.settings.kubectl.here("describe", "pvc", name),
    )


def _not_attached(env: Environment) -> list[Finding]:
    """Volumes the attach-detach controller said it could not attach for a pod of the
    namespace that waits on its machine: measured, whatever the claims' phases say. The
    controller posts on every pod scheduled to use the volume, whoever owns it
    (pkg/controller/volume/attachdetach/reconciler/reconciler.go `reportMultiAttachError`), and
    the evidence check leaves every `FailedAttachVolume` on a pod to this one (reports.RULED).
    A pod that runs has its volumes attached (the kubelet waits for them before it starts the
    containers), one that ended or is being deleted waits for nothing: what was said about
    them is history."""
    events = env.warning_events
    if events is None:
        return []
    if isinstance(events, CantRead):
        return [SAY.cant_check(env, Kind.EVENT, events)]
    if isinstance(env.pods, CantRead):
        # Whether a report still stands needs the pod it names (running, ended, or an earlier
        # pod of the name: `waiting_to_attach`, `names_an_earlier_pod`): unknown, never ready.
        # With no such report there is nothing the pods would decide: the same answer as
        # with them read.
        about = [f"Pod/{name}" for name in attach_reported(events.items)]
        return [SAY.cant_check(env, Kind.POD, env.pods, *about)] if about else []
    waiting = {o.name_of(pod): pod for pod in waiting_to_attach(env.pods.items)}
    found = []
    for failure in attach_failures(events.items, list(waiting.values())):
        owner, owner_ref = _owner(env, waiting[failure.pod])
        found.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                ATTACHED_ELSEWHERE if failure.multi_attach else ATTACH_FAILED,
                details=(f"FailedAttachVolume on pod {failure.pod}: {failure.message}",),
                objects=(f"Pod/{failure.pod}", *owner_ref),
                owner=owner,
                command=env.settings.kubectl.here("describe", "pod", failure.pod),
            )
        )
    return found


def _owner(env: Environment, pod: KubeObject) -> tuple[str, tuple[str, ...]]:
    """The pod's owner in plain words (its training job, its workload, else the pod itself),
    and the owner's reference when it has one."""
    job = env.work().job_of(pod)
    if job is not None:
        return job.words(), (job.ref,)
    workload = env.workload_of(pod)
    if workload is not None:
        return owner_words(workload), (o.ref(workload),)
    return f"the program '{o.name_of(pod)}'", ()
