"""VolumeZone (pkg/scheduler/framework/plugins/volumezone/volume_zone.go): a bound claim's
PersistentVolume labelled with zones or regions (`topology.kubernetes.io/zone`, `.../region` and
their `failure-domain.beta.kubernetes.io/` forms; volumes made before node affinity, or by hand)
refuses a machine that has any such label and not one of the volume's values.
"""

from collections.abc import Mapping
from typing import Final

from truegreen import kubeobjects as o
from truegreen.cluster import Got
from truegreen.doctor.checks.capacity.filters.cycle import Cycle, claim_uses, domain_words
from truegreen.doctor.checks.capacity.filters.framework import Exclusion, Found

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"

TOPOLOGY_LABELS: Final = (_BETA_ZONE, _BETA_REGION, _ZONE, _REGION)
"""The labels the filter reads, in its order (`topologyLabels`)."""

_GA = {_BETA_ZONE: _ZONE, _BETA_REGION: _REGION}
"""A beta key the machine lacks is looked up by its GA form (`translateToGALabel`)."""


def label_values(value: str) -> frozenset[str] | None:
    """A volume's topology label as the set of values it allows: `__` separates several
    (cloud-provider volume/helpers `LabelZonesToSet`); None when an element is empty (the filter
    ignores such a label)."""
    values = [v.strip() for v in value.split("__")]
    if any(not v for v in values):
        return None
    return frozenset(values)


def volume_topologies(volume: Got) -> tuple[tuple[str, frozenset[str]], ...]:
    """The volume's (label key, allowed values), in the filter's order (`getPVTopologies`)."""
    labels = o.labels_of(volume.obj)
    found = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            values = label_values(str(labels[key]))
            if values is not None:
                found.append((key, values))
    return tuple(found)


def refuses(machine: Mapping[str, str], topologies: tuple[tuple[str, frozenset[str]], ...]) -> bool:
    """Whether the filter refuses a machine of these labels: only one with some topology label,
    and then every volume label must find its value there (`Filter`)."""
    if not any(key in machine for key in TOPOLOGY_LABELS):
        return False
    for key, values in topologies:
        value = machine.get(key)
        if value is None and key in _GA:
            value = machine.get(_GA[key])
        if value is None or str(value) not in values:
            return True
    return False


NAME: Final = "VolumeZone"
READS_PODS: Final = False


def filter(cycle: Cycle, found: Found) -> None:
    """The machines outside each bound volume's labelled zones and regions."""
    for use in claim_uses(cycle, found):
        if not isinstance(use.volume, Got):
            continue
        topologies = volume_topologies(use.volume)
        if not topologies:
            continue
        refused = tuple(
            sorted(m for m, labels in cycle.labels.items() if refuses(labels, topologies))
        )
        where = ", ".join(
            dict.fromkeys(f"{domain_words(key)} {' or '.join(sorted(v))}" for key, v in topologies)
        )
        name = o.name_of(use.volume.obj)
        labels = ", ".join(f"{key}={o.labels_of(use.volume.obj)[key]}" for key, _ in topologies)
        for pod_set in use.sets:
            found.exclude(
                Exclusion(
                    pod_set.name,
                    refused,
                    f"can't reach its volume '{use.claim}' (in {where})",
                    f"run the training job on machines in {where}, where its volume "
                    f"'{use.claim}' is, or keep its data on storage the job's machines can reach",
                    f"PersistentVolume {name} (claim {use.claim}) labelled {labels}: "
                    f"{', '.join(refused)} refused (volumezone: node(s) had no available volume "
                    "zone)",
                )
            )
