"""The figures of a gate finding (roof-drop, time-regression), typed.

A finding keeps its figures in ``Finding.numbers``: that mapping is what the verdict JSON
holds, what the store keeps, and what the details of the PR comment list, in its order. It
is a contract, and the store reads back findings that older versions wrote. So the gate's
figures are not a second copy beside it: a rule writes them from a ``GateFigures``
(``numbers()``), and a reader gets them back as one (``Finding.gate``), with no key to spell.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rules.stats import Judgement

Numbers = Mapping[str, float | str | None]


@dataclass(frozen=True)
class GateFigures:
    """What the gate judged one kernel's (or group's) newest value against, and how.

    Attributes:
        current: The value judged (the median of the run's samples).
        level: The level since the last confirmed change (``baseline_center`` in
            ``numbers`` too, its name before the gate).
        n: Runs in that segment (``baseline_n``).
        segment_start: Where the segment starts in the NaN-free baseline.
        noise: The noise of one value used, floored (``noise_used``).
        relative_change: ``(current - level) / level``.
        z: Robust z of ``current`` against ``level``.
        z_threshold: What ``z`` had to reach.
        run: Values in a row beyond noise on the same side, the newest included.
        confirm_runs: Values in a row that confirm a change.
        method: The test's name.
        remeasured: The re-measurements of the commit (``remeasured_1``, ...).
        remeasured_z: Robust z of their conservative median; None when the gate did not
            test them (the kernel was no suspect on its first measurement).
        confirm_threshold: What ``remeasured_z`` had to reach (None with it).
    """

    current: float
    level: float
    n: int
    segment_start: int
    noise: float
    relative_change: float
    z: float
    z_threshold: float
    run: int
    confirm_runs: int
    method: str
    remeasured: tuple[float, ...] = ()
    remeasured_z: float | None = None
    confirm_threshold: float | None = None

    @classmethod
    def of(cls, j: Judgement, measurements: tuple[float, ...]) -> GateFigures:
        """The figures of judgement ``j`` of ``measurements`` (the run's, then the reruns')."""
        tested = bool(j.remeasured)
        return cls(
            current=j.current,
            level=j.level,
            n=j.n,
            segment_start=j.segment_start,
            noise=j.noise,
            relative_change=j.relative_change,
            z=j.z,
            z_threshold=j.z_threshold,
            run=j.run,
            confirm_runs=j.confirm_runs,
            method=j.method,
            remeasured=measurements[1:],
            remeasured_z=j.remeasured_z if tested else None,
            confirm_threshold=j.confirm_threshold if tested else None,
        )

    def numbers(self) -> dict[str, float | str | None]:
        """The figures under their ``Finding.numbers`` keys, in the order the details list."""
        numbers: dict[str, float | str | None] = {
            "current": self.current,
            "level": self.level,
            "baseline_center": self.level,
            "baseline_n": self.n,
            "segment_start": self.segment_start,
            "noise_used": self.noise,
            "relative_change": self.relative_change,
            "z": self.z,
            "z_threshold": self.z_threshold,
            "run": self.run,
            "confirm_runs": self.confirm_runs,
            "method": self.method,
        }
        for i, value in enumerate(self.remeasured, start=1):
            numbers[f"remeasured_{i}"] = value
        if self.remeasured_z is not None:
            numbers["remeasured_z"] = self.remeasured_z
            numbers["confirm_threshold"] = self.confirm_threshold
        return numbers

    @classmethod
    def from_numbers(cls, numbers: Numbers) -> GateFigures | None:
        """The gate's figures among ``numbers`` (None: not a gate finding's, or older ones).

        The store's JSON writes a NaN as null: it reads back as NaN.
        """
        try:
            return cls._read(numbers)
        except (KeyError, TypeError, ValueError):
            return None

    @classmethod
    def _read(cls, numbers: Numbers) -> GateFigures:
        method = numbers["method"]
        if not isinstance(method, str):
            raise TypeError(f"method {method!r} is no name")
        remeasured: list[float] = []
        while (key := f"remeasured_{len(remeasured) + 1}") in numbers:
            remeasured.append(_float(numbers[key]))
        tested = "remeasured_z" in numbers
        return cls(
            current=_float(numbers["current"]),
            level=_float(numbers["level"]),
            n=_count(numbers["baseline_n"]),
            segment_start=_count(numbers["segment_start"]),
            noise=_float(numbers["noise_used"]),
            relative_change=_float(numbers["relative_change"]),
            z=_float(numbers["z"]),
            z_threshold=_float(numbers["z_threshold"]),
            run=_count(numbers["run"]),
            confirm_runs=_count(numbers["confirm_runs"]),
            method=method,
            remeasured=tuple(remeasured),
            remeasured_z=_float(numbers["remeasured_z"]) if tested else None,
            confirm_threshold=_float(numbers.get("confirm_threshold")) if tested else None,
        )


def _float(value: float | str | None) -> float:
    if value is None:
        return math.nan
    if isinstance(value, str):
        raise TypeError(f"a figure, not {value!r}")
    return float(value)


def _count(value: float | str | None) -> int:
    count = _float(value)
    if not count.is_integer():
        raise ValueError(f"a count, not {count}")
    return int(count)
