"""Writers of small ncu files for tests (raw page and details page), as ncu prints them."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

FIXED = [
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
]
DETAILS = [*FIXED, "Section Name", "Metric Name", "Metric Unit", "Metric Value"]


def launch_cells(launch_id: int, kernel: str, cc: str = "8.0", device: str = "0") -> list[str]:
    return [
        str(launch_id),
        "4242",
        "app",
        "127.0.0.1",
        kernel,
        "1",
        "7",
        "(256, 1, 1)",
        "(80, 1, 1)",
        device,
        cc,
    ]


def write_raw(
    path: Path,
    metrics: Sequence[tuple[str, str]],
    rows: Sequence[tuple[int, str, Sequence[str]]],
    *,
    prelude: Sequence[str] = ("==PROF== Connected to process 4242 (/usr/bin/app)",),
    cc: str | Sequence[str] = "8.0",
) -> Path:
    """A raw page: ``metrics`` are (name, unit); ``rows`` are (ID, kernel, values)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        for line in prelude:
            handle.write(line + "\n")
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(FIXED + [m for m, _ in metrics])
        writer.writerow([""] * len(FIXED) + [u for _, u in metrics])
        for number, (launch_id, kernel, values) in enumerate(rows):
            ccs = [cc] * len(rows) if isinstance(cc, str) else list(cc)
            writer.writerow(launch_cells(launch_id, kernel, ccs[number]) + list(values))
    return path


def write_details(
    path: Path,
    rows: Sequence[tuple[int, str, str, str, str, str]],
    *,
    header: Sequence[str] = DETAILS,
) -> Path:
    """A details page: ``rows`` are (ID, kernel, section, metric, unit, value)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        for launch_id, kernel, section, metric, unit, value in rows:
            writer.writerow([*launch_cells(launch_id, kernel), section, metric, unit, value])
    return path
