"""A byte-order mark at the start of a manifest, read as kubectl reads it.

k8s.io/cli-runtime pkg/resource/visitor.go FileVisitor.Visit (files and stdin alike) wraps the
reader in `transform.NewReader(f, unicode.BOMOverride(unicode.UTF8.NewDecoder()))` before
apimachinery's YAMLOrJSONDecoder guesses JSON or YAML: a UTF-8 byte-order mark is dropped, and one
of UTF-16LE or UTF-16BE switches the decoding to that encoding (golang.org/x/text
encoding/unicode BOMOverride; it considers no other). Windows PowerShell 5.1's `Out-File
-Encoding utf8` writes the UTF-8 mark, and its `>` writes UTF-16LE with its mark.
"""

import codecs
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli

Obj = dict[str, Any]


def deployment(name: str) -> Obj:
    """A Deployment gated by a readiness probe: nothing for lint to say."""
    api = {
        "name": "api",
        "image": "registry.example.com/api:1",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [api]}},
        },
    }


def job(name: str) -> Obj:
    """A Job whose trainer has a liveness probe: one restart-probe-on-keep-running each."""
    train = {
        "name": "train",
        "image": "registry.example.com/train:1",
        "command": ["torchrun", "train.py"],
        "livenessProbe": {"exec": {"command": ["cat", "/tmp/alive"]}},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [train]}}},
    }


def json_lines(*objects: Obj) -> str:
    """One JSON object per line, as `kubectl get … -o json | jq -c '.items[]'` writes them."""
    return "".join(json.dumps(obj) + "\n" for obj in objects)


def yaml_stream(*objects: Obj) -> str:
    """YAML documents (JSON is YAML's flow style), each after `---`."""
    return "".join(f"---\n{json.dumps(obj)}\n" for obj in objects)


def names(result_json: Obj) -> list[tuple[str, int | None, str]]:
    return [(f["rule"], f["line"], f["name"]) for f in result_json["findings"]]


def test_a_utf_8_mark_before_a_json_stream_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "clean.json"
    path.write_bytes(codecs.BOM_UTF8 + json_lines(*map(deployment, "abc")).encode())
    result = run_cli("lint", str(path), "-o", "json")
    assert (result.exit_code, result.json()["objects"], result.json()["findings"]) == (0, 3, [])
    jobs = codecs.BOM_UTF8 + json_lines(*map(job, "abc")).encode()
    on_stdin = run_cli("lint", "-", "-o", "json", stdin=jobs)
    assert names(on_stdin.json()) == [
        ("restart-probe-on-keep-running", 1, "a"),
        ("restart-probe-on-keep-running", 2, "b"),
        ("restart-probe-on-keep-running", 3, "c"),
    ]
    assert on_stdin.exit_code == 2


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf_16_with_its_mark_is_read_as_kubectl_reads_it(tmp_path: Path, encoding: str) -> None:
    """Python's `utf-16` writes the machine's byte order with its mark; `-le` and `-be` write
    none, so the mark is written first, as Windows tools do."""
    mark = b"" if encoding == "utf-16" else "\ufeff".encode(encoding)
    path = tmp_path / "jobs.yaml"
    path.write_bytes(mark + yaml_stream(*map(job, "abc")).encode(encoding))
    result = run_cli("lint", str(path), "-o", "json")
    assert names(result.json()) == [
        ("restart-probe-on-keep-running", 2, "a"),
        ("restart-probe-on-keep-running", 4, "b"),
        ("restart-probe-on-keep-running", 6, "c"),
    ]
    assert result.exit_code == 2


def test_a_utf_16_file_that_cannot_be_decoded_says_so(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_bytes(codecs.BOM_UTF16_LE + b"k\x00i")
    result = run_cli("lint", str(path), "-o", "json")
    ((finding),) = result.json()["findings"]
    assert (finding["rule"], finding["message"]) == (
        "unreadable-file",
        "cannot be read: it is not UTF-16 text (byte 5)",
    )
