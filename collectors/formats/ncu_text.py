"""ncu's human-readable details output (``ncu`` without ``--csv``): tables, auto-scaled units.

Each section prints a table framed by dashed lines whose runs give the column spans::

    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- -------------
    Metric Name             Metric Unit  Metric Value
    ----------------------- ----------- -------------
    Duration                         ms         20.85

Units are scaled (``Ghz``, ``ms``, ``Mbyte``) and values carry separators. A launch starts at a
kernel line ``  name (g, g, g)x(b, b, b), Context c, Stream s[, Device d, CC x.y]``; output
captured without it (as in the corpus) is one launch named after the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from collectors.base import Collector
from collectors.errors import MalformedReport, shown
from collectors.ncu import csvio, labels, recipe
from collectors.ncu.aggregate import RunBuilder
from collectors.ncu.metrics import is_relevant
from collectors.ncu.peaks import DeviceFacts, device_facts, device_info
from collectors.ncu.provenance import profiler_info
from collectors.schema import RunRecord
from collectors.textio import undecodable
from collectors.units import UnknownUnit, unit_factor

_SECTION = re.compile(r"^\s+Section: (.+?)\s*$")
_RULE = re.compile(r"^\s+-{3,}(?: -{3,})+\s*$")
_KERNEL = re.compile(
    r"^  (?P<name>\S.*?) (?P<grid>\(\d+, \d+, \d+\))x(?P<block>\(\d+, \d+, \d+\)),"
    r" Context \d+, Stream \d+"
    r"(?:, Device (?P<device>\d+), CC (?P<cc>[\d.]+))?\s*$"
)


@dataclass(slots=True)
class _Launch:
    name: str
    line: int
    grid: str | None = None
    block: str | None = None
    device: str | None = None
    cc: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    sections: list[str] = field(default_factory=list)  # as printed, in order


class NcuText(Collector):
    """Nsight Compute text (non-CSV) details output."""

    name = "ncu-text"
    description = "Nsight Compute's printed section tables (the default console output)"
    example = "ncu --set roofline ./app > run.txt"
    suffixes = (".txt", ".log")

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """A ``Section:`` line followed by a dashed table with the metric columns."""
        return (
            re.search(rb"(?m)^\s+Section: ", head) is not None
            and b"Metric Name" in head
            and b"Metric Value" in head
        )

    def parse(self, path: Path) -> RunRecord:
        """Read every section table of every launch."""
        self._path = str(path)
        builder = RunBuilder(path, self.name, self.options)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise undecodable(self._path, exc) from None
        self._lines = len(lines)
        launches = self._launches(lines, path.stem)
        if not launches:
            raise MalformedReport(self._path, None, None, "no ncu section table in the file")
        facts: DeviceFacts | None = None
        for number, launch in enumerate(launches):
            label = csvio.where(launch.line, str(number))
            builder.check_device(label, launch.device, launch.cc)
            figs = recipe.launch_figures(launch.metrics, launch.cc)
            builder.add(str(number), launch.name, figs, grid=launch.grid, block=launch.block)
            if facts is None and figs.failed is None:
                facts = device_facts(launch.metrics)
        cc = launches[0].cc
        device, notes = device_info(facts, self.options, cc, csvio.device_from_lines(lines))
        if not _KERNEL.match("\n".join(lines[:1])) and launches[0].name == path.stem:
            notes.append("the output names no kernel; the file name is used")
        profiler, _ = profiler_info(None, None)
        return builder.build(device, profiler, notes)

    def _launches(self, lines: list[str], stem: str) -> list[_Launch]:
        launches: list[_Launch] = []
        section = ""
        spans: list[tuple[int, int]] | None = None
        rules_seen = 0
        for number, line in enumerate(lines, start=1):
            kernel = _KERNEL.match(line)
            if kernel:
                launches.append(
                    _Launch(
                        kernel["name"],
                        number,
                        kernel["grid"],
                        kernel["block"],
                        kernel["device"],
                        kernel["cc"],
                    )
                )
                continue
            found = _SECTION.match(line)
            if found:
                section, spans, rules_seen = found.group(1), None, 0
                if not launches:
                    launches.append(_Launch(stem, number))
                launches[-1].sections.append(section)
                continue
            if _RULE.match(line):
                spans = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
                rules_seen += 1
                continue
            if spans and len(spans) == 3 and rules_seen % 2 == 0 and rules_seen and line.strip():
                if not launches:
                    reason = "a table row before any kernel or 'Section:' line"
                    raise MalformedReport(self._path, number, None, reason)
                self._row(launches[-1], section, line, spans, number)
        if rules_seen and rules_seen % 2 == 0:  # inside a table's rows
            reason = f"the table of section {section!r} is not closed (a cut file?)"
            raise MalformedReport(self._path, len(lines), None, reason)
        _refuse_cut_launch(self._path, launches)
        return launches

    def _row(
        self, launch: _Launch, section: str, line: str, spans: list[tuple[int, int]], number: int
    ) -> None:
        """``_read_row``; a row it refuses on the file's last line is said to be cut.

        Such a row stops where the file does (``unknown unit 'cycl'``).
        """
        try:
            self._read_row(launch, section, line, spans, number)
        except MalformedReport as exc:
            if number == self._lines:
                exc.reason += " (a cut file?)"
            raise

    def _read_row(
        self, launch: _Launch, section: str, line: str, spans: list[tuple[int, int]], number: int
    ) -> None:
        """One table row: name, unit and value by the spans of the dashed rule above it."""
        printed = line[spans[0][0] : spans[0][1]].strip()
        unit = line[spans[1][0] : spans[1][1]].strip()
        cell = line[spans[2][0] :].strip()
        name = labels.metric_name(section, printed)
        label = csvio.where(number, None)
        try:
            factor = unit_factor(unit)
        except UnknownUnit:
            raise MalformedReport(
                self._path, label, printed, f"unknown unit {shown(unit)}"
            ) from None
        if is_relevant(name):
            value = csvio.number(cell, self._path, label, printed)
            if value is not None:
                launch.metrics[name] = value * factor


def _refuse_cut_launch(path: str, launches: list[_Launch]) -> None:
    """Refuse a last launch whose sections are the first few of the launch before.

    A file cut between two sections reads as whole, its last launch without the later ones
    (its DRAM bytes, say); so does one cut inside a ``Section:`` line, whose name is then
    the start of the one printed before. The launches of one report print the same sections.
    """
    if len(launches) < 2:
        return
    last, whole = launches[-1].sections, launches[-2].sections
    if len(last) < len(whole) and _begins(whole, last):
        reason = csvio.cut_launch(len(last), len(whole), "sections")
        raise MalformedReport(path, launches[-1].line, None, reason)


def _begins(whole: list[str], part: list[str]) -> bool:
    """Whether ``part`` is the first sections of the longer ``whole``, its last name perhaps cut."""
    if not part:
        return True
    *named, cut = part
    return whole[: len(named)] == named and whole[len(named)].startswith(cut)
