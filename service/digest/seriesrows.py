"""Where each series begins and ends in a prepared frame (sorted by series, then time).

Below ``service.digest.model``: the digest's parts that read a series' first or newest row
(the change scan, the tables, the devices it did not measure, the kernels off the roof)
share these, and some of them are imported by the model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

IntArray = npt.NDArray[np.int64]


def first_rows(series: npt.NDArray[np.integer[Any]]) -> IntArray:
    """Row offset of the first row of each series (``series`` sorted)."""
    count = int(series[-1]) + 1 if len(series) else 0
    return np.searchsorted(series, np.arange(count), side="left").astype(np.int64)


def last_rows(frame: pd.DataFrame) -> IntArray:
    """Row of the last night of each series."""
    series = frame["series"].to_numpy()
    count = int(series[-1]) + 1 if len(series) else 0
    return (np.searchsorted(series, np.arange(count), side="right") - 1).astype(np.int64)
