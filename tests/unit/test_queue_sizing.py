"""The queue check sizes a pod set as Kueue does for its quota, not as the API server stores it."""


def test_kueue_keeps_the_first_default_even_within_one_limit_range() -> None:
    """Kueue summarises every Container item, the first default of a resource kept
    (kueue pkg/util/limitrange/limitrange.go `Summarize`, MergeResourceListKeepFirst), where
    LimitRanger lets a later item of the same range overwrite it."""
    from truegreen.doctor.checks.queue.kueue_verdict import kueue_sized
    from truegreen.doctor.knowledge.fit import pod_requests

    spec = {"containers": [{"name": "t"}]}
    limit_range = {
        "metadata": {"name": "defaults"},
        "spec": {
            "limits": [
                {"type": "Container", "defaultRequest": {"memory": "1Gi"}},
                {"type": "Container", "defaultRequest": {"memory": "3Gi"}},
            ]
        },
    }
    assert pod_requests(kueue_sized(spec, [limit_range])).get("memory") == 1024**3
