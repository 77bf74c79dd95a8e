"""Whose login a pull lacked when containerd asked the registry's token service without one.

containerd asks anonymously only when the pull carries no secret for the registry
(core/remotes/docker/authorizer.go `doBearerAuth`: `to.Secret == ""`, then `failed to fetch
anonymous token: %w`). The kubelet pulls with the pod's logins joined to the machines' own (a
kubelet credential provider: pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring), each
login's user name and password alone (keyring.go Add), so a refused anonymous token says that
none of them brought one, not which was missing:
- at a cloud registry whose machines log in by their own means (MACHINE_LOGIN_REGISTRIES: ECR,
  GCR, Artifact Registry, ACR), their credential provider brought none the registry accepted,
  and a pod needs no login there;
- where the logins the pod names hold an entry for the registry and none of those entries
  holds a password (`{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}`: a Docker Desktop
  config.json whose password the computer's credential store keeps), the kubelet sends the
  empty entry (kuberuntime_image.go PullImage) and containerd's `ParseAuth`
  (internal/cri/server/images/image_pull.go) finds no secret in it;
- otherwise the pod sent no login for the registry.
"""

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.cluster import GetRead, Got
from truegreen.doctor.knowledge.image_presence import (
    PodLogins,
    applying_logins,
    machines_log_in,
    pod_logins,
    registries_with_credentials,
)
from truegreen.images import ImageReference, ImageReferenceError, parse_image


class LoginLack(StrEnum):
    """Whose login the pull lacked."""

    MACHINES = "machines"
    """The machines' own: the registry is one whose machines log in by their own means."""
    EMPTY = "empty"
    """The pod's: the logins it names for the registry hold no password."""
    NONE = "none"
    """The pod's: it sent no login for the registry."""


class LoginReads(Struct, frozen=True):
    """doctor's reads of the logins a pod may name: its account and the Secrets, by name."""

    accounts: Mapping[str, GetRead]
    secrets: Mapping[str, GetRead]


class MissingLogin(Struct, frozen=True):
    """Whose login a pull refused an anonymous token lacked."""

    lack: LoginLack
    names: tuple[str, ...] = ()
    """EMPTY: the logins the pod names for the registry, none of which holds a password."""


def missing_login(image: str, spec: Mapping[str, Any], reads: LoginReads) -> MissingLogin:
    """Whose login the pull of `image` by a pod of `spec` lacked when the registry refused
    containerd's anonymous token."""
    found = _logins_for(image, spec, reads)
    if found is None:
        return MissingLogin(LoginLack.NONE)  # the kubelet gives such an image no login
    ref, logins = found
    if machines_log_in(ref.registry):
        return MissingLogin(LoginLack.MACHINES)
    named = logins.applying_to(ref.name)
    with_password = {
        name: keys
        for name in named
        if isinstance(read := reads.secrets.get(name), Got)
        and (keys := registries_with_credentials(read.obj)) is not None
    }
    # A login with a password for the registry would have been sent, and containerd would not
    # have asked anonymously: the login changed since, and what the pull lacked is not known.
    if named and not applying_logins(named, with_password, ref.name):
        return MissingLogin(LoginLack.EMPTY, named)
    return MissingLogin(LoginLack.NONE)


def machines_refused(image: str, spec: Mapping[str, Any], reads: LoginReads) -> bool:
    """Whether the login a registry refused (`failed to fetch oauth token: … 401/403`) was the
    machines' own: `image`'s registry is one whose machines log in by their own means, and the
    logins a pod of `spec` names, all read, hold none for it, so the kubelet sent the
    credential provider's alone (keyring.go Lookup over the pod's logins joined to the
    provider's)."""
    found = _logins_for(image, spec, reads)
    if found is None or not machines_log_in(found[0].registry):
        return False
    ref, logins = found
    # A login doctor could not read may be the one sent: then whose was refused is not known.
    return logins.complete and not logins.applying_to(ref.name)


def _logins_for(
    image: str, spec: Mapping[str, Any], reads: LoginReads
) -> tuple[ImageReference, PodLogins] | None:
    """`image` parsed as the kubelet parses it, and the logins a pod of `spec` names as doctor
    read them; None for an image that is no reference."""
    try:
        ref = parse_image(image)
    except ImageReferenceError:
        return None
    account = reads.accounts.get(o.service_account_name(spec))
    return ref, pod_logins(spec, account, reads.secrets)
