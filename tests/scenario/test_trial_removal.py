"""`doctor --trial` removes its pods on every path, and says which it could not: a create the
API server stores after the client gave up on it (a timeout, Ctrl-C), a delete the server
refuses while a signal stops the run, a second Ctrl-C while the pods are deleted.

Against the fake API server (tests/support/fake_apiserver.py: `Fault.DELAY` serves a create
after the delay, as the API server finishes a write its client gave up on: apiserver
handlers/finisher/finisher.go `asyncFinisher`) and its trial kubelet."""

import json
import re
import signal
import subprocess
import sys
import time
from datetime import datetime
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.fake_apiserver import Fault
from tests.support.fake_kubelet import FakeKubelet
from tests.support.monitoring import signal_ended
from tests.support.scenarios import NAMESPACE, healthy, training_job
from tests.support.trial_results import trial_findings, trial_pods_left

Obj = dict[str, Any]
PODS = rf"^/api/v1/namespaces/{NAMESPACE}/pods$"
TRIAL_POD = rf"^/api/v1/namespaces/{NAMESPACE}/pods/truegreen-trial-[^/]+$"


def _cpu_job(now: datetime) -> list[Obj]:
    """The healthy namespace with its training job asking for no GPU."""
    objects = [o for o in healthy(now) if o["kind"] != "Job"]
    return [*objects, training_job("train-llm", now, gpus=0)]


def _distributed_job(now: datetime) -> list[Obj]:
    """Two ranks that run together (an Indexed Job whose parallelism is its completions)."""
    job = training_job("train-llm", now, gpus=0)
    job["spec"].update({"parallelism": 2, "completions": 2, "completionMode": "Indexed"})
    return [*(o for o in healthy(now) if o["kind"] != "Job"), job]


def _until(done: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert done(), "precondition: what the test waits for came"


def _stored_late(doctor: Doctor) -> bool:
    """Whether the delayed create has been served (its pod stored): the fake logs it on arrival
    and gives it its status once answered."""
    return any(r.status == 201 for r in doctor.server.requests("POST", PODS))


def _start(doctor: Doctor, *args: str) -> "subprocess.Popen[bytes]":
    """doctor --trial as its own process, so that signals reach it as they reach a terminal's."""
    command = [sys.executable, "-m", "truegreen", "doctor", "--kubeconfig", str(doctor.kubeconfig)]
    return subprocess.Popen(
        [*command, "--no-registry", "--trial", "--trial-timeout", "60", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_a_create_answered_after_the_timeout_is_found_by_its_run_s_label_and_deleted(
    doctor: Doctor,
) -> None:
    """The API server stores the trial pod 3 s after the create, past doctor's 2 s request
    timeout: the delete sent at once finds nothing (404); the pod, stored after, is looked for
    by the run's label and deleted, and the timeout is said as no answer, never a refusal."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stall=True)
    doctor.server.inject(Fault.DELAY, PODS, method="POST", count=1, delay=3.0)
    report = doctor.live("--trial", "--trial-timeout", "20", "-o", "json").json()
    assert [(f["code"], f["status"]) for f in trial_findings(report)] == [
        ("trial.no-answer", "unknown")
    ]
    [no_answer] = trial_findings(report)
    assert "refused" not in no_answer["headline"]
    assert no_answer["details"] == ["create pod: no answer in time"]
    _until(lambda: _stored_late(doctor))  # the server stored the pod after the timeout
    assert trial_pods_left(doctor.server) == [], "the pod stored after the timeout is gone"
    deletes = [r.status for r in doctor.server.requests("DELETE", TRIAL_POD)]
    assert deletes == [404, 200], "the delete at once found nothing; the one after did"
    [found] = [
        r.query["labelSelector"]
        for r in doctor.server.requests("GET", PODS)
        if "truegreen.io/trial-run" in r.query.get("labelSelector", "")
    ][-1:]
    assert re.fullmatch(r"truegreen\.io/trial-run=[0-9a-f]{8}", found)


def test_ctrl_c_while_the_create_is_stored_late_still_removes_the_pod(doctor: Doctor) -> None:
    """Ctrl-C half a second after the create was sent; the server stores the pod 3 s after it
    came, whatever the client did: the run looks for it until it shows and deletes it."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stall=True)
    doctor.server.inject(Fault.DELAY, PODS, method="POST", count=1, delay=3.0)
    with _start(doctor) as run:
        _until(lambda: doctor.server.requests("POST", PODS))
        time.sleep(0.5)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    assert run.returncode == signal_ended(130), err
    _until(lambda: _stored_late(doctor))
    assert trial_pods_left(doctor.server) == [], (
        "the pod the server stored after Ctrl-C is gone too"
    )
    assert err.decode().endswith(
        "truegreen: stopped by Ctrl-C before the run had a result. run it again to get one\n"
    )


@pytest.mark.parametrize(
    ("stop", "fault", "code"),
    [(signal.SIGINT, Fault.SERVER_ERROR, 130), (signal.SIGTERM, Fault.FORBIDDEN, 143)],
    ids=["ctrl-c-500", "sigterm-403"],
)
def test_an_interrupted_trial_whose_delete_fails_names_what_it_left(
    doctor: Doctor, stop: signal.Signals, fault: Fault, code: int
) -> None:
    """A signal during the trial; the server refuses the trial pod's delete. The run ends as the
    signal ends it, its JSON document still printed, and its last line names the pod left and
    the command that removes it (by the run's label), not only "run it again"."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stall=True)
    doctor.server.inject(fault, TRIAL_POD, method="DELETE")
    with _start(doctor, "-o", "json") as run:
        _until(lambda: trial_pods_left(doctor.server))
        run.send_signal(stop)
        out, err = run.communicate(timeout=60)
    [left] = trial_pods_left(doctor.server)
    label = f"truegreen.io/trial-run={left.rsplit('-', 2)[-2]}"
    document = json.loads(out)
    assert (run.returncode, document["exit_code"]) == (signal_ended(code), code), err
    assert document["headline"]["code"] == "interrupted"
    assert document["headline"]["text"].endswith(
        f"; the trial left 1 of its programs behind ({left})"
    )
    assert f"delete pod -l {label}`, then run it again" in document["headline"]["remedy"]
    said = f"{document['headline']['text']}. {document['headline']['remedy']}"
    assert err.decode().endswith(f"truegreen: {said}\n")


def test_a_second_ctrl_c_while_the_pods_are_deleted_still_deletes_each(doctor: Doctor) -> None:
    """Two ranks run; Ctrl-C, then Ctrl-C again while rank 0's delete is in flight (the server
    takes 1.5 s to answer it): rank 1 still gets its delete, and nothing is left."""
    doctor.load(_distributed_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stop="running")
    doctor.server.inject(Fault.DELAY, r"/pods/truegreen-trial-[^/]+-0$", method="DELETE", delay=1.5)
    with _start(doctor) as run:
        _until(lambda: len(trial_pods_left(doctor.server)) == 2)
        run.send_signal(signal.SIGINT)
        _until(lambda: doctor.server.requests("DELETE", TRIAL_POD))
        time.sleep(0.5)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    assert run.returncode == signal_ended(130), err
    assert len(doctor.server.requests("DELETE", TRIAL_POD)) == 2, "each pod got its delete"
    assert trial_pods_left(doctor.server) == []


def test_a_second_ctrl_c_while_a_late_create_is_looked_for_names_the_pod(doctor: Doctor) -> None:
    """Ctrl-C while the server still stores the trial pod (it takes 4 s), and Ctrl-C again while
    the run looks for it: the run stops looking and names the pod it could not confirm gone,
    with the command that removes it once it is stored; that command's label is the pod's."""
    doctor.load(_cpu_job)
    doctor.server.admission.allow_creates = True
    doctor.server.kubelet = FakeKubelet(doctor.server, stall=True)
    doctor.server.inject(Fault.DELAY, PODS, method="POST", count=1, delay=4.0)
    with _start(doctor) as run:
        _until(lambda: doctor.server.requests("POST", PODS))
        time.sleep(0.3)
        run.send_signal(signal.SIGINT)
        _until(lambda: doctor.server.requests("DELETE", TRIAL_POD))
        time.sleep(0.5)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
    assert run.returncode == signal_ended(130), err
    said = re.search(
        r"the trial left 1 of its programs behind \((truegreen-trial-train-llm-[0-9a-f]{8}-0)\)\. "
        r"delete them with `kubectl .*delete pod -l truegreen\.io/trial-run=([0-9a-f]{8})`",
        err.decode(),
    )
    assert said is not None, err
    _until(lambda: _stored_late(doctor))
    [stored] = [
        p for p in doctor.server.list_objects("Pod", NAMESPACE) if p["metadata"]["name"] == said[1]
    ]
    assert stored["metadata"]["labels"]["truegreen.io/trial-run"] == said[2]
