"""Pod Security admission (doctor/checks/admission/podsecurity.py): the level a namespace enforces,
and each check the training pod can fail, naming the field.

Ground truth: staging/src/k8s.io/pod-security-admission/api/helpers.go and policy/check_*.go.
"""

from typing import Any

import pytest

from truegreen.doctor.checks.admission.podsecurity import Violation, violations
from truegreen.doctor.checks.admission.podsecurity_api import Level, Policy, enforced_policy

ENFORCE = "pod-security.kubernetes.io/enforce"
VERSION = "pod-security.kubernetes.io/enforce-version"
BASELINE = Policy(Level.BASELINE)
RESTRICTED = Policy(Level.RESTRICTED)

# A pod that passes the restricted level; each test breaks it in one way.
SECURE_CONTEXT = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}


def _spec(**pod: Any) -> dict[str, Any]:
    return {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "trainer", "securityContext": dict(SECURE_CONTEXT)}],
        **pod,
    }


def _with_container(**context: Any) -> dict[str, Any]:
    spec = _spec()
    spec["containers"][0]["securityContext"].update(context)
    return spec


def _checks(policy: Policy, spec: dict[str, Any], meta: dict[str, Any] | None = None) -> list[str]:
    return [v.check for v in violations(policy, meta or {}, spec)]


@pytest.mark.parametrize(
    ("labels", "policy"),
    [
        ({}, Policy(Level.PRIVILEGED)),
        ({ENFORCE: "baseline"}, Policy(Level.BASELINE)),
        ({ENFORCE: "restricted", VERSION: "v1.22"}, Policy(Level.RESTRICTED, (1, 22))),
        ({ENFORCE: "restricted", VERSION: "latest"}, Policy(Level.RESTRICTED)),
        ({ENFORCE: "strict"}, Policy(Level.RESTRICTED, None, (f"{ENFORCE}=strict",))),
        (
            {ENFORCE: "baseline", VERSION: "1.22"},
            Policy(Level.BASELINE, None, (f"{VERSION}=1.22",)),
        ),
        (
            {ENFORCE: "baseline", VERSION: "v1.05"},
            Policy(Level.BASELINE, None, (f"{VERSION}=v1.05",)),
        ),
        ({ENFORCE: "baseline", VERSION: "v1.0"}, Policy(Level.BASELINE, (1, 0))),
        (
            {ENFORCE: "baseline", VERSION: "v2.1"},
            Policy(Level.BASELINE, None, (f"{VERSION}=v2.1",)),
        ),
    ],
)
def test_the_enforced_policy_from_the_labels(labels: dict[str, str], policy: Policy) -> None:
    assert enforced_policy(labels) == policy


def test_a_policy_reads_as_pod_security_writes_it() -> None:
    assert str(Policy(Level.RESTRICTED)) == "restricted:latest"
    assert str(Policy(Level.BASELINE, (1, 29))) == "baseline:v1.29"


def test_a_secure_pod_passes_every_level() -> None:
    assert violations(RESTRICTED, {}, _spec()) == []


def test_privileged_level_checks_nothing() -> None:
    assert violations(Policy(Level.PRIVILEGED), {}, _with_container(privileged=True)) == []


def test_privileged_names_the_containers_and_the_field() -> None:
    spec = _with_container(privileged=True)
    spec["initContainers"] = [{"name": "setup", "securityContext": {"privileged": True}}]
    assert violations(BASELINE, {}, spec) == [
        Violation(
            "privileged",
            'containers "setup", "trainer" must not set securityContext.privileged=true',
            "full control of the machine",
            (
                "securityContext.privileged of 'setup'",
                "securityContext.privileged of 'trainer'",
            ),
        )
    ]


def test_ephemeral_containers_are_checked_too() -> None:
    spec = _spec(ephemeralContainers=[{"name": "debug", "securityContext": {"privileged": True}}])
    (found,) = violations(BASELINE, {}, spec)
    assert found.detail == 'container "debug" must not set securityContext.privileged=true'


def test_host_namespaces() -> None:
    (found,) = violations(BASELINE, {}, _spec(hostNetwork=True, hostIPC=True, hostPID=False))
    assert (found.check, found.detail, found.fields) == (
        "hostNamespaces",
        "hostNetwork=true, hostIPC=true",
        ("hostNetwork", "hostIPC"),
    )


def test_host_path_volumes_at_baseline_and_their_type_at_restricted() -> None:
    spec = _spec(
        volumes=[{"name": "scratch", "hostPath": {"path": "/mnt"}}, {"name": "ok", "emptyDir": {}}]
    )
    (baseline,) = violations(BASELINE, {}, spec)
    assert (baseline.check, baseline.detail, baseline.fields) == (
        "hostPathVolumes",
        'hostPath volume "scratch"',
        ("the volume 'scratch'",),
    )
    # restricted replaces the baseline check with its own (registry.go overrides)
    (restricted,) = violations(RESTRICTED, {}, spec)
    assert (restricted.check, restricted.detail) == (
        "restrictedVolumes",
        'volume "scratch" uses restricted volume type "hostPath"',
    )


@pytest.mark.parametrize(
    "source",
    [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
        "image",
    ],
)
def test_the_volume_types_restricted_allows(source: str) -> None:
    """check_restrictedVolumes.go restrictedVolumes_1_0 (the only version, so every policy
    version): the allowed sources, `volume.Image != nil` among them."""
    volume = {"name": "v", source: {}}
    assert violations(RESTRICTED, {}, _spec(volumes=[volume])) == []
    assert violations(Policy(Level.RESTRICTED, (1, 0)), {}, _spec(volumes=[volume])) == []


def test_host_ports() -> None:
    spec = _spec()
    spec["containers"][0]["ports"] = [
        {"containerPort": 80},
        {"containerPort": 81, "hostPort": 8081},
    ]
    (found,) = violations(BASELINE, {}, spec)
    assert (found.check, found.detail, found.fields) == (
        "hostPorts",
        'container "trainer" uses hostPort 8081',
        ("ports[].hostPort of 'trainer'",),
    )


def test_probe_and_lifecycle_hosts_from_1_34() -> None:
    """check_hostProbesAndhostLifecycle.go hostProbesAndHostLifecycleV1Dot34 (MinimumVersion
    1.34): no httpGet.host or tcpSocket.host in a container's probes or lifecycle handlers; the
    detail sorts the containers and the hosts."""
    spec = _spec(
        initContainers=[
            {
                "name": "setup",
                "securityContext": dict(SECURE_CONTEXT),
                "lifecycle": {
                    "postStart": {"tcpSocket": {"port": 22, "host": "10.0.0.9"}},
                    "preStop": {"httpGet": {"path": "/drain", "port": 8080, "host": ""}},
                },
            }
        ]
    )
    spec["containers"][0]["readinessProbe"] = {
        "httpGet": {"path": "/healthz", "port": 8080, "host": "10.0.0.5", "scheme": "HTTP"},
        "periodSeconds": 10,
    }
    spec["containers"][0]["livenessProbe"] = {"tcpSocket": {"port": 29500}}
    assert violations(Policy(Level.BASELINE, (1, 34)), {}, spec) == [
        Violation(
            "hostProbesAndHostLifecycle",
            'containers "setup", "trainer" use probe or lifecycle hosts "10.0.0.5", "10.0.0.9"',
            "health checks or hooks sent to another address",
            (
                "lifecycle.postStart.tcpSocket.host of 'setup'",
                "readinessProbe.httpGet.host of 'trainer'",
            ),
        )
    ]
    assert _checks(RESTRICTED, spec) == ["hostProbesAndHostLifecycle"]
    assert violations(Policy(Level.BASELINE, (1, 33)), {}, spec) == []
    del spec["initContainers"]
    (found,) = violations(BASELINE, {}, spec)
    assert found.detail == 'container "trainer" uses probe or lifecycle host "10.0.0.5"'


def test_baseline_capabilities_allow_the_runtime_defaults_only() -> None:
    assert (
        violations(
            BASELINE, {}, _with_container(capabilities={"add": ["CHOWN", "NET_BIND_SERVICE"]})
        )
        == []
    )
    (found,) = violations(
        BASELINE, {}, _with_container(capabilities={"add": ["SYS_ADMIN", "KILL"]})
    )
    assert (found.check, found.detail) == (
        "capabilities",
        'container "trainer" must not include "SYS_ADMIN" in securityContext.capabilities.add',
    )


def test_restricted_capabilities_drop_all_and_add_only_net_bind_service() -> None:
    added = _with_container(capabilities={"drop": ["ALL"], "add": ["NET_BIND_SERVICE", "CHOWN"]})
    (found,) = violations(RESTRICTED, {}, added)
    assert found.detail == (
        'container "trainer" must not include "CHOWN" in securityContext.capabilities.add'
    )
    kept = _with_container(capabilities={"drop": ["NET_RAW"]})
    (found,) = violations(RESTRICTED, {}, kept)
    assert (found.detail, found.fields) == (
        'container "trainer" must set securityContext.capabilities.drop=["ALL"]',
        ("securityContext.capabilities.drop of 'trainer'",),
    )
    assert _checks(Policy(Level.RESTRICTED, (1, 21)), kept) == []


def test_capabilities_name_the_containers_then_the_capabilities_as_the_plugin_does() -> None:
    """check_capabilities_baseline.go capabilitiesBaseline_1_0 and
    check_capabilities_restricted.go capabilitiesRestricted_1_22: the containers in visiting
    order, then the capabilities sorted; restricted says both what is not dropped and what is
    added, "; " between them."""
    spec = _with_container(capabilities={"drop": ["ALL"], "add": ["SYS_ADMIN", "KILL"]})
    spec["initContainers"] = [
        {"name": "setup", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}
    ]
    (found,) = violations(BASELINE, {}, spec)
    assert (found.detail, found.fields) == (
        'containers "setup", "trainer" must not include "NET_ADMIN", "SYS_ADMIN" in '
        "securityContext.capabilities.add",
        (
            "securityContext.capabilities.add of 'setup'",
            "securityContext.capabilities.add of 'trainer'",
        ),
    )
    both = _with_container(capabilities={"add": ["CHOWN"]})
    assert violations(RESTRICTED, {}, both) == [
        Violation(
            "capabilities",
            'container "trainer" must set securityContext.capabilities.drop=["ALL"]; '
            'container "trainer" must not include "CHOWN" in securityContext.capabilities.add',
            "extra system powers",
            (
                "securityContext.capabilities.drop of 'trainer'",
                "securityContext.capabilities.add of 'trainer'",
            ),
        )
    ]


def test_app_armor_by_annotation_and_by_field() -> None:
    """check_appArmorProfile.go allowedAnnotationValue: empty, runtime/default or localhost/*;
    allowedProfileType: RuntimeDefault or Localhost."""
    meta = {
        "annotations": {
            "container.apparmor.security.beta.kubernetes.io/trainer": "unconfined",
            "container.apparmor.security.beta.kubernetes.io/ok": "runtime/default",
            "container.apparmor.security.beta.kubernetes.io/local": "localhost/prof",
            "container.apparmor.security.beta.kubernetes.io/unset": "",
            "other": "unconfined",
        }
    }
    (found,) = violations(BASELINE, meta, _spec())
    assert found.detail == (
        "forbidden AppArmor profiles: "
        "container.apparmor.security.beta.kubernetes.io/trainer=unconfined"
    )
    spec = _with_container(appArmorProfile={"type": "Unconfined"})
    spec["securityContext"]["appArmorProfile"] = {"type": "Localhost"}
    (found,) = violations(BASELINE, {}, spec)
    assert (
        found.detail
        == 'forbidden AppArmor profiles: container "trainer" appArmorProfile.type=Unconfined'
    )
    assert (
        violations(BASELINE, {}, _with_container(appArmorProfile={"type": "RuntimeDefault"})) == []
    )


@pytest.mark.parametrize(
    ("options", "allowed"),
    [
        ({"type": "container_t", "level": "s0:c1"}, True),
        ({"type": "container_init_t"}, True),
        ({"type": "container_kvm_t"}, True),
        ({"type": "spc_t"}, False),
        ({"user": "system_u"}, False),
        ({"role": "object_r"}, False),
    ],
)
def test_se_linux_options(options: dict[str, str], allowed: bool) -> None:
    found = violations(BASELINE, {}, _with_container(seLinuxOptions=options))
    assert [(v.check, v.detail) for v in found] == (
        []
        if allowed
        else [
            ("seLinuxOptions", 'container "trainer" set forbidden securityContext.seLinuxOptions')
        ]
    )


def test_container_engine_selinux_type_is_allowed_from_1_31() -> None:
    spec = _spec()
    spec["securityContext"]["seLinuxOptions"] = {"type": "container_engine_t"}
    assert _checks(Policy(Level.BASELINE, (1, 31)), spec) == []
    assert violations(Policy(Level.BASELINE, (1, 30)), {}, spec)[0].detail == (
        "pod set forbidden securityContext.seLinuxOptions"
    )


def test_proc_mount() -> None:
    assert violations(BASELINE, {}, _with_container(procMount="Default")) == []
    (found,) = violations(BASELINE, {}, _with_container(procMount="Unmasked"))
    assert (
        found.detail == 'container "trainer" must not set securityContext.procMount to "Unmasked"'
    )


def test_a_user_namespace_may_unmask_proc_at_baseline_from_1_35() -> None:
    """check_procMount_baseline.go procMount1_35baseline (MinimumVersion 1.35) skips a pod with
    hostUsers: false; check_procMount_restricted.go (MinimumVersion 1.35, overriding procMount)
    keeps the unconditional procMount_1_0 at restricted."""
    spec = _with_container(procMount="Unmasked")
    spec["hostUsers"] = False
    assert violations(Policy(Level.BASELINE, (1, 35)), {}, spec) == []
    assert violations(BASELINE, {}, spec) == []
    assert _checks(Policy(Level.BASELINE, (1, 34)), spec) == ["procMount"]
    for version in ((1, 34), (1, 35), None):
        assert [v.detail for v in violations(Policy(Level.RESTRICTED, version), {}, spec)] == [
            'container "trainer" must not set securityContext.procMount to "Unmasked"'
        ]
    spec["hostUsers"] = True
    assert _checks(Policy(Level.BASELINE, (1, 35)), spec) == ["procMount"]
    assert _checks(RESTRICTED, spec) == ["procMount"]


def test_baseline_seccomp_forbids_unconfined_from_1_19() -> None:
    spec = _spec(securityContext={"seccompProfile": {"type": "Unconfined"}})
    spec["containers"][0]["securityContext"]["seccompProfile"] = {"type": "Unconfined"}
    (found,) = violations(BASELINE, {}, spec)
    assert found.detail == (
        'pod, container "trainer" must not set securityContext.seccompProfile.type to "Unconfined"'
    )
    assert _checks(Policy(Level.BASELINE, (1, 18)), spec) == []


def test_restricted_seccomp_on_the_pod_or_on_every_container() -> None:
    unset = _spec(securityContext={"runAsNonRoot": True})
    (found,) = violations(RESTRICTED, {}, unset)
    assert found.detail == (
        'container "trainer" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost"'
    )
    per_container = _with_container(seccompProfile={"type": "Localhost"})
    per_container["securityContext"] = {"runAsNonRoot": True}
    assert violations(RESTRICTED, {}, per_container) == []
    bad_pod = _spec(
        securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "Unconfined"}}
    )
    assert violations(RESTRICTED, {}, bad_pod)[0].detail.startswith("pod must set")
    bad_container = _with_container(seccompProfile={"type": "Unconfined"})
    assert violations(RESTRICTED, {}, bad_container)[0].detail.startswith('container "trainer"')
    assert _checks(Policy(Level.RESTRICTED, (1, 18)), unset) == []


@pytest.mark.parametrize(
    ("version", "name", "allowed"),
    [
        ((1, 0), "net.ipv4.ip_unprivileged_port_start", True),
        ((1, 26), "net.ipv4.ip_local_reserved_ports", False),
        ((1, 27), "net.ipv4.ip_local_reserved_ports", True),
        ((1, 28), "net.ipv4.tcp_keepalive_time", False),
        ((1, 29), "net.ipv4.tcp_keepalive_time", True),
        ((1, 29), "net.ipv4.tcp_keepalive_probes", True),
        ((1, 31), "net.ipv4.tcp_rmem", False),
        ((1, 31), "net.ipv4.tcp_wmem", False),
        ((1, 32), "net.ipv4.tcp_rmem", True),
        ((1, 32), "net.ipv4.tcp_wmem", True),
        (None, "net.ipv4.tcp_rmem", True),
        (None, "net.ipv4.tcp_fin_timeout", True),
        (None, "kernel.msgmax", False),
    ],
)
def test_sysctls_safe_by_version(version: tuple[int, int] | None, name: str, allowed: bool) -> None:
    """check_sysctls.go: sysctlsAllowedV1Dot0, then V1Dot27, V1Dot29 and V1Dot32 (tcp_rmem,
    tcp_wmem), each the one before plus its own names."""
    spec = _spec()
    spec["securityContext"]["sysctls"] = [{"name": name, "value": "1"}]
    found = violations(Policy(Level.BASELINE, version), {}, spec)
    assert [v.detail for v in found] == ([] if allowed else [f"forbidden sysctls {name}"])


def test_windows_host_process() -> None:
    spec = _with_container(windowsOptions={"hostProcess": True})
    assert _checks(BASELINE, spec) == ["windowsHostProcess"]
    assert violations(BASELINE, {}, _with_container(windowsOptions={"hostProcess": False})) == []


def test_allow_privilege_escalation_must_be_false_from_1_8() -> None:
    spec = _spec()
    del spec["containers"][0]["securityContext"]["allowPrivilegeEscalation"]
    (found,) = violations(RESTRICTED, {}, spec)
    assert (found.detail, found.fields) == (
        'container "trainer" must set securityContext.allowPrivilegeEscalation=false',
        ("securityContext.allowPrivilegeEscalation of 'trainer'",),
    )
    assert _checks(Policy(Level.RESTRICTED, (1, 7)), spec) == []
    assert _checks(BASELINE, spec) == []


@pytest.mark.parametrize(
    ("pod", "container", "detail"),
    [
        (True, None, None),
        (None, True, None),
        (True, False, 'container "trainer" must not set securityContext.runAsNonRoot=false'),
        (False, True, "pod must not set securityContext.runAsNonRoot=false"),
        (
            False,
            False,
            'pod and container "trainer" must not set securityContext.runAsNonRoot=false',
        ),
        (None, None, 'pod or container "trainer" must set securityContext.runAsNonRoot=true'),
    ],
)
def test_run_as_non_root(pod: bool | None, container: bool | None, detail: str | None) -> None:
    spec = _spec()
    spec["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    if pod is not None:
        spec["securityContext"]["runAsNonRoot"] = pod
    if container is not None:
        spec["containers"][0]["securityContext"]["runAsNonRoot"] = container
    assert [v.detail for v in violations(RESTRICTED, {}, spec)] == ([detail] if detail else [])


def test_run_as_user_zero_from_1_23() -> None:
    spec = _spec()
    spec["securityContext"]["runAsUser"] = 0
    spec["containers"][0]["securityContext"]["runAsUser"] = 0
    (found,) = violations(RESTRICTED, {}, spec)
    assert found.detail == 'pod, container "trainer" must not set runAsUser=0'
    assert _checks(Policy(Level.RESTRICTED, (1, 22)), spec) == []
    spec["securityContext"]["runAsUser"] = 1000
    spec["containers"][0]["securityContext"]["runAsUser"] = 1000
    assert violations(RESTRICTED, {}, spec) == []


def test_a_user_namespace_relaxes_the_root_checks_from_1_35() -> None:
    """check_runAsNonRoot.go runAsNonRoot1_35 and check_runAsUser.go runAsUser1_35
    (MinimumVersion 1.35) skip a pod with hostUsers: false; below 1.35 the relaxation needs the
    apiserver's alpha feature gate UserNamespacesPodSecurityStandards (default off, helpers.go
    RelaxPolicyForUserNamespacePods up to v0.34), so the pod is refused."""
    spec = _spec(
        hostUsers=False,
        securityContext={"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}},
    )
    assert violations(RESTRICTED, {}, spec) == []
    assert violations(Policy(Level.RESTRICTED, (1, 35)), {}, spec) == []
    assert _checks(Policy(Level.RESTRICTED, (1, 34)), spec) == ["runAsNonRoot", "runAsUser"]
    assert [v.detail for v in violations(Policy(Level.RESTRICTED, (1, 30)), {}, spec)] == [
        'pod or container "trainer" must set securityContext.runAsNonRoot=true',
        "pod must not set runAsUser=0",
    ]
    spec["hostUsers"] = True
    assert _checks(RESTRICTED, spec) == ["runAsNonRoot", "runAsUser"]


def test_windows_pods_skip_the_linux_only_restricted_checks_from_1_25() -> None:
    """allowPrivilegeEscalation_1_25, capabilitiesRestricted_1_25 and
    seccompProfileRestricted_1_25 (check_allowPrivilegeEscalation.go,
    check_capabilities_restricted.go, check_seccompProfile_restricted.go) allow a pod with
    spec.os.name: windows; runAsNonRoot still applies."""
    spec: dict[str, Any] = {
        "os": {"name": "windows"},
        "securityContext": {"runAsNonRoot": True},
        "containers": [{"name": "trainer"}],
    }
    assert violations(Policy(Level.RESTRICTED, (1, 25)), {}, spec) == []
    assert violations(RESTRICTED, {}, spec) == []
    assert _checks(Policy(Level.RESTRICTED, (1, 24)), spec) == [
        "allowPrivilegeEscalation",
        "seccompProfile",
        "capabilities",
    ]
    spec["os"] = {"name": "linux"}
    assert _checks(RESTRICTED, spec) == [
        "allowPrivilegeEscalation",
        "seccompProfile",
        "capabilities",
    ]


def test_a_privileged_gpu_template_at_restricted_fails_in_table_order() -> None:
    spec = {"containers": [{"name": "trainer", "securityContext": {"privileged": True}}]}
    assert _checks(RESTRICTED, spec) == [
        "privileged",
        "allowPrivilegeEscalation",
        "runAsNonRoot",
        "seccompProfile",
        "capabilities",
    ]


def _pod_context(**context: Any) -> dict[str, Any]:
    spec = _spec()
    spec["securityContext"].update(context)
    return spec


@pytest.mark.parametrize(
    ("spec", "meta", "expected"),
    [
        (
            _spec(hostPID=True),
            {},
            Violation(
                "hostNamespaces",
                "hostPID=true",
                "a share of the machine's own network or processes",
                ("hostPID",),
            ),
        ),
        (
            _spec(volumes=[{"name": "v", "hostPath": {}}]),
            {},
            Violation(
                "hostPathVolumes",
                'hostPath volume "v"',
                "a folder of the machine itself",
                ("the volume 'v'",),
            ),
        ),
        (
            _with_container(capabilities={"add": ["SYS_ADMIN"]}),
            {},
            Violation(
                "capabilities",
                'container "trainer" must not include "SYS_ADMIN" in '
                "securityContext.capabilities.add",
                "extra system powers",
                ("securityContext.capabilities.add of 'trainer'",),
            ),
        ),
        (
            _spec(),
            {
                "annotations": {
                    "container.apparmor.security.beta.kubernetes.io/trainer": "unconfined"
                }
            },
            Violation(
                "appArmorProfile",
                "forbidden AppArmor profiles: "
                "container.apparmor.security.beta.kubernetes.io/trainer=unconfined",
                "no AppArmor protection",
                ("securityContext.appArmorProfile",),
            ),
        ),
        (
            _with_container(seLinuxOptions={"type": "spc_t"}),
            {},
            Violation(
                "seLinuxOptions",
                'container "trainer" set forbidden securityContext.seLinuxOptions',
                "custom SELinux settings",
                ("securityContext.seLinuxOptions",),
            ),
        ),
        (
            _with_container(procMount="Unmasked"),
            {},
            Violation(
                "procMount",
                'container "trainer" must not set securityContext.procMount to "Unmasked"',
                "an unmasked view of the machine's processes",
                ("securityContext.procMount of 'trainer'",),
            ),
        ),
        (
            _pod_context(seccompProfile={"type": "Unconfined"}),
            {},
            Violation(
                "seccompProfile",
                'pod must not set securityContext.seccompProfile.type to "Unconfined"',
                "no system-call filter",
                ("securityContext.seccompProfile",),
            ),
        ),
        (
            _pod_context(
                sysctls=[
                    {"name": "kernel.msgmax"},
                    {"name": "kernel.shm_rmid_forced"},
                    {"name": "vm.x"},
                ]
            ),
            {},
            Violation(
                "sysctls",
                "forbidden sysctls kernel.msgmax, vm.x",
                "kernel settings that reach the whole machine",
                ("securityContext.sysctls",),
            ),
        ),
        (
            _pod_context(windowsOptions={"hostProcess": True}),
            {},
            Violation(
                "windowsHostProcess",
                "securityContext.windowsOptions.hostProcess=true",
                "a process of the machine itself",
                ("securityContext.windowsOptions.hostProcess",),
            ),
        ),
    ],
)
def test_each_baseline_check_names_what_breaks_it(
    spec: dict[str, Any], meta: dict[str, Any], expected: Violation
) -> None:
    assert violations(BASELINE, meta, spec) == [expected]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            _spec(volumes=[{"name": "v", "gitRepo": {}}, {"name": "w", "nfs": {}}]),
            Violation(
                "restrictedVolumes",
                'volume "v" uses restricted volume type "gitRepo", '
                'volume "w" uses restricted volume type "nfs"',
                "a kind of storage it doesn't allow",
                ("the volume 'v'", "the volume 'w'"),
            ),
        ),
        (
            _with_container(runAsNonRoot=False),
            Violation(
                "runAsNonRoot",
                'container "trainer" must not set securityContext.runAsNonRoot=false',
                "running as the machine's administrator (root)",
                ("securityContext.runAsNonRoot",),
            ),
        ),
        (
            _pod_context(runAsUser=0),
            Violation(
                "runAsUser",
                "pod must not set runAsUser=0",
                "running as the machine's administrator (root)",
                ("securityContext.runAsUser",),
            ),
        ),
        (
            _pod_context(seccompProfile={"type": "Unconfined"}),
            Violation(
                "seccompProfile",
                "pod must set securityContext.seccompProfile.type to "
                '"RuntimeDefault" or "Localhost"',
                "no system-call filter",
                ("securityContext.seccompProfile",),
            ),
        ),
        (
            _with_container(capabilities={"drop": ["NET_RAW"]}),
            Violation(
                "capabilities",
                'container "trainer" must set securityContext.capabilities.drop=["ALL"]',
                "the default system powers (they must all be dropped)",
                ("securityContext.capabilities.drop of 'trainer'",),
            ),
        ),
        (
            _with_container(allowPrivilegeEscalation=True),
            Violation(
                "allowPrivilegeEscalation",
                'container "trainer" must set securityContext.allowPrivilegeEscalation=false',
                "the right to gain more privileges",
                ("securityContext.allowPrivilegeEscalation of 'trainer'",),
            ),
        ),
    ],
)
def test_each_restricted_check_names_what_breaks_it(
    spec: dict[str, Any], expected: Violation
) -> None:
    assert violations(RESTRICTED, {}, spec) == [expected]
