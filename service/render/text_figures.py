"""A finding's figures on a terminal: two aligned columns, laid out directly when they fit.

A ``rich`` grid measures and wraps every cell: about 5 ms per finding, over a second for a
verdict with 250 findings. Most figures are short single-line strings that fit the terminal,
and then the grid's output is plain to compute: each label padded to the widest (dim), two
spaces, each value padded to the widest. Those rows are laid out here, segment for segment as
the grid yields them (the same bytes, coloured or not); anything else (a value on several
lines, tabs, an empty column, characters wider or narrower than one cell, columns wider than
the terminal) is left to the grid itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text

LABEL_STYLE = "dim"
GAP = 2


class FigureRows:
    """``(label, value)`` rows printed as ``Table.grid(padding=(0, 2))`` with a dim label column."""

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        self.rows = tuple(rows)

    def grid(self) -> Table:
        """The same rows as a rich grid (the general case)."""
        grid = Table.grid(padding=(0, GAP))
        grid.add_column(style=LABEL_STYLE)
        grid.add_column()
        for label, value in self.rows:
            grid.add_row(Text(label), Text(value))  # report strings: never console markup
        return grid

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        def text(cell: str) -> Text:  # a commit or name like "[/x]" is text, not markup
            return console.render_str(cell, highlight=options.highlight, markup=False, emoji=False)

        cells = [(text(label), text(value)) for label, value in self.rows]
        if not cells or not all(_plain(t) for pair in cells for t in pair):
            yield self.grid()
            return
        label_width = max(len(label.plain) for label, _ in cells)
        value_width = max(len(value.plain) for _, value in cells)
        if not (label_width and value_width) or label_width + GAP + value_width > options.max_width:
            yield self.grid()
            return
        dim = console.get_style(LABEL_STYLE)
        for label, value in cells:
            yield from _cell(console, label, label_width, dim)
            yield Segment(" " * GAP, dim)
            yield from _cell(console, value, value_width, Style())
            yield Segment.line()


def _plain(text: Text) -> bool:
    """One line of characters one cell wide each: what the direct layout handles."""
    plain = text.plain
    return "\n" not in plain and "\t" not in plain and cell_len(plain) == len(plain)


def _cell(console: Console, text: Text, width: int, style: Style) -> Iterable[Segment]:
    """``text`` left-justified to ``width`` under ``style``, as the grid's cell renders it."""
    if not text.spans:  # one segment, as ``Text.render`` gives an unstyled text
        padded_plain = text.plain + " " * (width - len(text.plain))
        return Segment.apply_style([Segment(padded_plain)], style)
    padded = text.copy()
    padded.pad_right(width - len(padded.plain))
    segments = padded.render(console, end="")
    return Segment.apply_style(segments, style)
