"""ResourceQuota admission (doctor/checks/admission/quota.py) against the real plugin's rules,
value by value.

Ground truth: plugin/pkg/admission/resourcequota/controller.go (checkRequest) and
pkg/quota/v1/evaluator/core/pods.go (podComputeUsageHelper, podMatchesScopeFunc).
"""

from typing import Any

import pytest

from truegreen.doctor.checks.admission.quota import (
    JOB_COUNT,
    Holder,
    Quota,
    QuotaPod,
    QuotaVerdict,
    Refusal,
    ScopeTerm,
    Shortfall,
    amount,
    applies_to_pod,
    charge,
    counted,
    covered_for_pods,
    gang_verdicts,
    job_verdicts,
    object_count,
    parse_quota,
    pod_limits,
    pod_verdicts,
    quota_pod,
)
from truegreen.quantity import QuantityError, Resources


def _container(name: str = "c", **resources: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "resources": resources}


def _pod(cpu: int = 0, gpus: int = 0, **fields: Any) -> QuotaPod:
    requests = Resources.of({"cpu": cpu, "nvidia.com/gpu": gpus})
    return QuotaPod(requests, Resources(), **fields)


@pytest.mark.parametrize(
    ("resource", "text", "expected"),
    [
        ("cpu", "1.5", 1500),
        ("requests.cpu", "250m", 250),
        ("limits.cpu", "2", 2000),
        ("memory", "1Gi", 2**30),
        ("requests.memory", "1.5", 2),
        ("requests.nvidia.com/gpu", "2", 2),
        (JOB_COUNT, "10", 10),
    ],
)
def test_amounts_compare_in_millicores_for_cpu_and_whole_units_otherwise(
    resource: str, text: str, expected: int
) -> None:
    assert amount(resource, text) == expected


def test_a_bad_amount_is_an_error() -> None:
    with pytest.raises(QuantityError):
        amount("pods", "lots")


def test_pod_limits_sum_containers_and_sidecars_and_take_the_init_peak() -> None:
    spec = {
        "initContainers": [
            {"name": "side", "restartPolicy": "Always", "resources": {"limits": {"cpu": "1"}}},
            _container("setup", limits={"cpu": "4", "memory": "1Gi"}),
        ],
        "containers": [_container(limits={"cpu": "2"}), _container("d", limits={"cpu": "1"})],
    }
    # main: 2 + 1 + sidecar 1 = 4 cpu; init peak: 4 + sidecar 1 = 5 cpu, 1Gi.
    assert pod_limits(spec) == Resources.of({"cpu": 5000, "memory": 2**30})


def test_every_container_and_sidecar_adds_up() -> None:
    side = {"restartPolicy": "Always", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    spec = {
        "initContainers": [{"name": "a", **side}, {"name": "b", **side}],
        "containers": [_container("x", limits={"cpu": "3"}), _container("y", limits={"cpu": "2"})],
    }
    assert pod_limits(spec) == Resources.of({"cpu": 7000, "memory": 2 * 2**30})
    # an init container after both sidecars runs beside both of them
    spec["initContainers"].append(_container("setup", limits={"cpu": "6"}))
    assert pod_limits(spec) == Resources.of({"cpu": 8000, "memory": 2 * 2**30})


def test_the_init_peak_counts_only_the_sidecars_started_before() -> None:
    spec = {
        "initContainers": [
            _container("setup", limits={"cpu": "3"}),
            {"name": "side", "restartPolicy": "Always", "resources": {"limits": {"cpu": "1"}}},
        ],
        "containers": [_container(limits={"cpu": "1"})],
    }
    assert pod_limits(spec) == Resources.of({"cpu": 3000})


def test_pod_level_limits_replace_and_overhead_adds_only_to_what_is_limited() -> None:
    spec = {
        "containers": [_container(limits={"cpu": "2", "memory": "1Gi"})],
        "resources": {"limits": {"cpu": "3", "nvidia.com/gpu": "9"}},
        "overhead": {"cpu": "250m", "ephemeral-storage": "1Gi"},
    }
    assert pod_limits(spec) == Resources.of({"cpu": 3250, "memory": 2**30})


def test_quota_pod_reads_what_the_plugin_looks_at() -> None:
    spec = {
        "activeDeadlineSeconds": 0,
        "priorityClassName": "batch-high",
        "initContainers": [_container("init", requests={"memory": "1Gi"})],
        "containers": [_container("main", requests={"cpu": "1"}, limits={"memory": "2Gi"})],
    }
    pod = quota_pod(spec)
    # A limit without a request is the request too (API defaulting).
    assert pod == QuotaPod(
        requests=Resources.of({"cpu": 1000, "memory": 2 * 2**30}),
        limits=Resources.of({"memory": 2 * 2**30}),
        stated=(
            ("init", frozenset({("requests", "memory")})),
            (
                "main",
                frozenset({("requests", "cpu"), ("requests", "memory"), ("limits", "memory")}),
            ),
        ),
        terminating=True,
        priority_class="batch-high",
    )


def test_a_plain_pod_has_no_priority_class_and_is_not_terminating() -> None:
    pod = quota_pod({"containers": [{"name": "c"}]})
    assert (pod.priority_class, pod.terminating, pod.stated) == ("", False, (("c", frozenset()),))


def test_job_requests_replace_the_containers_requests() -> None:
    pod = quota_pod({"containers": [_container(requests={"cpu": "1"})]}, requests=Resources())
    assert pod.requests == Resources()
    assert pod.stated == (("c", frozenset({("requests", "cpu")})),)


@pytest.mark.parametrize(("deadline", "terminating"), [(None, False), (-1, False), (30, True)])
def test_terminating_is_an_active_deadline(deadline: int | None, terminating: bool) -> None:
    spec: dict[str, Any] = {"containers": []}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    assert quota_pod(spec).terminating is terminating


@pytest.mark.parametrize(
    ("affinity", "cross"),
    [
        ({}, False),
        ({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}, False),
        (
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [{"namespaces": ["x"]}]
                }
            },
            True,
        ),
        (
            {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"podAffinityTerm": {"namespaceSelector": {}}}
                    ]
                }
            },
            True,
        ),
        (
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"namespaceSelector": None, "namespaces": []}
                    ]
                }
            },
            False,
        ),
    ],
)
def test_cross_namespace_affinity(affinity: dict[str, Any], cross: bool) -> None:
    """pods.go crossNamespacePodAffinityTerm: `len(term.Namespaces) != 0 ||
    term.NamespaceSelector != nil`; a `namespaceSelector: null` decodes to nil."""
    spec = {"containers": [], "affinity": affinity}
    assert quota_pod(spec).cross_namespace_affinity is cross


def test_best_effort_means_no_cpu_or_memory_anywhere() -> None:
    assert _pod(gpus=1).best_effort
    assert not _pod(cpu=1).best_effort
    assert not QuotaPod(Resources(), Resources.of({"memory": 1})).best_effort


def test_the_charge_of_a_pod() -> None:
    pod = QuotaPod(
        Resources.of(
            {
                "cpu": 500,
                "memory": 10,
                "ephemeral-storage": 7,
                "hugepages-2Mi": 4,
                "nvidia.com/gpu": 1,
                "example.kubernetes.io/native": 3,
            }
        ),
        Resources.of({"cpu": 1000, "memory": 20, "ephemeral-storage": 8}),
    )
    assert charge(pod) == {
        "count/pods": 1,
        "pods": 1,
        "cpu": 500,
        "requests.cpu": 500,
        "limits.cpu": 1000,
        "memory": 10,
        "requests.memory": 10,
        "limits.memory": 20,
        "ephemeral-storage": 7,
        "requests.ephemeral-storage": 7,
        "limits.ephemeral-storage": 8,
        "hugepages-2Mi": 4,
        "requests.hugepages-2Mi": 4,
        "requests.nvidia.com/gpu": 1,
    }


def test_a_pod_without_sizes_is_charged_its_count() -> None:
    assert charge(_pod()) == {"count/pods": 1, "pods": 1}


def test_parse_quota_reads_status_and_every_scope() -> None:
    obj = {
        "metadata": {"name": "q"},
        "spec": {
            "scopes": ["NotTerminating"],
            "scopeSelector": {
                "matchExpressions": [
                    {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}
                ]
            },
        },
        "status": {"hard": {"requests.cpu": "4", "pods": "10"}, "used": {"requests.cpu": "1"}},
    }
    assert parse_quota(obj) == Quota(
        "q",
        {"requests.cpu": 4000, "pods": 10},
        {"requests.cpu": 1000},
        (ScopeTerm("NotTerminating"), ScopeTerm("PriorityClass", "In", ("high",))),
    )


def test_what_a_quota_covers_for_pods() -> None:
    hard = dict.fromkeys(
        [
            "pods",
            "count/pods",
            "requests.cpu",
            "limits.memory",
            "ephemeral-storage",
            "hugepages-1Gi",
            "requests.hugepages-2Mi",
            "requests.nvidia.com/gpu",
            "requests.example.kubernetes.io/x",
            "nvidia.com/gpu",
            "services",
            JOB_COUNT,
        ],
        1,
    )
    assert covered_for_pods(Quota("q", hard, {})) == {
        "pods",
        "count/pods",
        "requests.cpu",
        "limits.memory",
        "ephemeral-storage",
        "hugepages-1Gi",
        "requests.hugepages-2Mi",
        "requests.nvidia.com/gpu",
    }


@pytest.mark.parametrize(
    ("term", "pod", "matches"),
    [
        (ScopeTerm("Terminating"), _pod(terminating=True), True),
        (ScopeTerm("Terminating"), _pod(), False),
        (ScopeTerm("NotTerminating"), _pod(), True),
        (ScopeTerm("NotTerminating"), _pod(terminating=True), False),
        (ScopeTerm("BestEffort"), _pod(), True),
        (ScopeTerm("BestEffort"), _pod(cpu=1), False),
        (ScopeTerm("NotBestEffort"), _pod(cpu=1), True),
        (ScopeTerm("NotBestEffort"), _pod(), False),
        (ScopeTerm("CrossNamespacePodAffinity"), _pod(cross_namespace_affinity=True), True),
        (ScopeTerm("CrossNamespacePodAffinity"), _pod(), False),
        (ScopeTerm("PriorityClass"), _pod(priority_class="high"), True),
        (ScopeTerm("PriorityClass"), _pod(), False),
        (ScopeTerm("PriorityClass", "DoesNotExist"), _pod(), True),
        (ScopeTerm("PriorityClass", "DoesNotExist"), _pod(priority_class="high"), False),
        (ScopeTerm("PriorityClass", "In", ("high",)), _pod(priority_class="high"), True),
        (ScopeTerm("PriorityClass", "In", ("high",)), _pod(priority_class="low"), False),
        (ScopeTerm("PriorityClass", "In", ("",)), _pod(), False),
        (ScopeTerm("PriorityClass", "NotIn", ("high",)), _pod(priority_class="low"), True),
        (ScopeTerm("PriorityClass", "NotIn", ("high",)), _pod(), True),
        (ScopeTerm("PriorityClass", "NotIn", ("high",)), _pod(priority_class="high"), False),
        (ScopeTerm("PriorityClass", "Gt", ("high",)), _pod(priority_class="low"), False),
        (ScopeTerm("VolumeAttributesClass"), _pod(), False),
    ],
)
def test_scopes_match_as_the_pod_evaluator_matches_them(
    term: ScopeTerm, pod: QuotaPod, matches: bool
) -> None:
    assert applies_to_pod(Quota("q", {"pods": 1}, {}, (term,)), pod) is matches


def test_a_quota_applies_only_when_it_covers_a_pod_resource_and_every_scope_matches() -> None:
    pod = _pod(cpu=1)
    assert not applies_to_pod(Quota("q", {"services": 1}, {}), pod)
    assert applies_to_pod(Quota("q", {"pods": 1}, {}), pod)
    both = (ScopeTerm("NotTerminating"), ScopeTerm("BestEffort"))
    assert not applies_to_pod(Quota("q", {"pods": 1}, {}, both), pod)


def test_used_plus_requested_may_reach_hard_but_not_pass_it() -> None:
    at_limit = Quota("q", {"requests.cpu": 2000}, {"requests.cpu": 1000})
    assert pod_verdicts([at_limit], _pod(cpu=1000)) == []
    assert pod_verdicts([at_limit], _pod(cpu=1001)) == [
        QuotaVerdict(
            "q", Refusal.EXCEEDED, shortfalls=(Shortfall("requests.cpu", 1001, 1000, 2000),)
        )
    ]


def test_only_resources_the_pod_asks_for_are_compared() -> None:
    full = Quota(
        "q", {"pods": 5, "requests.nvidia.com/gpu": 1}, {"pods": 1, "requests.nvidia.com/gpu": 1}
    )
    assert pod_verdicts([full], _pod(cpu=1)) == []


def test_every_exceeded_resource_of_every_refusing_quota_is_named() -> None:
    quotas = [
        Quota("a", {"pods": 2, "requests.cpu": 1000}, {"pods": 2, "requests.cpu": 1000}),
        Quota("ignored", {"services": 1}, {"services": 1}),
        Quota("b", {"requests.nvidia.com/gpu": 1}, {"requests.nvidia.com/gpu": 1}),
    ]
    verdicts = pod_verdicts(quotas, _pod(cpu=500, gpus=1))
    assert [(v.quota, v.shortfalls) for v in verdicts] == [
        ("a", (Shortfall("pods", 1, 2, 2), Shortfall("requests.cpu", 500, 1000, 1000))),
        ("b", (Shortfall("requests.nvidia.com/gpu", 1, 1, 1),)),
    ]


def test_each_quota_is_judged_on_its_own() -> None:
    stated = (("c", frozenset({("requests", "cpu")})),)
    pod = QuotaPod(Resources.of({"cpu": 1000}), Resources(), stated=stated)
    quotas = [
        Quota("other-kind", {"services": 1}, {"services": 1}),
        Quota("unstated", {"limits.cpu": 9000}, {"limits.cpu": 0}),
        Quota("uncounted", {"pods": 9}, {}),
        Quota("room", {"pods": 9}, {"pods": 1}),
        Quota("full", {"pods": 1}, {"pods": 1}),
    ]
    assert [(v.quota, v.refusal) for v in pod_verdicts(quotas, pod)] == [
        ("unstated", Refusal.UNSTATED),
        ("uncounted", Refusal.UNCOUNTED),
        ("full", Refusal.EXCEEDED),
    ]


def test_a_quota_on_cpu_needs_every_container_to_state_it() -> None:
    pod = QuotaPod(
        Resources.of({"cpu": 1000}),
        Resources(),
        stated=(("a", frozenset({("requests", "cpu")})), ("b", frozenset())),
    )
    quota = Quota("q", {"requests.cpu": 9000, "limits.memory": 9, "pods": 9}, {})
    assert pod_verdicts([quota], pod) == [
        QuotaVerdict(
            "q",
            Refusal.UNSTATED,
            unstated=(("limits.memory", ("a", "b")), ("requests.cpu", ("b",))),
        )
    ]


@pytest.mark.parametrize(
    ("resource", "part", "name"),
    [
        ("cpu", "requests", "cpu"),
        ("memory", "requests", "memory"),
        ("requests.memory", "requests", "memory"),
        ("limits.cpu", "limits", "cpu"),
    ],
)
def test_which_size_each_quota_resource_needs(resource: str, part: str, name: str) -> None:
    stated = QuotaPod(Resources(), Resources(), stated=(("a", frozenset({(part, name)})),))
    quota = Quota("q", {resource: 10**12}, {resource: 0})
    assert pod_verdicts([quota], stated) == []
    other = "limits" if part == "requests" else "requests"
    unstated = QuotaPod(Resources(), Resources(), stated=(("a", frozenset({(other, name)})),))
    assert [v.refusal for v in pod_verdicts([quota], unstated)] == [Refusal.UNSTATED]


@pytest.mark.parametrize(
    ("pod_level", "stated"),
    [
        ({"requests": {"cpu": "4"}}, True),
        ({"limits": {"memory": "16Gi"}}, True),
        ({"requests": {"nvidia.com/gpu": "1"}}, False),
        ({"requests": {}, "limits": {}}, False),
        (None, False),
    ],
)
def test_pod_level_cpu_or_memory_frees_the_containers_from_stating_sizes(
    pod_level: dict[str, Any] | None, stated: bool
) -> None:
    """pods.go Constraints returns nil when PodLevelResources is on (beta, on by default) and
    IsPodLevelResourcesSet: pod-level requests or limits name cpu or memory (component-helpers
    resource/helpers.go IsSupportedPodLevelResource)."""
    spec: dict[str, Any] = {"containers": [_container("gpu", limits={"nvidia.com/gpu": "1"})]}
    if pod_level is not None:
        spec["resources"] = pod_level
    pod = quota_pod(spec)
    assert pod.pod_level is stated
    hard = {"limits.cpu": 10**6, "requests.memory": 10**12}
    quota = Quota("q", hard, dict.fromkeys(hard, 0))
    refusals = [v.refusal for v in pod_verdicts([quota], pod)]
    assert refusals == ([] if stated else [Refusal.UNSTATED])


def test_a_quota_without_a_count_for_a_covered_resource_refuses() -> None:
    quota = Quota("fresh", {"pods": 10, "requests.cpu": 4000, "services": 1}, {"pods": 0})
    assert pod_verdicts([quota], _pod(cpu=1)) == [
        QuotaVerdict("fresh", Refusal.UNCOUNTED, uncounted=("requests.cpu",))
    ]


def _job_holder(job: str, gpus: int, **fields: Any) -> Holder:
    return Holder(f"the training job '{job}'", f"Job/{job}", _pod(gpus=gpus, **fields))


def test_a_quota_full_because_of_running_training_jobs_names_them() -> None:
    quota = Quota("gpus", {"requests.nvidia.com/gpu": 3}, {"requests.nvidia.com/gpu": 3})
    holders = [
        Holder("'mysql-0'", None, _pod(cpu=1)),
        _job_holder("small", 1),
        _job_holder("big", 2),
    ]
    (verdict,) = pod_verdicts([quota], _pod(gpus=2), holders)
    assert verdict.users == ("the training job 'big'", "the training job 'small'")
    assert verdict.waiting_for == ("Job/big", "Job/small")


def test_no_wait_when_the_running_jobs_would_not_free_enough() -> None:
    quota = Quota("gpus", {"requests.nvidia.com/gpu": 3}, {"requests.nvidia.com/gpu": 3})
    holders = [Holder("'other'", None, _pod(gpus=2)), _job_holder("small", 1)]
    (verdict,) = pod_verdicts([quota], _pod(gpus=2), holders)
    assert verdict.waiting_for == ()
    assert verdict.users == ("'other'", "the training job 'small'")


def test_exactly_enough_freed_is_a_wait() -> None:
    quota = Quota("gpus", {"requests.nvidia.com/gpu": 2}, {"requests.nvidia.com/gpu": 2})
    (verdict,) = pod_verdicts([quota], _pod(gpus=2), [_job_holder("run", 2)])
    assert verdict.waiting_for == ("Job/run",)


def test_a_job_holding_only_one_of_the_exceeded_resources_frees_only_that() -> None:
    quota = Quota(
        "mixed",
        {"requests.nvidia.com/gpu": 2, "requests.cpu": 1000},
        {"requests.nvidia.com/gpu": 2, "requests.cpu": 1000},
    )
    holders = [
        _job_holder("gpu-run", 2),
        Holder("the training job 'cpu-run'", "Job/cpu-run", _pod(cpu=1000)),
    ]
    (verdict,) = pod_verdicts([quota], _pod(cpu=1000, gpus=2), holders)
    assert verdict.waiting_for == ("Job/cpu-run", "Job/gpu-run")
    (verdict,) = pod_verdicts([quota], _pod(cpu=1000, gpus=2), holders[:1])
    assert verdict.waiting_for == ()


def test_no_wait_without_any_training_job_holding_it() -> None:
    quota = Quota("gpus", {"requests.nvidia.com/gpu": 2}, {"requests.nvidia.com/gpu": 2})
    (verdict,) = pod_verdicts([quota], _pod(gpus=1), [Holder("'x'", None, _pod(gpus=2))])
    assert verdict.waiting_for == ()


def test_an_object_count_is_never_freed_by_waiting() -> None:
    quota = Quota("objects", {"count/pods": 1}, {"count/pods": 1})
    (verdict,) = pod_verdicts([quota], _pod(), [_job_holder("run", 0)])
    assert verdict.waiting_for == ()


def test_holders_outside_the_quotas_scope_hold_nothing_of_it() -> None:
    quota = Quota("long", {"pods": 1}, {"pods": 1}, (ScopeTerm("NotTerminating"),))
    (verdict,) = pod_verdicts([quota], _pod(), [_job_holder("run", 1, terminating=True)])
    assert (verdict.users, verdict.waiting_for) == ((), ())


# -- a job whose pods run only together: checkQuotas charges each pod as it is let in ------------

GPUS_HALF_USED = Quota("gpus", {"requests.nvidia.com/gpu": 4}, {"requests.nvidia.com/gpu": 2})


def test_a_gang_is_charged_all_its_pods_and_told_how_many_get_in() -> None:
    assert gang_verdicts([GPUS_HALF_USED], [(_pod(gpus=1), 4)]) == [
        QuotaVerdict(
            "gpus",
            Refusal.EXCEEDED,
            shortfalls=(Shortfall("requests.nvidia.com/gpu", 4, 2, 4),),
            pods=4,
            admitted=2,
        )
    ]


def test_a_gang_with_room_for_every_pod_is_let_in() -> None:
    assert gang_verdicts([GPUS_HALF_USED], [(_pod(gpus=1), 2)]) == []


def test_the_pods_are_let_in_in_their_sets_order_and_a_refused_one_takes_nothing() -> None:
    """Master (2 GPUs) then 3 Workers (1 GPU), room for 3: the Master and one Worker get in;
    the refused Workers are charged nothing."""
    quota = Quota("gpus", {"requests.nvidia.com/gpu": 3}, {"requests.nvidia.com/gpu": 0})
    (verdict,) = gang_verdicts([quota], [(_pod(gpus=2), 1), (_pod(gpus=1), 3)])
    assert (verdict.shortfalls[0].requested, verdict.pods, verdict.admitted) == (5, 4, 2)


def test_pods_outside_the_quota_s_scope_are_let_in_without_a_charge() -> None:
    quota = Quota("long", {"pods": 2}, {"pods": 1}, (ScopeTerm("NotTerminating"),))
    pods = [(_pod(terminating=True), 2), (_pod(), 2)]
    (verdict,) = gang_verdicts([quota], pods)
    assert (verdict.shortfalls, verdict.pods, verdict.admitted) == (
        (Shortfall("pods", 2, 1, 2),),
        4,
        3,
    )


def test_a_job_under_way_is_charged_only_the_pods_it_has_still_to_create() -> None:
    """2 of 4 pods were let in and are in `used` (with 1 GPU someone else holds): only the 2
    still to create are charged, and the 2 present count among those let in."""
    quota = Quota("gpus", {"requests.nvidia.com/gpu": 4}, {"requests.nvidia.com/gpu": 3})
    (verdict,) = gang_verdicts([quota], [(_pod(gpus=1), 2)], present=2)
    assert (verdict.shortfalls, verdict.pods, verdict.admitted, verdict.present) == (
        (Shortfall("requests.nvidia.com/gpu", 2, 3, 4),),
        4,
        3,
        2,
    )
    assert gang_verdicts([GPUS_HALF_USED], [(_pod(gpus=1), 2)], present=2) == []


def test_a_quota_already_refusing_a_pod_alone_is_said_per_pod() -> None:
    assert gang_verdicts([GPUS_HALF_USED], [(_pod(gpus=1), 4)], judged=["gpus"]) == []


def test_a_gang_waits_for_the_running_job_whose_end_makes_room_for_all_of_it() -> None:
    holders = [_job_holder("run", 2)]
    (verdict,) = gang_verdicts([GPUS_HALF_USED], [(_pod(gpus=1), 4)], holders)
    assert (verdict.users, verdict.waiting_for) == (("the training job 'run'",), ("Job/run",))
    (verdict,) = gang_verdicts([GPUS_HALF_USED], [(_pod(gpus=1), 5)], holders)
    assert verdict.waiting_for == ()


def test_a_finished_pod_counts_only_as_an_object_until_deleted() -> None:
    """PodUsageFunc: the object count always; `pods` and sizes only while QuotaV1Pod."""
    running = Holder("'a'", None, _pod(cpu=1000, gpus=1))
    assert counted(running) == charge(running.pod)
    assert counted(Holder("'a'", None, _pod(cpu=1000, gpus=1), finished=True)) == {"count/pods": 1}


def test_finished_pods_holding_the_object_count_are_named_apart() -> None:
    quota = Quota("objects", {"count/pods": 3}, {"count/pods": 3})
    holders = [
        Holder("'svc-0'", None, _pod(cpu=1)),
        Holder("'run-0'", "Job/run", _pod(cpu=1), finished=True),
        Holder("'run-1'", "Job/run", _pod(cpu=1), finished=True),
    ]
    (verdict,) = pod_verdicts([quota], _pod(), holders)
    assert (verdict.users, verdict.finished) == (("'svc-0'",), ("'run-0'", "'run-1'"))


def test_finished_pods_hold_no_running_programs_nor_sizes() -> None:
    quota = Quota("compute", {"pods": 1, "cpu": 1000}, {"pods": 1, "cpu": 1000})
    finished = [Holder("'run-0'", "Job/run", _pod(cpu=1000), finished=True)]
    (verdict,) = pod_verdicts([quota], _pod(cpu=1000), finished)
    assert (verdict.users, verdict.finished, verdict.waiting_for) == ((), (), ())


def test_a_creating_job_needs_room_in_unscoped_job_counts() -> None:
    quotas = [
        Quota("room", {JOB_COUNT: 5}, {JOB_COUNT: 4}),
        Quota("full", {JOB_COUNT: 5}, {JOB_COUNT: 5}),
        Quota("scoped", {JOB_COUNT: 1}, {JOB_COUNT: 9}, (ScopeTerm("BestEffort"),)),
        Quota("fresh", {JOB_COUNT: 5}, {}),
        Quota("pods-only", {"pods": 1}, {"pods": 1}),
        Quota("also-full", {JOB_COUNT: 1}, {JOB_COUNT: 3}),
    ]
    assert job_verdicts(quotas, JOB_COUNT) == [
        QuotaVerdict("full", Refusal.EXCEEDED, shortfalls=(Shortfall(JOB_COUNT, 1, 5, 5),)),
        QuotaVerdict("fresh", Refusal.UNCOUNTED, uncounted=(JOB_COUNT,)),
        QuotaVerdict("also-full", Refusal.EXCEEDED, shortfalls=(Shortfall(JOB_COUNT, 1, 3, 1),)),
    ]


def test_a_job_of_another_kind_is_charged_its_own_object_count() -> None:
    """The quota plugin picks the evaluator by the request's GroupResource (apiserver admission/
    plugin/resourcequota/controller.go checkRequest); an object-count evaluator charges only
    `count/<resource>.<group>` (quota/v1/generic/evaluator.go ObjectCountQuotaResourceNameFor):
    a PyTorchJob is never charged `count/jobs.batch`."""
    own = object_count("kubeflow.org", "pytorchjobs")
    assert own == "count/pytorchjobs.kubeflow.org"
    quotas = [
        Quota("jobs", {JOB_COUNT: 3}, {JOB_COUNT: 3}),
        Quota("pytorch", {own: 3}, {own: 3}),
    ]
    assert job_verdicts(quotas, own) == [
        QuotaVerdict("pytorch", Refusal.EXCEEDED, shortfalls=(Shortfall(own, 1, 3, 3),))
    ]


def test_the_object_count_name_of_a_resource() -> None:
    """ObjectCountQuotaResourceNameFor: `count/<resource>` in the core group."""
    assert object_count("batch", "jobs") == JOB_COUNT
    assert object_count("", "pods") == "count/pods"
