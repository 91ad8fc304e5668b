"""ncu CSV, raw page (``ncu --csv --page raw``): row 1 metric names, row 2 units, a row per launch.

Streams: rows are read one at a time with the csv module and only the columns the recipe
reads are converted, so a file of hundreds of MB is never held in memory.
"""

from __future__ import annotations

import csv
import itertools
import math
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from collectors.base import Collector
from collectors.errors import MalformedReport
from collectors.ncu import csvio, frames, labels, recipe
from collectors.ncu.aggregate import RunBuilder, device_info, profiler_info
from collectors.ncu.metrics import is_relevant
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
    pick: Callable[[list[str]], Sequence[str]]
    factors: tuple[float, ...]

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
        self._bound = {}
        builder = RunBuilder(path, self.name, self.options)
        with path.open(encoding="utf-8", newline="") as handle:
            prelude, header, columns, pending = self._start(handle)
            fast = not pending and frames.ends_cleanly(where, len(header))
            if fast:
                try:
                    facts = frames.read(handle, header, columns.numeric, builder)
                except frames.Fallback:
                    fast = False
        if not fast:  # start again, row by row: names the row and field of what is wrong
            builder = RunBuilder(path, self.name, self.options)
            with path.open(encoding="utf-8", newline="") as handle:
                prelude, header, columns, pending = self._start(handle)
                after = prelude.header_line + (0 if pending else 1)
                rows = itertools.chain(pending, split_rows(handle, where, after))
                facts = self._read_rows(builder, columns, rows)
        cc = builder.device_key[1] if builder.device_key else None
        device, notes = device_info(facts, self.options, cc, prelude.device)
        profiler, _ = profiler_info(None, None)
        return builder.build(device, profiler, notes)

    def _start(
        self, handle: TextIO
    ) -> tuple[csvio.Prelude, list[str], _Columns, list[tuple[int, list[str]]]]:
        """Prelude, header, used columns, and the first data row if there is no units row."""
        prelude, header_line = csvio.read_prelude(handle, self._path)
        cells = split_row(header_line.rstrip("\r\n"), self._path, prelude.header_line)
        header = [labels.header_name(cell) for cell in cells]
        if "Metric Value" in header:
            reason = "a details page, not a raw page"
            raise MalformedReport(self._path, prelude.header_line, "Metric Value", reason)
        line = handle.readline().rstrip("\r\n")
        first = (
            (prelude.header_line + 1, split_row(line, self._path, prelude.header_line + 1))
            if line
            else None
        )
        columns, pending = self._columns(header, first, prelude.header_line + 1)
        return prelude, header, columns, pending

    def _columns(
        self, header: list[str], first: tuple[int, list[str]] | None, units_line: int
    ) -> tuple[_Columns, list[tuple[int, list[str]]]]:
        """Scale per used column from the units row (which a bare export may lack)."""
        for name in ("ID", "Kernel Name"):
            if name not in header:
                reason = f"the header lacks {name!r}"
                raise MalformedReport(self._path, units_line - 1, name, reason)
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
            elif name not in csvio.FIXED_COLUMNS and is_relevant(name):
                unit = units[index] if index < len(units) else ""
                numeric.append((index, name, self._factor(unit, units_line, name)))
        indices = [index for index, _, _ in numeric]
        factors = tuple(factor for _, _, factor in numeric)
        return _Columns(header, tuple(numeric), tuple(strings), _picker(indices), factors), pending

    _path = "?"
    _bound: dict[str | None, recipe.Plan]

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
                    builder.path,
                    csvio.where(line, launch_id or None),
                    None,
                    f"row has {len(row)} fields, the header {width} (truncated file?)",
                )
            cc = row[col["CC"]] if "CC" in col else None
            figs, metrics = self._figures(row, columns, cc, csvio.where(line, launch_id))
            strings = {name: row[i] for i, name in columns.strings}
            device = strings.get("device__attribute_display_name") or (
                row[device_col] if device_col is not None else None
            )
            if (device, cc) != builder.device_key:
                builder.check_device(csvio.where(line, launch_id), device, cc)
            builder.add(
                launch_id,
                row[col["Kernel Name"]],
                figs,
                grid=row[col["Grid Size"]] if "Grid Size" in col else None,
                block=row[col["Block Size"]] if "Block Size" in col else None,
            )
            if facts is None and figs.failed is None:
                facts = device_facts(
                    metrics or self._metrics(row, columns, self._path, ""), strings
                )
        return facts

    def _figures(
        self, row: list[str], columns: _Columns, cc: str | None, label: str
    ) -> tuple[recipe.LaunchFigures, dict[str, float] | None]:
        """A launch's figures: plain rows through the plan bound to columns, others carefully.

        The careful path handles n/a, NaN and separators, and names a bad cell.
        """
        values = _fast_values(row, columns)
        if values is not None:
            plan = self._bound.get(cc)
            if plan is None:
                names = frozenset(name for _, name, _ in columns.numeric)
                position = {name: pos for pos, (_, name, _) in enumerate(columns.numeric)}
                plan = self._bound[cc] = recipe.plan_for(names, cc).bind(position)
            return plan.evaluate(values), None
        metrics = self._metrics(row, columns, self._path, label)
        return recipe.launch_figures(metrics, cc), metrics

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
