"""A collection kept current by list-then-watch, as client-go's reflector keeps one.

staging/src/k8s.io/client-go/tools/cache/reflector.go is the model: list, remember the list's
resourceVersion, watch from it with bookmarks and a timeout of [T, 2T) seconds; a watch the
server ends is opened again from the last version seen; a 410 Expired (or any other error)
lists again after an exponential back-off (0.8 s doubling to a 30 s cap, jittered by up to
100%, reset after 2 quiet minutes); a refused connection or a 429 backs off and watches again
without listing. Unlike client-go, a failure is kept beside the objects: the reader decides
whether objects it could not keep current may still be used (never for long: see `served`).
"""

import random
import threading
import time
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, Protocol

from msgspec import Struct

from truegreen.cluster.kinds import Kind
from truegreen.cluster.reader import FieldSelector
from truegreen.cluster.reads import CantRead
from truegreen.cluster.watch import (
    Change,
    Closed,
    ListedAt,
    ObjectKey,
    WatchEnd,
    WatchRefused,
    WatchStream,
)

SHORT_WATCH_SECONDS = 1.0
"""A watch that ends sooner than this with no event is an error (reflector.go: "very short
watch"): listing again after a back-off keeps a server that closes at once from being hammered."""


class WatchSource(Protocol):
    """Lists at a resourceVersion and watches from one (LiveCluster does both)."""

    def list_at(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
        view: type[Any] | None = None,
        each: Callable[[ObjectKey, Any], object] | None = None,
    ) -> ListedAt | CantRead:
        """Every matching object (or each given to `each`) and the list's resourceVersion."""
        ...

    def watch(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        resource_version: str,
        timeout_seconds: int,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
        view: type[Any] | None = None,
        wanted: Callable[[ObjectKey], bool] | None = None,
    ) -> WatchStream | WatchRefused:
        """The changes after `resource_version`; objects `wanted` says no to not decoded."""
        ...


class Mirror(Protocol):
    """Something kept in step with a reflector's objects (a running sum), change by change."""

    def fresh(self) -> "Mirror":
        """An empty one like it, for a list to be folded into as its pages arrive."""
        ...

    def take(self, other: Any) -> None:
        """Become `other`, a `fresh()` one that a whole list went into."""
        ...

    def put(self, key: ObjectKey, obj: Any | None) -> bool:
        """One object arrived or changed, or went (None); whether that changed anything."""
        ...


class Backoff:
    """client-go's exponential back-off manager: 0.8 s doubling to a 30 s cap, each wait
    stretched by a random 0-100%, back to 0.8 s after two minutes without a back-off."""

    def __init__(
        self,
        clock: Callable[[], float],
        rand: Callable[[], float],
        *,
        initial: float = 0.8,
        cap: float = 30.0,
        reset_after: float = 120.0,
    ) -> None:
        self._clock = clock
        self._rand = rand
        self._initial = initial
        self._cap = cap
        self._reset_after = reset_after
        self._next = initial
        self._last: float | None = None

    def next_wait(self) -> float:
        """Seconds to wait before the next attempt."""
        now = self._clock()
        if self._last is not None and now - self._last > self._reset_after:
            self._next = self._initial
        self._last = now
        wait = self._next
        self._next = min(self._next * 2, self._cap)
        return wait * (1 + self._rand())


class Next(Enum):
    """What to do once a watch has ended."""

    WATCH = "watch"
    """Watch again from the last version seen, at once."""
    BACK_OFF_THEN_WATCH = "back-off-then-watch"
    BACK_OFF_THEN_LIST = "back-off-then-list"


def after_watch(end: WatchEnd | WatchRefused, lasted: float, events: int) -> Next:
    """The reflector's next step after a watch ended (or could not start)."""
    if isinstance(end, WatchRefused):
        return Next.BACK_OFF_THEN_WATCH if end.retry_watch else Next.BACK_OFF_THEN_LIST
    if isinstance(end, Closed):
        if lasted < SHORT_WATCH_SECONDS and events == 0:
            return Next.BACK_OFF_THEN_LIST
        return Next.WATCH
    return Next.BACK_OFF_THEN_LIST


class CacheState(Struct, frozen=True):
    """What a reflector holds now."""

    items: tuple[Any, ...]
    listed: bool
    """A list has succeeded at least once: the items mean something."""
    confirmed_at: float | None
    """When the server last showed the items current (a list, an event, a bookmark, a watch
    it ended cleanly), on the monotonic clock."""
    failure: CantRead | None
    """The last attempt's failure, until an attempt succeeds."""


class WatchSettings(Struct, frozen=True):
    """How long watches last."""

    timeout_seconds: float = 300.0
    """Each watch asks the server to end it after a random [T, 2T) seconds (client-go's
    minWatchTimeout is 5 minutes), spreading the renewals of many clients."""


class Reflector:
    """Keeps the objects of one collection current in memory, on a thread of its own."""

    def __init__(
        self,
        source: WatchSource,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
        view: type[Any] | None = None,
        settings: WatchSettings = WatchSettings(),
        on_change: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
        mirror: Mirror | None = None,
        keep: Callable[[ObjectKey], bool] | None = None,
    ) -> None:
        """With a `mirror`, the objects go to it alone: the reflector keeps none itself. With
        `keep`, only the objects it says yes to are kept (the others are still read: a watch of
        every namespace held to the selected ones)."""
        self._source = source
        self._mirror = mirror
        self._keep = keep
        self.kind = kind
        self._where: dict[str, Any] = {
            "namespace": namespace,
            "labels": labels,
            "fields": fields,
            "view": view,
        }
        self._settings = settings
        self._on_change = on_change
        self._clock = clock
        self._rand = rand
        self._backoff = Backoff(clock, rand)
        self._lock = threading.Lock()
        self._store: dict[ObjectKey, Any] = {}
        self._version = 0
        self._listed = False
        self._confirmed_at: float | None = None
        self._failure: CantRead | None = None
        self._attempted = threading.Event()
        self._stopping = threading.Event()
        self._stream: WatchStream | None = None
        self._thread: threading.Thread | None = None

    # -- reading ---------------------------------------------------------------------------

    def state(self, namespace: str | None = None) -> CacheState:
        """The objects (of one namespace, if given) and how current they are."""
        with self._lock:
            items = (
                tuple(self._store.values())
                if namespace is None
                else tuple(v for k, v in self._store.items() if k[0] == namespace)
            )
            return CacheState(items, self._listed, self._confirmed_at, self._failure)

    @property
    def version(self) -> int:
        """A count that moves whenever the objects (or the mirror) change: an answer built
        from them may be reused while it stays."""
        with self._lock:
            return self._version

    @property
    def mirror(self) -> Mirror | None:
        """What the objects go to instead of the reflector's own store."""
        return self._mirror

    def find(self, namespace: str, name: str) -> Any | None:
        """One object by namespace and name, or None."""
        with self._lock:
            return self._store.get((namespace, name))

    def wait_attempted(self, timeout: float | None = None) -> bool:
        """Wait until the first list has succeeded or failed."""
        return self._attempted.wait(timeout)

    # -- running ---------------------------------------------------------------------------

    def start(self) -> "Reflector":
        """Run on a daemon thread until `stop()`."""
        name = f"reflector-{self.kind.plural}"
        self._thread = threading.Thread(target=self.run, name=name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop following; an open watch is dropped."""
        self._stopping.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def run(self) -> None:
        """List and watch until stopped (reflector.go ListAndWatch inside BackoffUntil)."""
        while not self._stopping.is_set():
            version = self._list()
            if version is not None:
                self._follow(version)
            if not self._stopping.is_set():
                self._stopping.wait(self._backoff.next_wait())

    def _list(self) -> str | None:
        # With a mirror, each object goes into a fresh one as its page arrives: 30,000 decoded
        # pods are never held at once.
        staged = None if self._mirror is None else self._mirror.fresh()
        each: Callable[[ObjectKey, Any], object] | None = None if staged is None else staged.put
        kept: dict[ObjectKey, Any] = {}
        keep = self._keep
        if keep is not None and each is None:

            def held(key: ObjectKey, obj: Any) -> None:
                # only the kept objects are held while the pages arrive
                if keep(key):
                    kept[key] = obj

            each = held
        listed = self._source.list_at(self.kind, each=each, **self._where)
        if isinstance(listed, CantRead):
            self._fail(listed)
            self._attempted.set()
            return None
        with self._lock:
            if self._mirror is None:
                self._store = kept if keep is not None else dict(listed.items)
            else:
                self._mirror.take(staged)
            self._version += 1
            self._listed = True
            self._confirmed_at = self._clock()
            self._failure = None
        self._attempted.set()
        self._on_change()
        return listed.resource_version

    def _follow(self, version: str) -> None:
        """Watch from `version` until a step says list again."""
        while not self._stopping.is_set():
            started = self._clock()
            timeout = int(self._settings.timeout_seconds * (1 + self._rand()))
            opened = self._source.watch(
                self.kind,
                resource_version=version,
                timeout_seconds=timeout,
                wanted=self._keep,
                **self._where,
            )
            if isinstance(opened, WatchRefused):
                self._fail(opened.cant)
                if after_watch(opened, 0.0, 0) is Next.BACK_OFF_THEN_LIST:
                    return
                self._stopping.wait(self._backoff.next_wait())
                continue
            self._recover()
            self._stream = opened
            with opened:
                for event in opened:
                    version = event.resource_version or version
                    self._apply(event.change, event.key, event.obj)
            self._stream = None
            end = opened.end or Closed(clean=False)
            if isinstance(end, Closed) and end.clean:
                self._confirm()
            elif isinstance(end, CantRead):
                self._fail(end)
            if after_watch(end, self._clock() - started, opened.events) is not Next.WATCH:
                return

    def _apply(self, change: Change, key: ObjectKey, obj: Any) -> None:
        with self._lock:
            self._confirmed_at = self._clock()
            if change is Change.BOOKMARK or (self._keep is not None and not self._keep(key)):
                return
            changed = True
            if self._mirror is not None:
                changed = self._mirror.put(key, None if change is Change.DELETED else obj)
            elif change is Change.DELETED:
                self._store.pop(key, None)
            else:
                self._store[key] = obj
            if changed:
                self._version += 1
        if changed:
            self._on_change()

    def _confirm(self) -> None:
        with self._lock:
            self._confirmed_at = self._clock()

    def _fail(self, failure: CantRead) -> None:
        with self._lock:
            changed, self._failure = self._failure != failure, failure
        if changed:
            self._on_change()

    def _recover(self) -> None:
        with self._lock:
            cleared, self._failure = self._failure is not None, None
        if cleared:
            self._on_change()
