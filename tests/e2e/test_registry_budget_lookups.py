"""doctor's look-ups under the run's registry budget (doctor/reads/registry_budget.py), against
registries on loopback: a registry that let a look-up time out is not asked again in the run,
by any namespace's look-ups; once the budget is spent, no registry is dialled."""

from tests.support.hostile import HostileServer, ScriptedApi, silent
from tests.support.registry import serving_manifests
from truegreen.doctor.knowledge.image_presence import ImageLookup, Presence
from truegreen.doctor.reads.registry_budget import RegistryBudget
from truegreen.doctor.reads.registry_lookups import LiveRegistry
from truegreen.refresh.registry import LOOKUPS_IN_FLIGHT, RegistryAccess


def _registry(budget: RegistryBudget) -> LiveRegistry:
    return LiveRegistry(RegistryAccess(timeout=0.5), budget)


def test_a_registry_that_timed_out_is_not_asked_again_in_the_run() -> None:
    budget = RegistryBudget(60)
    with HostileServer(silent) as stalled:
        host = f"127.0.0.1:{stalled.port}"
        first = [ImageLookup(f"{host}/team/app-{k}:1") for k in range(3 * LOOKUPS_IN_FLIGHT)]
        # A second namespace's look-ups: another LiveRegistry, the same run's budget.
        later = ImageLookup(f"{host}/other/app:1")
        answers = _registry(budget).look_up(first)
        asked = stalled.counts["requests"]
        again = _registry(budget).look_up([later])
        assert stalled.counts["requests"] == asked
    # The first wave went out together and timed out; the rest of the run asked no more.
    assert 1 <= asked <= LOOKUPS_IN_FLIGHT
    assert {a.presence for a in answers.values()} == {Presence.TIMEOUT}
    assert again[later].presence is Presence.TIMEOUT
    assert again[later].reason == (
        f"{host} did not answer in time earlier in this run: not asked again"
    )


def test_a_registry_that_answers_stays_asked_beside_one_that_timed_out() -> None:
    budget = RegistryBudget(60)
    with HostileServer(silent) as stalled, ScriptedApi(serving_manifests) as answering:
        slow = ImageLookup(f"127.0.0.1:{stalled.port}/team/app:1")
        _registry(budget).look_up([slow])
        fine = ImageLookup(f"127.0.0.1:{answering.port}/team/app:1")
        answers = _registry(budget).look_up([fine])
    assert answers[fine].presence is Presence.PRESENT


def test_a_spent_budget_dials_nothing() -> None:
    with ScriptedApi(serving_manifests) as server:
        lookup = ImageLookup(f"127.0.0.1:{server.port}/team/app:1")
        answers = _registry(RegistryBudget(0)).look_up([lookup])
        assert server.counts["connections"] == 0
    assert answers[lookup].presence is Presence.OUT_OF_TIME
    assert answers[lookup].reason == "doctor gives the registries 0 s a run, all spent"
