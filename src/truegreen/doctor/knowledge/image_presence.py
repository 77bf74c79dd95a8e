"""Whether the environment's images are in their registry, as each pod's own logins see them.

Pure: what to ask the registry (one look-up per image and the logins the kubelet would send
for it), and what an answer means. doctor/reads/registry_lookups.py does the asking, and
checks/image_pull.py turns the answers into findings.

The kubelet's rules, followed here (kubernetes/kubernetes):
- pkg/credentialprovider/keyring.go (Add, Lookup, URLsMatch): one keyring of every login the
  pod sends; a login applies to an image when its key's host matches the image's registry part
  by part, as written (`*` within one part, `*.example.com` never covers `a.b.example.com`;
  `localhost` never covers `LOCALHOST`), with the same port, and the key's path is a prefix of
  the image's; when no key of any of the pod's logins matches a Docker Hub image, the key
  `index.docker.io` alone applies (`https://index.docker.io/v1/`; never
  `registry-1.docker.io`): `truegreen.images.keyring_lookup`, over the parsed reference, never
  its raw text (an image that does not parse gets no login).
- pkg/kubelet/kuberuntime/kuberuntime_image.go (PullImage): with no login that applies, the
  image is pulled anonymously; otherwise each login is tried in turn, and the pull fails only
  when every one failed. There is no anonymous try after the logins.
- pkg/credentialprovider/secrets/secrets.go (MakeDockerKeyring): only a `dockerconfigjson`
  login's `.dockerconfigjson` and a `dockercfg` login's `.dockercfg` are read.
- pkg/kubelet/images/image_manager.go (shouldPullImage): `imagePullPolicy: Never` never pulls;
  `Always` pulls on every start, whatever the machine holds; `IfNotPresent` only what the
  machine lacks. Unset (a `--job-file`), the API server's default applies
  (pkg/apis/core/v1/defaults.go SetDefaults_Container: `truegreen.pull_policy`, refresh's
  rule too).
- pkg/kubelet/kubelet_pods.go (getPullSecretsForPod): a login the kubelet can't get is left
  out, and the pull goes on with the rest.
"""

import base64
import binascii
import json
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Protocol

from msgspec import Struct
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Got, Listed, ListRead
from truegreen.cluster.redact import UNPARSABLE
from truegreen.docker_config import LOGIN_KEYS, EntryError, login_entries
from truegreen.doctor.knowledge.pull_verification import (
    NO_COPIES,
    MachineCopies,
    MachineCopy,
    kubelets_verify,
)
from truegreen.images import (
    DOCKER_HUB,
    ImageReference,
    ImageReferenceError,
    keyring_key,
    keyring_lookup,
    login_covers,
    parse_image,
)
from truegreen.patterns import LazyPattern
from truegreen.pull_policy import PULL_ALWAYS, PULL_NEVER, pull_policy
from truegreen.pull_reasons import FAILED_PULL_REASONS

MAX_LOOKUPS = 64
"""Distinct look-ups one run makes at most; the rest are reported as not looked up. A
namespace's images are a few dozen: this bounds a run against a hostile or huge one."""
DEFAULT_PLATFORM = "linux/amd64"
"""The platform an image's size is read for when the machines do not name one."""
ARCH_LABEL = "kubernetes.io/arch"
OS_LABEL = "kubernetes.io/os"
"""The kubelet labels every machine with its GOOS and GOARCH (k8s.io/api core/v1
well_known_labels.go); a pod asks for one with a node selector on them."""

# Registries whose machines log in on their own, through the cloud's kubelet credential
# provider, so a pod needs no login there and doctor cannot see the one the machine uses:
# awslabs/amazon-eks-ami nodeadm/internal/kubelet/image-credential-provider.template.json (ECR),
# kubernetes/kubernetes pkg/credentialprovider/gcp/metadata.go and
# pkg/credentialprovider/azure/azure_credentials.go (containerRegistryUrls: GCR, Artifact
# Registry, ACR). Matched as the kubelet matches them (keyring.go).
MACHINE_LOGIN_REGISTRIES = (
    "*.dkr.ecr.*.amazonaws.com",
    "*.dkr-ecr.*.on.aws",
    "*.dkr.ecr.*.amazonaws.com.cn",
    "*.dkr-ecr.*.on.amazonwebservices.com.cn",
    "*.dkr.ecr-fips.*.amazonaws.com",
    "*.dkr-ecr-fips.*.on.aws",
    "container.cloud.google.com",
    "gcr.io",
    "*.gcr.io",
    "*.pkg.dev",
    "*.azurecr.io",
    "*.azurecr.cn",
    "*.azurecr.de",
    "*.azurecr.us",
)


class Presence(StrEnum):
    """What the registry said about one image, as the pod's logins see it."""

    PRESENT = "present"
    NO_BUILD = "no-build-for-platform"
    """The tag is an image index, and none of its images is one containerd's default matcher
    picks on the look-up's platform (`may_pick`): the pull stops with `no match for platform
    in manifest: not found` (containerd core/images/image.go, Manifest). A measurement of the
    index; whether it fails the pull is the check's to say, as only a platform doctor is sure
    of makes it one (`MachinePlatform.sure`)."""
    MISSING = "missing"
    """404: the tag or digest (or the repository) does not exist. A measurement."""
    REFUSED = "refused"
    """The login was refused: the token service's 401, or a 401 to the login itself (basic
    auth), for every login the pod sends for it."""
    NOT_ALLOWED = "not-allowed"
    """The registry took the pod's login and refused the repository to it: 401
    `insufficient_scope` to the token it granted, or 403 (refresh/registry.py `_refusal`).
    The account may not read it, or it does not exist (Docker Hub answers both alike). A
    measurement."""
    LOGIN_NEEDED = "login-needed"
    """The pod sends no login for it, and the registry refuses to answer without one."""
    LOGIN_UNUSABLE = "login-unusable"
    """The pod's logins for it hold no user name and password (an identity token only, or no
    login type the kubelet reads), so the machines pull without one, and the registry refused
    doctor's look-up made the same way: whether the machines log in on their own is not known."""
    UNREACHABLE = "unreachable"
    TIMEOUT = "timeout"
    SERVER_ERROR = "server-error"
    RATE_LIMITED = "rate-limited"
    GARBLED = "garbled"
    TOO_LARGE = "too-large"
    INSECURE = "insecure"
    """Plain HTTP where it is not allowed, or a redirect from https to http."""
    OWN_ADDRESS = "own-address"
    """The registry is on the machines' own address (loopback), which is not this computer's
    to ask, and the operator did not name it (--registry-allow): nothing was dialled."""
    ADDRESS_REFUSED = "address-refused"
    """The registry's name leads to a link-local, metadata, unspecified or multicast address,
    which doctor never connects to: nothing was dialled."""
    PRIVATE_ADDRESS = "private-address"
    """The registry's name leads to a private network's address, which doctor asks only when
    the operator names the registry (--registry-allow): nothing was dialled."""
    NOT_ASKED = "not-asked"
    """Past MAX_LOOKUPS: the registry was not asked."""
    OUT_OF_TIME = "out-of-time"
    """The run's time for registries was spent before this look-up: it was not asked."""
    NOT_CAPTURED = "not-captured"
    """Offline: the snapshot holds no answer for this look-up."""

    @property
    def is_measurement(self) -> bool:
        """The registry answered about the image itself (present, an index with no image for
        the platform, missing, or refused)."""
        return self in _MEASURED

    @property
    def is_served(self) -> bool:
        """The registry handed the tag out to the login (an index with no image for the
        platform too: every other login the kubelet tries gets the same index)."""
        return self in (Presence.PRESENT, Presence.NO_BUILD)


_MEASURED = frozenset(
    {
        Presence.PRESENT,
        Presence.NO_BUILD,
        Presence.MISSING,
        Presence.NOT_ALLOWED,
        Presence.REFUSED,
        Presence.LOGIN_NEEDED,
    }
)


class ImageLookup(Struct, frozen=True):
    """One question to a registry: an image, as one set of logins sees it. Two pods share a
    look-up only when the kubelet would send the same logins for the image."""

    image: str
    """The reference, normalised (`docker.io/library/python:3.12`)."""
    logins: tuple[str, ...] = ()
    """The registry logins that apply to it, by name, in the order the pod names them (the
    look-up tries their credentials in the kubelet's keyring order)."""
    platform: str | None = None
    """`os/arch` to read the download size for; None: whether it exists is enough."""


class RegistryAnswer(Struct, frozen=True):
    """The registry's answer to one look-up. No credential is ever part of it."""

    presence: Presence
    reason: str = ""
    """One plain line from the look-up (details; may name the registry and the reference)."""
    size: int | None = None
    """Bytes to download: the compressed layers of the image for the look-up's platform."""
    layers: int | None = None
    note: str = ""
    """What else was learned (the index holds no image for the platform)."""
    offered: tuple[str, ...] = ()
    """NO_BUILD: the platforms (`os/arch`) the index holds images for (`platforms_offered`)."""


RegistryAnswers = Mapping[ImageLookup, RegistryAnswer]


class ImageRegistry(Protocol):
    """Answers look-ups: the registries themselves, or what a snapshot recorded of them
    (doctor/reads/registry_lookups.py)."""

    def look_up(self, wanted: Sequence[ImageLookup]) -> RegistryAnswers:
        """An answer for every look-up of `wanted`."""
        ...


class PodLogins(Struct, frozen=True):
    """The registry logins one pod sends, as doctor could read them."""

    names: tuple[str, ...]
    """Login names, each once: the pod's own, or with none its account's."""
    hosts: Mapping[str, frozenset[str]]
    """Each usable login's keyring keys (registry host patterns), by name: an empty entry's too
    (`keyring_keys`), as the kubelet's one keyring of the pod's logins files it."""
    complete: bool
    """Every login the pod names was read and usable, and its account was read: a refusal is
    then a measurement of everything the kubelet would try."""

    def applying_to(self, image_name: str) -> tuple[str, ...]:
        """The usable logins whose entries the kubelet's one keyring of them all returns for
        `image_name` (`registry/repository`), in the order the pod names them (the look-up
        builds the same keyring of these logins and tries their credentials in its order).
        An empty entry's login is among them: it holds the key that keeps another login's
        `index.docker.io` entry from being read (keyring.go Lookup), whichever login holds
        which entry."""
        return applying_logins(self.names, self.hosts, image_name)


def applying_logins(
    names: Iterable[str], hosts: Mapping[str, frozenset[str]], image_name: str
) -> tuple[str, ...]:
    """Those of the logins `names` (their keys in `hosts`) that the kubelet's one keyring of
    them all finds credentials in for `image_name` (keyring.go Lookup), in the order given."""
    keyed = [(key, name) for name in names for key in sorted(hosts.get(name, ()))]
    found = set(keyring_lookup(keyed, image_name))
    return tuple(name for name in dict.fromkeys(names) if name in found)


class Template(Protocol):
    """What doctor knows of a pod template: whose it is and its pod spec."""

    @property
    def ref(self) -> str:
        """`Kind/name` of the owner."""
        ...

    @property
    def spec(self) -> Mapping[str, Any]:
        """The pod spec."""
        ...


def _auths(secret: Mapping[str, object]) -> dict[str, object] | None:
    """The entries of a registry login, by registry host as written; None when it is not a
    login the kubelet reads, or does not parse."""
    key = LOGIN_KEYS.get(str(secret.get("type", "")))
    value = o.mapping(secret.get("data")).get(key) if key else None
    if not key or not value:
        return None
    try:
        parsed = json.loads(base64.b64decode(str(value), validate=True))
    except (binascii.Error, ValueError):
        return None
    try:
        return login_entries(key, parsed)
    except EntryError:
        return None


def unreadable_entries(secret: Mapping[str, object]) -> list[str]:
    """The registry hosts of a (redacted) registry login whose entry the kubelet cannot read:
    the redaction marked them (cluster/redact.py, docker_config.py). One fails the whole login,
    and every image pull of a pod that names it (secrets.go MakeDockerKeyring)."""
    return [
        host
        for host, entry in (_auths(secret) or {}).items()
        if o.mapping(entry).get("auth") == UNPARSABLE
    ]


def registries_with_credentials(secret: Mapping[str, object]) -> frozenset[str] | None:
    """The keyring keys a (redacted) registry login holds credentials under (keyring.go Add:
    `https://index.docker.io/v1/` → `index.docker.io`; an entry url.Parse refuses is ignored);
    None when it is not a login the kubelet reads, does not parse, or holds an entry the
    kubelet cannot read. What the pods' logins cover is judged by these."""
    return _keys(secret, empty_too=False)


def keyring_keys(secret: Mapping[str, object]) -> frozenset[str] | None:
    """Every keyring key of a (redacted) registry login, an empty entry's (`{}`, `null`) too:
    keyring.go Add files it, and Lookup then finds that key and never falls back to
    `index.docker.io`. None as for `registries_with_credentials`."""
    return _keys(secret, empty_too=True)


def _keys(secret: Mapping[str, object], *, empty_too: bool) -> frozenset[str] | None:
    auths = _auths(secret)
    if auths is None or unreadable_entries(secret):
        return None
    keys = (keyring_key(host) for host, entry in auths.items() if empty_too or o.mapping(entry))
    return frozenset(key for key in keys if key is not None)


def machines_log_in(registry: str) -> bool:
    """A cloud registry whose machines hold a login of their own (a credential provider)."""
    return any(login_covers(pattern, registry) for pattern in MACHINE_LOGIN_REGISTRIES)


def login_names(spec: Mapping[str, Any], account: GetRead | None) -> tuple[str, ...]:
    """The names of the logins a pod of `spec` sends, each once: its own; with none, its
    service account's, which the ServiceAccount admission plugin copies into a pod whose list
    is empty, and only into such a pod (`kubeobjects.gets_account_pull_secrets`); a name left
    empty is no login (pkg/kubelet/kubelet_pods.go getPullSecretsForPod skips it).
    `account`: the account's read, None when it was not read."""
    names = o.pull_secret_names(spec)
    if o.gets_account_pull_secrets(spec) and isinstance(account, Got):
        names = o.pull_secret_names(account.obj)
    return tuple(dict.fromkeys(names))


def kubelet_skips(read: GetRead) -> bool:
    """A login the kubelet pulls without, going on with the pod's other logins: one it can't
    get, which it leaves out with a FailedToRetrieveImagePullSecret Warning
    (pkg/kubelet/kubelet_pods.go getPullSecretsForPod), and one of another type than a registry
    login (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring). A read that could not
    look is neither: the login may be there."""
    if isinstance(read, CantRead):
        return read.is_measurement
    return str(read.obj.get("type", "")) not in LOGIN_KEYS


def pod_logins(
    spec: Mapping[str, Any], account: GetRead | None, secrets: Mapping[str, GetRead]
) -> PodLogins:
    """The logins a pod of `spec` names (`login_names`), as doctor could read them: complete
    unless one could not be read or does not parse (the kubelet sends the usable ones, and
    leaves out those it skips: `kubelet_skips`)."""
    names = login_names(spec, account)
    complete = not o.gets_account_pull_secrets(spec) or (
        isinstance(account, Got) or (isinstance(account, CantRead) and account.is_measurement)
    )
    hosts: dict[str, frozenset[str]] = {}
    for name in names:
        read = secrets.get(name)
        found = keyring_keys(read.obj) if isinstance(read, Got) else None
        if found is not None:
            hosts[name] = found
        elif read is None or not kubelet_skips(read):
            complete = False  # unread or damaged: its own finding says so
    return PodLogins(names, hosts, complete)


def read_keys(secrets: Mapping[str, GetRead]) -> dict[str, frozenset[str]]:
    """The keyring keys (`keyring_keys`) of each login doctor read that the kubelet reads, by
    name: what says which of a pod's logins the kubelet may have sent for an image."""
    found: dict[str, frozenset[str]] = {}
    for name, read in secrets.items():
        keys = keyring_keys(read.obj) if isinstance(read, Got) else None
        if keys is not None:
            found[name] = keys
    return found


def spared_pulls(
    spec: Mapping[str, Any],
    on_machines: MachineCopies,
    logins: PodLogins,
    keys: Mapping[str, frozenset[str]],
) -> frozenset[str]:
    """Those of the images a pod of `spec` pulls that it would start from a machine's copy
    (`on_machines`: `kubelet_pulled`), so needs no login nor registry for: not one that any of
    its containers pulls on every start (`Always`: image_manager.go shouldPullImage
    `case v1.PullAlways: return true`); and where the kubelets check a pod's logins
    (`MachineCopies.verified`), only one whose copy the pod's own logins for it (`logins`) let
    it start from (`_starts_from`). `keys`: the keyring keys of the logins doctor read
    (`read_keys`)."""
    found: set[str] = set()
    for image in _pulled_when_missing(spec):
        name = parse_image(image).name
        sent = frozenset(logins.applying_to(name))
        copies = [copy for copy in on_machines.copies if copy.image == image]
        starts = (_starts_from(copy, sent, keys, name) for copy in copies)
        if copies and (not on_machines.verified or any(starts)):
            found.add(image)
    return frozenset(found)


def _starts_from(
    copy: MachineCopy, sent: frozenset[str], keys: Mapping[str, frozenset[str]], image_name: str
) -> bool:
    """Whether a pod that sends `sent` for `image_name` starts from `copy` where the kubelet
    checks (pkg/kubelet/images/pullmanager/image_pull_manager.go MustAttemptImagePull): the
    copy's pod sent no login for it (its logins' keys find none: keyring.go Lookup), so the
    kubelet recorded it for every pod (NodePodsAccessible); or it sent one that `sent` holds
    too, by name. A login of that pod doctor did not read may be the one it sent; a pod no
    longer stored sent logins unknown: no copy of its spares a pull."""
    if copy.logins is None:
        return False
    unread = copy.logins - keys.keys()
    used = frozenset(applying_logins(sorted(copy.logins - unread), keys, image_name)) | unread
    return not used or bool(used & sent)


def _pulled_when_missing(spec: Mapping[str, Any]) -> list[str]:
    """The images a pod of `spec` pulls only when its machine lacks them: not one that any of
    its containers pulls on every start (`Always`)."""
    always: set[str] = set()
    for container in [*o.init_containers(spec), *o.containers(spec)]:
        image = container.get("image")
        if not isinstance(image, str) or pull_policy(container) != PULL_ALWAYS:
            continue
        try:
            always.add(str(parse_image(image)))
        except ImageReferenceError:
            continue
    return [image for image in pulled_images(spec) if image not in always]


def pulled_images(spec: Mapping[str, Any]) -> list[str]:
    """The images the kubelet pulls for a pod of `spec`, init containers first, each once;
    not those it never pulls (`imagePullPolicy: Never`) nor those that are not references
    (the workloads check's finding)."""
    found: list[str] = []
    for container in [*o.init_containers(spec), *o.containers(spec)]:
        image = container.get("image")
        if not isinstance(image, str) or pull_policy(container) == PULL_NEVER:
            continue
        try:
            normalised = str(parse_image(image))
        except ImageReferenceError:
            continue
        if normalised not in found:
            found.append(normalised)
    return found


_PULL_FAILING = FAILED_PULL_REASONS | {"InvalidImageName"}
PULLED_EVENTS = {"reason": "Pulled"}
"""The field selector of the kubelet's `Pulled` Events (events accept `reason`:
pkg/registry/core/event/strategy.go ToSelectableFields; pkg/kubelet/events/event.go
PulledImage)."""
_PULLED_MESSAGE = LazyPattern(
    r'^(?:Successfully pulled image "(?P<pulled>[^"]*)"(?: in |$)'
    r'|Container image "(?P<present>[^"]*)" already present on machine)'
)
"""pkg/kubelet/images/image_manager.go EnsureImageExists: `Successfully pulled image %q in %v
(%v including waiting). Image size: %v bytes.` (before 1.30 `... in %v`, earlier still the
image alone), and `Container image %q already present on machine` (since 1.33 `... and can be
accessed by the pod`), each naming the container's image as the pod states it."""
KUBELET = "kubelet"
"""The kubelet's Events' source (pkg/kubelet/kubelet.go: EventSource{Component: "kubelet"})."""


def kubelet_pulled(
    pods: ListRead, pulled_events: ListRead | None = None, machines: ListRead | None = None
) -> MachineCopies:
    """The images (normalised as `pulled_images` names them) that a machine holds for a pod of
    the namespace, each with that pod's logins: a container whose status carries an `imageID`
    runs, or ran, that image (pkg/kubelet/kuberuntime: the kubelet sets imageID once the image
    is in place); and an image a kubelet's `Pulled` Event of the namespace names
    (`_kubelet_pulled_events`), pulled there or already present (pkg/kubelet/images/
    image_manager.go EnsureImageExists), its pod there (its logins are the stored pod's) or
    gone (unknown). That is the kubelet's measurement that a machine holds it, whatever the
    pod's pull policy; whether that spares another pod a pull is that pod's own policy's say,
    and its logins' where the kubelets check them (`spared_pulls`; `machines`: whether they
    do, `pull_verification.kubelets_verify`; None: not known, as before 1.35). An Event counts
    however old, while the cluster keeps it (kube-apiserver --event-ttl, 1 h by default), as a
    stored pod's imageID counts however old its pod is. The image a container status names
    can be a digest or a normalised name, so the container's own spec says which reference was
    pulled."""
    stored = pods.items if isinstance(pods, Listed) else ()
    copies = {MachineCopy(str(ref), _logins_of(pod)) for pod in stored for ref in _pod_pulled(pod)}
    named = {str(o.mapping(pod.get("metadata")).get("name", "")): pod for pod in stored}
    for event in _kubelet_pulled_events(pulled_events):
        pod = named.get(event.pod)
        logins = _logins_of(pod) if pod is not None and _same_uid(event.uid, pod) else None
        copies.add(MachineCopy(str(event.image), logins))
    return MachineCopies(frozenset(copies), machines is not None and kubelets_verify(machines))


def _logins_of(pod: Mapping[str, Any]) -> frozenset[str]:
    """The names of a stored pod's imagePullSecrets, its account's among them."""
    return frozenset(o.pull_secret_names(o.mapping(pod.get("spec"))))


def _same_uid(uid: str | None, pod: Mapping[str, Any]) -> bool:
    """An Event naming `uid` is about the stored pod of its name where either carries none or
    both carry the same: a pod of the same name made later is another."""
    stored = o.mapping(pod.get("metadata")).get("uid")
    return uid is None or not stored or uid == stored


def _pod_pulled(pod: Mapping[str, Any]) -> list[ImageReference]:
    """The images a container of `pod` runs or ran, by its status's imageID (`kubelet_pulled`),
    as its spec names them."""
    spec = o.mapping(pod.get("spec"))
    images = {
        str(c.get("name")): c.get("image") for c in [*o.init_containers(spec), *o.containers(spec)]
    }
    found: list[ImageReference] = []
    for status in o.container_statuses(pod):
        image = images.get(str(status.get("name")))
        waiting = o.mapping(o.mapping(status.get("state")).get("waiting"))
        if (
            not status.get("imageID")
            or not isinstance(image, str)
            or waiting.get("reason") in _PULL_FAILING  # a new image the old ID is not
        ):
            continue
        try:
            found.append(parse_image(image))
        except ImageReferenceError:
            continue
    return found


class OwnLogin(StrEnum):
    """Why the machines may log in to a registry by their own means, which doctor can't use:
    the kubelet pulls with the pod's logins joined to the machine's own keyring (a node's
    config.json, a kubelet credential provider: pkg/credentialprovider/secrets/secrets.go
    MakeDockerKeyring), so a registry's refusal of doctor's look-up measures no failure there."""

    CLOUD = "cloud"
    """A cloud registry whose machines' credential provider logs in (MACHINE_LOGIN_REGISTRIES)."""
    PULLED = "pulled"
    """The kubelet downloaded an image from the registry for a pod that names no login
    (`pulled_without_login`), and the registry, asked without one, did not hand that image out
    (`machines_may_log_in`)."""


class PullSign(StrEnum):
    """What says the kubelet downloaded an image from its registry for a pod, rather than
    finding it on the machine: a container status's imageID says neither, as the kubelet sets
    it on both paths (pkg/kubelet/images/image_manager.go EnsureImageExists)."""

    EVENT = "event"
    """Its `Pulled` Event about the pod says `Successfully pulled image`, not `already
    present on machine`."""
    ALWAYS = "always"
    """The pod's container pulls its image on every start (imagePullPolicy Always, set or the
    API server's default for `:latest`: pkg/apis/core/v1/defaults.go SetDefaults_Container) and
    runs: that start asked the registry (image_manager.go shouldPullImage)."""


class MachinePull(Struct, frozen=True):
    """An image the kubelet downloaded from a registry for a pod that names no login, the pod,
    what says so, and what the registry answered when asked for it without one (None: not
    asked)."""

    image: str
    pod: str
    sign: PullSign
    asked: RegistryAnswer | None = None


class _PulledEvent(Struct, frozen=True):
    """A kubelet's `Pulled` Event about a pod: the image it names, and whether it downloaded it
    (`Successfully pulled image`) or found it on the machine (`already present`)."""

    pod: str
    uid: str | None
    image: ImageReference
    downloaded: bool


def _kubelet_pulled_events(events: ListRead | None) -> list[_PulledEvent]:
    """The kubelet's `Pulled` Events of the namespace, on a Pod (`_PULLED_MESSAGE`). Another
    component's, a message of another shape, or one naming no valid reference says nothing."""
    if not isinstance(events, Listed):
        return []
    found: list[_PulledEvent] = []
    for event in events.items:
        source = o.mapping(event.get("source")).get("component")
        involved = o.mapping(event.get("involvedObject"))
        if (
            event.get("reason") != PULLED_EVENTS["reason"]
            or KUBELET not in (source, event.get("reportingComponent"))
            or involved.get("kind") != "Pod"
        ):
            continue
        said = _PULLED_MESSAGE.match(str(event.get("message", "")))
        image = (said.group("pulled") or said.group("present")) if said else None
        if not said or not image:
            continue
        try:
            reference = parse_image(image)
        except ImageReferenceError:
            continue
        uid = involved.get("uid")
        found.append(
            _PulledEvent(
                str(involved.get("name", "")),
                uid if isinstance(uid, str) and uid else None,
                reference,
                said.group("pulled") is not None,
            )
        )
    return found


def _downloads(pod: Mapping[str, Any], events: list[_PulledEvent]) -> list[MachinePull]:
    """The images the kubelet measurably downloaded for `pod`: those its `Pulled` Events about
    the pod (by name, and uid where both carry one: a pod of the same name made later is
    another) say it pulled, then those of its running containers that pull on every start
    (`PullSign`). Not an image the kubelet found on the machine (`already present`), nor one
    that a container pulling only when missing (IfNotPresent) or never runs with no such
    Event: its imageID is set all the same, and the kubelet started it without a login
    (image_manager.go shouldPullImage; the KubeletEnsureSecretPulledImages gate, which would
    check the pod's logins, is off by default before Kubernetes 1.35)."""
    metadata = o.mapping(pod.get("metadata"))
    name, uid = str(metadata.get("name", "")), metadata.get("uid")
    found = [
        MachinePull(str(e.image), name, PullSign.EVENT)
        for e in events
        if e.downloaded and e.pod == name and (e.uid is None or not uid or e.uid == uid)
    ]
    spec = o.mapping(pod.get("spec"))
    containers = {str(c.get("name")): c for c in [*o.init_containers(spec), *o.containers(spec)]}
    for status in o.container_statuses(pod):
        container = containers.get(str(status.get("name")))
        image = container.get("image") if container else None
        if (
            container is None
            or not isinstance(image, str)
            or "running" not in o.mapping(status.get("state"))
            or pull_policy(container) != PULL_ALWAYS
        ):
            continue
        try:
            found.append(MachinePull(str(parse_image(image)), name, PullSign.ALWAYS))
        except ImageReferenceError:
            continue
    return found


def pulled_without_login(pods: ListRead, pulled_events: ListRead | None) -> dict[str, MachinePull]:
    """Per registry (the parsed image's host and port, as the kubelet's keyring matches it:
    keyring.go URLsMatch), the first image the kubelet downloaded from it (`_downloads`) for a
    pod of the namespace that names no registry login: the stored pod holds its account's too
    (the ServiceAccount admission plugin copied them in), and a pod's list never changes, so the
    kubelet pulled with the machine's own keyring alone (a node's config.json, a credential
    provider: pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring), or with no login.
    A pod that names one is not counted, whatever the login holds now: it may have held one
    for that registry when the pull was made; nor is a pod no longer stored, whose logins are
    unknown. Not Docker Hub's official images, served to anyone, and not the cloud registries,
    judged so anyway (`machines_log_in`)."""
    events = _kubelet_pulled_events(pulled_events)
    found: dict[str, MachinePull] = {}
    for pod in pods.items if isinstance(pods, Listed) else ():
        if o.pull_secret_names(o.mapping(pod.get("spec"))):
            continue
        for pull in _downloads(pod, events):
            reference = parse_image(pull.image)
            registry = reference.registry
            official = registry == DOCKER_HUB and reference.repository.startswith("library/")
            if not official and not machines_log_in(registry):
                found.setdefault(registry, pull)
    return found


def login_probes(
    wanted: Sequence[ImageLookup], pods: ListRead, pulled_events: ListRead | None
) -> list[ImageLookup]:
    """One look-up without a login per registry that `wanted` asks and that the kubelet
    downloaded from for a pod that names no login (`pulled_without_login`): whether the registry
    hands that image to anyone says whether the download needed the machine's own login. Not
    made where no image of that registry is still to pull: a healthy namespace asks no
    registry."""
    asked = {parse_image(lookup.image).registry for lookup in wanted}
    return [
        ImageLookup(pull.image)
        for registry, pull in pulled_without_login(pods, pulled_events).items()
        if registry in asked
    ]


def machines_may_log_in(
    pods: ListRead, pulled_events: ListRead | None, answers: RegistryAnswers
) -> dict[str, MachinePull]:
    """The registries the machines may log in to by their own means (`OwnLogin.PULLED`): the
    kubelet downloaded an image from it for a pod that names no login, and the registry, asked
    without one (`login_probes`), did not hand that image out, or could not say. One that did
    proves nothing: the download needed no login."""
    found: dict[str, MachinePull] = {}
    for registry, pull in pulled_without_login(pods, pulled_events).items():
        asked = answers.get(ImageLookup(pull.image))
        if asked is None or not asked.presence.is_served:
            found[registry] = replace(pull, asked=asked)
    return found


def own_login(registry: str, pulled: Mapping[str, MachinePull]) -> OwnLogin | None:
    """Why the machines may log in to `registry` by their own means; None: no sign they do."""
    if machines_log_in(registry):
        return OwnLogin.CLOUD
    return OwnLogin.PULLED if registry in pulled else None


def still_to_pull(templates: Iterable[Template], pulled: MachineCopies) -> bool:
    """Whether a pod of some template would pull an image that no machine holds for the
    namespace (`pulled`), one it pulls only when missing: the images it pulls on every start
    (`Always`) a machine's copy spares nothing, so the kubelet's word on them changes nothing."""
    held = pulled.images
    return any(image not in held for t in templates for image in _pulled_when_missing(t.spec))


class MachinePlatform(Struct, frozen=True):
    """The `os/arch` a pod runs on, and whether doctor knows it or took a default."""

    name: str
    sure: bool
    """Both parts known: each named by the pod's node selector or by every term of its required
    node affinity; or, for a pod that asks for no particular machines, the one value every
    machine, all of them read, is labelled with. Otherwise a part is a guess (linux, amd64)."""


def _required_terms(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod's required node affinity terms (any one of them admits a machine)."""
    affinity = o.mapping(o.mapping(spec.get("affinity")).get("nodeAffinity"))
    required = o.mapping(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = required.get("nodeSelectorTerms")
    return [o.mapping(term) for term in terms] if isinstance(terms, list) else []


def _affinity_part(terms: list[Mapping[str, Any]], label: str) -> tuple[str | None, bool]:
    """The one value every required term names for `label` (`In` with one value), and whether
    any term names the label at all (then the machines' labels say nothing sure of it)."""
    values: set[str] = set()
    mentioned = False
    every = bool(terms)
    for term in terms:
        expressions = term.get("matchExpressions")
        on = [
            e
            for e in (o.mapping(x) for x in (expressions if isinstance(expressions, list) else ()))
            if e.get("key") == label
        ]
        mentioned = mentioned or bool(on)
        single = [
            e
            for e in on
            if e.get("operator") == "In"
            and isinstance(e.get("values"), list)
            and len(e["values"]) == 1
        ]
        if single:
            values.add(str(single[0]["values"][0]))
        else:
            every = False
    return (next(iter(values)) if every and len(values) == 1 else None), mentioned


def _platform_part(
    spec: Mapping[str, Any], machines: ListRead, label: str, default: str
) -> tuple[str, bool]:
    """One part of a pod's platform (`label`'s value) and whether it is known: the node
    selector's, or the one every required affinity term names; else the one value the
    machines labelled with it carry, known when every machine carries it and the pod asks for
    no particular machines (a pool it selects may scale from zero, of another platform);
    else `default`, a guess."""
    selector = o.mapping(spec.get("nodeSelector"))
    named = selector.get(label)
    if named:
        return str(named), True
    terms = _required_terms(spec)
    by_affinity, mentioned = _affinity_part(terms, label)
    if by_affinity is not None:
        return by_affinity, True
    listed = machines.items if isinstance(machines, Listed) else ()
    values = [o.labels_of(m).get(label) for m in listed]
    found = {str(v) for v in values if v}
    if len(found) == 1:
        free = not mentioned and not terms and set(selector) <= {OS_LABEL, ARCH_LABEL}
        return next(iter(found)), all(values) and free
    return default, False


def machine_platform(spec: Mapping[str, Any], machines: ListRead) -> MachinePlatform:
    """The `os/arch` a pod of `spec` runs on: each part its node selector's or its required
    node affinity's, else the one every machine carries, else linux/amd64's. The kubelet labels
    every machine with both (pkg/kubelet/kubelet_node_status.go, initialNode)."""
    default_os, _, default_arch = DEFAULT_PLATFORM.partition("/")
    os_name, os_known = _platform_part(spec, machines, OS_LABEL, default_os)
    arch, arch_known = _platform_part(spec, machines, ARCH_LABEL, default_arch)
    return MachinePlatform(f"{os_name}/{arch}", os_known and arch_known)


def template_lookups(
    spec: Mapping[str, Any], logins: PodLogins, platform: str | None
) -> list[ImageLookup]:
    """One look-up per image a pod of `spec` pulls, with the logins that apply to it."""
    return [
        ImageLookup(image, logins.applying_to(parse_image(image).name), platform)
        for image in pulled_images(spec)
    ]


def template_lookups_of(
    template: Template,
    accounts: Mapping[str, GetRead],
    secrets: Mapping[str, GetRead],
    judged: str | None,
    machines: ListRead,
) -> tuple[PodLogins, list[ImageLookup]]:
    """The logins a template's pods send, and its look-ups; the judged training job's
    (`judged`: its `Kind/name`) also ask for the download size on its machines' platform."""
    account = accounts.get(o.service_account_name(template.spec))
    logins = pod_logins(template.spec, account, secrets)
    platform = machine_platform(template.spec, machines).name if template.ref == judged else None
    return logins, template_lookups(template.spec, logins, platform)


def wanted_lookups(
    templates: Iterable[Template],
    accounts: Mapping[str, GetRead],
    secrets: Mapping[str, GetRead],
    judged: str | None,
    machines: ListRead,
    pulled: MachineCopies = NO_COPIES,
) -> list[ImageLookup]:
    """Every distinct look-up the templates need, in the order asked: the judged training
    job's first, so that a run past MAX_LOOKUPS still asks about the job it judges. None for
    an image a machine has already pulled for the namespace (`kubelet_pulled`) that the
    template's pods would start from without pulling (`spared_pulls`)."""
    found: dict[ImageLookup, None] = {}
    keys = read_keys(secrets)
    for template in sorted(templates, key=lambda t: t.ref != judged):
        logins, lookups = template_lookups_of(template, accounts, secrets, judged, machines)
        spared = spared_pulls(template.spec, pulled, logins, keys)
        found.update(dict.fromkeys(x for x in lookups if x.image not in spared))
    return list(found)


def platform_manifest(index: Mapping[str, Any], platform: str) -> str | None:
    """The digest of the image for `platform` (`os/arch`) in an image index, as containerd's
    default matcher picks it (containerd/platforms: os and architecture equal; for arm64 the
    variant unset or v8); None when the index holds none."""
    os_name, _, arch = platform.partition("/")
    for entry in o.sequence(index.get("manifests")):
        item = o.mapping(entry)
        offered = o.mapping(item.get("platform"))
        variant = offered.get("variant")
        if (
            offered.get("os") == os_name
            and offered.get("architecture") == arch
            and (arch != "arm64" or variant in (None, "", "v8"))
            and isinstance(item.get("digest"), str)
        ):
            return str(item["digest"])
    return None


_ACCEPTED_ARCHES = {"amd64": frozenset({"amd64", "386"}), "arm64": frozenset({"arm64", "arm"})}
"""The architectures containerd's default matcher takes on a machine of each (containerd/
platforms compare.go, platformVector: amd64 also takes 386, arm64 also arm v8 to v5; any
variant, as doctor does not know the machine's own); any other takes its own alone."""
_ARCH_NAMES = {
    "x86_64": "amd64",
    "x86-64": "amd64",
    "i386": "386",
    "aarch64": "arm64",
    "armhf": "arm",
    "armel": "arm",
}
"""containerd/platforms database.go, normalizeArch: the other names of an architecture."""


def may_pick(index: Mapping[str, Any], platform: str) -> bool:
    """Whether containerd's default matcher on machines of `platform` (`os/arch`) may pick an
    image of `index`. platforms.Default is Only(the machine's own platform) (containerd/
    platforms defaults_unix.go), which takes an entry of the same os (one naming none is the
    machine's own: Normalize) and an architecture of `_ACCEPTED_ARCHES`, whatever its variant.
    An entry naming no platform is read further (its config's platform: core/images/image.go,
    Manifest), and an index or entry that does not decode fails the pull otherwise: either may
    be picked, as far as doctor can tell. False only where no entry could be the one, so the
    pull stops with `no match for platform in manifest` (an index with no entries too)."""
    os_name, _, arch = platform.partition("/")
    accepted = _ACCEPTED_ARCHES.get(arch, frozenset({arch}))
    entries = index.get("manifests", [])
    if not isinstance(entries, list):
        return True
    for entry in entries:
        offered = entry.get("platform") if isinstance(entry, Mapping) else None
        if not isinstance(offered, Mapping):
            return True
        entry_os, entry_arch = offered.get("os") or os_name, offered.get("architecture") or ""
        if not isinstance(entry_os, str) or not isinstance(entry_arch, str):
            return True
        entry_arch = entry_arch.lower()
        if entry_os.lower() == os_name and _ARCH_NAMES.get(entry_arch, entry_arch) in accepted:
            return True
    return False


def platforms_offered(index: Mapping[str, Any]) -> list[str]:
    """`os/arch` of every image an index holds (attestations, `unknown/unknown`, left out)."""
    found: list[str] = []
    for entry in o.sequence(index.get("manifests")):
        offered = o.mapping(o.mapping(entry).get("platform"))
        name = f"{offered.get('os')}/{offered.get('architecture')}"
        if offered.get("os") not in (None, "unknown") and name not in found:
            found.append(name)
    return found


OFFERED_NAMED = 6
"""At most this many of an index's platforms are named in a line; the rest are counted."""


def offered_words(offered: Sequence[str]) -> str:
    """`linux/arm64, linux/s390x`; past OFFERED_NAMED, `… and 3 more`; `none` for none."""
    if not offered:
        return "none"
    named = ", ".join(offered[:OFFERED_NAMED])
    rest = len(offered) - OFFERED_NAMED
    return f"{named} and {rest} more" if rest > 0 else named


def download_size(manifest: Mapping[str, Any]) -> tuple[int, int] | None:
    """(bytes, layers): what pulling an image downloads, the compressed sizes of its layers
    (opencontainers/image-spec manifest.md: `layers[].size`); None when they are not all there."""
    layers = o.sequence(manifest.get("layers"))
    sizes = [o.mapping(layer).get("size") for layer in layers]
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes):
        return None
    return sum(s for s in sizes if isinstance(s, int)), len(sizes)


def is_index(media_type: str, document: Mapping[str, Any]) -> bool:
    """An image index (several platforms) rather than one image's manifest."""
    if media_type:
        return media_type in _INDEX_TYPES
    return "manifests" in document and "layers" not in document


_INDEX_TYPES = frozenset(
    {
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    }
)


def combined(answers: Sequence[RegistryAnswer]) -> RegistryAnswer:
    """One answer from the answers to each login the kubelet tries, in order: the first the
    registry served the tag to (`Presence.is_served`); else one that could not look (then no
    failure is measured for every login); else missing, then refused to a login the registry
    took (both said of the image by a login that works), before a login refused."""
    for answer in answers:
        if answer.presence.is_served:
            return answer
    unknown = [a for a in answers if not a.presence.is_measurement]
    if unknown:
        return unknown[0]
    order = (Presence.MISSING, Presence.NOT_ALLOWED, Presence.REFUSED, Presence.LOGIN_NEEDED)
    for presence in order:
        for answer in answers:
            if answer.presence is presence:
                return answer
    return RegistryAnswer(Presence.NOT_ASKED)


def plain_size(size: int) -> str:
    """`17.2 GB`, `340 MB`, `12 kB`: decimal units, as registries and `docker pull` show them."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{size} bytes"
