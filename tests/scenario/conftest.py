"""Scenario fixtures: a fake API server loaded with a training environment.

Every doctor run a scenario makes is held to two invariants, for free:
- no output names an `Object/...`, and every finding's objects name a real kind;
- the same cluster, saved with `truegreen snapshot` and checked with `doctor --snapshot`, gives
  the same verdict, exit code, headline and per-check statuses as the live run.
"""

import re
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import RESOURCE_TYPES, FakeApiServer
from tests.support.plain_words import assert_plain_report
from tests.support.scenarios import BACKEND_SECRET_VALUE, PULL_SECRET_VALUE, SCENARIOS, Obj
from truegreen.cluster import Kind

CREDENTIALS = ("--credentials-secret", "backend-credentials:username,password")
REAL_KINDS = frozenset(kind.spec.name for kind in Kind) | {t.kind for t in RESOURCE_TYPES}
"""Every kind a finding may name: the kinds truegreen reads, and the real kinds they point at
(a webhook's Service)."""
# `Kind/name`, or `Kind/namespace/name` for an object in another namespace (render.py).
_OBJECT_REF = re.compile(r"^(?P<kind>[A-Za-z]+)/(?:[^/\s]+/)?[^/\s]+$")
# Options that only change how a report is shown; every other one is passed to the snapshot.
_DISPLAY_FLAGS = {"-v", "--verbose", "--no-color"}
_DISPLAY_OPTIONS = {"-o", "--output"}
_SETTINGS = {"--job-requests", "--config"}
# Settings of doctor alone: the snapshot is taken without them, doctor reads it with them.
_OFFLINE_ONLY = {"--job-file"}
_CONNECTION_OPTIONS = {"--kubeconfig", "--context", "-n", "--namespace", "--request-timeout"}
# The fault matrix runs doctor 144 times; a round trip per cell triples its time. Each fault
# class's round trip is pinned once instead (test_snapshot.py::test_every_failed_read_...).
_WITHOUT_ROUND_TRIP = {"test_fault_matrix", "test_the_config_key_runs_the_trial"}
# A trial start asks the live server; a snapshot cannot replay it (doctor refuses the pair).
_LIVE_ONLY = {"--admission-dry-run", "--trial"}
REGISTRY_NOT_ASKED = {
    "check": "image-pull",
    "reason": "not asked for: whether the images are in their registry: --no-registry",
}
"""The coverage entry of a run with `--no-registry`, as the scenario kit runs doctor."""
REGISTRY_NOT_ASKED_TEXT = (
    "Not asked for: image-pull (whether the images are in their registry: --no-registry)."
)


class Doctor:
    """Runs `truegreen doctor` against the fake server, live or from a snapshot of it."""

    def __init__(
        self, server: FakeApiServer, kubeconfig: Path, tmp_path: Path, *, round_trip: bool = True
    ) -> None:
        self.server = server
        self.round_trip = round_trip
        self.kubeconfig = kubeconfig
        self.tmp_path = tmp_path
        self.now = datetime.now(UTC)
        self.round_trips = 0
        """How many live runs were also checked from a snapshot (a precondition tests read)."""
        self.kinds: set[str] = set(REAL_KINDS)
        """Every kind a finding may name: the real ones, and those the loaded Events name."""
        self.registry = False
        """Whether doctor and snapshot ask the registries. Off unless a test serves its images
        from a registry it starts: the scenarios' images name registry.example.com, which no
        registry answers, and every other check must not depend on one."""

    def load(self, scenario: str | Callable[[datetime], list[Obj]]) -> list[Obj]:
        build = SCENARIOS[scenario] if isinstance(scenario, str) else scenario
        objects = build(self.now)
        self.server.add(*objects)
        # An Event may name an object of any kind, served here or not (a custom resource of a
        # scheduler not installed in the fake): a finding that quotes it names that kind.
        self.kinds |= {
            str(obj["involvedObject"]["kind"]) for obj in objects if obj.get("kind") == "Event"
        }
        return objects

    def live(self, *args: str) -> CliResult:
        """`doctor` against the live fake; then the same from a snapshot of the same cluster."""
        result = _checked(self._live(self.kubeconfig, *args), args, self.kinds)
        if self.round_trip and not _LIVE_ONLY.intersection(args):
            self._round_trip(args, result)
        return result

    def _live(self, kubeconfig: Path, *args: str) -> CliResult:
        return run_cli(
            "doctor",
            "--kubeconfig",
            str(kubeconfig),
            "--request-timeout",
            "2",
            *CREDENTIALS,
            *self.registry_flags(),
            *args,
        )

    def registry_flags(self) -> tuple[str, ...]:
        """`--no-registry`, unless the test asks the registries: then the test's registries,
        all on this computer's 127.0.0.1, named as the operator names them (doctor asks no
        loopback registry it was not told of: docs/image-pull.md)."""
        return ("--registry-allow", "127.0.0.1") if self.registry else ("--no-registry",)

    def snapshot(self, name: str = "snap", *, exit_code: int = 0) -> Path:
        """A snapshot folder of the fake; `exit_code` 3 when a read is meant to fail."""
        directory = self.tmp_path / name
        result = run_cli(
            "snapshot",
            "--kubeconfig",
            str(self.kubeconfig),
            *CREDENTIALS,
            *self.registry_flags(),
            "--output-directory",
            str(directory),
        )
        assert result.exit_code == exit_code, result.stdout + result.stderr
        return directory

    def offline(self, directory: Path, *args: str) -> CliResult:
        return _checked(
            run_cli("doctor", "--snapshot", str(directory), *CREDENTIALS, *args), args, self.kinds
        )

    def _round_trip(self, args: tuple[str, ...], live: CliResult) -> None:
        """Snapshot a twin of the cluster (same objects, same faults replayed) and check it
        offline: the test's own server, its request log and its faults never see it."""
        shared, as_json = _shared_options(args)
        offline_only = _offline_only(args)
        twin = self.server.twin()
        try:
            kubeconfig = _pointed_at(self.kubeconfig, twin, self.tmp_path)
            if as_json:
                report = live.json()
            else:
                again = self._live(kubeconfig, *shared, "-o", "json")
                report = _checked(again, ("-o", "json"), self.kinds).json()
            self.round_trips += 1
            directory = self.tmp_path / f"round-trip-{self.round_trips}"
            saved = run_cli(
                "snapshot",
                "--kubeconfig",
                str(kubeconfig),
                "--request-timeout",
                "2",
                *CREDENTIALS,
                *self.registry_flags(),
                *shared,
                "--output-directory",
                str(directory),
            )
        finally:
            twin.stop()
        # A snapshot exits 3 when a read failed, as doctor does; the twin replays the faults.
        assert saved.exit_code in (0, 3), f"round trip: snapshot failed: {saved.stderr}"
        if not directory.exists():
            # Not one read answered: nothing is saved, and the snapshot says why in doctor's
            # own headline (up to the address, which is the twin's).
            opening = report["headline"]["text"].split(self.server.url)[0]
            assert saved.exit_code == 3, saved.stderr
            assert saved.stderr.startswith(f"truegreen: {opening}{twin.url}"), saved.stderr
            return
        offline = self.offline(directory, *_settings_only(shared), *offline_only, "-o", "json")
        assert _verdict(offline.json()) == _verdict(report), (
            f"doctor {' '.join(args)}: the snapshot round trip changed the verdict"
        )
        assert offline.exit_code == live.exit_code


def _shared_options(args: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """The options a snapshot takes too (all but the display ones), and whether the live run
    printed JSON."""
    shared: list[str] = []
    as_json = False
    rest = iter(args)
    for arg in rest:
        if arg in _DISPLAY_FLAGS:
            continue
        if arg in _DISPLAY_OPTIONS:
            as_json = next(rest) == "json"
            continue
        if arg in _OFFLINE_ONLY:
            next(rest)
            continue
        shared.append(arg)
    return tuple(shared), as_json


def _offline_only(args: tuple[str, ...]) -> tuple[str, ...]:
    """The options doctor takes and a snapshot does not, with their values."""
    kept: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg in _OFFLINE_ONLY:
            kept += [arg, next(rest)]
    return tuple(kept)


def _settings_only(shared: tuple[str, ...]) -> tuple[str, ...]:
    """The doctor settings among `shared` (an offline run has no connection to configure)."""
    kept: list[str] = []
    rest = iter(shared)
    for arg in rest:
        if arg in _SETTINGS:
            kept += [arg, next(rest)]
        elif arg in _CONNECTION_OPTIONS:
            next(rest)
    return tuple(kept)


def _pointed_at(kubeconfig: Path, server: FakeApiServer, directory: Path) -> Path:
    """A copy of `kubeconfig` whose clusters all point at `server`."""
    config: dict[str, Any] = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))
    for entry in config.get("clusters") or []:
        entry["cluster"]["server"] = server.url
    copy = directory / "kubeconfig-twin"
    copy.write_text(yaml.safe_dump(config), encoding="utf-8")
    return copy


def _verdict(report: dict[str, Any]) -> tuple[object, ...]:
    """What a snapshot must not change: verdict, exit code, headline, and each check's
    statuses and codes."""
    checks: dict[str, list[tuple[str, str]]] = {}
    for finding in report["findings"]:
        checks.setdefault(finding["check"], []).append((finding["status"], finding["code"]))
    return (
        report["verdict"],
        report["exit_code"],
        report["headline"]["code"],
        {check: sorted(found) for check, found in checks.items()},
    )


_COMMAND = re.compile(r"`[^`]*`")
_CONNECTION_FLAG = re.compile(r" (?:--kubeconfig|--context|-n) \S+")


def without_connection_flags(report: Any) -> Any:
    """`report` with the flags that point pasted commands at a cluster taken out of them.

    A live run's commands carry the flags doctor was given (`--kubeconfig`); a snapshot's carry
    the namespace it was taken in: everything else about the two must be the same.
    """
    if isinstance(report, dict):
        return {key: without_connection_flags(value) for key, value in report.items()}
    if isinstance(report, list):
        return [without_connection_flags(value) for value in report]
    if isinstance(report, str):
        return _COMMAND.sub(lambda m: _CONNECTION_FLAG.sub("", m.group(0)), report)
    return report


def _checked(
    result: CliResult, args: tuple[str, ...], kinds: Collection[str] = REAL_KINDS
) -> CliResult:
    """Every report a scenario produces is checked for jargon, secret values and objects
    named without their kind."""
    output = result.stdout + result.stderr
    for secret in (PULL_SECRET_VALUE, BACKEND_SECRET_VALUE):
        assert secret not in output, "a secret value reached the output"
    assert "Object/" not in output, f"an object named without its kind: {output}"
    if "json" in args:
        assert result.stdout.startswith("{"), f"no report (exit {result.exit_code}): {output}"
        report = result.json()
        assert_plain_report(report)
        for finding in report["findings"]:
            for ref in finding["objects"]:
                named = _OBJECT_REF.match(ref)
                assert named is not None, f"{finding['code']}: {ref!r} is not Kind/[namespace/]name"
                assert named["kind"] in kinds, f"{finding['code']}: {ref!r}: no such kind"
    return result


@pytest.fixture
def doctor(
    fake_api: FakeApiServer, kubeconfig: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Doctor:
    name = getattr(request.node, "originalname", request.node.name)
    return Doctor(fake_api, kubeconfig, tmp_path, round_trip=name not in _WITHOUT_ROUND_TRIP)
