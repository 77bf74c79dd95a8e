"""The command line's own contract: help on every flag, usage errors in one line, exit 64."""

import argparse
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from truegreen import __version__
from truegreen.cli.parser import COMMANDS, PathArgument, _summary, command_parser

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "manifests" / "incident.yaml"
FIXED = ROOT / "examples" / "manifests" / "fixed.yaml"
NAMES = sorted(COMMANDS)


def _options(name: str) -> list[argparse.Action]:
    return [action for action in command_parser(name)._actions if action.option_strings]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_commands_are_the_five_of_the_design() -> None:
    assert NAMES == ["doctor", "lint", "monitor", "refresh", "snapshot"]


@pytest.mark.parametrize("name", NAMES)
def test_every_option_has_help(name: str) -> None:
    options = _options(name)
    assert len(options) > 3, "precondition: the command has options"
    bare = [action.option_strings[0] for action in options if not (action.help or "").strip()]
    assert bare == [], f"truegreen {name}: options without help: {bare}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_names_every_flag_with_its_sentence(name: str, flag: str) -> None:
    result = run_cli(name, flag)
    assert (result.exit_code, result.stderr) == (0, "")
    shown = _one_line(result.stdout)
    assert shown.startswith(f"usage: truegreen {name} [OPTIONS]")
    for action in _options(name):
        assert ", ".join(action.option_strings) in shown
        assert _one_line(action.help or "") in shown, action.option_strings


def test_help_shows_metavars_defaults_and_bounds_as_click_does() -> None:
    shown = _one_line(run_cli("refresh", "--help").stdout)
    assert "-o, --output [text|json] Text for people," in shown
    assert "--mode [restart|pin] restart: restart" in shown
    assert "set the image to tag@digest. [default: restart]" in shown
    assert "the latch). [default: 3; 1<=x<=1000]" in shown
    assert "--rollout-timeout SECONDS" in shown
    assert "--selector TEXT" in shown
    assert "opted-in workloads. [default: truegreen.io/refresh=enabled]" in shown
    assert "(loopback registries always may). -" in shown, "no default shown for a repeatable"
    assert "Show Kubernetes details. --no-color" in shown, "no default shown for a flag"
    lint = _one_line(run_cli("lint", "--help").stdout)
    assert "usage: truegreen lint [OPTIONS] [PATHS]..." in lint
    assert "--max-file-size MIB Refuse a larger file" in lint
    assert "in MiB. [default: 16; 1<=x<=1024]" in lint
    snapshot = _one_line(run_cli("snapshot", "--help").stdout)
    assert "--output-directory DIRECTORY Write a folder" in snapshot


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_the_group_help_lists_every_command_with_its_summary(flag: str) -> None:
    result = run_cli(flag)
    assert (result.exit_code, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == "usage: truegreen [OPTIONS] COMMAND [ARGS]..."
    assert "Tell the truth about a Kubernetes training environment." in lines
    listed = lines[lines.index("commands:") + 1 :]
    assert [line.split()[0] for line in listed] == NAMES
    assert [" ".join(line.split()[1:]) for line in listed] == [
        "Can this environment run training right now? One headline, a...",
        "Refuse health probes that lie or that kill long-running work.",
        "doctor kept current: watches the namespace, serves Prometheus...",
        "One image-refresh tick over the opted-in workloads.",
        "Save a support bundle: every read doctor makes (failed reads...",
    ]


@pytest.mark.parametrize(
    ("doc", "summary"),
    [
        ("aaaa bbbb ccc\n\n    More.", "aaaa bbbb ccc"),  # exactly 13 columns: whole
        ("aaaa bbbb cccc\n\n    More.", "aaaa bbbb..."),  # 14: cut, room left for `...`
        ("aaaa bbbbbbb c", "aaaa..."),
    ],
)
def test_a_summary_is_the_first_paragraph_or_what_fits_of_it(doc: str, summary: str) -> None:
    assert _summary(doc, 13) == summary


def test_no_command_prints_the_group_help_on_stderr_and_is_bad_usage() -> None:
    """Before argparse, click raised its no-arguments help as a usage error and truegreen then
    crashed on it (exit 1, a traceback); now: the help, on stderr, exit 64."""
    result = run_cli()
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == run_cli("--help").stdout


def test_version() -> None:
    result = run_cli("--version")
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        f"truegreen, version {__version__}\n",
        "",
    )


@pytest.mark.parametrize(
    ("args", "first", "command_path"),
    [
        (
            ["doctor", "--bogus"],
            "truegreen: no such option '--bogus'",
            "truegreen doctor",
        ),
        (
            ["doctor", "--out", "json"],
            "truegreen: no such option '--out' (did you mean '--output'?)",
            "truegreen doctor",
        ),
        (
            ["doctor", "--conte"],
            "truegreen: no such option '--conte' (did you mean '--context' or '--contexts'?)",
            "truegreen doctor",
        ),
        (["lint", "-x"], "truegreen: no such option '-x'", "truegreen lint"),
        (
            ["doctor", "-o", "yaml"],
            "truegreen: argument -o/--output: invalid choice: 'yaml' (choose from 'text', 'json')",
            "truegreen doctor",
        ),
        (
            ["doctor", "-o"],
            "truegreen: argument -o/--output: expected one argument",
            "truegreen doctor",
        ),
        (["frobnicate"], "truegreen: no such command 'frobnicate'", "truegreen"),
        (["lnt"], "truegreen: no such command 'lnt' (did you mean 'lint'?)", "truegreen"),
        (["--bogus"], "truegreen: no such option '--bogus'", "truegreen"),
        (
            ["--verison"],
            "truegreen: no such option '--verison' (did you mean '--version'?)",
            "truegreen",
        ),
        (
            ["refresh", "--max-attempts", "0"],
            "truegreen: argument --max-attempts: 0 is not in the range 1<=x<=1000",
            "truegreen refresh",
        ),
        (
            ["refresh", "--max-attempts", "x"],
            "truegreen: argument --max-attempts: 'x' is not a valid integer",
            "truegreen refresh",
        ),
        (
            ["doctor", "--request-timeout", "0.05"],
            "truegreen: argument --request-timeout: 0.05 is not in the range 0.1<=x<=3600.0",
            "truegreen doctor",
        ),
        (
            ["doctor", "--request-timeout", "nan"],
            "truegreen: argument --request-timeout: nan is not in the range 0.1<=x<=3600.0",
            "truegreen doctor",
        ),
        (
            ["doctor", "--request-timeout", "inf"],
            "truegreen: argument --request-timeout: inf is not in the range 0.1<=x<=3600.0",
            "truegreen doctor",
        ),
        (
            ["snapshot", "--request-timeout", "1e300"],
            "truegreen: argument --request-timeout: 1e+300 is not in the range 0.1<=x<=3600.0",
            "truegreen snapshot",
        ),
        (
            ["monitor", "--interval", "1e308"],
            "truegreen: argument --interval: 1e+308 is not in the range 1.0<=x<=86400.0",
            "truegreen monitor",
        ),
        (
            ["refresh", "--max-attempts", "99999999999999999999"],
            "truegreen: argument --max-attempts: 99999999999999999999 is not in the range "
            "1<=x<=1000",
            "truegreen refresh",
        ),
        (
            ["monitor", "--interval", "soon"],
            "truegreen: argument --interval: 'soon' is not a valid float",
            "truegreen monitor",
        ),
        (
            ["doctor", "extra", "more"],
            "truegreen: unexpected extra arguments (extra more)",
            "truegreen doctor",
        ),
        (
            ["doctor", "--", "-o"],
            "truegreen: unexpected extra argument (-o)",
            "truegreen doctor",
        ),
        (
            ["doctor", "--debug=yes"],
            "truegreen: argument --debug: ignored explicit argument 'yes'",
            "truegreen doctor",
        ),
    ],
)
def test_a_usage_error_is_one_line_and_where_to_look(
    args: list[str], first: str, command_path: str
) -> None:
    """One line in the house style of every other error (`what. remedy`, lower case), and
    no guess that is not close: `--bogus` is not offered `--verbose`."""
    result = run_cli(*args)
    assert result.exit_code == 64
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"{first}. see `{command_path} --help`"]


def test_a_path_option_refuses_a_folder_for_a_file_and_a_file_for_a_folder(
    tmp_path: Path,
) -> None:
    folder = run_cli("lint", str(FIXED), "--config", str(tmp_path))
    assert (folder.exit_code, folder.stderr.splitlines()[0]) == (
        64,
        f"truegreen: argument --config: '{tmp_path}' is a folder, not a file. "
        "see `truegreen lint --help`",
    )
    file = run_cli("snapshot", "--output-directory", str(FIXED))
    assert (file.exit_code, file.stderr.splitlines()[0]) == (
        64,
        f"truegreen: argument --output-directory: '{FIXED}' is a file, not a folder. "
        "see `truegreen snapshot --help`",
    )


def test_a_path_need_not_exist_and_keeps_what_was_typed(tmp_path: Path) -> None:
    missing = tmp_path / "not-yet"
    assert PathArgument(dir_okay=False)(str(missing)) == missing
    assert PathArgument(file_okay=False)(str(missing)) == missing
    assert PathArgument(dir_okay=False)(str(FIXED)) == FIXED
    assert PathArgument(file_okay=False)(str(tmp_path)) == tmp_path
    assert PathArgument()(str(tmp_path)) == tmp_path
    assert PathArgument()(str(FIXED)) == FIXED


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "json", str(INCIDENT)],
        ["-ojson", str(INCIDENT)],
        ["--output=json", str(INCIDENT)],
        [str(INCIDENT), "--output", "json"],
        ["--max-file-size=1", str(INCIDENT), "-o", "json", "--allow-empty"],
        ["-ojson", "--", str(INCIDENT)],
    ],
)
def test_options_come_in_any_order_and_any_spelling(args: list[str]) -> None:
    result = run_cli("lint", *args)
    assert result.exit_code == 2, result.stderr
    assert {finding["file"] for finding in result.json()["findings"]} == {str(INCIDENT)}


def test_paths_and_options_intermix_and_after_double_dash_every_word_is_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "-dashed.yaml").write_text(INCIDENT.read_text())
    monkeypatch.chdir(tmp_path)
    result = run_cli("lint", str(FIXED), "-o", "json", str(INCIDENT), "--", "-dashed.yaml")
    assert result.exit_code == 2, result.stderr
    document = result.json()
    assert document["files"] == 3
    assert {f["file"] for f in document["findings"]} == {str(INCIDENT), "-dashed.yaml"}


@pytest.mark.parametrize(
    "args", [["--explain", "-x"], ["--explain=-x"], ["--explain", "-x", "-o", "json"]]
)
def test_an_option_s_value_may_start_with_a_dash(args: list[str]) -> None:
    """As with click: the word after an option that takes a value is its value, whatever it
    looks like (argparse alone would call it a missing value)."""
    result = run_cli("lint", *args)
    assert result.exit_code == 64
    if "json" in args:  # the failure document, as for any failure with -o json
        assert result.json()["headline"]["text"] == "no rule '-x'"
    else:
        assert result.stdout == ""
    assert result.stderr.startswith("truegreen: no rule '-x'. known rules are readiness-missing,")
    choice = run_cli("lint", "-o", "-x")
    assert choice.stderr.splitlines()[0] == (
        "truegreen: argument -o/--output: invalid choice: '-x' "
        "(choose from 'text', 'json', 'sarif'). see `truegreen lint --help`"
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["lint", "-o", "json", "-o", "text", "--bogus"], "no such option '--bogus'"),
        (["doctor", "-ojson", "--output=text", "--bogus"], "no such option '--bogus'"),
        (["lint", "--bogus", "--", "-o", "json"], "no such option '--bogus'"),
        (["lint", "--config", "-o", "json", "--bogus"], "no such option '--bogus'"),
        (
            ["doctor", "--out", "json", "--bogus"],
            "no such option '--out' (did you mean '--output'?)",
        ),
    ],
)
def test_a_usage_error_is_json_only_where_the_parser_reads_json(args: list[str], text: str) -> None:
    """Text where the last -o is text, where `-o json` comes after `--` (paths), where `-o` is
    the value of the option before it (`--config -o`: an option's value may start with a
    dash), or where `--out` is no `--output` (no abbreviations): one line, nothing on stdout."""
    result = run_cli(*args)
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr.splitlines() == [f"truegreen: {text}. see `truegreen {args[0]} --help`"]


def test_the_lowest_value_in_range_is_taken() -> None:
    result = run_cli("lint", str(FIXED), "--max-file-size", "1", "-o", "json")
    assert (result.exit_code, result.stderr) == (0, "")


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["doctor", "-o", "json", "--frobnicate"], "no such option '--frobnicate'"),
        (["doctor", "--frobnicate", "--output=json"], "no such option '--frobnicate'"),
        (
            ["doctor", "--output", "json", "--out"],
            "no such option '--out' (did you mean '--output'?)",
        ),
        (["lint", "-o", "json", "--bogus"], "no such option '--bogus'"),
        (["snapshot", "-o", "json", "--bogus"], "no such option '--bogus'"),
        (["monitor", "-o", "json", "--bogus"], "no such option '--bogus'"),
        (
            ["refresh", "-ojson", "--mode", "bogus"],
            "argument --mode: invalid choice: 'bogus' (choose from 'restart', 'pin')",
        ),
        (["lint", "-o=json", "--bogus"], "no such option '--bogus'"),
        (["refresh", "-o=json", "--bogus"], "no such option '--bogus'"),
        (["snapshot", "-o=json", "--bogus"], "no such option '--bogus'"),
        (["monitor", "-o=json", "--bogus"], "no such option '--bogus'"),
        (["doctor", "-vojson", "--bogus"], "no such option '--bogus'"),
        (["doctor", "-vo", "json", "--bogus"], "no such option '--bogus'"),
        (["lint", "-o", "text", "--bogus", "--output=json"], "no such option '--bogus'"),
        (["lint", "--explain", "-x", "-o", "json", "--bogus"], "no such option '--bogus'"),
        (
            ["refresh", "--mode", "bogus", "-o", "json"],
            "argument --mode: invalid choice: 'bogus' (choose from 'restart', 'pin')",
        ),
    ],
)
def test_a_usage_error_with_json_is_still_one_json_document(args: list[str], text: str) -> None:
    """JSON is asked for as the parser reads -o: `-o=json` is `-o json` (argparse's
    _parse_optional splits at `=`, as spf13/pflag's parseSingleShortArg does), short flags
    combine (`-vojson`), the last -o wins, and an option's value may start with a dash
    (`--explain -x`, as click reads it)."""
    result = run_cli(*args)
    assert result.exit_code == 64
    document = result.json()
    assert document["exit_code"] == 64
    said = document["headline"]
    assert (said["code"], said["text"]) == ("bad-usage", text)
    assert said["remedy"] == f"see `truegreen {args[0]} --help`"
    assert result.stderr.splitlines() == [f"truegreen: {text}. see `truegreen {args[0]} --help`"]
