"""What the pandas readers of a raw page cannot see, counted in the text they read.

pandas reads only the recipe's columns: it drops the cells past them (a row with an extra
cell), reads a line break inside a quoted cell as text, and a lone carriage return too. The
careful reader refuses all of these and names the row. So the text pandas reads is counted
on the way (``str.count`` of each block, in C), and a file is left to the careful reader
unless every line is one row of ``width`` cells (``width - 1`` separators ``","``).

Three passes of ``str.count``, 0.25-0.55 ms a MB each: on a wide page (150 metrics) pandas
itself takes 2.8 ms a MB, so a fourth pattern was weighed against what it would catch. Not
counted, so read by pandas and refused by the careful reader: an extra cell that is empty
or unquoted at a row's end (a trailing comma), whose text pandas drops. The counts are
totals over the file: two faults that cancel out (a row with an extra quoted cell and
another with a quoted cell too few) pass. ncu writes none of these.

Blank lines at the end of the file (an editor's, a concatenation's) are no rows to either
reader, so they are not counted: a million-launch page ending in one was left to the
careful reader, and found stored in 144 s and 4.9 GB against 19 s and 0.6 GB as columns. A
blank line between rows is still seen. A last row without its line end (a file written
without a final newline) is a row to both readers too, and counted as one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TextIO

#: Carriage returns, line ends, separators.
_PATTERNS = ("\r", "\n", '","')
#: Counted only in a read holding a carriage return (ncu on Linux writes none).
_CR_PATTERNS = ("\r\n",)


class Tally:
    """A text handle whose reads count the patterns, those straddling two reads included."""

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle
        self.counts = dict.fromkeys(_PATTERNS + _CR_PATTERNS, 0)
        self._tail = ""  # the last two characters read: a pattern may straddle two reads
        self._ends_after_text = -1  # line ends after the last other character (-1: none read)

    def read(self, size: int = -1) -> str:
        """Up to ``size`` characters of the handle, counted."""
        text = self.handle.read(size)
        returns = self.counts["\r"]
        self._count(_PATTERNS, text)
        if self.counts["\r"] > returns or "\r" in self._tail:
            self._count(_CR_PATTERNS, text)
        self._tail = (self._tail + text[-2:])[-2:]
        self._note_end(text)
        return text

    def _note_end(self, text: str) -> None:
        if not text:
            return
        body = len(text.rstrip("\r\n"))
        ends = text.count("\n", body)
        self._ends_after_text = ends if body else max(0, self._ends_after_text) + ends

    def _count(self, patterns: tuple[str, ...], text: str) -> None:
        joined, boundary = self._tail + text[:2], len(self._tail)
        for pattern in patterns:
            self.counts[pattern] += text.count(pattern) + _across(joined, boundary, pattern)

    def __iter__(self) -> Iterator[str]:  # pandas asks for it of a file; it calls read()
        return iter(self.read, "")

    def whole_rows(self, rows: int, width: int) -> bool:
        """Whether the text read is ``rows`` lines of ``width`` quoted cells each.

        The line ends that close the text are the last row's own (none where the file stops
        right after it) and blank lines, which neither reader makes rows of.
        """
        n, ends = self.counts, self._ends_after_text
        lines = n["\n"] - max(0, ends - 1) + (ends == 0)
        return lines == rows and n['","'] == rows * (width - 1) and n["\r"] == n["\r\n"]


def _across(joined: str, boundary: int, pattern: str) -> int:
    """Occurrences of ``pattern`` in ``joined`` spanning ``boundary``: in neither read's count."""
    starts = range(max(0, boundary - len(pattern) + 1), boundary)
    return sum(joined.startswith(pattern, start) for start in starts)
