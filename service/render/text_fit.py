"""Terminal tables that fit the terminal: each column between its longest word and its cap.

rich lays a too-wide table out by narrowing the widest wrapping columns in turn and then every
column evenly, and measures the ones that cannot wrap back to their full width: the table came
out wider than the console, which cropped each line (on a 140-column terminal the verdict's
kernel table lost its verdict column; at 200 columns the last 10 characters of every row), or
its words were cut mid-word. Here each column gets at least its longest word (and a readable
floor) and at most its cap, and the room left completes the columns that want least first.
A table whose columns cannot all have that much is not made (``fitted_table`` gives None):
the caller hides a column instead, or lets the console crop as a last resort.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from rich import box
from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

#: Between two columns of a ``box.SIMPLE_HEAD`` table without edges: a space of padding on
#: each side and the rule's column of blanks.
GUTTER = 3

Cell = str | Text
#: A console this wide lays a table out as wide as its cells: a pipe's, one line a row.
UNBOUNDED = 10_000


class Column(NamedTuple):
    """A column: whether its cells wrap at spaces (or fold anywhere) and its least and most."""

    header: str
    justify: JustifyMethod = "left"
    wraps: bool = False
    floor: int = 0  # a wrapping column's least width, so none is a column of 3-letter lines
    cap: int | None = None
    folds: bool = False  # may break inside a word (a kernel name): its floor alone bounds it


class Extent(NamedTuple):
    """The narrowest and the widest a column may be, in characters (padding aside).

    ``lines``: how wide each of its cells is on one line (a wrapping column's), so that the
    room left goes where it puts the most cells on one line.
    """

    low: int
    high: int
    lines: tuple[int, ...] = ()


def text_extent(cells: Sequence[Cell]) -> Extent:
    """(longest word, longest line) over ``cells``: what wrapping at spaces needs and uses."""
    plain = [cell.plain if isinstance(cell, Text) else cell for cell in cells]
    words = [cell_len(word) for text in plain for word in text.split()]
    lines = [cell_len(line) for text in plain for line in text.splitlines()]
    return Extent(max(words, default=0), max(lines, default=0))


def column_extent(column: Column, cells: Sequence[Cell]) -> Extent:
    """``column``'s extent over its ``cells`` and its header.

    Whole lines when it does not wrap (its header's too); else from its longest word (or,
    folding, nothing) and its floor up to its longest line, no more than its cap. A wrapping
    column's header wraps as well: it asks room for its longest word only.
    """
    each = [text_extent([cell]) for cell in cells]  # every cell measured once
    header = text_extent([column.header])
    if not (column.wraps or column.folds):
        line = max([header.high, *(cell.high for cell in each)])
        return Extent(line, line)
    word = max([header.low, *(cell.low for cell in each)])
    line = max([word, *(cell.high for cell in each)])
    need = 0 if column.folds else word
    high = line if column.cap is None else max(min(line, column.cap), need)
    return Extent(min(max(need, column.floor), high), high, tuple(cell.high for cell in each))


def fit_widths(extents: Sequence[Extent], width: int) -> list[int] | None:
    """Each column's width in a ``width``-column table, or None when their lows do not fit.

    The room past the lows goes, a step at a time, where it puts the most cells on one line
    for the characters it costs (shared in proportion, a table a few characters short
    wrapped a cell of every column); what no step can use widens the columns still short.
    """
    room = width - GUTTER * max(len(extents) - 1, 0)
    widths = [extent.low for extent in extents]
    spare = room - sum(widths)
    if spare < 0:
        return None
    wider = {i: Counter(min(n, e.high) for n in e.lines) for i, e in enumerate(extents)}
    while (step := _best_step(extents, widths, wider, spare)) is not None:
        column, target = step
        spare -= target - widths[column]
        widths[column] = target
    wants = [max(wider[i] or [e.high]) - widths[i] for i, e in enumerate(extents)]
    for i in sorted(range(len(extents)), key=lambda i: wants[i]):
        given = min(max(wants[i], 0), spare)
        widths[i] += given
        spare -= given
    return widths


def _best_step(
    extents: Sequence[Extent], widths: Sequence[int], wider: dict[int, Counter[int]], spare: int
) -> tuple[int, int] | None:
    """(column, width): the widening within ``spare`` that puts most cells on one line a char."""
    best: tuple[float, int, int, int] | None = None  # (cells per char, -cost, column, width)
    for i, lengths in wider.items():
        whole = 0
        for target in sorted(n for n in lengths if widths[i] < n <= widths[i] + spare):
            whole += lengths[target]
            rate = (whole / (target - widths[i]), widths[i] - target, i, target)
            best = rate if best is None or rate > best else best
    return None if best is None else (best[2], best[3])


def fitted_table(
    columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int
) -> Table | None:
    """A ``SIMPLE_HEAD`` table of ``rows`` no wider than ``width``; None when it cannot be.

    Every cell on one line when the terminal has the room; else the caps apply.
    """
    cells = [[row[i] for row in rows] for i in range(len(columns))]
    # With the room, every cell and header on one line; else headers wrap as their cells do.
    whole = [
        column_extent(c._replace(cap=None), [c.header, *of])
        for c, of in zip(columns, cells, strict=True)
    ]
    if sum(extent.high for extent in whole) + GUTTER * (len(whole) - 1) <= width:
        return _table(columns, rows, [extent.high for extent in whole])
    extents = [column_extent(c, of) for c, of in zip(columns, cells, strict=True)]
    widths = fit_widths(extents, width)
    return None if widths is None else _table(columns, rows, widths)


def natural_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> Table:
    """The table of ``rows`` as wide as its cells (the console wraps or crops it)."""
    return _table(columns, rows, [None] * len(columns))


def _table(
    columns: Sequence[Column], rows: Sequence[Sequence[Cell]], widths: Sequence[int | None]
) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, caption_justify="left")
    for column, width in zip(columns, widths, strict=True):
        table.add_column(
            column.header,
            justify=column.justify,
            no_wrap=not (column.wraps or column.folds),
            overflow="fold" if column.folds else "ellipsis",
            width=width,
        )
    for row in rows:
        table.add_row(*row)
    return table


def fitted_hiding(
    columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int, spare: Sequence[str]
) -> tuple[Table, tuple[str, ...]] | None:
    """The table that fits ``width`` with the fewest columns hidden, and the headers hidden.

    Columns are hidden in the order of ``spare`` (headers); None when even all of them hidden
    does not fit.
    """
    for count in range(len(spare) + 1):
        hidden = tuple(spare[:count])
        table = fitted_table(*without(columns, rows, hidden), width)
        if table is not None:
            return table, hidden
    return None


def without(
    columns: Sequence[Column], rows: Sequence[Sequence[Cell]], hidden: Sequence[str]
) -> tuple[list[Column], list[list[Cell]]]:
    """``columns`` and ``rows`` without the columns whose headers are ``hidden``."""
    shown = [i for i, column in enumerate(columns) if column.header not in hidden]
    return [columns[i] for i in shown], [[row[i] for i in shown] for row in rows]


def hidden_note(hidden: Sequence[str], width: int) -> str:
    """The caption naming the columns hidden to fit ``width`` (empty when none were)."""
    return f"{', '.join(hidden)} hidden to fit {width} columns" if hidden else ""


def fitted_or_cropped(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int | None,
    spare: Sequence[str],
) -> Table:
    """``fitted_hiding``'s table, captioned with what it hides; a pipe's (None) as it is.

    When even hiding every one of ``spare`` does not fit, that table as wide as its cells:
    the console crops it, the last resort.
    """
    if width is None:
        return natural_table(columns, rows)
    found = fitted_hiding(columns, rows, width, spare)
    if found is None:
        found = natural_table(*without(columns, rows, spare)), tuple(spare)
    table, hidden = found
    table.caption = hidden_note(hidden, width) or None
    return table
