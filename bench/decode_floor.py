"""The decode floor: the least a Python client can do to sum requests per machine.

A paginated read of the cluster's pods (and machines) that decodes only nodeName, phase and the
container requests. `python bench/decode_floor.py URL` prints the pod count.
"""

import sys

import httpx2
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


def main(url: str) -> int:
    decoder = msgspec.json.Decoder(_Page)
    per_machine: dict[str, int] = {}
    pods = 0
    with httpx2.Client(base_url=url, timeout=60) as client:
        client.get("/api/v1/nodes").raise_for_status()
        token = ""
        while True:
            params = {"limit": "500", **({"continue": token} if token else {})}
            page = decoder.decode(client.get("/api/v1/pods", params=params).content)
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


if __name__ == "__main__":
    sys.stdout.write(f"{main(sys.argv[1])}\n")
