"""TLS to the cluster: verified by default; off only with an explicit flag, which warns."""

import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl is required (.ci/run installs it)"
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
def tls_api(certificate: tuple[Path, Path]) -> Iterator[FakeApiServer]:
    server = FakeApiServer().start(tls=certificate)
    server.add(*healthy(datetime.now(UTC)))
    yield server
    server.stop()


def test_unknown_certificate_is_an_unreachable_cluster(
    tls_api: FakeApiServer, tmp_path: Path
) -> None:
    kubeconfig = tls_api.write_kubeconfig(tmp_path / "kc", namespace="train")
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json")
    report = result.json()
    assert result.exit_code == 3
    assert report["headline"]["rule"] == "nothing-read"
    assert (
        report["headline"]["text"]
        == f"Couldn't reach the cluster at {tls_api.url}: TLS certificate was not accepted."
    )


def test_trusted_certificate_verifies(
    tls_api: FakeApiServer, certificate: tuple[Path, Path], tmp_path: Path
) -> None:
    kubeconfig = tls_api.write_kubeconfig(
        tmp_path / "kc", namespace="train", certificate_authority=certificate[0]
    )
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json")
    assert (result.exit_code, result.json()["verdict"]) == (0, "ready")
    assert "warning" not in result.stderr


def test_skipping_verification_needs_the_flag_and_warns(
    tls_api: FakeApiServer, tmp_path: Path
) -> None:
    kubeconfig = tls_api.write_kubeconfig(tmp_path / "kc", namespace="train")
    result = run_cli(
        "doctor",
        "--kubeconfig",
        str(kubeconfig),
        "--insecure-skip-tls-verify",
        "--no-registry",
        "-o",
        "json",
    )
    assert (result.exit_code, result.json()["verdict"]) == (0, "ready")
    assert result.stderr.startswith(
        "truegreen: warning: not verifying the cluster's TLS certificate"
    )


def test_skipping_verification_in_the_kubeconfig_works_and_warns_the_same(
    tls_api: FakeApiServer, tmp_path: Path
) -> None:
    import yaml

    kubeconfig = tls_api.write_kubeconfig(tmp_path / "kc", namespace="train")
    config = yaml.safe_load(kubeconfig.read_text())
    config["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    kubeconfig.write_text(yaml.safe_dump(config))
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig), "--no-registry", "-o", "json")
    assert (result.exit_code, result.json()["verdict"]) == (0, "ready")
    assert result.stderr == (
        "truegreen: warning: not verifying the cluster's TLS certificate "
        f"(insecure-skip-tls-verify in {kubeconfig}); anyone on the network path could "
        "answer for it\n"
    )
