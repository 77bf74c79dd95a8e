"""Acting as another identity: the kubeconfig user's `as`, `as-uid`, `as-groups` and
`as-user-extra`, and kubectl's `--as`, `--as-uid`, `--as-group` over them.

The API server authenticates the request's own credential, checks that it may impersonate,
and then authorizes (and audits) the request as the identity these headers name. They are
written as client-go's `transport.NewImpersonatingRoundTripper` writes them
(transport/round_trippers.go), on every request to the API server and never anywhere else.
"""

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from truegreen.cluster.settings import ActAs
from truegreen.errors import ConnectionSetupError, UsageError

_TOKEN_BYTES = frozenset(
    b"!#$&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)
"""Bytes a header name may hold as they are (round_trippers.go legalHeaderKeyBytes, less the
`%` that shouldEscape escapes so that the server's unescaping never fails)."""


class Impersonation(Struct, frozen=True):
    """The identity every request to the API server acts as (names, not secrets)."""

    user: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """`as-user-extra`: each key with its values, in the file's order."""

    def headers(self) -> tuple[tuple[str, str], ...]:
        """`Impersonate-User`, `-Uid`, one `-Group` per group, one `Impersonate-Extra-KEY` per
        value (KEY percent-encoded where it holds a byte a header name may not)."""
        headers = [("Impersonate-User", self.user)]
        if self.uid:
            headers.append(("Impersonate-Uid", self.uid))
        headers += [("Impersonate-Group", group) for group in self.groups]
        headers += [
            (f"Impersonate-Extra-{escaped_key(key)}", value)
            for key, values in self.extra
            for value in values
        ]
        return tuple(headers)


def escaped_key(key: str) -> str:
    """An extra's key as a header name carries it: each byte that is no token character, and
    `%`, as `%XX` (round_trippers.go headerKeyEscape)."""
    return "".join(
        chr(byte) if byte in _TOKEN_BYTES else f"%{byte:02X}" for byte in key.encode("utf-8")
    )


def impersonation(user_name: str, user: Mapping[str, Any], act_as: ActAs) -> Impersonation | None:
    """Whom the requests of kubeconfig user `user_name` act as, the flags over its own fields
    (client_config.go getAuthInfo merges the flags over the file's user, a flag replacing a
    field it sets); None when nobody is impersonated.

    As client-go's validateAuthInfo (validation.go), a uid, groups or extras without a user
    are refused: as bad usage when the flags ask for them, else as an unusable kubeconfig.
    """
    name = act_as.user or user.get("as") or ""
    uid = act_as.uid or user.get("as-uid") or ""
    groups = act_as.groups or tuple(group or "" for group in user.get("as-groups") or ())
    extra = tuple(
        (str(key), tuple(value or "" for value in values or ()))
        for key, values in (user.get("as-user-extra") or {}).items()
    )
    if name:
        return Impersonation(name, uid, groups, extra)
    if not (uid or groups or extra):
        return None
    asked = [
        flag for flag, given in (("--as-uid", act_as.uid), ("--as-group", act_as.groups)) if given
    ]
    if asked:
        raise UsageError(
            f"{' and '.join(asked)} without --as",
            "kubectl acts as a uid or groups only together with a user",
            "add --as USER",
        )
    raise ConnectionSetupError(
        f"the kubeconfig user {user_name!r} names a uid, groups or extras to act as, but no user",
        "kubectl refuses that too",
        "add `as:` to the user in the kubeconfig, or pass --as",
    )
