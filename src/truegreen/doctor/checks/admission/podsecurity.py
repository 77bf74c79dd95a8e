"""Pod Security admission, as pure functions: does a namespace's enforced level refuse a pod?

Ground truth, kubernetes/kubernetes staging/src/k8s.io/pod-security-admission:
- api/helpers.go: the level a namespace enforces (podsecurity_api.py);
- policy/check_*.go: each check, its level, the version it starts at, and the field it names;
  policy/registry.go: a restricted check replaces the baseline check it overrides.
Not visible through the API, so not modelled: the cluster's default level for unlabelled
namespaces (privileged unless an AdmissionConfiguration says otherwise) and its exemptions.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from truegreen import kubeobjects as o
from truegreen.doctor.checks.admission.podsecurity_api import Level, Policy, Version


def _at_least(version: Version, minimum: tuple[int, int]) -> bool:
    """`latest` is the newest version of the standards, so every check applies at it."""
    return version is None or version >= minimum


class Violation(Struct, frozen=True):
    """One check the pod fails, in Pod Security's words and in plain ones."""

    check: str
    """The check's id (`privileged`, `runAsNonRoot`)."""
    detail: str
    """What breaks it, naming the field: `container "trainer" must not set
    securityContext.privileged=true`."""
    plain: str
    """Plain words for what the pod asks for: `full control of the machine`."""
    fields: tuple[str, ...]
    """The fields to change, as the operator would find them in the job's settings."""


def _containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container Pod Security visits: init, main and ephemeral."""
    return [
        *o.init_containers(spec),
        *o.containers(spec),
        *(o.mapping(c) for c in o.sequence(spec.get("ephemeralContainers"))),
    ]


def _context(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.mapping(obj.get("securityContext"))


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _who(noun: str, names: Sequence[str]) -> str:
    """`container "a"` or `containers "a", "b"`, as Pod Security words it."""
    return f"{noun}{'s' if len(names) > 1 else ''} {_quoted(names)}"


def _windows(spec: Mapping[str, Any], version: Version) -> bool:
    """spec.os.name: windows from 1.25, where the Linux-only restricted checks stop applying."""
    return _at_least(version, (1, 25)) and o.mapping(spec.get("os")).get("name") == "windows"


def _containers_where(
    spec: Mapping[str, Any], test: Callable[[Mapping[str, Any]], bool]
) -> list[str]:
    return [str(c.get("name")) for c in _containers(spec) if test(_context(c))]


Check = Callable[[Mapping[str, Any], Mapping[str, Any], Version], Violation | None]
"""(pod metadata, pod spec, policy version) → the violation, if any."""


def privileged(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_privileged.go: no container may be privileged."""
    bad = _containers_where(spec, lambda sc: sc.get("privileged") is True)
    if not bad:
        return None
    return Violation(
        "privileged",
        f"{_who('container', bad)} must not set securityContext.privileged=true",
        "full control of the machine",
        tuple(f"securityContext.privileged of '{n}'" for n in bad),
    )


def host_namespaces(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_hostNamespaces.go: no hostNetwork, hostPID or hostIPC."""
    bad = [f for f in ("hostNetwork", "hostPID", "hostIPC") if spec.get(f) is True]
    if not bad:
        return None
    return Violation(
        "hostNamespaces",
        ", ".join(f"{f}=true" for f in bad),
        "a share of the machine's own network or processes",
        tuple(bad),
    )


def host_path_volumes(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_hostPathVolumes.go: no hostPath volumes."""
    bad = [
        str(o.mapping(v).get("name"))
        for v in o.sequence(spec.get("volumes"))
        if "hostPath" in o.mapping(v)
    ]
    if not bad:
        return None
    return Violation(
        "hostPathVolumes",
        f"hostPath {_who('volume', bad)}",
        "a folder of the machine itself",
        tuple(f"the volume '{n}'" for n in bad),
    )


def host_ports(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_hostPorts.go: no container port bound on the host."""
    bad = [
        (str(c.get("name")), o.integer(o.mapping(p).get("hostPort")))
        for c in _containers(spec)
        for p in o.sequence(c.get("ports"))
        if o.integer(o.mapping(p).get("hostPort"))
    ]
    if not bad:
        return None
    return Violation(
        "hostPorts",
        ", ".join(f'container "{n}" uses hostPort {port}' for n, port in bad),
        "a port of the machine itself",
        tuple(dict.fromkeys(f"ports[].hostPort of '{n}'" for n, _ in bad)),
    )


# check_hostProbesAndhostLifecycle.go: the handlers whose host it reads, in the order it reads them.
_HOST_HANDLERS = (
    ("livenessProbe",),
    ("readinessProbe",),
    ("startupProbe",),
    ("lifecycle", "postStart"),
    ("lifecycle", "preStop"),
)


def _handler_hosts(container: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, host) for each probe or lifecycle handler of the container that names a host."""
    found = []
    for path in _HOST_HANDLERS:
        handler: Mapping[str, Any] = container
        for step in path:
            handler = o.mapping(handler.get(step))
        for action in ("httpGet", "tcpSocket"):
            if host := str(o.mapping(handler.get(action)).get("host") or ""):
                found.append((".".join((*path, action, "host")), host))
    return found


def host_probes(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_hostProbesAndhostLifecycle.go: no probe or lifecycle handler aimed at a host of its
    own (the kubelet would call that address for the pod)."""
    bad = [(str(c.get("name")), *found) for c in _containers(spec) for found in _handler_hosts(c)]
    if not bad:
        return None
    names = sorted({n for n, _, _ in bad})
    hosts = sorted({h for _, _, h in bad})
    return Violation(
        "hostProbesAndHostLifecycle",
        f"{_who('container', names)} {'uses' if len(names) == 1 else 'use'} "
        f"{_who('probe or lifecycle host', hosts)}",
        "health checks or hooks sent to another address",
        tuple(dict.fromkeys(f"{field} of '{n}'" for n, field, _ in bad)),
    )


# check_capabilities_baseline.go: what a container may add at the baseline level.
_DEFAULT_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)


def _added(sc: Mapping[str, Any]) -> list[str]:
    return [str(c) for c in o.sequence(o.mapping(sc.get("capabilities")).get("add"))]


def _capabilities_added(spec: Mapping[str, Any], allowed: frozenset[str]) -> Violation | None:
    bad = {
        str(c.get("name")): forbidden
        for c in _containers(spec)
        if (forbidden := [cap for cap in _added(_context(c)) if cap not in allowed])
    }
    if not bad:
        return None
    capabilities = sorted({cap for caps in bad.values() for cap in caps})
    return Violation(
        "capabilities",
        f"{_who('container', list(bad))} must not include {_quoted(capabilities)} in "
        "securityContext.capabilities.add",
        "extra system powers",
        tuple(f"securityContext.capabilities.add of '{n}'" for n in bad),
    )


def capabilities_baseline(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_capabilities_baseline.go: only the container runtime's default capabilities."""
    return _capabilities_added(spec, _DEFAULT_CAPABILITIES)


def _not_dropped(spec: Mapping[str, Any]) -> Violation | None:
    bad = _containers_where(
        spec,
        lambda sc: "ALL" not in o.sequence(o.mapping(sc.get("capabilities")).get("drop")),
    )
    if not bad:
        return None
    return Violation(
        "capabilities",
        f'{_who("container", bad)} must set securityContext.capabilities.drop=["ALL"]',
        "the default system powers (they must all be dropped)",
        tuple(f"securityContext.capabilities.drop of '{n}'" for n in bad),
    )


def capabilities_restricted(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_capabilities_restricted.go: drop ALL, add nothing but NET_BIND_SERVICE, both said
    at once; Windows pods are exempt from 1.25 (capabilitiesRestricted_1_25)."""
    if _windows(spec, version):
        return None
    found = [
        v
        for v in (_not_dropped(spec), _capabilities_added(spec, frozenset({"NET_BIND_SERVICE"})))
        if v is not None
    ]
    if not found:
        return None
    return Violation(
        "capabilities",
        "; ".join(v.detail for v in found),
        found[-1].plain,  # what it adds, when it adds something, says more than what it keeps
        tuple(f for v in found for f in v.fields),
    )


_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _owners(spec: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The pod's security context and each container's, named as Pod Security names them."""
    return [
        ("pod", _context(spec)),
        *((f'container "{c.get("name")}"', _context(c)) for c in _containers(spec)),
    ]


def app_armor(
    meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_appArmorProfile.go: no Unconfined profile, by field or by the older annotation (an
    empty annotation is allowed, allowedAnnotationValue)."""
    bad = [
        f"{key}={value}"
        for key, value in o.mapping(meta.get("annotations")).items()
        if str(key).startswith(_APPARMOR_ANNOTATION)
        and value not in ("", "runtime/default")
        and not str(value).startswith("localhost/")
    ]
    bad += [
        f"{who} appArmorProfile.type={profile}"
        for who, sc in _owners(spec)
        if (profile := o.mapping(sc.get("appArmorProfile")).get("type")) is not None
        and profile not in ("RuntimeDefault", "Localhost")
    ]
    if not bad:
        return None
    return Violation(
        "appArmorProfile",
        f"forbidden AppArmor profiles: {', '.join(bad)}",
        "no AppArmor protection",
        ("securityContext.appArmorProfile",),
    )


_SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})


def se_linux(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_seLinuxOptions.go: only the container types (container_engine_t from 1.31); no user
    or role."""
    allowed = _SELINUX_TYPES | ({"container_engine_t"} if _at_least(version, (1, 31)) else set())
    bad = []
    for who, sc in _owners(spec):
        options = o.mapping(sc.get("seLinuxOptions"))
        if (
            str(options.get("type") or "") not in allowed
            or options.get("user")
            or options.get("role")
        ):
            bad.append(who)
    if not bad:
        return None
    return Violation(
        "seLinuxOptions",
        f"{', '.join(bad)} set forbidden securityContext.seLinuxOptions",
        "custom SELinux settings",
        ("securityContext.seLinuxOptions",),
    )


def _user_namespace(spec: Mapping[str, Any], version: Version) -> bool:
    """hostUsers: false from policy 1.35 (helpers.go relaxPolicyForUserNamespacePod): root
    inside is not root on the machine. Below 1.35 only the apiserver's alpha feature gate
    UserNamespacesPodSecurityStandards waives the checks, off unless an admin turned it on, and
    not visible through the API."""
    return _at_least(version, (1, 35)) and spec.get("hostUsers") is False


def _proc_mount(spec: Mapping[str, Any]) -> Violation | None:
    """procMount_1_0: the default /proc mask only."""
    bad = _containers_where(spec, lambda sc: sc.get("procMount") not in (None, "Default"))
    if not bad:
        return None
    return Violation(
        "procMount",
        f'{_who("container", bad)} must not set securityContext.procMount to "Unmasked"',
        "an unmasked view of the machine's processes",
        tuple(f"securityContext.procMount of '{n}'" for n in bad),
    )


def proc_mount(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_procMount_baseline.go: the default /proc mask; anything in a user namespace from
    1.35 (procMount1_35baseline)."""
    return None if _user_namespace(spec, version) else _proc_mount(spec)


def proc_mount_restricted(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_procMount_restricted.go: the default /proc mask, user namespace or not."""
    return _proc_mount(spec)


def _seccomp(sc: Mapping[str, Any]) -> object:
    return o.mapping(sc.get("seccompProfile")).get("type")


def seccomp_baseline(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_seccompProfile_baseline.go: no Unconfined profile."""
    bad = ["pod"] if _seccomp(_context(spec)) == "Unconfined" else []
    bad += [
        f'container "{n}"' for n in _containers_where(spec, lambda sc: _seccomp(sc) == "Unconfined")
    ]
    if not bad:
        return None
    return Violation(
        "seccompProfile",
        f'{", ".join(bad)} must not set securityContext.seccompProfile.type to "Unconfined"',
        "no system-call filter",
        ("securityContext.seccompProfile",),
    )


_CONFINED = ("RuntimeDefault", "Localhost")


def seccomp_restricted(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_seccompProfile_restricted.go: RuntimeDefault or Localhost, on the pod or on every
    container; no Unconfined anywhere; Windows pods are exempt from 1.25
    (seccompProfileRestricted_1_25)."""
    if _windows(spec, version):
        return None
    pod_type = _seccomp(_context(spec))
    bad = ["pod"] if pod_type is not None and pod_type not in _CONFINED else []
    bad += [
        f'container "{n}"'
        for n in _containers_where(
            spec,
            lambda sc: (
                _seccomp(sc) not in _CONFINED if _seccomp(sc) is not None else pod_type is None
            ),
        )
    ]
    if not bad:
        return None
    return Violation(
        "seccompProfile",
        f'{", ".join(bad)} must set securityContext.seccompProfile.type to "RuntimeDefault" '
        'or "Localhost"',
        "no system-call filter",
        ("securityContext.seccompProfile",),
    )


# check_sysctls.go: the safe sysctls, by the version that allowed them.
_SAFE_SYSCTLS: tuple[tuple[tuple[int, int], frozenset[str]], ...] = (
    (
        (1, 0),
        frozenset(
            {
                "kernel.shm_rmid_forced",
                "net.ipv4.ip_local_port_range",
                "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range",
                "net.ipv4.ip_unprivileged_port_start",
            }
        ),
    ),
    ((1, 27), frozenset({"net.ipv4.ip_local_reserved_ports"})),
    (
        (1, 29),
        frozenset(
            {
                "net.ipv4.tcp_keepalive_time",
                "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes",
            }
        ),
    ),
    ((1, 32), frozenset({"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"})),
)


def sysctls(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_sysctls.go: only the sysctls that are safe at this version."""
    safe = frozenset().union(
        *(names for since, names in _SAFE_SYSCTLS if _at_least(version, since))
    )
    bad = [
        str(o.mapping(s).get("name"))
        for s in o.sequence(_context(spec).get("sysctls"))
        if o.mapping(s).get("name") not in safe
    ]
    if not bad:
        return None
    return Violation(
        "sysctls",
        f"forbidden sysctls {', '.join(bad)}",
        "kernel settings that reach the whole machine",
        ("securityContext.sysctls",),
    )


def host_process(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_windowsHostProcess.go: no Windows host process."""
    owners = [_context(spec), *(_context(c) for c in _containers(spec))]
    if not any(o.mapping(sc.get("windowsOptions")).get("hostProcess") is True for sc in owners):
        return None
    return Violation(
        "windowsHostProcess",
        "securityContext.windowsOptions.hostProcess=true",
        "a process of the machine itself",
        ("securityContext.windowsOptions.hostProcess",),
    )


# check_restrictedVolumes.go: the only volume sources the restricted level admits.
_RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)


def restricted_volumes(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], _version: Version
) -> Violation | None:
    """check_restrictedVolumes.go: configMap, csi, downwardAPI, emptyDir, ephemeral, image,
    persistentVolumeClaim, projected and secret volumes only."""
    bad = [
        (str(volume.get("name")), source)
        for volume in map(o.mapping, o.sequence(spec.get("volumes")))
        for source in volume
        if source != "name" and source not in _RESTRICTED_VOLUMES
    ]
    if not bad:
        return None
    return Violation(
        "restrictedVolumes",
        ", ".join(f'volume "{n}" uses restricted volume type "{s}"' for n, s in bad),
        "a kind of storage it doesn't allow",
        tuple(f"the volume '{n}'" for n, _ in bad),
    )


def privilege_escalation(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_allowPrivilegeEscalation.go: every container sets allowPrivilegeEscalation=false;
    Windows pods are exempt from 1.25 (allowPrivilegeEscalation_1_25)."""
    if _windows(spec, version):
        return None
    bad = _containers_where(spec, lambda sc: sc.get("allowPrivilegeEscalation") is not False)
    if not bad:
        return None
    return Violation(
        "allowPrivilegeEscalation",
        f"{_who('container', bad)} must set securityContext.allowPrivilegeEscalation=false",
        "the right to gain more privileges",
        tuple(f"securityContext.allowPrivilegeEscalation of '{n}'" for n in bad),
    )


def run_as_non_root(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_runAsNonRoot.go: runAsNonRoot=true on the pod or on every container; false nowhere;
    anything in a user namespace from 1.35 (runAsNonRoot1_35)."""
    if _user_namespace(spec, version):
        return None
    pod_value = _context(spec).get("runAsNonRoot")
    explicit = _containers_where(spec, lambda sc: sc.get("runAsNonRoot") is False)
    implicit = (
        []
        if pod_value is True
        else _containers_where(spec, lambda sc: sc.get("runAsNonRoot") is None)
    )
    if pod_value is False or explicit:
        setters = ["pod"] if pod_value is False else []
        setters += [_who("container", explicit)] if explicit else []
        detail = f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    elif implicit:
        detail = f"pod or {_who('container', implicit)} must set securityContext.runAsNonRoot=true"
    else:
        return None
    return Violation(
        "runAsNonRoot",
        detail,
        "running as the machine's administrator (root)",
        ("securityContext.runAsNonRoot",),
    )


def run_as_user(
    _meta: Mapping[str, Any], spec: Mapping[str, Any], version: Version
) -> Violation | None:
    """check_runAsUser.go: runAsUser is never 0; anything in a user namespace from 1.35
    (runAsUser1_35)."""
    if _user_namespace(spec, version):
        return None
    bad = ["pod"] if _context(spec).get("runAsUser") == 0 else []
    bad += [
        f'container "{n}"' for n in _containers_where(spec, lambda sc: sc.get("runAsUser") == 0)
    ]
    if not bad:
        return None
    return Violation(
        "runAsUser",
        f"{', '.join(bad)} must not set runAsUser=0",
        "running as the machine's administrator (root)",
        ("securityContext.runAsUser",),
    )


class _Rule(Struct, frozen=True):
    level: Level
    since: tuple[int, int]
    check: Check
    replaces: str = ""
    """At the restricted level, the baseline check this one overrides (registry.go)."""


_RULES: tuple[_Rule, ...] = (
    _Rule(Level.BASELINE, (1, 0), privileged),
    _Rule(Level.BASELINE, (1, 0), host_namespaces),
    _Rule(Level.BASELINE, (1, 0), host_path_volumes),
    _Rule(Level.BASELINE, (1, 0), host_ports),
    _Rule(Level.BASELINE, (1, 34), host_probes),
    _Rule(Level.BASELINE, (1, 0), capabilities_baseline),
    _Rule(Level.BASELINE, (1, 0), app_armor),
    _Rule(Level.BASELINE, (1, 0), proc_mount),
    _Rule(Level.BASELINE, (1, 19), seccomp_baseline),
    _Rule(Level.BASELINE, (1, 0), host_process),
    _Rule(Level.BASELINE, (1, 0), se_linux),
    _Rule(Level.BASELINE, (1, 0), sysctls),
    _Rule(Level.RESTRICTED, (1, 0), restricted_volumes, replaces="host_path_volumes"),
    _Rule(Level.RESTRICTED, (1, 35), proc_mount_restricted, replaces="proc_mount"),
    _Rule(Level.RESTRICTED, (1, 8), privilege_escalation),
    _Rule(Level.RESTRICTED, (1, 0), run_as_non_root),
    _Rule(Level.RESTRICTED, (1, 23), run_as_user),
    _Rule(Level.RESTRICTED, (1, 19), seccomp_restricted, replaces="seccomp_baseline"),
    _Rule(Level.RESTRICTED, (1, 22), capabilities_restricted, replaces="capabilities_baseline"),
)
_STRICTNESS = {Level.PRIVILEGED: 0, Level.BASELINE: 1, Level.RESTRICTED: 2}


def violations(policy: Policy, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> list[Violation]:
    """Every check of `policy` that the pod (its metadata and spec) fails."""
    rules = [
        r
        for r in _RULES
        if _STRICTNESS[r.level] <= _STRICTNESS[policy.level] and _at_least(policy.version, r.since)
    ]
    replaced = {r.replaces for r in rules}
    found = [r.check(meta, spec, policy.version) for r in rules if r.check.__name__ not in replaced]
    return [v for v in found if v is not None]
