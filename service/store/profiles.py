"""The baseline run's record of a kernel, for ``rules.profilediff`` to compare with.

The figures live in the stored record (``runs.record_json``, ``KernelRecord.profile``), so no
column holds them; only the kernels asked for are validated, not the whole run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd
import sqlalchemy as sa

from collectors import KernelRecord
from service.store.coretables import RUNS as _RUNS
from service.store.runrecord import record_of
from service.store.sessions import StoreSession


def baseline_kernels(
    session: StoreSession, history: pd.DataFrame, keys: Iterable[str]
) -> dict[str, KernelRecord]:
    """Each of ``keys`` as the newest baseline run in ``history`` recorded it.

    Args:
        session: The store.
        history: Baseline rows (``rules.frames.HISTORY_COLUMNS``).
        keys: Identity keys; those without a baseline row are left out.
    """
    wanted = set(keys)
    if history.empty or not wanted:
        return {}
    rows = history[history["kernel_key"].isin(wanted)]
    newest = rows.sort_values("timestamp").groupby("kernel_key")["run_id"].last()
    by_run: dict[int, set[str]] = {}
    for key, run_id in newest.items():
        by_run.setdefault(int(run_id), set()).add(str(key))
    if not by_run:
        return {}
    runs = _RUNS.c
    stmt = sa.select(runs.id, runs.record_json, runs.record_zlib).where(runs.id.in_(list(by_run)))
    found: dict[str, KernelRecord] = {}
    for run_id, text, packed in session.execute(stmt):
        for kernel in json.loads(record_of(text, packed)).get("kernels", ()):
            if kernel.get("key") in by_run[run_id]:
                found[kernel["key"]] = KernelRecord.model_validate(kernel)
    return found
