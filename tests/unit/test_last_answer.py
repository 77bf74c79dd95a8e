"""What is computed from a shared read is computed once per read, by identity, never equality."""

from truegreen.doctor.knowledge.last_answer import LastAnswer


def test_the_same_objects_are_answered_from_the_last_computation() -> None:
    calls: list[tuple[object, ...]] = []

    def compute(*given: object) -> int:
        calls.append(given)
        return len(calls)

    last = LastAnswer(compute)
    machines, sums = ({"name": "m1"},), {"m1": 1}
    assert last(machines, sums) == 1
    assert last(machines, sums) == 1
    assert len(calls) == 1
    # an equal list that is another read is computed afresh, and becomes the one kept
    assert last(({"name": "m1"},), sums) == 2
    assert last(machines, sums) == 3
    assert last(machines, dict(sums)) == 4
    assert len(calls) == 4
