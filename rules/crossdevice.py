"""A kernel's level on one card, judged on another, or forecast on a card it never ran on.

``device_levels`` reads every kernel's current level (the gate's) from one card's history;
``scale`` judges a new measurement on another card against it (``rules.scaling`` predicts the
time ratio), ``keeping`` says whether it kept up, and ``forecast`` gives its time on a card it
never ran on if it kept its percent of roof. ``DeviceBaseline`` is the other card's history a
``RuleContext`` carries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.devicerows import DeviceRows, float_column, usual_label
from rules.frames import HISTORY_COLUMNS, require_columns
from rules.placedroof import placed_roof, placed_roofs
from rules.roofline import Roof
from rules.scaling import (
    CROSS_DEVICE_TOLERANCE,
    TIERS,
    MissingResource,
    Prediction,
    Work,
    predict,
)
from rules.stats import GateOptions, Level, conservative_median, current_levels
from rules.timing import median_time, median_value


@dataclass(frozen=True)
class DeviceLevel:
    """One kernel's current level on one device (the gate's level of its percent of roof).

    Attributes:
        key: Identity key (aliases mapped to the current name).
        name: Display name.
        device: The device.
        percent: The level of percent of roof (the current segment's robust location).
        noise: Noise of one value, in points.
        se: The level's standard error, in noise units.
        n: Runs in the current segment.
        runs: Runs in the history read.
        time_s: Median time over the segment.
        work: The work over the segment (medians), as stored.
        history: Percent of roof of every run, oldest first (for sparklines).
        commits: First and last commit of the segment.
        start: Where the segment starts in ``history`` (None: its last ``n``).
    """

    key: str
    name: str
    device: str
    percent: float
    noise: float
    se: float
    n: int
    runs: int
    time_s: float
    work: Work
    history: tuple[float, ...] = ()
    commits: tuple[str, ...] = field(default=())
    start: int | None = None

    @property
    def segment(self) -> tuple[float, ...]:
        """Percent of roof of the ``n`` runs the level is of, oldest first.

        Not ``history``'s last ``n``: nights beyond noise after the segment, not confirmed
        there, are left out of the level (``rules.stats.current_levels``). Read as the last
        ``n``, a card's fallen nights entered another card's history as its own.
        """
        start = len(self.history) - self.n if self.start is None else self.start
        return self.history[start : start + self.n]

    @property
    def t_roof_s(self) -> float:
        """``percent · time / 100``: the roof time its level and median time imply."""
        return self.percent * self.time_s / 100.0

    def roof_on(self, roof: Roof) -> Roof:
        """The roof its percent is of, of its card's ``roof`` (``rules.placedroof.placed_roof``).

        A run whose reports partly record clocks placed the others on the datasheet roof as
        it is (``rules.clocks.ClockedRoof``): their work's roof time there is another.
        """
        return placed_roof(roof, self.work, self.t_roof_s)

    def z(self, value: float) -> float:
        """Robust z of a percent of roof against this level (the level's error included)."""
        scale = self.noise * math.sqrt(1.0 + self.se**2)
        if not scale > 0:
            return 0.0 if value == self.percent else math.copysign(math.inf, value - self.percent)
        return (value - self.percent) / scale


def level_roofs(levels: Iterable[DeviceLevel], roof: Roof) -> dict[str, Roof]:
    """Each of one card's ``levels``' ``roof_on(roof)``, by key, decided for all at once.

    Judged one by one, a card of 2,000 kernels from a run whose reports partly record clocks
    spent 0.2 s choosing their roofs, 0.025 s at once (``rules.placedroof.placed_roofs``).
    """
    chosen = list(levels)
    found = placed_roofs(roof, [(level.work, level.t_roof_s) for level in chosen])
    return {level.key: own for level, own in zip(chosen, found, strict=True)}


#: The columns ``device_levels`` reads.
LEVEL_COLUMNS = (
    "run_id",
    "commit",
    "timestamp",
    "kernel_key",
    "kernel_name",
    "device",
    "percent_of_roof",
    "binding",
    "time_s",
    "total_flops",
    "peak_flop_time_s",
    *(f"bytes_{t}" for t in TIERS),
)


def _work(rows: DeviceRows, segment: npt.NDArray[np.intp]) -> Work:
    """The work of a segment's rows: medians of what is known, the usual binding."""
    nbytes = {t: median_value(rows.floats(f"bytes_{t}", segment)) for t in TIERS}
    return Work(
        flops=median_value(rows.floats("total_flops", segment)),
        nbytes={t: float(v) for t, v in nbytes.items() if v is not None},
        peak_flop_time_s=median_value(rows.floats("peak_flop_time_s", segment)),
        binding=usual_label(*rows.codes("binding", segment, nonempty=True)),
    )


def _level(
    key: str, rows: DeviceRows, part: npt.NDArray[np.intp], level: Level
) -> DeviceLevel | None:
    """``key``'s level from its rows (positions ``part`` of ``rows``) and the gate's ``level``."""
    segment = part[level.start : level.start + level.n]  # the nights the level is of
    time_s = median_time(rows.floats("time_s", segment))
    if not math.isfinite(level.level) or level.level <= 0 or time_s is None:
        return None
    codes, labels = rows.codes("commit", segment)
    commits = codes[codes >= 0]
    return DeviceLevel(
        key=key,
        name=rows.last_string("kernel_name", part),
        device=rows.last_string("device", part),
        percent=float(level.level),
        noise=float(level.noise),
        se=float(level.se),
        n=int(level.n),
        runs=rows.runs(part),
        time_s=time_s,
        work=_work(rows, segment),
        history=tuple(rows.percent[part].tolist()),
        commits=(str(labels[commits[0]]), str(labels[commits[-1]])) if commits.size else (),
        start=int(level.start),
    )


def _key_groups(
    keys: pd.Series, rows: npt.NDArray[np.intp], rename: Callable[[str], str] | None
) -> tuple[list[str], npt.NDArray[np.intp]]:
    """The sorted distinct keys of ``keys[rows]`` (``str`` of each, renamed) and each row's.

    Keys are numbered first (a categorical's codes), so only the distinct ones are strings.
    """
    if isinstance(keys.dtype, pd.CategoricalDtype):
        codes = keys.cat.codes.to_numpy()[rows].astype(np.intp)
        labels = [str(k) for k in keys.cat.categories] + ["nan"]  # code -1, as astype(str)
    else:
        codes, uniques = pd.factorize(keys.to_numpy()[rows], use_na_sentinel=False)
        labels = [str(k) for k in uniques]
    texts = [rename(t) for t in labels] if rename is not None else labels
    names, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    used, group = np.unique(inverse.reshape(-1)[codes], return_inverse=True)  # only keys seen
    return [str(names[u]) for u in used], group.reshape(-1)


def device_levels(
    frame: pd.DataFrame,
    *,
    options: GateOptions | None = None,
    rename: Callable[[str], str] | None = None,
) -> dict[str, DeviceLevel]:
    """Every kernel's current level in a one-device history frame, by key.

    Args:
        frame: ``LEVEL_COLUMNS`` (of ``rules.frames.HISTORY_COLUMNS``) rows of one device
            (oldest first or not); strings may be categories.
        options: The gate's options (the level is the gate's: ``rules.stats.current_levels``).
        rename: Maps an old key to its current name (aliases); None: keys as they are.
    """
    require_columns(frame, LEVEL_COLUMNS, "device history")
    percent = float_column(frame["percent_of_roof"])
    placed = np.flatnonzero(~np.isnan(percent))
    if not placed.size:
        return {}
    stamps = pd.DatetimeIndex(pd.to_datetime(frame["timestamp"].iloc[placed], utc=True))
    placed = placed[np.argsort(stamps.asi8, kind="stable")]  # oldest first, ties in frame order
    keys, group = _key_groups(frame["kernel_key"], placed, rename)
    by_key = np.argsort(group, kind="stable")  # each key's rows stay oldest first
    order = placed[by_key]
    bounds = np.searchsorted(group[by_key], np.arange(len(keys) + 1))
    rows = DeviceRows(frame, order, percent[order])
    parts = [np.arange(bounds[i], bounds[i + 1]) for i in range(len(keys))]
    levels = current_levels([rows.percent[p] for p in parts], options=options or GateOptions())
    found = (_level(k, rows, p, lv) for k, p, lv in zip(keys, parts, levels, strict=True))
    return {level.key: level for level in found if level is not None}


@dataclass(frozen=True)
class Scaling:
    """One kernel judged on one card against its level on another, in percent of roof.

    Attributes:
        baseline: Its level on the other card.
        device: The card it is judged on.
        prediction: The roof times of the baseline's work on both cards.
        time_s: Its time now (the better of two measurements, the median of more).
        time_ratio: ``time_s / baseline.time_s``.
        percent: Its percent of the roof the baseline's work has on this card:
            ``baseline.percent · expected_time_ratio / time_ratio``.
    """

    baseline: DeviceLevel
    device: str
    prediction: Prediction
    time_s: float
    time_ratio: float
    percent: float

    @property
    def key(self) -> str:
        """The kernel's identity key."""
        return self.baseline.key

    @property
    def expected_time_ratio(self) -> float:
        """The roofs' prediction of ``time_ratio``."""
        return self.prediction.expected_time_ratio

    @property
    def relative_change(self) -> float:
        """``percent / baseline.percent - 1``, equal to ``expected / time_ratio - 1``."""
        return self.percent / self.baseline.percent - 1.0

    @property
    def z(self) -> float:
        """Robust z of ``percent`` against the baseline's level and noise."""
        return self.baseline.z(self.percent)

    @property
    def binding(self) -> str:
        """What binds the baseline's work on this card."""
        return self.prediction.target_binding


def scale(
    level: DeviceLevel,
    source: Roof,
    target: Roof,
    times: Sequence[float],
    *,
    placed: Roof | None = None,
) -> Scaling | None:
    """``level`` (measured on ``source``) against ``times`` measured on ``target``.

    ``source`` is its card's roof (``DeviceLevel.roof_on`` picks the kernel's own of it;
    ``placed``, where ``level_roofs`` chose it already); ``target`` the roof the kernel's
    times are placed on (``Placement.roof``). None when no time is positive or the work
    cannot be placed on both roofs.
    """
    valid = [t for t in times if math.isfinite(t) and t > 0]
    if not valid:
        return None
    own = placed if placed is not None else level.roof_on(source)
    try:
        prediction = predict(level.work, own, target)
    except MissingResource:
        return None
    if prediction is None:
        return None
    now = conservative_median(valid, higher_is_better=False)
    time_ratio = now / level.time_s
    percent = prediction.percent_now(level.percent, time_ratio)
    return Scaling(level, target.device, prediction, now, time_ratio, percent)


class Keeping(StrEnum):
    """Whether a kernel kept up with a card change, as its percent of roof says."""

    BEHIND = "not-kept-up"
    KEPT_UP = "kept-up"
    AHEAD = "faster"


def keeping(
    scaling: Scaling, *, tolerance: float = CROSS_DEVICE_TOLERANCE, z_threshold: float = 4.0
) -> Keeping:
    """``not-kept-up`` when percent of roof fell by more than ``tolerance`` and beyond noise.

    ``faster`` when it rose as far; else ``kept-up``.
    """
    change, z = scaling.relative_change, scaling.z
    if change <= -tolerance and z <= -z_threshold:
        return Keeping.BEHIND
    if change >= tolerance and z >= z_threshold:
        return Keeping.AHEAD
    return Keeping.KEPT_UP


@dataclass(frozen=True)
class Forecast:
    """A kernel's time on a card it never ran on, if it kept its percent of roof.

    Attributes:
        baseline: Its level on the card it ran on.
        device: The card forecast.
        prediction: The roof times of its work on both cards.
        time_s: ``prediction.target_s / (baseline.percent / 100)``.
    """

    baseline: DeviceLevel
    device: str
    prediction: Prediction
    time_s: float

    @property
    def time_ratio(self) -> float:
        """Forecast time over the time it runs in now."""
        return self.time_s / self.baseline.time_s


def forecast(
    level: DeviceLevel, source: Roof, target: Roof, *, placed: Roof | None = None
) -> Forecast | None:
    """``level``'s time on ``target`` if it kept its percent of roof (None: nothing placed).

    ``source`` is its card's roof (``DeviceLevel.roof_on`` picks the kernel's own of it;
    ``placed``, where ``level_roofs`` chose it already).

    Raises:
        MissingResource: ``target`` lacks the work's precision or binding tier.
    """
    own = placed if placed is not None else level.roof_on(source)
    prediction = predict(level.work, own, target)
    if prediction is None:
        return None
    return Forecast(level, target.device, prediction, prediction.target_s * 100.0 / level.percent)


@dataclass(frozen=True)
class DeviceBaseline:
    """Another card's base-branch history, for kernels with too little on the run's card.

    Attributes:
        roof: The roof that card's runs were placed on.
        history: Its rows (``rules.frames.HISTORY_COLUMNS``), the gate's window of runs.
        notes: What was done to its rows before they came here (its runs re-read on that
            card's roof of today), said in the verdict when a kernel is judged against them.
    """

    roof: Roof
    history: pd.DataFrame
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        require_columns(self.history, HISTORY_COLUMNS, "DeviceBaseline.history")

    @property
    def device(self) -> str:
        """The other card."""
        return self.roof.device

    @property
    def runs(self) -> int:
        """Runs in its history."""
        return int(self.history["run_id"].nunique()) if len(self.history) else 0


def known_points(values: npt.ArrayLike) -> int:
    """How many of ``values`` are finite (a kernel's own runs of percent of roof)."""
    return int(np.count_nonzero(np.isfinite(np.asarray(values, dtype=float))))
