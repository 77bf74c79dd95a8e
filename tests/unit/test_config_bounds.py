"""Numbers in doctor's config file that would overflow a deadline are bad usage in one line."""

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
