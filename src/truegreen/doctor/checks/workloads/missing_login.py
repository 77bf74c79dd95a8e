"""Whose login a pull lacked when containerd asked the registry's token service without one.

containerd asks anonymously only when the pull carries no secret for the registry
(core/remotes/docker/authorizer.go `doBearerAuth`: `to.Secret == ""`, then `failed to fetch
anonymous token: %w`). The kubelet pulls with the pod's logins joined to the machines' own (a
kubelet credential provider: pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring), so a
refused anonymous token says that none of them brought one, not which was missing: at a cloud
registry whose machines log in by their own means (MACHINE_LOGIN_REGISTRIES: ECR, GCR,
Artifact Registry, ACR), their credential provider brought none the registry accepted, and a
pod needs no login there; elsewhere the pod sent no login for the registry.
"""

from enum import StrEnum

from msgspec import Struct

from truegreen.doctor.knowledge.image_presence import machines_log_in
from truegreen.images import ImageReferenceError, parse_image


class LoginLack(StrEnum):
    """Whose login the pull lacked."""

    MACHINES = "machines"
    """The machines' own: the registry is one whose machines log in by their own means."""
    NONE = "none"
    """The pod's: it sent no login for the registry."""


class MissingLogin(Struct, frozen=True):
    """Whose login a pull refused an anonymous token lacked."""

    lack: LoginLack


def missing_login(image: str) -> MissingLogin:
    """Whose login the pull of `image` lacked when the registry refused containerd's
    anonymous token."""
    try:
        ref = parse_image(image)
    except ImageReferenceError:
        return MissingLogin(LoginLack.NONE)  # the kubelet gives such an image no login
    if machines_log_in(ref.registry):
        return MissingLogin(LoginLack.MACHINES)
    return MissingLogin(LoginLack.NONE)
