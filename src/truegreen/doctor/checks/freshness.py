"""Image freshness: what refresh has recorded on the workloads (stale or dangling pins, a stop)."""

from truegreen import kubeobjects as o
from truegreen.doctor.checks.base import finding, ok, services
from truegreen.doctor.environment import Environment, owner_words
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.refresh.annotations import DANGLING_PIN, LATCHED, STALE_PIN, container_key

CHECK = CheckId.FRESHNESS


def check(env: Environment) -> list[Finding]:
    """Findings from refresh's annotations on the environment's services."""
    items, findings = services(env, CHECK)
    for workload in items:
        annotations = o.annotations_of(workload)
        workload_words = owner_words(workload).capitalize()
        spec = o.pod_spec(o.pod_template(workload))
        for container in [*o.init_containers(spec), *o.containers(spec)]:
            cname = str(container.get("name", ""))
            for marker, code, status in (
                (DANGLING_PIN, "freshness.dangling-pin", Status.FAIL),
                (STALE_PIN, "freshness.stale-pin", Status.WARN),
            ):
                value = annotations.get(container_key(marker, cname))
                if value:
                    findings.append(
                        finding(
                            CHECK,
                            status,
                            Basis.MEASURED,
                            code,
                            details=(f"{o.ref(workload)} {container_key(marker, cname)}: {value}",),
                            objects=(o.ref(workload),),
                            workload=workload_words,
                            container=cname,
                            tag=str(value).split(" ", 1)[0],
                        )
                    )
        if annotations.get(LATCHED):
            findings.append(
                finding(
                    CHECK,
                    Status.WARN,
                    Basis.MEASURED,
                    "freshness.refresh-stopped",
                    details=(f"{o.ref(workload)} {LATCHED}: {annotations[LATCHED]}",),
                    objects=(o.ref(workload),),
                    workload=workload_words,
                    marker=LATCHED,
                )
            )
    return findings or [ok(CHECK)]
