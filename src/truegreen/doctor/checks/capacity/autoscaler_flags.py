"""How long cluster-autoscaler waits for a machine it asked for, from its own command line.

A scale-up stands for `--max-node-provision-time` (cluster-autoscaler config/flags/flags.go:
`fs.DurationVar(..., "max-node-provision-time", 15*time.Minute, "The default maximum time CA
waits for node to be provisioned - the value can be overridden per node group")`). GPU machines
often take longer than the default to come up, so installs raise it, through the Helm chart's
`extraArgs` (charts/cluster-autoscaler/templates/deployment.yaml writes each as
`--NAME=VALUE` after `./cluster-autoscaler`). Where the autoscaler runs as a pod of the cluster,
its running pod says which value it was given; a managed autoscaler (GKE, AKS) runs no such
pod, and the default stands. Everything here is pure.
"""

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import msgspec
from msgspec import Struct

from truegreen.doctor.checks.capacity.autoscaling import PROVISION_TIME
from truegreen.goduration import go_duration

PROVISION_FLAG = "max-node-provision-time"
PROGRAM = "cluster-autoscaler"
"""The program's name: the last part of its image's repository (registry.k8s.io/autoscaling/
cluster-autoscaler) and of the command the chart runs (`./cluster-autoscaler`)."""


class _Container(Struct, gc=False):
    image: str = ""
    command: list[str] = msgspec.field(default_factory=list)
    args: list[str] = msgspec.field(default_factory=list)


class _Spec(Struct, gc=False):
    containers: list[_Container] = msgspec.field(default_factory=list)


class _Metadata(Struct, gc=False):
    name: str = ""
    namespace: str = ""


class AutoscalerPodView(Struct, gc=False):
    """The part of a pod the autoscaler fold reads: its name and its containers' programs."""

    metadata: _Metadata = msgspec.field(default_factory=_Metadata)
    spec: _Spec = msgspec.field(default_factory=_Spec)


def _is_autoscaler(container: _Container) -> bool:
    repository = container.image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    program = container.command[0].rsplit("/", 1)[-1] if container.command else ""
    return PROGRAM in (repository, program)


def flag_value(words: Sequence[str], name: str) -> str | None:
    """The value a command line gives the flag `name`, as Go's flag packages read it
    (`--name=V`, `-name=V`, `--name V`, `-name V`; the last one given wins); None when absent."""
    found = None
    for index, word in enumerate(words):
        bare = word.removeprefix("--") if word.startswith("--") else word.removeprefix("-")
        if bare == word:
            continue
        if bare.startswith(name + "="):
            found = bare[len(name) + 1 :]
        elif bare == name and index + 1 < len(words):
            found = words[index + 1]
    return found


class AutoscalerFlags:
    """The fold that looks, among the cluster's running pods, for cluster-autoscaler's own:
    its summary names the pod and the provision time it was given (its flag, or the default
    when it gives none); empty when no such pod runs."""

    view = AutoscalerPodView
    name = "cluster-autoscaler-flags"
    """Identifies the fold in a snapshot."""

    def __init__(self) -> None:
        self._found: dict[str, Any] = {}

    def add(self, item: AutoscalerPodView) -> None:
        """Note the first running cluster-autoscaler and the provision time it was given."""
        if self._found:
            return
        for container in item.spec.containers:
            if _is_autoscaler(container):
                value = flag_value([*container.command, *container.args], PROVISION_FLAG)
                self._found = {
                    "pod": f"{item.metadata.namespace}/{item.metadata.name}",
                    "flag": None if value is None else value[:40],
                }
                return

    def summary(self) -> dict[str, Any]:
        """The autoscaler's pod and its flag's value as written, if it runs."""
        return dict(self._found)


class ProvisionTime(Struct, frozen=True):
    """How long a cluster-autoscaler scale-up stands, and where doctor learned it."""

    wait: timedelta
    source: str
    """`the default`, or the flag as the autoscaler's pod gives it."""


DEFAULT_PROVISION_TIME = ProvisionTime(PROVISION_TIME, "the default")


def provision_time(summary: Any) -> ProvisionTime:
    """The provision time in the fold's summary; the default where no autoscaler pod was
    found, it gives no flag, or its value is no Go duration above zero (the autoscaler would
    not have started with a value that is no duration)."""
    if not isinstance(summary, dict):
        return DEFAULT_PROVISION_TIME
    value = summary.get("flag")
    seconds = go_duration(value) if isinstance(value, str) else None
    if seconds is None or seconds <= 0:
        return DEFAULT_PROVISION_TIME
    return ProvisionTime(
        timedelta(seconds=seconds), f"--{PROVISION_FLAG}={value} on {summary.get('pod')}"
    )
