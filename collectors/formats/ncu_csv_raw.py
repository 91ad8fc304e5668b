"""ncu CSV, raw page (``ncu --csv --page raw``): row 1 metric names, row 2 units, a row per launch.

Streams: rows are read one at a time with the csv module and only the columns the recipe
reads are converted, so a file of hundreds of MB is never held in memory.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from collectors.base import Collector
from collectors.errors import MalformedReport
from collectors.ncu import csvio, recipe
from collectors.ncu.aggregate import RunBuilder, device_info, profiler_info
from collectors.ncu.peaks import DeviceFacts, device_facts
from collectors.schema import RunRecord
from collectors.units import UnknownUnit, unit_factor

_STRING_COLUMNS = ("device__attribute_display_name",)


@dataclass(frozen=True, slots=True)
class _Columns:
    """Where things are in the header, and the scale of each numeric column used."""

    header: list[str]
    numeric: tuple[tuple[int, str, float], ...]
    strings: tuple[tuple[int, str], ...]

    def cell(self, row: list[str], name: str) -> str | None:
        return row[self.header.index(name)] if name in self.header else None


class NcuCsvRaw(Collector):
    """Nsight Compute CSV, raw page."""

    name = "ncu-csv-raw"
    suffixes = (".csv",)

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """An ncu header without the details page's ``Metric Value`` column."""
        header = csvio.header_of(head)
        return header is not None and "Kernel Name" in header and "Metric Value" not in header

    def parse(self, path: Path) -> RunRecord:
        """Read every launch row; see the module docstring."""
        where = self._path = str(path)
        builder = RunBuilder(path, self.name, self.options)
        with path.open(encoding="utf-8", newline="") as handle:
            prelude, header_line = csvio.read_prelude(handle, where)
            header = split_row(header_line.rstrip("\r\n"), where, prelude.header_line)
            if "Metric Value" in header:
                reason = "a details page, not a raw page"
                raise MalformedReport(where, prelude.header_line, "Metric Value", reason)
            rows = split_rows(handle, where, prelude.header_line)
            columns, first = self._columns(header, rows, prelude.header_line + 1)
            facts = self._read_rows(builder, columns, itertools.chain(first, rows))
        cc = builder.device_key[1] if builder.device_key else None
        device, notes = device_info(facts, self.options, cc, prelude.device)
        profiler, _ = profiler_info(None, None)
        return builder.build(device, profiler, notes)

    def _columns(
        self, header: list[str], rows: Iterator[tuple[int, list[str]]], units_line: int
    ) -> tuple[_Columns, list[tuple[int, list[str]]]]:
        """Scale per used column from the units row (which a bare export may lack)."""
        for name in ("ID", "Kernel Name"):
            if name not in header:
                reason = f"the header lacks {name!r}"
                raise MalformedReport(self._path, units_line - 1, name, reason)
        first = next(rows, None)
        units: list[str] = [""] * len(header)
        pending: list[tuple[int, list[str]]] = []
        if first is not None and first[1] and first[1][header.index("ID")] == "":
            units = first[1]
        elif first is not None:
            pending.append(first)
        numeric, strings = [], []
        for index, name in enumerate(header):
            if name in _STRING_COLUMNS:
                strings.append((index, name))
            elif name not in csvio.FIXED_COLUMNS and recipe.is_relevant(name):
                unit = units[index] if index < len(units) else ""
                numeric.append((index, name, self._factor(unit, units_line, name)))
        return _Columns(header, tuple(numeric), tuple(strings)), pending

    _path = "?"

    def _factor(self, unit: str, line: int, name: str) -> float:
        try:
            return unit_factor(unit)
        except UnknownUnit:
            raise MalformedReport(self._path, line, name, f"unknown unit {unit!r}") from None

    def _read_rows(
        self, builder: RunBuilder, columns: _Columns, rows: Iterator[tuple[int, list[str]]]
    ) -> DeviceFacts | None:
        header = columns.header
        width = len(header)
        col = {
            name: header.index(name)
            for name in ("ID", "Kernel Name", "Grid Size", "Block Size", "Device", "CC")
            if name in header
        }
        facts: DeviceFacts | None = None
        device_col = col.get("Device")
        for line, row in rows:
            launch_id = row[col["ID"]] if row else ""
            if len(row) != width:
                raise MalformedReport(
                    builder.path, csvio.where(line, launch_id or None), None,
                    f"row has {len(row)} fields, the header {width} (truncated file?)",
                )  # fmt: skip
            metrics = _fast_metrics(row, columns)
            if metrics is None:  # separators, n/a or a bad cell: the careful path names it
                metrics = self._metrics(row, columns, builder.path, csvio.where(line, launch_id))
            cc = row[col["CC"]] if "CC" in col else None
            strings = {name: row[i] for i, name in columns.strings}
            device = strings.get("device__attribute_display_name") or (
                row[device_col] if device_col is not None else None
            )
            if (device, cc) != builder.device_key:
                builder.check_device(csvio.where(line, launch_id), device, cc)
            figs = recipe.launch_figures(metrics, cc)
            builder.add(launch_id, row[col["Kernel Name"]], figs,
                        grid=row[col["Grid Size"]] if "Grid Size" in col else None,
                        block=row[col["Block Size"]] if "Block Size" in col else None)  # fmt: skip
            if facts is None and figs.failed is None:
                facts = device_facts(metrics, strings)
        return facts

    @staticmethod
    def _metrics(row: list[str], columns: _Columns, path: str, label: str) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for index, name, factor in columns.numeric:
            cell = row[index]
            if not cell:
                continue
            value = csvio.number(cell, path, label, name)
            if value is not None:
                metrics[name] = value * factor
        return metrics


def _numbered(
    reader: Iterator[list[str]], offset: int, path: str
) -> Iterator[tuple[int, list[str]]]:
    """Rows with their 1-based file line; a broken quote is a clear error."""
    try:
        for row in reader:
            yield offset + reader.line_num, row  # type: ignore[attr-defined]
    except csv.Error as exc:
        line = offset + reader.line_num  # type: ignore[attr-defined]
        raise MalformedReport(path, line, None, f"broken CSV: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise MalformedReport(path, None, None, f"not a text file ({exc.reason})") from exc


_NCU_MESSAGE = re.compile(r"==(?:PROF|WARNING|ERROR)==")
_INF = float("inf")
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
        raise MalformedReport(path, number, None, f"broken CSV: {exc}") from exc


def split_rows(handle: TextIO, path: str, header_line: int) -> Iterator[tuple[int, list[str]]]:
    """Data rows with their 1-based line numbers, read one line at a time."""
    for number, line in enumerate(csvio.lines(handle, path), start=header_line + 1):
        text = line.rstrip("\r\n")
        # ncu's own messages also trail the table (``==PROF== Disconnected ...``) when stdout
        # is captured; they are never data.
        if text and not _NCU_MESSAGE.match(text):
            yield number, split_row(text, path, number)


def _fast_metrics(row: list[str], columns: _Columns) -> dict[str, float] | None:
    """Plain numbers only; None sends the row down the careful path."""
    try:
        metrics = {name: float(row[i]) * f for i, name, f in columns.numeric if row[i]}
    except ValueError:
        return None
    values = metrics.values()
    if any(map(_ZERO.__gt__, values)) or _INF in values:  # negative or infinite: named later
        return None
    return metrics
