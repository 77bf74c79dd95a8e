"""What one registry answer about an image means for the image-pull check: a finding's code,
status and basis, or nothing to report."""

from msgspec import Struct

from truegreen.doctor.checks.image_pull.words import (
    IMAGE_MISSING,
    IMAGE_UNCHECKED,
    LOGIN_NEEDED,
    LOGIN_REFUSED,
    NO_BUILD_FOR_PLATFORM,
    REPOSITORY_NOT_ALLOWED,
)
from truegreen.doctor.findings import Basis, Status
from truegreen.doctor.knowledge.image_presence import OwnLogin, Presence, RegistryAnswer


class Outcome(Struct, frozen=True):
    """What one answer means for the image-pull check."""

    code: str
    status: Status
    basis: Basis
    cause: Presence | OwnLogin | None = None
    """For an unknown: why the registry could not say, or why its refusal measures nothing
    (the key of its words)."""


def judge(
    answer: RegistryAnswer, own_login: OwnLogin | None, *, uncovered_reported: bool
) -> Outcome | None:
    """What an answer about an image means, for a pod whose every login doctor saw, on a
    registry whose machines may log in by their own means for `own_login` (None: no sign they
    do). None: nothing to report (present; or refused without a login where
    `uncovered_reported`: the check reports the registry no login of the pod covers on its
    own)."""
    presence = answer.presence
    if presence is Presence.PRESENT:
        return None
    if presence is Presence.MISSING:
        return Outcome(IMAGE_MISSING, Status.FAIL, Basis.MEASURED)
    if presence is Presence.NO_BUILD:
        # Only for a platform doctor is sure of (check.py reads the answer for a guessed one
        # as PRESENT): containerd stops the pull with `no match for platform in manifest`.
        return Outcome(NO_BUILD_FOR_PLATFORM, Status.FAIL, Basis.MEASURED)
    refusals = (Presence.REFUSED, Presence.NOT_ALLOWED, Presence.LOGIN_NEEDED)
    if presence in refusals and own_login is not None:
        # The machine's own login (a credential provider, a node's config.json) may be the one
        # that works: the kubelet joins it to the pod's (secrets.go MakeDockerKeyring).
        return Outcome(IMAGE_UNCHECKED, Status.UNKNOWN, Basis.CANT_CHECK, own_login)
    if presence is Presence.REFUSED:
        return Outcome(LOGIN_REFUSED, Status.FAIL, Basis.MEASURED)
    if presence is Presence.NOT_ALLOWED:
        # The login was taken; the repository was refused to it, or is not there.
        return Outcome(REPOSITORY_NOT_ALLOWED, Status.FAIL, Basis.MEASURED)
    if presence is Presence.LOGIN_NEEDED:
        if uncovered_reported:
            return None
        # Measured: the registry wants a login. Inferred: that the machines hold none of
        # their own (a node's config.json or the runtime's registry settings may).
        return Outcome(LOGIN_NEEDED, Status.FAIL, Basis.INFERRED)
    return Outcome(IMAGE_UNCHECKED, Status.UNKNOWN, Basis.CANT_CHECK, presence)
