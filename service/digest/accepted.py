"""Regressions a maintainer accepted (``/roofguard accept``): listed apart, not as regressions.

The gate reads a kernel's baseline from the nights after its latest acceptance on the card (or
on every card; ``service.store.history``), so the night after an accepted change passes. The
digest agrees: a change whose old level's last night came before an acceptance of its kernel
is covered by it (accepted on a pull request before the merge, or after the nightly failed),
and is neither a new regression, a time regression nor unresolved. It is listed as accepted
in the period it held in, and in the period it was accepted in.

The acceptances of a repository are read once (``DigestOptions.accepted``) and matched to the
changes in one merge; only the accepted changes become Python objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import numpy.typing as npt
import pandas as pd

from service.digest.acceptance import Acceptance, AcceptedChange
from service.digest.changes import Segments, in_period
from service.digest.classify import ClassifiedChanges, track_recoveries
from service.digest.options import DigestOptions

#: What an accepted change keeps of its change row.
_CHANGE = ["kernel_name", "since", "from_commit", "to_commit"]


def _table(acceptances: Sequence[Acceptance], end: datetime) -> pd.DataFrame:
    """The acceptances made by ``end``, one row each (``number``: its place in ``acceptances``).

    A later one is not the period's: a past week's digest reads as it did then.
    """
    table = pd.DataFrame(
        {
            "number": np.arange(len(acceptances), dtype=np.int64),
            "kernel_key": pd.Series([a.kernel for a in acceptances], dtype=object),
            "on": pd.Series([a.device for a in acceptances], dtype=object),
            "accepted_at": pd.to_datetime([a.accepted_at for a in acceptances], utc=True),
        }
    )
    return table[(table["accepted_at"] <= pd.Timestamp(end)).to_numpy()]


def acceptance_of(
    changes: pd.DataFrame, frame: pd.DataFrame, acceptances: Sequence[Acceptance], end: datetime
) -> pd.Series:
    """For each change, the first acceptance covering it (its place in ``acceptances``); -1: none.

    One covers a change when it is of the change's kernel, on its card or on every card, made
    by ``end`` and after the last night at the change's old level (``frame``'s row before
    ``row``).
    """
    number = pd.Series(-1, index=changes.index, dtype=np.int64)
    if changes.empty or not acceptances:
        return number
    rows = changes["row"].to_numpy(dtype=np.int64)
    left = pd.DataFrame(
        {
            "change": changes.index,
            "kernel_key": changes["kernel_key"].to_numpy(dtype=object),
            "device": changes["device"].to_numpy(dtype=object),
            "last_old": frame["timestamp"].array[rows - 1],
        }
    )
    pairs = left.merge(_table(acceptances, end), on="kernel_key")
    covers = (pairs["on"].isna() | (pairs["on"] == pairs["device"])) & (
        pairs["accepted_at"] > pairs["last_old"]
    )
    first = pairs[covers].sort_values(["accepted_at", "number"]).drop_duplicates("change")
    number.loc[first["change"].to_numpy()] = first["number"].to_numpy()
    return number


def _made_in(
    taken: pd.DataFrame, acceptances: Sequence[Acceptance], start: datetime, end: datetime
) -> npt.NDArray[np.bool_]:
    """Which of the accepted changes ``taken`` were accepted in ``[start, end]``."""
    made = pd.Series(
        pd.to_datetime([acceptances[i].accepted_at for i in taken["acceptance"]], utc=True)
    )
    return np.asarray(in_period(made, start, end).to_numpy(), dtype=bool)


def _covered(
    changes: pd.DataFrame, frame: pd.DataFrame, options: DigestOptions, end: datetime
) -> tuple[npt.NDArray[np.bool_], pd.DataFrame]:
    """Which ``changes`` an acceptance covers, and those, with its place in ``acceptance``."""
    number = acceptance_of(changes, frame, options.accepted, end)
    taken = (number >= 0).to_numpy()
    return taken, changes[taken].assign(acceptance=number[taken])


def without_accepted(
    parts: ClassifiedChanges,
    frame: pd.DataFrame,
    options: DigestOptions,
    *,
    start: datetime,
    end: datetime,
) -> tuple[ClassifiedChanges, pd.DataFrame]:
    """``parts`` without the regressions an acceptance covers, and those to list as accepted.

    Listed: the covered new regressions of the period, and the covered unresolved ones that
    were accepted in it (the record of an older regression leaving the list).
    """
    if not options.accepted:
        return parts, parts.regressions.iloc[:0]
    new_taken, new = _covered(parts.regressions, frame, options, end)
    old_taken, old = _covered(parts.unresolved, frame, options, end)
    old = old[_made_in(old, options.accepted, start, end)]
    listed = pd.concat([new, old[~old["row"].isin(new["row"]).to_numpy()]]) if len(old) else new
    kept = ClassifiedChanges(
        regressions=parts.regressions[~new_taken],
        improvements=parts.improvements,
        recoveries=parts.recoveries,
        unresolved=parts.unresolved[~old_taken],
    )
    return kept, listed


def without_accepted_time(
    timed: pd.DataFrame,
    scanned: tuple[pd.DataFrame, Segments],
    options: DigestOptions,
    *,
    start: datetime,
    end: datetime,
) -> tuple[tuple[pd.DataFrame, Segments], pd.DataFrame]:
    """The time scan without the rises an acceptance covers, and those to list as accepted.

    Listed as ``without_accepted`` lists them: those that held in the period, and those
    accepted in it that no later level came back from.
    """
    changes, segments = scanned
    if not options.accepted:  # as most weeks: the scan as it is
        return scanned, changes.iloc[:0]
    rises = (changes["relative_change"] > 0).to_numpy()
    taken, covered = _covered(changes[rises], timed, options, end)
    back, _ = track_recoveries(
        covered, segments, timed, options.recovery_tolerance, options.min_segment, worse=1.0
    )
    new = in_period(covered["found"], start, end).to_numpy()
    still = back.isna().to_numpy() & _made_in(covered, options.accepted, start, end)
    dropped = np.zeros(len(changes), dtype=bool)
    dropped[np.flatnonzero(rises)[taken]] = True
    return (changes[~dropped], segments), covered[new | still]


def accepted_changes(
    percent: pd.DataFrame, time: pd.DataFrame, options: DigestOptions
) -> list[AcceptedChange]:
    """One entry per kernel, card and acceptance: its change of percent of roof and of time.

    ``percent`` and ``time`` are the accepted changes ``without_accepted`` and
    ``without_accepted_time`` list; where one acceptance covers two changes of a series, the
    later is shown. Oldest acceptance first.
    """
    if percent.empty and time.empty:
        return []
    keys = ["kernel_key", "device", "acceptance"]
    roof = _latest(percent, keys)[[*keys, *_CHANGE, "relative_change", "before", "after"]]
    slower = _latest(time, keys)[[*keys, *_CHANGE, "before", "after"]]
    both = roof.merge(
        slower.rename(columns={"before": "before_s", "after": "after_s"}),
        on=keys,
        how="outer",
        suffixes=("", "_time"),
    )
    for column in _CHANGE:  # the change of percent of roof names the change, else time's
        timed = both.pop(f"{column}_time")
        both[column] = both[column].where(both[column].notna(), timed)
    made = [options.accepted[i] for i in both["acceptance"]]
    both = both.assign(
        accepted_by=[a.accepted_by for a in made],
        accepted_at=[a.accepted_at for a in made],
        reason=[a.reason for a in made],
        every_device=[a.device is None for a in made],
    ).sort_values(["accepted_at", "kernel_key", "device"])
    both = both.rename(columns={"kernel_key": "kernel"}).astype(object)
    both = both.where(both.notna(), None)
    return [AcceptedChange.model_validate(r) for r in both.to_dict("records")]


def _latest(changes: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The latest change of each of ``keys``, its kernel and card as plain strings."""
    latest = changes.astype({"kernel_key": object, "device": object, "kernel_name": object})
    return latest.sort_values("since").drop_duplicates(keys, keep="last")
