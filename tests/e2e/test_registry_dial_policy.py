"""Where the registry client may connect, judged on the addresses a name resolves to, before
anything is dialled (http/address_policy.py): never link-local, metadata, unspecified or
multicast (refresh and doctor alike); for doctor, which runs outside the cluster, loopback and
plain HTTP only to a registry the operator named.

Every test resolves through its own resolver and dials through a connector that records what
it was handed and connects only on loopback (to the real registry, Debian's docker-registry):
a refusal is seen to come before any connect.
"""

import base64
import json
import socket
from collections.abc import Sequence

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.support.registry import Registry
from truegreen.http.deadline import Deadline
from truegreen.http.dial import resolve_name
from truegreen.http.errors import ConnectRefusedError
from truegreen.http.racing import Address, connect_first
from truegreen.images import parse_image
from truegreen.refresh.registry import (
    LookupFailed,
    LookupFailure,
    PullCredentials,
    RegistryAccess,
    RegistryClient,
    Resolved,
)

REFRESH = RegistryAccess(timeout=5)
DOCTOR = RegistryAccess(timeout=5, outside=True)


class Dials:
    """A resolver for test names and a connector that records every dial and connects only to
    loopback (anything else is recorded and refused, never dialled)."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.dialled: list[tuple[str, int] | tuple[str, int, int, int]] = []

    def resolve(self, host: str, port: int, deadline: Deadline) -> list[Address]:
        if host in self.names:
            ip = self.names[host]
            return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, (ip, port))]
        return resolve_name(host, port, deadline)

    def connect(self, addresses: Sequence[Address], name: str, deadline: Deadline) -> socket.socket:
        self.dialled += [address for _, address in addresses]
        if all(address[0] in ("127.0.0.1", "::1") for _, address in addresses):
            return connect_first(addresses, name, deadline)
        raise ConnectRefusedError(f"the test never dials {name}")

    def client(self, access: RegistryAccess) -> RegistryClient:
        return RegistryClient(access, resolver=self.resolve, connector=self.connect)


@pytest.mark.parametrize("access", [REFRESH, DOCTOR], ids=["refresh", "doctor"])
@pytest.mark.parametrize(
    ("image", "address"),
    [
        ("metadata.test/team/app:1", "169.254.169.254"),  # a name: its address is judged
        ("169.254.169.254/team/app:1", "169.254.169.254"),
        ("[fd00:ec2::254]/team/app:1", "fd00:ec2::254"),
        ("[fe80::1]:5000/team/app:1", "fe80::1"),
        ("0.0.0.0:5000/team/app:1", "0.0.0.0"),
        ("[::]:5000/team/app:1", "::"),
        ("224.0.0.1/team/app:1", "224.0.0.1"),
    ],
)
def test_link_local_metadata_unspecified_and_multicast_are_refused_before_any_dial(
    access: RegistryAccess, image: str, address: str
) -> None:
    dials = Dials({"metadata.test": "169.254.169.254"})
    reference = parse_image(image)
    result = dials.client(access).lookup(reference)
    assert dials.dialled == []
    host = reference.host
    assert result == LookupFailed(
        LookupFailure.ADDRESS_REFUSED,
        f"not connected to {reference.registry}: {host} resolves to {address}, an address "
        "truegreen never connects to",
    )


def test_doctor_asks_no_loopback_registry_the_operator_did_not_name(
    open_registry: Registry,
) -> None:
    digest = open_registry.push_image("team/app", "v1", content="policy")
    port = open_registry.host.rsplit(":", 1)[1]
    dials = Dials({"registry.test": "127.0.0.1"})
    for image in (f"{open_registry.host}/team/app:v1", f"localhost:{port}/team/app:v1"):
        result = dials.client(DOCTOR).lookup(parse_image(image))
        host = parse_image(image).host
        assert isinstance(result, LookupFailed), image
        assert result.failure is LookupFailure.OWN_ADDRESS, result
        assert result.reason.endswith(", this machine's own address"), result.reason
        assert host in result.reason
    assert dials.dialled == []
    # named (as the image names it), it is asked over plain HTTP, as refresh always may
    named = RegistryAccess(timeout=5, outside=True, insecure_registries=frozenset({"127.0.0.1"}))
    reference = parse_image(f"{open_registry.host}/team/app:v1")
    assert dials.client(named).lookup(reference) == dials.client(REFRESH).lookup(reference)
    assert isinstance(found := dials.client(named).lookup(reference), Resolved)
    assert found.digest == digest
    # a name that resolves to loopback is loopback: refused unless that name is the one named
    by_name = parse_image(f"registry.test:{port}/team/app:v1")
    assert dials.client(named).lookup(by_name).failure is LookupFailure.OWN_ADDRESS  # type: ignore[union-attr]
    also = RegistryAccess(
        timeout=5, outside=True, insecure_registries=frozenset({f"registry.test:{port}"})
    )
    assert isinstance(dials.client(also).lookup(by_name), Resolved)


def test_doctor_uses_plain_http_only_for_a_registry_the_operator_named() -> None:
    dials = Dials({"r.test": "93.184.215.14"})  # a global address: the test never dials it
    reference = parse_image("r.test/team/app:1")
    dials.client(DOCTOR).lookup(reference)
    named = RegistryAccess(timeout=5, outside=True, insecure_registries=frozenset({"r.test"}))
    dials.client(named).lookup(reference)
    assert dials.dialled == [("93.184.215.14", 443), ("93.184.215.14", 80)]


def test_refresh_sends_a_login_keyed_by_a_path_or_a_glob_to_its_image_s_host_alone(
    registry: Registry,
) -> None:
    """keyring.go: a login key's path is a prefix of the image's, and `*` matches one host
    part; the login then goes to the image's own host and port (the registry wants it)."""
    digest = registry.push_image("team/app", "v1", content="keyed")
    port = registry.host.rsplit(":", 1)[1]
    auth = base64.b64encode(f"robot:{REGISTRY_PASSWORD}".encode()).decode()
    for key in (f"{registry.host}/team", f"127.0.0.*:{port}"):
        config = json.dumps({"auths": {key: {"auth": auth}}}).encode()
        logins = PullCredentials.from_docker_configs(
            [(".dockerconfigjson", base64.b64encode(config).decode())]
        )
        reference = parse_image(f"{registry.host}/team/app:v1")
        [login] = logins.applying_to(reference)
        assert login.registry == registry.host, key
        found = RegistryClient(REFRESH).lookup(reference, login)
        assert isinstance(found, Resolved), (key, found)
        assert found.digest == digest, key
        other = logins.applying_to(parse_image(f"{registry.host}/other/app:v1"))
        assert other == ([] if key.endswith("/team") else [login]), key
