"""One card's history as arrays, each column read once: what ``rules.crossdevice`` levels read.

A kernel's rows are positions into the history's placed rows, oldest first and grouped by
kernel; strings are read through codes, so millions of rows make no Python object a row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd


def column_codes(column: pd.Series, nonempty: bool) -> tuple[npt.NDArray[np.intp], list[Any]]:
    """Codes of ``column`` (-1: not a string, or an empty one when ``nonempty``), their values.

    A categorical column is read through its codes, so a history of millions of rows makes
    no Python object per row.
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        labels = list(column.cat.categories)
        codes = column.cat.codes.to_numpy().astype(np.intp)
    else:
        codes, uniques = pd.factorize(column.to_numpy(), use_na_sentinel=True)
        labels = list(uniques)
    valid = np.asarray([isinstance(v, str) and (bool(v) or not nonempty) for v in labels] + [0])
    return np.where(valid[codes].astype(bool), codes, -1), labels


def usual_label(codes: npt.NDArray[np.intp], labels: list[Any]) -> str | None:
    """A level segment's binding: the most common code's label, the latest on a tie.

    The segment is already the one since the last change, so its majority is its binding.
    """
    known = codes[codes >= 0]
    if not known.size:
        return None
    counts = np.bincount(known)
    best = np.flatnonzero(counts == counts.max())
    if best.size > 1:  # the one seen last wins
        last = {int(c): i for i, c in enumerate(known)}
        best = np.asarray([max(best, key=lambda c: last[int(c)])])
    return str(labels[int(best[0])])


class DeviceRows:
    """One device history's placed rows as arrays, read once per column.

    ``order`` lists the frame's placed rows oldest first, grouped by key; a kernel's rows are
    positions into it.
    """

    def __init__(self, frame: pd.DataFrame, order: npt.NDArray[np.intp], percent: Any) -> None:
        self.frame, self.order, self.percent = frame, order, percent
        self._floats: dict[str, npt.NDArray[np.float64]] = {}
        self._codes: dict[str, tuple[npt.NDArray[np.intp], list[Any]]] = {}
        self._columns: dict[str, Any] = {}

    def floats(self, column: str, part: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        """``column`` of the rows ``part``, as floats."""
        if column not in self._floats:
            self._floats[column] = float_column(self.frame[column])
        return self._floats[column][self.order[part]]

    def codes(
        self, column: str, part: npt.NDArray[np.intp], nonempty: bool = False
    ) -> tuple[npt.NDArray[np.intp], list[Any]]:
        """``column``'s codes of the rows ``part`` and the labels (``column_codes``)."""
        if column not in self._codes:
            self._codes[column] = column_codes(self.frame[column], nonempty)
        codes, labels = self._codes[column]
        return codes[self.order[part]], labels

    def runs(self, part: npt.NDArray[np.intp]) -> int:
        """Distinct runs of the rows ``part`` (a kernel's; run ids are never missing)."""
        return int(np.unique(self._column("run_id")[self.order[part]]).size)

    def last_string(self, column: str, part: npt.NDArray[np.intp]) -> str:
        """``column`` of the last row of ``part``, as text."""
        return str(self._column(column)[int(self.order[part[-1]])])

    def _column(self, column: str) -> Any:
        """The column as a numpy array, taken once: a frame's look-up of one row costs 40 us."""
        if column not in self._columns:
            self._columns[column] = self.frame[column].to_numpy()
        return self._columns[column]


def float_column(values: pd.Series) -> npt.NDArray[np.float64]:
    """``values`` as floats; a float column as it is, not copied.

    A copy of each counter column of a card's 7 M rows is 58 MB, and six of them are cached.
    """
    if isinstance(values.dtype, np.dtype) and values.dtype.kind == "f":
        return values.to_numpy(dtype=float)
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
