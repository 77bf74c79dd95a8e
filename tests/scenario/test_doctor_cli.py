"""doctor's flags and config file, its bad-input errors, and what --verbose adds."""

from pathlib import Path

import pytest

from tests.scenario.conftest import Doctor
from tests.support.cli import run_cli
from tests.support.scenarios import BACKEND_SECRET_VALUE, PULL_SECRET_VALUE


def _capacity_details(doctor: Doctor, *args: str) -> list[str]:
    report = doctor.live("-o", "json", *args).json()
    (capacity,) = [f for f in report["findings"] if f["check"] == "capacity"]
    details: list[str] = capacity["details"]
    return details


def test_config_file_supplies_settings_and_flags_win(doctor: Doctor, tmp_path: Path) -> None:
    doctor.load("healthy")
    config = tmp_path / "doctor.yaml"
    config.write_text(
        "job_requests: {cpu: 2, memory: 4Gi, nvidia.com/gpu: 2}\n"
        "credentials_secret: {name: backend-credentials, keys: [username, password, token]}\n"
    )
    report = doctor.live("-o", "json", "--config", str(config)).json()
    # --credentials-secret from the scenario fixture wins over the config's (which wants `token`)
    assert "credentials.keys-missing" not in [f["code"] for f in report["findings"]]
    details = _capacity_details(doctor, "--config", str(config))
    assert details[0] == "job size 2 CPUs, 4 GiB memory, 2 nvidia.com/gpu (from --job-requests)"
    flagged = _capacity_details(doctor, "--config", str(config), "--job-requests", "cpu=1")
    assert flagged[0] == "job size 1 CPU (from --job-requests)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--job-requests", "cpu=lots"), "--job-requests is not valid: 'lots' is not a quantity"),
        (("--job-requests", "0x10"), "--job-requests is not valid: '0x10' is not NAME=QUANTITY"),
        (
            ("--credentials-secret", "no-keys"),
            "--credentials-secret 'no-keys' is not NAME:KEY1,KEY2",
        ),
        # A Secret's name is a DNS subdomain (pkg/apis/core/validation ValidateSecretName ->
        # apimachinery IsDNS1123Subdomain); its keys match [-._a-zA-Z0-9]+ and are not '.',
        # '..' or '..…' (util/validation IsConfigMapKey).
        (
            ("--credentials-secret", "train/backend-credentials:username,password"),
            "truegreen: --credentials-secret: 'train/backend-credentials' can't be a Secret's "
            "name: a name is lowercase letters, digits, '-' and '.', at most 253 characters "
            "(its namespace comes from -n). for example --credentials-secret "
            "backend-login:username,password\n",
        ),
        (
            ("--credentials-secret", "Backend_Credentials:username"),
            "truegreen: --credentials-secret: 'Backend_Credentials' can't be a Secret's name",
        ),
        (
            ("--credentials-secret", "..:k"),
            "truegreen: --credentials-secret: '..' can't be a Secret's name",
        ),
        (
            ("--credentials-secret", "backend-credentials:user name"),
            "truegreen: --credentials-secret: 'user name' can't be a key of a Secret: a key is "
            "letters, digits, '-', '_' and '.', at most 253 characters, and doesn't start with "
            "'..'",
        ),
        (
            ("--credentials-secret", "backend-credentials:username,..token"),
            "truegreen: --credentials-secret: '..token' can't be a key of a Secret",
        ),
    ],
)
def test_bad_flags_are_one_line_and_exit_64(
    doctor: Doctor, args: tuple[str, ...], message: str
) -> None:
    result = run_cli("doctor", "--kubeconfig", str(doctor.kubeconfig), *args)
    assert result.exit_code == 64
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("job_requests: [unclosed", "is not valid YAML at line 1"),
        ("colour: blue\n", "has unknown settings: colour"),
        ("- a list\n", "is not a mapping of settings"),
    ],
)
def test_bad_config_file(doctor: Doctor, tmp_path: Path, content: str, message: str) -> None:
    config = tmp_path / "doctor.yaml"
    config.write_text(content)
    result = run_cli("doctor", "--kubeconfig", str(doctor.kubeconfig), "--config", str(config))
    assert result.exit_code == 64
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_broken_kubeconfig_is_one_line_exit_3(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("clusters: [unclosed")
    result = run_cli("doctor", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 3
    assert result.stderr.strip() == (
        f"truegreen: kubeconfig {kubeconfig} is not valid YAML at line 1: did not find "
        "expected ',' or ']'. fix the file, or pass another with --kubeconfig"
    )


def test_verbose_adds_kubernetes_details_and_objects(doctor: Doctor) -> None:
    doctor.load("crash-looping-manager")
    plain = doctor.live("--no-color").stdout
    verbose = doctor.live("--no-color", "-v").stdout
    assert "CrashLoopBackOff" not in plain
    assert "pod jobs-manager-abc12 container api: CrashLoopBackOff, 7 restarts" in verbose
    assert "objects: Deployment/jobs-manager, Pod/jobs-manager-abc12" in verbose
    assert "Checks:" in verbose


def test_no_secret_value_in_any_output_mode(doctor: Doctor) -> None:
    doctor.load("missing-pull-credentials")
    for args in (("-v",), ("--debug",), ("-o", "json", "-v"), ("--debug", "-v")):
        result = doctor.live(*args)
        for secret in (PULL_SECRET_VALUE, BACKEND_SECRET_VALUE):
            assert secret not in result.stdout + result.stderr
