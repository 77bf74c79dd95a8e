"""`make monitor-demo`: truegreen monitor against the fake API server, the cluster changing.

Starts the in-memory API server of the tests on loopback with a healthy training namespace,
runs `truegreen monitor` against it on http://127.0.0.1:9108/, and every 20 seconds moves the
namespace along, printing each step: a dataset volume goes pending (not ready, 2), is bound
again (ready, 0), the machines become forbidden (could not check, 3), then readable again
(ready, 0); then round again. Ctrl-C ends it.
"""

import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.support.fake_apiserver import FakeApiServer, Fault
from tests.support.scenarios import NAMESPACE, healthy

STEPS = (
    "the dataset volume goes pending",
    "it is bound again",
    "the machines become forbidden",
    "the machines are readable again",
)


def _claim(server: FakeApiServer, phase: str) -> None:
    claim = server.get_object("PersistentVolumeClaim", "datasets", NAMESPACE)
    assert claim is not None
    claim["status"] = {"phase": phase}
    server.update_object(claim)


def main() -> None:
    listen = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9108"
    with FakeApiServer() as server, tempfile.TemporaryDirectory() as scratch:
        server.watch_bookmark_seconds = 5.0
        server.add(*healthy(datetime.now(UTC)))
        kubeconfig = server.write_kubeconfig(Path(scratch) / "kubeconfig", namespace=NAMESPACE)
        command = [
            *(str(Path(sys.executable).parent / "truegreen"), "monitor"),
            *("--kubeconfig", str(kubeconfig), "--listen", listen),
            *("--min-interval", "1", "--interval", "15", "--max-age", "60", "--watch-timeout", "5"),
        ]
        print(f"fake API server on {server.url}; open http://{listen}/ or curl .../metrics")
        monitor = subprocess.Popen(command)
        try:
            step = 0
            while monitor.poll() is None:
                time.sleep(20)
                print(f"demo: {STEPS[step % len(STEPS)]}", flush=True)
                if step % len(STEPS) == 0:
                    _claim(server, "Pending")
                elif step % len(STEPS) == 1:
                    _claim(server, "Bound")
                elif step % len(STEPS) == 2:
                    server.inject(Fault.FORBIDDEN, "^/api/v1/nodes$")
                else:
                    server.clear_faults()
                step += 1
        except KeyboardInterrupt:
            pass
        finally:
            monitor.terminate()
            monitor.wait(30)


if __name__ == "__main__":
    main()
