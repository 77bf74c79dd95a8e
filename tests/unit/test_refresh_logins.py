"""Which registry logins refresh reads for a workload (those its pods send), and how it tries
them.

Through the real LiveCluster over HTTP against the fake API server.
"""

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_apiserver import FakeApiServer
from tests.support.refresh_kit import container, deployment
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.docker_config import login_data
from truegreen.images import parse_image
from truegreen.refresh.registry import (
    DigestLookup,
    LookupFailed,
    LookupFailure,
    RegistryLogin,
    Resolved,
    in_turn,
)
from truegreen.refresh.tick import workload_logins

Obj = dict[str, Any]
LOGIN = "kubernetes.io/dockerconfigjson"
OLD_LOGIN = "kubernetes.io/dockercfg"


def _b64(data: object) -> str:
    return base64.b64encode(json.dumps(data).encode()).decode()


def _secret(name: str, host: str, user: str, secret_type: str = LOGIN) -> Obj:
    """A login for `host` as `kubectl create secret docker-registry` stores it: the
    `.dockerconfigjson` key (the `.dockercfg` key, its entries at the top, for the old type)."""
    entries = {host: {"auth": base64.b64encode(f"{user}:pw".encode()).decode()}}
    data = (
        {".dockercfg": _b64(entries)}
        if secret_type == OLD_LOGIN
        else {".dockerconfigjson": _b64({"auths": entries})}
    )
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": secret_type,
        "metadata": {"name": name, "namespace": "train"},
        "data": data,
    }


def _account(*names: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "runner", "namespace": "train"},
        "imagePullSecrets": [{"name": n} for n in names],
    }


def _workload(pull_secrets: list[Obj] | None) -> Obj:
    workload = deployment("app", container("runner", "a.example.com/team/app:1"), pull_secret=None)
    spec = workload["spec"]["template"]["spec"]
    spec["serviceAccountName"] = "runner"
    if pull_secrets is not None:
        spec["imagePullSecrets"] = pull_secrets
    return workload


def _users(fake_api: FakeApiServer, kubeconfig: Path, workload: Obj) -> dict[str, list[str]]:
    """The user names refresh sends to each registry for the workload, in the order tried."""
    settings = ConnectionSettings(kubeconfig=kubeconfig)
    with LiveCluster.connect(settings) as cluster:
        logins = workload_logins(cluster, workload)
    found: dict[str, list[str]] = {}
    for host in ("a.example.com", "b.example.com"):
        tried = logins.applying_to(parse_image(f"{host}/team/app:1"))
        found[host] = [login.username for login in tried]
    return found


@pytest.mark.parametrize(
    ("pod_names", "users", "account_read"),
    [
        # the pod's own: the account's are never copied in, nor read
        (["pod-login"], {"a.example.com": [], "b.example.com": ["pod"]}, False),
        # none named: the account's, copied in by admission
        ([], {"a.example.com": ["account"], "b.example.com": []}, True),
        (None, {"a.example.com": ["account"], "b.example.com": []}, True),
    ],
)
def test_a_pod_sends_its_own_logins_or_else_its_service_account_s(
    fake_api: FakeApiServer,
    kubeconfig: Path,
    pod_names: list[str] | None,
    users: dict[str, list[str]],
    account_read: bool,
) -> None:
    """kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go Admit copies the
    account's imagePullSecrets into a pod only when `len(pod.Spec.ImagePullSecrets) == 0`."""
    fake_api.add(
        _secret("pod-login", "b.example.com", "pod"),
        _secret("account-login", "a.example.com", "account"),
        _account("account-login"),
    )
    pull_secrets = None if pod_names is None else [{"name": n} for n in pod_names]
    assert _users(fake_api, kubeconfig, _workload(pull_secrets)) == users
    reads = fake_api.requests("GET", r"/serviceaccounts/runner$")
    assert len(reads) == int(account_read)


def test_a_pod_naming_only_an_unnamed_entry_gets_none_of_its_account_s(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """Admit tests the list's length: an entry without a name (which the API server takes, with
    a warning: pkg/api/pod/warnings.go) keeps the account's logins out."""
    fake_api.add(_secret("account-login", "a.example.com", "account"), _account("account-login"))
    found = _users(fake_api, kubeconfig, _workload([{}]))
    assert found == {"a.example.com": [], "b.example.com": []}


def test_only_a_registry_login_s_own_key_is_read(fake_api: FakeApiServer, kubeconfig: Path) -> None:
    """pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring reads `.dockerconfigjson` only
    of a kubernetes.io/dockerconfigjson secret and `.dockercfg` only of a kubernetes.io/dockercfg
    one: an Opaque secret holding a login's key sends nothing."""
    opaque = _secret("notes", "a.example.com", "opaque", "Opaque")
    swapped = _secret("swapped", "a.example.com", "swapped", OLD_LOGIN)
    swapped["data"] = {
        ".dockerconfigjson": _secret("x", "a.example.com", "swapped")["data"][".dockerconfigjson"]
    }
    fake_api.add(
        opaque,
        swapped,
        _secret("old", "a.example.com", "old", OLD_LOGIN),
        _secret("new", "a.example.com", "new"),
    )
    names = [{"name": n} for n in ("notes", "swapped", "old", "new")]
    found = _users(fake_api, kubeconfig, _workload(names))
    assert found == {"a.example.com": ["old", "new"], "b.example.com": []}


@pytest.mark.parametrize(
    ("secret", "found"),
    [
        ({"type": LOGIN, "data": {".dockerconfigjson": "e30="}}, (".dockerconfigjson", "e30=")),
        ({"type": OLD_LOGIN, "data": {".dockercfg": "e30="}}, (".dockercfg", "e30=")),
        ({"type": OLD_LOGIN, "data": {".dockerconfigjson": "e30="}}, None),
        ({"type": "Opaque", "data": {".dockerconfigjson": "e30="}}, None),
        ({"data": {".dockerconfigjson": "e30="}}, None),  # no type: Opaque (defaults.go)
        ({"type": LOGIN, "data": {".dockerconfigjson": ""}}, None),
        ({"type": LOGIN, "data": None}, None),
        ({"type": LOGIN}, None),
    ],
)
def test_the_login_of_a_secret_is_the_key_of_its_type(
    secret: Obj, found: tuple[str, str] | None
) -> None:
    """secrets.go MakeDockerKeyring: the key its type holds, nothing of any other type."""
    assert login_data(secret) == found


_FOUND = Resolved("sha256:" + "a" * 64, "application/vnd.oci.image.index.v1+json")
_GONE = LookupFailed(LookupFailure.NOT_FOUND, "gone")
_REFUSED = LookupFailed(LookupFailure.UNAUTHORIZED, "refused")
_SLOW = LookupFailed(LookupFailure.TIMEOUT, "slow")
_LIMITED = LookupFailed(LookupFailure.RATE_LIMITED, "limited")


@pytest.mark.parametrize(
    ("answers", "asked", "found"),
    [
        # the kubelet's turn: the next login after a refusal; none after the first digest
        ({"u1": _REFUSED, "u2": _FOUND, "u3": _REFUSED}, ["u1", "u2"], _FOUND),
        ({"u1": _GONE, "u2": _FOUND, "u3": _GONE}, ["u1", "u2"], _FOUND),
        # no digest: a failure that measured nothing wins over "not found"
        ({"u1": _GONE, "u2": _SLOW, "u3": _REFUSED}, ["u1", "u2", "u3"], _SLOW),
        ({"u1": _REFUSED, "u2": _GONE, "u3": _GONE}, ["u1", "u2", "u3"], _REFUSED),
        # every login told "not found": measured
        ({"u1": _GONE, "u2": _GONE, "u3": _GONE}, ["u1", "u2", "u3"], _GONE),
        # the registry asked to wait: no other login is tried
        ({"u1": _LIMITED, "u2": _FOUND, "u3": _FOUND}, ["u1"], _LIMITED),
        ({"u1": _GONE, "u2": _LIMITED, "u3": _FOUND}, ["u1", "u2"], _LIMITED),
    ],
)
def test_each_login_is_tried_in_turn_as_the_kubelet_pulls(
    answers: dict[str, DigestLookup], asked: list[str], found: DigestLookup
) -> None:
    """pkg/kubelet/kuberuntime/kuberuntime_image.go PullImage pulls with each login the keyring
    returns (keyring.go Lookup: every match), in order, until one pull succeeds."""
    tried: list[str] = []

    def look_up(login: RegistryLogin | None) -> DigestLookup:
        assert login is not None
        tried.append(login.username)
        return answers[login.username]

    logins = [RegistryLogin("a.example.com", user, "pw") for user in ("u1", "u2", "u3")]
    assert (in_turn(look_up, logins), tried) == (found, asked)


def test_with_no_login_the_look_up_is_anonymous() -> None:
    """PullImage pulls without credentials when Lookup returns none."""
    tried: list[RegistryLogin | None] = []

    def look_up(login: RegistryLogin | None) -> DigestLookup:
        tried.append(login)
        return _GONE

    assert (in_turn(look_up, []), tried) == (_GONE, [None])
