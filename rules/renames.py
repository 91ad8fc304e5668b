"""A new kernel doing the very work of one that vanished: likely a rename, said and not assumed.

A pull request that renames a kernel (``softmax_kernel`` to ``softmax_kernel_v2``) shows a new
kernel and a missing one, and neither is judged: a slowdown that came with the rename hides
behind two warnings about inventory. When exactly one new kernel does the FLOPs and DRAM bytes
of exactly one kernel of the latest baseline run that vanished, new-kernel and missing-kernel
name the pair, and the new kernel's finding gives its figures against the old one's baseline.
They are not judged as one kernel: two kernels of one shape are common (each layer's GEMM),
so the pairing is a likely reading for a person to confirm with ``aliases``, not a verdict.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.roofline import Placement, work_at

#: The FLOPs and the DRAM bytes of a new kernel and a vanished one agree within this share:
#: the same work. Counts of one shape agree exactly run to run; 1% leaves room for a
#: profiler's replay noise on byte counters.
SAME_WORK = 0.01


#: A kernel's work as a rename is matched on: total FLOPs and DRAM bytes (NaN: unknown).
Work = tuple[float, float]


@dataclass(frozen=True)
class Rename:
    """A new kernel and the vanished one whose work it does.

    Attributes:
        new_key: The new kernel's key.
        old_key: The vanished kernel's key.
        old_name: The vanished kernel's name.
        baseline_percent: Median percent of roof of the old kernel's baseline runs.
        baseline_time_s: Median time of the old kernel's baseline runs.
    """

    new_key: str
    old_key: str
    old_name: str
    baseline_percent: float | None
    baseline_time_s: float | None


def work_of(placement: Placement) -> Work:
    """A placed kernel's work as renames are matched on (NaN: no DRAM bytes counted)."""
    return placement.total_flops, work_at(placement, "dram") or math.nan


def recent_kernels(history: pd.DataFrame, runs: int) -> pd.DataFrame:
    """Rows of the ``runs`` most recent baseline runs, latest last, one row per kernel."""
    latest = history.groupby("run_id", sort=False)["timestamp"].max().sort_values(kind="stable")
    recent = history[history["run_id"].isin(set(latest.index[-runs:]))]
    ordered = recent.sort_values("timestamp", kind="stable")
    return ordered.drop_duplicates("kernel_key", keep="last").sort_values("kernel_key")


def pair_by_work(new: Mapping[str, Work], vanished: Mapping[str, Work]) -> dict[str, str]:
    """New key -> the vanished key whose work it does, where each has exactly one match.

    Vanished kernels sorted by FLOPs, each new one looks only at those within ``SAME_WORK``
    of its own (a namespace renamed across 20,000 kernels is no pairwise scan).
    """
    if not new or not vanished:
        return {}
    old_keys, old = _by_flops(vanished)
    new_keys = list(new)
    work = np.array([new[key] for key in new_keys], dtype=float).reshape(-1, 2)
    low = np.searchsorted(old[:, 0], work[:, 0] * (1 - SAME_WORK), side="left")
    high = np.searchsorted(old[:, 0], work[:, 0] / (1 - SAME_WORK), side="right")
    matches = {
        key: _matches(work[i], old, int(low[i]), int(high[i])) for i, key in enumerate(new_keys)
    }
    claimed = Counter(j for found in matches.values() for j in found)
    return {
        key: old_keys[found[0]]
        for key, found in matches.items()
        if len(found) == 1 and claimed[found[0]] == 1
    }


def _by_flops(works: Mapping[str, Work]) -> tuple[list[str], npt.NDArray[np.float64]]:
    keys = list(works)
    table = np.array([works[key] for key in keys], dtype=float).reshape(-1, 2)
    order = np.argsort(table[:, 0], kind="stable")  # NaN last: no window reaches it
    return [keys[i] for i in order], table[order]


def _matches(
    work: npt.NDArray[np.float64], old: npt.NDArray[np.float64], low: int, high: int
) -> list[int]:
    """Rows of ``old`` in ``low:high`` whose FLOPs and DRAM bytes are within ``SAME_WORK``."""
    if high <= low or not np.isfinite(work).all() or work.max() <= 0:
        return []
    window = old[low:high]
    close = np.isfinite(window) & (np.abs(window - work) <= SAME_WORK * np.maximum(window, work))
    return [low + int(i) for i in np.flatnonzero(close.all(axis=1))]
