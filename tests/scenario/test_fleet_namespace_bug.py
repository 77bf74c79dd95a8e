"""doctor over many namespaces: a bug met checking one namespace is that namespace's report
(every check unknown, `internal-error`, named by the exception's type), and the others keep
theirs. The cluster is the fake API server through the real client; the bug is planted in a
registry stand-in that fails on one image, the only part a test supplies."""

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from tests.scenario.test_hostile_image_names import _in
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import container, deployment, healthy
from truegreen.cluster import ClusterReader
from truegreen.cluster.live import LiveCluster
from truegreen.cluster.settings import ConnectionSettings
from truegreen.doctor.command.config import DoctorConfig, doctor_settings
from truegreen.doctor.command.fleet import diagnose_fleet
from truegreen.doctor.diagnose import RegistryOff, Where
from truegreen.doctor.findings import CheckId
from truegreen.doctor.knowledge.image_presence import (
    ImageLookup,
    ImageRegistry,
    Presence,
    RegistryAnswer,
    RegistryAnswers,
)


class _Buggy:
    """Every image is present, but asking about `…/boom:1` meets a bug."""

    def look_up(self, wanted: Sequence[ImageLookup]) -> RegistryAnswers:
        if any(lookup.image.endswith("/boom:1") for lookup in wanted):
            raise KeyError("a bug, with text of the cluster's choosing")
        return {lookup: RegistryAnswer(Presence.PRESENT) for lookup in wanted}


def _registries(reader: ClusterReader) -> tuple[ClusterReader, ImageRegistry | RegistryOff]:
    return reader, _Buggy()


def test_a_bug_in_one_namespace_is_that_namespace_s_report_and_the_others_are_kept(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    now = datetime.now(UTC)
    fake_api.add(*healthy(now), *_in(healthy(now), "team-a"))
    fake_api.add(*_in([deployment("boom", [container("app", "registry.test/boom:1")])], "team-b"))
    settings = doctor_settings(DoctorConfig(), None, None)
    with LiveCluster.connect(ConnectionSettings(kubeconfig=kubeconfig), 30) as cluster:
        where = Where(cluster.server, cluster.source)
        fleet = diagnose_fleet(
            cluster, ("team-b", "train", "team-a"), now, settings, where, registries=_registries
        )
    reports = {entry.namespace: entry.report for entry in fleet.namespaces}
    assert [entry.namespace for entry in fleet.namespaces] == ["team-b", "team-a", "train"]
    assert {name: str(r.verdict) for name, r in reports.items()} == {
        "team-b": "unknown",
        "team-a": "ready",
        "train": "ready",
    }
    broken = reports["team-b"]
    assert (broken.headline.code, broken.headline.text, broken.headline.remedy) == (
        "internal-error",
        "Couldn't check this namespace: internal error (KeyError); this is a bug in truegreen.",
        "Run again with --debug and report the traceback.",
    )
    assert broken.checked == ()
    # It could not run the checks a run of that namespace makes, and only those: without
    # --trial the trial is no part of the run (as the ready namespace beside it shows), and
    # the backend login is not asked for, as there.
    ready = reports["team-a"]
    made = {(c, True) for c in ready.checked} | {(n.check, n.asked) for n in ready.not_checked}
    assert (CheckId.TRIAL, True) not in made, "precondition: a run without --trial"
    assert {(n.check, n.asked) for n in broken.not_checked} == made
    assert int(fleet.exit_code) == 3
