"""Stored base-branch levels: a PR check reads them instead of replaying every history.

The base branch's current level of a kernel (``rules.stats.current_levels``) changes once a
night, yet every PR check of a 2,000-kernel project recomputed all 2,000 of them (about 2 s:
the change-point scan and the replay of each kernel's last nights). A level is a pure
function of the kernel's history, the gate's options and the gate's code, so it is stored
under a digest of exactly those three: a stored level is never stale, only missing.

The nightly check stores the levels the next PR will ask for (its history with the night just
judged); a PR check stores the ones it had to compute. Rules do no I/O: the service reads the
stored levels (``StoredLevels``, in ``RuleContext.stored_levels``) before the rules run;
the gate's pass works with a ``LevelCache`` of its own, started from them, and ``evaluate``
returns the levels it computed (``Evaluation.levels_to_store``), which the service stores
(``service.store.levels``). So a store failure is the check's, never a rule's crash.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from rules.stats import GateOptions, Level, Replay, current_levels
from rules.stats.levels import NO_LEVEL


@dataclass(frozen=True)
class StoredLevels:
    """The levels a check starts from, read from the store by the service.

    Attributes:
        code: What computed the levels, part of every digest: the service passes a digest of
            the gate's source, so a changed gate computes its levels anew.
        known: The stored levels, by digest (``level_digest``).
    """

    code: bytes = b""
    known: Mapping[str, Level] = field(default_factory=dict)


@dataclass
class LevelCache:
    """The gate pass's levels by digest: those stored before, and those computed now.

    Owned by one gate pass (``rules.engine.gate_pass``), never by the context.

    Attributes:
        code: As ``StoredLevels.code``.
        known: Every level at hand (stored, or computed by this check).
        fresh: The levels this check computed that are worth storing.
    """

    code: bytes = b""
    known: dict[str, Level] = field(default_factory=dict)
    fresh: dict[str, Level] = field(default_factory=dict)

    @classmethod
    def starting_from(cls, stored: StoredLevels) -> LevelCache:
        """A cache holding ``stored``'s levels (a copy: the stored ones are not written to)."""
        return cls(code=stored.code, known=dict(stored.known))


def level_digest(history: npt.ArrayLike, options: GateOptions, code: bytes = b"") -> str:
    """What a level is a function of: the history's values, the options and the gate's code."""
    return _digests([history], options, code)[0]


def _digests(histories: Sequence[npt.ArrayLike], options: GateOptions, code: bytes) -> list[str]:
    """``level_digest`` of each history; the options are written out once, not per kernel."""
    start = hashlib.blake2b(code, digest_size=16)
    start.update(options.model_dump_json().encode())
    digests = []
    for history in histories:
        digest = start.copy()
        digest.update(np.ascontiguousarray(history, dtype="<f8").tobytes())
        digests.append(digest.hexdigest())
    return digests


def _storable(level: Level) -> bool:
    """A level with every figure finite (a series too short to judge is cheap to redo)."""
    return all(math.isfinite(v) for v in (level.level, level.noise, level.se))


def cached_levels(
    cache: LevelCache | None,
    histories: Sequence[npt.ArrayLike],
    options: GateOptions,
    replays: Sequence[Replay | None] | None = None,
) -> list[Level]:
    """``current_levels(histories)``: those in ``cache`` read, the others computed into it.

    ``replays``: the nightly gate's replays of ``histories`` (``current_levels`` says why).
    A history of fewer than ``options.min_runs`` values has no level (``current_levels``
    gives ``NO_LEVEL``): it is not scanned, so the first nights of a repository cost nothing.
    The change-point scan is row by row and the longest history is kept, so the levels of
    the others are the same with or without the short ones.
    """
    long = [i for i, h in enumerate(histories) if _values(h) >= options.min_runs]
    if len(long) == len(histories):
        return _cached(cache, histories, options, replays)
    levels = [NO_LEVEL] * len(histories)
    if long:
        picked = None if replays is None else [replays[i] for i in long]
        found = _cached(cache, [histories[i] for i in long], options, picked)
        for i, level in zip(long, found, strict=True):
            levels[i] = level
    return levels


def _values(history: npt.ArrayLike) -> int:
    """The values of ``history`` the gate reads (``rules.stats.levels.clean``: no NaNs)."""
    arr = np.asarray(history, dtype=float)
    return int(arr.size - np.count_nonzero(np.isnan(arr)))


def _cached(
    cache: LevelCache | None,
    histories: Sequence[npt.ArrayLike],
    options: GateOptions,
    replays: Sequence[Replay | None] | None,
) -> list[Level]:
    """``cached_levels`` of histories long enough to have a level."""
    if cache is None:
        return current_levels(histories, options=options, replays=replays)
    digests = _digests(histories, options, cache.code)
    missing = [i for i, d in enumerate(digests) if d not in cache.known]
    computed = current_levels(
        [histories[i] for i in missing],
        options=options,
        replays=None if replays is None else [replays[i] for i in missing],
    )
    for i, level in zip(missing, computed, strict=True):
        cache.known[digests[i]] = level
        if _storable(level):
            cache.fresh[digests[i]] = level
    return [cache.known[d] for d in digests]
