"""A kustomize folder that does not build: the finding quotes what `kubectl kustomize FOLDER`
says, whole.

kubectl logs its failure through klog (k8s.io/component-base/cli/run.go, `"command failed"
err=…`). A value of one line is Go-quoted (`err="…"`); a value of several lines, as errors that
carry git's or Helm's output are, is written `err=<`, then each of its lines indented with a
tab, then ` >` (k8s.io/klog/v2 internal/serialize/keyvalues.go writeStringValue). lint builds a
folder through a wrapping kustomization of its own, and kustomize frames the folder's error with
the wrapper's path (api/internal/target/kusttarget.go accumulateResources, accumulateComponents:
`accumulateDirectory: %q`, accumulateDirectory).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_cli

needs_kubectl = pytest.mark.skipif(
    shutil.which("kubectl") is None and not os.environ.get("TRUEGREEN_REQUIRE_REAL_PARTS"),
    reason="kubectl is not installed",
)
BUILD = "kustomize could not build it: "
HELM_CHARTS = """\
resources:
- job.yaml
helmCharts:
- name: minecraft
  repo: https://itzg.github.io/minecraft-server-charts
  version: 3.1.3
"""
JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: train, image: registry.example.com/train:1}
"""


def _kubectl_says(folder: Path) -> str:
    """The error `kubectl kustomize FOLDER` logs, its klog header and quoting taken off."""
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    built = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    assert built.returncode == 1, "precondition: kubectl refuses it too"
    found = re.search(r'"command failed" err="(.*)"$', built.stderr.strip())
    assert found is not None, built.stderr
    return found[1].replace('\\"', '"').replace("\\\\", "\\")


def _lint_message(folder: Path) -> str:
    result = run_cli("lint", str(folder), "-o", "json")
    ((finding),) = result.json()["findings"]
    assert (finding["rule"], result.exit_code) == ("kustomize-error", 2)
    message = finding["message"]
    assert isinstance(message, str)
    return message


@needs_kubectl
def test_an_error_of_several_lines_is_quoted_whole(tmp_path: Path) -> None:
    """`helmCharts` without `--enable-helm`: kustomize's error holds the chart's config over
    several lines, the cause after them (before: the finding said only ` >`)."""
    (tmp_path / "kustomization.yaml").write_text(HELM_CHARTS)
    (tmp_path / "job.yaml").write_text(JOB)
    message = _lint_message(tmp_path)
    assert message.startswith(BUILD + "trouble configuring builtin HelmChartInflationGenerator")
    assert " name: minecraft repo: https://itzg.github.io/minecraft-server-charts " in message
    assert message.endswith("`: must specify --enable-helm"), message


@needs_kubectl
@pytest.mark.parametrize("kind", ["Kustomization", "Component"])
def test_the_error_is_the_folder_s_own_without_lint_s_wrapper(tmp_path: Path, kind: str) -> None:
    """The wrapper's frame (`accumulation err='accumulating resources from '../…': '/…' must
    resolve to a file': recursed accumulation of path '/…': `, a Component's
    `accumulating components: accumulateDirectory: "…"`) names a path of lint's, not the
    user's: the finding says what kubectl says of the folder itself."""
    folder = tmp_path / "app"
    folder.mkdir()
    api = "kustomize.config.k8s.io/v1alpha1" if kind == "Component" else ""
    header = f"apiVersion: {api}\nkind: {kind}\n" if api else ""
    (folder / "kustomization.yaml").write_text(f"{header}resources:\n- bad.yaml\n")
    (folder / "bad.yaml").write_text("apiVersion: v1\nkind: ConfigMap\ndata: a: b\n")
    assert _lint_message(folder) == BUILD + _kubectl_says(folder)


@needs_kubectl
def test_a_kustomization_kustomize_cannot_read_is_quoted_as_kubectl_says_it(
    tmp_path: Path,
) -> None:
    """kustomize frames it `couldn't make target for path '/…'` under the wrapper."""
    (tmp_path / "kustomization.yaml").write_text("resourcez:\n- job.yaml\n")
    assert _lint_message(tmp_path) == BUILD + _kubectl_says(tmp_path)
    assert "must resolve to a file" not in _lint_message(tmp_path)


def _fake_kubectl(folder: Path, script: str) -> None:
    folder.mkdir()
    tool = folder / "kubectl"
    tool.write_text(f"#!/bin/sh\n{script}\n")
    tool.chmod(0o755)


def test_klog_s_quoting_is_undone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """strconv.Quote's escapes: `\\"`, `\\\\`, `\\t`, `\\u00e9`."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources: []\n")
    said = r'"command failed" err="json: unknown field \"resourcez\" in C:\\x\tcaf\u00e9"'
    _fake_kubectl(
        tmp_path / "bin", f"echo 'E1208 02:04:51.043458   12267 run.go:72] {said}' >&2; exit 1"
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    result = run_cli("lint", str(tmp_path / "app"), "-o", "json")
    assert [f["message"] for f in result.json()["findings"]] == [
        BUILD + 'json: unknown field "resourcez" in C:\\x\tcaf\u00e9'
    ]
