"""kubectl is the oracle for kubeconfig handling: the same kubeconfig, handed to the real
kubectl and to truegreen against the fake API server over TLS, connects for both or for neither.

Certificates are made in the test with openssl (`tests/support/hostile.py`).
"""

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import hostile
from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy

pytestmark = pytest.mark.kubectl

KUBECTL = shutil.which("kubectl")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pki")
    authority = hostile.make_authority(folder, "ca")
    other = hostile.make_authority(folder, "other-ca")
    named = hostile.issue(folder, authority, "named", "DNS:api.internal")
    return {"ca": authority[0], "other": other[0], "cert": named.cert, "key": named.key}


@pytest.fixture
def api(pki: dict[str, Path]) -> Iterator[FakeApiServer]:
    """The fake over TLS with a certificate valid only for the name `api.internal`."""
    server = FakeApiServer().start(tls=(pki["cert"], pki["key"]))
    server.add(*healthy(datetime.now(UTC)))
    yield server
    server.stop()


def _config(
    cluster: dict[str, Any], *, users: bool = True, clusters: bool = True
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}] if clusters else [],
        "users": [{"name": "u", "user": {"token": "t0ken"}}] if users else [],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "train"}}],
        "current-context": "x",
    }


def _in_second_file(tmp_path: Path, pki: dict[str, Path], url: str) -> str:
    """The cluster, with a RELATIVE certificate-authority, defined in the second of two files."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    shutil.copy(pki["ca"], second / "ca.crt")
    (first / "config").write_text(yaml.safe_dump(_config({}, clusters=False)))
    cluster = {"server": url, "certificate-authority": "ca.crt", "tls-server-name": "api.internal"}
    (second / "config").write_text(yaml.safe_dump(_config(cluster, users=False)))
    return f"{first / 'config'}{os.pathsep}{second / 'config'}"


Case = Callable[[Path, dict[str, Path], str], str]


def _one_file(cluster: Callable[[dict[str, Path], str], dict[str, Any]]) -> Case:
    def write(tmp_path: Path, pki: dict[str, Path], url: str) -> str:
        path = tmp_path / "config"
        path.write_text(yaml.safe_dump(_config(cluster(pki, url))))
        return str(path)

    return write


CASES: dict[str, tuple[Case, bool]] = {
    "relative CA in the second KUBECONFIG file, tls-server-name": (_in_second_file, True),
    "tls-server-name names the certificate's name": (
        _one_file(
            lambda pki, url: {
                "server": url,
                "certificate-authority": str(pki["ca"]),
                "tls-server-name": "api.internal",
            }
        ),
        True,
    ),
    "no tls-server-name: the address is not the certificate's name": (
        _one_file(lambda pki, url: {"server": url, "certificate-authority": str(pki["ca"])}),
        False,
    ),
    "another authority": (
        _one_file(
            lambda pki, url: {
                "server": url,
                "certificate-authority": str(pki["other"]),
                "tls-server-name": "api.internal",
            }
        ),
        False,
    ),
    "insecure-skip-tls-verify in the file": (
        _one_file(lambda pki, url: {"server": url, "insecure-skip-tls-verify": True}),
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kubectl_and_truegreen_agree(
    api: FakeApiServer,
    pki: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    assert KUBECTL is not None, (
        "kubectl is required (Debian: kubernetes-client); .ci/run installs it"
    )
    write, connects = CASES[case]
    kubeconfig = write(tmp_path, pki, api.url)
    environment = {**os.environ, "KUBECONFIG": kubeconfig, "HOME": str(tmp_path)}
    kubectl = subprocess.run(
        [KUBECTL, "get", "deployments", "-n", "train", "-o", "name", "--request-timeout", "10s"],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        check=False,
    )
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    truegreen = run_cli("doctor", "--no-registry", "-o", "json")
    report = truegreen.json()
    assert (kubectl.returncode == 0) is connects, kubectl.stderr
    reached = report["headline"]["rule"] != "nothing-read"
    assert reached is connects, report["headline"]
    if connects:
        assert "deployment.apps/" in kubectl.stdout
        assert truegreen.exit_code == 0
    else:
        assert "certificate" in kubectl.stderr
        why = (
            "TLS certificate does not name this server"
            if "not the certificate's name" in case
            else "TLS certificate was not accepted"
        )
        assert report["headline"]["text"] == f"Couldn't reach the cluster at {api.url}: {why}."
