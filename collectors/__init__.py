"""Collectors: profiler and benchmark outputs -> RunRecord (see collectors.schema).

This module and ``collectors.schema`` (the record contract) are the package's public surface:
``service`` and ``rules`` import from them, never from the modules behind them
(``lint-imports``: "collectors is used through its facade").
"""

from __future__ import annotations

from pathlib import Path

from collectors import safety
from collectors.base import CollectOptions
from collectors.batch import KernelChunk, NotBatchable, RunColumns
from collectors.errors import CollectorError, TooManyKernels, stated_version, validation_reason
from collectors.gcpause import paused_gc
from collectors.identity import KeyOptions, normalise_name
from collectors.physics import MAX_DURATION_S, run_fault
from collectors.registry import all_collectors, detect, get, installed_collectors
from collectors.safety import kernel_error, name_unmeasured
from collectors.schema import MIN_DURATION_S, KernelRecord, RunRecord
from collectors.workdefinition import declared_definition, definition_of
from collectors.workmodel import WorkModel, apply_work_models

__all__ = [
    "MAX_DURATION_S",
    "MIN_DURATION_S",
    "CollectOptions",
    "CollectorError",
    "KernelChunk",
    "KernelRecord",
    "KeyOptions",
    "NotBatchable",
    "RunColumns",
    "RunRecord",
    "TooManyKernels",
    "WorkModel",
    "all_collectors",
    "apply_work_models",
    "collect",
    "collect_columns",
    "declared_definition",
    "definition_of",
    "detect",
    "get",
    "installed_collectors",
    "kernel_error",
    "name_unmeasured",
    "normalise_name",
    "paused_gc",
    "run_fault",
    "stated_version",
    "validation_reason",
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


def collect_columns(
    path: str | Path, fmt: str | None = None, options: CollectOptions | None = None
) -> RunColumns:
    """Read one file of a big format as columns (``collectors.batch``), not records.

    Raises:
        NotBatchable: The format has no column reader, or this file needs the record path
            (``collect``), which also names whatever is wrong with it.
        TooManyKernels: More kernels than ``options.max_kernels``.
    """
    p = Path(path)
    collector = (get(fmt) if fmt else detect(p))(options)
    reader = getattr(collector, "parse_columns", None)
    if reader is None:
        raise NotBatchable(f"{collector.name} has no column reader")
    with paused_gc():
        try:
            columns: RunColumns = reader(p)
        except (NotBatchable, TooManyKernels):
            raise
        except Exception as exc:  # the record path names it (or calls it a bug)
            raise NotBatchable(f"{type(exc).__name__}: {exc}") from exc
    collector.options.count(columns.kernel_count, p)
    if run_fault(columns.head) is not None:
        raise NotBatchable("a device figure no device has")
    return columns
