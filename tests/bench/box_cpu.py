"""Where the box's CPU went during a load test: PostgreSQL's processes and the whole box.

Linux only (``/proc``). PostgreSQL's share is every ``postgres`` process's own CPU plus what
its exited backends left in the postmaster's counters of waited-for children, so backends
that start or end within the window are counted once. The box's share is every core's busy
time (``/proc/stat``: everything but idle and I/O wait), other jobs on the box included.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
#: ``/proc/stat``'s ``cpu`` fields that are not busy: idle and I/O wait (steal and the guest
#: times, which user time already holds, come after the first 7).
_NOT_BUSY = (3, 4)


def process_cpu_s(pid: int | str) -> float:
    """User and system CPU seconds of process ``pid`` and its waited-for children."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / TICK


def postgres_cpu_s() -> float:
    """CPU seconds of every running ``postgres`` process, exited backends included."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == "postgres":
                total += process_cpu_s(entry.name)
        except (FileNotFoundError, ProcessLookupError):  # it ended while we looked
            continue
    return total


def box_busy_cpu_s() -> float:
    """Busy CPU seconds of every core since boot."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    return sum(int(v) for i, v in enumerate(fields[:7]) if i not in _NOT_BUSY) / TICK


@dataclass
class CpuWindow:
    """PostgreSQL's and the box's CPU seconds between ``start`` and ``stop``."""

    postgres_s: float = 0.0
    box_s: float = 0.0

    def start(self) -> None:
        self.postgres_s, self.box_s = -postgres_cpu_s(), -box_busy_cpu_s()

    def stop(self) -> None:
        self.postgres_s += postgres_cpu_s()
        self.box_s += box_busy_cpu_s()
