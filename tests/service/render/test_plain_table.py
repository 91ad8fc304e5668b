"""A pipe's table joined as text is the table rich prints, character for character."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from service.render.plain_table import plain_lines
from service.render.text_fit import UNBOUNDED, Column, natural_table

#: Cell text as reports give it: names with templates, wide (CJK) characters, units, blanks.
_CHARS = st.sampled_from(list("abcXYZ019 _<>,.()*~≥→%-ü漢字"))
_CELL_TEXT = st.text(_CHARS, max_size=30)
_CELL = st.one_of(_CELL_TEXT, _CELL_TEXT.map(Text))
_COLUMN = st.builds(
    Column,
    header=st.text(st.sampled_from(list("abc %/()")), min_size=1, max_size=12),
    justify=st.sampled_from(["left", "right", "center"]),
    wraps=st.booleans(),
    folds=st.booleans(),
)


def rich_lines(columns: list[Column], rows: list[list[str | Text]]) -> list[str]:
    """What rich prints for the pipe's table (as ``inspect`` printed it before)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=UNBOUNDED, color_system=None, highlight=False)
    console.print(natural_table(columns, rows))
    return buffer.getvalue().splitlines()


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[Column], list[list[str | Text]]]:
    """Columns, and rows of a cell for each (none, some with empty cells)."""
    columns = draw(st.lists(_COLUMN, min_size=1, max_size=6))
    row = st.lists(_CELL, min_size=len(columns), max_size=len(columns))
    return columns, draw(st.lists(row, max_size=8))


@settings(max_examples=150, deadline=None)
@given(tables())
def test_plain_lines_are_what_rich_prints(
    table: tuple[list[Column], list[list[str | Text]]],
) -> None:
    columns, rows = table
    assert plain_lines(columns, rows) == rich_lines(columns, rows)


def test_cells_rich_would_read_are_left_to_rich() -> None:
    """Markup, an emoji code, a line break or a tab in a cell: rich lays the table out."""
    columns = [Column("kernel"), Column("regime")]
    for cell in ("[bold]x", "a :smile: b", "two\nlines", "a\tb"):
        assert plain_lines(columns, [[Text("k"), cell]]) is None
    # a kernel name is data (a Text): its brackets and colons are printed as they are
    lines = plain_lines(columns, [[Text("f<[int]>::g:x:"), "memory-bound"]])
    assert lines == rich_lines(columns, [[Text("f<[int]>::g:x:"), "memory-bound"]])
