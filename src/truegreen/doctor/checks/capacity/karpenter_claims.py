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


def _earlier(pool: str, failing: FailingPool) -> str:
    """The pool's condition, said beside a claim still on its way as what it is: a count of
    the pool's earlier machines."""
    return f"of the pool's earlier machines, NodePool {pool} says {failing.said}"


def _claim_state(
    claim: KubeObject, now: datetime, pools_failing: Mapping[str, FailingPool]
) -> ClaimState:
    """A claim's launch, registration and initialization (pkg/apis/v1/nodeclaim_status.go:
    Ready is made of Launched, Registered and Initialized). It is no machine on its way only
    by its own conditions: its launch failed, `Registered` is False, or it has not joined
    the cluster past REGISTRATION_TIMEOUT (lifecycle/registration.go keeps `Registered`
    Unknown, `NodeNotFound`, until its Node joins). Its pool's `NodeRegistrationHealthy`
    False counts the pool's earlier machines (a claim counts there only once it failed,
    lifecycle/liveness.go, which then deletes it), and stays False after a failure while
    later machines join (pkg/state/nodepoolhealth: False at 2 failures of the last 4), so
    it is said beside a claim still on its way, and names the failure of one that did not
    join when it says that the pool's machines fail to join."""
    name = o.name_of(claim)
    failure = _launch_failure(claim)
    if failure is not None:
        return ClaimState(f"did not launch: {failure}")
    pool = o.labels_of(claim).get(POOL_LABEL, "")
    failing = pools_failing.get(pool)
    launched = o.condition(claim, "Launched")
    if launched is None or launched.get("status") != "True":
        return ClaimState(
            progress=f"is still launching; {_earlier(pool, failing)}" if failing else ""
        )
    # Launched: the pool's failed launches are no word on it, its failed joins are.
    if failing is not None and failing.reason != REGISTRATION_FAILED:
        failing = None
    registered = o.condition(claim, "Registered")
    if registered is not None and registered.get("status") == "True":
        initialized = o.condition(claim, "Initialized")
        if initialized is None or initialized.get("status") == "True":
            return ClaimState()
        words = condition_words("Initialized", initialized)[0]
        return ClaimState(progress=f"joined the cluster and is not ready for work yet: {words}")
    words = condition_words("Registered", registered)[0] if registered else "Registered not stated"
    since = o.parse_time((registered or {}).get("lastTransitionTime")) or o.created_at(claim)
    waited = max(now - since, timedelta(0)) if since is not None else None
    minutes = f" for {int(waited.total_seconds() // 60)} minutes" if waited is not None else ""
    if registered is not None and registered.get("status") == "False":
        failed = f"did not join the cluster: {words}"
    elif waited is not None and waited > REGISTRATION_TIMEOUT:
        failed = (
            f"has not joined the cluster{minutes}, past the "
            f"{REGISTRATION_TIMEOUT.total_seconds() / 60:g} minutes Karpenter waits: {words}"
        )
    else:
        coming = f"has not joined the cluster yet{minutes}: {words}"
        return ClaimState(progress=f"{coming}; {_earlier(pool, failing)}" if failing else coming)
    if failing is not None:
        return ClaimState(f"{failed}; NodePool {pool}: {failing.said}", shown_by=f"nodepool/{pool}")
    return ClaimState(failed, shown_by=f"nodeclaim/{name}")


class Launches(Struct, frozen=True):
    """Karpenter's NodeClaims as listed: every one's name, and where each stands
    (`_claim_state`); and the NodePools that say their machines fail (`failing_registrations`)."""

    names: frozenset[str]
    states: Mapping[str, ClaimState]
    failing: Mapping[str, FailingPool]


def claim_launches(
    claims: Sequence[KubeObject], now: datetime, pools: Iterable[KubeObject] = ()
) -> Launches:
    """The NodeClaims of a list that was read whole, judged with the NodePools read
    (`pools`: none where they could not be)."""
    failing = failing_registrations(pools)
    return Launches(
        frozenset(o.name_of(c) for c in claims),
        {o.name_of(c): _claim_state(c, now, failing) for c in claims},
        failing,
    )


_GENERATED = 5
"""The characters the API server adds to a `generateName` (apiserver pkg/storage/names
`SimpleNameGenerator`: `randomLength`)."""
_GENERATED_FROM = frozenset("bcdfghjklmnpqrstvwxz2456789")
"""What those characters are drawn from (apimachinery pkg/util/rand `alphanums`, which its
`String` uses)."""


def _made_from(claim: str, pools: Iterable[str]) -> str | None:
    """The pool of `pools` a NodeClaim's name says it was made from: Karpenter creates each
    claim with `generateName: <pool>-` (pkg/controllers/provisioning/scheduling/
    nodeclaimtemplate.go `ToNodeClaim`), so its name is the pool's, a dash and five generated
    characters, and no other pool's name leaves exactly that. None when none does (also a name
    the API server cut short, its base past 58 characters)."""
    for pool in pools:
        rest = claim.removeprefix(f"{pool}-")
        if rest != claim and len(rest) == _GENERATED and set(rest) <= _GENERATED_FROM:
            return pool
    return None


def launched(word: AutoscalerWord, launches: Launches | None) -> AutoscalerWord:
    """Karpenter's nomination against the NodeClaim it names, where the claims were listed:
    a claim that failed to launch, or to join the cluster, is no machine on its way, its own
    conditions the measurement (CANNOT_ADD, its pool's word beside them); a claim the list
    no longer holds is a launch that ended (LAUNCH_ENDED):
    pkg/controllers/nodeclaim/lifecycle/launch.go `launchNodeClaim` deletes the claim when the
    cloud has no capacity for it or its NodeClass is not ready, and its provisioner tries
    again for a pod that still waits. A machine still on its way keeps its word, with how far
    it has come beside it (`progress`)."""
    claim = nominated_claim(word) if word.word is Word.ADDING else None
    if claim is None or launches is None:
        return word
    if claim not in launches.names:
        gone = f"nodeclaim/{claim} no longer exists"
        pool = _made_from(claim, launches.failing)
        failing = launches.failing.get(pool) if pool is not None else None
        if failing is not None and failing.reason == REGISTRATION_FAILED:
            # Its pool's machines fail to join: Karpenter deletes a claim whose machine has not
            # joined in REGISTRATION_TIMEOUT, and makes the next from the same pool.
            said = f"{gone}; NodePool {pool}: {failing.said}"
            return replace(word, word=Word.CANNOT_ADD, message=said, shown_by=f"nodepool/{pool}")
        return replace(word, word=Word.LAUNCH_ENDED, message=f"{word.message}; {gone}")
    state = launches.states.get(claim, ClaimState())
    if state.failed:
        said = f"nodeclaim/{claim} {state.failed}"
        return replace(word, word=Word.CANNOT_ADD, message=said, shown_by=state.shown_by)
    if state.progress:
        return replace(word, progress=f"nodeclaim/{claim} {state.progress}")
    return word
