"""Helm findings placed on their template's line, where that can be done exactly.

`helm template` writes each document under a `# Source: CHART/templates/FILE` comment; a finding
counts its line inside that rendered document. When the template file is on disk (the chart's
folder given by `--chart-root`, or the path as written) and the rendered line appears in it
exactly once, character for character, that is the template's line; anything templating
changed stays a line of the rendered document, and says so.
"""

from pathlib import Path

from truegreen.errors import UsageError
from truegreen.lint.loader import Loaded, Manifest
from truegreen.yamlsafe import MANIFEST_LIMITS, Limits, Refusal, load_single, read_file


class TemplateLines:
    """Rendered lines of stdin looked up in the template files they came from."""

    def __init__(self, stream: Loaded | None, limits: Limits = MANIFEST_LIMITS) -> None:
        self._rendered = stream.text.splitlines() if stream is not None else []
        self._limits = limits
        self._templates: dict[str, dict[str, int | None]] = {}

    def line_in_template(self, manifest: Manifest, line: int | None) -> int | None:
        """The template's line for a rendered document's line; None when not exactly known."""
        if not manifest.rendered or line is None:
            return None
        absolute = line + manifest.offset
        if not 0 < absolute <= len(self._rendered):
            return None
        text = self._rendered[absolute - 1].rstrip()
        return self._lines(manifest.file).get(text) if text.strip() else None

    def _lines(self, file: str) -> dict[str, int | None]:
        """Each line's text -> its line number, None for a text found more than once."""
        known = self._templates.get(file)
        if known is None:
            read = read_file(Path(file), self._limits)
            known = {}
            if not isinstance(read, Refusal):
                for number, line in enumerate(read.splitlines(), 1):
                    text = line.rstrip()
                    known[text] = None if text in known else number
            self._templates[file] = known
        return known


def chart_folders(folders: list[str]) -> dict[str, str]:
    """`--chart-root DIR`: each chart's name (its Chart.yaml's `name`) -> its folder; bad usage
    for a folder that holds no readable Chart.yaml with a name."""
    found: dict[str, str] = {}
    for folder in folders:
        chart = Path(folder, "Chart.yaml")
        document = load_single(chart)
        data = None if isinstance(document, Refusal) else document.data
        name = data.get("name") if isinstance(data, dict) else None
        if not isinstance(name, str) or not name:
            why = document.detail if isinstance(document, Refusal) else "it names no chart"
            raise UsageError(f"--chart-root {folder}: cannot read {chart}", why)
        found[name] = folder
    return found
