"""Dataset storage: every volume claim the environment uses exists and is bound."""

from collections.abc import Mapping
from typing import Any

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind
from truegreen.doctor.checks.base import cant_check, finding, ok
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.evidence import attach_failures

CHECK = CheckId.STORAGE


def _waits_for_first_use(storage_type: Mapping[str, Any] | None) -> bool:
    """A WaitForFirstConsumer class binds only once a pod using the claim is scheduled."""
    return (
        storage_type is not None and storage_type.get("volumeBindingMode") == "WaitForFirstConsumer"
    )


def check(env: Environment) -> list[Finding]:
    """Findings about the dataset volumes the environment mounts."""
    findings = [cant_check(env, CHECK, kind, read) for kind, read in env.unread_template_sources()]
    for name, read in env.claims.items():
        ref = f"PersistentVolumeClaim/{name}"
        if isinstance(read, CantRead):
            if read.is_measurement:
                findings.append(
                    finding(
                        CHECK,
                        Status.FAIL,
                        Basis.MEASURED,
                        "storage.volume-missing",
                        details=(f"persistentvolumeclaim {name} not found",),
                        objects=(ref,),
                        name=name,
                        command=env.settings.kubectl.here("get", "persistentvolumeclaims"),
                    )
                )
            else:
                findings.append(cant_check(env, CHECK, Kind.PERSISTENT_VOLUME_CLAIM, read, ref))
            continue
        spec, status = o.mapping(read.obj.get("spec")), o.mapping(read.obj.get("status"))
        claim_phase = str(status.get("phase", "Pending"))
        if claim_phase == "Bound":
            continue
        if claim_phase == "Lost":
            findings.append(
                finding(
                    CHECK,
                    Status.FAIL,
                    Basis.MEASURED,
                    "storage.volume-lost",
                    details=(f"persistentvolumeclaim {name} is Lost",),
                    objects=(ref,),
                    name=name,
                    command=env.settings.kubectl.here("describe", "pvc", name),
                )
            )
            continue
        type_name = spec.get("storageClassName")
        type_read = env.storage_types.get(str(type_name)) if type_name else None
        if isinstance(type_read, CantRead):
            if not type_read.is_measurement:
                findings.append(cant_check(env, CHECK, Kind.STORAGE_CLASS, type_read, ref))
                continue
            findings.append(
                finding(
                    CHECK,
                    Status.FAIL,
                    Basis.MEASURED,
                    "storage.type-missing",
                    details=(f"storageclass {type_name} not found",),
                    objects=(ref, f"StorageClass/{type_name}"),
                    name=name,
                    storage_type=type_name,
                    command=env.settings.kubectl.cluster("get", "storageclasses"),
                )
            )
            continue
        storage_type = type_read.obj if isinstance(type_read, Got) else None
        if not _waits_for_first_use(storage_type):
            findings.append(
                finding(
                    CHECK,
                    Status.FAIL,
                    Basis.MEASURED,
                    "storage.volume-unbound",
                    details=(f"persistentvolumeclaim {name} is {claim_phase}",),
                    objects=(ref,),
                    name=name,
                    state=claim_phase.lower(),
                    storage_type=type_name or "default",
                    command=env.settings.kubectl.here("describe", "pvc", name),
                )
            )
    findings += _not_attached(env)
    if findings:
        return findings
    return [ok(CHECK, objects=sorted(f"PersistentVolumeClaim/{n}" for n in env.claims))]


def _not_attached(env: Environment) -> list[Finding]:
    """Volumes the attach-detach controller said it could not attach for a training pod that
    does not run: measured, whatever the claims' phases say."""
    events = env.warning_events
    if events is None:
        return []
    if isinstance(events, CantRead):
        return [cant_check(env, CHECK, Kind.EVENT, events)]
    found = []
    work = env.work()
    for job in work.jobs:
        pods = [
            o.name_of(p)
            for p in o.remaining(env.pods_of(job))
            if o.node_name(p) and o.phase(p) != "Running"
        ]
        for failure in attach_failures(events.items, pods):
            code = "storage.attached-elsewhere" if failure.multi_attach else "storage.attach-failed"
            found.append(
                finding(
                    CHECK,
                    Status.FAIL,
                    Basis.MEASURED,
                    code,
                    details=(f"FailedAttachVolume on pod {failure.pod}: {failure.message}",),
                    objects=(f"Pod/{failure.pod}", job.ref),
                    job=f"'{job.name}'",
                    command=env.settings.kubectl.here("describe", "pod", failure.pod),
                )
            )
    return found
