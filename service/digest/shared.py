"""Moves shared by many kernels of one device on one night: a runner, a driver, a toolchain.

The digest finds each kernel's changes alone, so a runner swap (a slower card of the same
model) read as a page of new regressions, one per kernel, with nothing to tie them together.
When at least a third of a device's kernels start a new level on the same night, on the same
side, the cause is rarely each kernel's code: the digest says so once, above its tables, with
the runner and the driver of that night beside those of the nights before it. The share and
the smallest count are the check's runner-wide note's (``rules.runnerwide``), which says the
same of a single run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np

from rules import shared_by
from service.digest.model import DeviceSummary, Digest, Movement, TimeMovement
from service.digest.sharedmove import SharedMove
from service.store.queries import nightly_setups
from service.store.sessions import StoreSession

#: Nights before a shared move whose runners and drivers it is compared with.
SETUP_NIGHTS = 14


@dataclass(frozen=True)
class _Moved:
    """One kernel's new level, as a shared move counts it."""

    kernel: str
    device: str
    since: datetime
    from_commit: str
    to_commit: str
    change: float  # relative change of percent of roof, or of speed (1 / time) for time


def shared_moves(digest: Digest) -> list[SharedMove]:
    """The nights on which a runner-wide share of a device's kernels moved one way, oldest first.

    New regressions and improvements of the period, and regressions still unresolved at its
    end (a swap weeks ago left its kernels unresolved, one row each, every week since),
    counted against the device's kernels on the roof in the period; then the time regressions'
    (``_time_moves``: benchmarks timed alone have no roof).
    """
    measured = {d.device: d.kernels for d in digest.devices}
    on_roof = {d.device: _on_roof(d) for d in digest.devices}
    unresolved = {_key(_of(m)) for m in digest.unresolved}
    regressions = {_key(_of(m)): _of(m) for m in [*digest.regressions, *digest.unresolved]}
    moves = [
        *_shared(list(regressions.values()), "regression", on_roof, unresolved),
        *_shared([_of(m) for m in digest.improvements], "improvement", on_roof, set()),
    ]
    return sorted(moves + _time_moves(digest, moves, measured, on_roof), key=_order)


def _time_moves(
    digest: Digest,
    moves: Sequence[SharedMove],
    measured: Mapping[str, int],
    on_roof: Mapping[str, int],
) -> list[SharedMove]:
    """The shared moves of time regressions (``measure: "time"``).

    On a night with a move in percent of roof, the kernels timed alone only, against their
    count (the placed kernels' slowdowns are that move's): a suite of both said "14 of 30
    regressed" and nothing of its 15 benchmarks timed alone. Other nights: every kernel.
    """
    nights = {(m.device, m.since) for m in moves}
    slower = [t for t in digest.time_regressions if (t.device, t.since) not in nights]
    beside = [t for t in digest.time_regressions if (t.device, t.since) in nights and _alone(t)]
    alone = {device: measured[device] - on_roof[device] for device in measured}
    timed = [
        *_shared([_of_time(t) for t in slower], "regression", measured, set()),
        *_shared([_of_time(t) for t in beside], "regression", alone, set()),
    ]
    return [move.model_copy(update={"measure": "time"}) for move in timed]


def _on_roof(device: DeviceSummary) -> int:
    return device.kernels if device.kernels_on_roof is None else device.kernels_on_roof


def _alone(t: TimeMovement) -> bool:
    """A benchmark timed without work: no roof, so no binding on either side of its change."""
    return t.from_binding is None and t.to_binding is None


def _order(move: SharedMove) -> tuple[datetime, str, str, bool]:
    return move.since, move.device, move.direction, move.measure == "time"


def _of(m: Movement) -> _Moved:
    return _Moved(m.kernel, m.device, m.since, m.from_commit, m.to_commit, m.relative_change)


def _of_time(t: TimeMovement) -> _Moved:
    return _Moved(t.kernel, t.device, t.since, t.from_commit, t.to_commit, 1 / t.ratio - 1)


def _key(moved: _Moved) -> tuple[str, str, datetime]:
    return moved.kernel, moved.device, moved.since


def _shared(
    movements: Sequence[_Moved],
    direction: Literal["regression", "improvement"],
    measured: Mapping[str, int],
    unresolved: Set[tuple[str, str, datetime]],
) -> list[SharedMove]:
    """The groups of ``movements`` of one device and night that are a share of ``measured``.

    A device not measured in the period has no count to share: its unresolved regressions
    would all read as shared ("3 of 3"), three kernels of a thousand named the runner's.
    """
    nights: dict[tuple[str, datetime], list[_Moved]] = defaultdict(list)
    for moved in movements:
        nights[(moved.device, moved.since)].append(moved)
    moves = []
    for (device, since), group in nights.items():
        total = max(measured.get(device, 0), len(group))
        if measured.get(device) and shared_by(len(group), total):
            still = sum(_key(m) in unresolved for m in group)
            moves.append(_move(device, since, direction, group, (total, still)))
    return moves


def _move(
    device: str,
    since: datetime,
    direction: Literal["regression", "improvement"],
    group: Sequence[_Moved],
    counts: tuple[int, int],
) -> SharedMove:
    measured, unresolved = counts
    return SharedMove(
        device=device,
        direction=direction,
        since=since,
        from_commit=_commonest(m.from_commit for m in group),
        to_commit=_commonest(m.to_commit for m in group),
        kernels=len(group),
        kernels_measured=measured,
        unresolved=unresolved,
        median_change=float(np.median([m.change for m in group])),
    )


def with_setups(session: StoreSession, digest: Digest) -> Digest:
    """``digest`` with each shared move's runner and driver, and those of the nights before."""
    moves = [_with_setup(session, move, digest.repo) for move in digest.shared_moves]
    return digest.model_copy(update={"shared_moves": moves})


def _with_setup(session: StoreSession, move: SharedMove, repo: str | None) -> SharedMove:
    setups = nightly_setups(
        session=session, repo=repo, device=move.device, until=move.since, limit=SETUP_NIGHTS + 1
    )
    if not setups:
        return move
    (runner, driver), before = setups[0], setups[1:]
    return move.model_copy(
        update={
            "runner": runner,
            "runners_before": _most_frequent(r for r, _ in before),
            "driver": driver,
            "drivers_before": _most_frequent(d for _, d in before),
        }
    )


def _most_frequent(values: Iterable[str | None]) -> list[str]:
    """The values named, most frequent first (a tie: the first seen first)."""
    return [value for value, _ in Counter(v for v in values if v).most_common()]


def _commonest(commits: Iterable[str]) -> str:
    return Counter(commits).most_common(1)[0][0]
