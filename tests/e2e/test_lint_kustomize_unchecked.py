"""A kustomize build that fails for a reason outside the folder is a check that could not be
made (exit 3), never a measured failure (exit 2).

kustomize fetches a remote resource over HTTP first (api/loader/fileloader.go
httpClientGetContent: a transport failure is Go's `Get "URL": …`, an answer with an error status
its own `HTTP Error: status code 404 (Not Found)`), then as a git repository (api/internal/git:
`failed to run '/usr/bin/git fetch …'` with git's words, under kustomize's deadline,
api/internal/utils/timedcall.go `hit 27s timeout running '…'`). The fake kubectl below writes
what kubectl v1.32.4 (kustomize v5.5.0) writes on a machine that cannot resolve github.com, in
klog's form for a value of several lines, framed by lint's wrapping kustomization as kustomize
frames it (api/internal/target/kusttarget.go accumulateResources).
"""

import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli

URL = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.8.0/manifests.yaml"
GIT = "failed to run '/usr/bin/git fetch --depth=1 https://github.com/kubernetes-sigs/jobset HEAD'"
NO_HOST = (
    f"accumulating resources: accumulation err='accumulating resources from '{URL}': "
    f'Get "{URL}": dial tcp: lookup github.com on 10.255.255.53:53: no such host\': {GIT}: '
    "fatal: unable to access 'https://github.com/kubernetes-sigs/jobset/': Could not resolve "
    "host: github.com\n: exit status 128"
)
"""What kubectl kustomize says of the folder itself (its two lines as klog splits them)."""
FAKE_KUBECTL = """\
import pathlib, sys

wrapper = pathlib.Path(sys.argv[2])
target = (wrapper / "kustomization.yaml").read_text().splitlines()[1][3:-1]
root = (wrapper / target).resolve()
error = (
    f"accumulating resources: accumulation err='accumulating resources from '{target}': "
    f"'{root}' must resolve to a file': recursed accumulation of path '{root}': "
    + pathlib.Path(__file__).with_name("error.txt").read_text()
)
lines = "".join(f"\\t{line}\\n" for line in error.split("\\n"))
sys.stderr.write(f'E1208 02:04:17.847213    7880 run.go:72] "command failed" err=<\\n{lines} >\\n')
sys.exit(1)
"""


def _kubectl_failing_with(bin_folder: Path, error: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_folder.mkdir()
    tool = bin_folder / "kubectl"
    tool.write_text(f"#!{sys.executable}\n{FAKE_KUBECTL}")
    tool.chmod(0o755)
    (bin_folder / "error.txt").write_text(error)
    monkeypatch.setenv("PATH", f"{bin_folder}:/usr/bin:/bin")


def _overlay(folder: Path) -> Path:
    folder.mkdir()
    (folder / "kustomization.yaml").write_text(f"resources:\n- {URL}\n- job.yaml\n")
    return folder


@pytest.mark.parametrize(
    "error",
    [
        NO_HOST,
        # a git base: git reached no server (curl's words), over HTTPS or SSH
        f"accumulating resources: {GIT}: fatal: unable to access "
        "'https://github.com/kubernetes-sigs/jobset/': Failed to connect to github.com port 443 "
        "after 2 ms: Couldn't connect to server\n: exit status 128",
        "accumulating resources: failed to run '/usr/bin/git fetch --depth=1 "
        "git@github.com:org/repo v1': ssh: Could not resolve hostname github.com: Temporary "
        "failure in name resolution\nfatal: Could not read from remote repository.\n: exit "
        "status 128",
        # kustomize's own deadline on git
        "accumulating resources: hit 27s timeout running '/usr/bin/git fetch --depth=1 "
        "https://github.com/org/repo v1'",
    ],
)
def test_a_remote_that_could_not_be_fetched_is_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    _kubectl_failing_with(tmp_path / "bin", error, monkeypatch)
    overlay = _overlay(tmp_path / "overlay")
    result = run_cli("lint", str(overlay), "-o", "json")
    ((finding),) = result.json()["findings"]
    assert (finding["rule"], finding["severity"]) == ("kustomize-unchecked", "warning")
    joined = " ".join(line.strip() for line in error.split("\n") if line.strip())
    shown = joined if len(joined) <= 500 else "…" + joined[-499:]  # a long one keeps its end
    assert finding["message"] == f"kustomize could not fetch a remote resource: {shown}"
    assert result.exit_code == 3


def test_what_a_remote_answers_is_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remote answered that the file or the repository is not there: the kustomization
    names what does not exist, wherever it is built."""
    for number, error in enumerate(
        [
            f"accumulating resources: accumulating resources from '{URL}': HTTP Error: status "
            "code 404 (Not Found)",
            f"accumulating resources: {GIT}: fatal: unable to access "
            "'https://github.com/kubernetes-sigs/jobset/': The requested URL returned error: "
            "404\n: exit status 128",
            f"accumulating resources: {GIT}: remote: Repository not found.\nfatal: repository "
            "'https://github.com/kubernetes-sigs/jobset/' not found\n: exit status 128",
        ]
    ):
        monkeypatch.undo()
        _kubectl_failing_with(tmp_path / f"bin{number}", error, monkeypatch)
        overlay = _overlay(tmp_path / f"overlay{number}")
        result = run_cli("lint", str(overlay), "-o", "json")
        assert [f["rule"] for f in result.json()["findings"]] == ["kustomize-error"], error
        assert result.exit_code == 2


def test_a_failure_elsewhere_still_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kubectl_failing_with(tmp_path / "bin", NO_HOST, monkeypatch)
    overlay = _overlay(tmp_path / "overlay")
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: t\n        image: x\n"
        "        livenessProbe: {exec: {command: [cat, /tmp/alive]}}\n"
    )
    result = run_cli("lint", str(overlay), str(job), "-o", "json")
    assert sorted(f["rule"] for f in result.json()["findings"]) == [
        "kustomize-unchecked",
        "restart-probe-on-keep-running",
    ]
    assert result.exit_code == 2
    job.write_text(job.read_text().replace("livenessProbe", "readinessProbe"))
    checked = run_cli("lint", str(overlay), str(job))
    assert checked.exit_code == 3, "the Job passes; the overlay could not be checked"
    # The Job was checked: the summary does not say nothing was.
    assert "nothing was checked" not in checked.stdout, checked.stdout


def test_an_overlay_alone_that_could_not_be_fetched_offers_no_allow_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--allow-empty answers an input that holds no objects; it does not make a check that
    could not be made pass, so the summary does not offer it."""
    _kubectl_failing_with(tmp_path / "bin", NO_HOST, monkeypatch)
    overlay = _overlay(tmp_path / "overlay")
    result = run_cli("lint", str(overlay))
    assert result.exit_code == 3
    assert "No Kubernetes objects found, so nothing was checked." in result.stdout
    assert "--allow-empty" not in result.stdout, result.stdout
    assert run_cli("lint", "--allow-empty", str(overlay)).exit_code == 3


def test_a_kustomize_that_cannot_run_checks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "kubectl"
    tool.write_text("#!/nonexistent/interpreter\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    result = run_cli("lint", str(_overlay(tmp_path / "overlay")), "-o", "json")
    assert [(f["rule"], f["message"]) for f in result.json()["findings"]] == [
        ("kustomize-unchecked", "kustomize could not run: No such file or directory")
    ]
    assert result.exit_code == 3
