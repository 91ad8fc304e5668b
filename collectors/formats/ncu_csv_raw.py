"""ncu CSV, raw page (``ncu --csv --page raw``): row 1 metric names, row 2 units, a row per launch.

Streams: rows are read one at a time with the csv module and only the columns the recipe
reads are converted, so a file of hundreds of MB is never held in memory.
"""

from __future__ import annotations

import csv
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from collectors import csvrows
from collectors.base import Collector
from collectors.batch import ChunkBuilder, NotBatchable, RunColumns
from collectors.errors import MalformedReport, cut
from collectors.ncu import columns, csvio, frames, labels, recipe
from collectors.ncu.aggregate import RunBuilder
from collectors.ncu.metrics import dimension_of, is_relevant
from collectors.ncu.peaks import DeviceFacts, device_facts, device_info
from collectors.ncu.provenance import profiler_info
from collectors.schema import RunRecord, SourceRef

_STRING_COLUMNS = ("device__attribute_display_name",)
_FIXED_USED = ("ID", "Kernel Name", "Grid Size", "Block Size", "Device", "CC")


@dataclass(frozen=True, slots=True)
class _Columns:
    """Where things are in the header, and the scale of each numeric column used."""

    header: list[str]
    numeric: tuple[tuple[int, str, float], ...]
    strings: tuple[tuple[int, str], ...]
    pick: Callable[[list[str]], Sequence[str]]
    factors: tuple[float, ...]
    fixed: dict[str, int]

    def get(self, row: list[str], name: str) -> str | None:
        """The cell of fixed column ``name`` (None when the export lacks the column)."""
        index = self.fixed.get(name)
        return None if index is None else row[index]


@dataclass(slots=True)
class _Reading:
    """One parse of one file: what was learnt before the data rows, and the plans bound.

    Kept per call, never on the collector: the fallback from the fast path starts again at
    ``data_offset`` with the prelude, header and units already read.
    """

    path: str
    prelude: csvio.Prelude
    columns: _Columns
    data_offset: int
    bound: dict[str | None, recipe.Plan] = field(default_factory=dict)

    @property
    def data_line(self) -> int:
        """The 1-based line of the first row read after ``data_offset``.

        The line after the header is the units row (a page without one is refused).
        """
        return self.prelude.header_line + 2


class NcuCsvRaw(Collector):
    """Nsight Compute CSV, raw page."""

    name = "ncu-csv-raw"
    description = "Nsight Compute CSV, raw page: one row per launch, every metric a column"
    example = "ncu --csv --page raw --set roofline ./app > run.csv"
    suffixes = (".csv",)

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """An ncu header without the details page's ``Metric Name`` and ``Metric Value``."""
        header = csvio.header_of(head)
        return (
            header is not None and "Kernel Name" in header and not csvio.is_details_header(header)
        )

    def parse(self, path: Path) -> RunRecord:
        """Read every launch row: fast through pandas, else row by row naming what is wrong."""
        where = str(path)
        with path.open(encoding="utf-8", newline="") as handle:
            reading = _start(handle, where)
            facts, builder = self._fast(handle, reading, path)
            if builder is None:  # start again at the first data row, row by row
                handle.seek(reading.data_offset)
                builder = RunBuilder(path, self.name, self.options)
                table = csvio.Table(csvio.lines(handle, where))
                rows = split_rows(table, where, reading.data_line - 1)
                facts = _read_rows(builder, reading, rows)
                notes = table.note()
            else:  # the fast path reads only a file whose last line is a row: no trailer
                notes = []
        cc = builder.device_key[1] if builder.device_key else None
        device, more = device_info(facts, self.options, cc, reading.prelude.device)
        profiler, _ = profiler_info(None, None)
        return builder.build(device, profiler, [*more, *notes])

    def parse_columns(self, path: Path) -> RunColumns:
        """The run as columns (``collectors.ncu.columns``): every launch a kernel of its own.

        Raises:
            NotBatchable: The file needs the record path (``parse``), which names what is
                wrong with it, if anything.
        """
        where = str(path)
        with path.open(encoding="utf-8", newline="") as handle:
            reading = _start(handle, where)
            header = reading.columns.header
            if not frames.ends_cleanly(where, len(header)):
                raise NotBatchable("a cut file")
            runs = RunBuilder(path, self.name, self.options)
            chunks = ChunkBuilder(where, self.options.count)
            facts = columns.read(handle, header, reading.columns.numeric, runs, chunks)
        if not any(chunk.shape.launches for chunk in chunks.chunks):
            raise NotBatchable("no launch with a duration")  # the record path names it
        cc = runs.device_key[1] if runs.device_key else None
        device, notes = device_info(facts, self.options, cc, reading.prelude.device)
        profiler, _ = profiler_info(None, None)
        unmeasured = [n for chunk in chunks.chunks if not chunk.shape.launches for n in chunk.names]
        head = RunRecord(
            device=device,
            profiler=profiler,
            notes=(*notes, *runs.launch_notes(unmeasured)),
            sources=(SourceRef(path=where, format=self.name),),
        )
        return RunColumns(head, chunks.chunks)

    def _fast(
        self, handle: TextIO, reading: _Reading, path: Path
    ) -> tuple[DeviceFacts | None, RunBuilder | None]:
        """The pandas path; no builder when the file is not plain enough for it."""
        header = reading.columns.header
        if not frames.ends_cleanly(reading.path, len(header)):
            return None, None
        builder = RunBuilder(path, self.name, self.options)
        try:
            return frames.read(handle, header, reading.columns.numeric, builder), builder
        except frames.Fallback:
            return None, None


def _start(handle: TextIO, path: str) -> _Reading:
    """Prelude, header, units row, and the used columns."""
    prelude, header_line = csvio.read_prelude(handle, path)
    cells = split_row(header_line.rstrip("\r\n"), path, prelude.header_line)
    header = [labels.header_name(cell) for cell in cells]
    if "Metric Value" in header:
        reason = "a details page, not a raw page"
        raise MalformedReport(path, prelude.header_line, "Metric Value", reason)
    line = csvio.next_line(handle, path).rstrip("\r\n")
    units_line = prelude.header_line + 1
    first = (units_line, split_row(line, path, units_line)) if line else None
    columns = _columns(header, first, units_line, path)
    return _Reading(path, prelude, columns, handle.tell())


def _columns(
    header: list[str], first: tuple[int, list[str]] | None, units_line: int, path: str
) -> _Columns:
    """Scale per used column from the units row; a page without one is refused."""
    for name in ("ID", "Kernel Name"):
        if name not in header:
            raise MalformedReport(path, units_line - 1, name, f"the header lacks {name!r}")
    units: list[str] = []  # a header with no line after it: no launch to scale
    if first is not None and first[1] and first[1][header.index("ID")] == "":
        units = first[1]
    elif first is not None:
        _refuse_missing_units(first[1], header, units_line, path)
    numeric, strings = [], []
    for index, name in enumerate(header):
        if name in _STRING_COLUMNS:
            strings.append((index, name))
        elif name not in csvio.FIXED_COLUMNS and is_relevant(name):
            unit = units[index] if index < len(units) else ""
            dimension = dimension_of(name) if units else None
            factor = csvio.unit_scale(unit, dimension, path, units_line, name)
            numeric.append((index, name, factor))
    _refuse_repeated(numeric, units_line - 1, path)
    indices = [index for index, _, _ in numeric]
    factors = tuple(factor for _, _, factor in numeric)
    fixed = {name: header.index(name) for name in _FIXED_USED if name in header}
    return _Columns(header, tuple(numeric), tuple(strings), _picker(indices), factors, fixed)


def _refuse_missing_units(row: list[str], header: list[str], line: int, path: str) -> None:
    """Refuse a raw page whose line after the header is a launch, not ncu's units row.

    ncu prints a raw page's values in the units of that row (``nsecond`` for
    ``gpu__time_duration.sum``); without it no value has a known scale, and a duration read as
    seconds is a 5120 ns kernel shown as 5120 s.
    """
    launch = row[header.index("ID")] if len(row) > header.index("ID") else ""
    reason = (
        "the units row is missing: this launch follows the header where ncu --csv --page raw "
        "prints each metric's unit (nsecond, byte, ...), so no value has a known scale"
    )
    raise MalformedReport(path, csvio.where(line, cut(launch)), None, reason)


def _refuse_repeated(numeric: list[tuple[int, str, float]], line: int, path: str) -> None:
    """Refuse a metric the header names twice: the later column's value would win in silence."""
    seen: dict[str, int] = {}
    for index, name, _ in numeric:
        first = seen.setdefault(name, index)
        if first != index:
            reason = f"the header names this metric twice (columns {first + 1} and {index + 1})"
            raise MalformedReport(path, line, name, reason)


def _read_rows(
    builder: RunBuilder, reading: _Reading, rows: Iterator[tuple[int, list[str]]]
) -> DeviceFacts | None:
    """The careful reader: every row split in Python, every bad cell named."""
    facts: DeviceFacts | None = None
    after = reading.data_line  # the line after the last launch row: ncu's own lines skipped
    for line, row, last in csvio.with_last(rows):
        try:
            _check_width(builder, reading, line, row, last=last)
            got = _read_row(builder, reading, line, row, want_facts=facts is None)
        except MalformedReport as exc:  # a second output's rows are no launch: say so
            raise csvio.second_output(reading.path, line, after) or exc from None
        facts, after = facts or got, line + 1
    return facts


def _check_width(
    builder: RunBuilder, reading: _Reading, line: int, row: list[str], *, last: bool
) -> None:
    """A row of another width than the header (cut short, where it is the last row)."""
    width = len(reading.columns.header)
    if len(row) != width:
        index = reading.columns.fixed.get("ID", width)
        # A line of one cell (program output after the table, a blank-ish line) is no launch.
        launch_id = row[index].strip() if index < len(row) and len(row) > 1 else None
        reason = csvio.short_row(len(row), width, last=last and len(row) < width)
        raise MalformedReport(builder.path, csvio.where(line, launch_id or None), None, reason)


def _read_row(
    builder: RunBuilder, reading: _Reading, line: int, row: list[str], *, want_facts: bool
) -> DeviceFacts | None:
    """Add one launch row; the device facts of its metrics when wanted and it is usable."""
    columns = reading.columns
    launch_id = columns.get(row, "ID") or ""
    label = csvio.where(line, launch_id)
    cc = columns.get(row, "CC")
    figs, metrics = _figures(row, reading, cc, label)
    strings = {name: row[i] for i, name in columns.strings}
    device = strings.get("device__attribute_display_name") or columns.get(row, "Device")
    if (device, cc) != builder.device_key:
        builder.check_device(label, device, cc)
    kernel = columns.get(row, "Kernel Name") or ""
    grid, block = columns.get(row, "Grid Size"), columns.get(row, "Block Size")
    builder.add(launch_id or "", kernel, figs, grid=grid, block=block, row=label)
    if figs.failed is not None or not want_facts:
        return None
    metrics = metrics or _metrics(row, columns, reading.path, "")
    if any(map(math.isnan, metrics.values())):  # as the fast path: facts from a plain row
        return None
    return device_facts(metrics, strings)


def _figures(
    row: list[str], reading: _Reading, cc: str | None, label: str
) -> tuple[recipe.LaunchFigures, dict[str, float] | None]:
    """A launch's figures: plain rows through the plan bound to columns, others carefully.

    The careful path handles n/a, NaN and separators, and names a bad cell.
    """
    columns = reading.columns
    values = _fast_values(row, columns)
    if values is not None:
        plan = reading.bound.get(cc)
        if plan is None:
            names = frozenset(name for _, name, _ in columns.numeric)
            position = {name: pos for pos, (_, name, _) in enumerate(columns.numeric)}
            plan = reading.bound[cc] = recipe.plan_for(names, cc).bind(position)
        return plan.evaluate(values), None
    metrics = _metrics(row, columns, reading.path, label)
    figs = recipe.launch_figures(metrics, cc)
    if figs.failed is None and any(map(math.isnan, metrics.values())):
        _refuse_nan(row, columns, reading.path, label)
    return figs, metrics


def _refuse_nan(row: list[str], columns: _Columns, path: str, label: str) -> None:
    """Refuse a ``nan`` cell of a launch that has a duration (not a failed replay).

    ``n/a`` and empty cells (a metric not collected there) are NaN too, and stay absent.
    """
    for index, name, _ in columns.numeric:
        cell = row[index]
        value = csvio.number(cell, path, label, name) if cell else None
        if value is not None and math.isnan(value):
            raise csvio.nan_beside_duration(path, label, name, cell)


def _metrics(row: list[str], columns: _Columns, path: str, label: str) -> dict[str, float]:
    """The row's metrics; an empty or ``n/a`` cell is NaN, as the fast path (pandas) reads it.

    So a launch reads the same whichever reader a file takes: an ``n/a`` duration is a failed
    launch either way, not one timed from its cycles here and failed there.
    """
    metrics: dict[str, float] = {}
    for index, name, factor in columns.numeric:
        cell = row[index]
        value = csvio.number(cell, path, label, name) if cell else None
        metrics[name] = _NAN if value is None else value * factor
    return metrics


_NCU_MESSAGE = re.compile(r"==(?:PROF|WARNING|ERROR)==")
_INF = float("inf")
_NAN = float("nan")
_ZERO = 0.0


def split_row(line: str, path: str, number: int) -> list[str]:
    """The cells of one line.

    ncu quotes every cell, so a line without doubled quotes splits on ``","`` (faster than the
    csv module, which handles every other line).
    """
    if len(line) > 1 and line[0] == '"' and line[-1] == '"' and '""' not in line:
        return line[1:-1].split('","')
    try:
        return next(csv.reader([line]), [])
    except csv.Error as exc:
        raise csvrows.broken(path, number, exc) from None


def split_rows(
    handle: Iterable[str], path: str, header_line: int
) -> Iterator[tuple[int, list[str]]]:
    """Data rows with their 1-based line numbers, read one line at a time.

    Raises:
        MalformedReport: The last row stops inside a quoted cell (a cut file), which the csv
            module would take as a shorter value.
    """
    for number, text, last in csvio.with_last(_data_lines(handle, path, header_line)):
        if last:
            csvrows.refuse_cut_quoted_line(path, number, text)
        yield number, split_row(text, path, number)


def _data_lines(handle: Iterable[str], path: str, header_line: int) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(handle, start=header_line + 1):
        text = line.rstrip("\r\n")
        # ncu's own messages also trail the table (``==PROF== Disconnected ...``) when stdout
        # is captured; they are never data.
        if text and not _NCU_MESSAGE.match(text):
            yield number, text


def _picker(indices: list[int]) -> Callable[[list[str]], Sequence[str]]:
    """The cells at ``indices`` (itemgetter returns a bare cell for one index)."""
    if len(indices) == 1:
        only = indices[0]
        return lambda row: (row[only],)
    if not indices:
        return lambda row: ()
    return operator.itemgetter(*indices)


def _fast_values(row: list[str], columns: _Columns) -> list[float] | None:
    """Every used cell a plain, finite, non-negative number (scaled), else None."""
    try:
        values = list(map(float, columns.pick(row)))
    except ValueError:  # empty, n/a, separators or text
        return None
    if any(map(_ZERO.__gt__, values)) or _INF in values or any(map(math.isnan, values)):
        return None
    return list(map(operator.mul, values, columns.factors))
