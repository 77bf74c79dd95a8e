"""What doctor asks a registry about each image, and what each answer means, value by value.

The kubelet's rules these follow are cited in src/truegreen/doctor/knowledge/image_presence.py:
keyring.go (which login applies), kuberuntime_image.go (each login tried in turn, no anonymous
try after them), the ServiceAccount admission plugin (an account's logins only for a pod that
names none), containerd's platform matcher and the OCI image spec (the size of a pull)."""

import base64
import json
from typing import Any

import pytest

from truegreen.cluster import CantRead, Got, Listed, ReadFailure
from truegreen.cluster.redact import UNPARSABLE
from truegreen.doctor.checks.image_pull.presence import Outcome, judge
from truegreen.doctor.findings import Basis, Status
from truegreen.doctor.knowledge.image_presence import (
    DEFAULT_PLATFORM,
    MACHINE_LOGIN_REGISTRIES,
    ImageLookup,
    MachinePlatform,
    MachinePull,
    OwnLogin,
    PodLogins,
    Presence,
    PullSign,
    RegistryAnswer,
    combined,
    download_size,
    is_index,
    keyring_keys,
    kubelet_pulled,
    kubelet_skips,
    login_names,
    login_probes,
    machine_platform,
    machines_log_in,
    machines_may_log_in,
    may_pick,
    offered_words,
    own_login,
    plain_size,
    platform_manifest,
    platforms_offered,
    pod_logins,
    pulled_images,
    pulled_without_login,
    registries_with_credentials,
    spared_pulls,
    unreadable_entries,
    wanted_lookups,
)
from truegreen.doctor.knowledge.pull_verification import MachineCopies, MachineCopy
from truegreen.images import login_covers
from truegreen.pull_policy import pull_policy
from truegreen.redacted import REDACTED

UNCHECKED = "image-pull.image-unchecked"


def _login(name: str, *hosts: str, kind: str = "kubernetes.io/dockerconfigjson") -> Got:
    auths = {host: {"auth": base64.b64encode(b"robot:pw").decode()} for host in hosts}
    document = {"auths": auths} if kind.endswith("dockerconfigjson") else auths
    key = ".dockerconfigjson" if kind.endswith("dockerconfigjson") else ".dockercfg"
    value = base64.b64encode(json.dumps(document).encode()).decode()
    return Got({"kind": "Secret", "metadata": {"name": name}, "type": kind, "data": {key: value}})


def _machine(arch: str | None, os_name: str | None = "linux") -> dict[str, Any]:
    labels = {k: v for k, v in (("kubernetes.io/arch", arch), ("kubernetes.io/os", os_name)) if v}
    return {"kind": "Node", "metadata": {"name": f"m-{arch}", "labels": labels}}


def _held(*images: str) -> MachineCopies:
    """`images` on the machines, pulled for pods that named no login, kubelets before 1.35."""
    return MachineCopies(frozenset(MachineCopy(i, frozenset()) for i in images))


class _Template:
    def __init__(self, ref: str, spec: dict[str, Any]) -> None:
        self.ref, self.spec = ref, spec


@pytest.mark.parametrize(
    ("pattern", "registry", "covers"),
    [
        ("registry.example.com", "registry.example.com", True),
        ("*.example.com", "registry.example.com", True),
        ("*.example.com", "a.b.example.com", False),  # one part per `*`: keyring.go urlsMatch
        ("*.example.com", "example.com", False),
        ("registry.example.com:5000", "registry.example.com:5000", True),
        ("registry.example.com", "registry.example.com:5000", False),  # ports must be equal
        ("registry.example.com:5000", "registry.example.com", False),
        ("*.dkr.ecr.*.amazonaws.com", "123.dkr.ecr.eu-west-1.amazonaws.com", True),
        ("reg?stry.example.com", "registry.example.com", False),  # url.Parse: a query
        ("other.example.com", "registry.example.com", False),
        ("docker.io", "docker.io", True),
        ("registry.example.com:*", "registry.example.com:5000", False),  # no port globs
    ],
)
def test_a_login_applies_as_the_kubelet_matches_it(
    pattern: str, registry: str, covers: bool
) -> None:
    assert login_covers(pattern, registry) is covers


@pytest.mark.parametrize(
    ("registry", "own_login"),
    [
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com", True),
        ("123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", True),
        ("gcr.io", True),
        ("eu.gcr.io", True),
        ("europe-west4-docker.pkg.dev", True),
        ("team.azurecr.io", True),
        ("ghcr.io", False),
        ("registry.example.com", False),
        ("docker.io", False),
    ],
)
def test_cloud_registries_whose_machines_log_in_on_their_own(
    registry: str, own_login: bool
) -> None:
    assert machines_log_in(registry) is own_login
    assert len(MACHINE_LOGIN_REGISTRIES) == 14


def test_the_logins_a_kubelet_reads_and_the_registries_they_cover() -> None:
    assert registries_with_credentials(
        _login("a", "https://index.docker.io/v1/", "ghcr.io").obj
    ) == frozenset({"index.docker.io", "ghcr.io"})  # keyring.go Add
    old_form = _login("b", "quay.io", kind="kubernetes.io/dockercfg")
    assert registries_with_credentials(old_form.obj) == frozenset({"quay.io"})
    opaque = {**_login("c", "ghcr.io").obj, "type": "Opaque"}
    assert registries_with_credentials(opaque) is None  # secrets.go reads only the two types
    garbled = {**_login("d", "ghcr.io").obj, "data": {".dockerconfigjson": "not base64!"}}
    assert registries_with_credentials(garbled) is None
    value = _login("e", "ghcr.io").obj["data"][".dockerconfigjson"]
    with_junk = {**_login("e", "ghcr.io").obj, "data": {".dockerconfigjson": f"!{value}"}}
    assert registries_with_credentials(with_junk) is None, "base64 with junk is no login"


def test_a_login_with_an_entry_the_kubelet_cannot_read_covers_nothing() -> None:
    """The redaction marks such an entry (cluster/redact.py); it fails json.Unmarshal of the
    whole login (kubernetes/kubernetes pkg/credentialprovider/config.go,
    DockerConfigEntry.UnmarshalJSON), so the kubelet reads none of its entries."""
    auths = {"ghcr.io": {"auth": REDACTED}, "b.example.com": {"auth": UNPARSABLE}, "c.io": {}}
    config = base64.b64encode(json.dumps({"auths": auths}).encode()).decode()
    damaged = {**_login("d", "ghcr.io").obj, "data": {".dockerconfigjson": config}}
    assert registries_with_credentials(damaged) is None
    assert unreadable_entries(damaged) == ["b.example.com"]
    readable = _login("e", "ghcr.io", "quay.io").obj
    assert unreadable_entries(readable) == []
    assert unreadable_entries({"type": "Opaque"}) == []
    del auths["b.example.com"]
    config = base64.b64encode(json.dumps({"auths": auths}).encode()).decode()
    whole = {**_login("d", "ghcr.io").obj, "data": {".dockerconfigjson": config}}
    assert registries_with_credentials(whole) == frozenset({"ghcr.io"})  # c.io holds none
    assert keyring_keys(whole) == frozenset({"ghcr.io", "c.io"}), "keyring.go Add files it too"
    assert keyring_keys(damaged) is None


def test_a_pod_sends_its_own_logins_and_its_account_s_only_when_it_names_none() -> None:
    account = Got({"kind": "ServiceAccount", "imagePullSecrets": [{"name": "sa-login"}]})
    secrets = {"own": _login("own", "ghcr.io"), "sa-login": _login("sa-login", "quay.io")}
    own = pod_logins({"imagePullSecrets": [{"name": "own"}]}, account, secrets)
    assert (own.names, own.complete) == (("own",), True)
    assert own.applying_to("ghcr.io") == ("own",)
    assert own.applying_to("quay.io") == ()
    none = pod_logins({}, account, secrets)
    assert (none.names, none.complete, none.applying_to("quay.io")) == (
        ("sa-login",),
        True,
        ("sa-login",),
    )


def test_the_login_names_a_pod_sends_are_its_own_else_its_account_s() -> None:
    """plugin/pkg/admission/serviceaccount/admission.go Admit copies the account's
    imagePullSecrets only when `len(pod.Spec.ImagePullSecrets) == 0`."""
    account = Got({"kind": "ServiceAccount", "imagePullSecrets": [{"name": "sa-login"}]})
    own = {"imagePullSecrets": [{"name": "b"}, {"name": "a"}, {"name": "b"}]}
    assert login_names(own, account) == ("b", "a")
    assert login_names({}, account) == ("sa-login",)
    assert login_names({"imagePullSecrets": []}, account) == ("sa-login",)
    assert login_names({}, CantRead(ReadFailure.FORBIDDEN, "no")) == ()
    assert login_names({}, None) == ()
    assert login_names(own, None) == ("b", "a")


def test_a_pod_whose_login_list_holds_an_empty_name_gets_no_login_at_all() -> None:
    """`imagePullSecrets: [{name: ""}]`, Helm's rendering of an empty value, which the API
    accepts (kubernetes/kubernetes#99454): admission.go Admit sees a list of one, so copies
    none of the account's logins, and the kubelet skips the empty name
    (pkg/kubelet/kubelet_pods.go getPullSecretsForPod). The pod sends no login, and that is
    all it sends: its answers are judged whatever became of its account."""
    account = Got({"kind": "ServiceAccount", "imagePullSecrets": [{"name": "sa-login"}]})
    empty = {"imagePullSecrets": [{"name": ""}]}
    assert login_names(empty, account) == ()
    assert login_names({"imagePullSecrets": [{}]}, account) == ()
    secrets = {"sa-login": _login("sa-login", "ghcr.io")}
    logins = pod_logins(empty, CantRead(ReadFailure.FORBIDDEN, "no"), secrets)
    assert (logins.names, logins.complete) == ((), True)
    assert logins.applying_to("ghcr.io/a") == ()


def test_a_pod_s_logins_are_complete_only_when_doctor_saw_every_one() -> None:
    secrets = {"ok": _login("ok", "ghcr.io")}
    missing = CantRead(ReadFailure.NOT_FOUND, "not found")
    forbidden = CantRead(ReadFailure.FORBIDDEN, "no")
    assert pod_logins({}, missing, {}).complete, "no account: nothing the kubelet sends"
    assert not pod_logins({}, forbidden, {}).complete
    assert not pod_logins({}, None, {}).complete
    own = {"imagePullSecrets": [{"name": "ok"}]}
    assert pod_logins(own, forbidden, secrets).complete, "the account's logins never reach it"
    spec = {"imagePullSecrets": [{"name": "ok"}, {"name": "gone"}, {"name": "ok"}]}
    logins = pod_logins(spec, forbidden, {**secrets, "gone": missing})
    assert (logins.names, logins.complete, dict(logins.hosts)) == (
        ("ok", "gone"),
        True,
        {"ok": frozenset({"ghcr.io"})},
    ), "the kubelet leaves out a login it can't get and sends the rest"
    assert logins.applying_to("ghcr.io") == ("ok",)
    notes = Got({"kind": "Secret", "type": "Opaque", "data": {"x": "eQ=="}})
    spec = {"imagePullSecrets": [{"name": "ok"}, {"name": "other"}]}
    assert pod_logins(spec, None, {**secrets, "other": notes}).complete, "skipped: another type"
    assert not pod_logins(spec, None, {**secrets, "other": forbidden}).complete
    assert not pod_logins(spec, None, secrets).complete, "not read at all"
    damaged = Got({**_login("other", "quay.io").obj, "data": {".dockerconfigjson": "bm90IGpzb24="}})
    assert not pod_logins(spec, None, {**secrets, "other": damaged}).complete


@pytest.mark.parametrize(
    ("read", "skipped"),
    [
        (CantRead(ReadFailure.NOT_FOUND, "not found"), True),
        (CantRead(ReadFailure.FORBIDDEN, "no"), False),
        (CantRead(ReadFailure.TIMEOUT, "slow"), False),
        (Got({"kind": "Secret", "type": "Opaque"}), True),
        (Got({"kind": "Secret"}), True),
        (Got({"kind": "Secret", "type": "kubernetes.io/basic-auth"}), True),
        (_login("a", "ghcr.io"), False),
        (_login("a", "ghcr.io", kind="kubernetes.io/dockercfg"), False),
    ],
)
def test_the_kubelet_pulls_without_a_login_it_can_t_get_or_of_another_type(
    read: CantRead | Got, skipped: bool
) -> None:
    """pkg/kubelet/kubelet_pods.go getPullSecretsForPod leaves out a secret it can't get
    ("attempting to pull the image may not succeed") and pulls with the rest;
    pkg/credentialprovider/secrets/secrets.go MakeDockerKeyring reads only the two registry
    login types. A read that could not look says nothing of the login."""
    assert kubelet_skips(read) is skipped


def test_the_images_pulled_init_containers_first_each_once() -> None:
    spec = {
        "initContainers": [
            {"image": "busybox"},
            {"image": "local/tool:1", "imagePullPolicy": "Never"},
        ],
        "containers": [
            {"image": "Not An Image"},
            {"name": "no-image"},
            {"image": "ghcr.io/team/app:1"},
            {"image": "busybox:latest"},
        ],
    }
    assert pulled_images(spec) == ["docker.io/library/busybox:latest", "ghcr.io/team/app:1"]


BOTH = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64"}


@pytest.mark.parametrize(
    ("selector", "machines", "platform", "sure"),
    [
        ({}, [_machine("arm64")], "linux/arm64", True),
        ({}, [_machine("arm64"), _machine("arm64")], "linux/arm64", True),
        ({}, [_machine("arm64"), _machine("amd64")], DEFAULT_PLATFORM, False),
        ({}, [_machine(None)], DEFAULT_PLATFORM, False),
        ({}, [_machine("arm64"), _machine(None)], "linux/arm64", False),  # one not labelled
        ({}, [], DEFAULT_PLATFORM, False),
        ({"kubernetes.io/arch": "arm64"}, [_machine("amd64")], "linux/arm64", True),
        ({"kubernetes.io/arch": "arm64"}, [_machine("amd64", os_name=None)], "linux/arm64", False),
        ({}, [_machine("amd64", os_name=None)], "linux/amd64", False),
        ({}, [_machine("amd64", os_name="windows")], "windows/amd64", True),
        ({"kubernetes.io/os": "windows"}, [_machine("amd64")], "windows/amd64", True),
        (BOTH, [_machine("amd64"), _machine("s390x", os_name=None)], "linux/arm64", True),
    ],
)
def test_the_platform_a_pod_runs_on_and_whether_doctor_knows_it(
    selector: dict[str, str], machines: list[dict[str, Any]], platform: str, sure: bool
) -> None:
    spec = {"nodeSelector": selector} if selector else {}
    assert machine_platform(spec, Listed(tuple(machines))) == MachinePlatform(platform, sure)
    unread = machine_platform(spec, CantRead(ReadFailure.FORBIDDEN, "no"))
    known = (selector.get("kubernetes.io/os"), selector.get("kubernetes.io/arch"))
    guessed = "/".join(p or d for p, d in zip(known, DEFAULT_PLATFORM.split("/"), strict=True))
    assert unread == MachinePlatform(guessed, all(known))


def _required(*terms: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    """A required node affinity of `terms`, each a list of (key, operator, values)."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": k, "operator": op, "values": v} for k, op, v in t
                        ]
                    }
                    for t in terms
                ]
            }
        }
    }


ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"


@pytest.mark.parametrize(
    ("spec", "platform", "sure"),
    [
        # Every required term names arm64: the scheduler places it on an arm64 machine, none
        # of which is up yet (a pool that scales from zero).
        ({"affinity": _required([(ARCH, "In", ["arm64"])])}, "linux/arm64", False),
        (
            {"affinity": _required([(ARCH, "In", ["arm64"])]), "nodeSelector": {OS: "linux"}},
            "linux/arm64",
            True,
        ),
        # Two platforms allowed, or one term silent: not known.
        ({"affinity": _required([(ARCH, "In", ["arm64", "amd64"])])}, "linux/amd64", False),
        (
            {"affinity": _required([(ARCH, "In", ["arm64"])], [("pool", "In", ["a"])])},
            "linux/amd64",
            False,
        ),
        # A pool the job selects may scale from zero, of another platform: the machines up now
        # say nothing sure of it.
        ({"nodeSelector": {"karpenter.sh/nodepool": "gh200"}}, "linux/amd64", False),
        ({"affinity": _required([("pool", "In", ["a"])])}, "linux/amd64", False),
        # A job that asks for no particular machines runs on those there are.
        ({}, "linux/amd64", True),
    ],
)
def test_the_platform_is_sure_only_where_the_job_or_every_machine_it_may_use_says_it(
    spec: dict[str, Any], platform: str, sure: bool
) -> None:
    machines = Listed(
        (
            _machine("amd64"),
            {
                **_machine("amd64"),
                "metadata": {"name": "m2", "labels": {ARCH: "amd64", OS: "linux"}},
            },
        )
    )
    assert machine_platform(spec, machines) == MachinePlatform(platform, sure)


def test_one_look_up_per_image_and_logins_the_judged_job_s_first_with_its_platform() -> None:
    secrets = {"regcred": _login("regcred", "ghcr.io")}
    shared = {"imagePullSecrets": [{"name": "regcred"}], "containers": [{"image": "ghcr.io/a:1"}]}
    job = {
        "serviceAccountName": "trainer",
        "containers": [{"image": "ghcr.io/a:1"}, {"image": "quay.io/t"}],
    }
    templates = [
        _Template("Deployment/web", shared),
        _Template("Deployment/twin", shared),
        _Template("Job/run-7", job),
    ]
    account = Got({"kind": "ServiceAccount", "imagePullSecrets": [{"name": "regcred"}]})
    machines = Listed((_machine("arm64"),))
    wanted = wanted_lookups(templates, {"trainer": account}, secrets, "Job/run-7", machines)
    assert wanted == [
        ImageLookup("ghcr.io/a:1", ("regcred",), "linux/arm64"),  # the account's login
        ImageLookup("quay.io/t:latest", (), "linux/arm64"),
        ImageLookup("ghcr.io/a:1", ("regcred",), None),
    ]


INDEX = {
    "manifests": [
        {"digest": "sha256:att", "platform": {"os": "unknown", "architecture": "unknown"}},
        {
            "digest": "sha256:v7",
            "platform": {"os": "linux", "architecture": "arm64", "variant": "v7"},
        },
        {
            "digest": "sha256:arm",
            "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"},
        },
        {"digest": "sha256:amd", "platform": {"os": "linux", "architecture": "amd64"}},
        {"digest": "sha256:amd2", "platform": {"os": "linux", "architecture": "amd64"}},
        {"platform": {"os": "linux", "architecture": "s390x"}},
    ]
}


@pytest.mark.parametrize(
    ("platform", "digest"),
    [
        ("linux/amd64", "sha256:amd"),
        ("linux/arm64", "sha256:arm"),
        ("linux/s390x", None),  # no digest: not an image to pull
        ("windows/amd64", None),
    ],
)
def test_the_image_of_an_index_for_a_platform(platform: str, digest: str | None) -> None:
    assert platform_manifest(INDEX, platform) == digest


def test_an_arm64_image_with_no_variant_named_is_the_arm64_one() -> None:
    arm = {"os": "linux", "architecture": "arm64", "variant": ""}
    index = {"manifests": [{"digest": "sha256:a", "platform": arm}]}
    assert platform_manifest(index, "linux/arm64") == "sha256:a"


def test_the_platforms_an_index_offers() -> None:
    assert platforms_offered(INDEX) == ["linux/arm64", "linux/amd64", "linux/s390x"]
    assert platforms_offered({"manifests": "garbage"}) == []


def _entry(os_name: str, arch: str, variant: str | None = None) -> dict[str, Any]:
    platform = {"os": os_name, "architecture": arch, **({"variant": variant} if variant else {})}
    return {"digest": f"sha256:{arch}", "platform": platform}


@pytest.mark.parametrize(
    ("entries", "platform", "picked"),
    [
        ([_entry("linux", "arm64")], "linux/amd64", False),
        ([_entry("unknown", "unknown"), _entry("linux", "arm64")], "linux/amd64", False),
        ([_entry("windows", "amd64")], "linux/amd64", False),
        ([_entry("linux", "amd64")], "linux/s390x", False),
        ([], "linux/amd64", False),  # containerd: no entry at all matches no platform
        ([_entry("linux", "arm64")], "linux/arm64", True),
        ([_entry("linux", "386")], "linux/amd64", True),  # Only(amd64) takes 386
        ([_entry("linux", "amd64", "v3")], "linux/amd64", True),  # the machine's variant unknown
        ([_entry("linux", "arm", "v7")], "linux/arm64", True),  # Only(arm64) takes arm v8 to v5
        ([_entry("Linux", "x86_64")], "linux/amd64", True),  # Normalize
        ([_entry("", "amd64")], "linux/amd64", True),  # no os: the machine's own
        ([{"digest": "sha256:a"}], "linux/amd64", True),  # no platform: its config's says
        (["garbage"], "linux/amd64", True),  # does not decode: the pull fails otherwise
        ([{"platform": {"os": 7, "architecture": "arm64"}}], "linux/amd64", True),
    ],
)
def test_whether_containerd_may_pick_an_image_of_an_index(
    entries: list[Any], platform: str, picked: bool
) -> None:
    assert may_pick({"manifests": entries}, platform) is picked


def test_an_index_with_no_list_of_images() -> None:
    assert not may_pick({}, "linux/amd64")  # decodes as none: `no match for platform`
    assert may_pick({"manifests": "garbage"}, "linux/amd64")  # does not decode


@pytest.mark.parametrize(
    ("offered", "words"),
    [
        ([], "none"),
        (["linux/arm64"], "linux/arm64"),
        (
            [f"linux/a{n}" for n in range(6)],
            "linux/a0, linux/a1, linux/a2, linux/a3, linux/a4, linux/a5",
        ),
        (
            [f"linux/a{n}" for n in range(8)],
            "linux/a0, linux/a1, linux/a2, linux/a3, linux/a4, linux/a5 and 2 more",
        ),
    ],
)
def test_an_index_s_platforms_in_a_bounded_line(offered: list[str], words: str) -> None:
    assert offered_words(offered) == words


@pytest.mark.parametrize(
    ("manifest", "size"),
    [
        ({"layers": [{"size": 10}, {"size": 32}]}, (42, 2)),
        ({"layers": [{"size": 0}, {"size": 5}]}, (5, 2)),  # an empty layer is a layer
        ({"layers": []}, (0, 0)),
        ({}, (0, 0)),
        ({"layers": [{"size": 10}, {}]}, None),
        ({"layers": [{"size": True}]}, None),
        ({"layers": [{"size": -1}]}, None),
        ({"layers": [{"size": "10"}]}, None),
    ],
)
def test_the_download_size_is_the_sum_of_the_layers(
    manifest: dict[str, Any], size: tuple[int, int] | None
) -> None:
    assert download_size(manifest) == size


def test_an_index_by_its_media_type_or_its_shape() -> None:
    assert is_index("application/vnd.oci.image.index.v1+json", {})
    assert is_index("application/vnd.docker.distribution.manifest.list.v2+json", {})
    assert not is_index("application/vnd.oci.image.manifest.v1+json", {"manifests": []})
    assert is_index("", {"manifests": []})
    assert not is_index("", {"manifests": [], "layers": []})
    assert not is_index("", {"layers": []})


FOUND = RegistryAnswer(Presence.PRESENT, size=1)
GONE = RegistryAnswer(Presence.MISSING, "gone")
REFUSED = RegistryAnswer(Presence.REFUSED, "refused")
NOT_ALLOWED = RegistryAnswer(Presence.NOT_ALLOWED, "insufficient_scope")
SLOW = RegistryAnswer(Presence.TIMEOUT, "slow")
NO_BUILD = RegistryAnswer(Presence.NO_BUILD, "no arm64", offered=("linux/amd64",))


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([REFUSED, FOUND], FOUND),  # the second login found it: the pull works
        ([GONE, REFUSED], GONE),
        ([REFUSED, GONE], GONE),
        ([REFUSED, REFUSED], REFUSED),
        ([REFUSED, NOT_ALLOWED], NOT_ALLOWED),  # a login the registry took speaks of the image
        ([NOT_ALLOWED, GONE], GONE),
        ([NOT_ALLOWED, SLOW], SLOW),
        ([REFUSED, SLOW], SLOW),  # the second login was never answered: nothing is measured
        ([SLOW, GONE], SLOW),
        ([REFUSED, NO_BUILD], NO_BUILD),  # served: the index is the same to every login
        ([SLOW, NO_BUILD], NO_BUILD),
        ([], RegistryAnswer(Presence.NOT_ASKED)),
    ],
)
def test_the_answer_over_every_login_the_kubelet_tries(
    answers: list[RegistryAnswer], expected: RegistryAnswer
) -> None:
    assert combined(answers) == expected


MISSING_FAIL = Outcome("image-pull.image-missing", Status.FAIL, Basis.MEASURED)
REFUSED_FAIL = Outcome("image-pull.login-refused", Status.FAIL, Basis.MEASURED)
NEEDED_FAIL = Outcome("image-pull.login-needed", Status.FAIL, Basis.INFERRED)
NOT_ALLOWED_FAIL = Outcome("image-pull.repository-not-allowed", Status.FAIL, Basis.MEASURED)
NO_BUILD_FAIL = Outcome("image-pull.no-build-for-platform", Status.FAIL, Basis.MEASURED)


def _unknown(cause: Presence | OwnLogin) -> Outcome:
    return Outcome(UNCHECKED, Status.UNKNOWN, Basis.CANT_CHECK, cause)


PULLED_HERE = {
    "registry.corp.example:5000": MachinePull(
        "registry.corp.example:5000/app:1", "app-1", PullSign.EVENT
    )
}
"""A registry the kubelet downloaded from for a pod that sent no login (`machines_may_log_in`)."""


@pytest.mark.parametrize(
    ("presence", "registry", "reported", "outcome"),
    [
        (Presence.PRESENT, "ghcr.io", False, None),
        (Presence.MISSING, "ghcr.io", True, MISSING_FAIL),
        (Presence.MISSING, "gcr.io", False, MISSING_FAIL),
        (Presence.NO_BUILD, "gcr.io", True, NO_BUILD_FAIL),
        (Presence.REFUSED, "ghcr.io", True, REFUSED_FAIL),
        (Presence.LOGIN_NEEDED, "ghcr.io", False, NEEDED_FAIL),
        (Presence.LOGIN_NEEDED, "ghcr.io", True, None),  # no login of the pod's applies: said once
        (Presence.NOT_ALLOWED, "ghcr.io", True, NOT_ALLOWED_FAIL),
        (Presence.REFUSED, "gcr.io", True, _unknown(OwnLogin.CLOUD)),
        (
            Presence.NOT_ALLOWED,
            "1.dkr.ecr.us-east-1.amazonaws.com",
            True,
            _unknown(OwnLogin.CLOUD),
        ),
        (Presence.LOGIN_NEEDED, "team.azurecr.io", False, _unknown(OwnLogin.CLOUD)),
        (Presence.TIMEOUT, "ghcr.io", True, _unknown(Presence.TIMEOUT)),
        (Presence.NOT_CAPTURED, "ghcr.io", True, _unknown(Presence.NOT_CAPTURED)),
        (Presence.LOGIN_UNUSABLE, "ghcr.io", True, _unknown(Presence.LOGIN_UNUSABLE)),
        (Presence.LOGIN_NEEDED, "registry.corp.example:5000", False, _unknown(OwnLogin.PULLED)),
        (Presence.LOGIN_NEEDED, "registry.corp.example:5000", True, _unknown(OwnLogin.PULLED)),
        (Presence.REFUSED, "registry.corp.example:5000", True, _unknown(OwnLogin.PULLED)),
        (Presence.MISSING, "registry.corp.example:5000", True, MISSING_FAIL),
        # The keyring matches host and port: another port, or none, is another registry.
        (Presence.LOGIN_NEEDED, "registry.corp.example", False, NEEDED_FAIL),
        (Presence.LOGIN_NEEDED, "registry.corp.example:5001", False, NEEDED_FAIL),
    ],
)
def test_what_each_answer_means(
    presence: Presence, registry: str, reported: bool, outcome: Outcome | None
) -> None:
    """`reported`: the check reports the registry no login of the pod covers on its own."""
    own = own_login(registry, PULLED_HERE)
    assert judge(RegistryAnswer(presence), own, uncovered_reported=reported) == outcome


def test_only_an_answer_about_the_image_is_a_measurement() -> None:
    measured = {p for p in Presence if p.is_measurement}
    assert measured == {
        Presence.PRESENT,
        Presence.NO_BUILD,
        Presence.MISSING,
        Presence.NOT_ALLOWED,
        Presence.REFUSED,
        Presence.LOGIN_NEEDED,
    }


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (17_234_000_000, "17.2 GB"),
        (1_000_000_000, "1.0 GB"),
        (999_999_999, "1000 MB"),
        (340_000_000, "340 MB"),
        (100_000_000, "100 MB"),
        (99_950_000, "100.0 MB"),
        (12_345_678, "12.3 MB"),
        (12_000, "12.0 kB"),
        (999, "999 bytes"),
        (0, "0 bytes"),
    ],
)
def test_sizes_in_the_units_registries_show(size: int, text: str) -> None:
    assert plain_size(size) == text


def test_the_kubelet_pulled_what_a_container_status_carries_an_image_id_for() -> None:
    """By the container's name, the reference its spec pulled (normalised); a status without
    an imageID (still waiting, ErrImagePull) pulled nothing; an unread list, nothing known."""
    pods = Listed(
        (
            {
                "spec": {
                    "initContainers": [{"name": "init", "image": "busybox:1.36"}],
                    "containers": [
                        {"name": "main", "image": "registry.example.com/trainer:2.1"},
                        {"name": "side", "image": "registry.example.com/side:1"},
                        {"name": "bad", "image": "Not A Reference"},
                        {"name": "retry", "image": "registry.example.com/new:2"},
                    ],
                },
                "status": {
                    "initContainerStatuses": [{"name": "init", "imageID": "docker.io/x@sha256:1"}],
                    "containerStatuses": [
                        {"name": "main", "imageID": "registry.example.com/trainer@sha256:2"},
                        {"name": "side", "imageID": ""},
                        {"name": "bad", "imageID": "x@sha256:3"},
                        {"name": "gone", "imageID": "y@sha256:4"},
                        {
                            "name": "retry",
                            "imageID": "z@sha256:5",
                            "state": {"waiting": {"reason": "ImagePullBackOff"}},
                        },
                    ],
                },
            },
        )
    )
    assert kubelet_pulled(pods).images == frozenset(
        {"docker.io/library/busybox:1.36", "registry.example.com/trainer:2.1"}
    )
    assert kubelet_pulled(CantRead(ReadFailure.FORBIDDEN, "no")) == MachineCopies()


def _running(
    name: str, image: str, *logins: str, policy: str | None = "Always", state: str = "running"
) -> dict[str, Any]:
    """A pod whose container, pulling `image` by `policy` (None: unset), is in `state` (its
    status carries the imageID), naming `logins`."""
    container = {"name": "main", "image": image}
    if policy:
        container["imagePullPolicy"] = policy
    return {
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"imagePullSecrets": [{"name": n} for n in logins], "containers": [container]},
        "status": {
            "containerStatuses": [
                {"name": "main", "imageID": f"{image}@sha256:1", "state": {state: {}}}
            ]
        },
    }


def _pulled(pod: str, message: str, uid: str | None = None, component: str = "kubelet") -> Any:
    """The kubelet's `Pulled` Event about `pod` (image_manager.go EnsureImageExists)."""
    involved = {"kind": "Pod", "name": pod, **({"uid": uid} if uid else {})}
    return {
        "reason": "Pulled",
        "source": {"component": component},
        "involvedObject": involved,
        "message": message,
    }


def test_a_download_for_a_pod_naming_no_login_is_the_registry_s_and_port_s_alone() -> None:
    """The kubelet downloaded an image (each pod here runs a container that pulls on every
    start) for a pod naming no registry login (its account's are in the stored pod already, and
    the list never changes): the machines pulled it with their own login, or none. Not a pod
    naming one, whatever it holds now or whether it exists (it may have held one for that
    registry then), nor Docker Hub's official images (served to anyone), nor a cloud registry
    (its own rule). Keyed by the parsed registry: host and port, in its own case."""
    pods = Listed(
        (
            _running("a", "registry.corp.example:5000/covered:1", "corp"),
            _running("b", "registry.corp.example:5000/skipped:1", "gone"),
            _running("c", "python:3.12"),
            _running("d", "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1"),
            _running("e", "registry.corp.example:5000/app:1"),
            _running("f", "registry.corp.example:5000/later:1"),
            _running("g", "Registry.Corp.Example/case:1"),
        )
    )
    app = MachinePull("registry.corp.example:5000/app:1", "e", PullSign.ALWAYS)
    case = MachinePull("Registry.Corp.Example/case:1", "g", PullSign.ALWAYS)
    assert pulled_without_login(pods, None) == {
        "registry.corp.example:5000": app,
        "Registry.Corp.Example": case,
    }
    assert pulled_without_login(CantRead(ReadFailure.FORBIDDEN, "no"), None) == {}
    served = RegistryAnswer(Presence.PRESENT)
    refused = RegistryAnswer(Presence.LOGIN_NEEDED)
    answers = {
        ImageLookup("registry.corp.example:5000/app:1"): refused,
        ImageLookup("Registry.Corp.Example/case:1"): served,
    }
    assert machines_may_log_in(pods, None, answers) == {
        "registry.corp.example:5000": MachinePull(
            "registry.corp.example:5000/app:1", "e", PullSign.ALWAYS, refused
        )
    }
    assert machines_may_log_in(pods, None, {})["Registry.Corp.Example"] == case, (
        "not asked: a download that may have needed the machines' own login"
    )
    wanted = [ImageLookup("registry.corp.example:5000/new:2", (), "linux/amd64")]
    assert login_probes(wanted, pods, None) == [ImageLookup("registry.corp.example:5000/app:1")]
    assert login_probes([ImageLookup("ghcr.io/new:2")], pods, None) == []


DOWNLOADED = 'Successfully pulled image "r.example/a:1" in 3.1s (3.1s including waiting).'
PRESENT = 'Container image "r.example/a:1" already present on machine'
PRESENT_SINCE_1_33 = f"{PRESENT} and can be accessed by the pod"
ONCE = "IfNotPresent"


@pytest.mark.parametrize(
    ("pod", "event", "sign"),
    [
        # The kubelet's word that it downloaded the image for this very pod (by uid too).
        (_running("p", "r.example/a:1", policy=ONCE), _pulled("p", DOWNLOADED), PullSign.EVENT),
        (
            _running("p", "r.example/a:1", policy=ONCE),
            _pulled("p", 'Successfully pulled image "r.example/a:1"', uid="uid-p"),
            PullSign.EVENT,
        ),
        # A running container that pulls on every start: set, or the default with no tag.
        (_running("p", "r.example/a:1"), None, PullSign.ALWAYS),
        (_running("p", "r.example/a:1", policy=None), None, None),
        (_running("p", "r.example/a", policy=None), None, PullSign.ALWAYS),
        # No download measured: the imageID alone, the image already present, never pulled.
        (_running("p", "r.example/a:1", policy=ONCE), None, None),
        (_running("p", "r.example/a:1", policy=ONCE), _pulled("p", PRESENT), None),
        (_running("p", "r.example/a:1", policy=ONCE), _pulled("p", PRESENT_SINCE_1_33), None),
        (_running("p", "r.example/a:1", policy="Never"), None, None),
        # Pulling on every start, but not running now: its last start's pull is not known.
        (_running("p", "r.example/a:1", state="waiting"), None, None),
        (_running("p", "r.example/a:1", state="terminated"), None, None),
        # Another pod's download, a former pod of the same name's, another component's word.
        (_running("p", "r.example/a:1", policy=ONCE), _pulled("q", DOWNLOADED), None),
        (_running("p", "r.example/a:1", policy=ONCE), _pulled("p", DOWNLOADED, "uid-old"), None),
        (
            _running("p", "r.example/a:1", policy=ONCE),
            _pulled("p", DOWNLOADED, component="image-warmer"),
            None,
        ),
    ],
)
def test_only_a_download_measured_for_the_pod_says_the_machines_reached_the_registry(
    pod: dict[str, Any], event: Any, sign: PullSign | None
) -> None:
    """A container status's imageID is set whether the kubelet downloaded the image or found it
    on the machine (image_manager.go EnsureImageExists), and a present image starts without any
    login where the pod pulls only when missing (shouldPullImage): only the kubelet's `Pulled`
    Event saying it downloaded the image for that pod, or a running container that pulls on
    every start, says the machine got it from the registry."""
    found = pulled_without_login(Listed((pod,)), Listed((event,)) if event else None)
    assert {r: (m.pod, m.sign) for r, m in found.items()} == (
        {"r.example": ("p", sign)} if sign else {}
    )


@pytest.mark.parametrize(
    ("container", "policy"),
    [
        ({"image": "ghcr.io/a:1", "imagePullPolicy": "Never"}, "Never"),
        ({"image": "ghcr.io/a:latest", "imagePullPolicy": "IfNotPresent"}, "IfNotPresent"),
        ({"image": "ghcr.io/a:1", "imagePullPolicy": "Always"}, "Always"),
        ({"image": "ghcr.io/a:1"}, "IfNotPresent"),
        ({"image": "ghcr.io/a:1", "imagePullPolicy": ""}, "IfNotPresent"),
        ({"image": "ghcr.io/a:latest"}, "Always"),
        ({"image": "ghcr.io/a"}, "Always"),
        ({"image": f"ghcr.io/a@sha256:{'a' * 64}"}, "IfNotPresent"),
        ({"image": f"ghcr.io/a:latest@sha256:{'a' * 64}"}, "Always"),
        ({"image": "Not A Reference"}, "IfNotPresent"),
        ({}, "IfNotPresent"),
    ],
)
def test_a_container_s_pull_policy_is_its_own_else_the_api_server_s_default(
    container: dict[str, Any], policy: str
) -> None:
    """pkg/apis/core/v1/defaults.go SetDefaults_Container: unset, Always where the tag
    pkg/util/parsers ParseImageName gives is `latest` (written, or taken when the image names
    neither tag nor digest), else IfNotPresent (a name that does not parse included)."""
    assert pull_policy(container) == policy


def test_a_machine_s_copy_spares_no_pull_of_an_image_pulled_on_every_start() -> None:
    """image_manager.go shouldPullImage: `case v1.PullAlways: return true`, whatever the
    machine holds; IfNotPresent pulls only what it lacks. One container of an image under
    Always pulls it, whatever the others say."""
    on_machines = _held(
        "ghcr.io/a:1", "ghcr.io/b:1", "ghcr.io/c:latest", "ghcr.io/d:2", "ghcr.io/e:1"
    )
    spec = {
        "initContainers": [{"name": "i", "image": "ghcr.io/e:1", "imagePullPolicy": "Always"}],
        "containers": [
            {"name": "a", "image": "ghcr.io/a:1", "imagePullPolicy": "Always"},
            {"name": "b", "image": "ghcr.io/b:1", "imagePullPolicy": "IfNotPresent"},
            {"name": "c", "image": "ghcr.io/c"},
            {"name": "d", "image": "ghcr.io/d:2"},
            {"name": "d2", "image": "ghcr.io/d:2", "imagePullPolicy": "Always"},
            {"name": "e", "image": "ghcr.io/e:1", "imagePullPolicy": "Never"},
        ],
    }
    no_logins = PodLogins((), {}, complete=True)
    assert spared_pulls(spec, on_machines, no_logins, {}) == frozenset({"ghcr.io/b:1"})
    assert spared_pulls({}, on_machines, no_logins, {}) == frozenset()


def test_an_image_pulled_on_every_start_is_looked_up_though_a_machine_holds_it() -> None:
    secrets = {"regcred": _login("regcred", "ghcr.io")}
    own = [{"name": "regcred"}]
    templates = [
        _Template(
            "Job/run-7",
            {
                "imagePullSecrets": own,
                "containers": [{"name": "t", "image": "ghcr.io/t:1", "imagePullPolicy": "Always"}],
            },
        ),
        _Template(
            "Deployment/web",
            {"imagePullSecrets": own, "containers": [{"name": "w", "image": "ghcr.io/t:1"}]},
        ),
    ]
    pulled = _held("ghcr.io/t:1")
    wanted = wanted_lookups(templates, {}, secrets, None, Listed(()), pulled)
    assert wanted == [ImageLookup("ghcr.io/t:1", ("regcred",), None)]
    del templates[0]
    assert wanted_lookups(templates, {}, secrets, None, Listed(()), pulled) == []
