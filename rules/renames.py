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
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

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


def recent_kernels(history: pd.DataFrame, runs: int) -> pd.DataFrame:
    """Rows of the ``runs`` most recent baseline runs, latest last, one row per kernel."""
    latest = history.groupby("run_id", sort=False)["timestamp"].max().sort_values(kind="stable")
    recent = history[history["run_id"].isin(set(latest.index[-runs:]))]
    ordered = recent.sort_values("timestamp", kind="stable")
    return ordered.drop_duplicates("kernel_key", keep="last").sort_values("kernel_key")


def pair_by_work(new: Mapping[str, Work], vanished: Mapping[str, Work]) -> dict[str, str]:
    """New key -> the vanished key whose work it does, where each has exactly one match."""
    matches = {
        key: [old for old, was in vanished.items() if _same(work, was)] for key, work in new.items()
    }
    claimed = [old for olds in matches.values() for old in olds]
    return {
        key: olds[0]
        for key, olds in matches.items()
        if len(olds) == 1 and claimed.count(olds[0]) == 1
    }


def _same(a: Work, b: Work) -> bool:
    """Both FLOPs and DRAM bytes known and within ``SAME_WORK``, and some work done."""
    close = all(
        math.isfinite(x) and math.isfinite(y) and abs(x - y) <= SAME_WORK * max(x, y)
        for x, y in zip(a, b, strict=True)
    )
    return close and max(*a) > 0
