"""The registry client against a real docker-registry: digests, auth flows, and failures."""

import base64
import json
from collections.abc import Iterator

import pytest

from tests.conftest import REGISTRY_PASSWORD
from tests.support.registry import OCI_INDEX, Registry, TokenFront
from truegreen.images import parse_image
from truegreen.refresh.registry import (
    LookupFailed,
    LookupFailure,
    LookupKey,
    PullCredentials,
    RegistryAccess,
    RegistryClient,
    RegistryLogin,
    Resolved,
)


def _login(host: str, password: str = REGISTRY_PASSWORD) -> RegistryLogin | None:
    """The robot's login for `host`, as a pull secret holds it and refresh reads it."""
    auth = base64.b64encode(f"robot:{password}".encode()).decode()
    config = base64.b64encode(json.dumps({"auths": {host: {"auth": auth}}}).encode()).decode()
    logins = PullCredentials.from_docker_configs([(".dockerconfigjson", config)])
    return next(iter(logins.applying_to(parse_image(f"{host}/team/app"))), None)


@pytest.fixture
def anonymous() -> Iterator[RegistryClient]:
    client = RegistryClient(RegistryAccess(timeout=5))
    yield client
    client.close()


def test_tag_resolves_to_the_pushed_digest(
    open_registry: Registry, anonymous: RegistryClient
) -> None:
    digest = open_registry.push_image("team/app", "v1", content="one")
    result = anonymous.lookup(parse_image(f"{open_registry.host}/team/app:v1"))
    assert result == Resolved(digest, "application/vnd.oci.image.manifest.v1+json", ())


def test_moved_tag_resolves_to_the_new_digest(
    open_registry: Registry, anonymous: RegistryClient
) -> None:
    first = open_registry.push_image("team/moving", "stable", content="a")
    second = open_registry.push_image("team/moving", "stable", content="b")
    assert first != second
    result = anonymous.lookup(parse_image(f"{open_registry.host}/team/moving:stable"))
    assert isinstance(result, Resolved)
    assert result.digest == second


def test_index_lists_its_platform_manifests(
    open_registry: Registry, anonymous: RegistryClient
) -> None:
    index, children = open_registry.push_index("team/multi", "v2", content="multi")
    result = anonymous.lookup(parse_image(f"{open_registry.host}/team/multi:v2"))
    assert isinstance(result, Resolved)
    assert (result.digest, result.children) == (index, tuple(children))
    assert result.all_digests == {index, *children}


def test_missing_tag_and_deleted_pin_are_not_found(
    open_registry: Registry, anonymous: RegistryClient
) -> None:
    digest = open_registry.push_image("team/gone", "v1", content="gone")
    assert isinstance(
        anonymous.lookup(parse_image(f"{open_registry.host}/team/gone@{digest}")), Resolved
    )
    open_registry.delete_manifest("team/gone", digest)
    pinned = anonymous.lookup(parse_image(f"{open_registry.host}/team/gone@{digest}"))
    assert isinstance(pinned, LookupFailed)
    assert pinned.failure is LookupFailure.NOT_FOUND
    tag = anonymous.lookup(parse_image(f"{open_registry.host}/team/gone:nope"))
    assert isinstance(tag, LookupFailed)
    assert tag.failure is LookupFailure.NOT_FOUND


def test_basic_auth(registry: Registry) -> None:
    digest = registry.push_image("private/app", "v1", content="private")
    reference = parse_image(f"{registry.host}/private/app:v1")
    assert RegistryClient().lookup(reference, _login(registry.host)) == Resolved(
        digest, "application/vnd.oci.image.manifest.v1+json", ()
    )
    other = _login("other.example")
    assert other is not None, "precondition: a login, for another registry"
    for login in (_login(registry.host, "wrong"), None, other):
        result = RegistryClient().lookup(reference, login)
        assert isinstance(result, LookupFailed)
        assert result.failure is LookupFailure.UNAUTHORIZED


def test_bearer_token_flow(open_registry: Registry, token_registry: TokenFront) -> None:
    digest = open_registry.push_image("team/tokened", "v1", content="tokened")
    reference = parse_image(f"{token_registry.host}/team/tokened:v1")
    result = RegistryClient().lookup(reference, _login(token_registry.host))
    assert isinstance(result, Resolved)
    assert result.digest == digest
    token_requests = [(p, a) for p, a in token_registry.seen if p.startswith("/token")]
    assert len(token_requests) == 1
    assert "scope=repository%3Ateam%2Ftokened%3Apull" in token_requests[0][0]
    assert token_registry.seen[-1][1] == f"Bearer {token_registry.token}"
    refused = RegistryClient().lookup(reference, _login(token_registry.host, "wrong"))
    assert isinstance(refused, LookupFailed)
    assert refused.failure is LookupFailure.UNAUTHORIZED


def test_a_token_granted_without_access_to_the_repository_is_not_a_refused_login(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    """distribution's token auth: the token service grants a token whose access list lacks
    pull on the repository, and the registry answers 401 `error="insufficient_scope"`
    (registry/auth/token/accesscontroller.go, Authorized): the login was taken, the repository
    refused (or not there). The token service's own 401 refuses the login."""
    open_registry.push_image("team/closed", "v1", content="closed")
    token_registry.no_access.add("team/closed")
    reference = parse_image(f"{token_registry.host}/team/closed:v1")
    closed = RegistryClient().lookup(reference, _login(token_registry.host))
    assert closed == LookupFailed(
        LookupFailure.NOT_ALLOWED,
        f"{token_registry.host} granted a token, then refused pull access to team/closed with "
        "it (insufficient_scope)",
    )
    assert token_registry.seen[-1][1] == f"Bearer {token_registry.scopeless_token}", (
        "precondition: the token the service granted was sent"
    )
    refused = RegistryClient().lookup(reference, _login(token_registry.host, "wrong"))
    assert isinstance(refused, LookupFailed)
    assert refused.failure is LookupFailure.UNAUTHORIZED
    token_registry.anonymous = True
    anonymous = RegistryClient().lookup(reference)
    assert isinstance(anonymous, LookupFailed)
    assert anonymous.failure is LookupFailure.NOT_ALLOWED


def test_a_403_denied_to_the_login_is_a_repository_refused(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    """403 DENIED (distribution-spec spec.md, Error Codes: `requested access to the resource
    is denied`) to a login the token service took: the registry's code, in the body of a GET's
    answer, is in the reason; a HEAD's answer has none."""
    open_registry.push_image("team/denied", "v1", content="denied")
    token_registry.faults["/team/denied/"] = "denied"
    reference = parse_image(f"{token_registry.host}/team/denied:v1")
    client = RegistryClient()
    login = _login(token_registry.host)
    refused = f"{token_registry.host} refused pull access to team/denied"
    read = client.manifest(reference, login, content=True)
    assert read == LookupFailed(LookupFailure.NOT_ALLOWED, f"{refused} (403 DENIED)")
    head = client.lookup(reference, login)
    assert head == LookupFailed(LookupFailure.NOT_ALLOWED, f"{refused} (403)")


def test_redirect_to_another_host_drops_the_credentials(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    open_registry.push_image("team/moved", "v1", content="moved")
    elsewhere = TokenFront(open_registry, "someone", "else")
    try:
        token_registry.faults["/team/moved/"] = "redirect"
        token_registry.redirect_to = f"http://{elsewhere.host}"
        RegistryClient().lookup(
            parse_image(f"{token_registry.host}/team/moved:v1"), _login(token_registry.host)
        )
        assert elsewhere.seen, "precondition: the redirect was followed"
        assert all(authorization is None for _, authorization in elsewhere.seen)
    finally:
        elsewhere.stop()


@pytest.mark.parametrize(
    ("fault", "failure"),
    [("429", LookupFailure.RATE_LIMITED), ("schema1", LookupFailure.UNSUPPORTED)],
)
def test_registry_faults_are_classified(
    open_registry: Registry, token_registry: TokenFront, fault: str, failure: LookupFailure
) -> None:
    open_registry.push_image("team/faulty", "v1", content=fault)
    token_registry.faults["/team/faulty/"] = fault
    result = RegistryClient().lookup(
        parse_image(f"{token_registry.host}/team/faulty:v1"), _login(token_registry.host)
    )
    assert isinstance(result, LookupFailed)
    assert result.failure is failure


def test_missing_digest_header_is_computed_from_the_body(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    digest = open_registry.push_image("team/nodigest", "v1", content="nodigest")
    token_registry.faults["/team/nodigest/"] = "no-digest"
    result = RegistryClient().lookup(
        parse_image(f"{token_registry.host}/team/nodigest:v1"), _login(token_registry.host)
    )
    assert isinstance(result, Resolved)
    assert result.digest == digest


def test_an_index_is_read_only_for_platform_manifests_that_are_wanted(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    """Docker Hub counts each manifest GET as a pull and no HEAD
    (docs.docker.com/docker-hub/usage/pulls): an index whose digest the caller already judges
    without its platform manifests (`known`), or a pinned one, is asked with a HEAD alone;
    any other index is read, once."""
    index, children = open_registry.push_index("team/counted", "v1", content="counted")
    tag = parse_image(f"{token_registry.host}/team/counted:v1")
    pinned = parse_image(f"{token_registry.host}/team/counted@{index}")
    login, client = _login(token_registry.host), RegistryClient()
    by_tag, by_digest = "/v2/team/counted/manifests/v1", f"/v2/team/counted/manifests/{index}"

    assert client.lookup(tag, login, known=index) == Resolved(index, OCI_INDEX, None)
    assert client.lookup(pinned, login) == Resolved(index, OCI_INDEX, None)
    assert token_registry.manifest_asks == [("HEAD", by_tag), ("HEAD", by_digest)]

    token_registry.manifest_asks.clear()
    other = "sha256:" + "0" * 64
    assert client.lookup(tag, login, known=other) == Resolved(index, OCI_INDEX, tuple(children))
    assert client.lookup(tag, login) == Resolved(index, OCI_INDEX, tuple(children))
    assert token_registry.manifest_asks == [("HEAD", by_tag), ("GET", by_tag)] * 2


def test_a_head_that_names_no_digest_reads_the_index_even_when_known(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    """An old registry without Docker-Content-Digest on HEAD: the digest comes from the body,
    so the manifest is read, whatever the caller knows."""
    index, children = open_registry.push_index("team/olden", "v1", content="olden")
    token_registry.faults["/team/olden/"] = "no-digest"
    reference = parse_image(f"{token_registry.host}/team/olden:v1")
    result = RegistryClient().lookup(reference, _login(token_registry.host), known=index)
    assert result == Resolved(index, OCI_INDEX, tuple(children))
    path = "/v2/team/olden/manifests/v1"
    assert token_registry.manifest_asks == [("HEAD", path), ("GET", path)]


def test_rate_limit_reserve_stops_further_lookups(
    open_registry: Registry, token_registry: TokenFront
) -> None:
    open_registry.push_image("team/limited", "v1", content="limited")
    open_registry.push_image("team/limited", "v2", content="limited2")
    token_registry.faults["/team/limited/"] = "low-remaining"
    client = RegistryClient(rate_limit_reserve=5)
    login = _login(token_registry.host)
    first = client.lookup(parse_image(f"{token_registry.host}/team/limited:v1"), login)
    assert isinstance(first, Resolved)
    second = client.lookup(parse_image(f"{token_registry.host}/team/limited:v2"), login)
    assert isinstance(second, LookupFailed)
    assert second.failure is LookupFailure.RATE_LIMITED
    assert "below the reserve of 5" in second.reason


def test_distinct_references_are_looked_up_once(
    open_registry: Registry, anonymous: RegistryClient
) -> None:
    open_registry.push_image("team/once", "v1", content="once")
    reference = parse_image(f"{open_registry.host}/team/once:v1")
    same = parse_image(f"{open_registry.host}/team/once:v1")
    results = anonymous.resolve_all([(reference, ()), (reference, ()), (same, ())])
    assert list(results) == [LookupKey(str(reference))]
    assert anonymous.requests_made == 1


def test_login_repr_hides_the_secret() -> None:
    login = RegistryLogin("r.example", "robot", REGISTRY_PASSWORD)
    assert REGISTRY_PASSWORD not in repr(login)
    assert "robot" not in repr(login)
