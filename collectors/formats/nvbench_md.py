"""NVIDIA nvbench markdown output (``--md``, or its default stdout report).

Sections: ``# Devices`` (one ``## [i] `name` `` block of ``* Key: value`` lines), ``# Log``
(``Run:  [1/13] bench [Device=0 Size=2^1 ...]`` lines name the axes; ``Skip:`` lines name
skipped states) and ``# Benchmark Results`` (``## bench``, ``### [i] device``, then a table).
Cells carry human units: ``us``/``ms`` times, binary byte sizes (``KiB``, ``MiB``), SI rates
(``MB/s``), percentages and ``x`` counts; all are converted to SI base units. Values are
rounded to four significant digits, so byte totals are rebuilt from the named sizes when
they agree with throughput x time (see ``_nvbench.dram_bytes``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collectors.base import Collector
from collectors.errors import MalformedReport, shown
from collectors.formats import _nvbench
from collectors.formats._micro import check_unique, numeric_or_text, read_text
from collectors.schema import ProfilerInfo, RunRecord, SourceRef

_BINARY = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40}
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_FREQ = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}
_TIME = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
_CELL = re.compile(r"^(?P<num>[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(?P<unit>\S*)$")
_RUN = re.compile(r"^Run:\s+\[\d+/\d+\]\s+(?P<bench>.*?)\s+\[(?P<state>.*)\]\s*$")
_SKIP = re.compile(r"^Skip:\s+(?P<reason>.*)$")
_AXIS = re.compile(r"([^=\s][^=]*?)=(\S+)")
_DEVICE = re.compile(r"^## \[(?P<index>\d+)\] `(?P<name>.*)`")
_TABLE_DEVICE = re.compile(r"^### \[(?P<index>\d+)\] (?P<name>.*)$")
_MAX_INDEX_DIGITS = 9


@dataclass(frozen=True, slots=True)
class _Table:
    """One results table: its benchmark and device, header and rows with their file lines.

    Attributes:
        bench: The ``## bench`` heading above it.
        device: The index of the ``### [i] device`` heading above it.
        header: The column titles.
        rows: ``(line, cells)`` per data row.
        open_rows: Lines of rows that lack the closing ``|`` the header has (cut short).
    """

    bench: str
    device: int
    header: list[str]
    rows: list[tuple[int, list[str]]]
    open_rows: list[int]


def cell_value(cell: str) -> tuple[float, bool]:
    """A table cell in SI base units, and whether it is a byte size.

    Raises:
        ValueError: The cell is not a number with a unit nvbench prints.
    """
    text = cell.strip()
    if text.endswith("%"):
        try:
            return float(text[:-1]) / 100.0, False
        except ValueError:  # float's own message quotes the whole cell
            raise ValueError(f"not a number: {shown(text)}") from None
    match = _CELL.match(text)
    if not match:
        raise ValueError(f"not a number: {shown(cell.strip())}")
    value, unit = float(match["num"]), match["unit"]
    if unit in _BINARY:
        return value * _BINARY[unit], True
    if unit in _TIME:
        return value * _TIME[unit], False
    if unit == "x":
        return value, False
    if unit.endswith("B/s") and unit[:-3] in _SI:
        return value * _SI[unit[:-3]], False
    if unit in _SI:
        return value * _SI[unit], False
    raise ValueError(f"unknown unit {shown(unit)} in {shown(cell.strip())}")


def _axis_value(cell: str) -> float | str:
    """``"2^10 = 1024"`` -> 1024; other cells as numbers where they read as one."""
    return numeric_or_text(cell.rpartition("=")[2] if "^" in cell and "=" in cell else cell)


def _device_section(lines: list[str], path: Path) -> dict[int, dict[str, Any]]:
    """``## [i] `name` `` blocks -> nvbench JSON device keys (what ``device_info`` reads)."""
    devices: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for number, line in enumerate(lines, start=1):
        if line.startswith("# ") and devices and not line.startswith("# Devices"):
            break
        header = _DEVICE.match(line)
        if header:
            index = _index(header["index"], path, number)
            current = devices.setdefault(index, {"name": header["name"]})
        elif current is not None and line.startswith("* "):
            key, _, value = line[2:].partition(":")
            current.update(_device_field(key.strip(), value.strip()))
    return devices


def _plain_index(text: str) -> bool:
    """Whether a ``Run:`` line's ``Device=`` value reads as an index (5,000 digits do not)."""
    return text.isdigit() and len(text) <= _MAX_INDEX_DIGITS


def _index(digits: str, path: Path, line: int) -> int:
    """A device index (``[0]``); more digits than any machine has devices is an error."""
    if len(digits) > _MAX_INDEX_DIGITS:
        reason = f"a device index of {len(digits):,} digits (no machine has that many devices)"
        raise MalformedReport(str(path), line, None, reason)
    return int(digits)


def _device_field(key: str, value: str) -> dict[str, float]:
    parts = value.split()
    try:
        if key == "SM Version":
            return {"sm_version": float(parts[0])}
        if key == "Number of SMs":
            return {"number_of_sms": int(parts[0])}
        if key == "SM Default Clock Rate":
            return {"sm_default_clock_rate": float(parts[0]) * _FREQ[parts[1]]}
        if key == "Global Memory Bus Peak":
            scale = _SI[parts[1].removesuffix("B/sec")]
            return {"global_memory_bus_bandwidth": float(parts[0]) * scale}
    except (ValueError, KeyError, IndexError):
        return {}  # a device line nvbench prints differently: leave the figure out
    return {}


def _log_states(lines: list[str]) -> tuple[dict[str, list[str]], list[str], list[int]]:
    """Axis names per benchmark from ``Run:`` lines, notes for ``Skip:`` lines, and devices.

    The devices are those of the ``Run:`` lines in order, skipped states included (the
    results tables leave those out).
    """
    axes: dict[str, list[str]] = {}
    notes: list[str] = []
    devices: list[int] = []
    last = ""
    for line in lines:
        run = _RUN.match(line.strip())
        if run:
            pairs = [(n.strip(), v) for n, v in _AXIS.findall(run["state"])]
            axes.setdefault(run["bench"], [n for n, _ in pairs if n != "Device"])
            devices += [int(v) for n, v in pairs[:1] if n == "Device" and _plain_index(v)]
            last = f"{run['bench']} [{run['state']}]"
        skip = _SKIP.match(line.strip())
        if skip and last:
            notes.append(f"skipped state {last}: {skip['reason']}")
    return axes, notes, devices


def _tables(lines: list[str], path: Path) -> Iterator[_Table]:
    """Every results table, with the benchmark and device headings above it."""
    bench, device = "", 0
    header: list[str] = []
    rows: list[tuple[int, list[str]]] = []
    open_rows: list[int] = []
    closed = False  # whether the header row ends with "|" (nvbench's do)
    for number, line in enumerate([*lines, ""], start=1):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not header:
                header, closed = cells, line.rstrip().endswith("|")
            elif not set("".join(cells)) <= set("-: "):
                rows.append((number, cells))
                if closed and not line.rstrip().endswith("|"):
                    open_rows.append(number)
            continue
        if header:
            yield _Table(bench, device, header, rows, open_rows)
            header, rows, open_rows = [], [], []
        if line.startswith("## ") and not _DEVICE.match(line):
            bench = line[3:].strip()
        table_device = _TABLE_DEVICE.match(line)
        if table_device:
            device = _index(table_device["index"], path, number)


class NvbenchMarkdown(Collector):
    """nvbench markdown output: one KernelRecord per table row."""

    name = "nvbench-md"
    description = "nvbench's markdown tables (its default console output)"
    example = "./bench --md run.md"
    suffixes = (".md",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """Nvbench's ``# Devices`` or ``# Benchmark Results`` headings with a device block."""
        text = head.lstrip(b"\xef\xbb\xbf").lstrip()
        return (text.startswith(b"# Devices") or b"\n# Benchmark Results" in head) and bool(
            re.search(rb"^##\s+\[\d+\]", head, re.M)
        )

    def parse(self, path: Path) -> RunRecord:
        """Read the device section, the log's axis names and every results table."""
        lines = read_text(path).splitlines()
        devices = _device_section(lines, path)
        axes, notes, logged = _log_states(lines)
        states = []
        for table in _tables(lines, path):
            states += self._states(table, axes.get(table.bench), path)
        if not states:
            raise MalformedReport(str(path), None, None, "no benchmark results table found")
        names = {i: str(d.get("name", "")) for i, d in devices.items()}
        order: list[int | None] = [*logged, *(s.device for s in states)]
        chosen = _nvbench.choose_device(order, names, self.options.device)
        kept, untimed = _nvbench.gpu_timed([s for s in states if s.device == chosen], states)
        notes = untimed + notes + _nvbench.other_device_notes(states, chosen, names)
        return RunRecord(
            device=_nvbench.device_info(
                devices.get(chosen, {}), self.options.device or "unknown", path, f"device {chosen}"
            ),
            profiler=ProfilerInfo(tool="nvbench"),
            kernels=check_unique(
                [_nvbench.kernel(s, path, self.name, self.options.keys) for s in kept], path
            ),
            notes=tuple(notes),
            sources=(SourceRef(path=str(path), format=self.name),),
        )

    def _states(
        self, table: _Table, axis_names: list[str] | None, path: Path
    ) -> list[_nvbench.State]:
        header = table.header
        _check_rows(table, path)
        n_axes = _axis_count(header, [cells for _, cells in table.rows], axis_names)
        tags = _nvbench.column_tags(header[n_axes:])
        states = []
        for line, cells in table.rows:
            params = {header[i]: _axis_value(cells[i]) for i in range(n_axes)}
            shown = " ".join(f"{header[i]}={cells[i].partition(' =')[0]}" for i in range(n_axes))
            state = _nvbench.State(
                bench=table.bench,
                name=f"Device={table.device} {shown}".strip(),
                device=table.device,
                params=params,
            )
            for column, tag in enumerate(tags, start=n_axes):
                try:
                    value, is_bytes = cell_value(cells[column])
                except ValueError as exc:
                    raise MalformedReport(str(path), line, header[column], str(exc)) from None
                state.fields.setdefault(tag, header[column])
                _nvbench.add_column(state, tag, value, is_bytes=is_bytes)
            states.append(state)
        return states


def _check_rows(table: _Table, path: Path) -> None:
    """Every row has the header's cells and its closing ``|``: none was cut short."""
    for line, cells in table.rows:
        if len(cells) != len(table.header):
            reason = f"expected {len(table.header)} cells, got {len(cells)} (truncated?)"
            raise MalformedReport(str(path), line, None, reason)
        if line in table.open_rows:
            reason = "the row lacks the closing '|' its header has (truncated?)"
            raise MalformedReport(str(path), line, None, reason)


def _axis_count(header: list[str], rows: list[list[str]], names: list[str] | None) -> int:
    """How many leading columns are axes.

    From the log's ``Run:`` lines when present; else up to the first cell that carries a
    unit (axes are plain numbers, ``2^k = n`` or strings).
    """
    if names is not None:
        return sum(1 for title in header if title in names)
    for column in range(len(header)):
        cell = rows[0][column] if rows else ""
        if cell.endswith(("%", "x", "s", "B", "iB")) and _CELL.match(cell.rstrip("%")):
            return column
    return 0
