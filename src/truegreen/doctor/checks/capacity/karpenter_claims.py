"""Karpenter's NodeClaims and NodePools against its nomination of a pod: a machine on its way
until its launch fails, or it fails to join the cluster (kubernetes-sigs/karpenter v1,
pkg/controllers/nodeclaim/lifecycle). Everything here is pure."""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import KubeObject
from truegreen.doctor.checks.capacity.autoscaling import (
    AutoscalerWord,
    Word,
    condition_words,
    nominated_claim,
)

_LAUNCH_PENDING = frozenset({"", "AwaitingReconciliation", "CapacityEvidencePending"})
"""The reasons of a NodeClaim's `Launched` condition while its launch is still under way
(operatorpkg's initial condition; the cloud provider deferring the launch)."""


REGISTRATION_TIMEOUT = timedelta(minutes=15)
"""How long Karpenter waits for a launched machine to join the cluster, from its claim's
`Registered` condition's last change: then it deletes the claim and records a failed
registration for its pool (pkg/controllers/nodeclaim/lifecycle/liveness.go
`registrationTimeout`, `updateNodePoolRegistrationHealth`)."""
POOL_LABEL = "karpenter.sh/nodepool"
"""The label naming a NodeClaim's NodePool (pkg/apis/v1 `NodePoolLabelKey`)."""


def _launch_failure(claim: KubeObject) -> str | None:
    """The provider's words where the claim's launch failed: `Launched` False, or Unknown
    with a reason other than a wait (pkg/controllers/nodeclaim/lifecycle/launch.go sets the
    cloud provider's CreateError reason and message, else `LaunchFailed`); None otherwise."""
    launched = o.condition(claim, "Launched")
    if launched is None or launched.get("status") == "True":
        return None
    reason = str(launched.get("reason") or "")
    if launched.get("status") == "Unknown" and reason in _LAUNCH_PENDING:
        return None
    message = str(launched.get("message") or "")[:600]
    return f"{reason}: {message}".strip(": ")


REGISTRATION_FAILED = "RegistrationFailed"
"""The reason of a NodePool's `NodeRegistrationHealthy` False when its machines launched and
did not join the cluster; for launches that failed it is the launch's own reason
(lifecycle/liveness.go `updateNodePoolRegistrationHealth`)."""


class FailingPool(Struct, frozen=True):
    """A NodePool whose `NodeRegistrationHealthy` is False."""

    reason: str
    said: str
    """The condition in Karpenter's words, bounded."""


def failing_registrations(pools: Iterable[KubeObject]) -> dict[str, FailingPool]:
    """Per NodePool whose `NodeRegistrationHealthy` is False, that condition: "a
    misconfiguration exists that is preventing successful node launch/registrations that
    requires manual investigation" (pkg/apis/v1/nodepool_status.go, Karpenter v1.4 and
    later). Karpenter sets it once half of the pool's last launches or registrations failed
    (lifecycle/liveness.go `updateNodePoolRegistrationHealth`, pkg/state/nodepoolhealth), and
    its provisioner still makes machines from the pool."""
    failing = {}
    for pool in pools:
        condition = o.condition(pool, "NodeRegistrationHealthy")
        if condition is not None and condition.get("status") == "False":
            said = condition_words("NodeRegistrationHealthy", condition)[0]
            failing[o.name_of(pool)] = FailingPool(str(condition.get("reason") or ""), said)
    return failing


class ClaimState(Struct, frozen=True):
    """Where one NodeClaim stands, in Karpenter's words (`nodeclaim/x` goes before each)."""

    failed: str = ""
    """Why it is no machine on its way ('' while it is one)."""
    progress: str = ""
    """How far a machine on its way has come, for the details ('' with nothing to add)."""
    shown_by: str = ""
    """The object `kubectl describe` shows the failure on ('' for the pod's Events)."""


def _claim_state(
    claim: KubeObject, now: datetime, pools_failing: Mapping[str, FailingPool]
) -> ClaimState:
    """A claim's launch, registration and initialization (pkg/apis/v1/nodeclaim_status.go:
    Ready is made of Launched, Registered and Initialized). Still launching, it is no machine
    on its way where its pool says its launches or registrations fail; launched and not yet
    joined the cluster, where its pool says its registrations fail, where `Registered` is
    False, or past REGISTRATION_TIMEOUT; otherwise it is still coming
    (lifecycle/registration.go keeps `Registered` Unknown, `NodeNotFound`, until its Node
    joins)."""
    name = o.name_of(claim)
    failure = _launch_failure(claim)
    if failure is not None:
        return ClaimState(f"did not launch: {failure}")
    pool = o.labels_of(claim).get(POOL_LABEL, "")
    failing = pools_failing.get(pool)
    pool_says = f"NodePool {pool}: {failing.said}" if failing is not None else ""
    launched = o.condition(claim, "Launched")
    if launched is None or launched.get("status") != "True":
        if pool_says:
            return ClaimState(f"is still launching; {pool_says}", shown_by=f"nodepool/{pool}")
        return ClaimState()
    # Launched: the pool's failed launches are no word on this one, its failed joins are.
    if failing is None or failing.reason != REGISTRATION_FAILED:
        pool_says = ""
    registered = o.condition(claim, "Registered")
    if registered is not None and registered.get("status") == "True":
        initialized = o.condition(claim, "Initialized")
        if initialized is None or initialized.get("status") == "True":
            return ClaimState()
        words = condition_words("Initialized", initialized)[0]
        return ClaimState(progress=f"joined the cluster and is not ready for work yet: {words}")
    words = condition_words("Registered", registered)[0] if registered else "Registered not stated"
    if pool_says:
        said = f"has not joined the cluster: {words}; {pool_says}"
        return ClaimState(said, shown_by=f"nodepool/{pool}")
    if registered is not None and registered.get("status") == "False":
        return ClaimState(f"did not join the cluster: {words}", shown_by=f"nodeclaim/{name}")
    since = o.parse_time((registered or {}).get("lastTransitionTime")) or o.created_at(claim)
    waited = max(now - since, timedelta(0)) if since is not None else None
    minutes = f" for {int(waited.total_seconds() // 60)} minutes" if waited is not None else ""
    if waited is not None and waited > REGISTRATION_TIMEOUT:
        said = (
            f"has not joined the cluster{minutes}, past the "
            f"{REGISTRATION_TIMEOUT.total_seconds() / 60:g} minutes Karpenter waits: {words}"
        )
        return ClaimState(said, shown_by=f"nodeclaim/{name}")
    return ClaimState(progress=f"has not joined the cluster yet{minutes}: {words}")


class Launches(Struct, frozen=True):
    """Karpenter's NodeClaims as listed: every one's name, and where each stands
    (`_claim_state`)."""

    names: frozenset[str]
    states: Mapping[str, ClaimState]


def claim_launches(
    claims: Sequence[KubeObject], now: datetime, pools: Iterable[KubeObject] = ()
) -> Launches:
    """The NodeClaims of a list that was read whole, judged with the NodePools read
    (`pools`: none where they could not be)."""
    failing = failing_registrations(pools)
    return Launches(
        frozenset(o.name_of(c) for c in claims),
        {o.name_of(c): _claim_state(c, now, failing) for c in claims},
    )


def launched(word: AutoscalerWord, launches: Launches | None) -> AutoscalerWord:
    """Karpenter's nomination against the NodeClaim it names, where the claims were listed:
    a claim that failed to launch, or to join the cluster, is no machine on its way, its
    conditions (or its pool's) the measurement (CANNOT_ADD); a claim the list no longer
    holds is a launch that ended (LAUNCH_ENDED): pkg/controllers/nodeclaim/lifecycle/launch.go
    `launchNodeClaim` deletes the claim when the cloud has no capacity for it or its NodeClass
    is not ready, and its provisioner tries again for a pod that still waits. A machine still
    on its way keeps its word, with how far it has come beside it (`progress`)."""
    claim = nominated_claim(word) if word.word is Word.ADDING else None
    if claim is None or launches is None:
        return word
    if claim not in launches.names:
        said = f"{word.message}; nodeclaim/{claim} no longer exists"
        return replace(word, word=Word.LAUNCH_ENDED, message=said)
    state = launches.states.get(claim, ClaimState())
    if state.failed:
        said = f"nodeclaim/{claim} {state.failed}"
        return replace(word, word=Word.CANNOT_ADD, message=said, shown_by=state.shown_by)
    if state.progress:
        return replace(word, progress=f"nodeclaim/{claim} {state.progress}")
    return word
