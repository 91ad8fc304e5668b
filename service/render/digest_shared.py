"""The digest's shared moves as rows: how many kernels moved, on which runner and driver, why.

A move is read as the runner's or the driver's when that night's is new to the nights before
it; with both as before, the cause is in the move's commits (a header every kernel includes,
the toolchain, the build flags), still rarely each kernel's own code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from service.digest.model import Digest
from service.digest.sharedmove import SharedMove

#: Runners or drivers of the nights before a move named in its row (most frequent first).
NAMED_BEFORE = 3


def _setup(now: str | None, before: Sequence[str], esc: Callable[[str], str]) -> str:
    if now is None:
        return "–"
    if not before:
        return esc(now)
    if now in before:
        return f"{esc(now)}, as before"
    named = ", ".join(esc(b) for b in before[:NAMED_BEFORE])
    more = ", …" if len(before) > NAMED_BEFORE else ""  # a pool's rotation
    return f"{esc(now)}, new (before: {named}{more})"


def _new(now: str | None, before: Sequence[str]) -> bool:
    return now is not None and bool(before) and now not in before


def likely_cause(move: SharedMove) -> str:
    """Where to look first: the new runner or driver, else the commits that moved them all."""
    new = [
        name
        for name, now, before in (
            ("runner", move.runner, move.runners_before),
            ("driver", move.driver, move.drivers_before),
        )
        if _new(now, before)
    ]
    if new:
        return f"the {' and the '.join(new)}: new that night, not the kernels' code"
    if move.runner is None and move.driver is None:
        return "no runner or driver recorded: a shared cause (runner, driver, toolchain)"
    return "the same runner and driver: a change all of them share (a header, the toolchain)"


def _row(move: SharedMove, esc: Callable[[str], str], beside: bool = False) -> dict[str, str]:
    """``beside``: a move in time the same night as one in percent of roof, of other kernels."""
    verb = "regressed" if move.direction == "regression" else "improved"
    if move.measure == "time":
        verb = "timed alone, slower" if beside else "slower"
    still = f", {move.unresolved:,} unresolved" if move.unresolved else ""
    return {
        "device": esc(move.device),
        "moved": f"{move.kernels:,} of {move.kernels_measured:,} {verb}{still}",
        "change": f"{move.median_change * 100:+.1f} %",
        "since": move.since.strftime("%Y-%m-%d"),
        "commits": f"{move.from_commit[:8]}…{move.to_commit[:8]}",
        "runner": _setup(move.runner, move.runners_before, esc),
        "driver": _setup(move.driver, move.drivers_before, esc),
        "cause": likely_cause(move),
    }


#: Rows of shared moves the markdown and HTML list (the newest; the JSON lists every one): a
#: fleet's unresolved moves over the 90-day lookback must not push the issue past GitHub's
#: 65,536 characters.
SHARED_ROW_LIMIT = 20


def shared_move_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, str]]:
    """One row per shared move of ``digest``, oldest first: the newest ``SHARED_ROW_LIMIT``."""
    on_roof = {(m.device, m.since) for m in digest.shared_moves if m.measure != "time"}
    return [
        _row(move, esc, beside=move.measure == "time" and (move.device, move.since) in on_roof)
        for move in digest.shared_moves[-SHARED_ROW_LIMIT:]
    ]


def shared_moves_left_out(digest: Digest) -> int:
    """How many older shared moves ``shared_move_rows`` leaves out."""
    return max(0, len(digest.shared_moves) - SHARED_ROW_LIMIT)
