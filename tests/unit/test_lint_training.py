"""Training work recognised from the container itself (lint/training.py), and the annotation
that overrides it either way (probes.WorkloadModel.keeps_work)."""

from typing import Any

import pytest

from tests.unit.test_lint_rules import TCP, hits, server, service, workload
from truegreen.lint.training import launcher, training_signal

Obj = dict[str, Any]
LIVE = {"exec": {"command": ["cat", "/tmp/alive"]}}


@pytest.mark.parametrize(
    ("words", "found"),
    [
        (["torchrun", "--nproc_per_node=8", "train.py"], "torchrun"),
        (["/usr/local/bin/torchrun", "train.py"], "torchrun"),
        (["python", "-m", "torch.distributed.run", "train.py"], "python -m torch.distributed.run"),
        (
            ["python3", "-m", "torch.distributed.launch", "x.py"],
            "python -m torch.distributed.launch",
        ),
        (["deepspeed", "--num_gpus=8", "train.py"], "deepspeed"),
        (["accelerate", "launch", "train.py"], "accelerate launch"),
        (["mpirun", "-np", "4", "python", "train.py"], "mpirun"),
        (["horovodrun", "-np", "4", "python", "train.py"], "horovodrun"),
        (["bash", "-c", "pip install -r req.txt && exec torchrun train.py"], "torchrun"),
        (["sh", "-xc", "set -e\ncd /work\nNCCL_DEBUG=INFO deepspeed train.py"], "deepspeed"),
        (["/bin/bash", "-lc", "env OMP=1 accelerate launch x.py"], "accelerate launch"),
        (["mpirun", "-np", "2", "sh", "-c", "python train.py"], "mpirun"),
        (["sh", "-c", "'torchrun' train.py"], "torchrun"),  # quotes are the shell's
        (["sh", "-c", "NX=1 torchrun t.py"], "torchrun"),
        (["sh", "-c", "A=1; torchrun t.py"], "torchrun"),  # an assignment alone, then the launcher
        (["python", "-m", "torch.distributed.run"], "python -m torch.distributed.run"),
        (["sh", "-c", "torchrun 'unbalanced"], "torchrun"),  # read as words all the same
        (
            ["sh", "-c", "cd /w; python -m torch.distributed.run --nnodes=2 t.py"],
            "python -m torch.distributed.run",
        ),
    ],
)
def test_a_launcher_in_the_command_is_found(words: list[str], found: str) -> None:
    assert launcher(words) == found


@pytest.mark.parametrize(
    ("words", "found"),
    [
        # a word after a shell keyword is a command (POSIX 2.9.4 compound commands, 2.9.2 `!`)
        (["bash", "-c", "for i in 1 2; do torchrun t.py; done"], "torchrun"),
        (["bash", "-c", "until torchrun t.py; do sleep 5; done"], "torchrun"),
        (["sh", "-c", "if [ -f x ]; then torchrun t.py; fi"], "torchrun"),
        (["sh", "-c", "if [ -f x ]; then :; else deepspeed t.py; fi"], "deepspeed"),
        (["sh", "-c", "while ! torchrun t.py; do sleep 1; done"], "torchrun"),
        (["bash", "-c", "{ torchrun t.py; }"], "torchrun"),
        # wrappers that run their operand as the command, with their options
        (["bash", "-c", "timeout 36000 torchrun t.py"], "torchrun"),
        (["timeout", "-k", "30", "--signal=INT", "10h", "torchrun", "t.py"], "torchrun"),
        (["/usr/bin/env", "accelerate", "launch", "t.py"], "accelerate launch"),
        (["env", "-u", "X", "-i", "torchrun", "t.py"], "torchrun"),
        (["env", "-C", "/w", "--", "torchrun", "t.py"], "torchrun"),
        (["nice", "-n", "5", "mpirun", "-np", "2", "t"], "mpirun"),
        (["tini", "-g", "--", "torchrun", "t.py"], "torchrun"),
        (["/usr/bin/dumb-init", "--", "deepspeed", "t.py"], "deepspeed"),
        (["sh", "-c", "exec -a trainer torchrun t.py"], "torchrun"),
        (["sh", "-c", "command -p torchrun t.py"], "torchrun"),  # -p: the default PATH, run
        # python's `-mMODULE`, the option and its value in one word
        (["python", "-mtorch.distributed.run", "t.py"], "python -m torch.distributed.run"),
        (
            ["python3", "-u", "-mtorch.distributed.launch", "t.py"],
            "python -m torch.distributed.launch",
        ),
    ],
)
def test_a_launcher_after_shell_keywords_and_wrappers_is_found(
    words: list[str], found: str
) -> None:
    assert launcher(words) == found


# POSIX Shell Command Language 2.2.1: an unquoted backslash-newline is removed before the script
# is split into tokens (inside double quotes too, 2.2.3), so a launcher on a continued line is the
# command; inside single quotes (2.2.2), after an escaped backslash and at the end of a comment
# (2.3 rule 9: it runs to the newline) it is no continuation. bash and dash run these so.
@pytest.mark.parametrize(
    ("script", "found"),
    [
        (
            "cd /workspace && \\\ntorchrun \\\n  --nnodes=2 --nproc-per-node=8 \\\n  train.py",
            "torchrun",
        ),
        ("cd /w; \\\n  deepspeed t.py", "deepspeed"),
        ('"torch\\\nrun" t.py', "torchrun"),  # joined inside double quotes
        ("torch\\\nrun t.py", "torchrun"),  # joined inside a word
        ("# set up \\\ntorchrun t.py", "torchrun"),  # a comment ends at its newline
        ("echo \\\\\ntorchrun t.py", "torchrun"),  # an escaped backslash, then a newline
        # a here-document's text is no script: its quote leaves the lines after it alone
        ("cat <<EOF >/tmp/note\ndon't\nEOF\ncd /w && \\\ntorchrun t.py", "torchrun"),
        ("'torch\\\nrun' t.py", None),  # single quotes keep it: a program of that name
    ],
)
def test_a_launcher_on_a_continued_line_is_found(script: str, found: str | None) -> None:
    assert launcher(["/bin/bash", "-c", script]) == found


@pytest.mark.parametrize(
    "words",
    [
        ["python", "serve.py", "--torchrun"],
        ["sh", "-c", "pip install deepspeed && python serve.py"],  # an argument, not the command
        ["echo", "torchrun"],
        ["accelerate", "config"],
        ["python", "-m", "torch.distributed.elastic"],
        ["python", "-m"],
        ["python", "train.py", "-c", "torchrun x"],  # -c of a program that is no shell
        ["sh", "-c", "for torchrun in a b; do echo $torchrun; done"],  # a loop's variable
        ["timeout", "torchrun"],  # the duration, then no command
        ["env", "-u", "torchrun", "python", "t.py"],  # the name -u unsets
        ["sh", "-c", "echo do torchrun"],  # `do` as an argument is no keyword
        ["python", "-mtorch.distributed.elastic"],
        # `command -v`/`-V` (POSIX) look the name up and run nothing.
        ["sh", "-c", "if ! command -v torchrun >/dev/null; then exit 1; fi; vllm serve m"],
        ["sh", "-c", "command -V deepspeed"],
        ["bash", "-c", "command -pv mpirun || echo missing"],
        [],
    ],
)
def test_a_launcher_named_elsewhere_is_not_training(words: list[str]) -> None:
    assert launcher(words) is None


@pytest.mark.parametrize(
    ("container", "signal"),
    [
        ({"command": ["torchrun"], "args": ["t.py"]}, "its command runs torchrun"),
        ({"args": ["deepspeed", "t.py"]}, "its command runs deepspeed"),
        ({"env": [{"name": "WORLD_SIZE", "value": "8"}]}, "its env sets WORLD_SIZE"),
        ({"env": [{"name": "MASTER_ADDR", "value": "m"}]}, "its env sets MASTER_ADDR"),
        ({"env": [{"name": "RANK", "valueFrom": {"fieldRef": {}}}]}, "its env sets RANK"),
        ({"env": [{"name": "LOCAL_RANK", "value": "0"}]}, "its env sets LOCAL_RANK"),
        (
            {"resources": {"limits": {"nvidia.com/gpu": 1}}},
            "it asks for nvidia.com/gpu and declares no port",
        ),
        (
            {"resources": {"requests": {"nvidia.com/mig-1g.5gb": "2"}}},
            "it asks for nvidia.com/mig-1g.5gb and declares no port",
        ),
        (
            {"resources": {"limits": {"amd.com/gpu": "1"}}},
            "it asks for amd.com/gpu and declares no port",
        ),
    ],
)
def test_what_makes_a_container_training_work(container: Obj, signal: str) -> None:
    assert training_signal(container) == signal


@pytest.mark.parametrize(
    "container",
    [
        {"resources": {"limits": {"nvidia.com/gpu": 1}}, "ports": [{"containerPort": 8000}]},
        {"resources": {"limits": {"nvidia.com/gpu": "0"}}},
        {"resources": {"limits": {"cpu": "8"}}},
        {"env": [{"name": "WORLD", "value": "x"}, {"name": "MASTER_PORT", "value": "1"}]},
        {"env": "WORLD_SIZE"},
        {},
    ],
)
def test_what_does_not(container: Obj) -> None:
    assert training_signal(container) is None


def test_a_training_container_with_a_liveness_probe_names_its_signal() -> None:
    container = server(port=None, env=[{"name": "WORLD_SIZE", "value": "2"}], livenessProbe=LIVE)
    assert hits(workload("StatefulSet", container)) == [("restart-probe-on-keep-running", "app")]


def test_the_annotation_says_none_of_them_keeps_work_running() -> None:
    container = server(port=None, env=[{"name": "WORLD_SIZE", "value": "2"}], livenessProbe=LIVE)
    obj = workload("StatefulSet", container, annotations={"truegreen.io/keep-running": ""})
    # no longer work: a port-less server, asked (as info) for a readiness probe like any other
    assert hits(obj) == [("readiness-missing-no-port", "app")]
    job = workload("Job", server(livenessProbe=LIVE), annotations={"truegreen.io/keep-running": ""})
    assert hits(job) == []


def test_the_annotation_names_the_containers_that_keep_work_running_and_no_others() -> None:
    trainer = server("trainer", port=None, command=["torchrun", "t.py"], livenessProbe=LIVE)
    helper = server("helper", port=None, command=["torchrun", "t.py"], livenessProbe=LIVE)
    obj = workload(
        "Deployment", trainer, helper, annotations={"truegreen.io/keep-running": "helper"}
    )
    assert [h for h in hits(obj) if h[0] == "restart-probe-on-keep-running"] == [
        ("restart-probe-on-keep-running", "helper")
    ]


def test_a_sidecar_s_restart_leaves_the_training_alone() -> None:
    sidecar = server("proxy", 9000, "proxy", readinessProbe={"tcpSocket": {"port": 9000}})
    sidecar.update(
        restartPolicy="Always", livenessProbe={"tcpSocket": {"port": 9000}, "periodSeconds": 30}
    )
    job = workload("Job", server(port=None), init=[sidecar])
    assert hits(job) == []
    annotated = workload("Job", server(port=None), init=[sidecar])
    annotated["metadata"]["annotations"] = {"truegreen.io/keep-running": "proxy"}
    assert hits(annotated) == [("restart-probe-on-keep-running", "proxy")]


def test_training_work_without_a_port_is_not_asked_for_readiness() -> None:
    quiet = server(port=None, env=[{"name": "RANK", "value": "0"}])
    assert hits(workload("StatefulSet", quiet)) == []
    assert hits(workload("StatefulSet", server(port=None))) == [
        ("readiness-missing-no-port", "app")
    ]


def test_training_work_that_serves_a_port_is_still_asked_for_readiness() -> None:
    serving = server(env=[{"name": "RANK", "value": "0"}], livenessProbe=TCP)
    assert hits(workload("StatefulSet", serving)) == [
        ("readiness-missing", "app"),
        ("restart-probe-on-keep-running", "app"),
    ]


GPU: Obj = {"resources": {"limits": {"nvidia.com/gpu": 1}}}
ON_8000 = {"httpGet": {"path": "/health", "port": 8000}}


def test_a_port_its_readiness_probe_targets_is_served() -> None:
    """A readiness probe gates Service traffic, which only a server takes: GPUs with a
    readinessProbe on a port are serving, not training. A liveness probe alone says nothing."""
    assert training_signal({**GPU, "readinessProbe": ON_8000}) is None
    assert training_signal({**GPU, "readinessProbe": {"grpc": {"port": 9000}}}) is None
    assert training_signal({**GPU, "readinessProbe": {"exec": {"command": ["true"]}}}) == (
        "it asks for nvidia.com/gpu and declares no port"
    )
    assert training_signal({**GPU, "livenessProbe": ON_8000}) == (
        "it asks for nvidia.com/gpu and declares no port"
    )


def test_a_port_a_service_routes_to_is_served() -> None:
    """The EndpointSlice controller resolves a numeric targetPort with no containerPort listed
    (pkg/api/v1/pod/util.go FindPort): a routed container serves. A launcher or the rendezvous
    env still says training."""
    assert training_signal(GPU, routed=True) is None
    assert training_signal({**GPU, "command": ["torchrun", "t.py"]}, routed=True) == (
        "its command runs torchrun"
    )
    assert training_signal({"env": [{"name": "RANK", "value": "0"}]}, routed=True) == (
        "its env sets RANK"
    )


def test_a_gpu_server_a_service_routes_to_may_have_a_liveness_probe() -> None:
    vllm = server(port=None, resources=GPU["resources"], livenessProbe=ON_8000)
    routed = [service({"app": "w"}, 8000)]
    assert hits(workload("Deployment", vllm), routed) == [
        ("readiness-missing", "app"),
        ("probe-port-unlisted", "app"),
    ]
    unlisted = ("probe-port-unlisted", "app")
    keep = ("restart-probe-on-keep-running", "app")
    assert hits(workload("Deployment", vllm)) == [keep, unlisted]
    assert hits(workload("Job", vllm), routed) == [keep, unlisted]  # a Job's kind decides
