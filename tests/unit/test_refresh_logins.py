"""Which registry logins refresh reads for a workload: those its pods send.

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
