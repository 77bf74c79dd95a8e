"""Reading a trial pod back: the kubelet's events, the container statuses and the probe's line,
each in its real shape, turned into findings.

The error texts are the real ones a NVIDIA H200 machine printed
(tests/trial_evidence/gpu-h200-first-seconds.json, copied from /work/shared/evidence/); the
event messages follow pkg/kubelet/images/image_manager.go and
pkg/kubelet/kuberuntime/kuberuntime_manager.go.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from truegreen.goduration import go_duration
from truegreen.trial.outcomes import Level, Outcome
from truegreen.trial.readback import (
    NOT_PLACED_IN_TIME,
    WORDS_LIMIT,
    ContainerState,
    KubeletEvent,
    TrialFinding,
    TrialPod,
    TrialRun,
    TurnedAway,
    container_states,
    kubelet_events,
    pod_findings,
    probe_report,
)
from truegreen.trial.record import from_record, to_record
from truegreen.trial.run import LOG_FORBIDDEN

EVIDENCE = json.loads(
    (Path(__file__).parents[1] / "trial_evidence" / "gpu-h200-first-seconds.json").read_text()
)
POD = "train-trial-0"
IMAGE = "ghcr.io/acme/train:2.11"


def _line(**parts: Any) -> str:
    return json.dumps({"probe_schema": 1, "runtime": "python", **parts})


def _torch(**library: Any) -> dict[str, Any]:
    return {"name": "torch", "status": "ok", "version": "2.11.0+cu130", **library}


def _gpu(requested: int, library: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": library["status"],
        "requested": requested,
        "library": "torch",
        "libraries": [library],
        "driver": {"version": "580.159.04", "nvidia_smi": True},
    }


def _findings(log: str = "", **pod: Any) -> list[TrialFinding]:
    return pod_findings(TrialPod(pod=POD, log=log, **pod))


def _only(findings: list[TrialFinding], outcome: Outcome) -> TrialFinding:
    chosen = [f for f in findings if f.outcome is outcome]
    assert len(chosen) == 1, f"expected one {outcome}, found {findings}"
    return chosen[0]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15.981s", 15.981),
        ("2m3.5s", 123.5),
        ("1h0m0s", 3600.0),
        ("19m58.004s", 1198.004),
        ("500ms", 0.5),
        ("0s", 0.0),
        ("1.5µs", 1.5e-6),
        ("30m", 1800.0),
        ("1.5h", 5400.0),
        ("soon", None),
        ("3s later", None),
        ("", None),
    ],
)
def test_go_durations_read_as_seconds(text: str, seconds: float | None) -> None:
    assert go_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def _pulled(message: str) -> list[TrialFinding]:
    events = (
        KubeletEvent(POD, "Scheduled", f"Successfully assigned ml/{POD} to gpu-1"),
        KubeletEvent(POD, "Pulling", f'Pulling image "{IMAGE}"'),
        KubeletEvent(POD, "Pulled", message),
    )
    # The probe's line, with every part skipped: only the pull is judged.
    return _findings(_line(), events=events)


def test_a_pull_past_the_threshold_is_a_warning_with_its_time_and_size() -> None:
    message = (
        f'Successfully pulled image "{IMAGE}" in 19m41.2s (19m58.004s including waiting). '
        "Image size: 17179869184 bytes."
    )
    assert _pulled(message) == [
        TrialFinding(
            Outcome.IMAGE_PULL_SLOW,
            Level.WARNING,
            POD,
            message,
            value=19 * 60.0 + 58.004,  # 19m58.004s, summed as Go writes it
            limit=120.0,
            size_bytes=17179869184,
        )
    ]


def test_a_quick_pull_and_an_image_already_there_are_fine() -> None:
    quick = (
        f'Successfully pulled image "{IMAGE}" in 8.2s (8.25s including waiting). '
        "Image size: 2147483648 bytes."
    )
    found = _only(_pulled(quick), Outcome.IMAGE_PULLED)
    assert (found.level, found.value, found.size_bytes) == (Level.OK, 8.25, 2147483648)
    waited = f'Successfully pulled image "{IMAGE}" in 7.46s (7.5s including waiting)'  # 1.28, 1.29
    found = _only(_pulled(waited), Outcome.IMAGE_PULLED)
    assert (found.value, found.size_bytes) == (7.5, None)
    slow = f'Successfully pulled image "{IMAGE}" in 19m41.2s (19m58.004s including waiting)'
    found = _only(_pulled(slow), Outcome.IMAGE_PULL_SLOW)
    assert (found.level, found.value, found.size_bytes) == (Level.WARNING, 1198.004, None)
    older = f'Successfully pulled image "{IMAGE}" in 15.981s'  # before Kubernetes 1.28
    found = _only(_pulled(older), Outcome.IMAGE_PULLED)
    assert (found.value, found.size_bytes) == (15.981, None)
    present = f'Container image "{IMAGE}" already present on machine'
    assert _only(_pulled(present), Outcome.IMAGE_PRESENT).level is Level.OK


def test_still_pulling_when_the_trial_s_time_ran_out() -> None:
    events = (KubeletEvent(POD, "Pulling", f'Pulling image "{IMAGE}"'),)
    assert _findings(events=events, ended_by_timeout=True) == [
        TrialFinding(Outcome.STILL_PULLING, Level.FAIL, POD)
    ]
    assert _findings(events=events, ended_by_timeout=False) == [
        TrialFinding(
            Outcome.NO_PROBE_LINE, Level.UNKNOWN, POD, "the trial pod ended without a report"
        )
    ], "a pod that ended with no container status measured nothing"


INIT_IMAGE = "registry.example.com/tools/fetch-config:1.0"


def _on(container: str, reason: str, message: str, kind: str = "Normal") -> dict[str, Any]:
    """A kubelet Event on one container of the trial pod, named as
    pkg/kubelet/container/ref.go fieldPath names it (`spec.containers{NAME}`,
    `spec.initContainers{NAME}`)."""
    field_path = (
        "spec.containers{trainer}"
        if container == "trainer"
        else f"spec.initContainers{{{container}}}"
    )
    return {
        "kind": "Event",
        "involvedObject": {"kind": "Pod", "name": POD, "fieldPath": field_path},
        "reason": reason,
        "message": message,
        "type": kind,
    }


def _came(image: str, total: str) -> str:
    return (
        f'Successfully pulled image "{image}" in {total} ({total} including waiting). '
        "Image size: 5242880 bytes."
    )


def test_an_init_container_s_image_is_not_the_training_image() -> None:
    """The job's init container pulls its own image first (kuberuntime_manager.go
    computePodActions starts the main container after it): its quick pull is not the training
    image's, whose pull had not ended when the trial's time ran out. Judged by the image the
    Event names, or, where the pod was not read back, by the container it is on."""
    events = kubelet_events(
        [
            _on("fetch-config", "Pulling", f'Pulling image "{INIT_IMAGE}"'),
            _on("fetch-config", "Pulled", _came(INIT_IMAGE, "1.204s")),
            _on("trainer", "Pulling", f'Pulling image "{IMAGE}"'),
        ]
    )
    for image in (IMAGE, ""):
        found = _findings(events=tuple(events), ended_by_timeout=True, image=image)
        assert found == [TrialFinding(Outcome.STILL_PULLING, Level.FAIL, POD)], image
    # The init container's image still coming: the training image was never asked for.
    initializing = ContainerState(POD, "trainer", waiting="PodInitializing")
    found = _findings(
        events=tuple(events[:1]), states=(initializing,), ended_by_timeout=True, image=IMAGE
    )
    assert found == [
        TrialFinding(
            Outcome.NO_PROBE_LINE,
            Level.UNKNOWN,
            POD,
            "the trial pod was still being created (PodInitializing) when the trial's time ran out",
        )
    ]


def test_an_init_container_of_the_training_image_is_the_training_image_coming() -> None:
    """An init container of the training image pulls it (image_manager.go names the image
    the container states): that pull is the training image's, still downloading when the time
    ran out, or the time it took; the trainer then finds it already there, the same
    download."""
    pulling = _on("prepare", "Pulling", f'Pulling image "{IMAGE}"')
    stalled = _findings(events=tuple(kubelet_events([pulling])), ended_by_timeout=True, image=IMAGE)
    assert stalled == [TrialFinding(Outcome.STILL_PULLING, Level.FAIL, POD)]
    came = kubelet_events(
        [
            pulling,
            _on("prepare", "Pulled", _came(IMAGE, "41.5s")),
            _on("trainer", "Pulled", f'Container image "{IMAGE}" already present on machine'),
        ]
    )
    found = _findings(_line(), events=tuple(came), image=IMAGE)
    assert [(f.outcome, f.value) for f in found] == [(Outcome.IMAGE_PULLED, 41.5)]


def test_an_init_container_s_image_that_fails_keeps_the_program_from_starting() -> None:
    """The kubelet's whole sequence for an init container's image the registry refuses
    (image_manager.go; kuberuntime_container.go startContainer's "Error: %v" after each; the
    init container waiting ErrImagePull, then ImagePullBackOff): the training program never
    starts, said once in the registry's words, never as the training image's failure."""
    refused = f'Failed to pull image "{INIT_IMAGE}": rpc error: code = NotFound desc = not found'
    events = kubelet_events(
        [
            _on("fetch-config", "Pulling", f'Pulling image "{INIT_IMAGE}"'),
            _on("fetch-config", "Failed", refused, "Warning"),
            _on("fetch-config", "Failed", "Error: ErrImagePull", "Warning"),
            _on("fetch-config", "BackOff", f'Back-off pulling image "{INIT_IMAGE}"'),
            _on("fetch-config", "Failed", "Error: ImagePullBackOff", "Warning"),
        ]
    )
    waiting = {
        "metadata": {"name": POD},
        "status": {
            "phase": "Pending",
            "initContainerStatuses": [
                {
                    "name": "fetch-config",
                    "state": {"waiting": {"reason": "ImagePullBackOff", "message": refused}},
                }
            ],
            "containerStatuses": [
                {"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}
            ],
        },
    }
    states = tuple(container_states(waiting))
    for image in (IMAGE, ""):
        found = _findings(events=tuple(events), states=states, ended_by_timeout=True, image=image)
        assert found == [TrialFinding(Outcome.NOT_STARTED, Level.FAIL, POD, refused)], image
    found = _findings(states=states, ended_by_timeout=True, image=IMAGE)
    assert found == [
        TrialFinding(
            Outcome.NOT_STARTED, Level.FAIL, POD, f"fetch-config: ImagePullBackOff: {refused}"
        )
    ], "the container's status alone says it too"


def test_a_container_that_could_not_start_keeps_the_kubelet_s_words() -> None:
    mount = 'MountVolume.SetUp failed for volume "dataset" : mount failed: exit status 32'
    sandbox = (
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network "
        'for sandbox "4f1c": plugin type="calico" failed (add): connection refused'
    )
    pull = f'Failed to pull image "{IMAGE}": rpc error: code = NotFound desc = not found'
    events = (
        KubeletEvent(POD, "FailedMount", mount, "Warning"),
        KubeletEvent(POD, "FailedCreatePodSandBox", sandbox, "Warning"),
        KubeletEvent(POD, "Failed", pull, "Warning"),
        KubeletEvent(POD, "BackOff", f'Back-off pulling image "{IMAGE}"'),
        KubeletEvent("another-pod", "FailedMount", mount, "Warning"),
    )
    # The back-off repeats the failed pull (pkg/kubelet/images/image_manager.go): one cause,
    # said once in the words that carry the registry's.
    assert [(f.outcome, f.words) for f in _findings(events=events)] == [
        (Outcome.NOT_STARTED, mount),
        (Outcome.NOT_STARTED, sandbox),
        (Outcome.IMAGE_PULL_FAILED, pull),
    ]


def test_a_step_the_kubelet_got_past_on_a_later_try_is_a_note_not_a_failure() -> None:
    """The kubelet retries a refused pull, a mount and a sandbox in the pod's next sync
    (image_manager.go EnsureImageExists; kubelet.go SyncPod; kuberuntime_manager.go SyncPod),
    and its Warnings stay. What it did at last is the measurement: the image that came clears
    its refused pull, a container that started clears the mount and the sandbox; a step never
    got past stays a failure, and a crash after a start is never a step got past."""
    refused = f'Failed to pull image "{IMAGE}": 429 Too Many Requests'
    mount = 'MountVolume.MountDevice failed for volume "pvc-6d0a" : rpc error: code = Aborted'
    config = 'Error: configmap "train-config" not found'
    failed_pull = [
        _on("trainer", "Pulling", f'Pulling image "{IMAGE}"'),
        _on("trainer", "Failed", refused, "Warning"),
        _on("trainer", "Failed", "Error: ErrImagePull", "Warning"),
        _on("trainer", "BackOff", f'Back-off pulling image "{IMAGE}"'),
        _on("trainer", "Failed", "Error: ImagePullBackOff", "Warning"),
    ]
    came = _on("trainer", "Pulled", _came(IMAGE, "1.31s"))
    # The image came, then the container could not be made: the failure is that, once.
    stuck = ContainerState(POD, "trainer", waiting="CreateContainerConfigError", message=config)
    events = kubelet_events([*failed_pull, came, _on("trainer", "Failed", config, "Warning")])
    found = _findings(events=tuple(events), states=(stuck,), image=IMAGE)
    assert [(f.outcome, f.level, f.words) for f in found] == [
        (Outcome.IMAGE_PULLED, Level.OK, _came(IMAGE, "1.31s")),
        (Outcome.NOT_STARTED, Level.FAIL, config),
        (Outcome.START_RETRIED, Level.OK, refused),
    ]
    # Pulling again when the trial's time ran out: the refused pull was never got past.
    again = kubelet_events([*failed_pull, _on("trainer", "Pulling", f'Pulling image "{IMAGE}"')])
    found = _findings(events=tuple(again), ended_by_timeout=True, image=IMAGE)
    assert [(f.outcome, f.words) for f in found] == [(Outcome.IMAGE_PULL_FAILED, refused)]
    # The job's init container started after the mount failed once; the trainer never did.
    started = ContainerState(POD, "prepare", init=True, started_at=1_796_612_164.0)
    found = _findings(
        events=(KubeletEvent(POD, "FailedMount", mount, "Warning"),),
        states=(started, ContainerState(POD, "trainer", waiting="PodInitializing")),
        ended_by_timeout=True,
        image=IMAGE,
    )
    assert [f.outcome for f in found] == [Outcome.START_RETRIED, Outcome.NO_PROBE_LINE]
    # A native sidecar that crashed while the probe ran: no step of a start, still a failure.
    crashed = KubeletEvent(
        POD, "BackOff", f"Back-off restarting failed container proxy in pod {POD}", "Warning"
    )
    found = _findings(_line(), events=(crashed,), image=IMAGE)
    assert [(f.outcome, f.level) for f in found] == [(Outcome.NOT_STARTED, Level.FAIL)]


def test_container_statuses_in_their_api_shape() -> None:
    pod = {
        "metadata": {"name": POD},
        "status": {
            "containerStatuses": [
                {
                    "name": "trainer",
                    "state": {
                        "waiting": {
                            "reason": "CreateContainerConfigError",
                            "message": 'secret "wandb" not found',
                        }
                    },
                }
            ]
        },
    }
    states = container_states(pod)
    assert states == [
        ContainerState(
            POD, "trainer", waiting="CreateContainerConfigError", message='secret "wandb" not found'
        )
    ]
    assert [(f.outcome, f.words) for f in _findings(states=tuple(states))] == [
        (Outcome.NOT_STARTED, 'CreateContainerConfigError: secret "wandb" not found')
    ]


def test_events_in_their_api_shape() -> None:
    event = {
        "kind": "Event",
        "involvedObject": {"kind": "Pod", "name": POD, "fieldPath": "spec.containers{trainer}"},
        "reason": "Pulling",
        "message": f'Pulling image "{IMAGE}"',
        "type": "Normal",
        "source": {"component": "kubelet", "host": "gpu-1"},
    }
    assert kubelet_events([event]) == [
        KubeletEvent(POD, "Pulling", f'Pulling image "{IMAGE}"', container="trainer")
    ]


def test_the_h200_s_gpu_seen_and_one_too_few() -> None:
    device = EVIDENCE["devices"][0]  # {"name": "NVIDIA H200", "capability": "9.0", ...}
    library = _torch(
        device_count=1,
        devices=[{"index": 0, "name": device["name"], "capability": device["capability"]}],
    )
    one = _findings(_line(gpu=_gpu(1, library)))
    assert one == [TrialFinding(Outcome.GPUS_SEEN, Level.OK, POD, "NVIDIA H200", 1.0, 1.0)]
    two = _findings(_line(gpu=_gpu(2, library)))
    assert two == [TrialFinding(Outcome.FEWER_GPUS, Level.FAIL, POD, "NVIDIA H200", 1.0, 2.0)]


def _last_line(evidence: list[Any]) -> str:
    """The last line of a `[exit code, output tail]` pair of the evidence file."""
    return str(evidence[1]).strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (_last_line(EVIDENCE["no_visible_device"]), Outcome.NO_GPU),
        (
            # CUDA's own text for cudaErrorInsufficientDriver (cuda_runtime_api.h), as PyTorch
            # raises it from a CUDA call.
            "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime "
            "version",
            Outcome.DRIVER_TOO_OLD,
        ),
        (
            # c10/cuda/CUDAFunctions.cpp, case cudaErrorInsufficientDriver.
            "RuntimeError: The NVIDIA driver on your system is too old (found version 12080). "
            "Please update your GPU driver by downloading and installing a new version",
            Outcome.DRIVER_TOO_OLD,
        ),
        ("RuntimeError: CUDA error: out of memory", Outcome.GPU_LIBRARY_FAILED),
    ],
)
def test_cuda_start_errors_in_the_library_s_words(error: str, outcome: Outcome) -> None:
    library = _torch(status="error", error=error, device_count=0)
    assert _findings(_line(gpu=_gpu(1, library))) == [
        TrialFinding(outcome, Level.FAIL, POD, error, 0.0, 1.0)
    ]


def test_the_evidence_s_no_visible_device_line_is_torch_s() -> None:
    assert _last_line(EVIDENCE["no_visible_device"]) == ("RuntimeError: No CUDA GPUs are available")


def test_two_ranks_on_one_gpu_is_named_duplicate_gpu() -> None:
    error = EVIDENCE["nccl_2ranks_same_gpu"][0]["error"]
    collective = {"status": "error", "backend": "nccl", "world": 2, "error": error}
    assert _findings(_line(collective=collective)) == [
        TrialFinding(
            Outcome.DUPLICATE_GPU,
            Level.FAIL,
            POD,
            "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60",
        )
    ]


def test_a_peer_that_never_comes_is_counted_from_c10d_s_words() -> None:
    error = EVIDENCE["gloo_peer_never_comes"]["error"]
    collective = {"status": "error", "backend": "gloo", "world": 2, "error": error}
    assert _findings(_line(collective=collective)) == [
        TrialFinding(
            Outcome.COLLECTIVE_TIMED_OUT,
            Level.FAIL,
            POD,
            "DistStoreError: Timed out after 9 seconds waiting for clients. 1/2 clients joined.",
            1.0,
            2.0,
        )
    ]


def test_the_all_reduce_that_worked_gives_its_time() -> None:
    run = EVIDENCE["gloo_2ranks_64mib"][0]
    collective = {
        "status": "ok",
        "backend": "gloo",
        "world": 2,
        "init_s": run["init_s"],
        "allreduce_ms": run["allreduce_ms"],
        "correct": run["correct"],
    }
    assert _findings(_line(collective=collective)) == [
        TrialFinding(Outcome.COLLECTIVE_OK, Level.OK, POD, "gloo", 25.35)
    ]
    wrong = {**collective, "correct": False}
    assert _only(_findings(_line(collective=wrong)), Outcome.COLLECTIVE_FAILED).words == (
        "gloo: the sum came back wrong"
    )


def test_a_full_shm_in_the_log_is_named_in_the_kernel_s_words() -> None:
    log = str(EVIDENCE["shm_small_mount"][1])
    found = _findings(log)
    assert found == [
        TrialFinding(
            Outcome.SPACE_RAN_OUT, Level.FAIL, POD, "OSError: [Errno 28] No space left on device"
        )
    ]


def test_a_bus_error_exit_is_named() -> None:
    states = (ContainerState(POD, "trainer", terminated="Error", exit_code=135),)
    assert _findings(states=states) == [
        TrialFinding(Outcome.BUS_ERROR, Level.FAIL, POD, "Bus error", 135.0)
    ]


def test_shm_against_the_need_and_the_runtime_default() -> None:
    big = EVIDENCE["dev_shm_bytes"]  # 128 GiB on the H200 machine
    shm = {"status": "ok", "path": "/dev/shm", "size_bytes": big, "need_bytes": 1 << 30}
    assert _findings(_line(shm=shm)) == [
        TrialFinding(Outcome.SHM_ENOUGH, Level.OK, POD, "/dev/shm", float(big), float(1 << 30))
    ]
    small = {**shm, "size_bytes": 64 << 20}
    assert _findings(_line(shm=small)) == [
        TrialFinding(
            Outcome.SHM_TOO_SMALL, Level.FAIL, POD, "/dev/shm", float(64 << 20), float(1 << 30)
        )
    ]
    unstated = {**small, "need_bytes": 0}
    assert _findings(_line(shm=unstated)) == [
        TrialFinding(
            Outcome.SHM_DEFAULT_SIZE,
            Level.WARNING,
            POD,
            "/dev/shm",
            float(64 << 20),
            float(64 << 20),
        )
    ], "the runtime's default, no need stated: its own outcome, docs/trial.md's code"


def test_the_dataset_slow_empty_missing_unreadable() -> None:
    slow = {"status": "ok", "path": "/data", "bytes_read": 1 << 26, "mib_per_s": 4.2}
    assert _findings(_line(data=slow)) == [
        TrialFinding(Outcome.DATA_SLOW, Level.WARNING, POD, "/data", 4.2, 50.0)
    ]
    fast = {**slow, "mib_per_s": 900.0}
    assert _only(_findings(_line(data=fast)), Outcome.DATA_READ).level is Level.OK
    assert (
        _only(
            _findings(_line(data={"status": "absent", "path": "/data"})), Outcome.DATA_MISSING
        ).level
        is Level.FAIL
    )
    unreadable = {
        "status": "unreadable",
        "path": "/data",
        "error": "OSError: [Errno 5] Input/output error",
    }
    assert _only(_findings(_line(data=unreadable)), Outcome.DATA_UNREADABLE).words == (
        "OSError: [Errno 5] Input/output error"
    )


def test_workers_that_cannot_reach_rank_0() -> None:
    worker = {
        "status": "unreachable",
        "role": "worker",
        "address": "train-trial-0.ml",
        "port": 29500,
        "error": "TimeoutError: timed out",
    }
    assert _findings(_line(tcp=worker)) == [
        TrialFinding(
            Outcome.RANK0_UNREACHABLE,
            Level.FAIL,
            POD,
            "train-trial-0.ml:29500: TimeoutError: timed out",
        )
    ]
    # An IPv6 pod address in brackets, as a URL writes it: its last group is not the port.
    ipv6 = {**worker, "address": "fd00:10:244::7"}
    [unreachable] = _findings(_line(tcp=ipv6))
    assert unreachable.words == "[fd00:10:244::7]:29500: TimeoutError: timed out"
    rank0 = {"status": "incomplete", "role": "rank0", "port": 29500, "expected": 1, "joined": 0}
    assert _findings(_line(tcp=rank0)) == [
        TrialFinding(Outcome.WORKERS_MISSING, Level.FAIL, POD, "", 0.0, 1.0)
    ]
    reached = {
        "status": "ok",
        "role": "rank0",
        "expected": 2,
        "joined": 2,
        "peers": [
            {"rank": 1, "bytes": 1, "mib_per_s": 900.0},
            {"rank": 2, "bytes": 1, "mib_per_s": 310.5},
        ],
    }
    assert _findings(_line(tcp=reached)) == [
        TrialFinding(Outcome.WORKERS_REACHED, Level.OK, POD, value=310.5)
    ]


def test_the_probe_s_line_is_found_among_other_lines_and_other_schemas() -> None:
    line = _line(shm={"status": "absent", "path": "/dev/shm"})
    log = f"WARNING: something else\n{line}\n"
    assert [f.outcome for f in _findings(log)] == [Outcome.SHM_MISSING]
    assert probe_report('{"probe_schema": 2, "runtime": "python"}') is None
    assert probe_report('{"probe_schema": 1, "gpu": "not a part"}') is None
    assert _findings("python3: not found\n") == [
        TrialFinding(Outcome.NO_PROBE_LINE, Level.UNKNOWN, POD, "python3: not found")
    ]


def test_no_gpu_library_is_unknown_not_a_failure() -> None:
    gpu = {
        "status": "no-library",
        "requested": 1,
        "library": None,
        "libraries": [{"name": n, "status": "absent"} for n in ("torch", "jax", "cupy")],
        "driver": {
            "version": "580.159.04",
            "nvidia_smi": True,
            "nvidia_smi_gpus": ["NVIDIA H200, 580.159.04, 143771"],
        },
    }
    assert _findings(_line(gpu=gpu)) == [
        TrialFinding(Outcome.NO_GPU_LIBRARY, Level.UNKNOWN, POD, "driver 580.159.04", 1.0, 1.0)
    ]


RUNNING = ContainerState(POD, "trainer")
"""core/v1 ContainerStateRunning: neither waiting nor terminated."""


@pytest.mark.parametrize(
    ("pod", "words"),
    [
        (
            {"states": (RUNNING,), "ended_by_timeout": True},
            "the probe had not reported when the trial's time ran out",
        ),
        (
            {"states": (RUNNING,), "ended_by_timeout": True, "log": "loading torch\n"},
            "the probe had not reported when the trial's time ran out; its last line: "
            "loading torch",
        ),
        (
            {"states": (ContainerState(POD, "trainer", waiting="ContainerCreating"),)}
            | {"ended_by_timeout": True},
            "the trial pod was still being created (ContainerCreating) when the trial's time "
            "ran out",
        ),
        (
            {"ended_by_timeout": True},
            "the trial pod was still being created when the trial's time ran out",
        ),
        (
            {"states": (ContainerState(POD, "trainer", waiting="PodInitializing"),)},
            "the trial pod ended before its program started (PodInitializing)",
        ),
        (
            {"states": (ContainerState(POD, "trainer", terminated="Completed", exit_code=0),)},
            "the program ended and printed nothing",
        ),
        (
            {"unread": "the trial pod disappeared before its report was read"},
            "the trial pod disappeared before its report was read",
        ),
        ({"log": "python3: not found\n"}, "python3: not found"),
        (
            {
                "states": (ContainerState(POD, "trainer", terminated="Completed", exit_code=0),),
                "log_unread": "the trial pod's log could not be read: forbidden",
            },
            "the trial pod's log could not be read: forbidden",
        ),
        (
            {"states": (RUNNING,), "ended_by_timeout": True, "log_unread": "refused"},
            "refused",
        ),
    ],
)
def test_a_pod_that_left_no_probe_line_says_what_was_not_measured(
    pod: dict[str, Any], words: str
) -> None:
    """Green means measured green: a trial pod with no probe line and no failure measured is
    unknown, in words that say how far it got."""
    assert _findings(**pod) == [TrialFinding(Outcome.NO_PROBE_LINE, Level.UNKNOWN, POD, words)]


def test_a_pod_no_scheduler_placed_in_time_is_not_placed() -> None:
    """Pending with no `PodScheduled` condition and no machine when the time ran out (no
    scheduler took it): not placed, in the scheduler's words where it left any."""
    assert _findings(ended_by_timeout=True, unassigned=True) == [
        TrialFinding(Outcome.NOT_PLACED, Level.UNKNOWN, POD, NOT_PLACED_IN_TIME)
    ]
    refused = KubeletEvent(POD, "FailedScheduling", "0/3 nodes are available", "Warning")
    assert _findings(ended_by_timeout=True, unassigned=True, events=(refused,)) == [
        TrialFinding(Outcome.NOT_PLACED, Level.UNKNOWN, POD, "0/3 nodes are available")
    ]
    assert _findings(ended_by_timeout=False, unassigned=True) == [
        TrialFinding(
            Outcome.NO_PROBE_LINE, Level.UNKNOWN, POD, "the trial pod ended without a report"
        )
    ], "one that ended in time is no placement finding"


def test_a_dataset_read_cut_by_the_probe_s_deadline_is_slow_below_the_bound() -> None:
    """probe.py's data part stops at the probe's deadline and says so (`stopped_at_deadline`:
    fewer bytes read than asked when the deadline came), its rate the bytes read over the whole
    time it read: below the bound, the read did not finish in the time the trial had, which
    docs/trial.md calls data-slow. Above it, the read was fast and its time short (a probe that
    started near the trial's end, its deadline the trial's): that rate is the measurement."""
    cut = {
        "status": "ok",
        "path": "/data",
        "bytes_read": 3 << 20,
        "files": 1,
        "seconds": 0.25,
        "mib_per_s": 12.0,
        "limit_bytes": 64 << 20,
        "stopped_at_deadline": True,
    }
    assert _findings(_line(data=cut)) == [
        TrialFinding(Outcome.DATA_SLOW, Level.WARNING, POD, "/data", 12.0, 50.0, 3 << 20)
    ]
    fast = {**cut, "seconds": 0.04, "mib_per_s": 75.0}
    assert _findings(_line(data=fast)) == [
        TrialFinding(Outcome.DATA_READ, Level.OK, POD, "/data", 75.0, 50.0)
    ]
    whole = {**fast, "bytes_read": 64 << 20, "stopped_at_deadline": False}
    assert _findings(_line(data=whole)) == [
        TrialFinding(Outcome.DATA_READ, Level.OK, POD, "/data", 75.0, 50.0)
    ]


def test_a_pod_its_machine_turned_away_is_a_measured_failure_in_the_kubelets_words() -> None:
    """pkg/kubelet/kubelet.go `rejectPod`: the pod Failed with `status.reason` and
    `status.message` "Pod was rejected: ...", no container status; a snapshot keeps the same
    words and so the same verdict."""
    message = "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu,\n requested: 8"
    pod = TrialPod(POD, turned_away=TurnedAway("OutOfnvidia.com/gpu", message))
    expected = TrialFinding(
        Outcome.NOT_STARTED,
        Level.FAIL,
        POD,
        "the machine's kubelet failed the trial pod (OutOfnvidia.com/gpu): Pod was rejected: "
        "Node didn't have enough resource: nvidia.com/gpu, requested: 8",
    )
    assert pod_findings(pod) == [expected]
    saved = from_record(json.loads(json.dumps(to_record(TrialRun(pods=(pod,))))))
    assert isinstance(saved, TrialRun)
    assert pod_findings(saved.pods[0]) == [expected]
    bare = TrialPod(POD, turned_away=TurnedAway("NodeAffinity"))
    said = "the machine's kubelet failed the trial pod (NodeAffinity)"
    assert pod_findings(bare)[0].words == said
    long = pod_findings(TrialPod(POD, turned_away=TurnedAway("Evicted", "x" * 5000)))[0].words
    assert len(long) == WORDS_LIMIT
    assert long.endswith("…")
    # A failure the program measured stays the finding; the kubelet's words are not added.
    crashed = TrialPod(
        POD,
        states=(ContainerState(POD, "trial", terminated="Error", exit_code=1),),
        turned_away=TurnedAway("Evicted", "The node was low on resource: memory."),
    )
    assert [f.outcome for f in pod_findings(crashed)] == [Outcome.CONTAINER_ENDED]


RUNC_NO_SH = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: "
    'exec: "sh": executable file not found in $PATH: unknown'
)
"""containerd with runc, an image without `sh`: runc's `exec.LookPath` error
(libcontainer/standard_init_linux.go; Go os/exec ErrNotFound) in the task create."""
CRUN_NO_SH = (
    "crun: executable file `sh` not found in $PATH: No such file or directory: "
    "OCI runtime attempted to invoke a command that was not found"
)
"""CRI-O with crun (src/libcrun/container.c: "executable file `%s` not found in $PATH")."""


def _started(init: bool, state: dict[str, Any]) -> dict[str, Any]:
    """A trial pod whose trainer (or, `init`, the job's init container `fetch`) is in `state`;
    with an init container ending, the trainer waits as PodInitializing."""
    if init:
        return {
            "metadata": {"name": POD},
            "status": {
                "phase": "Failed",
                "initContainerStatuses": [{"name": "fetch", "state": state}],
                "containerStatuses": [
                    {"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}
                ],
            },
        }
    return {
        "metadata": {"name": POD},
        "status": {"phase": "Failed", "containerStatuses": [{"name": "trainer", "state": state}]},
    }


def _failed_event(field_path: str, words: str) -> dict[str, Any]:
    """The kubelet's Warning `Failed` "Error: %v" on a container it could not start
    (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer,
    events.FailedToStartContainer); the container named as pkg/kubelet/container/ref.go
    GenerateContainerRef names it."""
    return {
        "kind": "Event",
        "involvedObject": {"kind": "Pod", "name": POD, "fieldPath": field_path},
        "reason": "Failed",
        "message": f"Error: {words}",
        "type": "Warning",
    }


def test_a_probe_the_image_cannot_run_is_unknown_not_the_job_s_failure() -> None:
    """The trial pod's own command (`sh`, which starts python3 or probe.sh) missing from the
    image: containerd ends the container StartError, exit 128 (internal/cri/server/
    container_start.go errorStartReason, errorStartExitCode); CRI-O leaves it waiting as
    CreateContainerError. The job's program never ran: nothing of it was measured. The same
    words on the job's own init container are the job's failure."""
    start_error = {"terminated": {"exitCode": 128, "reason": "StartError", "message": RUNC_NO_SH}}
    trainer = _started(False, start_error)
    found = _findings(
        events=tuple(kubelet_events([_failed_event("spec.containers{trainer}", RUNC_NO_SH)])),
        states=tuple(container_states(trainer)),
    )
    assert [(f.outcome, f.level, f.words) for f in found] == [
        (
            Outcome.NO_PROBE_LINE,
            Level.UNKNOWN,
            f"the probe could not run in this image: {RUNC_NO_SH}",
        )
    ]
    create_error = {"waiting": {"reason": "CreateContainerError", "message": CRUN_NO_SH}}
    found = _findings(states=tuple(container_states(_started(False, create_error))))
    assert [(f.outcome, f.level, f.words) for f in found] == [
        (
            Outcome.NO_PROBE_LINE,
            Level.UNKNOWN,
            f"the probe could not run in this image: {CRUN_NO_SH}",
        )
    ]
    init = _started(True, start_error)
    found = _findings(
        events=tuple(kubelet_events([_failed_event("spec.initContainers{fetch}", RUNC_NO_SH)])),
        states=tuple(container_states(init)),
    )
    assert [(f.outcome, f.level) for f in found] == [
        (Outcome.NOT_STARTED, Level.FAIL),
        (Outcome.CONTAINER_ENDED, Level.FAIL),
    ]


def test_a_log_read_refused_is_kept_in_a_snapshot() -> None:
    """The log's refusal (a 403 on `get pods/log`) travels with the snapshot's record, so
    `doctor --snapshot` says what the live run said."""
    terminated = ContainerState(POD, "trainer", terminated="Completed", exit_code=0)
    pod = TrialPod(POD, states=(terminated,), log_unread=LOG_FORBIDDEN)
    saved = from_record(json.loads(json.dumps(to_record(TrialRun(pods=(pod,))))))
    assert isinstance(saved, TrialRun)
    assert pod_findings(saved.pods[0]) == [
        TrialFinding(Outcome.NO_PROBE_LINE, Level.UNKNOWN, POD, LOG_FORBIDDEN)
    ]


def _sidecar_pod(sidecar_end: str, trainer: dict[str, Any]) -> dict[str, Any]:
    """A trial pod that kept the job's native sidecar (`restartPolicy: Always` on an init
    container, KEP-753), in the shape the kubelet reports: the sidecar terminated with SIGTERM's
    exit code (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses)."""
    stopped = {
        "exitCode": 143,
        "reason": "Error",
        "startedAt": "2026-12-07T03:40:00Z",
        "finishedAt": sidecar_end,
    }
    return {
        "metadata": {"name": POD},
        "spec": {
            "initContainers": [
                {"name": "log-shipper", "image": "fluent-bit:3.1", "restartPolicy": "Always"},
                {"name": "fetch-weights", "image": "fetch:1"},
            ],
            "containers": [{"name": "trainer", "image": IMAGE}],
        },
        "status": {
            "initContainerStatuses": [
                {"name": "log-shipper", "state": {"terminated": stopped}},
                {
                    "name": "fetch-weights",
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                },
            ],
            "containerStatuses": [{"name": "trainer", "state": trainer}],
        },
    }


ENDED = {
    "terminated": {
        "exitCode": 0,
        "reason": "Completed",
        "startedAt": "2026-12-07T03:40:01Z",
        "finishedAt": "2026-12-07T03:40:09Z",
    }
}


def test_a_sidecar_the_kubelet_stopped_after_the_trial_container_is_no_failure() -> None:
    """The kubelet stops the native sidecars once every main container has ended
    (pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions: KillPod), each only
    after them (kuberuntime_termination_order.go newTerminationOrdering), with SIGTERM: exit
    code 143, or 137 once the grace period ran out. The trial's log unread, nothing failed."""
    for code in (143, 137):
        pod = _sidecar_pod("2026-12-07T03:40:09Z", ENDED)
        pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] = code
        states = tuple(container_states(pod))
        assert [(s.container, s.sidecar, s.finished_at) for s in states] == [
            ("log-shipper", True, 1_796_614_809.0),
            ("fetch-weights", False, None),
            ("trainer", False, 1_796_614_809.0),
        ]
        found = _findings(states=states, log_unread=LOG_FORBIDDEN)
        assert [(f.outcome, f.level) for f in found] == [(Outcome.NO_PROBE_LINE, Level.UNKNOWN)]


@pytest.mark.parametrize(
    ("sidecar_end", "trainer"),
    [
        ("2026-12-07T03:40:05Z", ENDED),  # ended before the trial's container did
        ("2026-12-07T03:40:05Z", {"running": {"startedAt": "2026-12-07T03:40:01Z"}}),
    ],
)
def test_a_sidecar_that_ended_while_the_trial_container_ran_is_still_a_failure(
    sidecar_end: str, trainer: dict[str, Any]
) -> None:
    """A native sidecar the kubelet did not stop (it ended before the last main container, or
    while one still runs) crashed on its own: the job's pods would meet it too."""
    states = tuple(container_states(_sidecar_pod(sidecar_end, trainer)))
    found = _findings(states=states, log_unread=LOG_FORBIDDEN)
    assert [(f.outcome, f.level, f.value) for f in found] == [
        (Outcome.CONTAINER_ENDED, Level.FAIL, 143.0)
    ]


def _read_only_sidecar_pod(sidecar: dict[str, Any], annotated: bool) -> dict[str, Any]:
    """A trial pod whose native sidecar `cache-sync` the job lets write to its claim and the
    trial mounts it read-only (named in `truegreen.io/trial-read-only` where `annotated`),
    in `sidecar`'s state while the trial's container runs."""
    pod = _sidecar_pod("2026-12-07T03:40:05Z", {"running": {"startedAt": "2026-12-07T03:40:01Z"}})
    pod["spec"]["initContainers"][0]["name"] = "cache-sync"
    pod["status"]["initContainerStatuses"][0] = {"name": "cache-sync", "state": sidecar}
    if annotated:
        pod["metadata"]["annotations"] = {"truegreen.io/trial-read-only": "cache-sync,prepare"}
    return pod


RESTARTING = "Back-off restarting failed container cache-sync in pod " + POD
CRASH_LOOP = {
    "waiting": {
        "reason": "CrashLoopBackOff",
        "message": f"back-off 10s restarting failed container=cache-sync pod={POD}_train(u-1)",
    }
}
CRASHED = {
    "terminated": {
        "exitCode": 1,
        "reason": "Error",
        "startedAt": "2026-12-07T03:40:00Z",
        "finishedAt": "2026-12-07T03:40:02Z",
    }
}


@pytest.mark.parametrize("sidecar", [CRASH_LOOP, CRASHED], ids=["crash-loop", "ended"])
def test_a_sidecar_the_trial_kept_from_writing_the_job_s_data_is_unknown_not_a_failure(
    sidecar: dict[str, Any],
) -> None:
    """A native sidecar the job lets write to its claim, mounted read-only by the trial, that
    ends with an error and is restarted (the kubelet's BackOff Event on it, its waiting reason
    CrashLoopBackOff: kuberuntime_manager.go doBackOff) may fail only for that: one unknown
    naming it, never `trial.container-not-started` or `trial.container-ended`. The same
    sidecar the job itself keeps from writing is the job's own failure."""
    event = {
        "involvedObject": {"name": POD, "fieldPath": "spec.initContainers{cache-sync}"},
        "reason": "BackOff",
        "message": RESTARTING,
        "type": "Warning",
    }
    events = tuple(kubelet_events([event]))
    assert [(e.container, e.init) for e in events] == [("cache-sync", True)]
    changed = tuple(container_states(_read_only_sidecar_pod(sidecar, annotated=True)))
    assert [s.container for s in changed if s.made_read_only] == ["cache-sync"]
    found = _findings(states=changed, events=events, log_unread=LOG_FORBIDDEN)
    [read_only] = found
    assert (read_only.outcome, read_only.level) == (Outcome.READ_ONLY_FOR_TRIAL, Level.UNKNOWN)
    assert read_only.words.startswith("cache-sync: ")
    own = tuple(container_states(_read_only_sidecar_pod(sidecar, annotated=False)))
    failed = _findings(states=own, events=events, log_unread=LOG_FORBIDDEN)
    assert {f.level for f in failed} == {Level.FAIL}
    assert Outcome.READ_ONLY_FOR_TRIAL not in {f.outcome for f in failed}


def test_an_init_container_the_trial_kept_from_writing_is_why_nothing_was_measured() -> None:
    """A regular init container the trial made read-only that failed ends the pod before the
    probe starts: its unknown says why, and no second unknown says the probe left no line."""
    prepare = ContainerState(
        POD, "prepare", terminated="Error", exit_code=2, init=True, made_read_only=True
    )
    states = (prepare, ContainerState(POD, "trainer", waiting="PodInitializing"))
    assert _findings(states=states) == [
        TrialFinding(
            Outcome.READ_ONLY_FOR_TRIAL, Level.UNKNOWN, POD, "prepare: Error (exit code 2)"
        )
    ]
