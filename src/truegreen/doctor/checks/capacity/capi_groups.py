"""A Cluster API machine group's own provision time, from its annotation.

cluster-autoscaler's `--max-node-provision-time` "can be overridden per node group"
(config/flags/flags.go). Its clusterapi provider is the one whose groups say so in the cluster
itself: each group is a MachineDeployment, MachineSet or MachinePool of `cluster.x-k8s.io`, and
`nodegroup.GetOptions` (cloudprovider/clusterapi/clusterapi_nodegroup.go) overrides the flag with
the annotation `cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime` where its value reads
as a Go duration (`getDurationOption`: `time.ParseDuration`; clusterapi_utils.go
`autoscalingOptions` keeps a non-empty value, lower-cased). The group's name in the autoscaler's
words is `nodegroup.Id()`, its resource's `Kind/namespace/name` (clusterapi_unstructured.go
`ID`: `path.Join(r.Kind(), r.Namespace(), r.Name())`), which `TriggeredScaleUp` prints
(`pod triggered scale-up: [{MachineDeployment/ns/name 0->1 (max: 4)}]`). The group is got only
where a scale-up names it and the cluster serves `cluster.x-k8s.io` (reads/gather.py
`_machine_groups`). Everything here is pure.
"""

from collections.abc import Sequence
from datetime import timedelta

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind, KubeObject
from truegreen.doctor.checks.capacity.autoscaler_flags import ProvisionTime
from truegreen.doctor.environment import MachineGroups
from truegreen.doctor.knowledge.reports import quoted
from truegreen.goduration import go_duration

PROVISION_ANNOTATION = "cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime"
"""The provider's `getNodeGroupAutoscalingOptionsKeyPrefix()` (`cluster.x-k8s.io/autoscaling-
options-`, the group of `CAPI_GROUP`'s default) and config `DefaultMaxNodeProvisionTimeKey`."""
CAPI_VERSIONS: dict[str, dict[str, Kind]] = {
    "v1beta2": {
        "MachineDeployment": Kind.MACHINE_DEPLOYMENT,
        "MachineSet": Kind.MACHINE_SET,
        "MachinePool": Kind.MACHINE_POOL,
    },
    "v1beta1": {
        "MachineDeployment": Kind.MACHINE_DEPLOYMENT_V1BETA1,
        "MachineSet": Kind.MACHINE_SET_V1BETA1,
        "MachinePool": Kind.MACHINE_POOL_V1BETA1,
    },
}
"""The machine group kinds per version doctor reads, the newest first: cluster-autoscaler reads
the version discovery prefers (clusterapi_controller.go `getCAPIGroupPreferredVersion`), and
an annotation is the same object's at every version the group serves."""
CAPI_GROUP = Kind.MACHINE_DEPLOYMENT.spec.group
GROUPS_READ = 8
"""Machine groups looked up at most in one run: a training job's pods name one or a few."""


class CapiGroup(Struct, frozen=True):
    """A machine group as cluster-autoscaler's clusterapi provider names it."""

    kind: str
    namespace: str
    name: str

    @property
    def id(self) -> str:
        """The name the autoscaler gives it (`MachineDeployment/ns/name`)."""
        return f"{self.kind}/{self.namespace}/{self.name}"


def capi_group(group: str) -> CapiGroup | None:
    """The Cluster API machine group a TriggeredScaleUp's group name is, where it is one:
    `Kind/namespace/name` with a kind the provider scales; None for any other provider's name
    (`eks-gpu-ng`, a GCE instance group's URL)."""
    parts = group.split("/")
    if len(parts) != 3 or parts[0] not in CAPI_VERSIONS["v1beta1"] or not all(parts):
        return None
    return CapiGroup(*parts)


def capi_kind(group: CapiGroup, served: tuple[str, ...]) -> Kind | None:
    """The kind to get `group` at: its kind at the newest version of `cluster.x-k8s.io` the
    server serves; None where it serves neither (no Cluster API here: a management cluster
    apart from this one holds the groups, out of doctor's sight)."""
    for version, kinds in CAPI_VERSIONS.items():
        if version in served:
            return kinds[group.kind]
    return None


class GroupProvision(Struct, frozen=True):
    """What a machine group's annotation says of its provision time."""

    wait: timedelta | None
    """The group's own provision time; None where it gives none that the autoscaler reads."""
    written: str | None
    """The annotation's value as written (bounded); None where it is absent."""


def group_provision(obj: KubeObject) -> GroupProvision:
    """The provision time the group's annotation gives, read as the provider reads it
    (lower-cased, then Go's `time.ParseDuration`); a value above zero only, as the flag is
    read (autoscaler_flags.py `provision_time`)."""
    value = o.annotations_of(obj).get(PROVISION_ANNOTATION)
    if not isinstance(value, str) or not value:
        return GroupProvision(None, None)
    # Go's ParseDuration takes no spaces; go_duration would strip them.
    seconds = go_duration(value.lower()) if value.strip() == value else None
    wait = timedelta(seconds=seconds) if seconds is not None and seconds > 0 else None
    return GroupProvision(wait, value[:40])


def group_waits(groups: MachineGroups | None) -> dict[str, ProvisionTime]:
    """Per machine group read, the provision time its annotation gives, where it gives one
    the autoscaler reads; the source named as the flag's is (`ProvisionTime.source`)."""
    waits: dict[str, ProvisionTime] = {}
    for group, read in (groups.reads if groups is not None else {}).items():
        own = group_provision(read.obj) if isinstance(read, Got) else None
        if own is not None and own.wait is not None:
            waits[group] = ProvisionTime(
                own.wait, f"{PROVISION_ANNOTATION}={quoted(own.written or '')} on {group}"
            )
    return waits


class UnreadGroup(Struct, frozen=True):
    """A machine group whose get failed other than by the group's absence: whether it gives a
    provision time of its own, longer than the wait given for every group, is not known."""

    group: CapiGroup
    cant: CantRead

    @property
    def kind(self) -> Kind:
        """The group's kind, for the read's plain words and remedy: its resource and noun are
        the same at every version served, so the newest's stands for whichever was got."""
        return CAPI_VERSIONS["v1beta2"][self.group.kind]


def unread_groups(groups: MachineGroups | None) -> dict[str, UnreadGroup]:
    """Per machine group got, the failed get (refused, timed out, a server error: not a 404,
    which measures the group gone), where one failed."""
    unread: dict[str, UnreadGroup] = {}
    for name, read in (groups.reads if groups is not None else {}).items():
        group = capi_group(name)
        if isinstance(read, CantRead) and not read.is_measurement and group is not None:
            unread[name] = UnreadGroup(group, read)
    return unread


_STANDS = "the wait cluster-autoscaler was given for every group stands"
_UNSURE = (
    "a scale-up of it older than the wait cluster-autoscaler was given for every group may "
    "still stand"
)


def group_lines(groups: MachineGroups | None, named: Sequence[str]) -> list[str]:
    """For the details: of each Cluster API machine group `named` (a scale-up's), the provision
    time it gives, or why the wait given for every group stands for it (it gives none, or none
    that is a duration above zero; it is not found; the cluster serves no Cluster API), or that
    it could not be read, so a scale-up of it past that wait may still stand."""
    if groups is None:
        return []
    waits = group_waits(groups)
    lines = []
    for group in dict.fromkeys(g for g in named if capi_group(g) is not None):
        read = groups.reads.get(group)
        if group in waits:
            wait = waits[group]
            minutes = wait.wait.total_seconds() / 60
            lines.append(
                f"cluster-autoscaler waits {minutes:g} minutes for a machine of {group}: "
                f"{wait.source}"
            )
        elif read is None:
            lines.append(
                f"{group} was not looked up (this cluster serves no Cluster API objects, "
                f"{CAPI_GROUP} v1beta2 or v1beta1: they are kept in another cluster): {_STANDS}"
                if not groups.served
                else f"{group} was not looked up (more than {GROUPS_READ} machine groups "
                f"named): {_STANDS}"
            )
        elif isinstance(read, CantRead):
            lines.append(
                f"{group} was not found ({read.reason}): {_STANDS}"
                if read.is_measurement
                else f"whether {group} gives a provision time of its own could not be read "
                f"({read.reason}): {_UNSURE}"
            )
        else:
            written = group_provision(read.obj).written
            lines.append(
                f"{group} gives no provision time of its own (no annotation "
                f"{PROVISION_ANNOTATION}): {_STANDS}"
                if written is None
                else f"{group}'s annotation {PROVISION_ANNOTATION} is “{quoted(written)}”, no "
                f"duration above zero: {_STANDS}"
            )
    return lines
