"""Apache YuniKorn: its notes on the job's pods, and its queues' configured limits.

YuniKorn keeps no group object; it tells a request that does not fit its queue in a Normal
Event of reason `Informational` on the pod (yunikorn-k8shim pkg/cache/context.go
`PublishEvents`; yunikorn-core pkg/scheduler/objects/events/ask_events.go), and its queues'
`max` live in the ConfigMap `yunikorn-configs` of its namespace. Objects are in the shapes
tests/support/gang_objects.py cites.
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support import gang_objects as gang
from tests.support import read_faults
from tests.support.fake_apiserver import Fault
from tests.support.read_faults import Absence, Read
from tests.support.scenarios import Obj, healthy
from tests.support.training_kinds import ALL_GROUPS

JOB = "bert-large"

QUEUES = """partitions:
  - name: default
    placementrules:
      - name: provided
        create: false
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: train
            resources:
              guaranteed: {{vcore: 16, memory: 128Gi, nvidia.com/gpu: 2}}
              max: {{vcore: 64, memory: 512Gi, nvidia.com/gpu: {gpus}}}
"""


def cluster(
    *,
    queues: str | None = QUEUES.format(gpus=4),
    notes: Callable[[list[Obj], datetime], list[Obj]] | None = None,
    age: timedelta = timedelta(minutes=2),
) -> Callable[[datetime], list[Obj]]:
    """The healthy namespace, an idle 8-GPU machine, YuniKorn running in its namespace, and
    the PyTorchJob 'bert-large' (4 pods of 2 GPUs) `age` old (two minutes) handed to YuniKorn; by
    default YuniKorn has said of each pod that it does not fit in 'root.train', whose
    configured `max` is 4 GPUs."""

    def build(now: datetime) -> list[Obj]:
        job, *pods = gang.yunikorn_job(JOB, now, age=age)
        objects = [*healthy(now), gang.gpu_machine(), job, *pods, gang.yunikorn_scheduler_pod(now)]
        said = notes or _no_room
        objects += said(pods, now)
        if queues is not None:
            objects.append(gang.yunikorn_configs(queues))
        return objects

    return build


def _load(doctor: Doctor, scenario: Callable[[datetime], list[Obj]]) -> None:
    doctor.server.install(*ALL_GROUPS)
    doctor.load(scenario)


def _no_room(pods: list[Obj], now: datetime) -> list[Obj]:
    at = now - timedelta(seconds=90)
    return [
        gang.yunikorn_note(p, gang.does_not_fit(p, "root.train", 2, 0), at, i)
        for i, p in enumerate(pods)
    ]


def _finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [f for f in report["findings"] if f["code"] == code]
    assert len(found) == 1, [f["code"] for f in report["findings"]]
    return found[0]


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"] if f["check"] == "queue"]


def test_a_job_past_its_yunikorn_queue_s_max_never_fits(doctor: Doctor) -> None:
    """YuniKorn says each pod does not fit in 'root.train', whose `max` holds 4 GPUs; the job
    needs 8 at once: it will never start, whatever the idle machine offers."""
    _load(doctor, cluster())
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-never-fits")
    assert (found["status"], found["basis"]) == ("fail", "inferred")
    assert found["headline"] == (
        "The training job 'bert-large' needs 8 nvidia.com/gpu, more than the queue 'root.train' "
        "of `yunikorn` can ever hold (4 nvidia.com/gpu): it will never start."
    )
    assert found["remedy"].endswith("-n yunikorn describe configmap yunikorn-configs` shows it."), (
        found["remedy"]
    )
    assert report["headline"]["code"] == "queue.gang-never-fits"
    assert result.exit_code == 2
    read = {r.path for r in doctor.server.requests()}
    assert "/api/v1/namespaces/yunikorn/configmaps/yunikorn-configs" in read


def test_a_yunikorn_queue_with_no_room_now_is_said_in_yunikorn_s_words(doctor: Doctor) -> None:
    """The queue's `max` holds 16 GPUs: the job could fit once the queue's running work ends.
    YuniKorn's words are the finding (a wait, as Kueue's queue.held), quoted."""
    _load(doctor, cluster(queues=QUEUES.format(gpus=16)))
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-queue-no-room")
    assert (found["status"], found["basis"]) == ("warn", "measured")
    message = (
        "Request 'uid-bert-large-master-0' does not fit in queue 'root.train' (requested "
        "map[memory:68719476736 nvidia.com/gpu:2 pods:1 vcore:8000], available "
        "map[nvidia.com/gpu:0])"
    )
    assert found["headline"] == (
        "`yunikorn` holds the training job 'bert-large' in its queue 'root.train', which has no "
        f"room for it now: `{message}`."
    )
    assert found["remedy"].startswith(
        "Wait for the running work in 'root.train' (or, where no limit of the queue stops it, "
        "in the cluster) to finish, or ask your cluster admin for more room; `kubectl"
    )
    assert "describe pod bert-large-master-0` shows `yunikorn`'s words." in found["remedy"]
    assert "queue.gang-never-fits" not in _codes(report)
    assert result.exit_code == 0
    assert report["headline"]["code"] == "queue.gang-queue-no-room"


def test_a_queue_wait_yunikorn_measured_is_not_called_stuck_however_long(doctor: Doctor) -> None:
    """The same queue with no room now, the job 20 minutes old: past the 5-minute grace, the
    pods still have no machine and no `PodScheduled` condition, since YuniKorn writes none for
    an ask its queue's headroom holds (yunikorn-core pkg/scheduler/scheduler.go
    `inspectOutstandingRequests` reports only asks that fit the headroom). Its `Informational`
    note is its word on them (objects/events/ask_events.go `SendRequestExceedsQueueHeadroom`),
    and the queue check's measured wait stands: never `capacity.job-stuck`'s "free capacity
    doesn't explain it"."""
    _load(doctor, cluster(queues=QUEUES.format(gpus=16), age=timedelta(minutes=20)))
    result = doctor.live("-o", "json")
    report = result.json()
    codes = [f["code"] for f in report["findings"]]
    assert "capacity.job-stuck" not in codes, codes
    assert (result.exit_code, report["headline"]["code"]) == (0, "queue.gang-queue-no-room")


CLUSTER_WAIT = "request is waiting for cluster resources become available"
"""yunikorn-core pkg/scheduler/scheduler.go `inspectOutstandingRequests`: the FAILED state of a
request that fits its queue's headroom but waits for the cluster's room, which the shim writes
as the pod's `PodScheduled` False, reason `Unschedulable` (yunikorn-k8shim pkg/cache/context.go
`HandleContainerStateUpdate`)."""


def test_yunikorn_s_wait_for_the_cluster_s_room_held_by_a_running_job_is_a_wait(
    doctor: Doctor,
) -> None:
    """The running job 'older-run' holds the machine's 8 GPUs; 'bert-large' fits once it ends.
    YuniKorn's word on the pods is a wait for room, as kube-scheduler's `Insufficient
    nvidia.com/gpu` is: the same cluster under kube-scheduler says
    `capacity.held-by-running-job` (warn), and so it does here, with YuniKorn's words."""

    def build(now: datetime) -> list[Obj]:
        old, *running = gang.yunikorn_job("older-run", now, age=timedelta(hours=3))
        old["status"] = {
            "conditions": [
                {"type": "Created", "status": "True"},
                {"type": "Running", "status": "True", "reason": "PyTorchJobRunning"},
            ]
        }
        running = gang.running_on(running, "gpu-8", now, since=timedelta(hours=3))
        job, *pods = gang.yunikorn_job(JOB, now, age=timedelta(minutes=10))
        waiting = gang.looked_at(pods, CLUSTER_WAIT)
        return [
            *healthy(now),
            gang.gpu_machine(),
            old,
            *running,
            job,
            *waiting,
            gang.yunikorn_scheduler_pod(now),
        ]

    _load(doctor, build)
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "capacity.held-by-running-job")
    assert found["status"] == "warn"
    assert f"scheduler on bert-large-master-0: {CLUSTER_WAIT}" in found["details"]
    assert (result.exit_code, report["headline"]["code"]) == (0, "capacity.held-by-running-job")


def test_a_pod_that_has_become_schedulable_again_is_not_held(doctor: Doctor) -> None:
    """Each note is sent once per change: the newest of a pod's notes is where it stands."""

    def notes(pods: list[Obj], now: datetime) -> list[Obj]:
        earlier = _no_room(pods, now - timedelta(minutes=1))
        later = [
            gang.yunikorn_note(
                p,
                f"Request '{p['metadata']['uid']}' has become schedulable in queue 'root.train'",
                now - timedelta(seconds=10),
                10 + i,
            )
            for i, p in enumerate(pods)
        ]
        return earlier + later

    _load(doctor, cluster(notes=notes))
    report = doctor.live("-o", "json").json()
    assert {"queue.gang-queue-no-room", "queue.gang-never-fits"}.isdisjoint(_codes(report))
    read = {r.path for r in doctor.server.requests()}
    assert "/api/v1/namespaces/yunikorn/configmaps/yunikorn-configs" not in read, (
        "no configuration is read where no pod is held"
    )


def test_a_queue_made_by_a_placement_rule_takes_its_parent_s_childtemplate(
    doctor: Doctor,
) -> None:
    """'root.teams.train' is not in the configuration: the `tag` rule made it under
    'root.teams', whose `childtemplate` gives it a `max` of 4 GPUs."""
    queues = """partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
        parent:
          name: fixed
          value: root.teams
    queues:
      - name: root
        queues:
          - name: teams
            parent: true
            childtemplate:
              resources:
                max: {vcore: 64, memory: 512Gi, nvidia.com/gpu: 4}
"""

    def notes(pods: list[Obj], now: datetime) -> list[Obj]:
        at = now - timedelta(seconds=30)
        return [
            gang.yunikorn_note(p, gang.does_not_fit(p, "root.teams.train", 2, 0), at, i)
            for i, p in enumerate(pods)
        ]

    _load(doctor, cluster(queues=queues, notes=notes))
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-never-fits")
    assert "queue 'root.teams.train'" in found["headline"]
    assert any("max (the childtemplate of a parent)" in d for d in found["details"])


def test_yunikorn_s_configuration_that_cannot_be_read_is_unknown_naming_the_grant(
    doctor: Doctor,
) -> None:
    """YuniKorn's word stands (no room now); whether the queue could ever hold the job is not
    known, and that is said, with the grant in YuniKorn's namespace."""
    _load(doctor, cluster())
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/yunikorn/configmaps/")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _finding(report, "queue.gang-queue-no-room")["status"] == "warn"
    unknown = _finding(report, "queue.cant-read")
    assert unknown["status"] == "unknown"
    assert "YuniKorn's configuration (its queues' limits)" in unknown["headline"]
    assert "-n yunikorn auth can-i get configmaps" in unknown["remedy"], unknown["remedy"]
    assert result.exit_code == 3


def test_a_user_quota_with_no_room_is_said_in_yunikorn_s_words(doctor: Doctor) -> None:
    def notes(pods: list[Obj], now: datetime) -> list[Obj]:
        message = (
            f"Request '{pods[0]['metadata']['uid']}' exceeds the available user quota "
            "(requested map[nvidia.com/gpu:2 pods:1], available map[nvidia.com/gpu:1])"
        )
        return [gang.yunikorn_note(pods[0], message, now - timedelta(seconds=20))]

    _load(doctor, cluster(notes=notes))
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-user-quota-no-room")
    assert (found["status"], found["basis"]) == ("warn", "measured")
    assert found["headline"].startswith(
        "`yunikorn` holds the training job 'bert-large': the user's quota has no room for it "
        "now: `Request 'uid-bert-large-master-0' exceeds the available user quota"
    )
    assert result.exit_code == 0


def test_a_job_yunikorn_has_not_noted_reads_no_configuration(doctor: Doctor) -> None:
    """YuniKorn's notes are read (one list of the namespace's `Informational` Events); with
    none about the job, nothing is said and YuniKorn's configuration is not asked for."""
    _load(doctor, cluster(notes=lambda pods, now: []))
    report = doctor.live("-o", "json").json()
    assert {"queue.gang-queue-no-room", "queue.gang-never-fits"}.isdisjoint(_codes(report))
    asked = [r for r in doctor.server.requests() if r.path == "/api/v1/namespaces/train/events"]
    assert any("reason=Informational" in str(r.query) for r in asked), asked
    read = {r.path for r in doctor.server.requests()}
    assert not [p for p in read if p.startswith("/api/v1/namespaces/yunikorn/")]


def test_a_note_on_a_pod_already_placed_is_not_a_hold(doctor: Doctor) -> None:
    """A pod a machine runs is past YuniKorn's queue, whatever it noted before."""

    def build(now: datetime) -> list[Obj]:
        objects = cluster(notes=lambda pods, now: _no_room(pods[:1], now))(now)
        master = next(o for o in objects if o["metadata"]["name"] == f"{JOB}-master-0")
        master["spec"]["nodeName"] = "gpu-8"
        master["status"] = {"phase": "Running"}
        return objects

    _load(doctor, build)
    report = doctor.live("-o", "json").json()
    assert {"queue.gang-queue-no-room", "queue.gang-never-fits"}.isdisjoint(_codes(report))


def test_yunikorn_counts_a_pod_each_against_a_max_of_pods(doctor: Doctor) -> None:
    """The shim counts one `pods` per pod (pkg/common/resource.go `GetPodResource`): four pods
    never fit a queue whose max holds 3, whatever its GPUs."""
    queues = QUEUES.format(gpus=64).replace("nvidia.com/gpu: 64}", "nvidia.com/gpu: 64, pods: 3}")
    _load(doctor, cluster(queues=queues))
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-never-fits")
    assert "needs 4 programs, more than the queue 'root.train'" in found["headline"]
    assert "(3 programs)" in found["headline"]


def test_yunikorn_configs_win_over_yunikorn_defaults(doctor: Doctor) -> None:
    """The defaults hold 16 GPUs, yunikorn-configs 4: YuniKorn runs with yunikorn-configs'."""

    def build(now: datetime) -> list[Obj]:
        roomy = gang.yunikorn_configs(QUEUES.format(gpus=16), name="yunikorn-defaults")
        return [*cluster()(now), roomy]

    _load(doctor, build)
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-never-fits")
    assert "(4 nvidia.com/gpu)" in found["headline"]


def test_the_notes_on_a_gang_s_placeholders_speak_for_the_job(doctor: Doctor) -> None:
    """With task groups, YuniKorn first asks only for placeholder pods, which the originator
    pod owns (yunikorn-k8shim pkg/cache/placeholder.go `newPlaceholder`, metadata.go
    `getOwnerReference`): their notes are the job's."""

    def notes(pods: list[Obj], now: datetime) -> list[Obj]:
        master = pods[0]
        holders = [gang.yunikorn_placeholder(master, "workers", i) for i in range(2)]
        at = now - timedelta(seconds=40)
        said = [
            gang.yunikorn_note(p, gang.does_not_fit(p, "root.train", 2, 0), at, i)
            for i, p in enumerate(holders)
        ]
        return [*holders, *said]

    _load(doctor, cluster(queues=QUEUES.format(gpus=16), notes=notes))
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-queue-no-room")
    assert "Pod/tg-bert-large-workers-0" in found["objects"]


EVENTS = "/api/v1/namespaces/train/events"
YUNIKORN_READS = {
    # The warnings (read by evidence, admission and storage) and YuniKorn's notes are both
    # lists of the namespace's Events.
    EVENTS: Read(frozenset({"evidence", "admission", "storage", "queue"}), uses=2),
    # No yunikorn-configs leaves no limit to judge: YuniKorn's word, a wait.
    "/api/v1/namespaces/yunikorn/configmaps/yunikorn-configs": Read(
        frozenset({"queue"}),
        Absence("queue.gang-queue-no-room", frozenset({"ok", "warn"}), 0),
    ),
    # No yunikorn-defaults is what the baseline has.
    "/api/v1/namespaces/yunikorn/configmaps/yunikorn-defaults": Read(
        frozenset({"queue"}),
        Absence("queue.gang-never-fits", frozenset({"ok", "fail"}), 2),
    ),
}
"""Each read YuniKorn adds, the checks that consume it, and what its 404 measures."""


def test_the_fault_matrix_holds_for_yunikorn_s_reads(doctor: Doctor) -> None:
    """tests/support/read_faults.py for each read YuniKorn adds."""
    _load(doctor, cluster())
    held = read_faults.hold(doctor, YUNIKORN_READS, baseline_exit=2)
    assert held == len(YUNIKORN_READS) * len(Fault)


def test_a_snapshot_keeps_yunikorn_s_queues_and_no_secret_beside_them(doctor: Doctor) -> None:
    """The configuration is saved for the offline verdict (the round trip of every test here);
    a value under a secret-named key beside the queues is redacted (truegreen/cluster/redact.py),
    whatever else the cluster keeps in that ConfigMap."""
    secret = "hunter2-ldap-bind-9f8e7d"

    def build(now: datetime) -> list[Obj]:
        objects = cluster()(now)
        configs = next(o for o in objects if o["metadata"]["name"] == "yunikorn-configs")
        configs["data"]["ldap.bindPassword"] = secret
        return objects

    _load(doctor, build)
    directory = doctor.snapshot()
    saved = "".join(p.read_text() for p in directory.rglob("*") if p.is_file())
    assert "nvidia.com/gpu: 4" in saved, "precondition: the queues were saved"
    assert secret not in saved
    offline = doctor.offline(directory, "-o", "json")
    assert offline.exit_code == 2
    assert _finding(offline.json(), "queue.gang-never-fits")["status"] == "fail"


# A queue with room for the whole job (64 GPUs), and user and group limits in the shape
# YuniKorn's docs give them (yunikorn-site docs/user_guide/queue_config.md "Limits";
# docs/design/user_group_resource_usage_enforcement.md): a list under a queue, each limit
# naming `users` and/or `groups` (`*` for any) with `maxresources`.
LIMITED = """partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: train
            resources:
              max: {{vcore: 256, memory: 2Ti, nvidia.com/gpu: 64}}
            limits:
{limits}
"""


def _limits(*limits: str) -> str:
    return LIMITED.format(limits="\n".join(limits))


def _user_limit(users: str, gpus: int, *, key: str = "users") -> str:
    return (
        f"              - limit: {key} {users}\n"
        f"                {key}: [{users}]\n"
        f"                maxresources: {{nvidia.com/gpu: {gpus}}}"
    )


def _over_user_quota(pods: list[Obj], now: datetime) -> list[Obj]:
    """YuniKorn says of each pod that it exceeds its user's quota: such a note names no queue."""
    at = now - timedelta(seconds=20)
    return [
        gang.yunikorn_note(p, gang.exceeds_user_quota(p, 2, 0), at, i) for i, p in enumerate(pods)
    ]


def _submitted_by(
    user: str | None, groups: list[str], queues: str
) -> Callable[[datetime], list[Obj]]:
    """The cluster with only user-quota notes, the pods annotated with `user` (none: no
    annotation, as where YuniKorn's admission controller did not admit them)."""

    def build(now: datetime) -> list[Obj]:
        objects = cluster(queues=queues, notes=_over_user_quota)(now)
        if user is not None:
            gang.yunikorn_user([o for o in objects if o["kind"] == "Pod"], user, groups)
        return objects

    return build


def test_a_job_past_its_user_s_limit_never_fits(doctor: Doctor) -> None:
    """The user 'alice' may use 4 GPUs in 'root.train'; the job needs 8 at once. YuniKorn
    only says the user's quota has no room now; the user's limit can never hold the job
    (yunikorn-core pkg/scheduler/ugm/manager.go `Headroom`)."""
    _load(doctor, _submitted_by("alice", ["ml"], _limits(_user_limit("alice", 4))))
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-user-limit-never-fits")
    assert (found["status"], found["basis"]) == ("fail", "inferred")
    assert found["headline"] == (
        "The training job 'bert-large' needs 8 nvidia.com/gpu, more than the user 'alice' may "
        "ever use in the queue 'root.train' of `yunikorn` (4 nvidia.com/gpu): it will never "
        "start."
    )
    assert found["remedy"].startswith(
        "Ask for less, or ask your cluster admin to raise that limit in `yunikorn`'s settings;"
    )
    assert found["remedy"].endswith("-n yunikorn describe configmap yunikorn-configs` shows them.")
    assert any(
        "limit for users [alice] maxresources 4 nvidia.com/gpu" in d for d in found["details"]
    )
    assert "queue.gang-user-quota-no-room" not in _codes(report)
    assert report["headline"]["code"] == "queue.gang-user-limit-never-fits"
    assert result.exit_code == 2


def test_a_user_limit_that_holds_the_job_leaves_yunikorn_s_wait(doctor: Doctor) -> None:
    """The user's limit holds 16 GPUs: the job fits once the user's other work ends."""
    _load(doctor, _submitted_by("alice", [], _limits(_user_limit("alice", 16))))
    result = doctor.live("-o", "json")
    report = result.json()
    assert _finding(report, "queue.gang-user-quota-no-room")["status"] == "warn"
    assert "queue.gang-user-limit-never-fits" not in _codes(report)
    assert result.exit_code == 0
    read = {r.path for r in doctor.server.requests()}
    assert "/api/v1/namespaces/yunikorn/configmaps/yunikorn-configs" in read


@pytest.mark.parametrize(
    ("user", "code"),
    [("alice", "queue.gang-user-limit-never-fits"), ("bob", "queue.gang-user-quota-no-room")],
)
def test_the_limit_for_any_user_holds_a_user_without_one(
    doctor: Doctor, user: str, code: str
) -> None:
    """'bob' has a limit of his own; 'alice' has none, so the wildcard's 4 GPUs are hers
    (queue_tracker.go `newQueueTracker`); a user's own limit is never replaced by the
    wildcard's (`setLimit`), so 'bob' may wait for his 64."""
    limits = _limits(_user_limit("bob", 64), _user_limit("'*'", 4))
    _load(doctor, _submitted_by(user, [], limits))
    report = doctor.live("-o", "json").json()
    found = _finding(report, code)
    assert [c for c in _codes(report) if c.startswith("queue.gang-user")] == [code]
    if user == "alice":
        assert (
            "more than any user without a limit of their own, as 'alice', may ever use"
            in (found["headline"])
        )


def test_a_group_limit_holds_the_user_s_group_from_the_annotation(doctor: Doctor) -> None:
    """'alice' is in the groups 'dev' and 'ml'; 'ml' is the configured group she belongs to
    (manager.go `ensureGroupInternal`), and the group's 4 GPUs are for all its users together."""
    limits = _limits(_user_limit("ops", 64, key="groups"), _user_limit("ml", 4, key="groups"))
    _load(doctor, _submitted_by("alice", ["dev", "ml"], limits))
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-user-limit-never-fits")
    assert found["headline"].startswith(
        "The training job 'bert-large' needs 8 nvidia.com/gpu, more than the group 'ml' of the "
        "user 'alice' together may ever use in the queue 'root.train'"
    )


def test_a_pod_without_a_user_runs_as_yunikorn_s_default_user(doctor: Doctor) -> None:
    """No user-info annotation: the shim runs the application as `nobody`
    (yunikorn-k8shim pkg/common/utils/utils.go `GetUserFromPod`, constants.go `DefaultUser`)."""
    _load(doctor, _submitted_by(None, [], _limits(_user_limit("nobody", 4))))
    found = _finding(doctor.live("-o", "json").json(), "queue.gang-user-limit-never-fits")
    assert "the user 'nobody'" in found["headline"]
    assert any("YuniKorn's default" in d for d in found["details"]), found["details"]


def test_user_limits_that_cannot_be_read_leave_yunikorn_s_wait_said_so(doctor: Doctor) -> None:
    """Queues kept as binary data are not read: YuniKorn's word stands, and the finding says
    the user's limits could not be judged."""

    def build(now: datetime) -> list[Obj]:
        objects = _submitted_by("alice", [], _limits(_user_limit("alice", 4)))(now)
        configs = next(o for o in objects if o["metadata"]["name"] == "yunikorn-configs")
        configs["binaryData"] = {"queues.yaml.gz": "H4sIAAAAAAAA/wMAAAAAAAAAAAA="}
        return objects

    _load(doctor, build)
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-user-quota-no-room")
    assert found["status"] == "warn"
    assert any(
        d.startswith("whether the user's limits could ever hold the job is not known: ")
        for d in found["details"]
    ), found["details"]
    assert result.exit_code == 0


def test_user_limits_yunikorn_s_configuration_forbids_are_unknown(doctor: Doctor) -> None:
    _load(doctor, _submitted_by("alice", [], _limits(_user_limit("alice", 4))))
    doctor.server.inject(Fault.FORBIDDEN, r"^/api/v1/namespaces/yunikorn/configmaps/")
    result = doctor.live("-o", "json")
    report = result.json()
    assert _finding(report, "queue.gang-user-quota-no-room")["status"] == "warn"
    assert _finding(report, "queue.cant-read")["status"] == "unknown"
    assert result.exit_code == 3


def test_a_user_quota_note_on_a_job_whose_queue_is_unknown_is_not_judged(doctor: Doctor) -> None:
    """A user-quota note names no queue, YuniKorn left no queue note, and the pods name no
    queue: the user's limits on the way to it can't be found."""

    def build(now: datetime) -> list[Obj]:
        objects = _submitted_by("alice", [], _limits(_user_limit("alice", 4)))(now)
        for pod in (o for o in objects if o["kind"] == "Pod"):
            pod["metadata"]["labels"].pop("yunikorn.apache.org/queue", None)
        return objects

    _load(doctor, build)
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-user-quota-no-room")
    assert any("not known: no note of YuniKorn's names the queue" in d for d in found["details"])
    assert result.exit_code == 0


def _placed_by(rules: str, *limits: str) -> str:
    """`_limits`, with the default partition's `placementrules` given as YAML list items."""
    return _limits(*limits).replace(
        "  - name: default\n", f"  - name: default\n    placementrules:\n{rules}\n", 1
    )


_FIXED_OTHER = "      - name: fixed\n        value: root.other"


def test_a_job_other_placement_rules_may_have_moved_is_not_judged(doctor: Doctor) -> None:
    """The pods ask for 'root.train', where 'alice' may use 4 GPUs, but the partition's only
    placement rule is `fixed` to 'root.other': YuniKorn runs the implicit `provided` rule only
    where none is configured (yunikorn-core pkg/scheduler/placement/placement.go
    `buildRules`), so the job is not in the queue its pods ask for, and no note names the
    one it is in. Its user's limits there are not judged, and YuniKorn's wait stands."""
    _load(doctor, _submitted_by("alice", [], _placed_by(_FIXED_OTHER, _user_limit("alice", 4))))
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-user-quota-no-room")
    assert found["status"] == "warn"
    assert "queue.gang-user-limit-never-fits" not in _codes(report)
    assert any(
        "not known: pod " in d and "YuniKorn's placement rules (fixed) may place" in d
        for d in found["details"]
    ), found["details"]
    assert result.exit_code == 0


@pytest.mark.parametrize("create", ["false", "true"])
def test_a_job_the_provided_rule_alone_places_is_judged_in_the_queue_it_asks_for(
    doctor: Doctor, create: str
) -> None:
    """`provided` as the only configured rule keeps the fully qualified queue the pods ask
    for (placement/provided_rule.go `placeApplication`), and what it does not place nothing
    else does (`buildRules` adds only the recovery rule): the job is in 'root.train'."""
    rules = f"      - name: Provided\n        create: {create}"
    _load(doctor, _submitted_by("alice", [], _placed_by(rules, _user_limit("alice", 4))))
    result = doctor.live("-o", "json")
    found = _finding(result.json(), "queue.gang-user-limit-never-fits")
    assert any("queue root.train" in d for d in found["details"]), found["details"]
    assert result.exit_code == 2


def test_the_queue_yunikorn_s_note_names_is_judged_whatever_the_rules(doctor: Doctor) -> None:
    """YuniKorn said the job's pods had become schedulable in 'root.train', then that they
    exceed the user's quota: the queue it named is where it placed the job, whatever its
    placement rules, and the user's 4 GPUs there can never hold the job."""

    def build(now: datetime) -> list[Obj]:
        queues = _placed_by(_FIXED_OTHER, _user_limit("alice", 4))
        objects = _submitted_by("alice", [], queues)(now)
        pods = [o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"].startswith(JOB)]
        at = now - timedelta(seconds=90)
        objects += [
            gang.yunikorn_note(
                p,
                f"Request '{p['metadata']['uid']}' has become schedulable in queue 'root.train'",
                at,
                10 + i,
            )
            for i, p in enumerate(pods)
        ]
        return objects

    _load(doctor, build)
    result = doctor.live("-o", "json")
    report = result.json()
    found = _finding(report, "queue.gang-user-limit-never-fits")
    assert any("queue root.train" in d for d in found["details"]), found["details"]
    assert result.exit_code == 2
