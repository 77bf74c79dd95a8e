"""Credentials the redaction policy finds beyond a secret-named env var or flag (docs/snapshot.md
rule 4): the value of any `{name, value}` pair and of a secret-named setting or annotation.
Each with the near misses that must stay readable, because doctor reads them."""

from typing import Any

from truegreen.cluster.redact import REDACTED, redact_object


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
