"""What every check shares: its catalogue of words (`Words`), the findings made from it, and
the functions several checks call (their workloads, an age in plain words)."""

from collections.abc import Iterable, Mapping
from datetime import timedelta

from msgspec import Struct
from msgspec.structs import replace

from truegreen.cluster import CantRead, Kind, KubeObject
from truegreen.doctor.environment import WORKLOAD_KINDS, Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.plain_words import Wording, fill, plain_why, read_remedy


def workloads_of(env: Environment, say: "Words") -> tuple[list[KubeObject], list[Finding]]:
    """The environment's Deployments, StatefulSets and DaemonSets, and an unknown finding for
    each list that could not be read."""
    items: list[KubeObject] = []
    unknown: list[Finding] = []
    for kind in WORKLOAD_KINDS:
        read = env.workloads[kind]
        if isinstance(read, CantRead):
            unknown.append(say.cant_check(env, kind, read))
        else:
            items.extend(read.items)
    return items, unknown


class Words(Struct, frozen=True):
    """One check's catalogue (its codes' plain words, kept beside the check) and the findings
    made from it: every headline and remedy the check can print comes from here."""

    check: CheckId
    wording: Mapping[str, Wording]

    def finding(
        self,
        status: Status,
        basis: Basis,
        code: str,
        *,
        details: Iterable[str] = (),
        objects: Iterable[str] = (),
        **fields: object,
    ) -> Finding:
        """A finding whose headline and remedy come from the entry for `code`."""
        headline, remedy = fill(self.wording[code], **fields)
        return Finding(
            self.check, status, basis, code, headline, remedy, tuple(details), tuple(objects)
        )

    def ok(
        self, *, details: Iterable[str] = (), objects: Iterable[str] = (), **fields: object
    ) -> Finding:
        """The check looked and found nothing wrong."""
        code = f"{self.check}.ok"
        return self.finding(
            Status.OK, Basis.MEASURED, code, details=details, objects=objects, **fields
        )

    def cant_check(
        self,
        env: Environment,
        kind: Kind,
        cant: CantRead,
        *objects: str,
        everywhere: bool = False,
        namespace: str | None = None,
        name: str | None = None,
        noun: str | None = None,
        listed: bool = False,
    ) -> Finding:
        """The check could not look: unknown, never ok and never a failure. The remedy is the
        step that fixes this read (`everywhere`: it covered every namespace; `namespace`: it
        was of another namespace than the one judged; `name`: one object got by name, which a
        grant limited to named objects needs asked for; `listed`: a kind mostly got by name was
        listed whole); `noun` names what was read where the kind's own noun would not."""
        why = plain_why(kind, cant, noun)
        unknown = self.finding(
            Status.UNKNOWN,
            Basis.CANT_CHECK,
            f"{self.check}.cant-read",
            details=(cant.reason,),
            objects=objects,
            why=why,
            remedy=read_remedy(
                kind,
                cant,
                env.settings.kubectl,
                everywhere=everywhere,
                namespace=namespace,
                name=name,
                noun=noun,
                listed=listed,
            ),
        )
        return replace(unknown, why=why)


def format_age(age: timedelta) -> str:
    """A plain duration: `45 seconds`, `12 minutes`, `3 hours`, `2 days`."""
    seconds = int(age.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"
