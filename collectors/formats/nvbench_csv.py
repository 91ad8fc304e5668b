"""NVIDIA nvbench ``--csv`` output.

Columns: ``Benchmark, Device, Device Name``, then the axes (a ``pow2`` axis appears twice:
``Size (pow2)`` = ``2^22`` and ``Size`` = 4194304), ``Skipped``, then the summaries with their
unit in the title (``GPU Time (sec)``, ``GlobalMem BW (bytes/sec)``) and repeated titles
(``Samples``, ``Noise``) resolved by position. Values are in base units. States become
KernelRecords exactly as for nvbench JSON (see ``_nvbench``).
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from collectors import csvrows
from collectors.base import Collector
from collectors.errors import MalformedReport, shown
from collectors.formats import _nvbench
from collectors.formats._micro import check_unique, number, numeric_or_text, read_text
from collectors.schema import DeviceInfo, ProfilerInfo, RunRecord, SourceRef

_HEAD = ("Benchmark", "Device", "Device Name")
_POW2 = re.compile(r"^\s*2\s*\^\s*([0-9]{1,4})\s*$")
#: 2.0 ** 1024 is past a float's range.
_FLOAT_EXPONENT = 1024


#: The unit nvbench ``--csv`` puts in the title of each summary it names, by the summary's
#: hint: its values are in these base units. Samples, Noise and BWUtil carry none.
_UNITS = {
    "GPU Time": "sec",
    "CPU Time": "sec",
    "Batch GPU": "sec",
    "GlobalMem BW": "bytes/sec",
    "Elem/s": "elem/sec",
    "BWUtil": "",
    "Samples": "",
    "Noise": "",
}


def _check_units(titles: list[str], path: Path) -> None:
    """Refuse a summary column whose title names a unit nvbench does not write for it.

    Values are read in the base unit the title should name: ``GPU Time (ms)`` read so was a
    time 1,000 times too short.
    """
    for title in titles:
        base = _nvbench.column_base(title)
        unit = title.strip()[len(base) :].strip().removeprefix("(").removesuffix(")")
        expected = _UNITS.get(base)
        if expected is None or not unit or unit == expected:
            continue
        writes = f"in {expected}" if expected else "without a unit"
        raise MalformedReport(
            str(path),
            1,
            title,
            f"unit {shown(unit)} in the title: nvbench --csv writes {base} {writes}, "
            "and roofguard reads its values so",
        )


def _pow2(cell: str) -> float | str:
    """``2^22`` -> 4194304.0; a power past a float's range (or not of 2) stays text.

    The exponent is bounded before it is used: ``2 ** int("99999999999")`` would take the
    worker's memory and time, and four digits already pass a float's range.
    """
    match = _POW2.match(cell)
    if match and int(match[1]) < _FLOAT_EXPONENT:
        return math.ldexp(1.0, int(match[1]))
    return numeric_or_text(cell)


def _axes(header: list[str], skipped_at: int) -> dict[str, int]:
    """Axis name -> column; a plain column wins over its ``(pow2)`` twin."""
    axes: dict[str, int] = {}
    for column in range(len(_HEAD), skipped_at):
        title = header[column]
        name = title.removesuffix(" (pow2)")
        if name not in axes or title == name:
            axes[name] = column
    return axes


def shown_pow2(header: list[str]) -> set[str]:
    """Axis names that have a ``(pow2)`` column (nvbench prints those as ``2^k``)."""
    return {t.removesuffix(" (pow2)") for t in header if t.endswith(" (pow2)")}


class NvbenchCsv(Collector):
    """nvbench ``--csv`` output: one KernelRecord per state row."""

    name = "nvbench-csv"
    description = "nvbench --csv output: one row per state"
    example = "./bench --csv run.csv"
    suffixes = (".csv",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """The header starts with ``Benchmark,Device,Device Name``."""
        return head.lstrip(b"\xef\xbb\xbf").startswith(b"Benchmark,Device,Device Name")

    def parse(self, path: Path) -> RunRecord:
        """Read every state row."""
        text = read_text(path)
        _refuse_cut_end(text, str(path))
        rows = csvrows.numbered(csv.reader(io.StringIO(text)), str(path))
        _, header = next(rows, (1, []))
        if tuple(header[:3]) != _HEAD or "Skipped" not in header:
            raise MalformedReport(str(path), 1, None, "not an nvbench --csv header")
        skipped_at = header.index("Skipped")
        axes = _axes(header, skipped_at)
        _check_units(header[skipped_at + 1 :], path)
        tags = _nvbench.column_tags(header[skipped_at + 1 :])
        states, notes, names = [], [], {}
        for line, row in rows:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                reason = f"expected {len(header)} fields, got {len(row)} (truncated?)"
                raise MalformedReport(str(path), line, None, reason)
            state = self._state(row, line, axes, header, skipped_at, tags, path)
            names[state.device] = row[2]
            if row[skipped_at].strip().lower() == "yes":
                notes.append(f"skipped state {state.row}")
            else:
                states.append(state)
        return self._run(states, notes, names, path)

    def _state(
        self,
        row: list[str],
        line: int,
        axes: dict[str, int],
        header: list[str],
        skipped_at: int,
        tags: list[str],
        path: Path,
    ) -> _nvbench.State:
        params = {name: _pow2(row[col]) for name, col in axes.items()}
        device = int(number(row[1], path, line, "Device"))
        twins = shown_pow2(header)
        shown = {
            header[c].removesuffix(" (pow2)"): row[c]
            for c in range(len(_HEAD), skipped_at)
            if header[c].endswith(" (pow2)") or header[c] not in twins
        }
        axis_text = " ".join(f"{name}={value}" for name, value in shown.items())
        state = _nvbench.State(
            bench=row[0], name=f"Device={device} {axis_text}".strip(), device=device, params=params
        )
        for offset, tag in enumerate(tags):
            column = skipped_at + 1 + offset
            if row[column].strip():
                value = number(row[column], path, line, header[column])
                state.fields.setdefault(tag, header[column])
                _nvbench.add_column(state, tag, value, is_bytes=header[column].endswith("(bytes)"))
        return state

    def _run(
        self,
        states: list[_nvbench.State],
        notes: list[str],
        names: dict[int | None, str],
        path: Path,
    ) -> RunRecord:
        named = {i: n for i, n in names.items() if i is not None}
        chosen = _nvbench.choose_device(named, named, self.options.device)  # skipped rows too
        kept, untimed = _nvbench.gpu_timed([s for s in states if s.device == chosen], states)
        kernels = [_nvbench.kernel(s, path, self.name, self.options.keys) for s in kept]
        notes[:0] = untimed
        notes += _nvbench.other_device_notes(states, chosen, named)
        peak = _nvbench.implied_bus_bandwidth(kept)
        if peak is not None:
            notes.append(
                f"DRAM roof {peak / 1e9:.4g} GB/s implied by the rows' GlobalMem BW / BWUtil "
                "(nvbench's bus peak; --csv prints no device section)"
            )
        return RunRecord(
            device=DeviceInfo(
                name=named.get(chosen) or self.options.device or "unknown",
                bandwidth_byte_per_s={"dram": peak} if peak is not None else {},
            ),
            profiler=ProfilerInfo(tool="nvbench"),
            kernels=check_unique(kernels, path),
            notes=tuple(notes),
            sources=(SourceRef(path=str(path), format=self.name),),
        )


def _refuse_cut_end(text: str, path: str) -> None:
    """Refuse a file with no row after its header, or a last row cut short.

    Cut inside a quoted cell, or anywhere before its line break (``csvrows``): nvbench ends
    every row with one and does not quote its numbers (``0.0016778905703998602`` cut to
    ``0.00`` would be read as another value).
    """
    lines = text.splitlines()
    last = next((n for n in range(len(lines), 0, -1) if lines[n - 1].strip()), None)
    if last is None:
        return
    if last == 1:  # the header (``sniff``)
        raise MalformedReport(path, 1, None, "no state rows after the header")
    csvrows.refuse_cut_unquoted_row(path, last, lines[last - 1], text)
