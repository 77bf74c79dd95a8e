"""Passwords given to redis-cli (and its forks valkey-cli and keydb-cli), MongoDB's clients and
registry logins (`docker login`) by their own short options, and curl's cookie data
(redaction/command_logins.py), after the client stands in the same string or argument list, and
the database logins that other rules already take (by a secret word in the name, by a URI's
userinfo), pinned here so that no change to the client rules loses them."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truegreen.cluster.redact import redact_arguments, redact_object
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
        # redis-cli's forks: valkey src/valkey-cli.c and KeyDB src/redis-cli.c parseOptions.
        ("valkey-cli -a hunter2 ping", f"valkey-cli -a {REDACTED} ping"),
        ("/usr/bin/keydb-cli -h k -a 'x y' ping", f"/usr/bin/keydb-cli -h k -a '{REDACTED}' ping"),
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
        # mongo-tools common/options/options.go `Password`, short `p`, read by go-flags: the
        # next argument, one attached, or after `=`.
        (
            "mongodump -u admin -p hunter2 --out /backup",
            f"mongodump -u admin -p {REDACTED} --out /backup",
        ),
        ("mongorestore -phunter2 /backup", f"mongorestore -p{REDACTED} /backup"),
        ('mongoexport -p"two words" -c x', f'mongoexport -p"{REDACTED}" -c x'),
        ("mongostat -p=hunter2 --host db", f"mongostat -p={REDACTED} --host db"),
        ("/opt/bin/mongotop -u a -p hunter2 5", f"/opt/bin/mongotop -u a -p {REDACTED} 5"),
        ("mongoimport --password=hunter2", f"mongoimport --password={REDACTED}"),  # by its name
        # The legacy shell: mongodb/mongo shell_options.idl `password`, single name `p`.
        ("mongo -u admin -p hunter2 admin", f"mongo -u admin -p {REDACTED} admin"),
        # curl src/tool_getparam.c C_COOKIE: a value holding a `=` is cookie data.
        (
            "curl -sf -b session=abc123 http://app:8080/healthz",
            f"curl -sf -b {REDACTED} http://app:8080/healthz",
        ),
        (
            'curl --cookie "sid=abc; theme=dark" http://app',
            f'curl --cookie "{REDACTED}" http://app',
        ),
        ("curl -bsid=abc --cookie=sid=abc u", f"curl -b{REDACTED} --cookie={REDACTED} u"),
        # `-b` at the end of a group of short options (curl getparameter: each character an
        # option of its own, the one taking an argument given the rest or the next word).
        ("curl -sSLb sid=abc http://a", f"curl -sSLb {REDACTED} http://a"),
        ("curl -fsSb session=abc http://a", f"curl -fsSb {REDACTED} http://a"),
        (
            "sh -c 'curl -b sid=abc http://a | grep ok'",
            f"sh -c 'curl -b {REDACTED} http://a | grep ok'",
        ),
        # A cookie header goes by its name (text.py): curl's `-H` needs no rule of its own.
        ('curl -H "Cookie: sid=abc123" http://app', f'curl -H "Cookie: {REDACTED}" http://app'),
        # docker/cli cli/command/registry/login.go: `-p` is `--password`, read by pflag (the
        # next argument whatever it is, one attached, or after `=`); the other registry tools'
        # logins the same.
        (
            "docker login -u robot -p hunter2 registry.example.com",
            f"docker login -u robot -p {REDACTED} registry.example.com",
        ),
        ("podman login -p=hunter2 r", f"podman login -p={REDACTED} r"),
        ("buildah login -phunter2 r", f"buildah login -p{REDACTED} r"),
        ("skopeo login -u a -p -dash r", f"skopeo login -u a -p {REDACTED} r"),
        ("nerdctl login -p 'two words' r", f"nerdctl login -p '{REDACTED}' r"),
        ("helm registry login r -u a -p hunter2", f"helm registry login r -u a -p {REDACTED}"),
        ("oras login -p hunter2 r", f"oras login -p {REDACTED} r"),
        ("crane auth login r -u a -p hunter2", f"crane auth login r -u a -p {REDACTED}"),
        (
            "/usr/bin/docker --config /c login -p x r",
            f"/usr/bin/docker --config /c login -p {REDACTED} r",
        ),
        # Another program's `-p` after the login, in the same line, pays for it (docs).
        (
            "docker login -p x r && docker run -p 8080:80 web",
            f"docker login -p {REDACTED} r && docker run -p {REDACTED} web",
        ),
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
        "valkey-cli -h valkey -p 6379 ping",  # valkey-cli's `-p` is the port
        "mongodump -u admin -p --out /backup",  # a next word starting with `-` is no value
        "mongoexport -p= -c x",  # an empty value stays empty
        "valkey-cli ping && ls -b /data",  # no curl: `-b` is another option
        "curl -b cookies.txt -c cookies.txt http://app",  # no `=`: a file's name
        'curl -b "" http://app',  # the cookie engine, no cookie
        "wget --load-cookies=jar http://app",
        "docker run -p 8080:80 web",  # no login: docker run's `-p` publishes a port
        "docker login -p= r",  # an empty value stays empty
        "helm install x -p 5 && echo login",  # `-p` before the login is no login's
        "ssh login@host -p 2222",  # no registry tool before the login
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


def test_argument_lists_redact_redis_cli_s_forks_passwords() -> None:
    assert redact_arguments(["valkey-cli", "-a", "x"]) == ["valkey-cli", "-a", REDACTED]
    assert redact_arguments(["keydb-cli", "-a", "x"]) == ["keydb-cli", "-a", REDACTED]


def test_argument_lists_redact_a_mongodb_client_s_password() -> None:
    assert redact_arguments(["mongodump", "-p", "x", "-py", "-p=z", "-p=", "-p", "--gzip"]) == [
        *("mongodump", "-p", REDACTED, f"-p{REDACTED}", f"-p={REDACTED}", "-p=", "-p", "--gzip")
    ]
    assert redact_arguments(["mongo", "-u", "admin", "-p", "x"]) == [
        *("mongo", "-u", "admin", "-p", REDACTED)
    ]


def test_argument_lists_redact_a_registry_login_s_password() -> None:
    login = ["/usr/bin/podman", "login", "-u", "robot", "-p", "x", "-py", "-p=z", "-p=", "r"]
    assert redact_arguments(login) == [
        *("/usr/bin/podman", "login", "-u", "robot", "-p", REDACTED, f"-p{REDACTED}"),
        *(f"-p={REDACTED}", "-p=", "r"),
    ]
    assert redact_arguments(["helm", "registry", "login", "-p", "-x"]) == [
        *("helm", "registry", "login", "-p", REDACTED)
    ]
    assert redact_arguments(["docker", "login", "-p", ""]) == ["docker", "login", "-p", ""]
    # No login after the tool, or a login after no tool: another option's `-p`, kept.
    assert redact_arguments(["docker", "run", "-p", "80:80"]) == ["docker", "run", "-p", "80:80"]
    assert redact_arguments(["login", "-p", "8", "docker"]) == ["login", "-p", "8", "docker"]


def test_argument_lists_redact_curl_s_cookie_data_and_keep_its_cookie_files() -> None:
    cookies = ["curl", "-b", "sid=x", "--cookie", "a=b; c=d", "--cookie=e=f", "-bg=h"]
    assert redact_arguments(cookies) == [
        *("curl", "-b", REDACTED, "--cookie", REDACTED, f"--cookie={REDACTED}", f"-b{REDACTED}")
    ]
    grouped = ["curl", "-sb", "sid=x", "-4sSbg=h", "-sb", "jar.txt"]
    assert redact_arguments(grouped) == [
        *("curl", "-sb", REDACTED, f"-4sSb{REDACTED}", "-sb", "jar.txt")
    ]
    files = ["curl", "-b", "jar.txt", "--cookie", "", "--cookie=jar", "-bjar", "-b"]
    assert redact_arguments(files) == files
    assert redact_arguments(["curl", "-H", "Cookie: sid=x"]) == [
        "curl",
        "-H",
        f"Cookie: {REDACTED}",
    ]
    # Without curl, another program's `-b` is kept.
    assert redact_arguments(["git", "checkout", "-b", "a=b"]) == ["git", "checkout", "-b", "a=b"]


def test_a_client_s_name_inside_a_secret_or_a_word_names_no_client() -> None:
    # The first `mongosh` is a password's, which the assignment rule takes; the second is
    # glued to `-p`, no option of its own: a second pass finds nothing more to redact.
    once = redact_text("echo password=mongosh; mongosh-p y")
    assert once == f"echo password={REDACTED}; mongosh-p y"
    assert redact_text(once) == once
    listed = redact_arguments(["mysql", "password=mongosh", "-p=x"])
    assert listed == ["mysql", f"password={REDACTED}", f"-p{REDACTED}"]
    assert redact_arguments(listed) == listed


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                *("redis-cli", "mongosh", "mysql", " -a ", " -p ", "-p=", "-a", "-p", " ", "\t"),
                *("valkey-cli", "mongo", "mongodump", "curl", " -b ", "-b", "--cookie", "=", "-p"),
                *("\n", '"', "'", ";", "|", "x", "-x", "password=", "--pass ", "Cookie: "),
                *("AKIAIOSFODNN7EXAMPLE", "u:p@", "https://", "docker", "helm", "login"),
            ]
        ),
        max_size=10,
    ).map("".join)
)
def test_client_password_redaction_is_idempotent(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once
    assert redact_arguments(redact_arguments(text.split(" "))) == redact_arguments(text.split(" "))


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        (["mysql"], ["-h", "db", "-pS1"], ["-h", "db", f"-p{REDACTED}"]),
        (["redis-cli"], ["-a", "S2", "ping"], ["-a", REDACTED, "ping"]),
        (["mysql", "--password"], ["S3"], [REDACTED]),
        (["curl", "-u"], ["me:S4"], [f"me:{REDACTED}"]),
        (["docker"], ["login", "-p", "S5", "r"], ["login", "-p", REDACTED, "r"]),
        (["python"], ["-pX", "-a", "y"], ["-pX", "-a", "y"]),  # no client: kept
    ],
)
def test_a_container_s_command_and_args_are_one_argument_list(
    command: list[str], args: list[str], expected: list[str]
) -> None:
    """The runtime runs `args` after `command` (k8s.io/api core/v1 Container): a client named
    in one and its password in the other are one command line."""
    pod = {"kind": "Pod", "spec": {"containers": [{"name": "c", "command": command, "args": args}]}}
    [container] = redact_object(pod)["spec"]["containers"]
    assert (container["command"], container["args"]) == (command, expected)
    assert redact_object(redact_object(pod)) == redact_object(pod)
