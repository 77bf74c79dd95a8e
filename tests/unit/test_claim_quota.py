"""The claims a training job's pods make, through admission, value by value against the sources:
pkg/quota/v1/evaluator/core/persistent_volume_claims.go (`Usage`, `MatchingResources`,
`pvcMatchesScopeFunc`), plugin/pkg/admission/resourcequota (checkRequest: `status unknown for
quota`) and plugin/pkg/admission/limitranger/admission.go
(`PersistentVolumeClaimValidateLimitFunc`, minConstraint, maxRequestConstraint)."""

from typing import Any

from truegreen.doctor.checks.admission.claim_quota import (
    ClaimVerdict,
    QuotaClaim,
    applies_to_claim,
    claim_charge,
    claim_verdicts,
    quota_claim,
    unnamed_class_limits,
)
from truegreen.doctor.checks.admission.claims import claim_limit_refusal
from truegreen.doctor.checks.admission.quota import (
    Quota,
    QuotaVerdict,
    Refusal,
    ScopeTerm,
    Shortfall,
    parse_quota,
)

GI = 1024**3
SCRATCH = quota_claim(
    "scratch",
    {"storageClassName": "fast", "resources": {"requests": {"storage": "200Gi"}}},
)


def _quota(hard: dict[str, str], used: dict[str, str], **spec: Any) -> Quota:
    return parse_quota(
        {
            "kind": "ResourceQuota",
            "metadata": {"name": "q"},
            "spec": {"hard": hard, **spec},
            "status": {"hard": hard, "used": used},
        }
    )


def test_a_claim_is_charged_its_count_and_storage_and_its_class_s_too() -> None:
    assert QuotaClaim("scratch", "fast", 200 * GI) == SCRATCH
    assert claim_charge(SCRATCH) == {
        "persistentvolumeclaims": 1,
        "count/persistentvolumeclaims": 1,
        "fast.storageclass.storage.k8s.io/persistentvolumeclaims": 1,
        "requests.storage": 200 * GI,
        "fast.storageclass.storage.k8s.io/requests.storage": 200 * GI,
    }
    # A fraction of a byte is charged as a whole byte (getStorageUsage rounds up).
    tiny = quota_claim("t", {"resources": {"requests": {"storage": "1500m"}}})
    assert claim_charge(tiny) == {
        "persistentvolumeclaims": 1,
        "count/persistentvolumeclaims": 1,
        "requests.storage": 2,
    }


def test_only_the_volume_attributes_class_scope_can_match_a_claim() -> None:
    room = {"requests.storage": "1Ti"}
    assert applies_to_claim(_quota(room, room), SCRATCH)
    assert not applies_to_claim(_quota({"pods": "3"}, {"pods": "0"}), SCRATCH)
    assert not applies_to_claim(_quota(room, room, scopes=["NotTerminating"]), SCRATCH)
    selector = {
        "matchExpressions": [
            {"scopeName": "VolumeAttributesClass", "operator": "In", "values": ["gold"]}
        ]
    }
    gold = QuotaClaim("g", "fast", GI, attributes_class="gold")
    assert applies_to_claim(_quota(room, room, scopeSelector=selector), gold)
    assert not applies_to_claim(_quota(room, room, scopeSelector=selector), SCRATCH)
    exists = Quota("q", {"requests.storage": 1}, {}, (ScopeTerm("VolumeAttributesClass"),))
    assert applies_to_claim(exists, gold)
    assert not applies_to_claim(exists, SCRATCH)


def test_the_claims_together_against_the_room_left_and_how_many_are_made() -> None:
    space = _quota({"requests.storage": "1Ti"}, {"requests.storage": "324Gi"})
    assert claim_verdicts([space], [SCRATCH]) == []
    assert claim_verdicts([space], [SCRATCH] * 4) == [
        ClaimVerdict(
            QuotaVerdict(
                "q",
                Refusal.EXCEEDED,
                shortfalls=(Shortfall("requests.storage", 800 * GI, 324 * GI, 1024 * GI),),
            ),
            claims=4,
            made=3,
        )
    ]
    assert claim_verdicts([space], [SCRATCH] * 4, judged=["q"]) == []


def test_a_claim_resource_not_counted_yet_refuses_every_claim() -> None:
    uncounted = _quota({"requests.storage": "1Ti", "persistentvolumeclaims": "5"}, {})
    assert claim_verdicts([uncounted], [SCRATCH]) == [
        ClaimVerdict(
            QuotaVerdict(
                "q",
                Refusal.UNCOUNTED,
                uncounted=("persistentvolumeclaims", "requests.storage"),
            ),
            claims=1,
            made=0,
        )
    ]


def test_a_per_class_limit_cannot_be_judged_for_a_claim_naming_no_class() -> None:
    per_class = _quota({"fast.storageclass.storage.k8s.io/requests.storage": "1Ti"}, {})
    unnamed = quota_claim("cache", {"resources": {"requests": {"storage": "1Gi"}}})
    assert unnamed_class_limits(per_class, [SCRATCH, unnamed]) == ["cache"]
    plain = _quota({"requests.storage": "1Ti"}, {"requests.storage": "0"})
    assert unnamed_class_limits(plain, [unnamed]) == []


def _range(*items: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "LimitRange", "metadata": {"name": "pvc"}, "spec": {"limits": list(items)}}


def test_a_claim_s_size_limits_are_of_its_request() -> None:
    spec = {"resources": {"requests": {"storage": "200Gi"}}}
    small = _range({"type": "PersistentVolumeClaim", "max": {"storage": "100Gi"}})
    refusal = claim_limit_refusal(spec, [small])
    assert refusal is not None
    assert refusal.message == (
        "maximum storage usage per PersistentVolumeClaim is 100Gi, but request is 200Gi"
    )
    large = _range({"type": "PersistentVolumeClaim", "min": {"storage": "1Ti"}})
    refusal = claim_limit_refusal(spec, [large])
    assert refusal is not None
    assert refusal.message == (
        "minimum storage usage per PersistentVolumeClaim is 1Ti, but request is 200Gi"
    )
    unstated = claim_limit_refusal({}, [small])
    assert unstated is not None
    assert unstated.message == (
        "maximum storage usage per PersistentVolumeClaim is 100Gi.  No request is specified"
    )
    # Container and Pod items never touch a claim.
    pods = _range({"type": "Container", "max": {"storage": "1Gi"}})
    assert claim_limit_refusal(spec, [pods]) is None
    fits = _range(
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "1Ti"}}
    )
    assert claim_limit_refusal(spec, [fits]) is None
