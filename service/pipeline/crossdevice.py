"""Another card's history for the kernels a run's card has too little of (a device change).

When a team moves its runners to a new card, the first runs on it have no history of their
own: every kernel would read as new. Percent of roof is comparable across cards (each on its
own roofs), so the kernels with fewer than ``OWN_RUNS_SETTLED`` base-branch runs on the run's
card are judged against the card that ran most recently before it (``rules.scaling``; the
gate keeps its segment until ``GATE_RUNS_SETTLED``, ``rules.newcard``): its
gate window of runs, on the same roof source, up to the PR's merge base. ``baseline.
cross_device = false`` turns it off. A kernel a ``/roofguard accept`` restarted on the run's
card is not young there: the maintainer accepted its level on this card, which is its
baseline from then on (``Baseline.restarted``), whatever the other card holds.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from collectors.schema import RunRecord
from rules import GATE_RUNS_SETTLED, DeviceBaseline, Placement, Roof, trusted_rows
from service.config import RoofguardConfig
from service.pipeline.roofchange import other_card_on_todays_roof
from service.store.devices import device_runs, run_roofs
from service.store.history import Baseline, BaselineQuery, MergeBase, read_baseline
from service.store.sessions import StoreSession


def _young_keys(placements: Mapping[str, Placement], own: Baseline) -> list[str]:
    """Placed kernels with under ``GATE_RUNS_SETTLED`` trusted runs of their own, not restarted.

    An untrusted runner's nights are no baseline on the run's card (``rules.trusted_rows``):
    they leave a kernel as young there as they find it.
    """
    counts: dict[str, int] = {}
    rows = trusted_rows(own.frame)
    if not rows.empty:  # one row per run and kernel: rows are runs
        placed = rows["kernel_key"][pd.to_numeric(rows["percent_of_roof"], errors="coerce").notna()]
        counts = {str(k): int(v) for k, v in placed.value_counts().items()}
    return [
        key
        for key, placement in placements.items()
        if placement.percent_of_roof is not None
        and counts.get(key, 0) < GATE_RUNS_SETTLED
        and key not in own.restarted
    ]


def _newest_roof(session: StoreSession, frame: pd.DataFrame) -> Roof | None:
    """The roof the newest of ``frame``'s runs was placed on."""
    newest = int(frame["run_id"].iloc[int(frame["timestamp"].argmax())])
    return run_roofs(session=session, run_ids=[newest]).get(newest)


def _judging_card(
    session: StoreSession, where: tuple[str, Roof], config: RoofguardConfig, own: Baseline
) -> str | None:
    """The newest other card with ``baseline.min_runs`` trusted base-branch runs by then.

    ``where``: the repository and the roof the run is judged on (its card and roof source).
    A stray night on a third card (a runner routed there once) must not hide the old card's
    months behind a history of one run.
    """
    repo, roof = where
    cards = device_runs(
        session=session,
        repo=repo,
        base_branch=config.base_branch,
        roof_source=roof.source,
        before=own.cutoff,
        trusted_only=True,  # which card judges, and on how many runs, as its frame is read
    )
    enough = config.baseline.min_runs
    return next((c.device for c in cards if c.device != roof.device and c.runs >= enough), None)


def device_baseline(
    session: StoreSession,
    run: RunRecord,
    config: RoofguardConfig,
    placements: Mapping[str, Placement],
    own: Baseline,
    merge_base: MergeBase | None = None,
) -> DeviceBaseline | None:
    """The other card's history for ``run``'s young kernels (None: none needed or none there).

    Args:
        session: A store session.
        run: The run judged.
        config: The configuration (``baseline.cross_device``, the windows, the base branch).
        placements: The run's kernels placed on the roof it is judged on (its device and
            roof source).
        own: The run's own baseline as read (the gate's window on its own card).
        merge_base: The PR's merge base: the other card's history stops there too (at
            ``own.cutoff`` where it holds no run of it).
    """
    keys = _young_keys(placements, own)
    if not config.baseline.cross_device or not keys or not run.repo:
        return None
    roof = placements[keys[0]].roof
    other = _judging_card(session, (run.repo, roof), config, own)
    if other is None:
        return None
    query = BaselineQuery(
        repo=run.repo,
        device=other,
        roof_source=roof.source,
        base_branch=config.base_branch,
        window=config.baseline.gate_window,
        before_commit=merge_base.sha if merge_base else None,
        before_timestamp=own.cutoff,
        kernel_keys=[k for key in keys for k in (key, *config.rules.old_keys(key))],
        full_runs=config.baseline.window,
        up_to_run=own.up_to_run,
        accepted_until=run.timestamp,  # as its own card's baseline (``check._history``)
    )
    # An untrusted runner's nights are left out of another card's baseline as of the run's own
    # card's: a card measured only by a runner without a GPU judges nothing.
    frame = trusted_rows(read_baseline(session=session, query=query).frame)
    other_roof = _newest_roof(session, frame) if not frame.empty else None
    frame, other_roof, note = other_card_on_todays_roof(session, frame, other_roof, config)
    # Its runs re-read on today's roof are said as the run's own card's are (``roofchange``).
    notes = (note,) if note else ()
    return None if other_roof is None else DeviceBaseline(other_roof, frame, notes)
