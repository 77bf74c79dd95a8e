"""CHECKS: every check doctor runs, in the order root causes come before symptoms.

A check is a module (or a package's `check` module) with a `CHECK` id and a `check(environment)`
function, as kube-scheduler's plugins are listed in one registry (`plugins/registry.go`).
Adding a check is one module and one line here.
"""

from typing import Protocol

from truegreen.doctor.checks import credentials, evidence, freshness, probes, storage, trial
from truegreen.doctor.checks.admission import check as admission
from truegreen.doctor.checks.capacity import check as capacity
from truegreen.doctor.checks.image_pull import check as image_pull
from truegreen.doctor.checks.queue import check as queue
from truegreen.doctor.checks.workloads import check as workloads
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import CheckId, Finding


class Check(Protocol):
    """One check: a pure function of what doctor read, and the id its findings carry."""

    @property
    def CHECK(self) -> CheckId:  # noqa: N802 -- a module constant satisfies it
        """The check's stable id."""
        ...

    def check(self, env: Environment) -> list[Finding]:
        """Every finding of this check about the environment; never reads the cluster."""
        ...


CHECKS: tuple[Check, ...] = (
    credentials,
    image_pull,
    storage,
    queue,
    admission,
    workloads,
    evidence,
    capacity,
    probes,
    freshness,
    trial,
)
