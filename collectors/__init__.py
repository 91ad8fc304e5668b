"""Collectors: profiler and benchmark outputs -> RunRecord (see collectors.schema)."""

from __future__ import annotations

from pathlib import Path

from collectors import safety
from collectors.base import CollectOptions
from collectors.registry import all_collectors, detect, get
from collectors.schema import KernelRecord, RunRecord

__all__ = [
    "CollectOptions",
    "KernelRecord",
    "RunRecord",
    "all_collectors",
    "collect",
    "detect",
    "get",
]


def collect(
    path: str | Path, fmt: str | None = None, options: CollectOptions | None = None
) -> RunRecord:
    """Read one file into a RunRecord, choosing the collector by content unless ``fmt`` is given.

    Raises:
        CollectorError: Whatever is wrong with the file, naming it (see ``collectors.safety``).
    """
    p = Path(path)
    collector = get(fmt) if fmt else detect(p)
    return safety.read(collector(options), p)
