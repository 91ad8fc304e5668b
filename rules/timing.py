"""Time as the ground truth beside percent of roof: baseline times, ratios, like-for-like roofs.

Percent of roof is measured against the roof a kernel is bound by *now*. When that binding
changed (a GEMM fell off the tensor cores: tensor_bf16 -> fp32), the new figure is against a
lower roof and hides the slowdown; so every kernel also carries its percent of the roof its
baseline was bound by (``percent_of_baseline_roof``) and its time against the baseline's
(``time_ratio``). Rules, the engine and the groups' figures read these helpers; they are
pure functions of a kernel's placement and its baseline, below the context.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from collectors.schema import KernelRecord
from rules.config import RulesConfig
from rules.history import SETTLED_RUNS, KernelHistory
from rules.placement import percent_is_lower_bound
from rules.roofline import Placement, Roof, percent_of_resource, work_at
from rules.stats import GateOptions, current_levels, fast_median
from rules.summary import SPARKLINE_POINTS
from rules.verdict import BaselineSummary, RunBaseline

#: Baseline runs a binding must hold (its usual one, ``KernelHistory.usual_binding``) before it
#: is "the baseline's binding".
MIN_BINDING_RUNS = 3


@lru_cache(maxsize=16384)
def usual(values: tuple[str | None, ...]) -> tuple[str | None, int]:
    """The base branch's value now and how often it occurs: ``KernelHistory``'s usual label.

    The newest ``SETTLED_RUNS`` known values when they agree, else the most common known
    value (the latest wins a tie). The plain-Python statement of what the history index
    computes from its codes (``tests/rules/test_history_usual.py`` holds them equal).
    """
    known = [v for v in values if v]
    if len(known) >= SETTLED_RUNS and len(set(known[-SETTLED_RUNS:])) == 1:
        return known[-1], known.count(known[-1])
    counts = Counter(reversed(known))
    if not counts:
        return None, 0
    value, count = counts.most_common(1)[0]
    return value, count


def baseline_binding(history: KernelHistory, min_runs: int = MIN_BINDING_RUNS) -> str | None:
    """The binding resource of most baseline runs (None with fewer than ``min_runs``)."""
    binding, count = history.usual_binding
    return binding if count >= min_runs else None


def median_time(values: npt.ArrayLike) -> float | None:
    """Median of the finite, positive times (None when there are none)."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array) & (array > 0)]
    return fast_median(array) if array.size else None


def median_value(values: npt.ArrayLike) -> float | None:
    """Median of the finite values (None when there are none)."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    return fast_median(array) if array.size else None


def ratio(now: float | None, before: float | None) -> float | None:
    """``now / before`` (None when either is unknown or ``before`` is not positive)."""
    if now is None or before is None or before <= 0 or not math.isfinite(now):
        return None
    return now / before


def lacks_a_count(kernel: KernelRecord) -> bool:
    """Whether the kernel has no FLOP counts or no byte counts, measured or declared.

    A count of zero is a count (a copy's FLOPs): only an absent kind is lacking.
    """
    flops, nbytes = kernel.work()
    return not (flops and nbytes)


def like_for_like_percent(placement: Placement, history: KernelHistory) -> float | None:
    """Percent of the roof the kernel's baseline was bound by (its own when unchanged).

    ``history`` is the kernel's baseline (``percent_at`` its binding). Falls back to
    ``percent_of_roof`` when the baseline has no usual binding or the current kernel has no
    work at it.
    """
    binding = baseline_binding(history)
    if binding is None or binding == placement.binding:
        return placement.percent_of_roof
    other = percent_at(placement, history, binding)
    return other if other is not None else placement.percent_of_roof


def percent_at(placement: Placement, history: KernelHistory, binding: str) -> float | None:
    """Percent of ``binding``'s roof in the kernel's time, for the work its baseline did there.

    ``100 * median(W) / rate / T``, the kernel's own figure times ``median(W) / its work``:
    W the work of the newest ``SETTLED_RUNS`` baseline runs bound by ``binding`` (total FLOPs
    for a precision, bytes for the dram tier: what a history keeps; the newest, as a shape
    the benchmark changed earlier does not count), else the kernel's own
    (``percent_of_resource``); None when the kernel has no work there. Time, the
    ground truth, then says how far it moved whatever work it does at that roof now: a fusion
    that moved 1/200 of the dram bytes, 1.2x slower than main's unfused nights, read 0.7% of
    the dram roof (-99%) at its own bytes, 66.7% (-16%) at theirs. Where the work did not
    change (a GEMM's FLOPs off the tensor cores) both are the same figure.
    """
    own, work = percent_of_resource(placement, binding), work_at(placement, binding)
    kept = _kept_work(history, binding, placement.roof)
    if own is None or not work or kept is None:
        return own
    held = np.asarray([b == binding for b in history.binding], dtype=bool)
    done = kept[held]
    done = done[np.isfinite(done) & (done > 0)][-SETTLED_RUNS:]
    return own * fast_median(done) / work if done.size else own


def _kept_work(history: KernelHistory, binding: str, roof: Roof) -> npt.NDArray[np.float64] | None:
    """The history's work at ``binding`` per run: FLOPs, dram bytes (None: not kept)."""
    if binding in roof.peak_flop_per_s:
        return history.total_flops
    return history.bytes_dram if binding == "dram" else None


def baseline_binding_rows(history: KernelHistory) -> slice | None:
    """The runs since the baseline took its binding (None: all of them, or none to tell).

    The newest runs bound by ``baseline_binding`` (or unknown), when older ones were bound
    otherwise: after main broke a fusion and kept it, its nights at the dram roof.
    """
    binding = baseline_binding(history)
    if binding is None:
        return None
    labels = history.binding
    other = (i for i in range(len(labels) - 1, -1, -1) if labels[i] and labels[i] != binding)
    start = next(other, -1) + 1
    return slice(start, len(labels)) if 0 < start < len(labels) else None


def faster_off_its_binding(placement: Placement, time_s: float, history: KernelHistory) -> bool:
    """Bound by another resource than its baseline's, and faster than the runs bound so.

    Percent of roof across a change of binding compares two roofs, and time says which way
    it went: a fusion restored reads 1.4% of the dram roof it no longer needs, in 0.23x the
    time of main's nights at the dram roof (not of a window that still holds fused ones).
    """
    binding = baseline_binding(history)
    if binding is None or binding == placement.binding:
        return False
    rows = baseline_binding_rows(history)
    before = median_time(history.time_s if rows is None else history.time_s[rows])
    return before is not None and time_s < before


def sparkline_values(
    history: KernelHistory, reference: str | None, now: tuple[float | None, float]
) -> tuple[float, ...]:
    """The newest ``SPARKLINE_POINTS`` known percents of ``history`` on the row's own reference.

    ``now`` is the row's current figure, a percent of the ``reference`` roof, and the run's
    time. A run bound otherwise reads at the work that figure is for (``percent_at``: the
    baseline's at its binding), in its own time (``percent * time / its time``): the line
    falls where the kernel got slower, whatever work the run did there. Its own work would
    not: after main broke a fusion, the fused nights moved so few bytes that they read 3.3%
    of the dram roof, and the line rose where the kernel got 4x slower. Runs bound by the
    reference, or by nothing known, keep theirs.
    """
    values = np.asarray(history.percent_of_roof, dtype=float).copy()
    percent, time_s = now
    if reference is not None and percent is not None and time_s > 0:
        off = np.asarray([b is not None and b != reference for b in history.binding], dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # stored outliers
            at_now = percent * time_s / np.asarray(history.time_s, dtype=float)
        use = off & np.isfinite(at_now) & (at_now > 0) & np.isfinite(values)
        values[use] = at_now[use]
    return tuple(float(v) for v in values[np.isfinite(values)][-SPARKLINE_POINTS:])


def judged_binding(placement: Placement, history: KernelHistory) -> str | None:
    """The binding whose roof ``like_for_like_percent`` measures against."""
    binding = baseline_binding(history)
    if binding is None or binding == placement.binding:
        return placement.binding
    return binding if percent_of_resource(placement, binding) is not None else placement.binding


def with_time(summary: BaselineSummary, history: KernelHistory) -> BaselineSummary:
    """``summary`` with the baseline's median time and usual binding filled in."""
    update = {"time_s": median_time(history.time_s), "binding": baseline_binding(history)}
    return summary.model_copy(update=update)


def time_fields(
    placement: Placement, summary: BaselineSummary, like_for_like: float | None
) -> dict[str, Any]:
    """The time and like-for-like fields of a ``KernelVerdict``."""
    return {
        "tier": placement.memory.binding,
        "time_ratio": ratio(placement.time_s, summary.time_s),
        "percent_of_baseline_roof": like_for_like,
        "missing": placement.missing,
        "percent_is_lower_bound": percent_is_lower_bound(placement),
    }


def per_run_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Total ``time_s`` per baseline run, oldest first (columns ``run_id``, ``commit``, ``t``)."""
    if frame.empty:
        return pd.DataFrame(columns=["run_id", "commit", "t"])
    times = frame[["run_id", "commit", "timestamp"]].assign(  # not a copy of every column
        _t=pd.to_numeric(frame["time_s"], errors="coerce")
    )
    runs = times.groupby("run_id", sort=False)
    # Each column on its own: what a named ``agg`` computes, at half its cost.
    grouped = pd.DataFrame(
        {
            "commit": runs["commit"].first(),
            "timestamp": runs["timestamp"].first(),
            "t": runs["_t"].sum(),
        }
    )
    ordered = grouped.reset_index().sort_values("timestamp", kind="stable")
    return ordered[["run_id", "commit", "t"]]


def _level_start(totals: npt.NDArray[np.float64], config: RulesConfig) -> int:
    """Where the per-run totals' current level starts, as the gate reads a kernel's level.

    About 5 ms for one series of 60 runs (``bench_check_inprocess.py``); the detector alone
    (``segment_starts``) is cheaper but needs five runs at a new level to see it.
    """
    if not np.isfinite(totals).all():  # fewer runs than the gate's min_runs: NO_LEVEL, 0
        return 0
    with np.errstate(over="ignore", invalid="ignore"):  # a stored 1e308 s run is an outlier
        (level,) = current_levels([totals], options=GateOptions(**config.gate.model_dump()))
    return level.start if level.n else 0


def run_baseline(frame: pd.DataFrame, config: RulesConfig) -> RunBaseline:
    """The run as a whole at baseline: median total GPU time over the runs at its level now.

    The runs since the last change the gate confirms in the series of per-run totals (as a
    kernel's level is read): after main got 1.5x slower and
    stayed, every PR's headline read 446 → 678 ms against the older nights the window still
    held. ``frame``: the comparable history; the kernels ``config`` ignores are left out.
    Without one, ``runs`` is 0 (no baseline yet).
    """
    if frame.empty:
        return RunBaseline(n=0, runs=0, metric="time_s")
    if config.ignore_kernels:
        pairs = frame[["kernel_key", "kernel_name"]].drop_duplicates()
        ignored = {
            str(k)
            for k, n in pairs.itertuples(index=False, name=None)
            if config.is_ignored_kernel(str(k), str(n))
        }
        frame = frame[~frame["kernel_key"].astype(str).isin(ignored)]
    totals = per_run_totals(frame)
    times = totals["t"].to_numpy(dtype=float)
    since = _level_start(times, config)
    commits = [str(c) for c in totals["commit"].iloc[since:] if c]
    return RunBaseline(
        n=len(times) - since,
        runs=len(totals),
        time_s=median_time(times[since:]),
        commits=(commits[0], commits[-1]) if commits else (),
        metric="time_s",
    )
