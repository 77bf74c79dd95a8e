"""Baseline (b): what a naive Python tool does with the official `kubernetes` client.

Lists every pod of the cluster page by page (500 a page, as kubectl asks) and the machines,
deserialising into the client's models, and counts each machine's containers so the models
are used (no requests are summed). Runs in the bench venv: `python bench/official_client.py KUBECONFIG`.
"""

import sys

from kubernetes import client, config  # type: ignore[import-not-found]


def main(kubeconfig: str) -> int:
    config.load_kube_config(config_file=kubeconfig)
    api = client.CoreV1Api()
    machines = api.list_node(limit=500).items
    containers_per_machine = {m.metadata.name: 0 for m in machines}
    pods = 0
    token = None
    while True:
        page = api.list_pod_for_all_namespaces(limit=500, _continue=token)
        for pod in page.items:
            if pod.status.phase in ("Succeeded", "Failed") or not pod.spec.node_name:
                continue
            pods += 1
            containers_per_machine[pod.spec.node_name] = containers_per_machine.get(
                pod.spec.node_name, 0
            ) + len(pod.spec.containers)
        token = page.metadata._continue
        if not token:
            return pods


if __name__ == "__main__":
    sys.stdout.write(f"{main(sys.argv[1])}\n")
