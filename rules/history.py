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

import numpy as np
import numpy.typing as npt
import pandas as pd

FloatArray = npt.NDArray[np.float64]
NUMERIC = ("percent_of_roof", "time_s", "total_flops", "bytes_dram")


class _Labels:
    """An index's label columns as strings, each converted on first use.

    The gate reads only numbers from its long history, so converting 120,000 labels it
    never reads would cost it more than its statistics.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self._columns: dict[str, npt.NDArray[np.object_]] = {}
        self._codes: dict[str, tuple[npt.NDArray[np.intp], list[str]]] = {}

    def of(self, column: str, rows: npt.NDArray[np.intp]) -> tuple[str | None, ...]:
        if column not in self._columns:
            self._columns[column] = _labels(self._frame[column])
        return tuple(self._columns[column][rows].tolist())

    def codes(self, column: str) -> tuple[npt.NDArray[np.intp], list[str]]:
        """``column``'s labels as integer codes per index row (-1: missing or empty), the labels.

        For tests over many kernels at once (``rules.kernelbaselines``), without a tuple of
        labels per kernel.
        """
        key = f"codes:{column}"
        if key not in self._codes:
            if column not in self._columns:
                self._columns[column] = _labels(self._frame[column])
            factorized, uniques = pd.factorize(self._columns[column])
            labels = [str(u) for u in uniques]
            codes: npt.NDArray[np.intp] = np.asarray(factorized, dtype=np.intp)
            empty = [i for i, label in enumerate(labels) if not label]
            if empty:  # an empty label is no label, as every reader of the tuples treats it
                codes[np.isin(codes, empty)] = -1
            self._codes[key] = (codes, labels)
        return self._codes[key]


@dataclass(frozen=True)
class KernelHistory:
    """One kernel's baseline rows, oldest first.

    Attributes:
        percent_of_roof: Percent of roof per baseline run (NaN when unplaced).
        time_s: Measured time per run.
        total_flops: Total FLOPs per run (NaN when unknown).
        bytes_dram: DRAM bytes per run (NaN when unknown).
        rows: The rows' positions in the index (for the labels, read on first use).
    """

    percent_of_roof: FloatArray
    time_s: FloatArray
    total_flops: FloatArray
    bytes_dram: FloatArray
    rows: npt.NDArray[np.intp] = field(repr=False)
    labels: _Labels = field(repr=False)

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

    def _usual(self, column: str) -> tuple[str | None, int]:
        """The most common known label and its count; of those tied, the one seen last.

        As ``Counter`` over the labels newest first would say, from the index's codes.
        """
        codes, labels = self.labels.codes(column)
        mine = codes[self.rows]
        if mine.size and mine[-1] >= 0 and bool(np.all(mine == mine[-1])):
            return labels[int(mine[-1])], int(mine.size)  # one label all along: the usual case
        known = mine[mine >= 0]
        if not known.size:
            return None, 0
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
        with np.errstate(all="ignore"):
            return np.where(self.bytes_dram > 0, self.total_flops / self.bytes_dram, np.nan)


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
        self._numeric = {
            c: pd.to_numeric(ordered[c], errors="coerce").to_numpy(dtype=float) for c in NUMERIC
        }
        self._labels = _Labels(ordered)
        self._cache: dict[tuple[str, ...], KernelHistory] = {}
        codes, keys = pd.factorize(ordered["kernel_key"].astype(str))
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(keys) + 1))
        self._rows = {str(k): order[bounds[i] : bounds[i + 1]] for i, k in enumerate(keys)}

    def keys(self) -> Iterable[str]:
        """Every kernel key in the history."""
        return self._rows.keys()

    def get(self, keys: tuple[str, ...]) -> KernelHistory:
        """The rows of ``keys`` (a kernel and its old names), merged in time order."""
        if keys not in self._cache:
            self._cache[keys] = self._build(keys)
        return self._cache[keys]

    def _build(self, keys: tuple[str, ...]) -> KernelHistory:
        parts = [self._rows[k] for k in keys if k in self._rows]
        if len(parts) == 1:
            rows = parts[0]  # already in time order (a stable sort of the time-ordered rows)
        else:
            rows = np.sort(np.concatenate(parts)) if parts else np.array([], dtype=np.intp)
        numeric = {c: self._numeric[c][rows] for c in NUMERIC}
        return KernelHistory(
            percent_of_roof=numeric["percent_of_roof"],
            time_s=numeric["time_s"],
            total_flops=numeric["total_flops"],
            bytes_dram=numeric["bytes_dram"],
            rows=rows,
            labels=self._labels,
        )
