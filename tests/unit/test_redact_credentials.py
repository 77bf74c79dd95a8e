"""Credentials the redaction policy finds beyond a secret-named env var or flag (docs/snapshot.md
rules 4-6): the value of any `{name, value}` pair and of a secret-named setting or annotation,
tokens and signed URLs known by their form, and the passwords curl and MySQL clients take by
short options. Each with the near misses that must stay readable, because doctor reads them."""

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from truegreen.cluster import CantRead, Kind, ReadFailure
from truegreen.cluster.reader import ReadKey
from truegreen.cluster.redact import redact_arguments, redact_object
from truegreen.cluster.snapshot import Capture, SnapshotInfo, render
from truegreen.redacted import REDACTED
from truegreen.redaction.text import redact_shapes, redact_text

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
SAS_QUERY = "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31T00:00:00Z&spr=https"
S3_SIGNATURE = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # RFC 7519 §7.1 compact JWS, an unsecured JWT (empty signature), a five-part JWE.
        (JWT, REDACTED),
        (f"Bearer {JWT}", f"Bearer {REDACTED}"),
        ("cached eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. is stale", f"cached {REDACTED} is stale"),
        ("eyJhbGciOiJSU0EtT0FFUCJ9.a2V5.aXY.Y2lwaGVy.dGFn end", f"{REDACTED} end"),
        # GitHub's token formats (github.blog changelog 2021-03-31), Hugging Face's.
        ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", REDACTED),
        ("GH=gho_16C7e42F292c6912E7710c838347Ae178B4a;", f"GH={REDACTED};"),
        ("ghs_16C7e42F292c6912E7710c838347Ae178B4a", REDACTED),
        (
            "ghu_16C7e42F292c6912E7710c838347Ae178B4a ghr_16C7e42F292c6912E7710c838347Ae178B4a",
            f"{REDACTED} {REDACTED}",
        ),
        (
            "github_pat_11ABCDEFG0123456789abc_" + "x1Y2z3" * 9 + "abcde",
            REDACTED,
        ),
        ("token hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 ok", f"token {REDACTED} ok"),
        ("api_org_AbCdEfGhIjKlMnOpQrStUvWxYzabcdefgh", REDACTED),
        # Signed URLs: Azure SAS, S3 presigned, GCS V4 (gcloud's lower case) and V2; what else
        # the URL says stays.
        (
            f"azcopy copy 'https://acct.blob.core.windows.net/d/x?{SAS_QUERY}&sig=a%2Fb%3D' /d",
            f"azcopy copy 'https://acct.blob.core.windows.net/d/x?{SAS_QUERY}&sig={REDACTED}' /d",
        ),
        (f"?{SAS_QUERY}&sig=a%2Fb%3D", f"?{SAS_QUERY}&sig={REDACTED}"),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-SignedHeaders=host&X-Amz-Signature={S3_SIGNATURE}#frag",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-SignedHeaders=host&X-Amz-Signature={REDACTED}#frag",
        ),
        (
            f"https://storage.googleapis.com/b/o?x-goog-date=20260101&x-goog-signature={S3_SIGNATURE}",
            f"https://storage.googleapis.com/b/o?x-goog-date=20260101&x-goog-signature={REDACTED}",
        ),
        (
            "https://storage.googleapis.com/b/o?Expires=1&Signature=ab%2Bc%3D",
            f"https://storage.googleapis.com/b/o?Expires=1&Signature={REDACTED}",
        ),
    ],
)
def test_credentials_known_by_their_form_are_redacted_anywhere(text: str, expected: str) -> None:
    assert redact_shapes(text) == expected
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "eyJhbGciOiJIUzI1NiJ9",  # one part: no token
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",  # two parts
        "keyJa.b.c",  # `eyJ` inside a word
        "hf_hub_download",
        "ghp_short1234",
        "my_ghp_16C7e42F292c6912E7710c838347Ae178B4a",  # inside an identifier
        "github_pat_1234",
        "signal=9 design=x assign=y",
        "https://example.com/search?signed=1&sigma=2",
        "Xsig=abc",
    ],
)
def test_what_only_looks_like_a_credential_s_form_is_kept(text: str) -> None:
    assert redact_text(text) == text


def test_the_other_credential_parameters_of_a_signed_url_go_by_their_names() -> None:
    """S3's session token and credential, GCS's credential, OAuth's `access_token` (RFC 6750
    §2.3): their names hold a secret word, so rule 6's named form takes them, as before."""
    url = (
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKID%2F20260101&X-Amz-Security-Token=IQo"
        "&X-Goog-Credential=sa%40p.iam&token=t&access_token=u"
    )
    assert redact_text(url) == (
        f"https://b.s3.amazonaws.com/k?X-Amz-Credential={REDACTED}"
        f"&X-Amz-Security-Token={REDACTED}&X-Goog-Credential={REDACTED}"
        f"&token={REDACTED}&access_token={REDACTED}"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "curl -fsS -u admin:hunter2 https://mlflow/health",
            f"curl -fsS -u admin:{REDACTED} https://mlflow/health",
        ),
        ("curl -uadmin:hunter2 https://h/", f"curl -uadmin:{REDACTED} https://h/"),
        ("curl --user 'admin:two words' https://h/", f"curl --user 'admin:{REDACTED}' https://h/"),
        (
            'curl -U "proxy:p:w" -x http://p:3128 https://h/',
            f'curl -U "proxy:{REDACTED}" -x http://p:3128 https://h/',
        ),
        ("CURL_OPTS=-u admin:hunter2", f"CURL_OPTS=-u admin:{REDACTED}"),
        # `--long=value` (curl tool_getparam.c, curl pull request 17789) and short options
        # run together, the last taking the next argument (`-sSu`: getparameter).
        ("curl --user=admin:hunter2 https://h/", f"curl --user=admin:{REDACTED} https://h/"),
        ("curl --proxy-user=p:hunter2 https://h/", f"curl --proxy-user=p:{REDACTED} https://h/"),
        ("curl -sSu admin:hunter2 https://h/", f"curl -sSu admin:{REDACTED} https://h/"),
        ("curl -fsSLU 'proxy:p w' https://h/", f"curl -fsSLU 'proxy:{REDACTED}' https://h/"),
        # curl's short options also hold digits and `#` (`-4`: IPv4 only, `-#`: progress bar).
        ("curl -4u admin:hunter2 https://h/", f"curl -4u admin:{REDACTED} https://h/"),
        ("curl -#u admin:hunter2 https://h/", f"curl -#u admin:{REDACTED} https://h/"),
        ("curl -sSuadmin:hunter2 https://h/", f"curl -sSuadmin:{REDACTED} https://h/"),
        # Quoted parts of an unquoted password: the shell joins them into one argument.
        ('curl -u admin:"two words" https://h/', f"curl -u admin:{REDACTED} https://h/"),
        ("curl -u admin:pre'fix\" https://h/", f"curl -u admin:{REDACTED}"),
        ("mysql -uroot -phunter2 -e 'select 1'", f"mysql -uroot -p{REDACTED} -e 'select 1'"),
        (
            '/usr/bin/mysqladmin ping -h 127.0.0.1 -p"${MYSQL_ROOT_PASSWORD}"',
            f'/usr/bin/mysqladmin ping -h 127.0.0.1 -p"{REDACTED}"',
        ),
        ("mariadb-dump -u app '-pa b' db", f"mariadb-dump -u app '-p{REDACTED}' db"),
        ("mysql -h db -phunter2;echo done", f"mysql -h db -p{REDACTED};echo done"),
        # Another tool's `-u` with a `:` pays for it: a value is judged alone (docs).
        ("docker run -u 1000:1000 img", f"docker run -u 1000:{REDACTED} img"),
        ("ffuf -u https://h/FUZZ", f"ffuf -u https:{REDACTED}"),
    ],
)
def test_passwords_given_by_curl_s_and_mysql_s_short_options_are_redacted(
    text: str, expected: str
) -> None:
    """curl's `-u user:password` splits at the first colon (curl docs/cmdline-opts/user.md);
    a MySQL client's `-p` takes the password attached (MySQL Reference Manual, "Using Options
    on the Command Line"). The user name stays: it says whose login it was."""
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "python -u train.py --rdzv-endpoint=h:29500",
        "curl -u admin https://h/",  # curl asks for the password
        "mysql -p db",  # asks for the password
        "mysql -P3306 -h db",  # the port
        "mkdir -p/data && ssh -p22 host",  # no MySQL client: `-p` means something else
        "cat /var/run/mysqld/mysqld.sock.lock",
    ],
)
def test_what_is_no_password_of_curl_or_mysql_is_kept(text: str) -> None:
    assert redact_text(text) == text


def test_argument_lists_redact_curl_s_and_mysql_s_passwords_item_by_item() -> None:
    assert redact_arguments(["curl", "-fsS", "-u", "admin:hunter2", "https://h/"]) == [
        "curl",
        "-fsS",
        "-u",
        f"admin:{REDACTED}",
        "https://h/",
    ]
    assert redact_arguments(["--proxy-user", "p:w", "-U", "https://h/", "--user", "me"]) == [
        "--proxy-user",
        f"p:{REDACTED}",
        "-U",
        f"https:{REDACTED}",
        "--user",
        "me",
    ]
    assert redact_arguments(["/usr/bin/mysql", "-uroot", "-phunter2", "-p", "-P3306"]) == [
        "/usr/bin/mysql",
        "-uroot",
        f"-p{REDACTED}",
        "-p",
        "-P3306",
    ]
    assert redact_arguments(["ssh", "-p22", "host"]) == ["ssh", "-p22", "host"]
    assert redact_arguments(["curl", "-sSu", "admin:hunter2", "--user=me:pw", "https://h/"]) == [
        "curl",
        "-sSu",
        f"admin:{REDACTED}",
        f"--user=me:{REDACTED}",
        "https://h/",
    ]
    assert redact_arguments(["tar", "-xzf", "a:b.tgz"]) == ["tar", "-xzf", "a:b.tgz"]
    assert redact_arguments(["curl", "-4u", "admin:hunter2", "-#U", "p:w"]) == [
        *("curl", "-4u", f"admin:{REDACTED}", "-#U", f"p:{REDACTED}")
    ]


def _container(**fields: Any) -> dict[str, Any]:
    return {"name": "es", "image": "docker.elastic.co/elasticsearch/elasticsearch:8.15.0", **fields}


def test_every_name_value_pair_is_redacted_by_its_name_http_headers_too() -> None:
    """core/v1 HTTPHeader is `{name, value}` as EnvVar is (HTTPGetAction.httpHeaders, in
    probes and lifecycle hooks): the name says whether the value is a secret."""
    headers = [
        {"name": "Authorization", "value": "Basic ZWxhc3RpYzpjaGFuZ2VtZQ=="},
        {"name": "X-Api-Key", "value": "k8sProbeApiKeyValue77"},
        {"name": "X-Auth-Token", "value": ""},
        {"name": "Accept", "value": "application/json"},
    ]
    get = {"path": "/_cluster/health", "port": 9200, "httpHeaders": headers}
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                _container(
                    readinessProbe={"httpGet": get},
                    lifecycle={"preStop": {"httpGet": get}},
                    env=[
                        {"name": "DB_PASSWORD", "value": "hunter2"},
                        {"name": "MODE", "value": "x"},
                    ],
                )
            ]
        },
    }
    redacted = redact_object(pod)
    container = redacted["spec"]["containers"][0]
    expected = [
        {"name": "Authorization", "value": REDACTED},
        {"name": "X-Api-Key", "value": REDACTED},
        {"name": "X-Auth-Token", "value": ""},
        {"name": "Accept", "value": "application/json"},
    ]
    assert container["readinessProbe"]["httpGet"]["httpHeaders"] == expected
    assert container["lifecycle"]["preStop"]["httpGet"]["httpHeaders"] == expected
    assert container["env"] == [
        {"name": "DB_PASSWORD", "value": REDACTED},
        {"name": "MODE", "value": "x"},
    ]
    assert redact_object(redacted) == redacted


def test_a_setting_whose_key_names_a_secret_is_redacted_and_kubernetes_fields_are_not() -> None:
    """KubeRay passes rayStartParams to `ray start` as `--KEY=VALUE` (ray-operator pod.go
    convertParamMap): `redis-password` is the flag rule 5 redacts. A Kubernetes field's name
    (lower camel case) refers to a Secret, a label or an entry, and a prefixed key is a
    resource's name: doctor reads both, as they are."""
    ray = {
        "kind": "RayCluster",
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {
                    "dashboard-host": "0.0.0.0",
                    "redis-password": "LetMeInRayS3cr3t",
                    "num-gpus": "1",
                    "object-store-memory": "",
                }
            },
            "sparkConf": {"spark.ssl.keyPassword": "k", "DB_PASSWORD": "d", "Token": "t"},
        },
    }
    assert redact_object(ray)["spec"] == {
        "headGroupSpec": {
            "rayStartParams": {
                "dashboard-host": "0.0.0.0",
                "redis-password": REDACTED,
                "num-gpus": "1",
                "object-store-memory": "",
            }
        },
        "sparkConf": {
            "spark.ssl.keyPassword": REDACTED,
            "DB_PASSWORD": REDACTED,
            "Token": REDACTED,
        },
    }
    pod_spec = {
        "volumes": [{"name": "db", "secret": {"secretName": "db-password"}}],
        "topologySpreadConstraints": [{"topologyKey": "kubernetes.io/hostname"}],
        "containers": [
            {
                "name": "c",
                "env": [
                    {
                        "name": "DB",
                        "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}},
                    }
                ],
                "resources": {"limits": {"example.com/private-gpu": "2"}},
            }
        ],
    }
    quota = {
        "hard": {"secrets": "10", "count/secrets": "10", "requests.example.com/private-gpu": "4"}
    }
    flavor = {"nodeLabels": {"private-pool": "true", "example.com/auth-zone": "a"}}
    for kept in (pod_spec, quota, flavor):
        assert redact_object({"spec": kept}) == {"spec": kept}


def test_an_annotation_whose_name_looks_secret_is_redacted_but_kubernetes_own_are_not() -> None:
    """An annotation named like a secret holds one (`example.com/db-password`); the names
    under Kubernetes' own prefixes hold a container's name, and Pod Security reads their
    values (`container.apparmor.security.beta.kubernetes.io/<container>`)."""
    apparmor = "container.apparmor.security.beta.kubernetes.io/auth-proxy"
    metadata = {
        "name": "p",
        "annotations": {
            "example.com/db-password": "AnnotationSecretValue42",
            "vault.hashicorp.com/agent-inject-secret-db": "database/creds/app",
            "api-token": "t",
            "auth.example.com/team": "ml",
            apparmor: "runtime/default",
            "kubernetes.io/enforce-mountable-secrets": "true",
            "example.com/empty-password": "",
        },
    }
    assert redact_object({"metadata": metadata})["metadata"]["annotations"] == {
        "example.com/db-password": REDACTED,
        "vault.hashicorp.com/agent-inject-secret-db": REDACTED,
        "api-token": REDACTED,
        "auth.example.com/team": "ml",
        apparmor: "runtime/default",
        "kubernetes.io/enforce-mountable-secrets": "true",
        "example.com/empty-password": "",
    }


def test_a_failed_read_s_reason_keeps_the_names_it_gives_and_loses_every_shape() -> None:
    """A reason is truegreen's own line naming what it read: the named rules would take a
    Secret named `regcred` (`cred`) for a secret's name (doctor offline would then say other
    words than live); the shape rules, tokens and signatures included, apply."""
    info = SnapshotInfo("train", datetime(2025, 1, 2, tzinfo=UTC), "https://cluster:6443", {})
    reason = f"read secret 'regcred': not found (404) via https://u:p@proxy/?sig=x {JWT}"
    read = CantRead(ReadFailure.NOT_FOUND, reason)
    files = dict(render(Capture(info, [(ReadKey("get", Kind.SECRET, "train", "regcred"), read)])))
    saved = yaml.safe_load(files["reads/001-get-secrets-regcred.yaml"])
    assert saved["result"]["cant_read"]["reason"] == (
        f"read secret 'regcred': not found (404) via https://{REDACTED}@proxy/?sig={REDACTED} "
        f"{REDACTED}"
    )
