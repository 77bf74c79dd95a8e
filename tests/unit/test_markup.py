"""truegreen's own markup: rich's tags, so rich (still installed for `doctor --watch`) is the
oracle for how the markup truegreen writes reads; the styles are the eight basic SGR colours."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.markup import render as rich_render

from truegreen.markup import ansi, escape, plain, spans

# Text shaped like what clusters say, rich in the characters the grammar cares about.
cluster_text = st.text(alphabet=st.sampled_from(list("[]\\/a:#@ xr=d")), max_size=30) | st.text(
    max_size=30
)


@given(cluster_text)
def test_escaped_text_prints_exactly_as_written(text: str) -> None:
    assert plain(escape(text)) == text
    assert ansi(escape(text)) == text, "escaped text must carry no style"


@given(cluster_text, cluster_text)
def test_escaped_text_keeps_the_tags_around_it(first: str, second: str) -> None:
    """Wherever escaped text sits, the tags beside it stay tags: a trailing backslash or `[`
    must not swallow the `[/]` after it, nor print doubled where nothing follows (rich's
    escape of text ending in one backslash prints two when no tag follows)."""
    markup = f"[bold]{escape(first)}[/]{escape(second)}[red]x[/]"
    assert list(spans(markup)) == [
        (words, text) for words, text in ((("bold",), first), ((), second), (("red",), "x")) if text
    ]


@pytest.mark.parametrize(
    "markup",
    [
        "[bold red]CANNOT RUN[/] the job",
        "a [dim]b [green]c[/green] d[/dim] e",
        "\\[red] is text, \\\\[bold]this is bold[/]",
        "[yellow]open to the end",
        "[magenta]x[/magenta][red]y[/]",
    ],
)
def test_tags_read_as_rich_reads_them(markup: str) -> None:
    rendered = rich_render(markup)
    assert plain(markup) == rendered.plain
    for words, text in spans(markup):
        start = rendered.plain.index(text)
        styles = {str(span.style) for span in rendered.spans if span.start <= start < span.end}
        assert set(words) == {word for style in styles for word in style.split()}, (markup, text)


def test_styles_are_the_basic_sgr_codes() -> None:
    assert ansi("[bold red]x[/] y [dim]z[/]") == "\x1b[1;31mx\x1b[0m y \x1b[2mz\x1b[0m"
    assert ansi("[green]a[yellow]b[/][/]") == "\x1b[32ma\x1b[0m\x1b[32;33mb\x1b[0m"


@pytest.mark.parametrize(
    ("markup", "complaint"),
    [
        ("[blink]x[/]", "markup style 'blink' is not one truegreen draws"),
        ("x[/bold]", "markup closes a tag it never opened"),
    ],
)
def test_a_tag_truegreen_cannot_draw_is_a_bug_not_silence(markup: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        plain(markup)


def _renderer_styles() -> list[str]:
    from truegreen.lint import reports
    from truegreen.refresh import render

    return sorted({*reports._STYLES.values(), *render._STYLES.values()})


@pytest.mark.parametrize("style", _renderer_styles())
def test_every_style_a_renderer_gives_an_outcome_is_drawn(style: str) -> None:
    """lint's info severity is blue and refresh's planned outcome cyan: a style missing here
    turns the whole report into an internal error."""
    assert plain(f"[{style}]x[/]") == "x"
    assert ansi(f"[{style}]x[/]").startswith("\x1b["), style
