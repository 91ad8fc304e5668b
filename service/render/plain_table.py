"""A pipe's table as plain lines, the characters rich writes for it, without laying out cells.

A pipe's table (``text_fit.natural_table``) keeps each row on one line as wide as its cells,
and the console has no colours: rich still measures, pads, wraps and crops every cell as
objects, about 0.75 ms a row (an ``inspect`` of 200,000 kernels took 4.5 minutes). Here the
widths are the longest cells and each line is joined as text. Cells rich would read
differently from their characters (a line break, a tab, console markup or an emoji code in a
plain string) leave the table to rich: ``plain_lines`` gives None.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from service.render.text_fit import GUTTER, UNBOUNDED, Cell, Column, natural_table

#: What rich's console would not print as it is in a plain string: markup (``[bold]``) or an
#: emoji code (``:smile:``). Text objects are printed as they are.
_CONSOLE_SYNTAX = re.compile(r"\[|:[^\s:]+:")
#: What rich lays out rather than prints: line breaks and tabs (expanded to tab stops).
_LAYOUT = re.compile(r"[\n\r\t]")
_RULE = "─"


def _plain(cell: Cell) -> str | None:
    """The characters ``cell`` prints as, or None where rich would read them."""
    if isinstance(cell, Text):
        text = cell.plain
    elif _CONSOLE_SYNTAX.search(cell):
        return None
    else:
        text = cell
    return None if _LAYOUT.search(text) else text


def _padded(text: str, width: int, justify: str) -> str:
    """``text`` justified in ``width`` as rich does it: right or centred, trailing blanks go."""
    if justify in ("right", "center"):
        text = text.rstrip()
    room = width - cell_len(text)
    if justify == "right":
        return " " * room + text
    if justify == "center":
        return " " * (room // 2) + text + " " * (room - room // 2)
    return text + " " * room


def plain_lines(columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> list[str] | None:
    """The header, rule and row lines of ``natural_table(columns, rows)`` on a pipe.

    None when a cell needs rich's layout (see the module docstring).
    """
    texts = [[_plain(cell) for cell in row] for row in rows]
    if any(text is None for row in texts for text in row):
        return None
    cells = [[text or "" for text in row] for row in texts]
    widths = [
        max([cell_len(column.header), *(cell_len(row[i]) for row in cells)])
        for i, column in enumerate(columns)
    ]
    gutter = " " * GUTTER
    lines = [
        gutter.join(
            _padded(text, width, column.justify)
            for text, width, column in zip(row, widths, columns, strict=True)
        )
        for row in [[c.header for c in columns], *cells]
    ]
    rule = _RULE * (sum(widths) + GUTTER * (len(widths) - 1))
    return [lines[0], rule, *lines[1:]]


def pipe_lines(columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> list[str]:
    """A pipe's table, one line a row: ``plain_lines``, or rich's where a cell needs it."""
    lines = plain_lines(columns, rows)
    if lines is not None:
        return lines
    buffer = io.StringIO()
    console = Console(file=buffer, width=UNBOUNDED, color_system=None, highlight=False)
    console.print(natural_table(columns, rows))
    return buffer.getvalue().splitlines()
