"""The pod as the API server stores it, value by value against the real sources.

Each case names the kubernetes/kubernetes code it follows: pkg/apis/core/v1/defaults.go
(SetDefaults_Pod, defaultPodResources, SetDefaults_LimitRangeItem),
plugin/pkg/admission/limitranger/admission.go, plugin/pkg/admission/extendedresourcetoleration/
admission.go, plugin/pkg/admission/priority/admission.go and apimachinery's resource.Quantity.
"""

from decimal import Decimal
from typing import Any

import pytest

from truegreen.container_resources import is_extended
from truegreen.doctor.knowledge.fit import pod_requests
from truegreen.doctor.knowledge.stored_pod import (
    Amount,
    ExtendedTolerations,
    Form,
    Knowledge,
    LimitRangeRefusal,
    PriorityLevel,
    SelectorConflict,
    StoredPod,
    Violation,
    added_tolerations,
    canonical,
    cloud_of,
    defaulted,
    extended_requests,
    extended_tolerations,
    job_priority,
    kept_for,
    limit_items,
    limit_range_refusal,
    pod_sums,
    runtime_class_conflict,
    stated_priority,
    stored_spec,
    with_extended_tolerations,
    with_limit_range_defaults,
    with_priority,
    with_runtime_class,
)
from truegreen.quantity import QuantityError, Resources

GIB = 1024**3


def _c(
    name: str,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "resources": resources, **extra}


def _range(name: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(items)}}


def _resources(spec: dict[str, Any], index: int = 0, part: str = "containers") -> Any:
    return spec[part][index]["resources"]


# -- quantities ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "form"),
    [
        ("1536Mi", Decimal(1536 * 1024**2), Form.BINARY),
        ("1Ei", Decimal(1024**6), Form.BINARY),
        ("500m", Decimal("0.5"), Form.DECIMAL),
        (" 2 ", Decimal(2), Form.DECIMAL),
        ("2E", Decimal(2 * 10**18), Form.DECIMAL),
        ("1e3", Decimal(1000), Form.EXPONENT),
        ("15E-1", Decimal("1.5"), Form.EXPONENT),
        # SetDefaults_ResourceList rounds a stored amount up to thousandths.
        ("0.0001", Decimal("0.001"), Form.DECIMAL),
        ("1n", Decimal("0.001"), Form.DECIMAL),
    ],
)
def test_an_amount_keeps_its_value_and_the_form_it_was_written_in(
    text: str, value: Decimal, form: Form
) -> None:
    assert Amount.parse(text) == Amount(value, form)


def test_an_amount_that_is_no_quantity_is_refused() -> None:
    with pytest.raises(QuantityError):
        Amount.parse("lots")


@pytest.mark.parametrize(
    ("value", "form", "printed"),
    [
        (Decimal(0), Form.BINARY, "0"),
        (Decimal(1536 * 1024**2), Form.BINARY, "1536Mi"),
        (Decimal(GIB), Form.BINARY, "1Gi"),
        (Decimal(2048), Form.BINARY, "2Ki"),
        (Decimal(1536), Form.BINARY, "1536"),  # not a whole Ki
        (Decimal(1000), Form.BINARY, "1k"),  # below 1024: printed as DecimalSI
        (Decimal(1024), Form.BINARY, "1Ki"),
        (Decimal("1.5") * 1024, Form.BINARY, "1536"),
        (Decimal("1025.5"), Form.BINARY, "1025500m"),  # fractional: DecimalSI
        (Decimal(2**70), Form.BINARY, "1024Ei"),
        (Decimal("0.5"), Form.DECIMAL, "500m"),
        (Decimal("0.001"), Form.DECIMAL, "1m"),
        (Decimal("0.01"), Form.DECIMAL, "10m"),
        (Decimal("0.000001"), Form.DECIMAL, "1u"),
        (Decimal(1500), Form.DECIMAL, "1500"),
        (Decimal(1000), Form.DECIMAL, "1k"),
        (Decimal(2), Form.DECIMAL, "2"),
        (Decimal(128974848), Form.DECIMAL, "128974848"),
        (Decimal(10**9), Form.DECIMAL, "1G"),
        (Decimal(10**18), Form.DECIMAL, "1E"),
        (Decimal(10**21), Form.DECIMAL, "1e21"),
        (Decimal(-2000), Form.DECIMAL, "-2k"),
        (Decimal(1000), Form.EXPONENT, "1e3"),
        (Decimal(1500), Form.EXPONENT, "1500"),
        (Decimal("0.5"), Form.EXPONENT, "500e-3"),
    ],
)
def test_an_amount_is_printed_as_resource_quantity_prints_it(
    value: Decimal, form: Form, printed: str
) -> None:
    assert canonical(value, form) == printed


def test_a_sum_keeps_the_form_of_the_amount_added_to() -> None:
    total = Amount.parse("1Gi") + Amount.parse("512Mi")
    assert (total, str(total)) == (Amount(Decimal(1536 * 1024**2), Form.BINARY), "1536Mi")
    assert str(Amount.parse("500m") + Amount.parse("1Gi")) == "1073741824500m"


# -- 1. defaulting ---------------------------------------------------------------------------------


def test_limits_become_requests_where_none_is_stated() -> None:
    """SetDefaults_Pod, for containers and init containers alike."""
    spec = {
        "containers": [
            _c("trainer", limits={"memory": "1536Mi", "cpu": "2"}, requests={"cpu": "1"}),
            _c("plain"),
        ],
        "initContainers": [_c("fetch", limits={"nvidia.com/gpu": "1"})],
    }
    stored = defaulted(spec)
    assert _resources(stored) == {
        "requests": {"cpu": "1", "memory": "1536Mi"},
        "limits": {"memory": "1536Mi", "cpu": "2"},
    }
    assert _resources(stored, 1) == {"requests": {}, "limits": {}}
    assert _resources(stored, 0, "initContainers")["requests"] == {"nvidia.com/gpu": "1"}
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "1"}, "not changed"


def test_pod_level_requests_come_from_the_containers_or_the_pod_level_limits() -> None:
    """defaultPodResources (KEP-2837): with pod-level limits, a resource the containers
    request defaults to their sum, one they do not to the pod-level limit."""
    spec = {
        "resources": {"limits": {"cpu": "4", "memory": "8Gi", "hugepages-2Mi": "1Gi"}},
        "containers": [_c("a", requests={"cpu": "500m"}), _c("b", limits={"cpu": "250m"})],
    }
    stored = defaulted(spec)
    assert stored["resources"] == {
        "limits": {"cpu": "4", "memory": "8Gi", "hugepages-2Mi": "1Gi"},
        "requests": {"cpu": "750m", "memory": "8Gi"},
    }
    assert pod_requests(stored) == Resources.of({"cpu": 750, "memory": 8 * GIB})


def test_pod_level_requests_already_stated_are_kept() -> None:
    spec = {
        "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "4", "memory": "8Gi"}},
        "containers": [_c("a", requests={"cpu": "2", "memory": "1Gi"})],
    }
    assert defaulted(spec)["resources"]["requests"] == {"cpu": "1", "memory": "1073741824"}


def test_a_container_amount_that_is_no_quantity_leaves_the_pod_level_requests() -> None:
    spec = {"resources": {"limits": {"cpu": "4"}}, "containers": [_c("a", requests={"cpu": "x"})]}
    assert defaulted(spec)["resources"] == {"limits": {"cpu": "4"}}


@pytest.mark.parametrize(
    "pod_level",
    [None, {}, {"requests": {"cpu": "1"}}, {"limits": {"hugepages-2Mi": "1Gi"}}],
)
def test_without_pod_level_limits_the_pod_level_resources_stay(pod_level: Any) -> None:
    spec: dict[str, Any] = {"containers": [_c("a", requests={"cpu": "2"})]}
    if pod_level is not None:
        spec["resources"] = pod_level
    assert defaulted(spec).get("resources") == pod_level


# -- 2. LimitRanger's defaults ---------------------------------------------------------------------


def test_a_container_item_s_defaults_are_filled_as_the_api_server_stores_them() -> None:
    """SetDefaults_LimitRangeItem: default from max, defaultRequest from default, then min."""
    (container, pod) = limit_items(
        _range(
            "sizes",
            {
                "type": "Container",
                "max": {"cpu": "4", "memory": "8Gi"},
                "min": {"cpu": "100m", "ephemeral-storage": "1Gi"},
                "default": {"memory": "2Gi"},
                "defaultRequest": {"memory": "1Gi"},
                "maxLimitRequestRatio": {"cpu": "10"},
            },
            {"type": "Pod", "max": {"cpu": "16"}, "min": {"memory": "1Mi"}},
        )
    )
    assert container.type == "Container"
    assert container.default == {"memory": "2Gi", "cpu": "4"}
    assert container.default_request == {"memory": "1Gi", "cpu": "4", "ephemeral-storage": "1Gi"}
    assert container.max_ratio == {"cpu": "10"}
    assert (pod.type, pod.default, pod.default_request) == ("Pod", {}, {})
    assert (pod.max, pod.min) == ({"cpu": "16"}, {"memory": "1Mi"})


def test_a_memory_limit_alone_is_the_request_before_the_range_s_default_request() -> None:
    """The issue's case: a container that sets only a memory limit is stored with its request
    from that limit (SetDefaults_Pod runs on decoding, before LimitRanger), not at the range's
    smaller defaultRequest."""
    spec = {"containers": [_c("trainer", limits={"memory": "1536Mi"})]}
    ranges = [_range("sizes", {"type": "Container", "defaultRequest": {"memory": "512Mi"}})]
    stored = stored_spec(spec, ranges, extended_tolerations=False)
    assert _resources(stored) == {"requests": {"memory": "1536Mi"}, "limits": {"memory": "1536Mi"}}
    assert pod_requests(stored) == Resources.of({"memory": 1536 * 1024**2})


def test_range_defaults_fill_what_is_missing_in_containers_and_init_containers() -> None:
    spec = {
        "containers": [_c("a"), _c("b", requests={"cpu": "1"})],
        "initContainers": [_c("init", limits={"cpu": "2"})],
    }
    ranges = [
        _range(
            "sizes",
            {"type": "Container", "defaultRequest": {"cpu": "250m"}, "default": {"memory": "1Gi"}},
        )
    ]
    stored = with_limit_range_defaults(defaulted(spec), ranges)
    assert _resources(stored) == {
        "requests": {"cpu": "250m", "memory": "1Gi"},
        "limits": {"memory": "1Gi"},
    }
    assert _resources(stored, 1) == {
        "requests": {"cpu": "1", "memory": "1Gi"},
        "limits": {"memory": "1Gi"},
    }
    assert _resources(stored, 0, "initContainers") == {
        "requests": {"cpu": "2", "memory": "1Gi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    assert pod_requests(stored) == Resources.of({"cpu": 2000, "memory": 2 * GIB})


def test_the_first_range_to_default_a_resource_wins_and_a_later_item_of_one_range() -> None:
    spec = {"containers": [_c("main")]}
    ranges = [
        _range(
            "first",
            {"type": "Container", "defaultRequest": {"cpu": "100m"}},
            {"type": "Pod", "max": {"cpu": "64"}},
            {"type": "Container", "defaultRequest": {"cpu": "200m", "memory": "64Mi"}},
        ),
        _range("second", {"type": "Container", "defaultRequest": {"cpu": "300m", "memory": "1Gi"}}),
    ]
    assert _resources(with_limit_range_defaults(spec, ranges))["requests"] == {
        "cpu": "200m",
        "memory": "64Mi",
    }


def test_stated_sizes_beat_range_defaults() -> None:
    spec = {"containers": [_c("main", requests={"cpu": "2"}, limits={"memory": "1Gi"})]}
    ranges = [
        _range(
            "sizes",
            {
                "type": "Container",
                "default": {"memory": "4Gi", "cpu": "8"},
                "defaultRequest": {"cpu": "1"},
            },
        )
    ]
    resources = _resources(stored_spec(spec, ranges, extended_tolerations=False))
    assert resources == {
        "requests": {"cpu": "2", "memory": "1Gi"},
        "limits": {"memory": "1Gi", "cpu": "8"},
    }


# -- 4. ExtendedResourceToleration -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "extended"),
    [
        ("nvidia.com/gpu", True),
        ("example.com/fpga", True),
        ("cpu", False),
        ("hugepages-2Mi", False),
        ("kubernetes.io/something", False),
        ("storage.kubernetes.io/thing", False),
        ("requests.nvidia.com/gpu", False),
    ],
)
def test_an_extended_resource_has_a_domain_of_its_own(name: str, extended: bool) -> None:
    """helper.IsExtendedResourceName: not native (no domain, or kubernetes.io's), not a
    quota's `requests.` name."""
    assert is_extended(name) is extended


def test_the_plugin_looks_at_requests_once_limits_are_copied_into_them() -> None:
    spec = {
        "containers": [_c("a", limits={"nvidia.com/gpu": "1"}), _c("b", requests={"cpu": "1"})],
        "initContainers": [_c("i", requests={"example.com/fpga": "1", "nvidia.com/gpu": "1"})],
    }
    assert extended_requests(spec) == ("example.com/fpga", "nvidia.com/gpu")
    assert extended_requests(defaulted(spec)) == ("example.com/fpga", "nvidia.com/gpu")
    assert extended_requests({"containers": [_c("a", limits={"nvidia.com/gpu": "1"})]}) == ()


def test_a_toleration_per_extended_resource_is_added_once() -> None:
    spec = {
        "containers": [_c("a", requests={"nvidia.com/gpu": "1", "example.com/fpga": "2"})],
        "tolerations": [
            {"key": "example.com/fpga", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "nvidia.com/gpu", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
        ],
    }
    stored = with_extended_tolerations(spec)
    assert stored["tolerations"] == [
        {"key": "example.com/fpga", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert with_extended_tolerations(stored) == stored
    assert with_extended_tolerations({"containers": []}) == {"containers": [], "tolerations": []}
    assert len(spec["tolerations"]) == 2, "not changed"


def test_stored_spec_adds_the_tolerations_only_when_the_cluster_does() -> None:
    spec = {"containers": [_c("a", limits={"nvidia.com/gpu": "8"})]}
    assert "tolerations" not in stored_spec(spec, [], extended_tolerations=False)
    assert stored_spec(spec, [], extended_tolerations=True)["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_what_the_cluster_added_is_read_from_the_server_s_answer() -> None:
    sent = {"containers": [_c("a", limits={"nvidia.com/gpu": "8", "example.com/fpga": "1"})]}
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    stored = {**sent, "tolerations": [gpu]}
    assert added_tolerations(sent, stored) == ("nvidia.com/gpu",)
    assert added_tolerations({**sent, "tolerations": [gpu]}, stored) == ()
    assert added_tolerations(sent, sent) == ()


# -- where the cluster runs the plugin -------------------------------------------------------------


def _gpu_job() -> dict[str, Any]:
    return {"containers": [_c("trainer", limits={"nvidia.com/gpu": "8"})]}


def _machine(name: str, labels: dict[str, str] | None = None, provider: str = "") -> Any:
    spec = {"providerID": provider} if provider else {}
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def test_a_job_asking_for_no_extended_resource_needs_no_knowledge_of_the_plugin() -> None:
    found = extended_tolerations([{"containers": [_c("a", requests={"cpu": "1"})]}], [])
    assert found == ExtendedTolerations(Knowledge.NOT_ASKED)
    assert not found.added


@pytest.mark.parametrize(
    ("label", "provider"),
    [
        ("eks.amazonaws.com/nodegroup", "EKS"),
        ("cloud.google.com/gke-nodepool", "GKE"),
        ("kubernetes.azure.com/agentpool", "AKS"),
    ],
)
def test_a_managed_provider_s_label_infers_the_plugin(label: str, provider: str) -> None:
    nodes = [_machine("cpu-1"), _machine("gpu-1", {label: "pool"})]
    found = extended_tolerations([_gpu_job()], nodes)
    assert (found.knowledge, found.resources, found.added) == (
        Knowledge.INFERRED_ADDS,
        ("nvidia.com/gpu",),
        True,
    )
    assert found.signal.startswith(
        f"inferred: machine gpu-1 carries the label {label} ({provider}, whose API server runs "
        "ExtendedResourceToleration: "
    )


def test_a_cloud_without_its_managed_service_s_label_is_not_known() -> None:
    """A providerID names the cloud, not who runs the control plane (kops, kubeadm)."""
    found = extended_tolerations(
        [_gpu_job()], [_machine("gpu-1", provider="aws:///us-east-1a/i-1")]
    )
    assert (found.knowledge, found.added) == (Knowledge.UNKNOWN, False)
    assert found.signal == (
        "not known whether the cluster adds a toleration for nvidia.com/gpu "
        "(ExtendedResourceToleration): the machines run on AWS (providerID aws://…) but carry "
        "no label of its managed service: a control plane run elsewhere may not add it"
    )


def test_no_signal_at_all_is_not_known() -> None:
    found = extended_tolerations([_gpu_job()], [_machine("gpu-1", {"accelerator": "gpu"})])
    assert found.knowledge is Knowledge.UNKNOWN
    assert found.signal.endswith(
        ": no machine carries the label of a managed service known to add it (EKS, GKE, AKS)"
    )


def test_the_trial_start_s_answer_measures_the_plugin_either_way() -> None:
    sent = _gpu_job()
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    eks = [_machine("gpu-1", {"eks.amazonaws.com/nodegroup": "gpu"})]
    added = extended_tolerations([sent], eks, (sent, {**sent, "tolerations": [gpu]}))
    assert (added.knowledge, added.added) == (Knowledge.MEASURED_ADDS, True)
    assert added.signal == (
        "the trial start's answer carries a toleration the job does not state "
        "(nvidia.com/gpu:NoSchedule): the cluster adds it"
    )
    none = extended_tolerations([sent], eks, (sent, sent))
    assert (none.knowledge, none.added) == (Knowledge.MEASURED_NONE, False)
    assert none.signal == (
        "the trial start's answer carries no toleration for nvidia.com/gpu: the cluster does not "
        "add it"
    )


def test_a_trial_that_could_show_nothing_leaves_the_inference() -> None:
    """The trial pod already stated the toleration, or asked for no extended resource."""
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    stating = {**_gpu_job(), "tolerations": [gpu]}
    cpu_only = {"containers": [_c("a", requests={"cpu": "1"})]}
    for sent in (stating, cpu_only):
        found = extended_tolerations([_gpu_job()], [], (sent, sent))
        assert found.knowledge is Knowledge.UNKNOWN


def test_the_newest_stored_pod_that_requests_the_resource_measures_the_plugin() -> None:
    """A pod the server stored is its own answer: the newest that requests the job's resource
    says (the setting may have changed since an older one), above a provider's label; the
    trial start's answer, about the job's very pod, above both."""
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    given = StoredPod("run-2-a", _gpu_job(), {**defaulted(_gpu_job()), "tolerations": [gpu]})
    bare = StoredPod("run-1-a", _gpu_job(), defaulted(_gpu_job()))
    fpga = {"containers": [_c("a", limits={"example.com/fpga": "1"})]}
    other = StoredPod("fpga-a", fpga, defaulted(fpga))
    eks = [_machine("gpu-1", {"eks.amazonaws.com/nodegroup": "gpu"})]
    added = extended_tolerations([_gpu_job()], [], None, [other, given, bare])
    assert (added.knowledge, added.added) == (Knowledge.MEASURED_ADDS, True)
    assert added.signal == (
        "pod run-2-a requests nvidia.com/gpu and, as the API server stored it, carries the "
        "toleration nvidia.com/gpu:NoSchedule (operator Exists) its template does not state: "
        "the cluster adds it"
    )
    none = extended_tolerations([_gpu_job()], eks, None, [bare, given])
    assert (none.knowledge, none.added) == (Knowledge.MEASURED_NONE, False)
    assert none.signal.startswith("pod run-1-a requests nvidia.com/gpu and, as the API server")
    sent = _gpu_job()
    trial = extended_tolerations([sent], [], (sent, {**sent, "tolerations": [gpu]}), [bare])
    assert trial.knowledge is Knowledge.MEASURED_ADDS
    assert trial.signal.startswith("the trial start's answer")


@pytest.mark.parametrize(
    ("provider", "cloud"),
    [
        ("aws:///us-west-2a/i-0abc", ("aws://", "AWS")),
        ("gce://project/zone/name", ("gce://", "Google Cloud")),
        ("azure:///subscriptions/x", ("azure://", "Azure")),
        ("kind://docker/kind/kind-worker", None),
        ("", None),
    ],
)
def test_a_machine_s_cloud_comes_from_its_provider_id(
    provider: str, cloud: tuple[str, str] | None
) -> None:
    assert cloud_of([_machine("m", provider=provider)]) == cloud


# -- 5. LimitRanger's refusals ---------------------------------------------------------------------


def _refusal(spec: dict[str, Any], *items: dict[str, Any]) -> LimitRangeRefusal | None:
    ranges = [_range("sizes", *items)]
    return limit_range_refusal(stored_spec(spec, ranges, extended_tolerations=False), ranges)


def test_a_limit_over_the_container_maximum_refuses_the_pod_in_the_plugin_s_words() -> None:
    """The issue's case: `forbidden: maximum memory usage per Container is 1Gi, but limit is
    1536Mi` (maxConstraint)."""
    refusal = _refusal(
        {"containers": [_c("trainer", limits={"memory": "1536Mi"})]},
        {"type": "Container", "max": {"memory": "1Gi"}},
    )
    assert refusal == LimitRangeRefusal(
        "sizes",
        (
            Violation(
                "Container",
                "memory",
                "max",
                "1Gi",
                "limit",
                "1536Mi",
                "maximum memory usage per Container is 1Gi, but limit is 1536Mi",
                "trainer",
            ),
        ),
    )
    assert refusal.message == "maximum memory usage per Container is 1Gi, but limit is 1536Mi"


@pytest.mark.parametrize(
    ("resources", "item", "stated", "message"),
    [
        # maxConstraint: a limit must be stated (the range's default fills one in when it can)
        (
            {"requests": {"cpu": "1"}},
            {"type": "Pod", "max": {"cpu": "2"}},
            "",
            "maximum cpu usage per Pod is 2.  No limit is specified",
        ),
        (
            {"requests": {"cpu": "3"}, "limits": {"cpu": "2"}},
            {"type": "Container", "max": {"cpu": "2"}},
            "request",
            "maximum cpu usage per Container is 2, but request is 3",
        ),
        # minConstraint
        (
            {},
            {"type": "Pod", "min": {"memory": "1Gi"}},
            "",
            "minimum memory usage per Pod is 1Gi.  No request is specified",
        ),
        (
            {"requests": {"memory": "512Mi"}},
            {"type": "Container", "min": {"memory": "1Gi"}},
            "request",
            "minimum memory usage per Container is 1Gi, but request is 512Mi",
        ),
        (
            {"requests": {"memory": "2Gi"}, "limits": {"memory": "1536Mi"}},
            {"type": "Container", "min": {"memory": "2Gi"}},
            "limit",
            "minimum memory usage per Container is 2Gi, but limit is 1536Mi",
        ),
        # limitRequestRatioConstraint
        (
            {"limits": {"cpu": "4"}, "requests": {"cpu": "0"}},
            {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
            "",
            "cpu max limit to request ratio per Container is 2, but no request is specified or "
            "request is 0",
        ),
        (
            {"requests": {"cpu": "1"}},
            {"type": "Pod", "maxLimitRequestRatio": {"cpu": "2"}},
            "",
            "cpu max limit to request ratio per Pod is 2, but no limit is specified or limit is 0",
        ),
        (
            {"requests": {"cpu": "500m"}, "limits": {"cpu": "2"}},
            {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
            "ratio",
            "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000",
        ),
    ],
)
def test_each_constraint_refuses_as_the_plugin_words_it(
    resources: dict[str, Any], item: dict[str, Any], stated: str, message: str
) -> None:
    refusal = _refusal({"containers": [{"name": "c", "resources": resources}]}, item)
    assert refusal is not None
    ((violation),) = refusal.violations
    assert (violation.stated, violation.message) == (stated, message)


@pytest.mark.parametrize(
    ("resources", "item"),
    [
        ({"limits": {"cpu": "2"}}, {"type": "Container", "max": {"cpu": "2"}}),
        ({"requests": {"memory": "1Gi"}}, {"type": "Container", "min": {"memory": "1Gi"}}),
        (
            {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
            {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
        ),
        (
            {"limits": {"storage": "99Gi"}},
            {"type": "PersistentVolumeClaim", "max": {"storage": "1Gi"}},
        ),
    ],
)
def test_a_pod_within_the_limits_is_let_in(resources: dict[str, Any], item: dict[str, Any]) -> None:
    assert _refusal({"containers": [{"name": "c", "resources": resources}]}, item) is None


def test_the_range_s_own_default_fills_a_limit_before_the_maximum_is_checked() -> None:
    """A Container item's max is its default limit (SetDefaults_LimitRangeItem), so a
    container stating nothing is let in at the maximum."""
    spec = {"containers": [_c("plain")]}
    assert _refusal(spec, {"type": "Container", "max": {"memory": "1Gi"}}) is None


def test_the_pod_s_sums_count_sidecars_and_take_each_init_container_as_a_floor() -> None:
    """podRequests/podLimits: containers and restartable init containers added; a plain init
    container (with the sidecars started before it) counts when it is larger."""
    spec = {
        "containers": [_c("a", limits={"cpu": "1", "memory": "1Gi"}), _c("b", limits={"cpu": "2"})],
        "initContainers": [
            _c("big-init", limits={"memory": "3Gi", "cpu": "500m"}),
            _c("proxy", limits={"cpu": "1"}, restartPolicy="Always"),
            _c("late-init", limits={"cpu": "3"}),
        ],
    }
    stored = defaulted(spec)
    sums = pod_sums(stored, "limits")
    assert {name: str(amount) for name, amount in sums.items()} == {"cpu": "4", "memory": "3Gi"}
    refusal = _refusal(spec, {"type": "Pod", "max": {"cpu": "3500m", "memory": "2Gi"}})
    assert refusal is not None
    assert [v.message for v in refusal.violations] == [
        "maximum cpu usage per Pod is 3500m, but limit is 4",
        "maximum memory usage per Pod is 2Gi, but limit is 3Gi",
    ]
    assert {name: str(a) for name, a in pod_sums(stored, "requests").items()} == {
        "cpu": "4",
        "memory": "3Gi",
    }


def test_every_violation_of_the_first_refusing_range_is_named_once() -> None:
    """The first range with a violation refuses, with all of its violations as one aggregate
    (utilerrors.NewAggregate: repeats dropped, several in brackets)."""
    spec = {
        "containers": [_c("a", limits={"memory": "2Gi"}), _c("b", limits={"memory": "2Gi"})],
        "initContainers": [_c("init", limits={"cpu": "8"})],
    }
    ranges = [
        _range("fine", {"type": "Container", "max": {"ephemeral-storage": "100Gi"}}),
        _range("strict", {"type": "Container", "max": {"memory": "1Gi", "cpu": "4"}}),
        _range("stricter", {"type": "Container", "max": {"memory": "1Mi"}}),
    ]
    refusal = limit_range_refusal(stored_spec(spec, ranges, extended_tolerations=False), ranges)
    assert refusal is not None
    assert refusal.limit_range == "strict"
    # The range's own defaults (cpu 4, memory 1Gi) fill what each container lacks first.
    assert [(v.container, v.resource) for v in refusal.violations] == [
        ("a", "memory"),
        ("b", "memory"),
        ("init", "cpu"),
    ]
    assert refusal.message == (
        "[maximum memory usage per Container is 1Gi, but limit is 2Gi, "
        "maximum cpu usage per Container is 4, but limit is 8]"
    )


def test_no_range_lets_every_pod_in() -> None:
    assert limit_range_refusal({"containers": [_c("a", limits={"cpu": "64"})]}, []) is None


# -- 3. priority -----------------------------------------------------------------------------------


def _class(name: str, value: int, default: bool = False, policy: str | None = None) -> Any:
    found: dict[str, Any] = {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if default:
        found["globalDefault"] = True
    if policy:
        found["preemptionPolicy"] = policy
    return found


CLASSES = [
    _class("training-high", 1000),
    _class("batch-low", -10, policy="Never"),
    _class("default-b", 50, default=True),
    _class("default-a", 20, default=True),
]


@pytest.mark.parametrize(
    ("spec", "classes", "level"),
    [
        (
            {"priorityClassName": "training-high"},
            CLASSES,
            PriorityLevel(1000, "training-high", True),
        ),
        ({"priorityClassName": "batch-low"}, CLASSES, PriorityLevel(-10, "batch-low", False)),
        (
            {"priorityClassName": "training-high", "preemptionPolicy": "Never"},
            CLASSES,
            PriorityLevel(1000, "training-high", False),
        ),
        # the globalDefault class, the lowest value of several (getDefaultPriorityClass)
        ({}, CLASSES, PriorityLevel(20, "default-a", True)),
        ({}, CLASSES[:2], PriorityLevel(0, "", True)),
        ({"preemptionPolicy": "Never"}, [], PriorityLevel(0, "", False)),
        ({"priorityClassName": "gone"}, CLASSES, PriorityLevel(0, "gone", True, missing=True)),
    ],
)
def test_the_priority_plugin_resolves_the_job_s_priority(
    spec: dict[str, Any], classes: list[Any], level: PriorityLevel
) -> None:
    assert job_priority(spec, classes) == level


def test_a_priority_is_described_with_its_class() -> None:
    assert (
        PriorityLevel(1000, "training-high", True).words == "priority 1000 (class 'training-high')"
    )
    assert PriorityLevel(0, "", True).words == "priority 0 (no class)"


def test_the_stored_pod_names_its_priority_as_the_plugin_sets_it() -> None:
    spec: dict[str, Any] = {"containers": []}
    assert with_priority(spec, PriorityLevel(20, "default-a", True)) == {
        "containers": [],
        "priorityClassName": "default-a",
        "priority": 20,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert with_priority(spec, PriorityLevel(0, "", False)) == {
        "containers": [],
        "priority": 0,
        "preemptionPolicy": "Never",
    }


@pytest.mark.parametrize(
    ("stored", "level"),
    [
        ({"priority": 1000, "priorityClassName": "high"}, PriorityLevel(1000, "high", True)),
        ({"priority": 0, "preemptionPolicy": "Never"}, PriorityLevel(0, "", False)),
        ({"priority": True}, None),
        ({"priority": "1000"}, None),
        ({}, None),
    ],
)
def test_the_server_s_stored_priority_is_read_back(
    stored: dict[str, Any], level: PriorityLevel | None
) -> None:
    assert stated_priority(stored) == level


@pytest.mark.parametrize(
    ("stated", "added"),
    [
        # operator defaults to Equal (core Toleration), so this is not the plugin's toleration
        ({"key": "nvidia.com/gpu", "effect": "NoSchedule"}, True),
        ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),
        (
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule", "value": ""},
            False,
        ),
        (
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule", "value": "x"},
            True,
        ),
        ({"operator": "Exists", "effect": "NoSchedule"}, True),
    ],
)
def test_a_stated_toleration_is_the_plugin_s_only_when_every_field_matches(
    stated: dict[str, str], added: bool
) -> None:
    spec = {"containers": [_c("a", requests={"nvidia.com/gpu": "1"})], "tolerations": [stated]}
    assert len(with_extended_tolerations(spec)["tolerations"]) == (2 if added else 1)


@pytest.mark.parametrize(
    ("resources", "item"),
    [
        # at the bound is within it
        (
            {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
            {"type": "Container", "min": {"cpu": "2"}},
        ),
        (
            {"requests": {"cpu": "2"}, "limits": {"cpu": "2"}},
            {"type": "Container", "max": {"cpu": "2"}},
        ),
        (
            {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
            {"type": "Pod", "maxLimitRequestRatio": {"cpu": "2"}},
        ),
        ({"requests": {"memory": "2Gi"}}, {"type": "Pod", "min": {"memory": "1Gi"}}),
    ],
)
def test_an_amount_at_the_bound_is_let_in(resources: dict[str, Any], item: dict[str, Any]) -> None:
    assert _refusal({"containers": [{"name": "c", "resources": resources}]}, item) is None


def test_a_violation_records_each_part_of_the_constraint() -> None:
    refusal = _refusal(
        {"containers": [_c("c", requests={"cpu": "250m"}, limits={"cpu": "2"})]},
        {"type": "Container", "min": {"cpu": "500m"}, "maxLimitRequestRatio": {"cpu": "4"}},
    )
    assert refusal is not None
    assert refusal.violations == (
        Violation(
            "Container",
            "cpu",
            "min",
            "500m",
            "request",
            "250m",
            "minimum cpu usage per Container is 500m, but request is 250m",
            "c",
        ),
        Violation(
            "Container",
            "cpu",
            "ratio",
            "4",
            "ratio",
            "8.000000",
            "cpu max limit to request ratio per Container is 4, but provided ratio is 8.000000",
            "c",
        ),
    )


def test_the_machines_kept_for_a_resource_are_those_its_taint_keeps_others_from() -> None:
    nodes: list[dict[str, Any]] = [
        {
            "metadata": {"name": "gpu-1"},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
        },
        {
            "metadata": {"name": "gpu-2"},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoExecute"}]},
        },
        {
            "metadata": {"name": "fpga-1"},
            "spec": {"taints": [{"key": "example.com/fpga", "effect": "NoSchedule"}]},
        },
        {"metadata": {"name": "cpu-1"}, "spec": {}},
    ]
    assert kept_for(nodes, ("nvidia.com/gpu",)) == ["gpu-1"]
    assert kept_for(nodes, ("example.com/fpga", "nvidia.com/gpu")) == ["gpu-1", "fpga-1"]
    assert kept_for(nodes, ()) == []


# -- RuntimeClass (plugin/pkg/admission/runtimeclass/admission.go) ---------------------------

_KATA = {
    "metadata": {"name": "kata"},
    "handler": "kata",
    "overhead": {"podFixed": {"cpu": "250m", "memory": "160Mi"}},
    "scheduling": {
        "nodeSelector": {"runtime": "kata"},
        "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}],
    },
}


def test_a_runtime_class_sets_its_overhead_and_adds_its_scheduling() -> None:
    """setOverhead and setScheduling: the class's podFixed becomes the pod's overhead, its
    nodeSelector is merged into the pod's, its tolerations are added once."""
    spec = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}],
    }
    stored = with_runtime_class(spec, _KATA)
    assert stored["overhead"] == {"cpu": "250m", "memory": "160Mi"}
    assert stored["nodeSelector"] == {"zone": "a", "runtime": "kata"}
    assert stored["tolerations"] == spec["tolerations"]  # stated already: not added twice
    assert pod_requests(stored) == Resources.of({"cpu": 1250, "memory": 160 * 1024**2})
    bare = with_runtime_class({"containers": []}, _KATA)
    assert bare["tolerations"] == [{"key": "kata", "operator": "Exists", "effect": "NoSchedule"}]
    assert bare["nodeSelector"] == {"runtime": "kata"}
    assert spec["nodeSelector"] == {"zone": "a"}, "the template itself is not changed"


def test_a_runtime_class_without_overhead_or_scheduling_changes_nothing() -> None:
    spec = {"containers": [{"name": "c"}]}
    assert with_runtime_class(spec, {"metadata": {"name": "runc"}, "handler": "runc"}) == spec


def test_a_pod_that_sets_a_runtime_class_key_to_another_value_is_refused() -> None:
    assert runtime_class_conflict({"nodeSelector": {"runtime": "kata"}}, _KATA) is None
    assert runtime_class_conflict({"nodeSelector": {"zone": "a"}}, _KATA) is None
    conflict = runtime_class_conflict({"nodeSelector": {"runtime": "gvisor"}}, _KATA)
    assert conflict == SelectorConflict("runtime", "kata", "gvisor")
    assert conflict.message == (
        "conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; "
        "pod.spec.nodeSelector[runtime] = gvisor"
    )
