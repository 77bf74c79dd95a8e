"""Backend credentials: the stored login exists and holds every required key, non-empty."""

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, Final

from truegreen import kubeobjects as o
from truegreen.cluster import CantRead, Kind
from truegreen.doctor.checks.base import Words
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Basis, CheckId, Finding, Status
from truegreen.plain_words import Wording

CHECK = CheckId.CREDENTIALS

OK: Final = "credentials.ok"
MISSING: Final = "credentials.missing"
KEYS_MISSING: Final = "credentials.keys-missing"
KEYS_EMPTY: Final = "credentials.keys-empty"
IMMUTABLE: Final = "credentials.immutable"
CANT_READ: Final = "credentials.cant-read"

WORDS: Final[dict[str, Wording]] = {
    OK: Wording("The backend login details are in place.", ""),
    MISSING: Wording(
        "Training can't reach its backend: the stored login '{name}' doesn't exist.",
        "Create it with {command}, then restart the environment's workloads.",
    ),
    KEYS_MISSING: Wording(
        "Training can't reach its backend: the stored login '{name}' lacks {keys}.",
        "Add {keys} with {command}, then restart the environment's workloads.",
    ),
    KEYS_EMPTY: Wording(
        "Training can't reach its backend: the stored login '{name}' has empty {keys}.",
        "Fill in {keys} with {command}, then restart the environment's workloads.",
    ),
    IMMUTABLE: Wording(
        "Training can't reach its backend: the stored login '{name}' {lacks}, and it can't be "
        "changed (it is immutable).",
        "Delete it with {delete} and create it again with every key: {command}; then restart "
        "the environment's workloads.",
    ),
    CANT_READ: Wording(
        "Couldn't check the backend login details: {why}.",
        "{remedy}",
    ),
}
"""Every headline and remedy of the check, by code."""

SAY: Final = Words(CHECK, WORDS)


def _is_empty(value: object) -> bool:
    try:
        return not value or not base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        return False  # undecodable is damaged, not empty; the backend will say so


def _fill_in(env: Environment, name: str, keys: list[str]) -> str:
    """The command that sets `keys` of the stored login `name` (VALUE stands for each value)."""
    values = json.dumps({"stringData": dict.fromkeys(keys, "VALUE")})
    return env.settings.kubectl.here("patch", "secret", name, "--type", "merge", "-p", values)


def _create(env: Environment, name: str, keys: list[str]) -> str:
    """The command that creates the stored login `name` with `keys` (VALUE for each)."""
    return env.settings.kubectl.here(
        "create", "secret", "generic", name, *(f"--from-literal={key}=VALUE" for key in keys)
    )


def _immutable(
    env: Environment, ref: str, data: Mapping[str, Any], missing: list[str], empty: list[str]
) -> Finding:
    """A login of `immutable: true` that lacks keys or has empty ones: the API server refuses
    any change to its data (pkg/apis/core/validation ValidateSecretUpdate), so it is deleted
    and created again with every key, those it has and those it lacks."""
    name = ref.removeprefix("Secret/")
    lacks = " and ".join(
        words
        for words in (
            f"lacks {', '.join(missing)}" if missing else "",
            f"has empty {', '.join(empty)}" if empty else "",
        )
        if words
    )
    required = env.settings.credentials
    keys = list(dict.fromkeys([*(required.keys if required else ()), *data]))
    return SAY.finding(
        Status.FAIL,
        Basis.MEASURED,
        IMMUTABLE,
        details=(f"secret {name} is immutable and has keys: {', '.join(sorted(data)) or 'none'}",),
        objects=(ref,),
        name=name,
        lacks=lacks,
        delete=env.settings.kubectl.here("delete", "secret", name),
        command=_create(env, name, keys),
    )


def check(env: Environment) -> list[Finding]:
    """Findings about the backend credentials named with --credentials-secret."""
    required = env.settings.credentials
    if required is None or env.credentials is None:
        return []
    ref = f"Secret/{required.name}"
    keys_text = ", ".join(required.keys)
    read = env.credentials
    if isinstance(read, CantRead):
        if read.is_measurement:
            return [
                SAY.finding(
                    Status.FAIL,
                    Basis.MEASURED,
                    MISSING,
                    details=(read.reason,),
                    objects=(ref,),
                    name=required.name,
                    keys=keys_text,
                    command=_create(env, required.name, list(required.keys)),
                )
            ]
        return [SAY.cant_check(env, Kind.SECRET, read, ref)]
    data = o.mapping(read.obj.get("data"))
    missing = [k for k in required.keys if k not in data]
    empty = [k for k in required.keys if k in data and _is_empty(data[k])]
    if read.obj.get("immutable") is True and (missing or empty):
        return [_immutable(env, ref, data, missing, empty)]
    findings = []
    if missing:
        findings.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                KEYS_MISSING,
                details=(f"secret {required.name} has keys: {', '.join(sorted(data)) or 'none'}",),
                objects=(ref,),
                name=required.name,
                keys=", ".join(missing),
                command=_fill_in(env, required.name, missing),
            )
        )
    if empty:
        findings.append(
            SAY.finding(
                Status.FAIL,
                Basis.MEASURED,
                KEYS_EMPTY,
                details=(f"empty keys in secret {required.name}: {', '.join(empty)}",),
                objects=(ref,),
                name=required.name,
                keys=", ".join(empty),
                command=_fill_in(env, required.name, empty),
            )
        )
    return findings or [SAY.ok(objects=(ref,))]
