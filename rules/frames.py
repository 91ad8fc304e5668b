"""Column contracts of the DataFrames that cross from the history store into the rules.

The store (service/store/history.py) is the single place that turns SQL rows into these frames;
rules check the columns they need with ``require_columns`` and never see SQL.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from rules.errors import RuleError

#: One row per (baseline run, kernel): what the baseline of a kernel is made of. Oldest first.
HISTORY_COLUMNS: dict[str, str] = {
    "run_id": "history-store id of the run",
    "commit": "commit SHA of the run",
    "timestamp": "when the run was measured (tz-aware UTC)",
    "kind": "nightly | pr | local",
    "kernel_key": "identity key of the kernel",
    "kernel_name": "display name",
    "device": "device name as stored (catalog id when known)",
    "roof_source": "datasheet | report | measured | custom",
    "percent_of_roof": "100 * T_roof / T (NaN when unplaced)",
    "regime": "memory-bound | compute-bound | None",
    "binding": "binding precision or tier",
    "time_s": "kernel's total measured time",
    "total_flops": "sum of FLOPs over precisions (NaN when unknown)",
    "bytes_dram": "DRAM bytes (NaN when unknown)",
    "bytes_l2": "L2 bytes (NaN when unknown)",
    "bytes_l1": "L1 bytes (NaN when unknown)",
    "driver": "driver version of the run (None when unknown)",
    "clock_control": "profiler clock control of the run",
    "cache_control": "profiler cache control of the run",
    "trusted": "False when the runner failed its health preflight",
}


def require_columns(frame: pd.DataFrame, columns: Iterable[str], where: str) -> None:
    """Raise RuleError naming ``where`` and the missing columns, if any are missing."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise RuleError(f"{where}: frame lacks columns {missing}")


def empty_history() -> pd.DataFrame:
    """A history frame with every column and no rows (a kernel or device without history)."""
    return pd.DataFrame({name: pd.Series(dtype="object") for name in HISTORY_COLUMNS})
