"""roofguard's flat CSV: one row per kernel, for teams that write their own harness.

Columns (header required, any order): ``name`` and ``duration_s`` (seconds, total over
``launches``) are required; optional are ``key`` (else built from the name and params),
``launches`` (default 1), ``samples`` (per-launch seconds separated by spaces or ``;``),
``flops_<precision>`` (e.g. ``flops_tensor_bf16``), ``bytes_<tier>`` (``bytes_dram``...)
and ``param_<name>`` (benchmark parameters: part of the key, usable by work models).
Empty cells mean "not measured". Leading ``# device: NAME`` / ``# commit: SHA`` /
``# branch: NAME`` comment lines describe the run.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

from collectors import csvrows
from collectors.base import Collector
from collectors.errors import MalformedReport
from collectors.formats._micro import (
    bench_key,
    check_unique,
    kernel_record,
    number,
    numeric_or_text,
    read_text,
    work_hint,
)
from collectors.physics import samples_fault
from collectors.safety import check_sample
from collectors.schema import (
    PRECISIONS,
    TIERS,
    DeviceInfo,
    KernelRecord,
    ProfilerInfo,
    Provenance,
    ProvenanceKind,
    RunRecord,
    SourceRef,
)

_FIXED = ("name", "duration_s", "key", "launches", "samples")
_META = re.compile(r"^#\s*(device|commit|branch)\s*:\s*(.+?)\s*$")


def _check_header(header: list[str], path: Path, line: int) -> None:
    """Refuse a header without the required columns, or with an unknown or repeated one."""
    for column in ("name", "duration_s"):
        if column not in header:
            raise MalformedReport(str(path), line, column, "required column missing")
    seen: set[str] = set()
    for title in header:
        if title in seen:
            raise MalformedReport(str(path), line, title, "the column appears twice")
        seen.add(title)
        slot = title.partition("_")[2]
        known = (
            title in _FIXED
            or (title.startswith("flops_") and slot in PRECISIONS)
            or (title.startswith("bytes_") and slot in TIERS)
            or (title.startswith("param_") and slot)
        )
        if not known:
            raise MalformedReport(str(path), line, title, _unknown_column(title))


def _unknown_column(title: str) -> str:
    kind, _, slot = title.partition("_")
    if kind in ("flops", "bytes") and slot:
        return f"unknown column: {work_hint(kind, slot)}"
    return (
        "unknown column (name, duration_s, key, launches, samples, "
        "flops_<precision>, bytes_<tier>, param_<name>)"
    )


def _width(expected: int, got: int) -> str:
    """Why a row has more or fewer fields than the header: a name's commas, or a cut file."""
    if got < expected:
        return f"expected {expected} fields, got {got} (truncated?)"
    return (
        f"expected {expected} fields, got {got}: quote a name that holds commas, "
        'as a C++ template does ("void k<float, 128>(float*)")'
    )


def _refuse_cut_end(text: str, body: list[tuple[int, str]], path: str) -> None:
    """Refuse a file with no row after its header, or whose last row is cut (``csvrows``).

    A whole file ends its last row with a line break; numbers are not quoted, so a cut in
    the last one (``8000000`` to ``80``), or right after a separator, says so by nothing else.
    """
    if len(body) == 1:
        raise MalformedReport(path, body[0][0], None, "no kernel rows after the header")
    csvrows.refuse_cut_unquoted_row(path, *body[-1], text)


def _lines(text: str) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """Run metadata from leading comments, and the remaining (line number, line) pairs."""
    meta: dict[str, str] = {}
    body: list[tuple[int, str]] = []
    for number_, line in enumerate(text.splitlines(), start=1):
        match = _META.match(line)
        if match and not body:
            meta[match[1]] = match[2]
        elif line.strip() and not (line.startswith("#") and not body):
            body.append((number_, line))
    return meta, body


class RoofguardCsv(Collector):
    """roofguard's flat per-kernel CSV."""

    name = "roofguard-csv"
    description = "roofguard's flat CSV: one row per kernel, for a harness of your own"
    example = "printf 'name,duration_s\\nmy_kernel,0.0012\\n' > run.csv  # a harness of your own"
    suffixes = (".csv",)
    priority = 5

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """The first non-comment line is a header with ``name`` and ``duration_s``."""
        for raw in head.decode("utf-8", "replace").lstrip("\ufeff").splitlines():
            if raw.strip() and not raw.startswith("#"):
                cells = [c.strip() for c in raw.split(",")]
                return "name" in cells and "duration_s" in cells
        return False

    def parse(self, path: Path) -> RunRecord:
        """Read one kernel per row."""
        text = read_text(path)
        meta, body = _lines(text)
        if not body:
            raise MalformedReport(str(path), None, None, "no header line")
        _refuse_cut_end(text, body, str(path))
        rows = csvrows.numbered(
            csv.reader(line for _, line in body), str(path), lambda n: body[n - 1][0]
        )
        line, cells = next(rows)
        header = [c.strip() for c in cells]
        _check_header(header, path, line)
        kernels = [
            self._kernel(dict(zip(header, row, strict=True)), line, path)
            for line, row in self._rows(rows, header, path)
        ]
        return RunRecord(
            commit=meta.get("commit"),
            branch=meta.get("branch"),
            device=DeviceInfo(name=meta.get("device") or self.options.device or "unknown"),
            profiler=ProfilerInfo(tool="roofguard-csv"),
            kernels=check_unique(kernels, path),
            sources=(SourceRef(path=str(path), format=self.name),),
        )

    def _rows(
        self, rows: Iterator[tuple[int, list[str]]], header: list[str], path: Path
    ) -> Iterator[tuple[int, list[str]]]:
        for count, (line, row) in enumerate(rows, start=1):
            self.options.count(count, path)  # one kernel a row: stop at the cap, not after
            if len(row) != len(header):
                raise MalformedReport(str(path), line, None, _width(len(header), len(row)))
            yield line, row

    def _kernel(self, cells: dict[str, str], line: int, path: Path) -> KernelRecord:
        name = cells["name"].strip()
        if not name:
            raise MalformedReport(str(path), line, "name", "empty kernel name")
        work: dict[str, dict[str, float]] = {"flops": {}, "bytes": {}}
        provenance: dict[str, Provenance] = {}
        params: dict[str, str | float] = {}
        for title, cell in cells.items():
            what, _, slot = title.partition("_")
            if what in work and cell.strip():
                work[what][slot] = number(cell, path, line, title)
                provenance[f"{what}.{slot}"] = Provenance(
                    kind=ProvenanceKind.REPORTED, metrics=(title,), note="roofguard CSV"
                )
            elif what == "param" and cell.strip():
                params[slot] = numeric_or_text(cell)
        launches = number(cells.get("launches") or 1, path, line, "launches")
        if not launches.is_integer():
            raise MalformedReport(str(path), line, "launches", f"not a whole number: {launches}")
        duration = number(cells["duration_s"], path, line, "duration_s")
        samples = self._samples(cells.get("samples", ""), path, line)
        _refuse_samples_apart(duration, int(launches), samples, (path, line))
        return kernel_record(
            path,
            line,
            name=name,
            key=cells.get("key", "").strip() or bench_key(name, params, self.options.keys),
            launches=int(launches),
            duration_s=duration,
            samples_s=samples,
            flops=work["flops"],
            bytes=work["bytes"],
            provenance=provenance,
            params=params,
            source=SourceRef(path=str(path), row=str(line), format=self.name),
        )

    @staticmethod
    def _samples(cell: str, path: Path, line: int) -> tuple[float, ...]:
        parts = cell.replace(";", " ").split()
        samples = tuple(number(p, path, line, "samples") for p in parts)
        for seconds in samples:
            check_sample(seconds, str(path), line, "samples", f"one of {len(samples)} samples")
        return samples


def _refuse_samples_apart(
    duration: float, launches: int, samples: tuple[float, ...], where: tuple[Path, int]
) -> None:
    """Refuse a row whose time per launch lies far outside its per-launch ``samples``.

    Named here by its row and column, before the record's own check
    (``collectors.physics.samples_fault``) would name its ``samples_s``.
    """
    reason = samples_fault(duration, launches, samples)
    if reason is not None:
        path, line = where
        raise MalformedReport(str(path), line, "samples", reason)


def to_csv(run: RunRecord) -> str:
    """Write ``run`` in this format (what a harness would write; ``collect`` reads it back)."""
    flops = sorted({p for k in run.kernels for p in k.flops}, key=PRECISIONS.index)
    tiers = sorted({t for k in run.kernels for t in k.bytes}, key=TIERS.index)
    params = sorted({p for k in run.kernels for p in k.params})
    header = ["name", "key", "duration_s", "launches", "samples"]
    header += [f"flops_{p}" for p in flops] + [f"bytes_{t}" for t in tiers]
    header += [f"param_{p}" for p in params]
    out = io.StringIO()
    out.write(f"# device: {run.device.name}\n")
    for label, value in (("commit", run.commit), ("branch", run.branch)):
        if value:
            out.write(f"# {label}: {value}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for k in run.kernels:
        writer.writerow(
            [k.name, k.key, repr(k.duration_s), k.launches, " ".join(map(repr, k.samples_s))]
            + [repr(k.flops[p]) if p in k.flops else "" for p in flops]
            + [repr(k.bytes[t]) if t in k.bytes else "" for t in tiers]
            + [k.params.get(p, "") for p in params]
        )
    return out.getvalue()
