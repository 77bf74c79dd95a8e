"""Placing a job's pods within the rules between pods (doctor/placement.py), value by value.

The rules follow kube-scheduler's filters as each placed pod counts for the next
(pkg/scheduler/framework/plugins/interpodaffinity and podtopologyspread, `AddPod`).
"""

from truegreen.doctor.fit import MachineRoom
from truegreen.doctor.placement import (
    Apart,
    Near,
    Placement,
    PodGroup,
    Spread,
    Unplaced,
    place,
)
from truegreen.quantity import Resources

GPU = "nvidia.com/gpu"


def _rooms(**gpus: int) -> dict[str, MachineRoom]:
    return {name: MachineRoom(name, Resources.of({GPU: n}), 110) for name, n in gpus.items()}


def _one_gpu(name: str, count: int, machines: tuple[str, ...], *rules: object) -> PodGroup:
    return PodGroup(name, count, Resources.of({GPU: 1}), machines, rules=tuple(rules))  # type: ignore[arg-type]


def _hosts(*machines: str) -> tuple[tuple[str, str], ...]:
    return tuple((m, m) for m in machines)


APART = "may not share a machine with another of its programs"


def test_without_rules_first_fit_fills_each_machine_in_turn() -> None:
    placement = place([_one_gpu("w", 3, ("a", "b"))], _rooms(a=2, b=2))
    assert placement == Placement(3, 3, (("w", "a", 2), ("w", "b", 1)))


def test_pods_kept_apart_take_one_machine_each() -> None:
    rule = Apart("w", "w", _hosts("a", "b", "c"), APART)
    placement = place([_one_gpu("w", 3, ("a", "b", "c"), rule)], _rooms(a=4, b=4, c=4))
    assert placement == Placement(3, 3, (("w", "a", 1), ("w", "b", 1), ("w", "c", 1)))


def test_more_pods_kept_apart_than_machines_that_hold_one_is_certain() -> None:
    """Four kept apart, two machines with room: the third is refused by the rule, with room
    left on the first machine; certain (pigeonhole), as the rule is the scheduler's."""
    rule = Apart("w", "w", _hosts("a", "b", "c"), APART)
    placement = place([_one_gpu("w", 4, ("a", "b", "c"), rule)], _rooms(a=4, b=4, c=0))
    assert placement == Placement(
        4,
        2,
        (("w", "a", 1), ("w", "b", 1)),
        Unplaced("w", Resources.of({GPU: 1}), "a", (), rule=APART),
        proven=True,
    )


def test_an_inferred_rule_proves_nothing_and_says_so() -> None:
    rule = Apart("w", "w", _hosts("a", "b"), APART, measured=False)
    placement = place([_one_gpu("w", 3, ("a", "b"), rule)], _rooms(a=4, b=4))
    assert placement.unplaced == Unplaced(
        "w", Resources.of({GPU: 1}), "a", (), rule=APART, measured=False
    )
    assert placement.proven is False


def test_a_machine_without_the_key_takes_any_number_of_pods_kept_apart() -> None:
    rule = Apart("w", "w", _hosts("a"), APART)
    placement = place([_one_gpu("w", 3, ("a", "b"), rule)], _rooms(a=4, b=2))
    assert placement == Placement(3, 3, (("w", "a", 1), ("w", "b", 2)))


def test_a_machine_without_the_key_spoils_the_proof() -> None:
    """Pods kept apart where some machine has no domain: the count of domains bounds nothing."""
    rule = Apart("w", "w", _hosts("a"), APART)
    placement = place([_one_gpu("w", 4, ("a", "b"), rule)], _rooms(a=4, b=2))
    assert (placement.placed, placement.proven) == (3, False)


def test_two_sets_kept_apart_never_share_a_domain_either_way() -> None:
    """Leader and workers kept apart by zone: the workers (placed first, larger) take zone 1,
    the leader must go to zone 2."""
    zones = (("a", "z1"), ("b", "z1"), ("c", "z2"))
    rule = Apart("leader", "worker", zones, "may not share a zone with the programs of 'worker'")
    worker = PodGroup("worker", 2, Resources.of({GPU: 2}), ("a", "b", "c"))
    leader = PodGroup("leader", 1, Resources.of({GPU: 1}), ("a", "b", "c"), rules=(rule,))
    placement = place([leader, worker], _rooms(a=4, b=4, c=4))
    assert placement == Placement(3, 3, (("worker", "a", 2), ("leader", "c", 1)))


def test_a_domain_is_kept_apart_from_the_other_set_only() -> None:
    """Apart(leader, worker): two leaders may share a machine with each other."""
    rule = Apart("leader", "worker", _hosts("a", "b"), "apart")
    worker = PodGroup("worker", 1, Resources.of({GPU: 3}), ("a", "b"))
    leader = PodGroup("leader", 2, Resources.of({GPU: 1}), ("a", "b"), rules=(rule,))
    placement = place([leader, worker], _rooms(a=4, b=4))
    assert placement == Placement(3, 3, (("worker", "a", 1), ("leader", "b", 2)))


def test_pods_near_present_ones_go_only_to_their_domain() -> None:
    zones = (("a", "z1"), ("b", "z2"))
    rule = Near("w", ((zones, frozenset({"z2"})),), frozenset(), False, "near the cache")
    placement = place([_one_gpu("w", 2, ("a", "b"), rule)], _rooms(a=4, b=4))
    assert placement == Placement(2, 2, (("w", "b", 2),))


def test_pods_near_nothing_present_cannot_start() -> None:
    zones = (("a", "z1"), ("b", "z2"))
    rule = Near("w", ((zones, frozenset()),), frozenset(), False, "near the cache")
    placement = place([_one_gpu("w", 1, ("a", "b"), rule)], _rooms(a=4, b=4))
    assert placement.unplaced == Unplaced(
        "w", Resources.of({GPU: 1}), "a", (), rule="near the cache"
    )


def test_the_first_pod_that_matches_its_own_terms_starts_a_domain_the_rest_follow() -> None:
    """Self-affinity by zone: the first pod may go anywhere, the next only to its zone: a later
    machine of that zone is taken in a second pass, another zone's never."""
    zones = (("a", "z1"), ("b", "z2"), ("c", "z1"))
    rule = Near("w", ((zones, frozenset()),), frozenset({"w"}), True, "together")
    placement = place([_one_gpu("w", 3, ("a", "b", "c"), rule)], _rooms(a=1, b=4, c=1))
    assert placement == Placement(3, 2, (("w", "a", 1), ("w", "c", 1)), placement.unplaced, False)
    assert placement.unplaced == Unplaced("w", Resources.of({GPU: 1}), "b", (), rule="together")


def test_a_machine_missing_one_term_key_is_refused() -> None:
    first = (("a", "z1"), ("b", "z1"))
    second = (("a", "r1"),)
    rule = Near(
        "w", ((first, frozenset({"z1"})), (second, frozenset({"r1"}))), frozenset(), False, "n"
    )
    placement = place([_one_gpu("w", 2, ("b", "a"), rule)], _rooms(a=1, b=4))
    assert (placement.placed, placement.on) == (1, (("w", "a", 1),))


def test_every_term_must_hold_a_match() -> None:
    first = (("a", "z1"), ("b", "z1"))
    second = (("a", "r1"), ("b", "r2"))
    rule = Near(
        "w", ((first, frozenset({"z1"})), (second, frozenset({"r2"}))), frozenset(), False, "n"
    )
    placement = place([_one_gpu("w", 2, ("a", "b"), rule)], _rooms(a=4, b=4))
    assert placement.on == (("w", "b", 2),)


def test_pods_that_follow_others_are_placed_after_them() -> None:
    """Workers must run near the leader (a member of their term), though they are larger."""
    hosts = _hosts("a", "b")
    rule = Near("worker", ((hosts, frozenset()),), frozenset({"leader"}), False, "near")
    worker = PodGroup("worker", 1, Resources.of({GPU: 3}), ("a", "b"), rules=(rule,))
    leader = PodGroup("leader", 1, Resources.of({GPU: 1}), ("b", "a"))
    placement = place([worker, leader], _rooms(a=4, b=4))
    assert placement == Placement(2, 2, (("leader", "b", 1), ("worker", "b", 1)))


def test_a_member_placed_off_the_key_counts_for_no_domain() -> None:
    hosts = (("a", "a"),)
    rule = Near("worker", ((hosts, frozenset()),), frozenset({"leader"}), False, "near")
    worker = PodGroup("worker", 1, Resources.of({GPU: 1}), ("a",), rules=(rule,))
    leader = PodGroup("leader", 1, Resources.of({GPU: 1}), ("b",))
    placement = place([worker, leader], _rooms(a=4, b=4))
    assert (placement.placed, placement.on) == (1, (("leader", "b", 1),))


def _spread(counts: tuple[tuple[str, int], ...], *, skew: int = 1, min_domains: int = 1) -> Spread:
    return Spread(
        "w",
        (("a", "z1"), ("b", "z2"), ("c", "z1")),
        frozenset({"a", "b", "c"}),
        counts,
        skew,
        min_domains,
        frozenset({"w"}),
        "uneven",
    )


def test_spread_pods_alternate_between_domains() -> None:
    """Zones 1 (a, c) and 2 (b), maxSkew 1: a, b, c, then b again once zone 1 leads by one."""
    rule = _spread((("z1", 0), ("z2", 0)))
    placement = place([_one_gpu("w", 4, ("a", "b", "c"), rule)], _rooms(a=4, b=4, c=4))
    assert placement == Placement(4, 4, (("w", "a", 1), ("w", "b", 2), ("w", "c", 1)))


def test_spread_counts_the_pods_already_there() -> None:
    """Zone 1 holds two matching pods: with maxSkew 1, zone 1 takes one more only once zone 2
    holds two (2 + 1 - 2 <= 1), and zone 2 then a third."""
    rule = _spread((("z1", 2), ("z2", 0)))
    placement = place([_one_gpu("w", 4, ("a", "b", "c"), rule)], _rooms(a=4, b=4, c=4))
    assert placement == Placement(4, 4, (("w", "b", 3), ("w", "c", 1)))


def test_spread_stops_where_the_emptiest_domain_is_full() -> None:
    rule = _spread((("z1", 0), ("z2", 0)))
    placement = place([_one_gpu("w", 2, ("a", "b", "c"), rule)], _rooms(a=4, b=0, c=4))
    assert placement == Placement(
        2, 1, (("w", "a", 1),), Unplaced("w", Resources.of({GPU: 1}), "c", (), rule="uneven"), False
    )


def test_a_larger_skew_allows_more_in_one_domain() -> None:
    rule = _spread((("z1", 0), ("z2", 0)), skew=2)
    placement = place([_one_gpu("w", 2, ("a", "b", "c"), rule)], _rooms(a=4, b=0, c=4))
    assert placement.on == (("w", "a", 2),)


def test_fewer_domains_than_min_domains_keep_the_minimum_at_zero() -> None:
    """Two domains, minDomains 3: the minimum is 0 whatever the counts (filtering.go
    `minMatchNum`), so each domain takes maxSkew at most."""
    rule = _spread((("z1", 0), ("z2", 0)), min_domains=3)
    placement = place([_one_gpu("w", 3, ("a", "b", "c"), rule)], _rooms(a=4, b=4, c=4))
    assert (placement.placed, placement.on) == (2, (("w", "a", 1), ("w", "b", 1)))


def test_a_machine_without_the_spread_key_is_refused() -> None:
    rule = Spread(
        "w", (("a", "z1"),), frozenset({"a"}), (("z1", 0),), 5, 1, frozenset({"w"}), "uneven"
    )
    placement = place([_one_gpu("w", 2, ("b", "a"), rule)], _rooms(a=1, b=4))
    assert placement.on == (("w", "a", 1),)


def test_a_set_that_does_not_match_its_spread_is_held_by_the_skew_only() -> None:
    """Counts already skewed beyond maxSkew refuse the domain; pods that do not match the
    selector never change them."""
    rule = Spread(
        "w",
        (("a", "z1"), ("b", "z2")),
        frozenset({"a", "b"}),
        (("z1", 3), ("z2", 0)),
        1,
        1,
        frozenset(),
        "uneven",
    )
    placement = place([_one_gpu("w", 5, ("a", "b"), rule)], _rooms(a=4, b=4))
    assert placement.on == (("w", "b", 4),)


def test_members_placed_outside_the_counted_machines_do_not_count() -> None:
    """Only machine a is counted: pods on b raise no count, and b's domain, not among the
    counted ones, stays at 0 (filtering.go: a pair not in TpPairToMatchNum counts 0)."""
    rule = Spread(
        "w",
        (("a", "z1"), ("b", "z2")),
        frozenset({"a"}),
        (("z1", 0),),
        1,
        1,
        frozenset({"w"}),
        "uneven",
    )
    placement = place([_one_gpu("w", 3, ("b", "a"), rule)], _rooms(a=4, b=4))
    assert placement.on == (("w", "b", 2), ("w", "a", 1))


def test_a_cap_per_machine_holds_across_the_passes_a_rule_makes() -> None:
    """At most one per machine, and pods that must share a zone: the second pass, which a
    rule makes, never puts a second pod where the cap is reached."""
    zones = (("a", "z1"), ("b", "z2"), ("c", "z1"))
    rule = Near("w", ((zones, frozenset()),), frozenset({"w"}), True, "together")
    group = PodGroup("w", 3, Resources.of({GPU: 1}), ("a", "b", "c"), per_machine=1, rules=(rule,))
    placement = place([group], _rooms(a=4, b=4, c=4))
    assert (placement.placed, placement.on) == (2, (("w", "a", 1), ("w", "c", 1)))
