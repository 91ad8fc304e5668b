"""The work each kernel of some runs was placed with: what a roof change re-reads them from.

``rules.reread_history`` places a run's kernels again on today's datasheet figures from the
work they were stored with (FLOPs by precision, bytes by tier), and tells a ``ClockedRoof``'s
kernels placed on its datasheet roof from the others by the figures they were placed with
(``rules.placedroof``: total FLOPs, peak FLOP time, binding and roof time). Read
only for the runs whose roof changed: the history's frames carry the FLOPs summed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import sqlalchemy as sa

from rules import REREAD_COLUMNS
from service.store.coretables import KERNELS as _KERNELS
from service.store.coretables import MEASUREMENTS as _MEAS
from service.store.sessions import StoreSession

#: The columns ``placed_work`` returns, in this order: the row's key, then what the re-read of
#: a baseline on corrected figures reads of it (``rules.REREAD_COLUMNS``, its ``run_id`` first).
PLACED_WORK_COLUMNS = ("run_id", "kernel_id", "kernel_key", *REREAD_COLUMNS[1:])
_CHUNK = 500


def placed_work(*, session: StoreSession, run_ids: Sequence[int]) -> pd.DataFrame:
    """``PLACED_WORK_COLUMNS`` of every measurement of ``run_ids`` (``flops``: by precision)."""
    m = _MEAS.c
    rows: list[tuple[Any, ...]] = []
    ids = sorted({int(i) for i in run_ids})
    for first in range(0, len(ids), _CHUNK):
        stmt = (
            sa.select(
                m.run_id,
                m.kernel_id,
                _KERNELS.c.key,
                m.flops_json,
                m.bytes_dram,
                m.bytes_l2,
                m.bytes_l1,
                m.total_flops,
                m.peak_flop_time_s,
                m.binding,
                m.t_roof_s,
            )
            .join(_KERNELS, _KERNELS.c.id == m.kernel_id)
            .where(m.run_id.in_(ids[first : first + _CHUNK]))
        )
        rows.extend(tuple(r) for r in session.connection().execute(stmt))
    return pd.DataFrame(rows, columns=list(PLACED_WORK_COLUMNS))
