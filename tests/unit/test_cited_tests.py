"""Every test the documentation cites exists: a reader following "the test that pins it" finds
it. A cited name is `test_…` alone (any test function in tests/); `FILE::test_…`, that function
in that file, where FILE is a path from the repository root, a file or module name found once
under tests/ (`test_yamlsafe.py`, `test_yamlsafe`), `kubectl` (docs/reliability.md's
abbreviation of tests/e2e/test_kubectl_against_fake.py), `…` (any file) or nothing
(`::test_…`: the file cited just before); a name ending `…` or `*` is a prefix some test there
has, and `FILE::*` the whole file. A module named as `test_….py` must exist too."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")])
KUBECTL_ORACLE = TESTS / "e2e" / "test_kubectl_against_fake.py"

_CITED = re.compile(
    r"(?<![A-Za-z0-9_])"
    r"(?:(?P<file>[A-Za-z0-9_./-]*test_[A-Za-z0-9_]+(?:\.py)?|kubectl|…)?(?P<sep>::))?"
    r"(?P<name>test_[A-Za-z0-9_]*|\*)(?P<prefix>…|\*)?(?P<module>\.py)?"
)
_DEFINED = re.compile(r"^\s*def (test_[A-Za-z0-9_]+)\(", re.MULTILINE)


def _sources() -> dict[Path, str]:
    return {path: path.read_text() for path in TESTS.rglob("*.py")}


def _defined(source: str) -> set[str]:
    return set(_DEFINED.findall(source))


def _file(cited: str, sources: dict[Path, str]) -> Path | None:
    """The test file a citation names: `kubectl`, a path from the root, or a name found once."""
    if cited == "kubectl":
        return KUBECTL_ORACLE
    path = ROOT / cited
    if path in sources:
        return path
    name = cited if cited.endswith(".py") else f"{cited}.py"
    found = [p for p in sources if p.name == Path(name).name]
    return found[0] if len(found) == 1 else None


def _names(name: str, prefix: bool, defined: set[str]) -> bool:
    """Whether `defined` holds the test `name` (with `prefix`: one that starts so)."""
    return any(d.startswith(name) for d in defined) if prefix else name in defined


def missing(text: str, sources: dict[Path, str]) -> list[str]:
    """The citations in `text` that name no test: each as written, with its line number."""
    everywhere = set().union(*(_defined(s) for s in sources.values()))
    modules = {p.stem for p in sources}
    wrong = []
    last: Path | None = None
    for cited in _CITED.finditer(text):
        name, prefix = cited["name"], cited["prefix"] is not None
        line = text.count("\n", 0, cited.start()) + 1
        if cited["sep"] is None:
            if name == "*":
                continue  # a star of the text, no citation
            known = name in modules if cited["module"] else _names(name, prefix, everywhere)
            if not known:
                wrong.append(f"line {line}: {cited[0]}")
            continue
        if cited["file"] == "…":  # a file left out: the test may be in any
            if not _names(name, prefix, everywhere):
                wrong.append(f"line {line}: {cited[0]}")
            continue
        path = last if cited["file"] is None else _file(cited["file"], sources)
        last = path
        if (
            path is None
            or path not in sources
            or (name != "*" and not _names(name, prefix, _defined(sources[path])))
        ):
            wrong.append(f"line {line}: {cited[0]}")
    return wrong


def test_the_checker_finds_a_renamed_test() -> None:
    """A precondition of the test below: each form of citation is checked, and a name that is
    not there is reported."""
    sources = {
        TESTS / "unit" / "test_a.py": "def test_kept():\n    pass\n",
        KUBECTL_ORACLE: "def test_oracle():\n    pass\n",
    }
    text = (
        "`test_kept`, `tests/unit/test_a.py::test_kept`, `test_a.py::test_kept[id]`, "
        "`kubectl::test_oracle`, `tests/unit/test_a.py`, `test_a::test_ke…`, `::test_kept`, "
        "`test_a::*[id]`, `test_k*`, `…::test_oracle`, **bold**\n"
        "`test_gone`, `test_a.py::test_oracle`, `kubectl::test_kept`, `tests/unit/test_b.py`, "
        "`test_a::test_go…`, `::test_gone`, `test_b::*`, `…::test_gone`\n"
    )
    assert missing(text, sources) == [
        "line 2: test_gone",
        "line 2: test_a.py::test_oracle",
        "line 2: kubectl::test_kept",
        "line 2: test_b.py",
        "line 2: test_a::test_go…",
        "line 2: ::test_gone",
        "line 2: test_b::*",
        "line 2: …::test_gone",
    ]


def test_every_test_the_docs_cite_exists() -> None:
    sources = _sources()
    wrong = {
        str(page.relative_to(ROOT)): found
        for page in PAGES
        if (found := missing(page.read_text(), sources))
    }
    assert wrong == {}
