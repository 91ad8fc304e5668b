"""What every ncu CSV shares: a prelude before the header, cells with separators, errors.

ncu writes ``==PROF==``/``==WARNING==``/``==ERROR==`` lines and the program's own stdout before
the ``"ID","Process ID",...`` header; a failed run writes no header at all.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from collectors import csvrows
from collectors.errors import MalformedReport, launch_label, shown
from collectors.textio import undecodable
from collectors.units import NotANumber, UnknownUnit, parse_number, unit_dimension, unit_factor

HEADER_START = '"ID","Process ID"'
#: Columns before the metrics (raw page) or before Section Name (details page).
FIXED_COLUMNS = frozenset(
    {
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Kernel Time",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    }
)
_DEVICE_LINES = (
    re.compile(r"^\s*Name:\s+(.+?)\s*$"),
    re.compile(r"^Detected GPU:\s*(.+?)(?:\s*\(SM [\d.]+\))?\s*$"),
    re.compile(r'^Device \d+: "(.+)"\s*$'),
)
_MAX_PRELUDE = 100_000
#: ncu's own message lines, skipped after the table as before it, without a note.
_NCU_LINE = re.compile(r"==(?:PROF|WARNING|ERROR)==")


@dataclass(slots=True)
class Prelude:
    """The lines before the CSV header.

    Attributes:
        lines: The prelude lines (program stdout and ``==PROF==`` messages).
        header_line: 1-based line number of the header.
        device: A GPU name the program printed, when it printed one.
    """

    lines: list[str] = field(default_factory=list)
    header_line: int = 0
    device: str | None = None


#: Columns only the details page has: the raw page names each metric as a column instead.
DETAILS_COLUMNS = ("Metric Name", "Metric Value")


def is_details_header(header: Sequence[str]) -> bool:
    """Whether an ncu CSV header is the details page's (one row per launch, section, metric)."""
    return any(column in header for column in DETAILS_COLUMNS)


def header_of(head: bytes) -> list[str] | None:
    """The ncu CSV header found in the first bytes of a file, or None."""
    text = head.decode("utf-8", errors="replace")
    start = text.find(HEADER_START)
    if start < 0 or (start > 0 and text[start - 1] not in "\r\n"):  # a lone \r: old Mac ends
        return None
    line = re.split(r"\r\n|\r|\n", text[start:], maxsplit=1)[0]
    return next(csv.reader([line]), None)


def has_ncu_messages(head: bytes) -> bool:
    """Whether the head holds ncu's own ``==PROF==``/``==ERROR==`` lines."""
    return re.search(rb"(?m)^==(?:PROF|ERROR|WARNING)==", head) is not None


@dataclass(slots=True)
class Table:
    """The lines of an ncu table, without the lines after it that are no CSV row (its trailer).

    CI logs capture the program's own stdout and ncu's ``==WARNING==`` after the table as well
    as before it: after a complete row, lines that do not start with a quote, up to the end,
    are set aside. A quoted line after them puts them back, to be refused as rows; so is a
    row cut short (it starts with a quote) still refused as a cut file.
    """

    source: Iterable[str]
    trailer: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[str]:
        held: list[str] = []
        complete = False
        for line in self.source:
            if line.startswith('"'):
                yield from held
                held.clear()
                text = line.rstrip("\r\n")
                complete = text.endswith('"') and not text.endswith('","')
                yield line
            elif complete or held:
                held.append(line)
            else:
                yield line
        kept = [line.rstrip("\r\n") for line in held]
        if any(kept):
            self.trailer = kept
        else:
            yield from held  # blank lines alone: the readers drop them as before

    def note(self) -> list[str]:
        """The run's note on the trailer's lines ncu did not write (none when it has none)."""
        other = [line for line in self.trailer if line.strip() and not _NCU_LINE.match(line)]
        if not other:
            return []
        return [
            f"{len(other)} line(s) after the ncu table are no CSV row (the program's output?), "
            f"not read: {shown(other[0])}"
        ]


def read_prelude(handle: TextIO, path: str) -> tuple[Prelude, str]:
    """Skip to the header; return the prelude and the header line.

    Raises:
        MalformedReport: No header: ncu's error is quoted when the run failed.
    """
    prelude = Prelude()
    number = 0
    # readline, not iteration: the caller may ``tell()`` where the data rows start
    while line := next_line(handle, path):
        number += 1
        if line.startswith(HEADER_START):
            prelude.header_line = number
            prelude.device = device_from_lines(prelude.lines)
            return prelude, line
        if number > _MAX_PRELUDE:
            break
        prelude.lines.append(line.rstrip("\r\n"))
    raise _no_header(path, prelude.lines)


def next_line(handle: TextIO, path: str) -> str:
    """The handle's next line ("" at the end); undecodable bytes are a clear error."""
    try:
        return handle.readline()
    except UnicodeDecodeError as exc:
        raise undecodable(path, exc) from exc


def lines(handle: TextIO, path: str) -> Iterator[str]:
    """The handle's lines; undecodable bytes are a clear error."""
    try:
        for line in handle:  # noqa: UP028 - ``yield from`` would close the file with the generator
            yield line
    except UnicodeDecodeError as exc:
        raise undecodable(path, exc) from exc


def second_output(path: str, line: int, start: int | None = None) -> MalformedReport | None:
    """The error for a file of two ncu outputs, the second starting at ``line``; else None.

    ``cat a.csv b.csv`` (or ``>>`` to a log) puts a second prelude, header or units row among
    the launch rows, each then refused as a bad row ("row has 1 fields", "unknown unit 'Metric
    Unit'"), which hid the cause. Called for the line a row was refused at: it starts a second
    output when it is a header or units row, or when no launch row leads from it to a header.
    ``start`` is where the error says it starts, where a reader skipped ncu's lines before.
    """
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for number, text in enumerate(handle, start=1):
            if number < line:
                continue
            if text.startswith(HEADER_START) or (number == line and text.startswith('"",""')):
                reason = "starts a second ncu output (files concatenated?); give each its own file"
                return MalformedReport(path, f"line {start or line}", None, reason)
            if number > line and text.startswith('"') and '","' in text:
                return None  # a launch row: the output goes on
    return None


#: The fix for ERR_NVGPUCTRPERM (counters restricted to admin users), as NVIDIA documents it.
COUNTER_PERMISSION_FIX = (
    "To allow the counters for every user, set `options nvidia "
    "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/nvidia-profiling.conf and reload "
    "the nvidia module or reboot; or profile as root, or in a container with --cap-add=SYS_ADMIN "
    "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
)


def _no_header(path: str, lines: list[str]) -> MalformedReport:
    nothing = (
        " (no kernels were profiled)" if any("No kernels were profiled" in x for x in lines) else ""
    )
    for number, line in enumerate(lines, start=1):
        if line.startswith("==ERROR=="):
            detail = line.removeprefix("==ERROR==").strip()
            fix = f". {COUNTER_PERMISSION_FIX}" if "ERR_NVGPUCTRPERM" in detail else ""
            return MalformedReport(
                path,
                number,
                None,
                f"ncu failed and wrote no metrics: {detail}" + nothing + fix,
            )
    if any("No kernels were profiled" in x for x in lines):
        return MalformedReport(
            path, None, None, "ncu profiled no kernels (no CSV header in the file)"
        )
    if not lines:
        return MalformedReport(path, None, None, "the file is empty")
    return MalformedReport(path, 1, None, f"no ncu CSV header ({HEADER_START},...) in the file")


def device_from_lines(lines: list[str]) -> str | None:
    """A GPU name printed by the profiled program (2020 logs carry it nowhere else)."""
    for line in lines:
        for pattern in _DEVICE_LINES:
            match = pattern.match(line)
            if match:
                return match.group(1)
    return None


def number(cell: str, path: str, row: str, column: str) -> float | None:
    """A numeric cell: separators, ``--print-fp``, ``n/a`` (None) and NaN (a failed replay).

    Raises:
        MalformedReport: Text, a negative or an infinite value.
    """
    try:
        value = float(cell)
    except ValueError:
        try:
            value_or_none = parse_number(cell)
        except NotANumber:
            raise MalformedReport(path, row, column, f"not a number: {shown(cell)}") from None
        if value_or_none is None:
            return None
        value = value_or_none
    if value < 0 or math.isinf(value):
        raise MalformedReport(
            path, row, column, f"expected a finite, non-negative number, got {shown(cell)}"
        )
    return value


def unit_scale(unit: str, dimension: str | None, path: str, row: str | int, field: str) -> float:
    """The factor of ``unit`` for a metric whose unit must measure ``dimension`` (None: any).

    Raises:
        MalformedReport: An unknown unit, or one of another dimension (a duration in ``cycle``).
    """
    try:
        factor = unit_factor(unit)
        if dimension is not None and unit_dimension(unit) != dimension:
            raise MalformedReport(path, row, field, f"unit {shown(unit)} is not a {dimension} unit")
    except UnknownUnit:
        raise MalformedReport(path, row, field, f"unknown unit {shown(unit)}") from None
    return factor


def nan_beside_duration(path: str, row: str, field: str, cell: str) -> MalformedReport:
    """The error for a ``nan`` counter on a launch that has a duration.

    A failed replay makes every counter of the launch NaN, its duration too (the corpus's
    only NaNs); one NaN beside a measured duration is no failed replay but a damaged value,
    and leaving it out would report the kernel without that figure.
    """
    reason = f"expected a finite, non-negative number, got {shown(cell)} beside a measured duration"
    return MalformedReport(path, row, field, reason)


def numbered(reader: Any, offset: int, path: str) -> Iterator[tuple[int, list[str]]]:
    """Rows of a ``csv.reader`` with their 1-based file line; a refused row is a clear error."""
    return csvrows.numbered(reader, path, lambda line: offset + line)


def blank_end_dropped(rows: Iterator[tuple[int, list[str]]]) -> Iterator[tuple[int, list[str]]]:
    """``rows`` without the blank ones (no cell but spaces) after the last row of data.

    A blank line between rows is kept, for the reader to refuse.
    """
    held: list[tuple[int, list[str]]] = []
    for numbered_row in rows:
        if not any(cell.strip() for cell in numbered_row[1]):
            held.append(numbered_row)
            continue
        yield from held
        held.clear()
        yield numbered_row


def cut_launch(have: int, whole: int, what: str) -> str:
    """The reason for a last launch printing the first ``have`` of the launch before's ``what``."""
    return f"its last launch has {have} of the {whole} {what} of the launch before it (a cut file?)"


def where(line: int, launch_id: str | None) -> str:
    """Row label for errors: the file line and the launch ID."""
    return f"{line} ({launch_label(launch_id)})" if launch_id else str(line)


#: A data row (its cells) or a data line (its text).
_Row = TypeVar("_Row")


def with_last(rows: Iterator[tuple[int, _Row]]) -> Iterator[tuple[int, _Row, bool]]:
    """Each row (or line) with whether it is the file's last: a short row there is a cut file."""
    ahead = next(rows, None)
    while ahead is not None:
        (line, row), ahead = ahead, next(rows, None)
        yield line, row, ahead is None


def short_row(fields: int, need: int, *, last: bool) -> str:
    """The reason for a row of ``fields`` cells where ``need`` are needed."""
    return f"row has {fields} fields, needs {need}" + (" (truncated file?)" if last else "")


def last_line(path: str) -> tuple[str, int]:
    """The file's last line that is not blank, and how many line ends follow it.

    Read from the file's last 64 KB (a longer last line comes back cut at its start).
    """
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - 65536))
        tail = handle.read().decode("utf-8", "replace")
    body = tail.rstrip("\r\n")
    return body.rsplit("\n", 1)[-1].rstrip("\r"), tail.count("\n", len(body))
