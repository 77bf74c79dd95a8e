"""Image pull: every registry login the environment refers to exists, is one, parses, and covers
the registries of the images that rely on it; and, when the registries were asked, every image
is there for the logins its pods send (doctor/knowledge/image_presence.py). Credential values are
never looked at here: the reader has already replaced them (cluster/redact.py)."""

import re

from msgspec import Struct, field
from msgspec.structs import replace

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, GetRead, Kind
from truegreen.docker_config import LOGIN_KEYS
from truegreen.doctor.checks.image_pull.invalid import invalid_names
from truegreen.doctor.checks.image_pull.presence import Outcome, judge
from truegreen.doctor.checks.image_pull.words import (
    LOGIN_DAMAGED,
    LOGIN_MISSING,
    LOGIN_MISSING_SKIPPED,
    LOGIN_WRONG_TYPE,
    LOGIN_WRONG_TYPE_SKIPPED,
    NO_LOGIN_FOR_REGISTRY,
    NO_LOGIN_NOT_ASKED,
    PULL_SIGNS,
    REGISTRY_REMEDIES,
    REGISTRY_WHY,
    SAY,
)
from truegreen.doctor.environment import Environment, PodTemplate
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.doctor.knowledge.image_presence import (
    MAX_LOOKUPS,
    ImageLookup,
    MachinePull,
    OwnLogin,
    Presence,
    RegistryAnswer,
    applying_logins,
    kubelet_pulled,
    kubelet_skips,
    login_names,
    machine_platform,
    machines_may_log_in,
    offered_words,
    own_login,
    plain_size,
    pod_logins,
    pulled_images,
    read_keys,
    registries_with_credentials,
    spared_pulls,
    template_lookups_of,
    unreadable_entries,
)
from truegreen.doctor.knowledge.pull_verification import MachineCopies
from truegreen.images import (
    DOCKER_HUB,
    ImageReference,
    ImageReferenceError,
    parse_image,
)
from truegreen.kubectl import truegreen_command
from truegreen.redaction.text import redact_shapes

CHECK = CheckId.IMAGE_PULL


class _LoginUse(Struct):
    """Who refers to one login, and for which registries."""

    owners: list[str] = field(default_factory=list)
    registries: set[str] = field(default_factory=set)


def _is_public_library(image: str) -> bool:
    """Docker's official images (docker.io/library/…), which Docker Hub serves to anyone: no
    login of the pods has to cover them. A name that is no official image (`pyhton`) is refused
    to an anonymous look-up as a private repository is, and that answer speaks for it
    (`_presence`)."""
    try:
        reference = parse_image(image)
    except ImageReferenceError:
        return True  # an invalid name is its own finding (invalid.py), not a login problem
    return reference.registry == DOCKER_HUB and reference.repository.startswith("library/")


def _create_login(env: Environment, name: str, registries: set[str]) -> str:
    """The command that creates the registry login `name` for the first of `registries`
    (USER and PASSWORD stand for the real ones)."""
    server = min(registries) if registries else "REGISTRY"
    return env.settings.kubectl.here(
        "create",
        "secret",
        "docker-registry",
        name,
        f"--docker-server={server}",
        "--docker-username=USER",
        "--docker-password=PASSWORD",
    )


def _login_name(registry: str) -> str:
    """A name for a new login to `registry`: `ghcr.io` → `ghcr-io-login`."""
    return re.sub(r"[^a-z0-9]+", "-", registry.lower()).strip("-") + "-login"


def _damage(name: str, secret_type: str, unreadable: list[str]) -> str:
    """Why the kubelet reads none of the login `name`: it does not parse, or one of its
    entries does not (pkg/credentialprovider/config.go: that fails the whole login)."""
    if not unreadable:
        return f"secret {name} ({secret_type}) does not parse as a docker config"
    # A login's key is the secret's own text: a URL in it may carry a user name and password.
    hosts = ", ".join(redact_shapes(host) for host in unreadable)
    return (
        f"secret {name} ({secret_type}): its login for {hosts} does not parse, "
        "so the machines read none of its logins"
    )


class _Unresolved(Struct, frozen=True):
    """An image of a template that names registry logins, and those logins."""

    owner: str
    """`Kind/name` of the template's owner."""
    image: ImageReference
    logins: frozenset[str]


class _Unusable(Struct, frozen=True):
    """A login the kubelet can't use: its finding's code, and why, for the details."""

    code: str
    detail: str
    skipped: bool
    """The kubelet pulls without it (`kubelet_skips`). A damaged login fails every pull of the
    pod instead (pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring returns the
    error)."""


_SKIPPED_CODES = {LOGIN_MISSING: LOGIN_MISSING_SKIPPED, LOGIN_WRONG_TYPE: LOGIN_WRONG_TYPE_SKIPPED}
"""A skipped login's code where no image still to pull needs it."""


def _unusable(name: str, read: GetRead) -> _Unusable | frozenset[str]:
    """Why the kubelet can't use the login `name` as read (missing or a measured read: the
    caller says which reads could not look), else the registry hosts it covers."""
    skipped = kubelet_skips(read)
    if isinstance(read, CantRead):
        detail = f"imagePullSecret {name} not found: {read.reason}"
        return _Unusable(LOGIN_MISSING, detail, skipped)
    secret_type = str(read.obj.get("type", ""))
    if secret_type not in LOGIN_KEYS:
        detail = f"secret {name} has type {secret_type or 'Opaque'}"
        return _Unusable(LOGIN_WRONG_TYPE, detail, skipped)
    hosts = registries_with_credentials(read.obj)
    if hosts is None:
        detail = _damage(name, secret_type, unreadable_entries(read.obj))
        return _Unusable(LOGIN_DAMAGED, detail, skipped)
    return hosts


def _still_to_pull(
    unresolved: list[_Unresolved], usable: dict[str, frozenset[str]], served: set[tuple[str, str]]
) -> list[_Unresolved]:
    """The images that still need pulling and that none of their usable logins covers
    (`served`: those the registry served to an owner's logins all the same)."""
    return [
        entry
        for entry in unresolved
        if (entry.owner, str(entry.image)) not in served
        and not applying_logins(sorted(entry.logins), usable, entry.image.name)
    ]


def _login_finding(
    env: Environment,
    name: str,
    use: _LoginUse,
    unusable: _Unusable,
    waiting: list[_Unresolved],
    presence: "_Presence",
) -> Finding:
    """A login the kubelet can't use: a measured failure where it fails every pull (a damaged
    one), or where the kubelet pulls without it and an image still to pull that no usable login
    covers (`waiting`) is on a registry that, asked, wants a login (`presence.wants_login`).
    Else a warning that names it: the kubelet leaves it out and pulls as for pods that name
    no login (kubelet_pods.go getPullSecretsForPod, kuberuntime_image.go PullImage), so whether
    that works is the registry's to say; not asked, `_uncovered` warns beside it, and asked
    without an answer, the image is unknown."""
    needed = not unusable.skipped or any(
        name in entry.logins and (entry.owner, str(entry.image)) in presence.wants_login
        for entry in waiting
    )
    return SAY.finding(
        Status.FAIL if needed else Status.WARN,
        Basis.MEASURED,
        unusable.code if needed else _SKIPPED_CODES[unusable.code],
        details=(unusable.detail,),
        objects=(f"Secret/{name}", *use.owners),
        name=name,
        registries=", ".join(sorted(use.registries)) or "its registries",
        delete=env.settings.kubectl.here("delete", "secret", name),
        command=_create_login(env, name, use.registries),
    )


def _uncovered(
    env: Environment,
    waiting: list[_Unresolved],
    usable: dict[str, frozenset[str]],
    skipped: set[str],
    presence: "_Presence",
) -> list[Finding]:
    """A finding per registry that images still to pull find no login for, each of their
    logins usable or one the kubelet leaves out (`skipped`; a login that could not be read, or
    a damaged one, is the finding instead). With no login that applies, the kubelet pulls
    anonymously (kuberuntime_image.go PullImage), so no login is a failure (inferred: the
    machines may hold one of their own) only where the registry measurably wants one
    (`presence.wants_login`), and there a skipped login's own
    failure names it; where it was not asked, a warning that says so; where it was asked and
    answered otherwise, its answer's finding speaks (missing, unreachable, or a registry whose
    machines may log in by their own means)."""
    uncovered: dict[tuple[str, bool], tuple[set[str], set[str]]] = {}
    for entry in waiting:
        pair = (entry.owner, str(entry.image))
        left_out = entry.logins & skipped
        if (
            not all(n in usable or n in left_out for n in entry.logins)
            or (pair in presence.answered and pair not in presence.wants_login)
            or (left_out and pair in presence.wants_login)
        ):
            continue
        key = (entry.image.registry, pair in presence.wants_login)
        owners, logins = uncovered.setdefault(key, (set(), set()))
        owners.add(entry.owner)
        logins |= entry.logins
    # Inferred either way, as for pods that name no login (presence.judge): the kubelet joins
    # the pod's logins to the machine's own keyring (secrets.go MakeDockerKeyring,
    # UnionDockerKeyring), which a node's config.json or a credential provider may fill.
    return [
        SAY.finding(
            Status.FAIL if measured else Status.WARN,
            Basis.INFERRED,
            NO_LOGIN_FOR_REGISTRY if measured else NO_LOGIN_NOT_ASKED,
            details=(
                f"no imagePullSecret among {', '.join(sorted(logins))} has credentials "
                f"for {registry}",
                *(() if measured else ("the registry was not asked whether it needs one",)),
            ),
            objects=(*sorted(f"Secret/{n}" for n in logins), *sorted(owners)),
            registry=registry,
            names=", ".join(f"'{n}'" for n in sorted(logins)),
            command=_create_login(env, _login_name(registry), {registry}),
        )
        for (registry, measured), (owners, logins) in sorted(uncovered.items())
    ]


def check(env: Environment) -> list[Finding]:
    """Findings about the registry logins the environment's images rely on."""
    findings = [SAY.cant_check(env, kind, read) for kind, read in env.unread_template_sources()]
    findings += invalid_names(env)
    uses: dict[str, _LoginUse] = {}
    unresolved: list[_Unresolved] = []
    pulled = kubelet_pulled(env.pods, env.pulled_events, env.nodes)
    keys = read_keys(env.secrets)
    for template in env.templates():
        account_read = env.service_accounts.get(o.service_account_name(template.spec))
        names = login_names(template.spec, account_read)
        # The account's logins reach only a pod that names none of its own (login_names).
        if (
            o.gets_account_pull_secrets(template.spec)
            and isinstance(account_read, CantRead)
            and not account_read.is_measurement
        ):
            findings.append(SAY.cant_check(env, Kind.SERVICE_ACCOUNT, account_read, template.ref))
        # Only the images the kubelet pulls need a login (image_manager.go shouldPullImage).
        images = [parse_image(i) for i in pulled_images(template.spec) if not _is_public_library(i)]
        for name in names:
            use = uses.setdefault(name, _LoginUse())
            use.owners.append(template.ref)
            use.registries |= {i.registry for i in images}
        # An image a machine holds needs no login, unless the pods pull it on every start, or
        # the kubelet checks their logins against the one that put it there.
        logins = pod_logins(template.spec, account_read, env.secrets)
        spared = spared_pulls(template.spec, pulled, logins, keys)
        if names:
            unresolved += [
                _Unresolved(template.ref, i, frozenset(names))
                for i in images
                if str(i) not in spared
            ]
    usable: dict[str, frozenset[str]] = {}
    unusable: dict[str, _Unusable] = {}
    for name, use in uses.items():
        read = env.secrets.get(name)
        if read is None:
            continue
        if isinstance(read, CantRead) and not read.is_measurement:
            findings.append(SAY.cant_check(env, Kind.SECRET, read, f"Secret/{name}", *use.owners))
            continue
        judged = _unusable(name, read)
        if isinstance(judged, _Unusable):
            unusable[name] = judged
        else:
            usable[name] = judged
    presence = _presence(env, pulled)
    waiting = _still_to_pull(unresolved, usable, presence.served)
    findings += [_login_finding(env, n, uses[n], u, waiting, presence) for n, u in unusable.items()]
    skipped = {n for n, u in unusable.items() if u.skipped}
    findings += _uncovered(env, waiting, usable, skipped, presence)
    findings += presence.findings
    if findings:
        return findings
    return [SAY.ok(details=presence.present, objects=sorted(f"Secret/{n}" for n in usable))]


class _Presence(Struct):
    """What the registries' answers add to the check."""

    findings: list[Finding] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    """A line per image found: in its registry, and its download size where it was read."""
    served: set[tuple[str, str]] = field(default_factory=set)
    """(owner `Kind/name`, image) pairs the registry served to the logins the pods send
    (without one, when none applies)."""
    answered: set[tuple[str, str]] = field(default_factory=set)
    """The (owner, image) pairs a registry answer (or a snapshot's lack of one) speaks for."""
    wants_login: set[tuple[str, str]] = field(default_factory=set)
    """The pairs whose registry wanted a login the pods do not send, and whose machines show
    no sign of one of their own (`own_login`)."""


class _Statement(Struct):
    """One finding about one image, gathered over the templates that use it."""

    outcome: Outcome
    image: str
    registry: str
    answer: RegistryAnswer
    platform: str | None
    """The machines' `os/arch` the image was asked for (the judged job's), else None."""
    owners: list[PodTemplate] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    pulled: MachinePull | None = None
    """OwnLogin.PULLED: the image the kubelet downloaded from the registry for a pod naming no
    login."""


_NOT_CAPTURED = RegistryAnswer(Presence.NOT_CAPTURED, "the snapshot holds no answer for it")


def _presence(env: Environment, pulled: MachineCopies) -> _Presence:
    """Findings from the registries' answers, for every image of every template whose pods'
    logins doctor saw (a login it could not read, or a damaged one, has its own finding);
    `pulled`: the images a machine has pulled for the namespace (`kubelet_pulled`), of which
    a template's pods start without pulling those `spared_pulls` names."""
    answers = env.registry
    found = _Presence()
    if answers is None:
        return found
    keys = read_keys(env.secrets)
    judged = env.judged_job()
    statements: dict[tuple[str, str, Presence | OwnLogin | None], _Statement] = {}
    pulled_here = machines_may_log_in(env.pods, env.pulled_events, answers)
    for template in env.templates():
        logins, lookups = template_lookups_of(
            template, env.service_accounts, env.secrets, judged.ref if judged else None, env.nodes
        )
        spared = spared_pulls(template.spec, pulled, logins, keys)
        for lookup in lookups:
            if lookup.image in spared:  # the kubelet's measurement: no registry was asked
                line = f"{lookup.image} ({template.owner}): pulled by a machine for a program here"
                if line not in found.present:
                    found.present.append(line)
                continue
            answer = answers.get(lookup, _NOT_CAPTURED)
            if (
                answer.presence is Presence.NO_BUILD
                and not machine_platform(template.spec, env.nodes).sure
            ):
                # The platform was doctor's guess (linux/amd64 for machines of several, or for
                # machines it could not read): the pods may land where the index has an image.
                # Said in the details, never a failure.
                answer = replace(answer, presence=Presence.PRESENT)
            registry = parse_image(lookup.image).registry
            own = own_login(registry, pulled_here)
            pair = (template.ref, lookup.image)
            found.answered.add(pair)
            if answer.presence is Presence.LOGIN_NEEDED and own is None:
                found.wants_login.add(pair)
            if answer.presence.is_served:
                found.served.add(pair)
            if answer.presence is Presence.PRESENT:
                line = _present_line(lookup, answer, template.owner)
                if line not in found.present:
                    found.present.append(line)
                continue
            # A registry no login of the pods covers is the check's own finding (`_uncovered`),
            # but never an official image's: there the registry's answer is the finding.
            reported = bool(logins.names) and not _is_public_library(lookup.image)
            outcome = judge(answer, own, uncovered_reported=reported)
            if outcome is None or not logins.complete:
                continue
            key = (outcome.code, lookup.image, outcome.cause)
            # Said only where it is the reason: the details name the image the kubelet downloaded.
            shown = pulled_here.get(registry) if outcome.cause is OwnLogin.PULLED else None
            statement = statements.setdefault(
                key,
                _Statement(outcome, lookup.image, registry, answer, lookup.platform, pulled=shown),
            )
            statement.owners.append(template)
            statement.logins += [n for n in lookup.logins if n not in statement.logins]
    found.findings = [_finding(env, s) for s in statements.values()]
    return found


def _present_line(lookup: ImageLookup, answer: RegistryAnswer, owner: str) -> str:
    """`registry.example.com/trainer:2.1 (the training job 'run-7'): in its registry, 17.2 GB
    to download for linux/amd64 (41 layers)`."""
    line = f"{lookup.image} ({owner}): in its registry"
    if answer.size is not None:
        line += f", {plain_size(answer.size)} to download for {lookup.platform}"
        line += f" ({answer.layers} layer{'s' if answer.layers != 1 else ''})"
    if answer.note:
        line += f"; {answer.note}"
    return line


def _pulled_details(registry: str, pulled: MachinePull) -> list[str]:
    """What says the machines may log in to `registry` on their own: the image the kubelet
    downloaded from it for a pod that names no login, what says it downloaded it, and the
    registry's answer for that image without one (a refusal: the download needed a login the
    pods do not send)."""
    asked = pulled.asked
    if asked is None:
        answer = f"{registry} was not asked for it without a login"
    elif asked.presence.is_measurement:
        answer = f"asked without a login, {registry} does not hand it out: "
        answer += asked.reason or asked.presence
    else:
        answer = f"whether {registry} hands it out without a login is not known: "
        answer += asked.reason or asked.presence
    return [
        f"{pulled.image} was pulled by a machine for the pod {pulled.pod}, which names no "
        f"imagePullSecrets: {PULL_SIGNS[pulled.sign]}",
        f"{pulled.image}: {answer}",
    ]


def _owners(templates: list[PodTemplate]) -> str:
    """`the training job 'a'`, `the workload 'b' and the training job 'a'`."""
    words = list(dict.fromkeys(t.owner for t in templates))
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _finding(env: Environment, statement: _Statement) -> Finding:
    outcome = statement.outcome
    registry, image = statement.registry, statement.image
    names = ", ".join(f"'{n}'" for n in statement.logins)
    details = [statement.answer.reason] if statement.answer.reason else []
    if statement.logins:
        details.append(f"asked with the imagePullSecrets {', '.join(statement.logins)}")
    if statement.pulled is not None:
        details += _pulled_details(registry, statement.pulled)
    objects = [
        *(f"Secret/{n}" for n in statement.logins),
        *dict.fromkeys(t.ref for t in statement.owners),
    ]
    owners = _owners(statement.owners)
    if outcome.cause is not None:
        values = {
            "registry": registry,
            "image": image,
            "names": names,
            "limit": MAX_LOOKUPS,
            "pulled": statement.pulled.image if statement.pulled else "",
            "snapshot": truegreen_command("snapshot", *env.settings.kubectl.flags()),
        }
        why = REGISTRY_WHY[outcome.cause].format(**values)
        unknown = SAY.finding(
            outcome.status,
            outcome.basis,
            outcome.code,
            details=details,
            objects=objects,
            image=image,
            why=why,
            remedy=REGISTRY_REMEDIES[outcome.cause].format(**values),
        )
        return replace(unknown, why=why)
    first = statement.logins[0] if statement.logins else _login_name(registry)
    return SAY.finding(
        outcome.status,
        outcome.basis,
        outcome.code,
        details=details,
        objects=objects,
        image=image,
        registry=registry,
        owners=owners,
        names=names,
        command=_create_login(env, first, {registry}),
        platform=statement.platform or "",
        offered=offered_words(statement.answer.offered),
    )
