"""Baseline for refresh: every container's image looked up one by one, as the seed's cron did.

`python bench/sequential_lookups.py IMAGE...` sends one manifest HEAD per image, in order, and
prints how many digests it got.
"""

import sys

import httpx2

ACCEPT = ", ".join(
    (
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)


def main(images: list[str]) -> int:
    found = 0
    with httpx2.Client(timeout=30, headers={"Accept": ACCEPT}) as client:
        for image in images:
            host, _, rest = image.partition("/")
            repository, _, tag = rest.rpartition(":")
            response = client.head(f"http://{host}/v2/{repository}/manifests/{tag}")
            found += bool(response.headers.get("Docker-Content-Digest"))
    return found


if __name__ == "__main__":
    sys.stdout.write(f"{main(sys.argv[1:])}\n")
