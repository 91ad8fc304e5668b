"""Like-for-like history: each stored run's percent of the roof its kernel is usually bound by.

A run's stored percent of roof is against the roof the kernel was bound by *in that run*. When
the binding changes (a GEMM falls off the tensor cores: ``tensor_bf16 -> fp32``, 16x slower),
the stored figure is against a far lower roof and the series stays flat (70% of the tensor roof,
then 70% of the fp32 roof). Trends, sparklines, the dashboard and the digest read the figure
of every run against one roof per series instead: the **reference binding**, the binding most of
the series' runs held (the baseline's binding, as ``rules.timing.baseline_binding`` picks it; a
tie goes to the earlier one). It is recomputed from the stored counters with the formulas of
``rules.roofline.percent_of_resource``:

* a precision ``p``: ``100 * (sum_q F_q / P_p) / T`` (all of the run's FLOPs at ``p``'s peak);
* a tier ``t``: ``100 * (B_t / W_t) / T``,

each on the roof that run was placed on. A run bound by the reference keeps its stored figure;
a run without work at the reference (or whose roof lacks it) keeps its own figure too, as the
verdict does. Pure functions of frames and roofs; no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from rules.roofline import Roof

#: The stored figure, against each run's own binding, kept beside the like-for-like one.
OWN_COLUMN = "own_percent_of_roof"
#: The binding every run of the series is measured against.
REFERENCE_COLUMN = "reference_binding"
#: Consecutive runs a binding must hold to count as a change on the chart (the newest runs
#: count at any length: a kernel that fell last night shows it).
CHANGE_HOLD = 2
_SERIES = ["device", "kernel_key"]


def reference_binding(bindings: Sequence[Any]) -> str | None:
    """The binding most runs held (a tie goes to the earliest); None when none is known."""
    known = [str(b) for b in bindings if isinstance(b, str) and b]
    if not known:
        return None
    counts = Counter(known)
    top = max(counts.values())
    return next(b for b in known if counts[b] == top)


def percent_of_binding(
    binding: str, roof: Roof | None, time_s: float, total_flops: float, nbytes: Mapping[str, float]
) -> float | None:
    """Percent of ``binding``'s roof on ``roof`` for one run's counters (None: not computable)."""
    if roof is None or not time_s or not math.isfinite(time_s) or time_s <= 0:
        return None
    peak = roof.peak_flop_per_s.get(binding)
    if peak is not None:
        amount, rate = total_flops, peak
    else:
        amount, rate = nbytes.get(binding, math.nan), roof.bandwidth_byte_per_s.get(binding, 0.0)
    if not rate or rate <= 0 or not math.isfinite(amount) or amount <= 0:
        return None
    return 100.0 * (amount / rate) / time_s


def _row_percent(row: Any, reference: str, roofs: Mapping[Any, Roof]) -> float | None:
    nbytes = {"dram": row.bytes_dram, "l2": row.bytes_l2, "l1": row.bytes_l1}
    return percent_of_binding(
        reference,
        roofs.get(row.run_id),
        float(row.time_s),
        float(row.total_flops),
        {k: float(v) for k, v in nbytes.items() if v is not None},
    )


def like_for_like_history(frame: pd.DataFrame, roofs: Mapping[Any, Roof]) -> pd.DataFrame:
    """``frame`` with ``percent_of_roof`` against each series' reference binding.

    Args:
        frame: History rows (``rules.frames.HISTORY_COLUMNS``); a series is a (device,
            kernel) pair.
        roofs: The roof each run was placed on, by ``run_id``.

    Returns:
        A new frame: ``percent_of_roof`` like for like, the stored figure in
        ``own_percent_of_roof`` and the binding it is against in ``reference_binding``.
    """
    out = frame.copy()
    out[OWN_COLUMN] = pd.to_numeric(frame["percent_of_roof"], errors="coerce")
    if out.empty:
        out[REFERENCE_COLUMN] = pd.Series(dtype="object")
        return out
    references = out.groupby(_SERIES, sort=False)["binding"].transform(
        lambda b: reference_binding(list(b))
    )
    out[REFERENCE_COLUMN] = references
    changed = (
        references.notna() & out["binding"].notna() & (out["binding"] != references)
    ).to_numpy() & out[OWN_COLUMN].notna().to_numpy()
    values = out[OWN_COLUMN].to_numpy(dtype=float).copy()
    for i in np.flatnonzero(changed):
        row = out.iloc[i]
        other = _row_percent(row, str(row[REFERENCE_COLUMN]), roofs)
        if other is not None:
            values[i] = other
    out["percent_of_roof"] = values
    return out


def binding_changes(series: pd.DataFrame, hold: int = CHANGE_HOLD) -> pd.DataFrame:
    """Where one series' binding changed: columns ``since``, ``from_binding``, ``to_binding``.

    ``series`` is one kernel on one device, oldest first (``timestamp``, ``binding``). A
    binding counts once it held ``hold`` consecutive runs (or is the newest), so a borderline
    kernel that flips for one night does not litter the chart.
    """
    known = series[series["binding"].notna()]
    spans: list[tuple[str, Any, int]] = []  # (binding, first timestamp, runs held)
    for binding, stamp in zip(known["binding"], known["timestamp"], strict=True):
        if spans and spans[-1][0] == binding:
            spans[-1] = (binding, spans[-1][1], spans[-1][2] + 1)
        else:
            spans.append((str(binding), stamp, 1))
    lasting = [s for i, s in enumerate(spans) if s[2] >= hold or i == len(spans) - 1]
    rows = [
        {"since": after[1], "from_binding": before[0], "to_binding": after[0]}
        for before, after in pairwise(lasting)
        if before[0] != after[0]
    ]
    return pd.DataFrame(rows, columns=["since", "from_binding", "to_binding"])
