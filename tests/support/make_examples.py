"""Regenerate examples/snapshots/ from the scenario kit, through the real `truegreen snapshot`.

Run from the project root:  .venv/bin/python -m tests.support.make_examples
"""

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.scenarios import SCENARIOS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "snapshots"
CREDENTIALS = ("--credentials-secret", "backend-credentials:username,password")

# example name -> (scenario, fault injected on a path, if any)
EXAMPLE_SNAPSHOTS: dict[str, tuple[str, tuple[Fault, str] | None]] = {
    "healthy": ("healthy", None),
    "damaged-pull-credentials": ("damaged-pull-credentials", None),
    "unbound-dataset-volume": ("unbound-dataset-volume", None),
    "held-by-running-job": ("held-by-running-job", None),
    "job-too-large": ("job-too-large", None),
    "no-permission-for-machines": ("healthy", (Fault.FORBIDDEN, r"^/api/v1/nodes$")),
}


def main() -> None:
    now = datetime.now(UTC)
    for name, (scenario, fault) in EXAMPLE_SNAPSHOTS.items():
        with FakeApiServer() as server, tempfile.TemporaryDirectory() as scratch:
            server.add(*SCENARIOS[scenario](now))
            if fault is not None:
                server.inject(fault[0], fault[1])
            kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace="train")
            target = EXAMPLES / name
            shutil.rmtree(target, ignore_errors=True)
            result = run_cli(
                "snapshot",
                "--kubeconfig",
                str(kubeconfig),
                *CREDENTIALS,
                # The examples' registry (registry.example.com) is nowhere: unasked, doctor
                # on them reads the same on any machine, with no network.
                "--no-registry",
                "--output-directory",
                str(target),
            )
            if result.exit_code not in (0, 3):  # 3: saved, with the injected failed read
                raise SystemExit(result.stderr)
            meta = target / "snapshot.yaml"
            meta.write_text(
                meta.read_text().replace(server.url, "https://training-cluster.example:6443")
            )
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
