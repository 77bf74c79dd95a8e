"""Asking the registries whether the environment's images are there, with each pod's own logins.

Live, `LiveRegistry` keeps the registry logins the reads bring in (below the redaction, so the
environment doctor judges never holds one) and hands each only to the registry client, which
sends it to its own registry's scheme, host and port and nowhere else (refresh/registry.py).
One look-up per distinct image and set of logins, at most LOOKUPS_IN_FLIGHT at a time and
MAX_LOOKUPS in all, each bounded by one deadline and all by the run's registry budget
(registry_budget.py), which also keeps a registry that timed out from being asked again. A
snapshot records the answers
(`RecordingRegistry`); offline, `RecordedRegistry` answers from them and never dials out.
"""

import threading
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import msgspec
from msgspec import Struct

from truegreen.cluster import ClusterReader, FoldRead, GetRead, Got, Kind, ListRead
from truegreen.cluster.reader import FieldSelector, Fold
from truegreen.cluster.schedule import ReadSchedule
from truegreen.docker_config import login_data
from truegreen.doctor.knowledge.image_presence import (
    MAX_LOOKUPS,
    ImageLookup,
    ImageRegistry,
    Presence,
    RegistryAnswer,
    RegistryAnswers,
    combined,
    download_size,
    is_index,
    may_pick,
    offered_words,
    platform_manifest,
    platforms_offered,
)
from truegreen.doctor.reads.registry_budget import RegistryBudget
from truegreen.http.deadline import Deadline
from truegreen.images import ImageReference, parse_image
from truegreen.refresh.registry import (
    LOOKUPS_IN_FLIGHT,
    LookupFailed,
    LookupFailure,
    Manifest,
    PullCredentials,
    RegistryAccess,
    RegistryClient,
    RegistryLogin,
)

_PRESENCE_OF_FAILURE = {
    LookupFailure.NOT_FOUND: Presence.MISSING,
    LookupFailure.RATE_LIMITED: Presence.RATE_LIMITED,
    LookupFailure.SERVER_ERROR: Presence.SERVER_ERROR,
    LookupFailure.TIMEOUT: Presence.TIMEOUT,
    LookupFailure.UNREACHABLE: Presence.UNREACHABLE,
    LookupFailure.MALFORMED: Presence.GARBLED,
    LookupFailure.TOO_LARGE: Presence.TOO_LARGE,
    LookupFailure.DIGEST_MISMATCH: Presence.GARBLED,
    LookupFailure.UNSUPPORTED: Presence.GARBLED,
    LookupFailure.INSECURE_REFUSED: Presence.INSECURE,
    LookupFailure.OWN_ADDRESS: Presence.OWN_ADDRESS,
    LookupFailure.ADDRESS_REFUSED: Presence.ADDRESS_REFUSED,
    LookupFailure.PRIVATE_ADDRESS: Presence.PRIVATE_ADDRESS,
}


def answer_of(failed: LookupFailed, login: RegistryLogin | None) -> RegistryAnswer:
    """A failed look-up as an answer: a refusal is REFUSED when a login was sent, and a
    repository refused to a login the registry took NOT_ALLOWED; without a login, either is
    LOGIN_NEEDED (the registry wants one, or does not have the image: Docker Hub's anonymous
    token is refused a repository that does not exist as one that is private)."""
    if failed.failure in (LookupFailure.UNAUTHORIZED, LookupFailure.NOT_ALLOWED) and login is None:
        presence = Presence.LOGIN_NEEDED
    elif failed.failure is LookupFailure.UNAUTHORIZED:
        presence = Presence.REFUSED
    elif failed.failure is LookupFailure.NOT_ALLOWED:
        presence = Presence.NOT_ALLOWED
    else:
        presence = _PRESENCE_OF_FAILURE[failed.failure]
    return RegistryAnswer(presence, failed.reason)


class _LoginKeeper:
    """A reader that passes every read through and keeps, from each registry login it gets,
    the logins the kubelet would read (secrets.go), for the registry look-ups alone."""

    def __init__(self, inner: ClusterReader, keep: "LiveRegistry") -> None:
        self._inner = inner
        self._keep = keep

    @property
    def namespace(self) -> str:
        """The inner reader's namespace."""
        return self._inner.namespace

    def list(
        self,
        kind: Kind,
        *,
        namespace: str | None,
        labels: Mapping[str, str] | None = None,
        fields: FieldSelector | None = None,
    ) -> ListRead:
        """The inner list."""
        return self._inner.list(kind, namespace=namespace, labels=labels, fields=fields)

    def fold(
        self, kind: Kind, fold: Fold, *, namespace: str | None, fields: FieldSelector | None = None
    ) -> FoldRead:
        """The inner fold."""
        return self._inner.fold(kind, fold, namespace=namespace, fields=fields)

    def get(self, kind: Kind, name: str, *, namespace: str | None) -> GetRead:
        """The inner get; a registry login's credentials are kept on the way."""
        read = self._inner.get(kind, name, namespace=namespace)
        if kind is Kind.SECRET and isinstance(read, Got):
            self._keep.keep(name, read.obj)
        return read


class LiveRegistry:
    """Asks the registries themselves, with the logins the reads brought in."""

    def __init__(self, access: RegistryAccess, budget: RegistryBudget) -> None:
        self._access = access
        self._budget = budget
        self._logins: dict[str, PullCredentials] = {}
        self._lock = threading.Lock()
        self.requests_made = 0
        """Requests sent to registries by the last `look_up` (logins and redirects included)."""

    def keeping_logins(self, reader: ClusterReader) -> ClusterReader:
        """`reader`, keeping the registry logins it gets for the look-ups (wrap it below the
        redaction: the redacted logins hold no password)."""
        return _LoginKeeper(reader, self)

    def keep(self, name: str, secret: Mapping[str, Any]) -> None:
        """Keep the credentials of the registry login `name`, if it is one the kubelet reads."""
        found = login_data(secret)
        if found is None:
            return
        with self._lock:
            self._logins[name] = PullCredentials.from_docker_configs([found])

    def _logins_for(self, names: Sequence[str], image: ImageReference) -> list[RegistryLogin]:
        """Every credential the kubelet's one keyring of the logins `names` (in the pod's
        order) returns for `image` (keyring.go Lookup), in the order tried, each addressed to
        the image's registry alone (the client sends a login nowhere else)."""
        with self._lock:
            kept = [self._logins[name] for name in names if name in self._logins]
        return PullCredentials.joined(kept).applying_to(image)

    def look_up(self, wanted: Sequence[ImageLookup]) -> RegistryAnswers:
        """Every look-up of `wanted` (up to MAX_LOOKUPS) asked concurrently, at most
        LOOKUPS_IN_FLIGHT at a time; the rest answered NOT_ASKED."""
        asked = list(dict.fromkeys(wanted))
        answers: dict[ImageLookup, RegistryAnswer] = {}
        if asked:
            client = RegistryClient(self._access)
            try:
                with ReadSchedule(LOOKUPS_IN_FLIGHT) as pool:
                    pending = {
                        lookup: pool.submit(partial(self._one, client, lookup))
                        for lookup in asked[:MAX_LOOKUPS]
                    }
                answers = {lookup: answer.result() for lookup, answer in pending.items()}
            finally:
                client.close()
                self.requests_made = client.requests_made
        answers.update(
            {
                lookup: RegistryAnswer(
                    Presence.NOT_ASKED, f"doctor asks about at most {MAX_LOOKUPS} images a run"
                )
                for lookup in asked[MAX_LOOKUPS:]
            }
        )
        return answers

    def _one(self, client: RegistryClient, lookup: ImageLookup) -> RegistryAnswer:
        """One look-up: each login the kubelet would try, until one finds the image."""
        reference = parse_image(lookup.image)
        logins: list[RegistryLogin | None] = list(self._logins_for(lookup.logins, reference))
        if self._budget.stalled(reference.registry):
            return RegistryAnswer(
                Presence.TIMEOUT,
                f"{reference.registry} did not answer in time earlier in this run: not asked again",
            )
        if self._budget.spent:
            return RegistryAnswer(
                Presence.OUT_OF_TIME,
                f"doctor gives the registries {self._budget.seconds:g} s a run, all spent",
            )
        deadline = self._budget.deadline(self._access.timeout)
        answers: list[RegistryAnswer] = []
        for login in logins or [None]:
            answers.append(_ask(client, reference, login, lookup.platform, deadline))
            if answers[-1].presence.is_served:
                break
        answer = combined(answers)
        if answer.presence is Presence.TIMEOUT:
            self._budget.timed_out(reference.registry)
        if lookup.logins and not logins and answer.presence in _REFUSALS:
            # The pod's logins give no user name and password for it (an identity token alone,
            # an empty entry, or no login type the kubelet reads), so the machines pull without
            # one, as doctor just asked (config.go DockerConfigEntry reads no identitytoken;
            # containerd's ParseAuth: "An empty auth config is valid for anonymous registry").
            # Refused that way, whether the machines hold a login of their own is not known.
            return RegistryAnswer(
                Presence.LOGIN_UNUSABLE,
                f"the registry logins {', '.join(lookup.logins)} hold no user name and password "
                f"for {reference.registry}, which refuses to answer without one",
            )
        return answer


_REFUSALS = frozenset({Presence.LOGIN_NEEDED, Presence.REFUSED, Presence.NOT_ALLOWED})


def _ask(
    client: RegistryClient,
    reference: ImageReference,
    login: RegistryLogin | None,
    platform: str | None,
    deadline: Deadline,
) -> RegistryAnswer:
    """Whether the registry serves `reference` to `login`; with `platform`, also the size of
    the image for it (the index's entry for the platform, read by its digest), and whether an
    index holds any image the machines may pull (NO_BUILD where none: `may_pick`)."""
    if platform is None:
        head = client.manifest(reference, login, deadline=deadline)
        if isinstance(head, LookupFailed):
            return answer_of(head, login)
        return RegistryAnswer(Presence.PRESENT)
    got = client.manifest(reference, login, content=True, deadline=deadline)
    if isinstance(got, LookupFailed):
        return answer_of(got, login)
    document = _document(got)
    if document is None:
        return RegistryAnswer(Presence.PRESENT, note="its size could not be read")
    if is_index(got.media_type, document):
        child = platform_manifest(document, platform)
        if child is None:
            offered = platforms_offered(document)
            held = f"holds no image for {platform} (it holds: {offered_words(offered)})"
            if may_pick(document, platform):
                return RegistryAnswer(Presence.PRESENT, note=f"it {held}")
            return RegistryAnswer(
                Presence.NO_BUILD,
                f"{reference}: its image index {held}",
                note=f"it {held}",
                offered=tuple(offered),
            )
        one = ImageReference(reference.registry, reference.repository, None, child)
        got = client.manifest(one, login, content=True, deadline=deadline)
        if isinstance(got, LookupFailed):
            answer = answer_of(got, login)
            if answer.presence is Presence.MISSING:
                return RegistryAnswer(
                    Presence.MISSING, f"its image for {platform} ({child}) does not exist"
                )
            return answer
        document = _document(got)
        if document is None:
            return RegistryAnswer(Presence.PRESENT, note="its size could not be read")
    size = download_size(document)
    if size is None:
        return RegistryAnswer(Presence.PRESENT, note="its size could not be read")
    return RegistryAnswer(Presence.PRESENT, size=size[0], layers=size[1])


def _document(manifest: Manifest) -> Mapping[str, Any] | None:
    """The JSON object of a manifest's bytes; None without bytes (schema 1) or when garbled."""
    if manifest.content is None:
        return None
    try:
        parsed = msgspec.json.decode(manifest.content)
    except msgspec.DecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


class RecordedLookup(Struct, frozen=True):
    """One look-up and its answer, as a snapshot saves them."""

    lookup: ImageLookup
    answer: RegistryAnswer


class RecordingRegistry:
    """Asks `inner`, and keeps every look-up and its answer for a snapshot."""

    def __init__(self, inner: ImageRegistry) -> None:
        self._inner = inner
        self.recorded: list[RecordedLookup] = []

    def look_up(self, wanted: Sequence[ImageLookup]) -> RegistryAnswers:
        """The inner answers, recorded in the order asked."""
        answers = self._inner.look_up(wanted)
        self.recorded += [RecordedLookup(k, v) for k, v in answers.items()]
        return answers

    def document(self) -> list[Any]:
        """The record as plain JSON values (the snapshot redacts and writes them)."""
        return [msgspec.to_builtins(entry) for entry in self.recorded]

    def unanswered(self) -> tuple[str, ...]:
        """Each look-up whose registry did not answer about the image (unreachable, too slow,
        not asked), once: `whether registry.example.com/trainer:2.1 is in its registry
        (could not connect to registry.example.com)`. doctor reads each as a could-not-check."""
        return tuple(
            dict.fromkeys(
                f"whether {entry.lookup.image} is in its registry"
                + (f" ({entry.answer.reason})" if entry.answer.reason else "")
                for entry in self.recorded
                if not entry.answer.presence.is_measurement
            )
        )


class RecordedRegistry:
    """Answers from a snapshot's record; a look-up it does not hold was not captured."""

    def __init__(self, answers: RegistryAnswers) -> None:
        self._answers = answers

    @classmethod
    def from_document(cls, document: object) -> "RecordedRegistry":
        """The record a snapshot holds (hostile input): entries that are not one are left out,
        and so answer as not captured."""
        answers: dict[ImageLookup, RegistryAnswer] = {}
        for entry in document if isinstance(document, list) else []:
            try:
                recorded = msgspec.convert(entry, RecordedLookup)
            except msgspec.ValidationError:
                continue
            answers.setdefault(recorded.lookup, recorded.answer)
        return cls(answers)

    def look_up(self, wanted: Sequence[ImageLookup]) -> RegistryAnswers:
        """The recorded answer to each look-up, or NOT_CAPTURED."""
        missing = RegistryAnswer(Presence.NOT_CAPTURED, "the snapshot holds no answer for it")
        return {lookup: self._answers.get(lookup, missing) for lookup in wanted}
