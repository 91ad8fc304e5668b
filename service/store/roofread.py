"""Stored history across a datasheet correction: each run read on its card's newest figures.

The check reads its baseline on the configuration's figures (``service.pipeline.roofchange``);
trends, the kernel pages and the weekly digest compare stored runs with each other, with no
configuration at hand. A peak corrected in roofguard.toml (H100 dram 3.35 -> 6.7 TB/s) halved
every memory-bound series on the night of the edit, and the digest listed a week of
regressions. Here each run placed on other datasheet figures than its card's newest run is
read on the newest run's (``rules.reread_roof``, at its own clocks), so only a real change
moves a series.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rules import (
    Reread,
    Roof,
    builtin_catalog,
    change_note,
    datasheet_from,
    reread_history,
    reread_roof,
)
from service.store.devices import run_roofs
from service.store.placedwork import placed_work
from service.store.sessions import StoreSession


def _runs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row a run of ``frame``: ``run_id``, ``device``, ``timestamp``, newest last.

    Read where the run id changes (history is ordered by run), not over every row: a digest
    holds millions of them.
    """
    ids = frame["run_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    runs = pd.DataFrame(
        {
            "run_id": ids[starts].astype(np.int64),
            "device": frame["device"].iloc[starts].astype(str).to_numpy(),
            "timestamp": pd.to_datetime(frame["timestamp"].iloc[starts], utc=True).to_numpy(),
        }
    )
    return runs.drop_duplicates("run_id").sort_values(["timestamp", "run_id"])


def _rereads(runs: pd.DataFrame, roofs: Mapping[int, Roof]) -> dict[int, Reread]:
    """The ``runs`` whose datasheet figures differ from their card's newest run's."""
    found: dict[int, Reread] = {}
    catalog = builtin_catalog()
    for device, on_card in runs.groupby("device", sort=False):
        today, spec = roofs.get(int(on_card["run_id"].iloc[-1])), catalog.find(str(device))
        if today is None or spec is None or today.source != "datasheet":
            continue
        clocked = bool(spec.boost_clock_hz), bool(spec.memory_clock_hz)
        sheet = datasheet_from(today, spec.roof(), *clocked)
        for run_id in on_card["run_id"].iloc[:-1]:
            stored = roofs.get(int(run_id))
            reread = reread_roof(stored, today, sheet) if stored is not None else None
            if reread is not None:
                found[int(run_id)] = reread
    return found


def on_newest_roofs(
    session: StoreSession, frame: pd.DataFrame
) -> tuple[pd.DataFrame, dict[int, Roof], tuple[str, ...]]:
    """``frame`` with its runs on other datasheet figures read on their card's newest run's.

    ``frame`` has ``run_id``, ``device``, ``timestamp``, ``kernel_key``, ``time_s`` and
    ``percent_of_roof``. Also every run's roof (the re-read ones as read now), for
    ``rules.like_for_like_history``, and one note a card whose figures changed.
    """
    if frame.empty:
        return frame, {}, ()
    runs = _runs(frame)
    roofs = run_roofs(session=session, run_ids=runs["run_id"].tolist())
    rereads = _rereads(runs, roofs)
    if not rereads:
        return frame, roofs, ()
    work = placed_work(session=session, run_ids=list(rereads))
    reread = reread_history(frame, work, rereads)
    by_device: dict[str, list[Reread]] = {}
    for found in rereads.values():
        by_device.setdefault(found.today.device, []).append(found)
    notes = tuple(change_note(device, found) for device, found in sorted(by_device.items()))
    return reread, {**roofs, **{i: r.today for i, r in rereads.items()}}, notes
