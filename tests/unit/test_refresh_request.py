"""refresh's request below the command line: the labels `--selector` names, the flags that
cannot go together, and the warning about registries' certificates, given before the cluster
is reached and only for a request that can run."""

from pathlib import Path

import pytest
from msgspec.structs import replace

from truegreen.cluster.settings import ConnectionSettings
from truegreen.errors import ConnectionSetupError, UsageError
from truegreen.refresh.command import RefreshRequest, run_refresh, selector_labels

UNVERIFIED = "not verifying registries' TLS certificates (--registry-skip-tls-verify)"


def _request(selector: str = "truegreen.io/refresh=enabled", **fields: object) -> RefreshRequest:
    return replace(RefreshRequest(ConnectionSettings(), selector=selector), **fields)


@pytest.mark.parametrize(
    ("selector", "labels"),
    [
        ("truegreen.io/refresh=enabled", {"truegreen.io/refresh": "enabled"}),
        (" team = ml , tier=train", {"team": "ml", "tier": "train"}),
        ("paused=", {"paused": ""}),
        ("team==ml,team=ml", {"team": "ml"}),
    ],
)
def test_a_selector_is_read_as_the_labels_it_names(selector: str, labels: dict[str, str]) -> None:
    assert selector_labels(_request(selector)) == labels


@pytest.mark.parametrize(
    "selector",
    ["team", "team!=ml", "team=ml,tier", "!team", "team in (ml,cv)", "team=ml,team=cv", "n>1"],
)
def test_a_selector_that_is_not_key_value_is_bad_usage(selector: str) -> None:
    """Selectors the API server takes but refresh does not: it names the labels to set
    (`kubectl label`) and so selects by equal labels only."""
    with pytest.raises(UsageError) as raised:
        selector_labels(_request(selector))
    assert raised.value.line() == f"--selector {selector!r} is not key=value[,key=value]"


@pytest.mark.parametrize("selector", ["", " ", "\t"])
def test_a_selector_that_names_no_label_is_bad_usage(selector: str) -> None:
    """The API server reads an empty selector as "everything" (labels.Parse gives an empty
    selector, which matches every object): refresh would act on workloads nobody opted in."""
    with pytest.raises(UsageError) as raised:
        selector_labels(_request(selector))
    assert raised.value.line() == (
        f"--selector {selector!r} is not key=value[,key=value]: it names no label, so it would "
        "select every workload"
    )


@pytest.mark.parametrize(
    ("selector", "why"),
    [
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("bad key=x", "found 'key', expected: in, notin, =, ==, !=, gt, lt"),
        ("=ml", "found '=', expected: !, identifier, or 'end of string'"),
        ("team=ml,", "found '', expected: identifier after ','"),
        (",,", "found ',', expected: !, identifier, or 'end of string'"),
        ("team=" + "m" * 4092, "more than 4096 characters"),
    ],
)
def test_a_selector_kubectl_would_refuse_is_bad_usage_in_its_words(selector: str, why: str) -> None:
    """k8s.io/apimachinery pkg/labels/selector.go `Parse` (cluster/namespace_selection.py
    parse_selector): the API server answers such a labelSelector with 400 Bad Request, which
    read as a cluster that answered with an error (exit 3) rather than the flag's own fault."""
    with pytest.raises(UsageError) as raised:
        selector_labels(_request(selector))
    assert raised.value.line() == (f"--selector {selector!r} is not key=value[,key=value]: {why}")


def test_a_namespace_and_every_namespace_are_bad_usage_together() -> None:
    request = _request(all_namespaces=True, connection=ConnectionSettings(namespace="train"))
    with pytest.raises(UsageError) as raised:
        selector_labels(request)
    assert raised.value.line() == "-n and --all-namespaces cannot be used together"


def test_unverified_registries_are_warned_of_before_connecting_and_only_when_usable(
    tmp_path: Path,
) -> None:
    told: list[str] = []
    unusable = ConnectionSettings(kubeconfig=tmp_path)  # a folder: it exists, it can't be read
    unverified = _request(connection=unusable, verify_registry_tls=False, on_warning=told.append)
    with pytest.raises(UsageError):
        run_refresh(replace(unverified, selector="team!=ml"))
    assert told == [], "a request that cannot run warned"
    with pytest.raises(ConnectionSetupError):
        run_refresh(unverified)
    assert told == [UNVERIFIED]
    with pytest.raises(ConnectionSetupError):
        run_refresh(replace(unverified, verify_registry_tls=True))
    assert told == [UNVERIFIED], "verified registries were warned of"
