"""A device's datasheet figures corrected in roofguard.toml: the baseline read on today's roof.

The baseline runs keep the roof they were placed on (``runs.roof_json``); a correction of a
peak (``[devices."H100-SXM5"] bandwidth_byte_per_s.dram``) made every unchanged kernel's
percent of roof move at once, and the check failed them all. Each baseline run placed on other
datasheet figures is read again on today's (``rules.reread_roof``, ``rules.reread_history``:
its own work and time, its own clocks), and the verdict says which figures changed. So is
the other card's history a runner swap is judged against (``service.pipeline.crossdevice``),
on that card's figures in the configuration (``other_card_on_todays_roof``).

A run whose stored roof holds today's figures costs one comparison of two dicts; only the
runs of a changed roof have their stored work read.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from rules import Datasheet, Roof, change_note, reread_history, reread_roof
from service.config import RoofguardConfig
from service.store.devices import run_roofs
from service.store.history import Baseline
from service.store.placedwork import placed_work
from service.store.sessions import StoreSession


def datasheet_of(roof: Roof, config: RoofguardConfig) -> Datasheet | None:
    """Today's datasheet of ``roof``'s device (None: not a datasheet roof of a known card)."""
    if roof.source != "datasheet":
        return None
    spec = config.catalog().find(roof.device)
    if spec is None:
        return None
    return Datasheet(spec.roof(), bool(spec.boost_clock_hz), bool(spec.memory_clock_hz))


def on_todays_roof(
    session: StoreSession, rows: Baseline, roof: Roof, config: RoofguardConfig
) -> tuple[Baseline, str | None]:
    """``rows`` with each run placed on other datasheet figures read on ``roof``'s, and a note.

    ``roof`` is the one the judged run is placed on; its datasheet is the config's.
    """
    sheet = datasheet_of(roof, config) if not rows.frame.empty else None
    if sheet is None:
        return rows, None
    frame = reread_frame(session, rows.frame, roof, sheet)
    if frame is None:
        return rows, None
    reread, note = frame
    return replace(rows, frame=reread), note


def reread_frame(
    session: StoreSession, frame: pd.DataFrame, roof: Roof, sheet: Datasheet
) -> tuple[pd.DataFrame, str] | None:
    """``frame``'s runs on other datasheet figures read on ``roof``'s, and the note; None: none.

    ``frame`` has ``run_id``, ``kernel_key``, ``time_s`` and ``percent_of_roof``.
    """
    ids = [int(i) for i in pd.unique(frame["run_id"])]
    stored = run_roofs(session=session, run_ids=ids)
    rereads = {
        run_id: found
        for run_id, then in stored.items()
        if (found := reread_roof(then, roof, sheet)) is not None
    }
    if not rereads:
        return None
    work = placed_work(session=session, run_ids=list(rereads))
    reread = reread_history(frame, work, rereads)
    return reread, change_note(roof.device, rereads.values())


def other_card_on_todays_roof(
    session: StoreSession, frame: pd.DataFrame, newest: Roof | None, config: RoofguardConfig
) -> tuple[pd.DataFrame, Roof | None, str | None]:
    """Another card's baseline (``crossdevice``) on that card's figures in the configuration.

    ``newest``: the roof of ``frame``'s newest run, returned on today's figures at its own
    clocks (the roof the other card's percent of roof is then on, for ``rules.scaling``), with
    each run of ``frame`` read on it, and the note ``on_todays_roof`` gives its own card's
    (None: no run re-read). A card whose figures did not change keeps both.
    """
    sheet = datasheet_of(newest, config) if newest is not None and not frame.empty else None
    if newest is None or sheet is None:
        return frame, newest, None
    own = reread_roof(newest, sheet.roof, sheet)  # today's run of that card, had it run
    today = newest if own is None else own.today
    found = reread_frame(session, frame, today, sheet)
    return (frame, today, None) if found is None else (found[0], today, found[1])
