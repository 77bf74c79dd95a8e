"""Image pull: every registry login the environment refers to exists, is one, parses, and covers
the registries of the images that rely on it. Credential values are never looked at here: the
reader has already replaced them (cluster/redact.py)."""

import base64
import binascii
import fnmatch
import json
import re
from collections.abc import Mapping

from msgspec import Struct, field

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Got, Kind
from truegreen.doctor.checks.base import cant_check, finding, ok
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.images import DOCKER_HUB, ImageReferenceError, parse_image, registry_key

CHECK = CheckId.IMAGE_PULL
_LOGIN_TYPES = {
    "kubernetes.io/dockerconfigjson": ".dockerconfigjson",
    "kubernetes.io/dockercfg": ".dockercfg",
}


class _LoginUse(Struct):
    """Who refers to one login, and for which registries."""

    owners: list[str] = field(default_factory=list)
    registries: set[str] = field(default_factory=set)


def registries_with_credentials(secret: Mapping[str, object]) -> frozenset[str] | None:
    """The registry hosts a registry login holds credentials for; None when it does not parse."""
    secret_type = str(secret.get("type", ""))
    key = _LOGIN_TYPES.get(secret_type)
    value = o.mapping(secret.get("data")).get(key) if key else None
    if not value:
        return None
    try:
        parsed = json.loads(base64.b64decode(str(value), validate=True))
    except (binascii.Error, ValueError):
        return None
    auths = (
        parsed.get("auths") if key == ".dockerconfigjson" and isinstance(parsed, dict) else parsed
    )
    if not isinstance(auths, dict):
        return None
    return frozenset(registry_key(host) for host, entry in auths.items() if o.mapping(entry))


def _covers(hosts: frozenset[str], registry: str) -> bool:
    return any(fnmatch.fnmatchcase(registry, pattern) for pattern in hosts)


def _is_public_library(image: str) -> bool:
    """Docker's official images (docker.io/library/…) never need a login."""
    try:
        reference = parse_image(image)
    except ImageReferenceError:
        return True  # an invalid name is the workloads check's finding, not a login problem
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


def check(env: Environment) -> list[Finding]:
    """Findings about the registry logins the environment's images rely on."""
    findings = [cant_check(env, CHECK, kind, read) for kind, read in env.unread_template_sources()]
    uses: dict[str, _LoginUse] = {}
    unresolved: list[tuple[str, str, frozenset[str]]] = []
    for template in env.templates():
        names = o.pull_secret_names(template.spec)
        account = o.service_account_name(template.spec)
        account_read = env.service_accounts.get(account)
        if isinstance(account_read, CantRead) and not account_read.is_measurement:
            findings.append(
                cant_check(env, CHECK, Kind.SERVICE_ACCOUNT, account_read, template.ref)
            )
        elif isinstance(account_read, Got):
            names += o.pull_secret_names(account_read.obj)
        images = [i for i in o.all_images(template.spec) if not _is_public_library(i)]
        registries = {parse_image(i).registry for i in images}
        for name in names:
            use = uses.setdefault(name, _LoginUse())
            use.owners.append(template.ref)
            use.registries |= registries
        if names:
            for image in images:
                unresolved.append((template.ref, parse_image(image).registry, frozenset(names)))
    usable: dict[str, frozenset[str]] = {}
    for name, use in uses.items():
        objects = (f"Secret/{name}", *use.owners)
        read = env.secrets.get(name)
        if read is None:
            continue
        if isinstance(read, CantRead):
            if read.is_measurement:
                findings.append(
                    finding(
                        CHECK,
                        Status.FAIL,
                        Basis.MEASURED,
                        "image-pull.login-missing",
                        details=(f"imagePullSecret {name} not found: {read.reason}",),
                        objects=objects,
                        name=name,
                        registries=", ".join(sorted(use.registries)) or "its registries",
                        command=_create_login(env, name, use.registries),
                    )
                )
            else:
                findings.append(cant_check(env, CHECK, Kind.SECRET, read, *objects))
            continue
        secret_type = str(read.obj.get("type", ""))
        if secret_type not in _LOGIN_TYPES:
            findings.append(
                finding(
                    CHECK,
                    Status.FAIL,
                    Basis.MEASURED,
                    "image-pull.login-wrong-type",
                    details=(f"secret {name} has type {secret_type or 'Opaque'}",),
                    objects=objects,
                    name=name,
                    delete=env.settings.kubectl.here("delete", "secret", name),
                    command=_create_login(env, name, use.registries),
                )
            )
            continue
        hosts = registries_with_credentials(read.obj)
        if hosts is None:
            findings.append(
                finding(
                    CHECK,
                    Status.FAIL,
                    Basis.MEASURED,
                    "image-pull.login-damaged",
                    details=(f"secret {name} ({secret_type}) does not parse as a docker config",),
                    objects=objects,
                    name=name,
                    delete=env.settings.kubectl.here("delete", "secret", name),
                    command=_create_login(env, name, use.registries),
                )
            )
            continue
        usable[name] = hosts
    uncovered: dict[str, tuple[set[str], set[str]]] = {}
    for owner, registry, login_names in unresolved:
        if not all(n in usable for n in login_names):
            continue  # a missing or broken login already has its own finding
        if not any(_covers(usable[n], registry) for n in login_names):
            owners, logins = uncovered.setdefault(registry, (set(), set()))
            owners.add(owner)
            logins |= login_names
    for registry, (owners, logins) in sorted(uncovered.items()):
        findings.append(
            finding(
                CHECK,
                Status.FAIL,
                Basis.MEASURED,
                "image-pull.no-login-for-registry",
                details=(
                    f"no imagePullSecret among {', '.join(sorted(logins))} has credentials "
                    f"for {registry}",
                ),
                objects=(*sorted(f"Secret/{n}" for n in logins), *sorted(owners)),
                registry=registry,
                names=", ".join(f"'{n}'" for n in sorted(logins)),
                command=_create_login(env, _login_name(registry), {registry}),
            )
        )
    if findings:
        return findings
    return [ok(CHECK, objects=sorted(f"Secret/{n}" for n in usable))]
