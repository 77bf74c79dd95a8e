"""doctor's settings from flags and an optional YAML file (`--config`); flags win."""

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from msgspec import Struct

from truegreen.apinames import DNS_SUBDOMAIN, PREFIX_LIMIT
from truegreen.container_resources import parse_requests_flag
from truegreen.doctor.environment import CredentialsRequirement, DoctorSettings
from truegreen.errors import UsageError
from truegreen.patterns import LazyPattern
from truegreen.quantity import QuantityError
from truegreen.yamlwords import plain

_KEYS = {
    "namespace",
    "context",
    "kubeconfig",
    "job_requests",
    "credentials_secret",
    "pending_grace_seconds",
    "admission_dry_run",
    "no_registry",
    "trial",
}


MAX_PENDING_GRACE_SECONDS: Final = 30 * 24 * 3600
"""A month: longer is no grace period but a typo (`.inf`, `1e400`), and would overflow a
deadline."""


class DoctorConfig(Struct, frozen=True):
    """Everything `--config` may hold, all optional."""

    namespace: str | None = None
    context: str | None = None
    kubeconfig: Path | None = None
    job_requests: str | None = None
    credentials_secret: str | None = None
    pending_grace_seconds: float | None = None
    admission_dry_run: bool = False
    no_registry: bool = False
    """Do not ask the registries whether the images are there (`--no-registry`)."""
    trial: bool = False
    """Start the training job's own pods for a few seconds (`--trial`)."""


def load_config(path: Path | None) -> DoctorConfig:
    """Read a doctor config file; UsageError naming the file and the problem."""
    if path is None:
        return DoctorConfig()
    from truegreen.yamlsafe import Refusal, load_single  # most runs name no config file

    document = load_single(path)
    if isinstance(document, Refusal):
        if document.problem.is_read:
            raise UsageError(f"cannot read config {path}", document.detail)
        where = f" at line {document.line}" if document.line is not None else ""
        raise UsageError(f"config {path} is not valid YAML{where}", plain(document.detail))
    loaded = document.data
    if loaded is None:
        return DoctorConfig()
    if not isinstance(loaded, Mapping):
        raise UsageError(f"config {path} is not a mapping of settings")
    values = _as_settings(path, loaded)
    if isinstance(values.get("job_requests"), Mapping):
        values["job_requests"] = ",".join(f"{k}={v}" for k, v in values["job_requests"].items())
    secret = values.get("credentials_secret")
    if isinstance(secret, Mapping):
        values["credentials_secret"] = _secret_text(path, secret)
    grace = values.get("pending_grace_seconds")
    if grace is not None and (
        not isinstance(grace, int | float)
        or isinstance(grace, bool)
        or not 0 <= grace <= MAX_PENDING_GRACE_SECONDS  # `not`: NaN is in no range
    ):
        raise UsageError(
            f"config {path}: pending_grace_seconds must be a number of seconds from 0 to "
            f"{MAX_PENDING_GRACE_SECONDS}"
        )
    for flag in ("admission_dry_run", "no_registry", "trial"):
        if not isinstance(values.get(flag, False), bool):
            raise UsageError(f"config {path}: {flag} must be true or false")
    for key in ("namespace", "context", "job_requests", "credentials_secret"):
        if values.get(key) is not None and not isinstance(values[key], str):
            raise UsageError(f"config {path}: {key} must be text")
    if values.get("credentials_secret") is not None:
        parse_credentials(values["credentials_secret"], f"config {path}: credentials_secret")
    if values.get("kubeconfig") is not None:
        values["kubeconfig"] = Path(str(values["kubeconfig"])).expanduser()
    return DoctorConfig(**values)


def _secret_text(path: Path, secret: Mapping[Any, Any]) -> str:
    """The mapping form `{name: NAME, keys: [KEY, …]}` as the flag writes it (`NAME:KEY,…`);
    `keys` may also be written as the flag writes them (`username,password`). Anything else
    is refused: a key name is never made of the letters of another value."""
    name, keys = secret.get("name"), secret.get("keys")
    if not isinstance(name, str) or not name:
        raise UsageError(f"config {path}: credentials_secret's name must be text")
    if isinstance(keys, str) and keys:
        return f"{name}:{keys}"
    if not keys or not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise UsageError(
            f"config {path}: credentials_secret's keys must be a list of key names "
            "([username, password]) or text (username,password), at least one"
        )
    return f"{name}:{','.join(keys)}"


def _as_settings(path: Path, loaded: Mapping[Any, Any]) -> dict[str, Any]:
    """The file's settings by their Python names. Each key may be spelled as its flag is
    (`job-requests`) or with underscores (`job_requests`), but only once."""
    values: dict[str, Any] = {}
    for key, value in loaded.items():
        name = str(key).replace("-", "_")
        if name in values:
            raise UsageError(f"config {path} sets {name.replace('_', '-')} twice")
        values[name] = value
    unknown = sorted(str(k) for k in loaded if str(k).replace("-", "_") not in _KEYS)
    if unknown:
        raise UsageError(
            f"config {path} has unknown settings: {', '.join(unknown)}",
            todo=f"known settings are {', '.join(sorted(k.replace('_', '-') for k in _KEYS))}",
        )
    return values


_SECRET_KEY = LazyPattern(r"[-._a-zA-Z0-9]+")
"""A Secret's key (apimachinery util/validation IsConfigMapKey: configMapKeyFmt)."""
_EXAMPLE = "for example --credentials-secret backend-login:username,password"


def _secret_name_problem(name: str) -> str | None:
    """Why no Secret can be named `name`: its name is a DNS subdomain of at most 253
    characters (pkg/apis/core/validation ValidateSecretName -> IsDNS1123Subdomain)."""
    if len(name) <= PREFIX_LIMIT and DNS_SUBDOMAIN.fullmatch(name):
        return None
    where = " (its namespace comes from -n)" if "/" in name else ""
    return (
        f"{name!r} can't be a Secret's name: a name is lowercase letters, digits, '-' and '.', "
        f"at most 253 characters{where}"
    )


def _secret_key_problem(key: str) -> str | None:
    """Why no Secret can hold the key `key` (IsConfigMapKey: at most 253 characters of
    [-._a-zA-Z0-9], not '.', and not '..' or anything after it)."""
    if (
        len(key) <= PREFIX_LIMIT
        and _SECRET_KEY.fullmatch(key)
        and key != "."
        and not key.startswith("..")
    ):
        return None
    return (
        f"{key!r} can't be a key of a Secret: a key is letters, digits, '-', '_' and '.', at "
        "most 253 characters, and doesn't start with '..'"
    )


def parse_credentials(text: str, source: str = "--credentials-secret") -> CredentialsRequirement:
    """`NAME:KEY1,KEY2` as a requirement; UsageError when malformed, or naming a Secret or a
    key no Secret can have (the API server would refuse to create it: nothing to measure).
    `source` names where the text came from."""
    name, sep, keys = text.partition(":")
    key_list = tuple(dict.fromkeys(k.strip() for k in keys.split(",") if k.strip()))
    if not name.strip() or not sep or not key_list:
        raise UsageError(f"{source} {text!r} is not NAME:KEY1,KEY2", todo=_EXAMPLE)
    problems = [_secret_name_problem(name.strip()), *map(_secret_key_problem, key_list)]
    problem = next((p for p in problems if p is not None), None)
    if problem is not None:
        raise UsageError(source, problem, todo=_EXAMPLE)
    return CredentialsRequirement(name.strip(), key_list)


def doctor_settings(
    config: DoctorConfig,
    job_requests: str | None,
    credentials_secret: str | None,
    admission_dry_run: bool = False,
) -> DoctorSettings:
    """The settings for one run: flags first, then the config file."""
    requests_text = job_requests if job_requests is not None else config.job_requests
    try:
        requests = parse_requests_flag(requests_text) if requests_text is not None else None
    except QuantityError as error:
        raise UsageError("--job-requests is not valid", str(error)) from None
    secret_text = (
        credentials_secret if credentials_secret is not None else config.credentials_secret
    )
    grace = config.pending_grace_seconds
    return DoctorSettings(
        job_requests=requests,
        credentials=parse_credentials(secret_text) if secret_text is not None else None,
        pending_grace=timedelta(seconds=grace) if grace is not None else timedelta(minutes=5),
        admission_dry_run=admission_dry_run or config.admission_dry_run,
    )
