"""The watch cache: doctor's reads answered from collections kept current by watches.

Each distinct list doctor makes (kind, namespace, selectors, view) gets a reflector the first
time it is asked for, and loses it once KEPT_ROUNDS rounds of evaluations have not asked for it,
so the cache follows exactly what doctor reads now, admission gates and all, without a list of
its own to keep in step. Gets of claims and service accounts come from a
namespace-wide watch of their kind; in a fleet, a namespace's own object and its logins come from
one watch of every namespace too (`WATCHED_IN_A_FLEET`); other gets (storage types, and those
where the cluster refuses such a watch) are made live, reused for `reread_after` seconds: a
handful per evaluation, however large the cluster. A read the cache cannot vouch for
(`age.served`) is answered as could-not-read, so no check is ever green on stale objects.
"""

import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import msgspec
from msgspec import Struct

from truegreen.cluster import CantRead, Folded, FoldRead, GetRead, Got, Kind, Listed, ListRead
from truegreen.cluster.classify import describe
from truegreen.cluster.endpoints import get_action
from truegreen.cluster.kinds import stamp
from truegreen.cluster.live import LiveCluster, action_of
from truegreen.cluster.reader import FieldSelector, Fold, field_selector_text, label_selector_text
from truegreen.cluster.reads import ReadFailure
from truegreen.cluster.reflector import CacheState, Reflector, WatchSettings
from truegreen.doctor.knowledge.usage import CapacityTally
from truegreen.monitor.age import TRANSIENT, Held, served
from truegreen.monitor.tally import RunningCapacity
from truegreen.monitor.views import LIST_VIEWS

WATCHED_FOR_GETS = frozenset({Kind.PERSISTENT_VOLUME_CLAIM, Kind.SERVICE_ACCOUNT})
"""Kinds whose gets are answered from a watch of the namespace: a claim that stops being bound
is a change worth evaluating at once."""

WATCHED_IN_A_FLEET = frozenset({Kind.NAMESPACE, Kind.SECRET})
"""Kinds a fleet's monitor gets from one watch of every namespace: each Namespace by its name,
each Secret name through a watch of that name (`fieldSelector=metadata.name=`, which RBAC can
grant by `resourceNames`, deploy/monitor/fleet/clusterrole-logins.yaml). Read one by one, they
cost two gets per namespace per interval: 40 namespaces would ask 27 times what one asks."""

_Key = tuple[Kind, str | None, str, str, type[Any] | None, str | None]

KEPT_ROUNDS = 2
"""Rounds of evaluations a collection is followed without being asked for: a read doctor makes
only now and then (the pods of a GPU machine in trouble, an autoscaler's Events) is stopped
after these, so the collections followed are what the last rounds read, never every one ever
read. Two, so that a read asked for every other round is not listed again each time."""

A = TypeVar("A")

_FLEET = "fleet"
"""The key's last part for a watch of every namespace shared by the selected ones."""


class FleetScope(Struct, frozen=True):
    """The namespaces a fleet's monitor watches, each namespaced kind through ONE watch of
    every namespace held to these (a watch per namespace and kind would be 40 x 15 open
    connections and renewals for 40 namespaces; one per kind costs what one namespace costs)."""

    names: frozenset[str] | None
    """None: every namespace (`--all-namespaces`)."""

    def holds(self, namespace: str) -> bool:
        """Whether objects of `namespace` are kept."""
        return self.names is None or namespace in self.names

    def within(self, other: "FleetScope") -> bool:
        """Whether every namespace held here is held by `other` too."""
        return other.names is None or (self.names is not None and self.names <= other.names)


class WatchCache:
    """A `ClusterReader` over reflectors, thread-safe; `close()` stops them."""

    def __init__(
        self,
        cluster: LiveCluster,
        *,
        max_age: float,
        watch: WatchSettings,
        on_change: Callable[[], None],
        reread_after: float,
        clock: Callable[[], float] = time.monotonic,
        fleet: FleetScope | None = None,
    ) -> None:
        """With `fleet`, namespaced reads go through shared watches of every namespace."""
        self._cluster = cluster
        self._fleet = fleet
        self._max_age = max_age
        self._reread_after = reread_after
        self._gets: dict[tuple[Kind, str, str | None], tuple[GetRead, float]] = {}
        self._watch = watch
        self._on_change = on_change
        self._clock = clock
        self._lock = threading.Lock()
        self._reflectors: dict[_Key, Reflector] = {}
        self._round = 0
        self._asked: dict[_Key, int] = {}
        """The round each reflector was last asked for in."""
        self._answers: weakref.WeakKeyDictionary[Reflector, tuple[int, Any]] = (
            weakref.WeakKeyDictionary()
        )
        """Each reflector's last answer and the version it was built at."""
        self._oldest: float | None = None

    @property
    def namespace(self) -> str:
        """The namespace from the connection settings."""
        return self._cluster.namespace

    def select(self, fleet: FleetScope) -> None:
        """Watch these namespaces from now on. Objects of a namespace newly selected were not
        kept: the shared watches start over (one list each), and only then."""
        with self._lock:
            grown = self._fleet is None or not fleet.within(self._fleet)
            self._fleet = fleet
            dropped = [k for k in self._reflectors if grown and k[5] == _FLEET]
            stopped = [self._reflectors.pop(k) for k in dropped]
        for reflector in stopped:
            reflector.stop()

    def end_round(self) -> None:
        """One round of evaluations is over: stop following each collection no evaluation of
        the last KEPT_ROUNDS rounds asked for (it is listed again if one asks for it later)."""
        with self._lock:
            oldest_kept = self._round - KEPT_ROUNDS + 1
            idle = [k for k in self._reflectors if self._asked.get(k, self._round) < oldest_kept]
            stopped = [self._reflectors.pop(k) for k in idle]
            self._asked = {k: r for k, r in self._asked.items() if k in self._reflectors}
            self._round += 1
        for reflector in stopped:
            reflector.stop()

    def _kept(self, key: tuple[str, str]) -> bool:
        fleet = self._fleet
        return fleet is None or fleet.holds(key[0])

    def _kept_namespace(self, key: tuple[str, str]) -> bool:
        fleet = self._fleet
        return fleet is None or fleet.holds(key[1])

    def begin(self) -> None:
        """Start counting the oldest confirmation among the reads that follow."""
        with self._lock:
            self._oldest = None

    def as_of(self) -> float:
        """The oldest confirmation among the reads since `begin()` (now when none was cached)."""
        with self._lock:
            return self._clock() if self._oldest is None else self._oldest

    def close(self) -> None:
        """Stop every reflector."""
        with self._lock:
            reflectors = list(self._reflectors.values())
        for reflector in reflectors:
            reflector.stop()

    # -- ClusterReader ---------------------------------------------------------------------

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The objects a reflector holds, whole (a view's fields for `LIST_VIEWS`)."""
        view = LIST_VIEWS.get(kind) if namespace is None else None
        if view is None:
            found = self._held(kind, namespace, labels, fields, view)
            return found if isinstance(found, CantRead) else Listed(found)
        reflector = self._namespaced(kind, namespace, labels, fields, view)
        why = self._unusable(reflector, action_of(kind))
        if why is not None:
            return why
        return self._remembered(
            reflector,
            lambda state: Listed(
                tuple(stamp(msgspec.to_builtins(item), kind) for item in state.items)
            ),
        )

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The capacity fold from its running sums; any other fold over the held views."""
        if isinstance(fold, CapacityTally):
            fleet = self._fleet
            running = RunningCapacity(fold.namespace if fleet is None else fleet.names)
            reflector = self._reflector(
                kind, namespace, None, fields, running.view, running, shared=fleet is not None
            )
            mirror = reflector.mirror
            assert isinstance(mirror, RunningCapacity)
            why = self._unusable(reflector, action_of(kind))
            if why is not None:
                return why
            # A fleet's one summary keeps every selected namespace's pods: doctor keeps each
            # namespace's own (`DoctorSettings.fleet`, usage.cluster_usage).
            return self._remembered(reflector, lambda state: Folded(mirror.summary()))
        found = self._held(kind, namespace, None, fields, fold.view)
        if isinstance(found, CantRead):
            return found
        for item in found:
            fold.add(item)
        return Folded(fold.summary())

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """From the namespace's watch for `WATCHED_FOR_GETS`, the fleet's for
        `WATCHED_IN_A_FLEET`, else live (`_read_live`)."""
        if kind in WATCHED_IN_A_FLEET:
            return self._fleet_get(kind, name, namespace) or self._read_live(kind, name, namespace)
        if kind not in WATCHED_FOR_GETS or namespace is None:
            return self._read_live(kind, name, namespace)
        reflector = self._namespaced(kind, namespace, None, None, None)
        why = self._unusable(reflector, action_of(kind))
        if why is not None:
            return why
        return _found(reflector, kind, namespace, name)

    def _fleet_get(self, kind: Kind, name: str, namespace: str | None) -> GetRead | None:
        """From the fleet's watch of `kind` (of that name, for a Secret); None where there is
        none to use: no fleet, a namespace outside it, a watch not usable now (a live get says
        why) or refused for good (no permission: live gets from then on)."""
        fleet = self._fleet
        where = "" if kind is Kind.NAMESPACE else namespace
        if fleet is None or where is None or not fleet.holds(where or name):
            return None
        fields = None if kind is Kind.NAMESPACE else {"metadata.name": name}
        reflector = self._reflector(kind, None, None, fields, None, shared=True)
        why = self._unusable(reflector, action_of(kind))
        if why is not None:
            if why.failure not in TRANSIENT:
                # Refused (no permission): stopped, and kept with its failure so that every
                # later read goes live, until a grown selection starts the fleet's watches over.
                reflector.stop()
            return None
        return _found(reflector, kind, where, name)

    def _read_live(self, kind: Kind, name: str, namespace: str | None) -> GetRead:
        """A live get, reused until `reread_after` seconds old: evaluations on every change
        would otherwise read the same logins again each time. A failed answer is never kept.
        After a transient one (`age.TRANSIENT`: a 5xx, a timeout, no connection) the last
        answer stands until it is `max_age` old, as a watched read's objects do
        (`age.served`), so one 5xx does not flip the verdict; any other failure (a refusal)
        is the answer at once, and forgets the last one."""
        key = (kind, name, namespace)
        now = self._clock()
        with self._lock:
            kept = self._gets.get(key)
        if kept is not None and now - kept[1] < self._reread_after:
            self._note_confirmed(kept[1])
            return kept[0]
        read = self._cluster.get(kind, name, namespace=namespace)
        if not isinstance(read, CantRead) or read.is_measurement:
            with self._lock:
                self._gets[key] = (read, now)
            return read
        if kept is None or read.failure not in TRANSIENT:
            with self._lock:
                self._gets.pop(key, None)
            return read
        # Kept while the failures pass by themselves: past max_age each one says how long.
        why = served(Held(True, kept[1], read), now, self._max_age, get_action(kind, name))
        if why is not None:
            return why
        self._note_confirmed(kept[1])
        return kept[0]

    def _remembered(self, reflector: Reflector, build: Callable[[CacheState], A]) -> A:
        """The answer `build` makes from the reflector's objects, the very same object while
        they have not changed: what doctor computes from a cluster-wide answer (the machines
        as the fit reads them, the GPU machines in trouble, the typed sums) it keeps for the
        same answer (doctor/knowledge/last_answer.py), so every namespace of a fleet, and every
        round while the machines stay, reuses it."""
        version = reflector.version  # before the objects: a change meanwhile builds again
        with self._lock:
            kept = self._answers.get(reflector)
        if kept is not None and kept[0] == version:
            answer: A = kept[1]
            return answer
        answer = build(reflector.state())
        with self._lock:
            self._answers[reflector] = (version, answer)
        return answer

    def _note_confirmed(self, at: float) -> None:
        with self._lock:
            if self._oldest is None or at < self._oldest:
                self._oldest = at

    # -- the reflectors --------------------------------------------------------------------

    def _held(
        self,
        kind: Kind,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        fields: FieldSelector | None,
        view: type[Any] | None,
    ) -> tuple[Any, ...] | CantRead:
        reflector = self._namespaced(kind, namespace, labels, fields, view)
        why = self._unusable(reflector, action_of(kind))
        return why if why is not None else reflector.state(namespace).items

    def _namespaced(
        self,
        kind: Kind,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        fields: FieldSelector | None,
        view: type[Any] | None,
    ) -> Reflector:
        """The reflector for a read in one namespace: for a namespace of a fleet, the shared
        one of every namespace (its objects held to the selected namespaces). A read in any
        other namespace (a webhook's servers, the autoscaler's status) has its own."""
        fleet = self._fleet
        if fleet is None or namespace is None or not fleet.holds(namespace):
            return self._reflector(kind, namespace, labels, fields, view)
        return self._reflector(kind, None, labels, fields, view, shared=True)

    def _unusable(self, reflector: Reflector, action: str) -> CantRead | None:
        state = reflector.state()
        why = served(
            Held(state.listed, state.confirmed_at, state.failure),
            self._clock(),
            self._max_age,
            action,
        )
        if why is None and state.confirmed_at is not None:
            self._note_confirmed(state.confirmed_at)
        return why

    def _reflector(
        self,
        kind: Kind,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        fields: FieldSelector | None,
        view: type[Any] | None,
        mirror: RunningCapacity | None = None,
        *,
        shared: bool = False,
    ) -> Reflector:
        """The reflector for one read, started (and its first list awaited) on first use; a
        `mirror` is used only by the reflector it creates, and is part of its key. A `shared`
        one is the fleet's watch of every namespace, restarted when the selection grows."""
        if shared:
            part: str | None = _FLEET
        elif mirror is not None:
            assert mirror.namespaces is not None
            (part,) = mirror.namespaces
        else:
            part = None
        key = (
            kind,
            namespace,
            label_selector_text(labels),
            field_selector_text(fields),
            view,
            part,
        )
        with self._lock:
            self._asked[key] = self._round
            reflector = self._reflectors.get(key)
            fresh = reflector is None
            if reflector is None:
                reflector = Reflector(
                    self._cluster,
                    kind,
                    namespace=namespace,
                    labels=labels,
                    fields=fields,
                    view=view,
                    settings=self._watch,
                    on_change=self._on_change,
                    clock=self._clock,
                    mirror=mirror,
                    keep=None
                    if not shared or mirror is not None
                    else self._kept_namespace
                    if kind is Kind.NAMESPACE
                    else self._kept,
                )
                self._reflectors[key] = reflector
        if fresh:
            reflector.start()
        reflector.wait_attempted()
        return reflector


def _found(reflector: Reflector, kind: Kind, namespace: str, name: str) -> GetRead:
    """The watched object, as a get answers it: Got, or a measured not-found."""
    obj = reflector.find(namespace, name)
    if obj is None:
        action = get_action(kind, name)
        return CantRead(ReadFailure.NOT_FOUND, describe(ReadFailure.NOT_FOUND, action))
    return Got(obj)
