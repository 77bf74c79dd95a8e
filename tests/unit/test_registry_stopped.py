"""A signal that stops a run while registry look-ups wait on a registry that does not answer
goes up at once: the run reports what it has without waiting out the look-ups' deadline."""

import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType

import pytest

from truegreen.images import parse_image
from truegreen.refresh.registry import RegistryAccess, RegistryClient


@pytest.fixture
def silent_registry() -> Iterator[str]:
    """A loopback registry that accepts every connection and never answers: the host."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for connection in held:
        connection.close()


def test_a_signal_during_look_ups_goes_up_without_waiting_for_them(silent_registry: str) -> None:
    """As Python raises KeyboardInterrupt (or truegreen's SIGTERM handler, Terminated) in the
    main thread while it waits on the look-up threads (a ReadSchedule's daemon threads, named
    "read"): they are left without waiting for look-ups that have 20 seconds left, so the tick
    so far reaches the operator at once (a CronJob's pod gets 30 seconds after SIGTERM,
    terminationGracePeriodSeconds' default)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, stop)
    client = RegistryClient(RegistryAccess(timeout=20))
    wanted = [(parse_image(f"{silent_registry}/r/web:{tag}"), ()) for tag in ("a", "b")]
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGUSR1))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            client.resolve_all(wanted)
        waiting = [
            t for t in threading.enumerate() if t.name == "read" and t.is_alive() and t.daemon
        ]
        assert waiting, "the signal went up only once the look-ups had ended"
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
        client.close()
