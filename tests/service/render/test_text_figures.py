"""The direct layout of a finding's figures prints exactly what the rich grid prints."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from service.render.text_figures import FigureRows

ROWS = {
    "short": [("time", "657 ns"), ("roof time (speed of light)", "404 ns"), ("z", "4.5")],
    "markup in a value": [("kernel", "[bold]gemm[/bold] :smile: \\[x]"), ("tier", "dram")],
    "a closing tag alone": [("last seen at commit", "[/x]c1:smile:"), ("tier", "dram")],
    "wide characters": [("name", "漢字 kernel 😄"), ("time", "1 ms")],
    "a value on two lines": [("message", "first\nsecond"), ("tabs", "a\tb")],
    "an empty value": [("label", ""), ("other", "")],
    "wider than the terminal": [("method", "robust z " * 30), ("now", "61.5%")],
}


def printed(renderable: object, width: int, colours: str | None) -> str:
    out = io.StringIO()
    terminal = colours is not None
    console = Console(
        file=out, width=width, color_system=colours, force_terminal=terminal, highlight=False
    )
    console.print(renderable)
    return out.getvalue()


@pytest.mark.parametrize("rows", ROWS.values(), ids=ROWS.keys())
@pytest.mark.parametrize("colours", ["truecolor", None])
@pytest.mark.parametrize("width", [40, 200])
def test_same_bytes_as_the_grid(rows: list[tuple[str, str]], colours: str | None, width: int):
    direct = printed(FigureRows(rows), width, colours)
    assert direct == printed(FigureRows(rows).grid(), width, colours)
    assert rows[0][0] in direct


def test_short_figures_aligned_in_two_columns():
    lines = printed(FigureRows(ROWS["short"]), 200, None).splitlines()
    assert lines[0] == "time                        657 ns"
    assert lines[1] == "roof time (speed of light)  404 ns"


@pytest.mark.parametrize("layout", ["direct", "grid"])
def test_report_strings_print_as_text_not_console_markup(layout: str):
    """A commit or kernel name is data: "[/x]" once raised a MarkupError (exit 2)."""
    rows = FigureRows([("last seen at commit", "[/x]c1 :smile: [red]k")])
    out = printed(rows if layout == "direct" else rows.grid(), 80, None)
    assert "[/x]c1 :smile: [red]k" in out
