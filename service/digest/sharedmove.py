"""A move shared by many kernels of one device on one night, as the digest reports it.

Computed by ``service.digest.shared``; here below ``service.digest.model`` so the digest can
hold it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class SharedMove(BaseModel):
    """Many kernels of one device moved the same way on the same night (``digest.shared``).

    Attributes:
        device: Device as stored.
        direction: ``regression`` or ``improvement``.
        since: The first night at the new levels.
        from_commit: Last commit before it.
        to_commit: First commit of it.
        kernels: Kernels whose new level starts that night, on that side.
        kernels_measured: Kernels of the device measured in the period that ``measure``
            reads: those on a roof (percent of roof); for time, those timed alone when the
            same night has a move in percent of roof, else all.
        unresolved: Of ``kernels``, those whose regression is unresolved at the period's end.
        median_change: Their median ``relative_change`` of percent of roof (``measure``
            ``time``: of speed, ``1 / time_ratio - 1``, which for the same work is the same).
        measure: ``percent_of_roof``, or ``time`` for a move of time regressions alone
            (benchmarks timed without work have no roof).
        runner: The runner of that night's run, when known.
        runners_before: The runners of the nights before it, most frequent first.
        driver: The driver of that night's run, when known.
        drivers_before: The drivers of the nights before it, most frequent first.
    """

    device: str
    direction: Literal["regression", "improvement"]
    since: datetime
    from_commit: str
    to_commit: str
    kernels: int
    kernels_measured: int
    unresolved: int = 0
    median_change: float
    measure: Literal["percent_of_roof", "time"] = "percent_of_roof"
    runner: str | None = None
    runners_before: list[str] = Field(default_factory=list)
    driver: str | None = None
    drivers_before: list[str] = Field(default_factory=list)
