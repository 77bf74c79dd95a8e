"""The registries' budget of a run (doctor/reads/registry_budget.py): no look-up's deadline
runs past it, and a registry that timed out once is remembered for the run."""

from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.request import (
    REGISTRY_LIMIT_IN_REQUESTS,
    RUN_LIMIT_IN_REQUESTS,
    _run_limit,
)
from truegreen.doctor.reads.registry_budget import RegistryBudget


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_look_up_gets_its_own_time_until_the_budget_is_nearly_spent() -> None:
    clock = _Clock()
    budget = RegistryBudget(10, clock)
    assert not budget.spent
    assert 4.5 < budget.deadline(5).remaining() <= 5
    clock.now += 8  # two seconds of the budget left: the look-up gets those two
    assert 1.5 < budget.deadline(5).remaining() <= 2
    clock.now += 2
    assert budget.spent
    assert budget.deadline(5).remaining() == 0


def test_a_registry_that_timed_out_is_remembered_alone() -> None:
    budget = RegistryBudget(10, _Clock())
    budget.timed_out("slow.example:5000")
    assert budget.stalled("slow.example:5000")
    assert not budget.stalled("slow.example")
    assert not budget.stalled("fast.example:5000")


def test_the_cluster_keeps_its_own_limit_when_registries_are_asked() -> None:
    connection = ConnectionSettings(request_timeout=2)
    assert RUN_LIMIT_IN_REQUESTS == 30
    assert REGISTRY_LIMIT_IN_REQUESTS == 10
    assert _run_limit(connection, registries=False) == 60
    assert _run_limit(connection, registries=True) == 80
