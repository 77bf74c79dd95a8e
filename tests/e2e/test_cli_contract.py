"""The command-line contract shared by every command, checked on the installed entry points."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.support.monitoring import wait_for, with_default_ctrl_c
from truegreen import __version__

BIN = Path(sys.executable).parent
SCHEMA = Path(__file__).parent.parent.parent / "docs" / "failure.schema.json"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "truegreen"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_version() -> None:
    result = _run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"truegreen, version {__version__}"


def test_unknown_option_is_usage_exit_64() -> None:
    result = _run("--no-such-flag")
    assert result.returncode == 64, result
    assert result.stderr == "truegreen: no such option '--no-such-flag'. see `truegreen --help`\n"
    assert result.stdout == ""


def test_unknown_command_is_usage_exit_64() -> None:
    result = _run("frobnicate")
    assert result.returncode == 64


def test_shell_completion_script() -> None:
    result = _run(env={"_TRUEGREEN_COMPLETE": "bash_source"})
    assert result.returncode == 0
    assert "_truegreen_completion()" in result.stdout


def test_bash_completes_through_its_sourced_script() -> None:
    """The README's line, then TAB as bash's readline calls the completion function."""
    bash = shutil.which("bash")
    assert bash is not None, "bash is required"
    script = """
eval "$(_TRUEGREEN_COMPLETE=bash_source truegreen)"
complete -p truegreen
tab() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=();
        _truegreen_completion truegreen; echo "${COMPREPLY[*]}"; }
tab truegreen li
tab truegreen doctor --out
tab truegreen doctor -o ""
tab truegreen refresh --mode ""
"""
    done = subprocess.run(
        [bash, "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "complete -o nosort -F _truegreen_completion truegreen",
        "lint",
        "--output",
        "text json",
        "restart pin",
    ]


@pytest.mark.parametrize(
    ("how", "code", "by"),
    [
        (signal.SIGINT, 130, "Ctrl-C"),
        (signal.SIGTERM, 143, "SIGTERM"),
        # A hang-up: the terminal or ssh session the run was started from went away.
        (signal.SIGHUP, 129, "SIGHUP (its terminal or ssh session closed)"),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
@pytest.mark.parametrize("output", ["text", "json"])
def test_an_interrupted_command_ends_as_the_signal_does_with_its_document(
    how: signal.Signals, code: int, by: str, output: str
) -> None:
    """Ctrl-C, SIGTERM and SIGHUP end the run as the signal would (128 + its number, as
    kubectl's do), one line on stderr, and under `-o json` the failure document on stdout,
    which validates.
    Ctrl-C is restored to its default in the child: a suite started with SIGINT ignored (`nohup
    make test &`, some CI runners) hands the ignored signal down (signal(7): an ignored
    disposition survives execve), and Python then never raises KeyboardInterrupt."""
    with subprocess.Popen(
        with_default_ctrl_c([str(BIN / "truegreen"), "lint", "-", "-o", output]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as running:
        wchan = Path(f"/proc/{running.pid}/wchan")
        wait_for("lint to read stdin", lambda: "pipe_read" in wchan.read_text())
        running.send_signal(how)
        out, err = running.communicate(timeout=60)
    line = f"stopped by {by} before the run had a result. run it again to get one"
    # Ended by the signal itself, its default action (Popen's negative number), once it had
    # said so: a shell reads 128 + its number, `code`.
    assert (running.returncode, err) == (-how, f"\ntruegreen: {line}\n")
    assert 128 + how == code
    if output == "text":
        assert out == ""
        return
    document = json.loads(out)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert (document["exit_code"], document["headline"]["code"]) == (code, "interrupted")


_NOHUP = (
    "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
"""What `nohup` does before it runs a program: SIGHUP ignored, which survives execve
(signal(7)), then the program itself (same process id)."""


def test_a_run_under_nohup_goes_on_through_a_hang_up() -> None:
    """A run started to outlive its terminal (`nohup truegreen … &`) is not stopped by the
    SIGHUP that terminal's end sends: truegreen takes SIGHUP as a stop only where it was not
    ignored when it started."""
    with subprocess.Popen(
        [sys.executable, "-c", _NOHUP, str(BIN / "truegreen"), "lint", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as running:
        wchan = Path(f"/proc/{running.pid}/wchan")
        wait_for("lint to read stdin", lambda: "pipe_read" in wchan.read_text())
        running.send_signal(signal.SIGHUP)
        _, err = running.communicate("", timeout=60)
    # Went on to its end: an empty input, nothing to lint, is 3 with nothing to say.
    assert (running.returncode, err) == (3, "")


def test_ctrl_c_stops_the_shell_loop_that_runs_truegreen_as_it_stops_one_running_kubectl() -> None:
    """Ctrl-C reaches the terminal's whole foreground group: the shell and truegreen. bash
    goes on with its loop after a child that exited (it handled the signal, whatever its code)
    and stops only for a child the signal ended (bash jobs.c, wait-and-cooperative-exit). So a
    loop over truegreen stops at the first Ctrl-C, and `$?` said 130 to whoever looked."""
    bash = shutil.which("bash")
    assert bash is not None, "bash is required"
    loop = (
        f'for i in 1 2; do "{BIN / "truegreen"}" lint -; echo "after $i: $?"; done; echo finished'
    )
    with subprocess.Popen(
        with_default_ctrl_c([bash, "--norc", "--noprofile", "-c", loop]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a terminal's foreground job is
    ) as running:
        children = Path(f"/proc/{running.pid}/task/{running.pid}/children")
        wait_for("the loop to start truegreen", lambda: children.read_text().split() != [])
        child = children.read_text().split()[0]
        wchan = Path(f"/proc/{child}/wchan")
        wait_for("truegreen to read stdin", lambda: "pipe_read" in wchan.read_text())
        os.killpg(running.pid, signal.SIGINT)  # the terminal's Ctrl-C
        out, err = running.communicate(timeout=60)  # stdin closed: a second run would end
    assert (running.returncode, out) == (-signal.SIGINT, ""), err
    assert err.endswith(
        "truegreen: stopped by Ctrl-C before the run had a result. run it again to get one\n"
    )


def test_runs_as_kubectl_plugin() -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl is required (Debian: kubernetes-client)"
    result = subprocess.run(
        [kubectl, "truegreen", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )
    assert result.returncode == 0, result.stderr
    assert "Tell the truth about a Kubernetes training environment." in result.stdout
    assert result.stdout.startswith("usage: kubectl truegreen [OPTIONS] COMMAND"), result.stdout


# -- the README's first-contact commands work as written (ux branch) ----------------------------

README = Path(__file__).parent.parent.parent / "README.md"


def test_the_readme_s_completion_lines_give_each_shell_its_script() -> None:
    readme = README.read_text()
    marker = {"bash": "complete -o nosort", "zsh": "#compdef truegreen", "fish": "complete"}
    for shell, expected in marker.items():
        variable = f"_TRUEGREEN_COMPLETE={shell}_source truegreen"
        assert variable in readme, f"README gives the {shell} line"
        result = _run(env={"_TRUEGREEN_COMPLETE": f"{shell}_source"})
        assert result.returncode == 0, result.stderr
        assert "_truegreen_completion" in result.stdout, shell
        assert expected in result.stdout, shell


def test_completion_completes_commands_and_refresh_s_flags() -> None:
    commands = _run(
        env={
            "_TRUEGREEN_COMPLETE": "bash_complete",
            "COMP_WORDS": "truegreen ref",
            "COMP_CWORD": "1",
        }
    )
    assert commands.stdout.split() == ["plain,refresh"]
    flags = _run(
        env={
            "_TRUEGREEN_COMPLETE": "bash_complete",
            "COMP_WORDS": "truegreen refresh --max",
            "COMP_CWORD": "2",
        }
    )
    assert flags.stdout.split() == ["plain,--max-attempts"]


def test_the_readme_s_config_example_loads_with_flag_names(tmp_path: Path) -> None:
    from truegreen.doctor.command.config import load_config

    readme = README.read_text()
    start = readme.index("```yaml\n") + len("```yaml\n")
    example = readme[start : readme.index("```", start)]
    config_file = tmp_path / "doctor.yaml"
    config_file.write_text(example)
    config = load_config(config_file)
    assert (config.namespace, config.context, config.job_requests) == (
        "training",
        "prod",
        "cpu=4,memory=16Gi",
    )
    assert config.credentials_secret == "backend-login:username,password"
    assert (config.admission_dry_run, config.pending_grace_seconds) == (True, 600)
    assert config.kubeconfig == Path("~/.kube/prod").expanduser()
