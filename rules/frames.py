"""Column contracts of the DataFrames that cross from the history store into the rules.

The store (service/store/history.py) is the single place that turns SQL rows into these frames;
rules check the columns they need with ``require_columns`` and never see SQL.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from collectors.schema import KernelRecord, RunRecord
from rules.errors import RuleError
from rules.placement import place_run
from rules.roofline import DEFAULT_BORDERLINE_BAND, Placement, Roof

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
    "peak_flop_time_s": "sum_p F_p / P_p on the run's roof: MFU's numerator (NaN when unknown)",
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


def trusted_mask(frame: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Per row of a history frame, whether its runner passed its health preflight."""
    return ~frame["trusted"].eq(False).to_numpy(dtype=bool)


def trusted_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a history frame a baseline is made of: those of trusted runners only."""
    return frame if frame.empty else frame[trusted_mask(frame)]


def empty_history() -> pd.DataFrame:
    """A history frame with every column and no rows (a kernel or device without history)."""
    return pd.DataFrame({name: pd.Series(dtype="object") for name in HISTORY_COLUMNS})


def _row(
    run: RunRecord, run_id: int | str, kernel: KernelRecord, placement: Placement, trusted: bool
) -> dict[str, object]:
    flops, nbytes = kernel.work()
    return {
        "run_id": run_id,
        "commit": run.commit,
        "timestamp": run.timestamp,
        "kind": run.kind.value,
        "kernel_key": kernel.key,
        "kernel_name": kernel.name,
        "device": placement.roof.device,
        "roof_source": placement.roof.source,
        "percent_of_roof": placement.percent_of_roof
        if placement.percent_of_roof is not None
        else math.nan,
        "regime": placement.regime,
        "binding": placement.binding,
        "time_s": kernel.duration_s,
        "total_flops": float(sum(flops.values())) if flops else math.nan,
        "peak_flop_time_s": placement.peak_flop_time_s or math.nan,
        "bytes_dram": nbytes.get("dram", math.nan),
        "bytes_l2": nbytes.get("l2", math.nan),
        "bytes_l1": nbytes.get("l1", math.nan),
        "driver": run.device.driver,
        "clock_control": run.profiler.clock_control,
        "cache_control": run.profiler.cache_control,
        "trusted": trusted,
    }


def history_from_runs(
    runs: Sequence[RunRecord],
    roof: Roof,
    *,
    band: float = DEFAULT_BORDERLINE_BAND,
    trusted: Sequence[bool] | None = None,
    devices: Sequence[str] | None = None,
) -> pd.DataFrame:
    """A history frame built from records, as the store would return it (oldest first).

    For tests, benchmarks and library users without a store: every kernel of every run is
    placed on ``roof`` with the same formulas the store uses for its derived columns.

    Args:
        runs: Baseline runs; their position is their ``run_id``.
        roof: The roof every run is placed on.
        band: Borderline band for the regime.
        trusted: Per run, whether its runner passed its health preflight (default all).
        devices: Per run, the device column (default ``roof.device``).
    """
    rows = []
    for index, run in enumerate(runs):
        ok = True if trusted is None else trusted[index]
        device = roof.device if devices is None else devices[index]
        for key, placement in place_run(run, roof, band=band).items():
            rows.append(_row(run, index + 1, run.kernel(key), placement, ok) | {"device": device})
    if not rows:
        return empty_history()
    frame = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    return frame.sort_values("timestamp", kind="stable").reset_index(drop=True)
