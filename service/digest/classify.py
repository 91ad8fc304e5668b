"""The digest's changes by kind: new regressions, improvements, recoveries, unresolved.

A change is new in the period whose scan first found it (``found.with_found``), so each is
reported once over consecutive periods, a step in a period's last nights included; a
regression stays unresolved until a later level of its series comes back within the recovery
tolerance, and its recovery is reported in the period that level had held ``min_segment``
nights (``changes.held_at``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from service.digest.changes import Segments, held_at, in_period
from service.digest.model import DigestOptions


def track_recoveries(
    regressions: pd.DataFrame,
    segments: Segments,
    frame: pd.DataFrame,
    tolerance: float,
    min_segment: int,
    worse: float = -1.0,
) -> tuple[pd.Series, pd.Series]:
    """For each regression, when a later level of its series came back within ``tolerance``.

    ``worse`` is the sign of a regression's move: -1 a drop of percent of roof, +1 a rise of
    time.

    Returns:
        The timestamp of the first night of the recovering segment, and of the night it had
        held ``min_segment`` nights (``changes.held_at``: the period it is reported in); NaT
        when none. Both aligned with ``regressions``.
    """
    later = pd.DataFrame(
        {
            "series": segments.series,
            "seg_later": np.arange(len(segments.bounds)),
            "level": segments.level,
            "start_row": segments.bounds,
        }
    )
    pairs = regressions[["row", "series", "seg", "before"]].merge(later, on="series")
    back = pairs[
        (pairs["seg_later"] > pairs["seg"])
        & (worse * (pairs["level"] - pairs["before"]) <= tolerance * pairs["before"])
    ]
    first = back.groupby("row")["start_row"].min()
    recovered_row = regressions["row"].map(first)
    stamps = pd.Series(pd.NaT, index=regressions.index, dtype="datetime64[ns, UTC]")
    held = stamps.copy()
    has = recovered_row.notna()
    rows = recovered_row[has].to_numpy(dtype=np.int64)
    stamps[has] = frame["timestamp"].array[rows]
    held[has] = held_at(frame, rows, min_segment).to_numpy()
    return stamps, held


@dataclass(frozen=True)
class ClassifiedChanges:
    """The changes of ``detect_changes`` sorted into the digest's sections (frames).

    Attributes:
        regressions: Drops that started in the period, worst first.
        improvements: Rises that started in the period and are not recoveries, best first.
        recoveries: Drops (of any age) whose series came back within tolerance in the period.
        unresolved: Drops not recovered by the end of the period, oldest first.
    """

    regressions: pd.DataFrame
    improvements: pd.DataFrame
    recoveries: pd.DataFrame
    unresolved: pd.DataFrame


def classify(
    changes: pd.DataFrame,
    segments: Segments,
    frame: pd.DataFrame,
    *,
    start: datetime,
    end: datetime,
    options: DigestOptions,
) -> ClassifiedChanges:
    """Split changes into new regressions, improvements, recoveries and unresolved regressions."""
    down = changes[changes["relative_change"] < 0].copy()
    down["recovered_at"], back_held = track_recoveries(
        down, segments, frame, options.recovery_tolerance, options.min_segment
    )
    recovered = down[down["recovered_at"].notna()]
    recovery_stamps = set(zip(recovered["series"], recovered["recovered_at"], strict=True))
    up = changes[changes["relative_change"] > 0]
    is_recovery = pd.Series(
        list(zip(up["series"], up["since"], strict=True)), index=up.index, dtype=object
    ).isin(recovery_stamps)
    return ClassifiedChanges(
        regressions=down[in_period(down["found"], start, end)].sort_values(
            ["relative_change", "kernel_key", "device"]
        ),
        improvements=up[in_period(up["found"], start, end) & ~is_recovery].sort_values(
            ["relative_change", "kernel_key", "device"], ascending=[False, True, True]
        ),
        recoveries=down[in_period(back_held, start, end)].sort_values(
            ["recovered_at", "kernel_key", "device"]
        ),
        unresolved=down[down["recovered_at"].isna()].sort_values(["since", "kernel_key", "device"]),
    )
