"""doctor's config file: numbers that would overflow a deadline, and settings that are not
what their flag takes, are bad usage in one line."""

from pathlib import Path

import pytest

from tests.support.cli import run_cli

ROOT = Path(__file__).parent.parent.parent
HEALTHY = ROOT / "examples" / "snapshots" / "healthy"


@pytest.mark.parametrize("grace", [".inf", "1e400", ".nan", "-1", "2592001"])
def test_a_grace_period_past_a_month_is_bad_usage_not_an_overflow(
    tmp_path: Path, grace: str
) -> None:
    """YAML reads `.inf` and `1e400` as infinity: they would overflow the grace period's
    deadline (OverflowError, exit 1). A month is the bound; the line names the range."""
    config = tmp_path / "config.yaml"
    config.write_text(f"pending_grace_seconds: {grace}\n")
    doctor = run_cli("doctor", "--snapshot", str(HEALTHY), "--config", str(config))
    assert (doctor.exit_code, doctor.stderr) == (
        64,
        f"truegreen: config {config}: pending_grace_seconds must be a number of seconds from 0 "
        "to 2592000\n",
    )
    config.write_text("pending_grace_seconds: 2592000\n")
    assert run_cli("doctor", "--snapshot", str(HEALTHY), "--config", str(config)).exit_code == 0


@pytest.mark.parametrize(
    ("keys", "exit_code"),
    [("username", 0), ("username,password", 0), ("[username, password]", 0)],
)
def test_a_secret_s_keys_are_key_names_however_written(
    tmp_path: Path, keys: str, exit_code: int
) -> None:
    """`keys: username` is the flag's form (`username,password`), never the letters of one
    name: the healthy snapshot's login has `username` and `password`, nothing lacks."""
    config = tmp_path / "config.yaml"
    config.write_text(f"credentials-secret: {{name: backend-credentials, keys: {keys}}}\n")
    doctor = run_cli("doctor", "--snapshot", str(HEALTHY), "--config", str(config), "-o", "json")
    assert (doctor.exit_code, doctor.stderr) == (exit_code, "")


@pytest.mark.parametrize(
    "secret",
    [
        "{name: backend-credentials, keys: 5}",
        "{name: backend-credentials, keys: []}",
        "{name: backend-credentials, keys: [username, 5]}",
        "{keys: [a]}",
    ],
)
def test_a_secret_mapping_that_is_not_names_is_bad_usage(tmp_path: Path, secret: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"credentials-secret: {secret}\n")
    doctor = run_cli("doctor", "--snapshot", str(HEALTHY), "--config", str(config))
    assert doctor.exit_code == 64, doctor.stderr
    assert doctor.stderr.startswith(f"truegreen: config {config}: credentials_secret's ")
    assert doctor.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("secret", "words"),
    [
        ("{name: Backend_Login, keys: [username]}", "'Backend_Login' can't be a Secret's name"),
        ("train/backend-login:username", "'train/backend-login' can't be a Secret's name"),
        ("{name: backend-login, keys: [user name]}", "'user name' can't be a key of a Secret"),
    ],
)
def test_a_secret_name_or_key_no_secret_can_have_is_bad_usage(
    tmp_path: Path, secret: str, words: str
) -> None:
    """A Secret's name is a DNS subdomain (ValidateSecretName), its keys match
    [-._a-zA-Z0-9]+ (IsConfigMapKey): no Secret could have them, so nothing can be measured."""
    config = tmp_path / "config.yaml"
    config.write_text(f"credentials-secret: {secret}\n")
    doctor = run_cli("doctor", "--snapshot", str(HEALTHY), "--config", str(config))
    assert doctor.exit_code == 64, doctor.stderr
    assert doctor.stderr.startswith(f"truegreen: config {config}: credentials_secret: {words}: ")
    assert doctor.stderr.count("\n") == 1
