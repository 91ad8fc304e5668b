"""ncu CSV, details page (``ncu --csv``, the default page): one row per metric per launch.

All five header layouts seen in real files are read by column name: A (with ``Kernel Time``),
B (A + rule columns), C (``Block Size``/``Grid Size``/``Device``/``CC``), D (C + rules) and
E (D + estimated speedup). Rule rows (no metric name) and ragged metric rows are accepted.
``--print-metric-name name|label|label-name`` are all understood (see collectors.ncu.labels).
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from collectors import csvrows
from collectors.base import Collector
from collectors.errors import MalformedReport, shown
from collectors.ncu import csvio, labels, recipe
from collectors.ncu.aggregate import RunBuilder
from collectors.ncu.metrics import dimension_of, is_relevant
from collectors.ncu.peaks import DeviceFacts, device_facts, device_info
from collectors.ncu.provenance import profiler_info
from collectors.schema import RunRecord

REQUIRED = ("ID", "Kernel Name", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
_OPTIONAL = ("Grid Size", "Block Size", "Device", "CC")


@dataclass(slots=True)
class _Launch:
    """The rows of one launch ID, as they are read."""

    launch_id: str
    line: int
    name: str
    extra: dict[str, str]
    metrics: dict[str, float] = field(default_factory=dict)
    strings: dict[str, str] = field(default_factory=dict)
    #: Its metric rows, (section, metric) in order, each with its line and value cell.
    printed: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    #: The line of each metric read (``metrics``), by name.
    lines: dict[str, int] = field(default_factory=dict)
    nan: tuple[str, str, str] | None = None  # (row, field, cell) of its first NaN value


class NcuCsvDetails(Collector):
    """Nsight Compute CSV, details page (also a failed run that wrote only ncu's messages)."""

    name = "ncu-csv-details"
    description = "Nsight Compute CSV, details page: one row per launch, section and metric"
    example = "ncu --set roofline --csv ./app > run.csv"
    suffixes = (".csv", ".log", ".txt")

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A details header, or ncu messages with no header (a failed run, explained in parse)."""
        header = csvio.header_of(head)
        if header is not None:
            return csvio.is_details_header(header)
        return csvio.has_ncu_messages(head) and b"    Section: " not in head

    def parse(self, path: Path) -> RunRecord:
        """Group rows by launch ID and run the recipe on each launch."""
        self._path = where = str(path)
        builder = RunBuilder(path, self.name, self.options)
        self._units: dict[tuple[str, str | None], float] = {}
        with path.open(encoding="utf-8", newline="") as handle:
            prelude, header_line = csvio.read_prelude(handle, where)
            table = csvio.Table(csvio.lines(handle, where))
            reader = csv.reader(itertools.chain([header_line], table))
            rows = csvio.numbered(reader, prelude.header_line - 1, where)
            _, header = next(rows)
            col = self._columns(header, prelude.header_line)
            facts = self._read(builder, col, rows)
            if not table.trailer:  # else the table's last row was whole (``csvio.Table``)
                self._refuse_cut_end(prelude.header_line - 1 + reader.line_num)
        cc = builder.device_key[1] if builder.device_key else None
        device, notes = device_info(facts, self.options, cc, prelude.device)
        profiler, _ = profiler_info(None, None)
        return builder.build(device, profiler, [*notes, *table.note()])

    def _refuse_cut_end(self, lines_read: int) -> None:
        """Refuse a last value cut inside its quotes or right after its separator (``csvrows``).

        The csv module reads the first as whole, and the second as a missing value.
        """
        last, ends = csvio.last_line(self._path)
        csvrows.refuse_cut_quoted_line(self._path, lines_read - max(0, ends - 1), last)

    def _columns(self, header: list[str], line: int) -> dict[str, int]:
        for name in REQUIRED:
            if name not in header:
                raise MalformedReport(
                    self._path, line, name, f"the details-page header lacks {name!r}"
                )
        return {name: header.index(name) for name in REQUIRED + _OPTIONAL if name in header}

    def _read(
        self, builder: RunBuilder, col: dict[str, int], rows: Iterator[tuple[int, list[str]]]
    ) -> DeviceFacts | None:
        facts: DeviceFacts | None = None
        launch = before = None
        need = col["Metric Value"] + 1
        for line, row, last in csvio.with_last(csvio.blank_end_dropped(rows)):
            try:
                if len(row) < need:
                    launch_id = row[0] if row else None
                    reason = csvio.short_row(len(row), need, last=last)
                    raise MalformedReport(self._path, csvio.where(line, launch_id), None, reason)
                if launch is None or row[col["ID"]] != launch.launch_id:
                    if launch is not None:
                        got = self._finish(builder, launch)
                        facts = facts or got
                    launch, before = self._start(row, col, line), launch
                self._add_row(launch, row, col, line)
            except MalformedReport as exc:  # a second output's rows are no launch: say so
                raise csvio.second_output(self._path, line) or exc from None
        if launch is not None:
            self._refuse_cut_launch(launch, before)
            got = self._finish(builder, launch)
            facts = facts or got
        return facts

    def _refuse_cut_launch(self, last: _Launch, before: _Launch | None) -> None:
        """Refuse a last launch whose metric rows are the first few of the launch before.

        Each row holds one metric, so a file cut between rows reads as whole, its last launch
        with fewer metrics: a duration then came from its cycles, a FLOP count from fewer
        instructions. The launches of one report print the same rows (every corpus file).
        """
        rows, whole = list(last.printed), list(before.printed) if before else []
        if len(rows) < len(whole) and whole[: len(rows)] == rows:
            reason = csvio.cut_launch(len(rows), len(whole), "metric rows")
            raise MalformedReport(self._path, csvio.where(last.line, last.launch_id), None, reason)

    def _start(self, row: list[str], col: dict[str, int], line: int) -> _Launch:
        extra = {name: row[col[name]] for name in _OPTIONAL if name in col}
        return _Launch(row[col["ID"]], line, row[col["Kernel Name"]], extra)

    def _add_row(self, launch: _Launch, row: list[str], col: dict[str, int], line: int) -> None:
        printed = row[col["Metric Name"]]
        if not printed:
            return  # a rule row: Rule Name/Type/Description only
        label = csvio.where(line, launch.launch_id)
        if row[col["Kernel Name"]] != launch.name:
            raise MalformedReport(
                self._path, label, "Kernel Name", "kernel name changes within one launch ID"
            )
        section, cell = row[col["Section Name"]], row[col["Metric Value"]]
        first = launch.printed.setdefault((section, printed), (line, cell))
        if first[0] != line:  # ncu prints a section's metric once a launch (every corpus file)
            raise MalformedReport(self._path, label, printed, _twice(section, first, cell))
        name = labels.metric_name(section, printed)
        if name == "device__attribute_display_name":
            launch.strings[name] = cell
            return
        factor = self._factor(row[col["Metric Unit"]], dimension_of(name), label, printed)
        if is_relevant(name):
            value = csvio.number(cell, self._path, label, printed)
            if value is not None:
                self._refuse_other_value(launch, name, value * factor, label, printed)
                launch.metrics[name], launch.lines[name] = value * factor, line
                if launch.nan is None and math.isnan(value):
                    launch.nan = (label, printed, cell)

    def _refuse_other_value(
        self, launch: _Launch, name: str, value: float, label: str, printed: str
    ) -> None:
        """Refuse a metric another section of the launch printed with another value.

        Two sections may show one metric; with two values, either could be the launch's. One
        value in two units (814048 ns, 814.048 us) differs in its last bits: that is the same.
        """
        old = launch.metrics.get(name)
        if old is None or math.isclose(old, value, rel_tol=1e-9):
            return
        if math.isnan(old) and math.isnan(value):
            return
        first = launch.lines[name]
        reason = f"another section gives {name} another value ({old:g} at line {first})"
        raise MalformedReport(self._path, label, printed, reason)

    def _factor(self, unit: str, dimension: str | None, label: str, printed: str) -> float:
        """The scale of ``unit``, which must measure ``dimension`` (the metric's; None: any)."""
        factor = self._units.get((unit, dimension))
        if factor is None:
            factor = csvio.unit_scale(unit, dimension, self._path, label, printed)
            self._units[(unit, dimension)] = factor
        return factor

    def _finish(self, builder: RunBuilder, launch: _Launch) -> DeviceFacts | None:
        label = csvio.where(launch.line, launch.launch_id)
        device = launch.strings.get("device__attribute_display_name") or launch.extra.get("Device")
        cc = launch.extra.get("CC")
        builder.check_device(label, device, cc)
        figs = recipe.launch_figures(launch.metrics, cc)
        if launch.nan is not None and figs.failed is None:  # not a failed replay
            raise csvio.nan_beside_duration(self._path, *launch.nan)
        grid, block = launch.extra.get("Grid Size"), launch.extra.get("Block Size")
        builder.add(launch.launch_id, launch.name, figs, grid=grid, block=block, row=label)
        return device_facts(launch.metrics, launch.strings) if figs.failed is None else None


def _twice(section: str, first: tuple[int, str], cell: str) -> str:
    """The reason for a metric row repeated within one launch (or a launch printed twice)."""
    where = f"printed twice in section {shown(section)} of one launch"
    if first[1] != cell:
        return f"{where} with two values ({shown(first[1])} at line {first[0]}, {shown(cell)} here)"
    return f"{where} (first at line {first[0]}): a repeated row or launch"
