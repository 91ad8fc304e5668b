"""What a rule sees: the current run placed on its roof, the baseline history and the config.

A ``RuleContext`` is built by the service and never changes. What it derives (placements,
the comparable history, the groups' figures) is computed on first use and is a function of
its fields alone, so which rule asks first changes nothing. What the gate decides is not
here: the engine judges it once before the rules run and hands it to them
(``rules.gated.GateDecisions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt
import pandas as pd

from collectors.schema import KernelRecord, RunKind, RunRecord
from rules.config import RulesConfig
from rules.crossdevice import DeviceBaseline, Scaling, device_levels, known_points, level_roofs
from rules.crossdevice import scale as scale_to
from rules.frames import HISTORY_COLUMNS, empty_history, require_columns, trusted_mask
from rules.groups import GroupFigures, group_figures
from rules.history import HistoryIndex, KernelHistory
from rules.levelstore import StoredLevels
from rules.placement import place_run
from rules.renames import Rename, pair_by_work, recent_kernels, work_of
from rules.roofline import Placement, Roof
from rules.scaling import GATE_RUNS_SETTLED, OWN_RUNS_SETTLED
from rules.stats import GateMode, GateOptions
from rules.timing import (
    faster_off_its_binding,
    lacks_a_count,
    like_for_like_percent,
    median_time,
    median_value,
)


@dataclass(frozen=True)
class RuleContext:
    """Everything the rules judge one run with. Built by the service; nothing writes to it.

    Attributes:
        run: The current run.
        roof: The roof the run is judged against.
        history: Baseline rows (``rules.frames.HISTORY_COLUMNS``), already limited by the store
            to the repository, base branch, window and merge base. It may hold other devices,
            drivers or profiler settings: ``comparable_history`` keeps only like-for-like rows
            and env-mismatch reports the rest.
        config: The rules configuration.
        other_roofs: Roofs shown beside the judged one (e.g. measured beside datasheet).
        trusted: False when the runner failed its health preflight: no regression verdicts.
        reruns: Re-measurements of the run's commit (PR gate, ``check --rerun``): the same
            kernels profiled again; they confirm or clear the suspects and are not stored.
        reruns_expected: The caller will rerun the suspects (``check --suspects``, the API's
            ``remeasure``): no kernel fails on one measurement.
        stored_levels: The gate's base-branch levels the service read from the store
            (``rules.levelstore``): the gate reads them instead of computing them. None: the
            levels are not kept (none read, and ``evaluate`` returns none to store).
        gate_history: The longer baseline the gate reads (``baseline.gate_window`` runs, the
            same columns; ``history`` is its newest ``window`` runs); None: ``history``.
            Only time, percent of roof and FLOPs are read from it: the store may leave the
            other measurement columns of its older runs missing.
        placed: The run already placed on ``roof`` with the configured band (the service
            places it to store it); None: placed here.
        cross_device: Another card's base-branch history (``rules.scaling``): kernels with
            fewer than ``OWN_RUNS_SETTLED`` runs of their own are judged against it
            (``device_scaling``). None: no other card (or ``baseline.cross_device = false``).
    """

    run: RunRecord
    roof: Roof
    history: pd.DataFrame = field(default_factory=empty_history)
    config: RulesConfig = field(default_factory=RulesConfig)
    other_roofs: tuple[Roof, ...] = ()
    trusted: bool = True
    reruns: tuple[RunRecord, ...] = ()
    reruns_expected: bool = False
    stored_levels: StoredLevels | None = None
    placed: Mapping[str, Placement] | None = None
    gate_history: pd.DataFrame | None = None
    cross_device: DeviceBaseline | None = None

    def __post_init__(self) -> None:
        require_columns(self.history, HISTORY_COLUMNS, "RuleContext.history")
        if self.gate_history is not None:
            require_columns(self.gate_history, HISTORY_COLUMNS, "RuleContext.gate_history")

    @cached_property
    def kernels(self) -> Mapping[str, KernelRecord]:
        """The run's measured kernels by identity key, without ``ignore_kernels``.

        A kernel none of whose launches has a duration (each failed: a replay that read NaN,
        a launch ncu could not profile) is in the report but not measured: judged on its
        0 s it read as a 100% speed-up. It is left out, as a kernel absent is
        (``missing-kernel`` names it with the reason).
        """
        ignored = self.config.is_ignored_kernel
        return {k.key: k for k in self.run.kernels if k.measured and not ignored(k.key, k.name)}

    @cached_property
    def placements(self) -> Mapping[str, Placement]:
        """Every kernel of the run placed on ``roof``, by identity key."""
        placed = self.placed
        if placed is None:
            placed = place_run(self.run, self.roof, band=self.config.borderline_band)
        return {key: p for key, p in placed.items() if key in self.kernels}

    @cached_property
    def gate_mode(self) -> GateMode | None:
        """How the gate judges this run (None: a nightly run, judged by ``judge_latest``).

        A PR (or local) run: ``confirm`` with reruns, ``screen`` when the caller will rerun
        the suspects, ``single`` otherwise.
        """
        if self.run.kind == RunKind.NIGHTLY:
            return None
        if self.reruns:
            return "confirm"
        return "screen" if self.reruns_expected else "single"

    @cached_property
    def rerun_placements(self) -> tuple[Mapping[str, Placement], ...]:
        """Each re-measurement placed on ``roof``, by identity key (the run's kernels only)."""
        band = self.config.borderline_band
        placed = (place_run(run, self.roof, band=band) for run in self.reruns)
        return tuple({k: p for k, p in one.items() if k in self.kernels} for one in placed)

    @cached_property
    def groups(self) -> Mapping[str, GroupFigures]:
        """Figures of every configured group, by group name (``rules.groups``)."""
        return group_figures(self)

    @cached_property
    def total_time_s(self) -> float:
        """Sum of the kernels' measured times (the denominator of time shares)."""
        return float(sum(k.duration_s for k in self.kernels.values()))

    @cached_property
    def comparable_history(self) -> pd.DataFrame:
        """History rows measured like the current run (``like_this_run``)."""
        return self.like_this_run(self.history)

    @cached_property
    def comparable_gate_history(self) -> pd.DataFrame:
        """The gate's longer history, rows measured like the current run."""
        if self.gate_history is None:
            return self.comparable_history
        return self.like_this_run(self.gate_history)

    def like_this_run(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows of ``frame`` measured like the current run.

        Same device, roof source, driver and profiler clock/cache control (an unknown value on
        either side does not exclude a row); rows from untrusted runners are left out.
        """
        if frame.empty:
            return frame
        keep = trusted_mask(frame)
        for column, value in self.environment.items():
            if value is not None:
                keep &= _like(frame[column], value)
        return frame[keep]

    @cached_property
    def environment(self) -> dict[str, str | None]:
        """The current run's environment, in history-column terms."""
        return {
            "device": self.roof.device,
            "roof_source": self.roof.source,
            "driver": self.run.device.driver,
            "clock_control": self.run.profiler.clock_control,
            "cache_control": self.run.profiler.cache_control,
        }

    @cached_property
    def _rows_by_key(self) -> Mapping[str, pd.DataFrame]:
        # One groupby instead of one boolean mask per kernel: a 2,000-kernel run against
        # 90 baseline runs would otherwise scan 180,000 rows 2,000 times per rule.
        frame = self.comparable_history
        if frame.empty:
            return {}
        ordered = frame.sort_values("timestamp", kind="stable")
        return {str(k): rows for k, rows in ordered.groupby("kernel_key", sort=False)}

    def baseline(self, key: str) -> pd.DataFrame:
        """Comparable history rows of kernel ``key`` and its old names (aliases), oldest first."""
        parts = [
            self._rows_by_key[k]
            for k in (key, *self.config.old_keys(key))
            if k in self._rows_by_key
        ]
        if not parts:
            return self.comparable_history.iloc[0:0]
        if len(parts) == 1:
            return parts[0]
        return pd.concat(parts).sort_values("timestamp", kind="stable")

    @cached_property
    def _index(self) -> HistoryIndex:
        return HistoryIndex(self.comparable_history)

    @cached_property
    def _histories(self) -> dict[str, KernelHistory]:
        return {}  # by kernel key: rules ask for each kernel's several times

    def kernel_history(self, key: str) -> KernelHistory:
        """Comparable baseline of kernel ``key`` and its old names, as arrays, oldest first."""
        found = self._histories.get(key)
        if found is None:
            found = self._histories[key] = self._index.get((key, *self.config.old_keys(key)))
        return found

    @cached_property
    def _gate_index(self) -> HistoryIndex:
        if self.gate_history is None:
            return self._index
        return HistoryIndex(self.comparable_gate_history)

    def gate_kernel_history(self, key: str) -> KernelHistory:
        """``kernel_history`` over the gate's longer history (``gate_history``)."""
        return self._gate_index.get((key, *self.config.old_keys(key)))

    @cached_property
    def like_for_like(self) -> Mapping[str, float | None]:
        """``rules.timing.like_for_like_percent`` of every kernel with a percent of roof, by key.

        The gate and the verdict's rows each ask it of every kernel (None: no percent).
        """
        return {
            key: None
            if placement.percent_of_roof is None
            else placement.percent_of_roof
            if key in self.faster_off_binding  # two roofs: time compares them (regime-flip)
            or key in self.partly_counted  # one roof known: time judges them
            else like_for_like_percent(placement, self.kernel_history(key))
            for key, placement in self.placements.items()
        }

    @cached_property
    def faster_off_binding(self) -> frozenset[str]:
        """Kernels bound otherwise than their baseline and faster (``faster_off_its_binding``)."""
        return frozenset(
            key
            for key, placement in self.placements.items()
            if faster_off_its_binding(
                placement, self.kernels[key].duration_s, self.kernel_history(key)
            )
        )

    @cached_property
    def partly_counted(self) -> frozenset[str]:
        """Kernels with no regime now for want of FLOP or byte counts, where their baseline had one.

        Their percent of roof is of the one roof still counted (a GEMM with bytes and no FLOPs:
        3% of the dram roof against 15% of fp32's): a drop in it says nothing, time judges
        them, and ``lost-counters`` names them.
        """
        return frozenset(
            key
            for key, placement in self.placements.items()
            if placement.percent_of_roof is not None
            and placement.regime is None
            and lacks_a_count(self.kernels[key])
            and self.kernel_history(key).usual_regime[0] is not None
        )

    @cached_property
    def likely_renames(self) -> Mapping[str, Rename]:
        """New kernels doing the work of one vanished kernel, by new key (``rules.renames``)."""
        new = {key: work_of(self.placements[key]) for key in self.kernels if self.is_new(key)}
        if not new or self.comparable_history.empty:
            return {}
        gone = self._gone()
        keys = gone["kernel_key"].astype(str).tolist()
        work = zip(gone["total_flops"].astype(float), gone["bytes_dram"].astype(float), strict=True)
        names = dict(zip(keys, gone["kernel_name"].astype(str), strict=True))
        pairs = pair_by_work(new, dict(zip(keys, work, strict=True)))
        return {key: self._rename(key, old, names[old]) for key, old in pairs.items()}

    def is_new(self, key: str) -> bool:
        """Kernel ``key`` (or an old name of it) has no run in the comparable history."""
        return key not in self.history_keys and not self.kernel_history(key).n

    def _gone(self) -> pd.DataFrame:
        """The latest baseline run's kernels absent from this run, a row each."""
        recent = recent_kernels(self.comparable_history, 1)
        current = [self.config.current_key(str(k)) in self.kernels for k in recent["kernel_key"]]
        return recent[~np.asarray(current, dtype=bool)]

    def _rename(self, new_key: str, old_key: str, old_name: str) -> Rename:
        history = self.kernel_history(old_key)
        return Rename(
            new_key=new_key,
            old_key=old_key,
            old_name=old_name,
            baseline_percent=median_value(history.percent_of_roof),
            baseline_time_s=median_time(history.time_s),
        )

    @cached_property
    def history_keys(self) -> frozenset[str]:
        """Kernel keys in the comparable history, with aliases mapped to their new names."""
        keys = set() if self.comparable_history.empty else set(self._index.keys())  # grouped
        renamed = {self.config.current_key(k) for k in keys}
        return frozenset(renamed)

    @cached_property
    def device_scaling(self) -> Mapping[str, Scaling]:
        """Placed kernels judged against ``cross_device``, by key (``rules.scaling.scale``).

        Those with fewer than ``OWN_RUNS_SETTLED`` runs in their own card's gate history
        and a level on the other card whose work both roofs can place.
        """
        settled = OWN_RUNS_SETTLED
        return {k: s for k, s in self.gate_scaling.items() if self._own_runs(k) < settled}

    @cached_property
    def gate_scaling(self) -> Mapping[str, Scaling]:
        """``device_scaling`` up to ``GATE_RUNS_SETTLED`` runs: the gate's other-card segment."""
        other = self.cross_device
        if other is None:
            return {}
        young = [
            key
            for key, placement in self.placements.items()
            if placement.percent_of_roof is not None and self._own_runs(key) < GATE_RUNS_SETTLED
        ]
        if not young:
            return {}
        gate = GateOptions(**self.config.gate.model_dump())
        levels = device_levels(other.history, options=gate, rename=self.config.current_key)
        own = level_roofs([levels[key] for key in young if key in levels], other.roof)
        times, placements = self.measured_times, self.placements
        found = {
            key: scale_to(levels[key], other.roof, placements[key].roof, times[key], placed=roof)
            for key, roof in own.items()
        }
        return {key: scaled for key, scaled in found.items() if scaled is not None}

    def _own_runs(self, key: str) -> int:
        """``key``'s runs with a percent of roof in its own card's gate history."""
        return known_points(self.gate_kernel_history(key).percent_of_roof)

    @cached_property
    def measured_times(self) -> Mapping[str, tuple[float, ...]]:
        """Each kernel's time in the run, then in each re-measurement."""
        times = {key: [kernel.duration_s] for key, kernel in self.kernels.items()}
        for run in self.reruns:
            for kernel in run.kernels:
                if kernel.key in times:
                    times[kernel.key].append(kernel.duration_s)
        return {key: tuple(values) for key, values in times.items()}


def _like(column: pd.Series, value: str) -> npt.NDArray[np.bool_]:
    """Rows of ``column`` that are missing or read ``value`` as text.

    The rows holding ``value`` itself (nearly all, in a comparable history) are found by one
    comparison of the objects; only the others are converted to text and tested for missing.
    """
    try:
        same: npt.NDArray[np.bool_] = np.asarray(column.to_numpy(dtype=object) == value)
    except TypeError:  # pd.NA compares to NA, not False: every row tested below
        same = np.zeros(len(column), dtype=bool)
    other = np.flatnonzero(~same)
    if other.size:
        rest = column.iloc[other]
        same[other] = (rest.isna() | (rest.astype(str) == value)).to_numpy(dtype=bool)
    return same
