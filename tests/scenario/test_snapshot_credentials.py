"""Credentials that stand elsewhere than an env var's value or a secret-named flag reach no
snapshot: HTTP probe and hook headers (cookie headers too), KubeRay's `rayStartParams`, signed
URLs, tokens known by their form, curl's, MySQL's, redis-cli's (valkey-cli's) and MongoDB
clients' own password options, curl's cookie data, a registry login's `-p`, a secret-named
annotation.

The objects are the shapes the reviewer reproduced the leaks with (/tmp/probe_snapshot
t1_redact.py, t2_headers.py, t3_ray.py, t7_sas.py), served by the fake API server and read by
the real `truegreen snapshot`; every byte it writes is scanned for the planted values, and the
snapshot gives the live verdict (the round trip of `Doctor.live`)."""

import re
from datetime import datetime
from pathlib import Path

from tests.scenario.conftest import Doctor
from tests.support import training_kinds
from tests.support.scenarios import REGISTRY, Obj, container, deployment, healthy, pod_for
from truegreen.redacted import REDACTED

# core/v1 HTTPHeader (HTTPGetAction.httpHeaders), in a readiness and a liveness probe and a
# preStop hook: Elasticsearch's basic login, a bearer JWT, an API key, a token header.
BASIC = "ZWxhc3RpYzpjaGFuZ2VtZS1wcm9iZQ=="  # elastic:changeme-probe
BEARER = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.eyJzdWIiOiJwcm9iZXIifQ.c2lnbmF0dXJlLXZhbHVlLTEyMzQ1Ng"
)
API_KEY = "k8sProbeApiKeyValue77"
HOOK_TOKEN = "PreStopTok3nValue"
# KubeRay passes rayStartParams to `ray start` as `--KEY=VALUE` (ray-operator/controllers/ray/
# common/pod.go convertParamMap); `--redis-password` is an external Redis' password
# (docs/guidance/rayStartParams.md).
RAY_PASSWORD = "LetMeInRayS3cr3t"
# An azcopy command line with a SAS URL (Microsoft's azcopy docs), an S3 presigned URL (the AWS
# S3 API reference's example shape), a GCS V4 signed one (gcloud storage sign-url's output).
SAS_SIGNATURE = "%2FSOVEFfsKDqRry4bk3qz1vAQFwY5DDzp2%2B%2F3Eykf%2FJLs%3D"
SAS_URL = (
    "https://mystorageaccount.blob.core.windows.net/datasets/imagenet?sv=2022-11-02&ss=b"
    f"&srt=co&sp=rl&se=2026-12-31T00:00:00Z&spr=https&sig={SAS_SIGNATURE}"
)
S3_SIGNATURE = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
S3_URL = (
    "https://ckpt.s3.us-east-1.amazonaws.com/run7/model.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
    "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=604800&X-Amz-SignedHeaders=host"
    f"&X-Amz-Signature={S3_SIGNATURE}"
)
GCS_SIGNATURE = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
GCS_URL = (
    "https://storage.googleapis.com/b/o?x-goog-algorithm=GOOG4-RSA-SHA256"
    f"&x-goog-signature={GCS_SIGNATURE}"
)
# Tokens under names that say nothing, and passwords by curl's and MySQL's own short options.
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
GITHUB_TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
HF_TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
CURL_PASSWORD = "CurlPassw0rdValue"
MYSQL_PASSWORD = "MysqlPwValue123"
ANNOTATION_VALUE = "AnnotationSecretValue42"
# Cookie headers (redaction/credential_headers.py) and a proxy's login, in a probe's headers.
COOKIE_SESSION = "s%3ACookieSessionValue.Kd8Gq2"
SET_COOKIE_SESSION = "SetCookieSessionValue77"
PROXY_LOGIN = "UHJveHlVc2VyOlByb3h5UGFzcw=="  # ProxyUser:ProxyPass
# redis-cli's `-a` (redis src/redis-cli.c parseOptions) in exec probes, the shape of the Redis
# health checks people write by hand, and mongosh's `-p` (mongosh arg-parser.ts) in a command.
REDIS_PROBE_PASSWORD = "RedisProbePassw0rd"
REDIS_LIST_PASSWORD = "RedisListPassw0rd"
MONGOSH_PASSWORD = "MongoshPassw0rd"
# valkey-cli's `-a` (valkey src/valkey-cli.c parseOptions), mongodump's `-p` (mongo-tools
# common/options/options.go) and curl's `-b NAME=VALUE` (curl src/tool_getparam.c C_COOKIE).
VALKEY_PASSWORD = "ValkeyPassw0rd"
MONGODUMP_PASSWORD = "MongodumpPassw0rd"
CURL_COOKIE = "CurlCookieSession31"
SPLIT_PASSWORD = "SplitMysqlPw77"
"""A password whose client is named in `command` and given in `args`: one argument list."""
PLANTED = (
    BASIC,
    BEARER,
    API_KEY,
    HOOK_TOKEN,
    RAY_PASSWORD,
    SAS_SIGNATURE,
    S3_SIGNATURE,
    GCS_SIGNATURE,
    JWT,
    GITHUB_TOKEN,
    HF_TOKEN,
    CURL_PASSWORD,
    MYSQL_PASSWORD,
    ANNOTATION_VALUE,
    COOKIE_SESSION,
    SET_COOKIE_SESSION,
    PROXY_LOGIN,
    REDIS_PROBE_PASSWORD,
    REDIS_LIST_PASSWORD,
    MONGOSH_PASSWORD,
    VALKEY_PASSWORD,
    MONGODUMP_PASSWORD,
    CURL_COOKIE,
    SPLIT_PASSWORD,
)


def _headers(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs]


def _search() -> Obj:
    """Elasticsearch, its health checks logged in by headers."""
    workload = deployment(
        "search",
        [container("es", "docker.elastic.co/elasticsearch/elasticsearch:8.15.0", port=9200)],
    )
    es = workload["spec"]["template"]["spec"]["containers"][0]
    es["readinessProbe"] = {
        "httpGet": {
            "path": "/_cluster/health",
            "port": 9200,
            "scheme": "HTTP",
            "httpHeaders": _headers(("Authorization", f"Basic {BASIC}")),
        }
    }
    es["livenessProbe"] = {
        "httpGet": {
            "path": "/healthz",
            "port": 9200,
            "httpHeaders": _headers(("Authorization", f"Bearer {BEARER}"), ("X-Api-Key", API_KEY)),
        },
        "failureThreshold": 10,
    }
    es["startupProbe"] = {
        "httpGet": {
            "path": "/_nodes/_local",
            "port": 9200,
            "httpHeaders": _headers(
                ("Cookie", f"connect.sid={COOKIE_SESSION}; theme=dark"),
                ("Set-Cookie", f"sid={SET_COOKIE_SESSION}; Path=/; HttpOnly"),
                ("Proxy-Authorization", f"Basic {PROXY_LOGIN}"),
            ),
        },
        "failureThreshold": 30,
    }
    es["lifecycle"] = {
        "preStop": {
            "httpGet": {
                "path": "/shutdown",
                "port": 9200,
                "httpHeaders": _headers(("X-Auth-Token", HOOK_TOKEN), ("Accept", "text/plain")),
            }
        }
    }
    return workload


def _loader() -> Obj:
    """A server whose init containers fetch its data by signed URLs."""
    workload = deployment("loader", [container("srv", f"{REGISTRY}/srv:1", port=8080)])
    workload["spec"]["template"]["spec"]["initContainers"] = [
        {
            "name": "fetch",
            "image": "mcr.microsoft.com/azure-cli:2.64.0",
            "command": ["azcopy", "copy", SAS_URL, "/data", "--recursive"],
        },
        {
            "name": "ckpt",
            "image": "curlimages/curl:8.10.1",
            "args": ["-fsSL", "-o", "/ckpt/model.pt", S3_URL],
        },
        {
            "name": "migrate",
            "image": "mysql:8.4",
            "command": ["mysql"],
            "args": ["-h", "db", "-uroot", f"-p{SPLIT_PASSWORD}", "-e", "select 1"],
        },
    ]
    return workload


def _helper() -> Obj:
    """Tokens and passwords under names and flags that do not say so."""
    workload = deployment("helper", [container("h", f"{REGISTRY}/helper:1", port=8080)])
    workload["metadata"].setdefault("annotations", {})["example.com/db-password"] = ANNOTATION_VALUE
    helper = workload["spec"]["template"]["spec"]["containers"][0]
    helper["env"] = [
        {"name": "GCS_URL", "value": GCS_URL},
        {"name": "JWT", "value": JWT},
        {"name": "GIT_HUB_PAT", "value": GITHUB_TOKEN},
        {"name": "HF_HOME_X", "value": HF_TOKEN},
        {
            "name": "HEALTH_CMD",
            "value": f"curl -fsS -u admin:{CURL_PASSWORD} https://mlflow/health",
        },
    ]
    helper["args"] = [
        "sh",
        "-c",
        f"mysql -uroot -p{MYSQL_PASSWORD} -e 'select 1' && "
        f"mongosh -u admin -p {MONGOSH_PASSWORD} --eval 'db.runCommand({{ping: 1}})' && "
        f"valkey-cli -a {VALKEY_PASSWORD} ping && mongodump -p{MONGODUMP_PASSWORD} --out /b && "
        f"curl -fsS -b sid={CURL_COOKIE} -b cookies.txt http://app/health",
    ]
    return workload


def _cache() -> Obj:
    """Redis whose health checks log in with redis-cli's `-a`: one in a shell line that cannot
    fail (doctor quotes its command in the finding it makes; the password quoted, so that the
    line redacted still reads as the shell reads it), one as an argument list."""
    workload = deployment("cache", [container("redis", f"{REGISTRY}/redis:7.4", port=6379)])
    redis = workload["spec"]["template"]["spec"]["containers"][0]
    redis["livenessProbe"] = {
        "exec": {"command": ["sh", "-c", f'redis-cli -a "{REDIS_PROBE_PASSWORD}" ping || true']}
    }
    redis["readinessProbe"] = {
        "exec": {"command": ["redis-cli", "-h", "127.0.0.1", "-a", REDIS_LIST_PASSWORD, "ping"]}
    }
    return workload


def _ray(now: datetime) -> Obj:
    ray = training_kinds.ray_cluster(
        "ray-train", now, replicas=1, min_replicas=1, max_replicas=1, gpus=1
    )
    ray["spec"]["headGroupSpec"]["rayStartParams"] = {
        "dashboard-host": "0.0.0.0",
        "redis-password": RAY_PASSWORD,
    }
    ray["spec"]["workerGroupSpecs"][0]["rayStartParams"] = {"redis-password": RAY_PASSWORD}
    return ray


def credentials_everywhere(now: datetime) -> list[Obj]:
    """The healthy namespace, with the three workloads above (and a pod of each) and a
    RayCluster."""
    workloads = [_search(), _loader(), _helper(), _cache()]
    pods = [pod_for(w, now, suffix=f"cr{i}01") for i, w in enumerate(workloads)]
    return [*healthy(now), *workloads, *pods, _ray(now)]


def _written(directory: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file())


def test_no_credential_outside_env_and_flags_reaches_a_snapshot(doctor: Doctor) -> None:
    doctor.server.install("ray.io")
    doctor.load(credentials_everywhere)
    live = doctor.live("-o", "json")  # and from a snapshot of the same cluster: same verdict
    assert doctor.round_trips == 1, "precondition: the verdict was checked from a snapshot"
    assert not [value for value in PLANTED if value in live.stdout + live.stderr]
    # doctor quotes the probe that cannot fail, redacted, in JSON and in its verbose text.
    quoted = f'redis-cli -a "{REDACTED}" ping || true'
    assert quoted in " ".join(d for f in live.json()["findings"] for d in f["details"])
    text = doctor.live("--verbose")
    assert quoted in text.stdout, text.stdout
    assert not [value for value in PLANTED if value in text.stdout + text.stderr]
    written = _written(doctor.snapshot())
    # Preconditions: each place was read and saved.
    for saved in (
        b'"name": "Authorization"',
        b'"name": "X-Auth-Token"',
        b'"redis-password": ',
        b"&sp=rl&se=2026-12-31T00:00:00Z&spr=https&sig=",
        b"X-Amz-SignedHeaders=host&X-Amz-Signature=",
        b"&x-goog-signature=",
        b'"name": "GIT_HUB_PAT"',
        b"curl -fsS -u admin:",
        b"mysql -uroot -p",
        b'"example.com/db-password": ',
        b'"name": "Cookie"',
        b'"name": "Set-Cookie"',
        b'"name": "Proxy-Authorization"',
        b'redis-cli -a \\"',
        b"mongosh -u admin -p ",
        b"valkey-cli -a ",
        b"mongodump -p",
        b"curl -fsS -b ",
    ):
        assert saved in written, saved
    assert [value for value in PLANTED if value.encode() in written] == []
    # What is no secret stays readable around what was.
    for kept in (
        b'"value": "text/plain"',
        b'"dashboard-host": "0.0.0.0"',
        b"&sp=rl&se=2026-12-31T00:00:00Z&spr=https&sig=<redacted>",
        b"X-Amz-SignedHeaders=host&X-Amz-Signature=<redacted>",
        b"curl -fsS -u admin:<redacted> https://mlflow/health",
        b"mysql -uroot -p<redacted> -e 'select 1'",
        b"mongosh -u admin -p <redacted> --eval",
        b"valkey-cli -a <redacted> ping && mongodump -p<redacted> --out /b",
        b"curl -fsS -b <redacted> -b cookies.txt http://app/health",
    ):
        assert kept in written, kept
    # The argument list, one item a line: the item after redis-cli's `-a` is replaced whole.
    assert re.search(rb'"redis-cli",\s+"-h",\s+"127.0.0.1",\s+"-a",\s+"<redacted>",', written)


# docker/cli cli/command/registry/login.go: `-p` is `--password`; podman's, helm registry's
# and the other registry tools' logins the same (redaction/command_logins.py).
DOCKER_LOGIN_PASSWORD = "PLANTED9901docker"
HELM_LOGIN_PASSWORD = "PLANTED9902helm"
PODMAN_LOGIN_PASSWORD = "PLANTED9903podman"
SKOPEO_LOGIN_PASSWORD = "PLANTED9904skopeo"


def _pusher() -> Obj:
    """A job that logs in to its registries: a shell line and an argument list whose tool is
    named in `command` and its login's password given in `args`."""
    workload = deployment("pusher", [container("push", f"{REGISTRY}/pusher:1", port=8080)])
    spec = workload["spec"]["template"]["spec"]
    spec["containers"][0]["args"] = [
        "sh",
        "-c",
        f"docker login -u robot -p {DOCKER_LOGIN_PASSWORD} registry.example.com && "
        f"helm registry login registry.example.com -u robot -p {HELM_LOGIN_PASSWORD}",
    ]
    spec["initContainers"] = [
        {
            "name": "login",
            "image": "quay.io/podman/stable:v5",
            "command": ["podman"],
            "args": ["login", "-u", "robot", "-p", PODMAN_LOGIN_PASSWORD, "registry.example.com"],
        },
        {
            "name": "copy",
            "image": "quay.io/skopeo/stable:v1",
            "command": ["skopeo", "login", f"-p={SKOPEO_LOGIN_PASSWORD}", "registry.example.com"],
        },
    ]
    return workload


def test_a_registry_login_s_password_reaches_no_snapshot(doctor: Doctor) -> None:
    workload = _pusher()
    doctor.load(lambda now: [*healthy(now), workload, pod_for(workload, now, suffix="rl01")])
    planted = (
        DOCKER_LOGIN_PASSWORD,
        HELM_LOGIN_PASSWORD,
        PODMAN_LOGIN_PASSWORD,
        SKOPEO_LOGIN_PASSWORD,
    )
    written = _written(doctor.snapshot())
    assert b"docker login -u robot -p " in written, "precondition: the command was saved"
    assert [value for value in planted if value.encode() in written] == []
    # What is no secret stays readable around what was.
    assert (
        b"docker login -u robot -p <redacted> registry.example.com && helm registry login "
        b"registry.example.com -u robot -p <redacted>"
    ) in written
    assert re.search(rb'"login",\s+"-u",\s+"robot",\s+"-p",\s+"<redacted>",', written)
    assert re.search(rb'"skopeo",\s+"login",\s+"-p=<redacted>",', written)
