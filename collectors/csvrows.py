"""CSV rows with the file line each ends on, and one clear error for a row the csv module refuses.

The csv module refuses a field longer than ``csv.field_size_limit()`` (131,072 characters
unless a program sets it) with a bare ``csv.Error``, as it does a stray quote in strict
dialects; every CSV reader of roofguard goes through ``numbered`` or ``broken`` so that each
is a ``MalformedReport`` naming the line. The limit is kept, never raised: it is what bounds
the memory one field of an upload may take, and no report comes near it (ncu's longest
cells, templated kernel names, are a few thousand characters).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from typing import Any

from collectors.errors import MalformedReport
from collectors.textio import undecodable


def numbered(
    reader: Any, path: str, line_of: Callable[[int], int] = int
) -> Iterator[tuple[int, list[str]]]:
    """The rows of a ``csv.reader`` with the file line each ends on.

    Args:
        reader: A ``csv.reader``.
        path: The file, for errors.
        line_of: The file line of the reader's ``line_num`` (the lines it was given may
            start after a prelude, or skip comments).

    Raises:
        MalformedReport: A row the csv module refuses, or undecodable bytes; names the line.
    """
    try:
        for row in reader:
            yield line_of(reader.line_num), row
    except csv.Error as exc:
        raise broken(path, line_of(reader.line_num), exc) from None
    except UnicodeDecodeError as exc:
        raise undecodable(path, exc) from exc


def broken(path: str, line: int, exc: csv.Error) -> MalformedReport:
    """The error for a line the csv module refuses: an over-long field is said in words."""
    if "field larger than field limit" in str(exc):
        limit = csv.field_size_limit()
        reason = (
            f"a field longer than {limit:,} characters, which no report holds "
            "(a quote left open, or not a report)"
        )
        return MalformedReport(path, line, None, reason)
    if "unexpected end of data" in str(exc):
        return MalformedReport(path, line, None, "a quoted cell is not closed (a cut file?)")
    return MalformedReport(path, line, None, f"broken CSV: {exc}")


def refuse_open_quote(path: str, line: int, text: str) -> None:
    """Refuse ``text``, the file's last line, if it stops inside a quoted cell (a cut file).

    The csv module, not strict, ends such a cell at the end of its input: a value cut short
    would be read as whole. Strict parsing is kept to this line: over a whole file it would
    also refuse text after a closing quote, which these readers have always taken.

    Raises:
        MalformedReport: "a quoted cell is not closed (a cut file?)", naming ``line``.
    """
    try:
        next(csv.reader([text], strict=True), None)
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise broken(path, line, exc) from None


def refuse_cut_quoted_line(path: str, line: int, text: str) -> None:
    """``refuse_open_quote``, and no bare ``,`` at the end, for a format quoting every cell.

    In ncu's pages such a line lost its last cell, and its width is whole: nothing else
    says so.

    Raises:
        MalformedReport: an open quote, or "the row ends in a separator (a cut file?)".
    """
    refuse_open_quote(path, line, text)
    if text.endswith(","):
        raise MalformedReport(path, line, None, "the row ends in a separator (a cut file?)")


def refuse_cut_unquoted_row(path: str, line: int, row: str, text: str) -> None:
    """``refuse_open_quote`` of ``row``, the last row of ``text``, and its line break.

    For a format that does not quote its numbers: a file cut in its last number keeps the
    header's width (``8000000`` cut to ``80``), so only the missing line break says so.

    Raises:
        MalformedReport: an open quote, or "the last row does not end in a line break".
    """
    refuse_open_quote(path, line, row)
    if not text.endswith(("\n", "\r")) and text.rsplit("\n", 1)[-1].strip():
        reason = "the last row does not end in a line break (a cut file?)"
        raise MalformedReport(path, line, None, reason)
