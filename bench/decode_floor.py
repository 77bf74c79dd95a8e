"""The decode floor: the least a Python client can do to read what a fit needs per machine.

A paginated read of the cluster's pods (and machines) that decodes only nodeName, phase and the
container requests, over one kept-alive connection of the standard library's HTTP client (the
cheapest to import and to read with), and counts each machine's containers so the decoding is
used; the requests are decoded, not summed. `python bench/decode_floor.py URL` prints the
count of running pods on machines.
"""

import http.client
import sys
from urllib.parse import urlencode, urlsplit

import msgspec


class _Requests(msgspec.Struct, frozen=True):
    requests: dict[str, str] = msgspec.field(default_factory=dict)


class _Container(msgspec.Struct, frozen=True):
    resources: _Requests = _Requests()


class _Spec(msgspec.Struct, frozen=True):
    nodeName: str = ""
    containers: list[_Container] = msgspec.field(default_factory=list)
    initContainers: list[_Container] = msgspec.field(default_factory=list)


class _Status(msgspec.Struct, frozen=True):
    phase: str = ""


class _Pod(msgspec.Struct):
    spec: _Spec = _Spec()
    status: _Status = _Status()


class _Meta(msgspec.Struct, frozen=True, rename={"continue_": "continue"}):
    continue_: str = ""


class _Page(msgspec.Struct):
    items: list[_Pod]
    metadata: _Meta = _Meta()


def _get(connection: http.client.HTTPConnection, path: str) -> bytes:
    connection.request("GET", path, headers={"Accept": "application/json"})
    answer = connection.getresponse()
    body = answer.read()
    if answer.status != 200:
        raise SystemExit(f"decode floor: {path} answered {answer.status}")
    return body


def main(url: str) -> int:
    decoder = msgspec.json.Decoder(_Page)
    per_machine: dict[str, int] = {}
    pods = 0
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    try:
        _get(connection, "/api/v1/nodes")
        token = ""
        while True:
            query = {"limit": "500", **({"continue": token} if token else {})}
            page = decoder.decode(_get(connection, f"/api/v1/pods?{urlencode(query)}"))
            for pod in page.items:
                if pod.status.phase in ("Succeeded", "Failed") or not pod.spec.nodeName:
                    continue
                pods += 1
                per_machine[pod.spec.nodeName] = per_machine.get(pod.spec.nodeName, 0) + len(
                    pod.spec.containers
                )
            token = page.metadata.continue_
            if not token:
                return pods
    finally:
        connection.close()


if __name__ == "__main__":
    sys.stdout.write(f"{main(sys.argv[1])}\n")
