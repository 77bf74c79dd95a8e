"""The `trial` check's words: every code it can give, each from a read-back in its real shape
(the H200's texts in tests/trial_evidence/, the kubelet's messages), with its status and the
source's words kept for --verbose. tests/scenario/test_trial.py runs the check end to end."""

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import msgspec
from msgspec.structs import replace

from truegreen.cluster import CantRead, ReadFailure
from truegreen.doctor.catalogue import WORDING
from truegreen.doctor.checks import trial
from truegreen.doctor.environment import Environment
from truegreen.doctor.findings import Finding
from truegreen.kubectl import Kubectl
from truegreen.trial.readback import ContainerState, KubeletEvent, TrialPod, TrialRun

EVIDENCE = json.loads(
    (Path(__file__).parents[1] / "trial_evidence" / "gpu-h200-first-seconds.json").read_text()
)
POD = "truegreen-trial-llama-0e20-0"
IMAGE = "ghcr.io/acme/train:2.11"


def _line(**parts: Any) -> str:
    return json.dumps({"probe_schema": 1, "runtime": "python", **parts})


def _gpu(requested: int, **library: Any) -> dict[str, Any]:
    lib = {"name": "torch", "status": "ok", **library}
    return {"status": lib["status"], "requested": requested, "library": "torch", "libraries": [lib]}


def _findings(run: TrialRun | CantRead) -> list[Finding]:
    env = SimpleNamespace(trial_run=run, settings=SimpleNamespace(kubectl=Kubectl(namespace="ml")))
    return trial.check(cast(Environment, env))


def _pod(log: str = "", **fields: Any) -> TrialRun:
    return TrialRun(pods=(TrialPod(pod=POD, log=log, **fields),))


def _codes(run: TrialRun | CantRead) -> list[tuple[str, str]]:
    return [(f.code, f.status.value) for f in _findings(run)]


def _collective(error: str) -> TrialRun:
    return _pod(_line(collective={"status": "error", "backend": "nccl", "error": error}))


CASES: list[tuple[TrialRun | CantRead, tuple[str, str]]] = [
    (
        _pod(
            _line(),
            events=(
                KubeletEvent(
                    POD,
                    "Pulled",
                    f'Successfully pulled image "{IMAGE}" in 2m1s (2m3.5s including waiting). '
                    "Image size: 17179869184 bytes.",
                ),
            ),
        ),
        ("trial.image-pull-slow", "warn"),
    ),
    (
        _pod(events=(KubeletEvent(POD, "Failed", f'Failed to pull image "{IMAGE}": not found'),)),
        ("trial.image-pull-failed", "fail"),
    ),
    (
        _pod(
            events=(KubeletEvent(POD, "Pulling", f'Pulling image "{IMAGE}"'),),
            ended_by_timeout=True,
        ),
        ("trial.still-pulling", "fail"),
    ),
    (
        _pod(events=(KubeletEvent(POD, "FailedMount", 'MountVolume.SetUp failed for volume "d"'),)),
        ("trial.container-not-started", "fail"),
    ),
    (
        _pod(
            "python3: not found\n",
            states=(ContainerState(POD, "t", terminated="Error", exit_code=127),),
        ),
        ("trial.container-ended", "fail"),
    ),
    (
        # The job's init container the trial kept from writing to its claim, failed.
        _pod(
            states=(
                ContainerState(
                    POD, "prepare", terminated="Error", exit_code=2, init=True, made_read_only=True
                ),
            )
        ),
        ("trial.read-only-for-trial", "unknown"),
    ),
    (_pod("hello\n"), ("trial.no-probe-line", "unknown")),
    (
        TrialRun(
            pods=(
                TrialPod(
                    pod=POD,
                    log=_line(world=2, tcp={"status": "incomplete", "role": "rank0"}),
                    states=(ContainerState(POD, "trainer", started_at=1_796_612_164.0),),
                    wait_seconds=290,
                ),
                TrialPod(
                    pod=POD.replace("-0", "-1"),
                    log=_line(world=2, rank=1, tcp={"status": "unreachable"}),
                    states=(ContainerState(POD, "trainer", started_at=1_796_612_134.0),),
                    wait_seconds=10,
                ),
            )
        ),
        ("trial.not-together", "unknown"),
    ),
    (
        _pod(_line(tcp={"status": "unavailable", "why": "sh has no sockets"})),
        ("trial.not-measured", "unknown"),
    ),
    (
        _pod(_line(gpu={"status": "no-library", "requested": 1})),
        ("trial.no-gpu-library", "unknown"),
    ),
    (
        _pod(
            _line(
                gpu=_gpu(
                    1,
                    status="error",
                    error=EVIDENCE["no_visible_device"][1].strip().splitlines()[-1],
                )
            )
        ),
        ("trial.no-gpu", "fail"),
    ),
    (_pod(_line(gpu=_gpu(2, device_count=1))), ("trial.fewer-gpus", "fail")),
    (
        _pod(
            _line(
                gpu=_gpu(
                    1,
                    status="error",
                    error="RuntimeError: CUDA error: CUDA driver version is insufficient for "
                    "CUDA runtime version",
                )
            )
        ),
        ("trial.driver-too-old", "fail"),
    ),
    (
        _pod(_line(gpu=_gpu(1, status="error", error="ImportError: libcudart.so.13"))),
        ("trial.gpu-library-failed", "fail"),
    ),
    (
        _pod(
            _line(shm={"status": "ok", "path": "/dev/shm", "size_bytes": 64 << 20, "need_bytes": 0})
        ),
        ("trial.shm-default-size", "warn"),
    ),
    (
        _pod(
            _line(
                shm={
                    "status": "ok",
                    "path": "/dev/shm",
                    "size_bytes": 64 << 20,
                    "need_bytes": 1 << 30,
                }
            )
        ),
        ("trial.shm-too-small", "fail"),
    ),
    (_pod(_line(shm={"status": "absent", "path": "/dev/shm"})), ("trial.shm-missing", "warn")),
    (_pod(str(EVIDENCE["shm_small_mount"][1])), ("trial.space-ran-out", "fail")),
    (
        _pod(states=(ContainerState(POD, "t", terminated="Error", exit_code=135),)),
        ("trial.bus-error", "fail"),
    ),
    (
        _pod(_line(data={"status": "ok", "path": "/data", "mib_per_s": 4.0})),
        ("trial.data-slow", "warn"),
    ),
    (_pod(_line(data={"status": "empty", "path": "/data"})), ("trial.data-empty", "warn")),
    (_pod(_line(data={"status": "absent", "path": "/data"})), ("trial.data-missing", "fail")),
    (
        _pod(
            _line(
                data={
                    "status": "unreadable",
                    "path": "/data",
                    "error": "OSError: [Errno 5] Input/output error",
                }
            )
        ),
        ("trial.data-unreadable", "fail"),
    ),
    (
        _pod(
            _line(
                tcp={
                    "status": "unreachable",
                    "role": "worker",
                    "address": "10.0.0.4",
                    "port": 29500,
                }
            )
        ),
        ("trial.rank0-unreachable", "fail"),
    ),
    (
        _pod(_line(tcp={"status": "incomplete", "role": "rank0", "expected": 1, "joined": 0})),
        ("trial.workers-missing", "fail"),
    ),
    (_collective(EVIDENCE["nccl_2ranks_same_gpu"][1]["error"]), ("trial.duplicate-gpu", "fail")),
    (
        _collective(EVIDENCE["gloo_peer_never_comes"]["error"]),
        ("trial.collective-timed-out", "fail"),
    ),
    (
        _collective("DistBackendError: NCCL error: unhandled system error"),
        ("trial.collective-failed", "fail"),
    ),
    (
        TrialRun(
            refused=CantRead(
                ReadFailure.FORBIDDEN,
                "create pod: no permission; needs create pods in namespace ml",
                server_message=f'pods "{POD}" is forbidden: exceeded quota: gpus',
            ),
            refused_pod=POD,
        ),
        ("trial.refused", "unknown"),
    ),
    (
        # The Priority plugin's refusal of the trial pod's own `preemptionPolicy: Never`
        # (plugin/pkg/admission/priority/admission.go admitPod).
        TrialRun(
            refused=CantRead(
                ReadFailure.FORBIDDEN,
                "create pod: refused",
                server_message=f'pods "{POD}" is forbidden: the string value of '
                "PreemptionPolicy (Never) must not be provided in pod spec; priority admission "
                "controller computed PreemptLowerPriority from the given PriorityClass name",
            ),
            refused_pod=POD,
        ),
        ("trial.would-preempt", "unknown"),
    ),
    (
        TrialRun(
            refused=CantRead(
                ReadFailure.FORBIDDEN,
                "create pod: no permission; needs create pods in namespace ml",
                server_message='pods is forbidden: User "u" cannot create resource "pods"',
            ),
            refused_pod=POD,
        ),
        ("trial.not-allowed", "unknown"),
    ),
    (
        TrialRun(refused=CantRead(ReadFailure.TIMEOUT, "create pod: no answer in time")),
        ("trial.no-answer", "unknown"),
    ),
    (
        TrialRun(not_deleted=((POD, CantRead(ReadFailure.TIMEOUT, "delete pod")),)),
        ("trial.not-deleted", "warn"),
    ),
    (
        _pod(_line(shm={"status": "ok", "path": "/dev/shm", "size_bytes": 1 << 30})),
        ("trial.ok", "ok"),
    ),
    (
        TrialRun(
            pods=(
                TrialPod(
                    pod=POD,
                    ended_by_timeout=True,
                    unplaced="0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                ),
            )
        ),
        ("trial.not-placed", "unknown"),
    ),
    (
        TrialRun(
            pods=(
                TrialPod(
                    pod=POD,
                    ended_by_timeout=True,
                    unplaced="Scheduling is blocked due to non-empty scheduling gates",
                    gates=("kueue.x-k8s.io/admission",),
                ),
            )
        ),
        ("trial.waited-for-queue", "unknown"),
    ),
    (
        TrialRun(
            pods=(
                TrialPod(
                    pod=POD,
                    ended_by_timeout=True,
                    unplaced="Scheduling is blocked due to non-empty scheduling gates",
                    gates=("example.com/hold",),
                ),
            )
        ),
        ("trial.held-back", "unknown"),
    ),
    (
        # A snapshot taken with --trial whose record of it is missing or damaged.
        CantRead(ReadFailure.MALFORMED, "the snapshot holds no readable record of the trial"),
        ("trial.not-saved", "unknown"),
    ),
]


def test_every_trial_code_comes_from_its_read_back() -> None:
    for run, expected in CASES:
        assert _codes(run) == [expected], expected
    trial_codes = {code for code in WORDING if code.startswith("trial.")}
    # Said where no trial ran, since which job to try was not known: no read back to judge
    # (tests/scenario/test_trial.py, a list of training jobs refused).
    assert {code for _, (code, _) in CASES} == trial_codes - {"trial.cant-read"}


DOCS = Path(__file__).parents[2] / "docs" / "trial.md"


def _documented() -> dict[str, str]:
    """docs/trial.md's findings table: each code to its row's status cell."""
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("## The findings") :].split("\n\n")[1]
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    return {
        code: row[1]
        for row in rows
        for code in re.findall(r"`(trial\.[a-z0-9-]+)`", row[0].removeprefix("| "))
    }


def test_every_code_and_its_status_is_a_row_of_the_docs_findings_table() -> None:
    """The operator looks a code up in docs/trial.md: each the check gives is there, with the
    status it has (the status cell names it), and the table names no code the check lacks."""
    documented = _documented()
    for _, (code, status) in CASES:
        assert code in documented, f"{code} is not in docs/trial.md's findings table"
        assert status in documented[code], (code, status, documented[code])
    trial_codes = {code for code in WORDING if code.startswith("trial.")}
    assert set(documented) == trial_codes


def test_the_source_s_words_are_kept_for_verbose() -> None:
    [duplicate] = _findings(_collective(EVIDENCE["nccl_2ranks_same_gpu"][0]["error"]))
    assert duplicate.details == (
        f"{POD}: Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60",
    )
    assert duplicate.objects == (f"Pod/{POD}",)
    [timed_out] = _findings(_collective(EVIDENCE["gloo_peer_never_comes"]["error"]))
    assert timed_out.headline == "The workers' first exchange timed out: 1 of 2 joined."


def test_what_went_right_is_one_line() -> None:
    line = _line(
        shm={"status": "ok", "path": "/dev/shm", "size_bytes": EVIDENCE["dev_shm_bytes"]},
        gpu=_gpu(1, device_count=1, devices=[{"index": 0, "name": "NVIDIA H200"}]),
    )
    pulled = KubeletEvent(
        POD,
        "Pulled",
        f'Successfully pulled image "{IMAGE}" in 8.2s (8.25s including waiting). '
        "Image size: 2147483648 bytes.",
    )
    [ok] = _findings(_pod(line, events=(pulled,)))
    assert ok.headline == (
        "The trial start of the training job measured: the image came in 8.2 s; 1 GPUs seen; "
        "shared memory 128.0 GiB."
    )


def test_gpus_a_device_claim_gives_without_a_fixed_number_are_said_as_a_floor() -> None:
    """The job's device claim asks for every GPU of a kind on its machine (`allocationMode:
    All`, at least one), so the probe was told the fewest (the pod's
    `truegreen.io/trial-gpus-at-least`): fewer than that is still measured short, and the GPUs
    seen are never called all it asked for."""
    h200 = [{"index": i, "name": "NVIDIA H200"} for i in range(8)]
    seen = _line(gpu=_gpu(1, device_count=8, devices=h200))
    [ok] = _findings(_pod(seen, gpus_at_least=True))
    assert ok.headline == (
        "The trial start of the training job measured: 8 GPUs seen (the job asks for at least "
        "1: how many it gets is not fixed ahead)."
    )
    [short] = _findings(_pod(_line(gpu=_gpu(2, device_count=1)), gpus_at_least=True))
    assert short.headline == "The training program sees 1 GPUs, though it asked for at least 2."
    [exact] = _findings(_pod(_line(gpu=_gpu(2, device_count=1))))
    assert exact.headline == "The training program sees 1 GPUs, though it asked for 2."


def test_a_worker_told_to_wait_until_rank_0_came_measured_the_network() -> None:
    """The worker started 30 s before rank 0 (its machine had the image; rank 0's downloaded
    it) and was told to go on trying until a moment after rank 0's start (its
    TRUEGREEN_PROBE_WAIT_UNTIL): the two waited at the same time, so the refused connection is
    the network's failure. Without that moment, the same starts are `not-together`."""
    rank0_start, worker_start = 1_796_612_164.0, 1_796_612_134.0
    rank0 = TrialPod(
        pod=POD,
        log=_line(world=2, tcp={"status": "incomplete", "role": "rank0", "expected": 1}),
        states=(ContainerState(POD, "trainer", started_at=rank0_start),),
        wait_seconds=290,
    )
    worker = TrialPod(
        pod=POD.replace("-0", "-1"),
        log=_line(world=2, rank=1, tcp={"status": "unreachable", "error": "refused"}),
        states=(ContainerState(POD, "trainer", started_at=worker_start),),
        wait_seconds=10,
    )
    told = replace(worker, wait_until=int(rank0_start) + 20)
    assert sorted(_codes(TrialRun(pods=(rank0, told)))) == [
        ("trial.rank0-unreachable", "fail"),
        ("trial.workers-missing", "fail"),
    ]
    [apart] = _findings(TrialRun(pods=(rank0, worker)))
    assert apart.code == "trial.not-together"
    late = replace(worker, wait_until=int(rank0_start) - 5)
    [still_apart] = _findings(TrialRun(pods=(rank0, late)))
    assert still_apart.details == (
        f"{POD}: {POD} started at 02:56:04 and waited 290 s; {worker.pod} started at 02:55:34 "
        "and waited until 02:55:59",
    )


def test_a_wait_ends_no_later_than_its_probe_s_run() -> None:
    """Rank 0 was told to listen 290 s, but its run had to end 20 s after its start (the
    trial's end on the API server's clock, TRUEGREEN_PROBE_END_AT: its image came late), and
    the probe stops every wait at its run's end. A worker that started 30 s after rank 0 found
    nobody listening: no measurement of the network, never `rank0-unreachable`."""
    rank0_start = 1_796_612_134.0
    rank0 = TrialPod(
        pod=POD,
        log=_line(world=2, tcp={"status": "incomplete", "role": "rank0", "expected": 1}),
        states=(ContainerState(POD, "trainer", started_at=rank0_start),),
        wait_seconds=290,
        run_seconds=295,
        end_at=int(rank0_start) + 20,
    )
    worker = TrialPod(
        pod=POD.replace("-0", "-1"),
        log=_line(world=2, rank=1, tcp={"status": "unreachable", "error": "refused"}),
        states=(ContainerState(POD, "trainer", started_at=rank0_start + 30),),
        wait_seconds=10,
    )
    [apart] = _findings(TrialRun(pods=(rank0, worker)))
    assert apart.code == "trial.not-together"
    assert apart.details == (
        f"{POD}: {POD} started at 02:55:34 and waited until 02:55:54; {worker.pod} started at "
        "02:56:04 and waited 10 s",
    )
    told_longer = replace(rank0, end_at=int(rank0_start) + 60)
    assert sorted(_codes(TrialRun(pods=(told_longer, worker)))) == [
        ("trial.rank0-unreachable", "fail"),
        ("trial.workers-missing", "fail"),
    ], "rank 0 was still listening when the worker started"


def test_a_worker_never_placed_is_the_finding_not_rank_0_s_wait_for_it() -> None:
    """Rank 0 ran and waited for a worker that no machine took (the job's two machines were
    not free): its `workers-missing` is that wait, not a network that keeps the workers apart."""
    rank0 = TrialPod(
        pod=POD,
        log=_line(tcp={"status": "incomplete", "role": "rank0", "expected": 1, "joined": 0}),
    )
    assert _codes(TrialRun(pods=(rank0,))) == [("trial.workers-missing", "fail")], (
        "precondition: alone, rank 0's wait is a finding"
    )
    worker = TrialPod(
        pod=POD.replace("-0", "-1"),
        ended_by_timeout=True,
        unplaced="0/3 nodes are available: 1 node(s) didn't match pod anti-affinity rules.",
    )
    assert _codes(TrialRun(pods=(rank0, worker))) == [("trial.not-placed", "unknown")]


def test_a_slow_dataset_says_how_it_was_slow() -> None:
    """Below the rate, cut by the probe's deadline, or no answer at all: each headline says
    which, never a rate below the bound that was not measured."""
    base = {"status": "ok", "path": "/data", "bytes_read": 3 << 20, "mib_per_s": 75.0}
    cut = _findings(_pod(_line(data={**base, "mib_per_s": 12.0, "stopped_at_deadline": True})))
    slow = _findings(_pod(_line(data={**base, "mib_per_s": 4.2, "bytes_read": 64 << 20})))
    silent = _findings(_pod(_line(data={"status": "timed-out", "path": "/data"})))
    assert [f.headline for f in (*cut, *slow, *silent)] == [
        "The dataset could not be read fast enough: the probe's deadline came after 3 MiB "
        "(12 MiB/s).",
        "The dataset could not be read fast enough: 4.2 MiB/s, below 50 MiB/s.",
        "The dataset could not be read fast enough: no answer before the probe's deadline.",
    ]


def test_the_pods_a_delete_left_are_removed_by_their_run_s_label() -> None:
    """The remedy deletes this run's pods by its own label, which also takes a pod the cluster
    stores after the trial stopped looking; never every pod with the trial label: another
    run's live trial pods carry that label too. A snapshot that kept no run id: by name."""
    left = ((POD, CantRead(ReadFailure.TIMEOUT, "delete pod")),)
    [by_label] = _findings(TrialRun(not_deleted=left, run="0e20"))
    assert (
        by_label.remedy
        == "Delete them with `kubectl -n ml delete pod -l truegreen.io/trial-run=0e20`."
    )
    [by_name] = _findings(TrialRun(not_deleted=left))
    assert by_name.remedy == f"Delete them with `kubectl -n ml delete pod {POD}`."


def test_a_refusal_naming_the_trial_pod_is_the_cluster_s_word_not_a_missing_permission() -> None:
    """A webhook, a quota or the security level refuses the pod by name (`pods "<name>" is
    forbidden: …`: apimachinery errors.go NewForbidden, webhook/errors/statuserror.go); the
    login's refusal names none (responsewriters/errors.go forbiddenMessage). Only the second
    is a grant to ask for."""
    said = f'pods "{POD}" is forbidden: admission webhook "p.example.com" denied the request: no'
    refused = CantRead(ReadFailure.FORBIDDEN, "create pod: no permission", server_message=said)
    [pod] = _findings(TrialRun(refused=refused, refused_pod=POD))
    assert (pod.code, pod.details) == ("trial.refused", (said,))
    assert "Grant" not in pod.remedy
    [login] = _findings(TrialRun(refused=refused, refused_pod="truegreen-trial-llama-0e20-1"))
    assert login.code == "trial.not-allowed", "a refusal naming another pod is not this one's"
    assert login.remedy.startswith("Grant the rights docs/trial.md lists")


def test_a_create_with_no_answer_is_never_worded_a_refusal() -> None:
    [none] = _findings(
        TrialRun(refused=CantRead(ReadFailure.TIMEOUT, "create pod: no answer in time"))
    )
    assert none.code == "trial.no-answer"
    assert "refused" not in none.headline
    assert none.details == ("create pod: no answer in time",), "no empty line for no words"


WORKER = POD.replace("-0", "-1")
START = 1_796_612_134.0
"""A container's `startedAt` (2026-12-07T03:35:34Z) in POSIX seconds."""


def _ran(pod: str, started: float, terminated: str = "") -> ContainerState:
    """The trainer container as the kubelet reports a program that started: `running` (or
    `terminated`) with its `startedAt` (pkg/kubelet/kubelet_pods.go
    convertToAPIContainerStatuses)."""
    code = 0 if terminated else None
    return ContainerState(pod, "trainer", terminated=terminated, exit_code=code, started_at=started)


def _rank0_alone(world: int) -> TrialPod:
    tcp = {"status": "incomplete", "role": "rank0", "expected": world - 1, "joined": 0}
    return TrialPod(pod=POD, log=_line(world=world, tcp=tcp))


def test_a_worker_still_downloading_its_image_is_the_finding_not_rank_0_s_wait() -> None:
    """The worker's machine was still pulling the image when the trial's time ran out (Pulling,
    no Pulled; the container `ContainerCreating`, pkg/kubelet/kubelet_pods.go
    convertToAPIContainerStatuses): its program never ran, so rank 0's wait for it is no
    measurement of the network."""
    worker_name = POD.replace("-0", "-1")
    worker = TrialPod(
        pod=worker_name,
        events=(KubeletEvent(worker_name, "Pulling", f'Pulling image "{IMAGE}"'),),
        states=(ContainerState(worker_name, "trainer", waiting="ContainerCreating"),),
        ended_by_timeout=True,
    )
    assert _codes(TrialRun(pods=(_rank0_alone(2), worker))) == [("trial.still-pulling", "fail")]


def test_a_worker_never_created_leaves_rank_0_s_wait_out() -> None:
    """Rank 0 told of two workers, the second never created (the trial ended first): its wait
    for it measured no network. Alone with a world of one, nothing is left out."""
    assert ("trial.workers-missing", "fail") not in _codes(TrialRun(pods=(_rank0_alone(2),)))
    rank0 = msgspec.structs.replace(
        _rank0_alone(2), states=(_ran(POD, START, "Completed"),), wait_seconds=290
    )
    both = TrialPod(
        pod=WORKER,
        log=_line(world=2, rank=1, tcp={"status": "unreachable", "role": "worker"}),
        states=(_ran(WORKER, START + 1, "Completed"),),
        wait_seconds=10,
    )
    assert _codes(TrialRun(pods=(rank0, both))) == [
        ("trial.workers-missing", "fail"),
        ("trial.rank0-unreachable", "fail"),
    ], "both ran their probes: the network was measured"


def _firewalled_worker(started: float) -> TrialPod:
    """A worker whose 10 s of tries were refused: its line, its container `Completed`."""
    tcp = {"status": "unreachable", "role": "worker", "address": "10.4.0.7", "port": 29500}
    return TrialPod(
        pod=WORKER,
        log=_line(world=2, rank=1, tcp={**tcp, "error": "ConnectionRefusedError: refused"}),
        states=(_ran(WORKER, started, "Completed"),),
        wait_seconds=10,
    )


def test_a_worker_refused_while_rank_0_still_listens_is_a_measured_failure() -> None:
    """Rank 0's image took long: its program still listens (its container `running` since
    START) when the trial's time runs out, no line yet. The worker started 2 s later, was
    refused for its 10 s and said so: rank 0 was there to reach, so the refusal is the
    network's, a measured failure, not hidden behind rank 0's missing line."""
    rank0 = TrialPod(pod=POD, states=(_ran(POD, START),), ended_by_timeout=True, wait_seconds=290)
    assert _codes(TrialRun(pods=(rank0, _firewalled_worker(START + 2)))) == [
        ("trial.no-probe-line", "unknown"),
        ("trial.rank0-unreachable", "fail"),
    ]


def test_a_worker_that_gave_up_before_rank_0_started_measured_no_network() -> None:
    """The worker's machine had the image, rank 0's downloaded it for 30 s: the worker's 10 s
    of tries ended before rank 0's program started (the kubelet's `startedAt`s), so neither
    wait measured the network, and nothing says it is reachable: unknown, with the times."""
    rank0 = TrialPod(
        pod=POD,
        log=_rank0_alone(2).log,
        states=(_ran(POD, START + 30, "Completed"),),
        wait_seconds=290,
    )
    [apart] = _findings(TrialRun(pods=(rank0, _firewalled_worker(START))))
    assert (apart.code, apart.status.value) == ("trial.not-together", "unknown")
    assert apart.details == (
        f"{POD}: {POD} started at 02:56:04 and waited 290 s; "
        f"{WORKER} started at 02:55:34 and waited 10 s",
    )


def test_a_worker_that_started_after_rank_0_stopped_listening_measured_no_network() -> None:
    """Rank 0 listened 290 s from its start; the worker started 300 s after it: its refusal
    met a port rank 0 had closed, not the network."""
    rank0 = TrialPod(
        pod=POD, log=_rank0_alone(2).log, states=(_ran(POD, START, "Completed"),), wait_seconds=290
    )
    assert _codes(TrialRun(pods=(rank0, _firewalled_worker(START + 300)))) == [
        ("trial.not-together", "unknown")
    ]
    assert _codes(TrialRun(pods=(rank0, _firewalled_worker(START + 5)))) == [
        ("trial.workers-missing", "fail"),
        ("trial.rank0-unreachable", "fail"),
    ], "waiting at the same time: measured"
