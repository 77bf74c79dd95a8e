"""The doctor fault matrix: every request a healthy run makes, times every fault class.

For each cell: no traceback, valid JSON, the checks that consume that read become unknown
(cant-check) — except a 404 on a get of a referenced object, which is a measured failure — and
no other check changes status. The exit code follows the rollup rules.
"""

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault, RequestRecord
from truegreen.cluster.throttle import MAX_RETRIES

SERVICES = {"workloads", "probes", "freshness", "image-pull", "storage"}
# What a list of training jobs not read leaves unknown: the jobs' images and volumes, and the
# judged job (the newest could be in it), whose room, queue and gates are then not known; and
# the state of every job in it (the workloads check). Whether the cluster reported anything
# is still measured: the namespace's Warning Events are read instead (here, none).
TRAINING = {"image-pull", "storage", "capacity", "queue", "admission", "workloads"}
# Which checks consume each read (a path pattern); derived from what each check looks at.
OWNERS: list[tuple[str, set[str]]] = [
    # The Deployments' failing conditions (Progressing, ReplicaFailure) are evidence too; the
    # other workloads have none it reads (knowledge/reports.py `POLARITIES`).
    (r"/deployments$", SERVICES | {"evidence"}),
    (r"/statefulsets$|/daemonsets$", SERVICES),
    (r"/namespaces/train/jobs$", TRAINING),
    # Which training kinds are served, and the scheduled jobs: where the next job comes from;
    # and whether Kueue is installed, so whether a queue holds the job.
    (r"^/apis$", TRAINING),
    (r"/namespaces/train/cronjobs$", TRAINING),
    # The namespace's pods: any of them may hold a rule that keeps the job away (required
    # anti-affinity), and they count for the job's own placement rules.
    (r"/namespaces/train/pods$", {"workloads", "capacity"}),
    # A LimitRange sizes the stored pod (capacity) and may refuse it (admission).
    (r"/limitranges$", {"capacity", "admission"}),
    (r"^/api/v1/nodes$", {"capacity"}),
    (r"^/api/v1/pods$", {"capacity"}),
    # The pods' service account must exist for them to be let in (admission: the
    # ServiceAccount plugin); its registry logins reach only pods that name none of their own,
    # and every pod here names `regcred` (plugin/pkg/admission/serviceaccount/admission.go).
    (r"/serviceaccounts/default$", {"admission"}),
    (r"/secrets/regcred$", {"image-pull"}),
    (r"/secrets/backend-credentials$", {"credentials"}),
    # The training job's volume: a bound one may tie it to some machines (its node affinity);
    # its failing conditions (a resize error) are evidence.
    (r"/persistentvolumeclaims/datasets$", {"storage", "capacity", "evidence"}),
    (r"^/api/v1/namespaces/train$|/resourcequotas$|webhookconfigurations$", {"admission"}),
]
# A 404 on a get is a measurement: the referenced object is absent (its check, code, status).
MEASURED_ABSENCE = {
    # Every image still to pull is on registry.example.com, not asked (--no-registry): the
    # kubelet pulls without the missing login, and whether that works is the registry's to say.
    r"/secrets/regcred$": ("image-pull", "image-pull.login-missing-skipped", "warn"),
    r"/secrets/backend-credentials$": ("credentials", "credentials.missing", "fail"),
    r"/persistentvolumeclaims/datasets$": ("storage", "storage.volume-missing", "fail"),
    r"^/api/v1/namespaces/train$": ("admission", "admission.namespace-missing", "fail"),
    r"/serviceaccounts/default$": ("admission", "admission.account-missing", "fail"),
}
# A 404 from the API server (which names a missing object) or from something else at its
# address (Go's bare `404 page not found`: a wrong path in the server address, a proxy).
NOT_FOUND = {Fault.NOT_FOUND, Fault.PAGE_NOT_FOUND}
# The reads of one object by name.
NAMED = "|".join(MEASURED_ABSENCE)
# Discovery and the built-in collections, which every API server serves.
NO_API_WITHOUT = (
    r"^/apis$|^/api/v1/(namespaces/train/)?(pods|nodes|limitranges|resourcequotas)$"
    r"|^/apis/apps/v1/namespaces/train/\w+$"
)
# A list answered 404 is a kind the server does not serve: no scheduled jobs, measured.
ABSENCE_CHANGES_NOTHING = {r"/cronjobs$"}
# A failed read that leaves unknown whether some training job runs short, or whether some pod
# of the namespace waits, adds one read: the namespace's Warning Events, as a job that runs
# short or a pod that waits calls for (reads/gather.py `_evidence_reads`).
ADDS_THE_WARNINGS = r"^/apis$|/jobs$|/cronjobs$|/namespaces/train/pods$"


def _statuses(report: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["check"], set()).add(finding["status"])
    return found


def _owners(path: str) -> set[str]:
    owners = [checks for pattern, checks in OWNERS if re.search(pattern, path)]
    assert len(owners) == 1, f"no single owner declared for {path}"
    return owners[0]


def _matching(table: dict[str, Any] | set[str], path: str) -> Any:
    return next(
        (table[p] if isinstance(table, dict) else p for p in table if re.search(p, path)), None
    )


def test_fault_matrix(doctor: Doctor, capsys: pytest.CaptureFixture[str]) -> None:
    doctor.load("healthy")
    baseline = doctor.live("-o", "json", "--request-timeout", "0.9")
    assert baseline.exit_code == 0
    base_statuses = _statuses(baseline.json())
    requests: list[RequestRecord] = []
    for record in doctor.server.requests():
        if (record.method, record.path) not in {(r.method, r.path) for r in requests}:
            requests.append(record)
    # every read doctor makes is owned by a check (and the healthy run made all of them)
    assert sorted({r.path for r in requests}) == sorted(
        {r.path for r in requests if _owners(r.path)}
    )
    assert len(requests) == 18
    healthy_run = len(doctor.server.log)
    assert healthy_run == 18, "precondition: a healthy run makes each read once"
    held = 0
    for record in requests:
        owners = _owners(record.path)
        for fault in Fault:
            doctor.server.clear_faults()
            throttled = fault is Fault.TOO_MANY_REQUESTS
            doctor.server.inject(
                fault,
                "^" + re.escape(record.path) + "$",
                method=record.method,
                delay=3,
                # Throttling ends after one answer here; it is waited out (Retry-After: 1)
                # within a request timeout that leaves room for the wait.
                count=1 if throttled else None,
            )
            # Each cell is a first run against the server: what it pins is how each read's
            # failure is taken where discovery goes alone (a run that remembers the server's
            # discovery sends it with the lists: test_discovery_memory.py).
            shutil.rmtree(Path(os.environ["XDG_CACHE_HOME"]) / "truegreen", ignore_errors=True)
            before = len(doctor.server.log)
            result = doctor.live("-o", "json", "--request-timeout", "3" if throttled else "0.9")
            cell = f"{fault.name} on {record.method} {record.path}"
            # Bounded by construction, not by a clock: a failed read is never retried, except
            # throttling (once here) and a reset read, sent again at most MAX_RETRIES times as
            # client-go does; at most one read is added (the Warning Events), so a run lasts at
            # most 19 request timeouts plus its own work.
            made = doctor.server.log[before:]
            resends = MAX_RETRIES if fault is Fault.RESET and record.method == "GET" else 0
            added = 1 if re.search(ADDS_THE_WARNINGS, record.path) else 0
            bound = healthy_run + throttled + resends + added
            assert len(made) <= bound, f"{cell}: {len(made)} requests"
            faulted = [r for r in made if (r.method, r.path) == (record.method, record.path)]
            sends = 2 if throttled else 1 + resends
            assert len(faulted) == sends, f"{cell}: the read was sent {len(faulted)} times"
            assert result.stdout.startswith("{"), f"{cell}: no JSON; stderr: {result.stderr}"
            report = result.json()
            statuses = _statuses(report)
            absence = _matching(MEASURED_ABSENCE, record.path)
            # A bare 404 on a get names no object: only a list's 404 (a kind not served) is
            # measured from it.
            measures = fault is Fault.NOT_FOUND or (
                fault is Fault.PAGE_NOT_FOUND and not re.search(NAMED, record.path)
            )
            if throttled:
                assert [r.status for r in faulted] == [429, 200], cell
                assert statuses == base_statuses, cell
                assert result.exit_code == 0, cell
            elif fault is Fault.UNAUTHORIZED and record == requests[0]:
                # A login refused on the first read would be refused on every read: doctor
                # stops there and says so once, for every check.
                assert len(made) == 1, f"{cell}: {len(made)} requests"
                assert set(statuses) == set(base_statuses), cell
                assert all(s == {"unknown"} for s in statuses.values()), cell
                assert report["headline"]["code"] == "cluster-login-refused", cell
                assert result.exit_code == 3, cell
            elif fault in NOT_FOUND and re.search(NO_API_WITHOUT, record.path):
                # Every API server serves these: a 404 says the address serves no API at all.
                assert set(statuses) == set(base_statuses), cell
                assert (
                    "nothing at this address serves the Kubernetes API"
                    in report["headline"]["text"]
                ), cell
                if record.path == "/apis":  # discovery comes first: nothing else is asked
                    assert len(made) == 1, f"{cell}: {len(made)} requests"
                    assert all(s == {"unknown"} for s in statuses.values()), cell
                    assert report["headline"]["code"] == "cluster-unreachable", cell
                else:
                    assert {c for c, s in statuses.items() if s != base_statuses[c]} == owners, cell
                    assert all(statuses[check] == {"unknown"} for check in owners), cell
                assert result.exit_code == 3, cell
            elif measures and _matching(ABSENCE_CHANGES_NOTHING, record.path):
                assert statuses == base_statuses, cell
                assert result.exit_code == 0, cell
            elif measures and absence is not None:
                # Only the API server's NotFound, which names the object, measures it absent.
                check, code, status = absence
                assert statuses[check] == {status}, cell
                assert {f["basis"] for f in report["findings"] if f["code"] == code} == {
                    "measured"
                }, cell
                assert result.exit_code == (2 if status == "fail" else 0), cell
                assert {c: s for c, s in statuses.items() if c != check} == {
                    c: s for c, s in base_statuses.items() if c != check
                }, cell
            else:
                for check in owners:
                    assert "unknown" in statuses[check], cell
                    assert "ok" not in statuses[check], cell
                    assert "fail" not in statuses[check], cell
                others = {c: s for c, s in statuses.items() if c not in owners}
                assert others == {c: s for c, s in base_statuses.items() if c not in owners}, cell
                unknown = [f for f in report["findings"] if f["status"] == "unknown"]
                assert {f["basis"] for f in unknown} == {"cant-check"}, cell
                assert result.exit_code == 3, cell
            held += 1
    cells = len(requests) * len(Fault)
    with capsys.disabled():
        print(f"\ndoctor fault matrix: {held}/{cells} hold")
    assert held == cells


def test_throttling_that_never_ends_reads_unknown(doctor: Doctor) -> None:
    """A 429 on every answer to one read: retried while Retry-After fits in the request's
    deadline, then that read is unknown, like any other failed read. Bounded by counting: the
    read is sent at most 1 + client-go's 10 retries, and at least twice (1 s fits in 1.5 s)."""
    from truegreen.cluster.throttle import MAX_RETRIES

    doctor.load("healthy")
    baseline = doctor.live("-o", "json", "--request-timeout", "1.5")
    assert baseline.exit_code == 0
    base_statuses = _statuses(baseline.json())
    reads = sorted({(r.method, r.path) for r in doctor.server.requests()})
    assert len(reads) == 18, "precondition: a healthy run makes 18 distinct reads"
    for method, path in reads:
        doctor.server.clear_faults()
        doctor.server.inject(Fault.TOO_MANY_REQUESTS, "^" + re.escape(path) + "$", method=method)
        before = len(doctor.server.log)
        result = doctor.live("-o", "json", "--request-timeout", "1.5")
        cell = f"endless 429 on {method} {path}"
        faulted = [r for r in doctor.server.log[before:] if (r.method, r.path) == (method, path)]
        assert 2 <= len(faulted) <= 1 + MAX_RETRIES, f"{cell}: sent {len(faulted)} times"
        assert {r.status for r in faulted} == {429}, cell
        statuses = _statuses(result.json())
        for check in _owners(path):
            assert "unknown" in statuses[check], cell
            assert not {"ok", "fail"} & statuses[check], cell
        owners = _owners(path)
        others = {c: s for c, s in statuses.items() if c not in owners}
        assert others == {c: s for c, s in base_statuses.items() if c not in owners}, cell
        assert result.exit_code == 3, cell
