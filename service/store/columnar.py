"""A baseline run's measurements kept as columns: one row of arrays a run (``run_columns``).

A 2,000-kernel check reads 60 runs of history: 120,000 measurement rows, which cost about
0.3 s of CPU to turn into Python tuples and a frame, on SQLite as on PostgreSQL, whatever
the query. A run's measurements never change once stored, so the first check that reads a
run as baseline keeps them as one row here (the numbers as one little-endian structured
array, the two label columns as JSON), and every later check reads the run in one row.

The columns are made from the very rows the check read (``columns_of``), so a frame made
from them (``frame_of``) is the frame the rows give: the same values, bit for bit, and the
same dtypes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, cast

import numpy as np
import pandas as pd
import sqlalchemy as sa

from service.store.coretables import RUN_COLUMNS as _COLUMNS
from service.store.ids import insert_ignore
from service.store.sessions import StoreSession

#: How ``numbers`` and ``labels`` are laid out; a row of another layout is read as missing.
LAYOUT = 1
#: The numeric measurement columns, in the order of the structured array.
NUMBER_COLUMNS = (
    "kernel_id",
    "percent_of_roof",
    "time_s",
    "total_flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
    "peak_flop_time_s",
)
#: The text measurement columns (None where NULL).
LABEL_COLUMNS = ("regime", "binding")
_NUMBERS = np.dtype([("kernel_id", "<i8"), *((name, "<f8") for name in NUMBER_COLUMNS[1:])])
#: Runs a statement saves at most (far below the bulk path's COPY threshold).
_SAVE_CHUNK = 200


@dataclass(frozen=True)
class Columns:
    """One run's measurements: ``numbers`` (structured, ``NUMBER_COLUMNS``) and ``labels``."""

    numbers: np.ndarray[Any, np.dtype[np.void]]
    labels: Mapping[str, Sequence[str | None]]

    def __len__(self) -> int:
        return len(self.numbers)


def load_columns(session: StoreSession, run_ids: Sequence[int]) -> dict[int, Columns]:
    """The stored columns of those of ``run_ids`` that have them (of this ``LAYOUT``)."""
    found: dict[int, Columns] = {}
    c = _COLUMNS.c
    for start in range(0, len(run_ids), 5000):
        chunk = list(run_ids[start : start + 5000])
        stmt = sa.select(c.run_id, c.kernels, c.numbers, c.labels).where(
            c.run_id.in_(chunk), c.layout == LAYOUT
        )
        for run_id, kernels, numbers, labels in session.connection().execute(stmt):
            array, named = np.frombuffer(numbers, dtype=_NUMBERS), json.loads(labels)
            # A row whose parts disagree is read as missing (its rows are read), never as data.
            if all(len(part) == kernels for part in (array, *named.values())):
                found[int(run_id)] = Columns(array, named)
    return found


def save_columns(session: StoreSession, columns: Mapping[int, Columns]) -> None:
    """Keep ``columns`` (by run id); a run whose columns are already stored is skipped."""
    rows = [
        {
            "run_id": run_id,
            "layout": LAYOUT,
            "kernels": len(cols),
            "numbers": cols.numbers.tobytes(),
            "labels": json.dumps({name: list(cols.labels[name]) for name in LABEL_COLUMNS}),
        }
        for run_id, cols in columns.items()
    ]
    for start in range(0, len(rows), _SAVE_CHUNK):
        insert_ignore(session, _COLUMNS, rows[start : start + _SAVE_CHUNK])


def columns_of(rows: pd.DataFrame) -> dict[int, Columns]:
    """Each run's columns in ``rows`` (every measurement column and ``run_id``)."""
    numbers = np.empty(len(rows), dtype=_NUMBERS)
    for name in NUMBER_COLUMNS:
        numbers[name] = rows[name].to_numpy(dtype=_NUMBERS[name])
    labels = {name: _labels(rows[name]) for name in LABEL_COLUMNS}
    out = {}
    for run_id, at in rows.groupby("run_id", sort=False).indices.items():
        taken = {name: [values[i] for i in at] for name, values in labels.items()}
        out[int(cast(int, run_id))] = Columns(numbers[at], taken)
    return out


def _labels(values: pd.Series) -> list[str | None]:
    """A label column as plain strings, None where missing (NULL)."""
    return [None if missing else str(v) for v, missing in zip(values, values.isna(), strict=True)]


def frame_of(
    run_ids: Iterable[int], columns: Mapping[int, Columns], names: Sequence[str]
) -> pd.DataFrame:
    """The measurements of ``run_ids`` (in that order) with the columns ``names``.

    ``run_id`` and ``kernel_id`` are int64, the other numbers float64 (NaN where NULL), the
    labels as pandas infers them from the strings and Nones, as it does for fetched rows.
    """
    runs = [r for r in run_ids if r in columns]
    numbers = np.concatenate([columns[r].numbers for r in runs]) if runs else _NUMBERS_EMPTY
    data: dict[str, Any] = {}
    for name in names:
        if name == "run_id":
            counts = [len(columns[r]) for r in runs]
            data[name] = np.repeat(np.asarray(runs, dtype=np.int64), counts)
        elif name in NUMBER_COLUMNS:
            data[name] = np.ascontiguousarray(numbers[name])
        else:
            data[name] = list(chain.from_iterable(columns[r].labels[name] for r in runs))
    return pd.DataFrame(data)


_NUMBERS_EMPTY = np.empty(0, dtype=_NUMBERS)
