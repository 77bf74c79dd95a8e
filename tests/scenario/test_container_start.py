"""A container the kubelet could not create or start: the missing setting named, or the
runtime's own error quoted (the kubelet's waiting reasons and messages, as `kubectl describe
pod` shows them)."""

from datetime import datetime
from typing import Any

import pytest

from tests.scenario.conftest import Doctor
from tests.support.scenarios import Obj, healthy


def _manager_waiting(reason: str, message: str) -> Any:
    """jobs-manager's pod, its container waiting in `reason` with the kubelet's `message`."""

    def build(now: datetime) -> list[Obj]:
        objects = healthy(now)
        pod = next(
            o
            for o in objects
            if o["kind"] == "Pod" and o["metadata"]["name"].startswith("jobs-manager")
        )
        status = pod["status"]
        status["conditions"][1]["status"] = "False"
        status["containerStatuses"][0].update(
            {"ready": False, "state": {"waiting": {"reason": reason, "message": message}}}
        )
        return objects

    return build


@pytest.mark.parametrize(
    ("reason", "message", "code", "headline"),
    [
        (
            # pkg/kubelet/kubelet_pods.go: the Secret's NotFound through the secret manager.
            "CreateContainerConfigError",
            'secret "db-creds" not found',
            "workloads.named-setting-missing",
            "The workload 'jobs-manager' can't start: the stored private settings 'db-creds' it "
            "needs can't be found.",
        ),
        (
            # makeEnvironmentVariables: `couldn't find key %v in Secret %v/%v`.
            "CreateContainerConfigError",
            "couldn't find key password in Secret train/db-creds",
            "workloads.named-setting-missing",
            "The workload 'jobs-manager' can't start: the entry 'password' of the stored private "
            "settings 'db-creds' it needs can't be found.",
        ),
        (
            "CreateContainerConfigError",
            'configmap "jobs-manager-config" not found',
            "workloads.named-setting-missing",
            "The workload 'jobs-manager' can't start: the stored settings 'jobs-manager-config' it "
            "needs can't be found.",
        ),
        (
            # kuberuntime/security_context_others.go verifyRunAsNonRoot, through
            # generateContainerConfig into ErrCreateContainerConfig: no setting is missing, so
            # the kubelet's own words are quoted (AKS docs' `kubectl describe` paste).
            "CreateContainerConfigError",
            "container has runAsNonRoot and image will run as root (pod: "
            '"jobs-manager-abc12_train(0f2c)", container: api)',
            "workloads.container-wont-start",
            "The workload 'jobs-manager' can't start its program: its machine says “container has "
            'runAsNonRoot and image will run as root (pod: "jobs-manager-abc12_train(0f2c)", '
            "container: api)”.",
        ),
        (
            # pkg/kubelet/util/manager/watch_based_manager.go Get: the kubelet's own watch of
            # the Secret did not sync in time; the Secret may well exist.
            "CreateContainerConfigError",
            "failed to sync secret cache: timed out waiting for the condition",
            "workloads.container-wont-start",
            "The workload 'jobs-manager' can't start its program: its machine says “failed to "
            "sync secret cache: timed out waiting for the condition”.",
        ),
        (
            # pkg/kubelet/images/image_manager.go EnsureImageExists: `Failed to inspect image
            # %q: %v` under ErrImageInspect; no rule names it, so it is quoted with its reason.
            "ImageInspectError",
            'Failed to inspect image "registry.example.com/jobs-manager:1.4": rpc error: code = '
            "Unknown desc = failed to unpack image on snapshotter overlayfs: unexpected EOF",
            "workloads.container-wont-start",
            "The workload 'jobs-manager' can't start its program: its machine says "
            '“ImageInspectError: Failed to inspect image "registry.example.com/jobs-manager:1.4": '
            "rpc error: code = Unknown desc = failed to unpack image on snapshotter overlayfs: "
            "unexpected EOF”.",
        ),
        (
            # pkg/kubelet/images/image_manager.go EnsureImageExists: with imagePullPolicy Never
            # and the image absent, `Container image %q is not present with pull policy of
            # Never` under ErrImageNeverPull. Nothing is downloaded, so no download failed:
            # quoted, never a registry's or a login's fault.
            "ErrImageNeverPull",
            'Container image "registry.example.com/jobs-manager:1.4" is not present with pull '
            "policy of Never",
            "workloads.container-wont-start",
            "The workload 'jobs-manager' can't start its program: its machine says "
            '“ErrImageNeverPull: Container image "registry.example.com/jobs-manager:1.4" is not '
            "present with pull policy of Never”.",
        ),
        (
            # kuberuntime_container.go startContainer: the runtime's error after ErrRunContainer
            # (containerd/runc's words for a command the image lacks).
            "RunContainerError",
            "failed to create containerd task: failed to create shim task: OCI runtime create "
            'failed: runc create failed: unable to start container process: exec: "torchrun": '
            "executable file not found in $PATH: unknown",
            "workloads.container-wont-start",
            "The workload 'jobs-manager' can't start its program: its machine says “failed to "
            "create containerd task: failed to create shim task: OCI runtime create failed: runc "
            'create failed: unable to start container process: exec: "torchrun": executable file '
            "not found in $PATH: unknown”.",
        ),
        (
            # ErrCreateContainer: the NVIDIA container toolkit refusing the device request.
            "CreateContainerError",
            "failed to generate spec: nvidia-container-cli: initialization error: nvml error: "
            "driver not loaded: unknown",
            "workloads.container-wont-start",
            "The workload 'jobs-manager' can't start its program: its machine says “failed to "
            "generate spec: nvidia-container-cli: initialization error: nvml error: driver not "
            "loaded: unknown”.",
        ),
    ],
)
def test_a_container_that_cannot_start_says_what_it_lacks(
    doctor: Doctor, reason: str, message: str, code: str, headline: str
) -> None:
    doctor.load(_manager_waiting(reason, message))
    result = doctor.live("-o", "json")
    report = result.json()
    found = [f for f in report["findings"] if f["code"] == code]
    assert [f["headline"] for f in found] == [headline], [f["code"] for f in report["findings"]]
    assert found[0]["details"] == [f"pod jobs-manager-abc12 container api: {reason}: {message}"]
    assert "describe pod jobs-manager-abc12" in found[0]["remedy"]
    assert (found[0]["status"], found[0]["basis"], result.exit_code) == ("fail", "measured", 2)
