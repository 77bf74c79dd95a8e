"""The real programs the suite drives, and what to install when one is missing.

`python -m tests.support.real_parts` (run by `make unit` before pytest) names each missing
part, the tests that skip without it and the Debian package that brings it. Under CI
(`TRUEGREEN_REQUIRE_REAL_PARTS=1`) a missing part fails its tests instead of skipping them.
"""

import os
import shutil
import sys

from msgspec import Struct


class RealPart(Struct, frozen=True):
    """One program the tests run for real."""

    binary: str
    package: str
    """The Debian package that installs it."""
    used_for: str


REAL_PARTS = (
    RealPart("docker-registry", "docker-registry", "refresh against a real registry"),
    RealPart("prometheus", "prometheus", "Prometheus scraping truegreen monitor"),
    RealPart("promtool", "prometheus", "checking the shipped alert rules"),
    RealPart("kubectl", "kubernetes-client", "kubectl as the oracle against the fake cluster"),
    RealPart("openssl", "openssl", "certificates for the TLS tests"),
    RealPart("chromium", "chromium", "the monitor's status page read in a browser"),
    RealPart("jq", "jq", "docs/ci.md's commands, run as written"),
    RealPart("dash", "dash", "exec probe scripts run by the shell Debian's /bin/sh is"),
    RealPart("bash", "bash", "exec probe scripts run by bash"),
    RealPart("setpriv", "util-linux", "lint as root without its read-any-folder override"),
)


def required() -> bool:
    """Whether a missing part fails its tests (CI) rather than skipping them."""
    return bool(os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"))


def find(binary: str) -> str | None:
    """The path of one real part, or None; under CI a missing part raises, it never skips."""
    found = shutil.which(binary)
    if found is None and required():
        part = next(p for p in REAL_PARTS if p.binary == binary)
        raise RuntimeError(f"{binary} is required in CI (Debian package {part.package})")
    return found


def missing() -> list[RealPart]:
    """The real parts not on PATH."""
    return [part for part in REAL_PARTS if shutil.which(part.binary) is None]


def report(absent: list[RealPart]) -> list[str]:
    """The lines `make unit` prints about the missing parts (none when every one is there)."""
    if not absent:
        return []
    packages = " ".join(dict.fromkeys(part.package for part in absent))
    return [
        f"real parts missing: {', '.join(part.binary for part in absent)}; "
        "the tests that need them skip (or fail, for kubectl):",
        *(f"  {part.binary}: {part.used_for}" for part in absent),
        f"install them with: apt-get install {packages}",
    ]


if __name__ == "__main__":
    for line in report(missing()):
        print(line, file=sys.stderr)
