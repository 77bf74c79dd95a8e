"""deploy/: the refresh CronJob renders with kustomize, is locked down, and passes our own lint."""

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def rendered() -> str:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None, "kubectl is required (Debian: kubernetes-client)"
    result = subprocess.run(
        [kubectl, "kustomize", str(ROOT / "deploy" / "refresh")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _by_kind() -> dict[str, Any]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(rendered()) if doc}


def test_kustomize_renders_the_refresh_job() -> None:
    objects = _by_kind()
    assert sorted(objects) == ["CronJob", "Role", "RoleBinding", "ServiceAccount"]
    cron = objects["CronJob"]["spec"]
    assert cron["schedule"] == "*/15 * * * *"
    assert cron["concurrencyPolicy"] == "Forbid"
    job = cron["jobTemplate"]["spec"]
    assert job["backoffLimit"] == 0
    assert 600 < job["activeDeadlineSeconds"] < 900
    pod = job["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert pod["serviceAccountName"] == objects["ServiceAccount"]["metadata"]["name"]


def test_role_is_namespace_scoped_without_wildcards() -> None:
    role = _by_kind()["Role"]
    assert role["metadata"]["namespace"] == "training"
    for rule in role["rules"]:
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
        assert not {"delete", "update", "watch", "escalate", "bind"} & set(rule["verbs"])
        if "create" in rule["verbs"]:  # only the Events refresh leaves on what it acted on
            assert (rule["apiGroups"], rule["resources"], rule["verbs"]) == (
                [""],
                ["events"],
                ["create"],
            )


def test_our_own_manifests_pass_lint() -> None:
    from_files = run_cli("lint", str(ROOT / "deploy"), "-o", "json")
    assert (from_files.exit_code, from_files.json()["findings"]) == (0, [])
    from_stdin = run_cli("lint", "-", "-o", "json", stdin=rendered())
    assert (from_stdin.exit_code, from_stdin.json()["findings"]) == (0, [])
