"""Placing a job's pods within the rules between pods (doctor/checks/capacity/placement.py), value
by value.

The rules follow kube-scheduler's filters as each placed pod counts for the next
(pkg/scheduler/framework/plugins/interpodaffinity and podtopologyspread, `AddPod`).
"""

from truegreen.doctor.checks.capacity.placement import (
    Apart,
    Near,
    Placement,
    PodGroup,
    Spread,
    Unplaced,
    place,
)
from truegreen.doctor.knowledge.fit import MachineRoom
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


def test_a_machine_at_its_pod_limit_takes_no_more() -> None:
    rooms = {"a": MachineRoom("a", Resources.of({GPU: 8}), 3, Resources(), 2)}
    placement = place([_one_gpu("w", 2, ("a",))], rooms)
    assert (placement.placed, placement.on) == (1, (("w", "a", 1),))


def test_pods_placed_count_against_the_pod_limit_for_the_next_set() -> None:
    rooms = {"a": MachineRoom("a", Resources.of({GPU: 8}), 2)}
    first = PodGroup("a-first", 2, Resources.of({GPU: 2}), ("a",))
    second = PodGroup("b-second", 1, Resources.of({GPU: 1}), ("a",))
    assert place([first, second], rooms).placed == 2


def test_how_close_the_first_unplaced_pod_came() -> None:
    """Of the machines that could hold it empty, the closest; of the resource it lacks, the
    machine with the most left once the pods before it were placed (ties: the later name)."""
    from truegreen.doctor.knowledge.fit import Shortfall

    group = PodGroup("w", 2, Resources.of({GPU: 2}), ("a", "b"))
    placement = place([group], _rooms(a=3, b=1))
    assert placement.unplaced == Unplaced(
        "w", Resources.of({GPU: 2}), "a", (Shortfall(GPU, 1),), ("b", 1)
    )
    nowhere = place([PodGroup("w", 1, Resources.of({GPU: 1}), ("z",))], _rooms(a=1))
    assert nowhere.unplaced == Unplaced("w", Resources.of({GPU: 1}), "", ())


def test_a_pod_short_of_pod_slots_only_names_no_most_free_machine() -> None:
    from truegreen.doctor.knowledge.fit import Shortfall
    from truegreen.quantity import PODS

    rooms = {"a": MachineRoom("a", Resources.of({GPU: 8}), 1)}
    placement = place([_one_gpu("w", 2, ("a",))], rooms)
    assert placement.unplaced == Unplaced("w", Resources.of({GPU: 1}), "a", (Shortfall(PODS, 1),))


def test_a_failure_packing_might_avoid_with_exactly_the_room_asked_is_not_proven() -> None:
    """4 + 3 + 3 GPUs on two machines of 5: exactly as much asked as there is, and each pod
    fits alone: first-fit decreasing fails, and that proves nothing."""
    big = PodGroup("big", 1, Resources.of({GPU: 4}), ("a", "b"))
    mid = PodGroup("mid", 2, Resources.of({GPU: 3}), ("a", "b"))
    placement = place([big, mid], _rooms(a=5, b=5))
    assert (placement.placed, placement.proven) == (2, False)


def test_more_asked_by_the_sets_together_than_there_is_is_proven() -> None:
    one = PodGroup("one", 1, Resources.of({GPU: 3}), ("a", "b"))
    two = PodGroup("two", 1, Resources.of({GPU: 3}), ("a", "b"))
    placement = place([one, two], _rooms(a=4, b=1))
    assert (placement.placed, placement.proven) == (1, True)


def test_a_set_asking_nothing_is_placed_after_one_asking_room() -> None:
    idle = PodGroup("a-idle", 1, Resources(), ("a",))
    busy = PodGroup("b-busy", 1, Resources.of({GPU: 1}), ("a",))
    assert place([idle, busy], _rooms(a=1)).on == (("b-busy", "a", 1), ("a-idle", "a", 1))


def test_a_resource_no_machine_offers_counts_as_the_largest_share() -> None:
    """A share of a resource the cluster has none of is the amount itself (over at least 1):
    that pod goes first, and is the one left unplaced."""
    odd = PodGroup("odd", 1, Resources.of({"example.com/fpga": 2}), ("a",))
    gpu = PodGroup("gpu", 1, Resources.of({GPU: 5}), ("a",))
    placement = place([gpu, odd], _rooms(a=4))
    assert placement.unplaced is not None
    assert placement.unplaced.group == "odd"  # 2 / 1 before 5 / 4


def test_a_refused_machine_is_the_first_with_room_that_a_rule_refuses() -> None:
    """Kept apart by zone, a and b in one zone: b has no room, so a is the machine named."""
    zones = (("a", "z1"), ("b", "z1"))
    rule = Apart("w", "w", zones, "apart by zone")
    placement = place([_one_gpu("w", 2, ("a", "b"), rule)], _rooms(a=2, b=0))
    assert placement.unplaced == Unplaced(
        "w", Resources.of({GPU: 1}), "a", (), rule="apart by zone"
    )


def test_the_second_of_two_sets_kept_apart_avoids_the_first() -> None:
    """Apart(leader, worker) with the leader placed first: the workers avoid its machine."""
    rule = Apart("leader", "worker", _hosts("a", "b"), "apart")
    leader = PodGroup("leader", 1, Resources.of({GPU: 3}), ("a", "b"), rules=(rule,))
    worker = PodGroup("worker", 2, Resources.of({GPU: 1}), ("a", "b"))
    placement = place([leader, worker], _rooms(a=4, b=4))
    assert placement.on == (("leader", "a", 1), ("worker", "b", 2))


def test_every_set_s_rules_are_checked_not_only_the_first() -> None:
    other = Apart("x", "x", _hosts("a", "b"), "x apart")
    mine = Apart("w", "w", _hosts("a", "b"), APART)
    x = PodGroup("x", 1, Resources.of({GPU: 1}), ("b",), rules=(other,))
    w = _one_gpu("w", 2, ("a",), mine)
    assert place([x, w], _rooms(a=4, b=4)).on == (("w", "a", 1), ("x", "b", 1))


def test_every_rule_records_the_pods_placed_not_only_the_first() -> None:
    """A spread rule of another set comes first: the set's own rule still counts its pods."""
    spread = Spread(
        "x", (("a", "z1"),), frozenset({"a"}), (("z1", 0),), 1, 1, frozenset({"x"}), "s"
    )
    near = Near("y", ((_hosts("a"), frozenset()),), frozenset({"y"}), True, "n")
    x = PodGroup("x", 1, Resources(), ("a",), rules=(spread,))
    y = PodGroup("y", 1, Resources(), ("a",), rules=(near,))
    w = _one_gpu("w", 2, ("a",), Apart("w", "w", _hosts("a"), APART))
    assert place([x, y, w], _rooms(a=4)).on == (("w", "a", 1), ("x", "a", 1), ("y", "a", 1))


def test_a_single_domain_spread_keeps_its_minimum() -> None:
    """One domain holding two matching pods, minDomains 1: the minimum is those two, so one
    more fits (2 + 1 - 2 <= 1)."""
    rule = Spread("w", (("a", "z1"),), frozenset({"a"}), (("z1", 2),), 1, 1, frozenset({"w"}), "s")
    assert place([_one_gpu("w", 1, ("a",), rule)], _rooms(a=4)).placed == 1


def test_a_set_outside_its_spread_may_go_where_the_skew_is_within_bounds() -> None:
    rule = Spread(
        "w",
        (("a", "z1"), ("b", "z2")),
        frozenset({"a", "b"}),
        (("z1", 2), ("z2", 1)),
        1,
        1,
        frozenset(),
        "s",
    )
    assert place([_one_gpu("w", 2, ("a", "b"), rule)], _rooms(a=1, b=1)).placed == 2


def test_a_counted_domain_the_counts_did_not_list_starts_at_zero() -> None:
    rule = Spread(
        "w",
        (("a", "z1"), ("b", "z2")),
        frozenset({"a", "b"}),
        (("z1", 1),),
        1,
        1,
        frozenset({"w"}),
        "s",
    )
    placement = place([_one_gpu("w", 3, ("b", "a"), rule)], _rooms(a=4, b=4))
    assert placement.on == (("w", "b", 2), ("w", "a", 1))


def test_an_apart_proof_counts_only_machines_that_could_hold_a_pod() -> None:
    """Two kept apart on a and b, but b's one pod slot is taken by another set placed first:
    two pods, two domains that could hold one: not proven (another set might move)."""
    rule = Apart("w", "w", _hosts("a", "b"), APART)
    rooms = _rooms(a=2, b=2)
    rooms["b"] = MachineRoom("b", Resources.of({GPU: 2}), 1)
    v = PodGroup("v", 1, Resources.of({GPU: 1}), ("b",))
    w = _one_gpu("w", 2, ("a", "b", "zz"), rule)
    placement = place([v, w], rooms)
    assert (placement.placed, placement.proven) == (2, False)
