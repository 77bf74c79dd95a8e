"""`truegreen refresh` stopped by a signal while a registry has not answered: it ends at once.

A process of its own, as the CronJob's pod runs it, against the fake API server and a
registry on loopback that accepts every connection, reads the request and never answers
(tests/support/hostile.py `silent`).
"""

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.fake_apiserver import FakeApiServer
from tests.support.hostile import HostileServer, silent
from tests.support.monitoring import signal_ended, wait_for, with_default_ctrl_c
from tests.support.refresh_kit import container, deployment

REQUEST_TIMEOUT = 60
"""The look-up's own deadline: far beyond the bound the process must end within."""
ENDS_WITHIN = 20
"""Seconds the process may take to end after SIGTERM: generous on a slow, shared machine, and
far below REQUEST_TIMEOUT (and below the 30 s the silent registry waits before it hangs up)."""


def test_sigterm_during_registry_look_ups_ends_the_process_without_waiting_for_the_registry(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """SIGTERM while the look-up waits on a registry that never answers: the tick so far is
    printed (every workload read `interrupted`, nothing written) and the process ends with
    143 at once. A look-up still in flight keeps no process alive (`ThreadPoolExecutor`'s
    workers are joined at interpreter exit, concurrent/futures/thread.py `_python_exit`):
    it only reads, so nothing is left half written."""
    with HostileServer(silent) as registry:
        image = f"127.0.0.1:{registry.port}/r/hang:stable"
        fake_api.add(deployment("hang", container("runner", image), pull_secret=None))
        argv = [str(Path(sys.executable).parent / "truegreen"), "refresh", "-o", "json"]
        argv += ["--kubeconfig", str(kubeconfig), "--request-timeout", str(REQUEST_TIMEOUT)]
        with subprocess.Popen(
            with_default_ctrl_c(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        ) as running:
            try:
                wait_for(
                    "the look-up to reach the registry", lambda: registry.counts["requests"] > 0
                )
                running.send_signal(signal.SIGTERM)
                out, err = running.communicate(timeout=ENDS_WITHIN)
            finally:
                if running.poll() is None:
                    running.kill()
    assert running.returncode == signal_ended(143), err
    document = json.loads(out)
    assert (document["exit_code"], document["headline"]["code"]) == (143, "interrupted")
    assert [(w["name"], w["outcome"], w["writes"]) for w in document["workloads"]] == [
        ("hang", "interrupted", [])
    ]
    assert fake_api.requests("PATCH") == []
