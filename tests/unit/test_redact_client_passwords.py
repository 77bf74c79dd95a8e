"""Passwords given to redis-cli and mongosh by their own short options
(redaction/command_logins.py), after the client stands in the same string or argument list, and
the database logins that other rules already take (by a secret word in the name, by a URI's
userinfo), pinned here so that no change to the client rules loses them."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.cluster.redact import redact_arguments
from truegreen.redacted import REDACTED
from truegreen.redaction.text import redact_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # redis src/redis-cli.c parseOptions: `-a` takes the next argument, whatever it is.
        ("redis-cli -a hunter2 ping", f"redis-cli -a {REDACTED} ping"),
        (
            "sh -c 'redis-cli -h 127.0.0.1 -a \"$(cat /p)x\" ping | grep PONG'",
            f"sh -c 'redis-cli -h 127.0.0.1 -a \"{REDACTED}\" ping | grep PONG'",
        ),
        (
            "/usr/local/bin/redis-cli -a 'two words' ping",
            f"/usr/local/bin/redis-cli -a '{REDACTED}' ping",
        ),
        (
            "redis-cli --no-auth-warning -a -dash ping",
            f"redis-cli --no-auth-warning -a {REDACTED} ping",
        ),
        ("redis-cli -a hunter2;echo ok", f"redis-cli -a {REDACTED};echo ok"),
        ("redis-cli --pass hunter2 ping", f"redis-cli --pass {REDACTED} ping"),  # by its name
        # Another program's `-a` after the client, in the same line, pays for it (docs).
        ("redis-cli ping; ls -a /data", f"redis-cli ping; ls -a {REDACTED}"),
        # mongosh packages/arg-parser: `-p` is `--password`, read by yargs-parser.
        (
            "mongosh -u admin -p hunter2 --eval 'db.ping()'",
            f"mongosh -u admin -p {REDACTED} --eval 'db.ping()'",
        ),
        ("mongosh -p=hunter2 mongodb://db:27017", f"mongosh -p={REDACTED} mongodb://db:27017"),
        ('mongosh -p "two words"', f'mongosh -p "{REDACTED}"'),
        ("mongosh --password hunter2", f"mongosh --password {REDACTED}"),  # by its name
        # What other rules already take, in the same lines.
        (
            "psql postgres://app:hunter2@db:5432/x -c 'select 1'",
            f"psql postgres://{REDACTED}@db:5432/x -c 'select 1'",
        ),
        ("PGPASSWORD=hunter2 psql -h db -U app", f"PGPASSWORD={REDACTED} psql -h db -U app"),
        ("REDISCLI_AUTH=hunter2 redis-cli ping", f"REDISCLI_AUTH={REDACTED} redis-cli ping"),
        ("mysqladmin ping -phunter2", f"mysqladmin ping -p{REDACTED}"),
        (
            "tool --password=hunter2 --db-password hunter3",
            f"tool --password={REDACTED} --db-password {REDACTED}",
        ),
        ("mongosh mongodb://app:hunter2@db/admin", f"mongosh mongodb://{REDACTED}@db/admin"),
    ],
)
def test_a_client_s_password_option_is_redacted(text: str, expected: str) -> None:
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "redis-cli ping",
        "redis-cli -h redis -p 6379 ping",  # redis-cli's `-p` is the port
        "redis-cli -a",  # nothing after it: redis-cli asks no password, it refuses the line
        "ls -a /data && tar -a -cf x.tgz /data",  # no redis-cli: `-a` is another option
        "mongosh -u admin -p --host db",  # a lone -p asks for the password
        "mongosh --quiet --eval 'db.runCommand({ping: 1})'",
        "psql -h db -p 5432 -U app",  # no mongosh: psql's `-p` is the port
        "mongod --port 27017 --bind_ip_all",
        "docker run -p 27017:27017 mongo:7",
    ],
)
def test_what_is_no_client_password_is_kept(text: str) -> None:
    assert redact_text(text) == text


def test_argument_lists_redact_the_client_s_password_item_by_item() -> None:
    assert redact_arguments(["redis-cli", "-h", "r", "-p", "6379", "-a", "hunter2", "ping"]) == [
        *("redis-cli", "-h", "r", "-p", "6379", "-a", REDACTED, "ping")
    ]
    assert redact_arguments(["redis-cli", "-a", "-x", "ping"]) == [
        "redis-cli",
        "-a",
        REDACTED,
        "ping",
    ]
    assert redact_arguments(["redis-cli", "-a", "", "ping"]) == ["redis-cli", "-a", "", "ping"]
    assert redact_arguments(["mongosh", "-p", "hunter2", "-p=hunter3", "-p", "--quiet"]) == [
        *("mongosh", "-p", REDACTED, f"-p={REDACTED}", "-p", "--quiet")
    ]
    # Without its client, another program's `-a` and `-p` are kept.
    assert redact_arguments(["ls", "-a", "/data"]) == ["ls", "-a", "/data"]
    assert redact_arguments(["psql", "-p", "5432"]) == ["psql", "-p", "5432"]
    once = redact_arguments(["/usr/bin/redis-cli", "-a", "x", "mongosh", "-p", "y"])
    assert once == ["/usr/bin/redis-cli", "-a", REDACTED, "mongosh", "-p", REDACTED]
    assert redact_arguments(once) == once


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *("redis-cli", "mongosh", "mysql", " -a ", " -p ", "-p=", "-a", "-p", " ", "\t"),
                *("\n", '"', "'", ";", "|", "x", "-x", "password=", "--pass ", "Cookie: "),
                *("AKIAIOSFODNN7EXAMPLE", "u:p@", "https://"),
            ]
        ),
        max_size=10,
    ).map("".join)
)
def test_client_password_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once
    assert redact_arguments(redact_arguments(text.split(" "))) == redact_arguments(text.split(" "))
