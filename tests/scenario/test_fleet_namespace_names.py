"""doctor over namespaces the server lists (`-A`, `--namespace-selector`): a name no namespace
can have is never sent in a request and never judged not ready, and a name is shown on the
terminal with its control characters made visible. Against the fake API server through the real
client.

Upstream: the API server admits a namespace only under a DNS-1123 label (kubernetes
pkg/apis/core/validation/validation.go `ValidateNamespace`, `ValidateNamespaceName` =
apimachinery `NameIsDNSLabel`), so a list naming anything else did not come from one. The
context's own namespace is another matter: client-go sends any name but `.`, `..` and those
holding `/` or `%` (client-go rest/request.go `(*Request).Namespace`: `IsValidPathSegmentName`),
and the API server answers NotFound for one that is no DNS-1123 label; kubectl escapes the
terminal's control characters in what it prints from the server (cli-runtime
pkg/printers/terminal.go `EscapeTerminal`, called from tableprinter.go `printRows`; kubernetes
PR #112553).
"""

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.scenario.conftest import CREDENTIALS
from tests.support.cli import CliResult, run_cli
from tests.support.fake_apiserver import FakeApiServer
from tests.support.scenarios import healthy

EVIL = "evil\x1b]0;pwned\x07\x1b[2J\x1b[31mRED"
"""Retitles the window, clears the screen and turns what follows red, printed raw."""
EVIL_SHOWN = "evil\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mRED"
BREAK_SHOWN = "line\\nbreak"


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _doctor(kubeconfig: Path, *args: str) -> CliResult:
    return run_cli(
        "doctor",
        "--kubeconfig",
        str(kubeconfig),
        "--request-timeout",
        "2",
        "--no-registry",
        *CREDENTIALS,
        *args,
    )


def _namespaces_asked(server: FakeApiServer) -> set[str]:
    """Every namespace a request's path named (`…/namespaces/NAME/…`)."""
    return {
        name
        for record in server.requests()
        for name in re.findall(r"/namespaces/([^/?]+)/", record.path)
    }


def test_a_listed_name_no_namespace_can_have_is_could_not_check_and_never_asked(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """`..` sent as a path segment names the collection above it (`/api/v1/namespaces/../pods`
    is every namespace's pods); doctor judged what came back as the space not existing."""
    fake_api.add(*healthy(datetime.now(UTC)), _namespace(".."))
    result = _doctor(kubeconfig, "-A", "-o", "json")
    document = result.json()
    assert (result.exit_code, document["verdict"], document["counts"]) == (
        3,
        "unknown",
        {"ready": 1, "not-ready": 0, "unknown": 1},
    ), result.stdout
    by_name = {entry["namespace"]: entry["report"] for entry in document["namespaces"]}
    assert list(by_name) == ["..", "train"]
    report = by_name[".."]
    assert (report["verdict"], report["exit_code"]) == ("unknown", 3)
    assert report["headline"] == {
        "check": "credentials",
        "code": "namespace-name-impossible",
        "status": "unknown",
        "rule": "could-not-check",
        "text": "Couldn't check '..': the cluster listed it as an environment's space, but no "
        "space can have that name.",
        "remedy": "Ask your cluster admin what answers at this cluster's address: a real "
        f"cluster lists no such name; `kubectl --kubeconfig {kubeconfig} get namespaces` "
        "shows the spaces it lists.",
    }
    assert {(f["code"], f["status"], f["basis"]) for f in report["findings"]} == {
        ("namespace-name-impossible", "unknown", "cant-check")
    }
    assert [f["check"] for f in report["findings"]] == [
        "credentials",
        "image-pull",
        "storage",
        "queue",
        "admission",
        "workloads",
        "evidence",
        "capacity",
        "probes",
        "freshness",
    ]
    assert _namespaces_asked(fake_api) == {"train"}


def test_a_context_s_own_namespace_no_namespace_can_have_is_asked_about_in_a_fleet_too(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    """No list named `Bad_NS`: the kubeconfig's context did, and kubectl asks about it (`GET
    /api/v1/namespaces/Bad_NS/pods` answers an empty list, `get namespace Bad_NS` NotFound).
    `--context odd` measured "doesn't exist" (exit 2); `--contexts odd,good` said "the cluster
    listed it" and could not check (exit 3), sending the operator to the cluster admin."""
    fake_api.add(*healthy(datetime.now(UTC)))
    config = yaml.safe_load(kubeconfig.read_text())
    (context,) = config["contexts"]
    odd = {"name": "odd", "context": {**context["context"], "namespace": "Bad_NS"}}
    config["contexts"] = [context, odd]
    kubeconfig.write_text(yaml.safe_dump(config))
    alone = _doctor(kubeconfig, "--context", "odd", "-o", "json")
    assert (alone.exit_code, alone.json()["headline"]["code"]) == (
        2,
        "admission.namespace-missing",
    ), alone.stdout
    fleet = _doctor(kubeconfig, "--contexts", f"odd,{context['name']}", "-o", "json")
    by_context = {c["context"]: c for c in fleet.json()["clusters"]}
    odd_report = by_context["odd"]["namespaces"][0]["report"]
    assert (odd_report["exit_code"], odd_report["headline"]["code"]) == (
        2,
        "admission.namespace-missing",
    ), odd_report["headline"]
    assert fleet.exit_code == 2
    assert "Bad_NS" in _namespaces_asked(fake_api)


def test_a_listed_name_is_shown_with_its_control_characters_made_visible(
    fake_api: FakeApiServer, kubeconfig: Path
) -> None:
    fake_api.add(*healthy(datetime.now(UTC)), _namespace(EVIL), _namespace("line\nbreak"))
    result = _doctor(kubeconfig, "-A", "--no-color")
    lines = result.stdout.splitlines()
    width = len(EVIL_SHOWN)
    assert [line[: 19 + width + 2] for line in lines[:3]] == [
        f"? COULD NOT CHECK  {EVIL_SHOWN}  ",
        f"? COULD NOT CHECK  {BREAK_SHOWN.ljust(width)}  ",
        f"✓ READY            {'train'.ljust(width)}  ",
    ]
    assert f"{EVIL_SHOWN}:" in lines
    assert f"{BREAK_SHOWN}:" in lines
    assert lines[-1] == "3 namespaces: 0 not ready, 2 could not be checked, 1 ready."
    assert not {"\x1b", "\x07"} & set(result.stdout)
    assert not any(line.startswith("break") for line in lines)
    assert result.exit_code == 3
    assert _namespaces_asked(fake_api) == {"train"}
