"""Shell completion answered from the command line's own parsers, through the real `main` with
`_TRUEGREEN_COMPLETE` set, in click's protocol (the scripts saved from click versions call it)."""

import pytest

from tests.support.cli import run_cli

LINT_OPTIONS = [
    "--config",
    "-o",
    "--output",
    "--allow-empty",
    "--max-file-size",
    "--no-ignores",
    "--chart-root",
    "--list-rules",
    "--explain",
    "--no-color",
    "--debug",
    "-h",
    "--help",
]


def _complete(
    monkeypatch: pytest.MonkeyPatch, words: str, current: str, shell: str = "bash"
) -> list[str]:
    monkeypatch.setenv("_TRUEGREEN_COMPLETE", f"{shell}_complete")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", current)
    result = run_cli()
    assert (result.exit_code, result.stderr) == (0, "")
    return result.stdout.splitlines()


@pytest.mark.parametrize(
    ("words", "index", "expected"),
    [
        (
            "truegreen ",
            1,
            [f"plain,{c}" for c in ("doctor", "lint", "monitor", "refresh", "snapshot")],
        ),
        ("truegreen li", 1, ["plain,lint"]),
        ("truegreen -", 1, ["plain,--version", "plain,-h", "plain,--help"]),
        ("truegreen doctor --out", 2, ["plain,--output"]),
        ("truegreen refresh --max", 2, ["plain,--max-attempts"]),
        ("truegreen lint -", 2, [f"plain,{o}" for o in LINT_OPTIONS]),
        ("truegreen doctor -o ", 3, ["plain,text", "plain,json"]),
        # bash splits `--output=j` at the `=` (COMP_WORDBREAKS) and replaces what follows it
        ("truegreen doctor --output =", 3, ["plain,text", "plain,json"]),
        ("truegreen doctor --output = j", 4, ["plain,json"]),
        ("truegreen doctor --kubeconfig = ", 4, ["file,"]),
        # a bash without `=` among its word breaks passes the word whole, and replaces it all
        ("truegreen doctor --output=j", 2, ["plain,--output=json"]),
        ("truegreen lint -o ", 3, ["plain,text", "plain,json", "plain,sarif"]),
        ("truegreen refresh --mode p", 3, ["plain,pin"]),
        ("truegreen doctor --kubeconfig ", 3, ["file,"]),
        ("truegreen doctor --snapshot ex", 3, ["file,ex"]),
        ("truegreen snapshot --output-directory out", 3, ["dir,out"]),
        ("truegreen lint ", 2, ["file,"]),
        ("truegreen lint -- -", 3, ["file,-"]),
        ("truegreen doctor --context ", 3, []),
        # the ways of naming many namespaces and many clusters
        (
            "truegreen doctor --namespace",
            2,
            ["plain,--namespace", "plain,--namespaces", "plain,--namespace-selector"],
        ),
        ("truegreen doctor --all", 2, ["plain,--all-namespaces", "plain,--all-contexts"]),
        ("truegreen doctor --contexts ", 3, []),
        ("truegreen doctor --output json --o", 4, []),
        ("truegreen refresh --insecure-registry a --insecure-r", 4, ["plain,--insecure-registry"]),
        ("truegreen frobnicate -", 2, []),
    ],
)
def test_bash_candidates(
    monkeypatch: pytest.MonkeyPatch, words: str, index: int, expected: list[str]
) -> None:
    assert _complete(monkeypatch, words, str(index)) == expected


def test_zsh_candidates_carry_their_help(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _complete(monkeypatch, "truegreen d", "1", "zsh") == [
        "plain",
        "doctor",
        "Can this environment run training right now? One headline, a...",
    ]
    assert _complete(monkeypatch, "truegreen doctor -o ", "3", "zsh") == [
        "plain",
        "text",
        "_",
        "plain",
        "json",
        "_",
    ]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_get_an_option_s_value_with_the_option_they_replace(
    monkeypatch: pytest.MonkeyPatch, shell: str
) -> None:
    """Both pass `--output=` as the word being completed and replace that whole word."""
    current = "2" if shell == "zsh" else "--output="
    expected = {
        "zsh": ["plain", "--output=text", "_", "plain", "--output=json", "_"],
        "fish": ["plain,--output=text", "plain,--output=json"],
    }
    assert _complete(monkeypatch, "truegreen doctor --output=", current, shell) == expected[shell]


def test_fish_passes_the_word_itself_and_gets_help_after_a_tab(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _complete(monkeypatch, "truegreen lint --all", "--all", "fish") == [
        "plain,--allow-empty\tExit 0, not 3, when the paths hold no Kubernetes object (for "
        "hooks on any YAML)."
    ]
    assert _complete(monkeypatch, "truegreen li", "li", "fish") == [
        "plain,lint\tRefuse health probes that lie or that kill long-running work."
    ]
    assert _complete(monkeypatch, "truegreen refresh --mode ", "", "fish") == [
        "plain,restart",
        "plain,pin",
    ]


def test_an_open_quote_completes_what_was_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _complete(monkeypatch, "truegreen doctor --snapshot 'my sn", "3") == ["file,my sn"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_s_script_calls_truegreen_back_in_its_own_mode(
    monkeypatch: pytest.MonkeyPatch, shell: str
) -> None:
    monkeypatch.setenv("_TRUEGREEN_COMPLETE", f"{shell}_source")
    result = run_cli()
    assert (result.exit_code, result.stderr) == (0, "")
    assert "_truegreen_completion" in result.stdout
    assert f"_TRUEGREEN_COMPLETE={shell}_complete" in result.stdout
    registered = {
        "bash": "complete -o nosort -F _truegreen_completion truegreen kubectl-truegreen\n",
        "zsh": "compdef _truegreen_completion truegreen kubectl-truegreen\n",
        "fish": "complete --no-files --command kubectl-truegreen --arguments",
    }
    assert registered[shell] in result.stdout  # the kubectl plugin's name completes too


def test_an_unknown_instruction_is_bad_usage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_TRUEGREEN_COMPLETE", "tcsh_source")
    result = run_cli("doctor")
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == (
        "truegreen: _TRUEGREEN_COMPLETE=tcsh_source is not one of "
        "bash_source, zsh_source, fish_source\n"
    )


@pytest.mark.parametrize("index", ["x", "-1", "1.5", "\u0661"])
def test_a_word_index_that_is_no_number_is_bad_usage(
    monkeypatch: pytest.MonkeyPatch, index: str
) -> None:
    """bash and zsh pass the word's index; anything else is one line and exit 64, not a
    traceback (`int()` would take the Arabic-Indic one, and a negative index)."""
    monkeypatch.setenv("_TRUEGREEN_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "truegreen doctor")
    monkeypatch.setenv("COMP_CWORD", index)
    result = run_cli()
    assert (result.exit_code, result.stdout) == (64, "")
    assert result.stderr == "truegreen: COMP_CWORD is not the index of a word\n"
