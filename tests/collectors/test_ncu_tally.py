"""The pandas readers' count of what they cannot see (``collectors.ncu.tally``, issue 29)."""

from __future__ import annotations

import io

import pytest

from collectors.ncu.tally import Tally

ROW = '"1","a, b","2"'


def _whole(text: str, size: int = 262_144, rows: int = 3) -> bool:
    tally = Tally(io.StringIO(text))
    while tally.read(size):
        pass
    return tally.whole_rows(rows, width=3)


@pytest.mark.parametrize("size", range(1, 8))
@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_rows_are_whole_however_the_text_is_cut(size: int, end: str) -> None:
    """pandas reads in blocks: a separator or a line end cut by one still counts once.

    Miscounted, every big plain page (thousands of blocks) left the fast readers.
    """
    assert _whole((ROW + end) * 3, size)


@pytest.mark.parametrize(
    "rows",
    [
        [ROW, ROW + ',"x"', ROW],  # an extra quoted cell
        [ROW, '"1","a\rb","2"', ROW],  # a lone carriage return: a line break to the careful reader
        [ROW, "", ROW, ROW],  # a blank line (the careful reader skips it)
    ],
)
def test_a_line_that_is_not_one_quoted_row_is_seen(rows: list[str]) -> None:
    text = "\n".join(rows) + "\n"
    assert not _whole(text, rows=3)
    assert not _whole(text, size=2, rows=3)


@pytest.mark.parametrize("extra", [",5", ","])
def test_an_extra_cell_unquoted_at_a_rows_end_is_not_counted(extra: str) -> None:
    """pandas drops it (an unquoted or empty cell ncu never writes); not worth a fourth pass."""
    assert _whole("\n".join([ROW, ROW + extra, ROW]) + "\n", rows=3)


def test_a_line_break_inside_a_cell_is_seen() -> None:
    # pandas reads three rows here, ncu wrote four lines: one kernel name broken in two
    assert not _whole(f'{ROW}\n"1","a\nb","2"\n{ROW}\n', rows=3)


@pytest.mark.parametrize("size", [1, 2, 3, 262_144])
@pytest.mark.parametrize("end", ["\n", "\r\n"])
@pytest.mark.parametrize("blank", [1, 3])
def test_blank_lines_after_the_last_row_are_no_rows(size: int, end: str, blank: int) -> None:
    """Neither reader makes rows of them: a page ending in one stays on the fast readers."""
    assert _whole((ROW + end) * 3 + end * blank, size)
    assert not _whole((ROW + end) * 3 + end * blank, size, rows=4)


@pytest.mark.parametrize("size", [1, 2, 3, 262_144])
@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_a_last_row_without_its_line_end_is_a_row(size: int, end: str) -> None:
    """A file written without a final newline: both readers read its last row."""
    assert _whole((ROW + end) * 2 + ROW, size)
    assert not _whole((ROW + end) * 2 + ROW, size, rows=2)


def test_nothing_read_is_no_row() -> None:
    assert _whole("", rows=0)
