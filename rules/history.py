"""A kernel's baseline as plain arrays, indexed once per run for every rule.

Rules ask for one kernel's history thousands of times per check (2,000 kernels x several
rules); slicing a DataFrame each time costs more than the statistics. ``HistoryIndex`` sorts
the comparable history by time once, converts the numeric columns to numpy once, and hands
out ``KernelHistory`` views by index arrays.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.stats.frozen import frozen_from

FloatArray = npt.NDArray[np.float64]
NUMERIC = ("percent_of_roof", "time_s", "total_flops", "bytes_dram")

#: The newest base-branch runs that, agreeing, make their regime or binding the kernel's usual
#: one whatever the older runs held: two, as the nightly gate confirms a change in two nights.
#: With the majority of the window instead, a GEMM whose fusion broke on main read as
#: "usually compute-bound" for seven more nights, and every PR in them failed regime-flip
#: for a flip it did not make (307 → 307 ms).
SETTLED_RUNS = 2


class _Labels:
    """An index's label columns as strings, each converted on first use, and its key groups.

    The gate reads only numbers from its long history, so converting 120,000 labels it
    never reads would cost it more than its statistics. What several rules ask of every
    kernel (its usual label, its DRAM intensity) is computed here once for every kernel of
    the index (``_Groups``), not once per kernel.
    """

    def __init__(self, frame: pd.DataFrame, groups: _Groups) -> None:
        self._frame = frame
        self.groups = groups
        self._columns: dict[str, npt.NDArray[np.object_]] = {}
        self._codes: dict[str, tuple[npt.NDArray[np.intp], list[str]]] = {}
        self._uniform: dict[str, list[str | None]] = {}
        self._intensity: FloatArray | None = None

    def of(self, column: str, rows: npt.NDArray[np.intp]) -> tuple[str | None, ...]:
        return tuple(self.column(column)[rows].tolist())

    def codes(self, column: str) -> tuple[npt.NDArray[np.intp], list[str]]:
        """``column``'s labels as integer codes per index row (-1: missing or empty), the labels.

        For tests over many kernels at once (``rules.kernelbaselines``), without a tuple of
        labels per kernel.
        """
        key = f"codes:{column}"
        if key not in self._codes:
            factorized, uniques = pd.factorize(self.column(column))
            labels = [str(u) for u in uniques]
            codes: npt.NDArray[np.intp] = np.asarray(factorized, dtype=np.intp)
            empty = [i for i, label in enumerate(labels) if not label]
            if empty:  # an empty label is no label, as every reader of the tuples treats it
                codes[np.isin(codes, empty)] = -1
            self._codes[key] = (codes, labels)
        return self._codes[key]

    def column(self, column: str) -> npt.NDArray[np.object_]:
        """``column``'s labels per index row (None where missing)."""
        if column not in self._columns:
            self._columns[column] = _labels(self._frame[column])
        return self._columns[column]

    def uniform(self, column: str) -> list[str | None]:
        """Per key group, its one known ``column`` label when every row has it, else None.

        The usual case of ``KernelHistory._usual``, for every kernel in a few array operations
        (a label differing from the row before it, within a group, makes the group mixed).
        """
        if column not in self._uniform:
            self._uniform[column] = _uniform(self.column(column), self.groups)
        return self._uniform[column]

    def intensity(self) -> FloatArray:
        """``KernelHistory.dram_intensity`` of every row, in the groups' order."""
        if self._intensity is None:
            flops, nbytes = self.groups.numeric["total_flops"], self.groups.numeric["bytes_dram"]
            with np.errstate(all="ignore"):
                self._intensity = np.where(nbytes > 0, flops / nbytes, np.nan)
            self._intensity.flags.writeable = False
        return self._intensity


@dataclass(frozen=True)
class _Groups:
    """An index's rows grouped by kernel key, in time order within each key.

    Attributes:
        order: Index row positions, key group after key group.
        starts: Where each group starts in ``order``; ``ends``: where it ends.
        numeric: The numeric columns in ``order`` (read-only: histories are views of them).
    """

    order: npt.NDArray[np.intp]
    starts: npt.NDArray[np.intp]
    ends: npt.NDArray[np.intp]
    numeric: dict[str, FloatArray]


@dataclass(frozen=True)
class KernelHistory:
    """One kernel's baseline rows, oldest first.

    Attributes:
        percent_of_roof: Percent of roof per baseline run (NaN when unplaced).
        time_s: Measured time per run.
        total_flops: Total FLOPs per run (NaN when unknown).
        bytes_dram: DRAM bytes per run (NaN when unknown).
        rows: The rows' positions in the index (for the labels, read on first use).
        group: The index's key group these rows are, whole (-1: merged names, or a part):
            its figures computed for every kernel at once are read for it.
    """

    percent_of_roof: FloatArray
    time_s: FloatArray
    total_flops: FloatArray
    bytes_dram: FloatArray
    rows: npt.NDArray[np.intp] = field(repr=False)
    labels: _Labels = field(repr=False)
    group: int = field(default=-1, repr=False)

    @cached_property
    def regime(self) -> tuple[str | None, ...]:
        """Regime per run (None when unplaced)."""
        return self.labels.of("regime", self.rows)

    @cached_property
    def binding(self) -> tuple[str | None, ...]:
        """Binding resource per run."""
        return self.labels.of("binding", self.rows)

    @cached_property
    def commit(self) -> tuple[str | None, ...]:
        """Commit per run."""
        return self.labels.of("commit", self.rows)

    @cached_property
    def usual_binding(self) -> tuple[str | None, int]:
        """``rules.timing.usual`` of ``binding``: asked by several rules of every kernel."""
        return self._usual("binding")

    @cached_property
    def usual_regime(self) -> tuple[str | None, int]:
        """``rules.timing.usual`` of ``regime``."""
        return self._usual("regime")

    def one_label(self, column: str) -> str | None:
        """The known ``column`` label every run has (None: none, or more than one)."""
        if self.group >= 0:
            return self.labels.uniform(column)[self.group]
        found = set(self.labels.of(column, self.rows))
        one = found.pop() if len(found) == 1 else None
        return one or None

    def _usual(self, column: str) -> tuple[str | None, int]:
        """The base branch's label now, and how many runs held it.

        The label of the newest ``SETTLED_RUNS`` known runs when they agree (a change the base
        branch made and kept), else the most common known label (of those tied, the one seen
        last, as ``Counter`` over the labels newest first would say), from the index's codes.
        """
        if self.group >= 0 and (one := self.labels.uniform(column)[self.group]) is not None:
            return one, self.n
        codes, labels = self.labels.codes(column)
        mine = codes[self.rows]
        if mine.size and mine[-1] >= 0 and bool(np.all(mine == mine[-1])):
            return labels[int(mine[-1])], int(mine.size)  # one label all along: the usual case
        known = mine[mine >= 0]
        if not known.size:
            return None, 0
        if known.size >= SETTLED_RUNS and bool(np.all(known[-SETTLED_RUNS:] == known[-1])):
            return labels[int(known[-1])], int(np.count_nonzero(known == known[-1]))
        counts = np.bincount(known)
        tied = np.flatnonzero(counts == counts.max())
        latest = max((int(c) for c in tied), key=lambda code: int(np.flatnonzero(mine == code)[-1]))
        return labels[latest], int(counts[latest])

    @property
    def n(self) -> int:
        """Number of baseline rows."""
        return int(self.rows.size)

    def part(self, rows: slice) -> KernelHistory:
        """The rows ``rows`` of this history (positions, oldest first)."""
        return KernelHistory(
            percent_of_roof=self.percent_of_roof[rows],
            time_s=self.time_s[rows],
            total_flops=self.total_flops[rows],
            bytes_dram=self.bytes_dram[rows],
            rows=self.rows[rows],
            labels=self.labels,
        )

    def dram_intensity(self) -> FloatArray:
        """``total_flops / bytes_dram`` per run (NaN where unknown or zero bytes)."""
        if self.group >= 0:
            groups = self.labels.groups
            return self.labels.intensity()[groups.starts[self.group] : groups.ends[self.group]]
        # Divided only where there are bytes: no warnings to silence (``errstate`` costs more
        # than the division of a 40-night history, and every kernel asks).
        known = self.bytes_dram > 0
        out = np.full(self.bytes_dram.shape, np.nan)
        return np.divide(self.total_flops, self.bytes_dram, out=out, where=known)


def _uniform(labels: npt.NDArray[np.object_], groups: _Groups) -> list[str | None]:
    """``_Labels.uniform`` of the labels ``labels`` (one per index row)."""
    grouped = labels[groups.order]
    if not grouped.size:
        return []
    differs = np.zeros(grouped.size, dtype=np.intp)
    differs[1:] = grouped[1:] != grouped[:-1]
    differs[groups.starts] = 0  # a group's first row follows another group's last
    changes = cast(list[int], np.add.reduceat(differs, groups.starts).tolist())
    last = cast(list[str | None], grouped[groups.ends - 1].tolist())
    return [one if one and not c else None for one, c in zip(last, changes, strict=True)]


def _factorize(keys: npt.NDArray[np.object_]) -> tuple[npt.NDArray[np.intp], list[str]]:
    """``pd.factorize(keys)``: each row's code, in order of first appearance, and the keys.

    Nightly runs list the same kernels in the same order: such a history is recognised by
    comparing each run's keys with the run's before, cheaper than hashing 100,000s of keys.
    """
    period = _period(keys)
    if period:
        codes: npt.NDArray[np.intp] = np.arange(keys.size, dtype=np.intp) % period
        return codes, cast(list[str], keys[:period].tolist())
    factorized, uniques = pd.factorize(keys)
    return np.asarray(factorized, dtype=np.intp), list(uniques)


def _period(keys: npt.NDArray[np.object_]) -> int:
    """``p`` when ``keys`` are ``p`` distinct keys repeated in the same order (else 0)."""
    again = np.flatnonzero(keys[1:] == keys[0]) if keys.size > 1 else np.array([], dtype=np.intp)
    if not again.size:
        return 0
    period = int(again[0]) + 1
    if len(set(keys[:period].tolist())) < period or not np.all(keys[period:] == keys[:-period]):
        return 0
    return period


def _labels(column: pd.Series) -> npt.NDArray[np.object_]:
    """``column`` as strings, None where missing (vectorised: a long history has 100,000s)."""
    text = column.astype(str).to_numpy(dtype=object)
    missing = np.array(None, dtype=object)
    labels: npt.NDArray[np.object_] = np.where(column.isna().to_numpy(), missing, text)
    return labels


class HistoryIndex:
    """Row positions per kernel key over a frame sorted by time."""

    def __init__(self, frame: pd.DataFrame) -> None:
        ordered = frame.sort_values("timestamp", kind="stable") if len(frame) else frame
        numeric = {
            c: pd.to_numeric(ordered[c], errors="coerce").to_numpy(dtype=float) for c in NUMERIC
        }
        codes, keys = _factorize(ordered["kernel_key"].astype(str).to_numpy(dtype=object))
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(keys) + 1))
        grouped = {c: values[order] for c, values in numeric.items()}
        for values in grouped.values():
            values.flags.writeable = False  # every single-key history is a view of these
        groups = _Groups(order, bounds[:-1], bounds[1:], grouped)
        self._numeric = numeric
        self._labels = _Labels(ordered, groups)
        self._cache: dict[tuple[str, ...], KernelHistory] = {}
        self._group = {str(k): i for i, k in enumerate(keys)}
        self._bounds = cast(list[int], bounds.tolist())

    def keys(self) -> Iterable[str]:
        """Every kernel key in the history."""
        return self._group.keys()

    def get(self, keys: tuple[str, ...]) -> KernelHistory:
        """The rows of ``keys`` (a kernel and its old names), merged in time order."""
        if keys not in self._cache:
            self._cache[keys] = self._build(keys)
        return self._cache[keys]

    def _build(self, keys: tuple[str, ...]) -> KernelHistory:
        if len(keys) == 1 and keys[0] in self._group:
            return self._whole(self._group[keys[0]])
        parts = [self._rows(k) for k in keys if k in self._group]
        if not parts:
            return self._no_rows
        # One key's rows are in time order already (a stable sort of the time-ordered rows).
        return self._of_rows(parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts)))

    @cached_property
    def _no_rows(self) -> KernelHistory:
        """The history of every kernel the index has no row of (all of a first run's): one.

        Its figures (``usual_binding``, ...) are computed once, not once per new kernel.
        """
        return self._of_rows(np.array([], dtype=np.intp))

    def _of_rows(self, rows: npt.NDArray[np.intp]) -> KernelHistory:
        """The history of the index's ``rows`` (copies of their figures), in the order given."""
        numeric = {c: self._numeric[c][rows] for c in NUMERIC}
        return KernelHistory(
            percent_of_roof=numeric["percent_of_roof"],
            time_s=numeric["time_s"],
            total_flops=numeric["total_flops"],
            bytes_dram=numeric["bytes_dram"],
            rows=rows,
            labels=self._labels,
        )

    def _rows(self, key: str) -> npt.NDArray[np.intp]:
        group = self._group[key]
        return self._labels.groups.order[self._bounds[group] : self._bounds[group + 1]]

    def _whole(self, group: int) -> KernelHistory:
        """Key group ``group``'s history: views of the grouped columns, no copies."""
        rows = slice(self._bounds[group], self._bounds[group + 1])
        numeric = self._labels.groups.numeric
        # A check builds one per kernel of each index: the per-field calls cost more than the views.
        return frozen_from(
            KernelHistory,
            percent_of_roof=numeric["percent_of_roof"][rows],
            time_s=numeric["time_s"][rows],
            total_flops=numeric["total_flops"][rows],
            bytes_dram=numeric["bytes_dram"][rows],
            rows=self._labels.groups.order[rows],
            labels=self._labels,
            group=group,
        )
