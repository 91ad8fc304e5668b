"""History rows of runs on corrected datasheet figures, placed on today's roof a chunk at a time.

``rules.roofchange`` finds the runs whose datasheet figures were corrected since and each
one's roof on today's figures at its own clocks; here their history rows are placed on it
from the work they were stored with (FLOPs by precision, bytes by tier) and their own time.
Placed one row at a time by ``rules.place`` this cost about 28 µs a row (60 nights of 2,000
kernels: 3 s added to every check for the 60 nights after a correction); the rows are now
grouped by run and by shape (the FLOP precisions in their stored order, the byte tiers
known) and each group placed at once by ``rules.batchplace``, element by element the same
floats as ``place`` (tests/rules/test_reread_batch.py holds both equal). Pure functions of
frames and roofs; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules.batchplace import Floats, place_chunk
from rules.clocks import ClockedRoof
from rules.placedroof import StoredRows, on_datasheet
from rules.roofchange import Reread
from rules.roofline import DEFAULT_BORDERLINE_BAND, Roof, place

#: The columns ``reread_history`` reads of the stored work, beside the row's key: the work to
#: place again, and the figures that tell which of a ``ClockedRoof``'s roofs it was placed on.
WORK_COLUMNS = (
    "run_id",
    "flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
    "total_flops",
    "peak_flop_time_s",
    "binding",
    "t_roof_s",
)
#: The tiers of the stored work, in the order ``place`` is given them.
TIERS = ("dram", "l2", "l1")
#: The history columns a re-read sets beside percent of roof, and the placement's fields.
_PLACED_COLUMNS = {"regime": "regime", "binding": "binding", "peak_flop_time_s": "peak_flop_time_s"}
#: Fewer rows of one shape are placed one by one (``place``): a call of ``place_chunk`` costs
#: about what placing 10 rows singly does.
MIN_CHUNK = 16


@dataclass(frozen=True)
class _Chunk:
    """Rows of one run and one shape: where they go in the frame, their work and time.

    And the figures stored with them (``rules.placedroof.StoredRows``), which tell which of a
    ``ClockedRoof``'s roofs each was placed on.
    """

    positions: npt.NDArray[np.int64]
    flops: dict[str, Floats]
    nbytes: dict[str, Floats]
    seconds: Floats
    stored: StoredRows

    def rows(self) -> Iterator[tuple[dict[str, float], dict[str, float], float | None]]:
        """Each row's FLOPs, bytes (as ``place`` takes them) and time (None: not positive)."""
        for i, seconds in enumerate(self.seconds.tolist()):
            flops = {p: float(a[i]) for p, a in self.flops.items()}
            yield flops, {t: float(a[i]) for t, a in self.nbytes.items()}, _positive(seconds)

    def subset(self, rows: npt.NDArray[np.bool_]) -> _Chunk:
        """The rows ``rows`` (a mask) of this chunk."""
        return _Chunk(
            self.positions[rows],
            {p: a[rows] for p, a in self.flops.items()},
            {t: a[rows] for t, a in self.nbytes.items()},
            self.seconds[rows],
            self.stored.subset(rows),
        )


def _positive(seconds: float) -> float | None:
    return seconds if seconds > 0 else None


@dataclass(frozen=True)
class _Figures:
    """What a re-read sets of a chunk's rows (NaN and None: unknown)."""

    percent_of_roof: Floats
    regime: list[str | None]
    binding: list[str | None]
    peak_flop_time_s: Floats


def _place(chunk: _Chunk, roof: Roof) -> _Figures:
    """``chunk`` on ``roof``: by ``place_chunk``, or by ``place`` row by row when it is small."""
    if len(chunk.seconds) >= MIN_CHUNK:
        found = place_chunk(
            chunk.flops, chunk.nbytes, chunk.seconds, roof, band=DEFAULT_BORDERLINE_BAND
        )
        return _Figures(
            found.percent_of_roof,
            found.regime,
            found.binding,
            found.peak_flop_time_s,
        )
    placed = [place(flops, nbytes, seconds, roof) for flops, nbytes, seconds in chunk.rows()]
    return _Figures(
        _nan_for_none([p.percent_of_roof for p in placed]),
        [p.regime for p in placed],
        [p.binding for p in placed],
        _nan_for_none([p.peak_flop_time_s for p in placed]),
    )


def _nan_for_none(values: list[float | None]) -> Floats:
    return np.array([math.nan if v is None else v for v in values], dtype=float)


def reread_history(
    frame: pd.DataFrame,
    work: pd.DataFrame,
    rereads: Mapping[int, Reread],
    key: str = "kernel_key",
) -> pd.DataFrame:
    """``frame`` (history rows) with the rows of the runs in ``rereads`` on today's roof.

    Requires ``run_id``, ``key``, ``time_s`` and ``percent_of_roof`` in ``frame`` and
    ``WORK_COLUMNS`` and ``key`` in ``work``; sets ``percent_of_roof``, and ``regime``,
    ``binding`` and ``peak_flop_time_s`` where ``frame`` has them. A row with no stored work
    keeps its figures.
    """
    if frame.empty or not rereads:
        return frame
    rows = np.flatnonzero(frame["run_id"].isin(list(rereads)).to_numpy())
    if not len(rows):
        return frame
    columns = [c for c in ("percent_of_roof", *_PLACED_COLUMNS) if c in frame]
    values: dict[str, npt.NDArray[Any]] = {c: frame[c].to_numpy().copy() for c in columns}
    for run_id, chunk in _chunks(_work_rows(frame, work, rows, key)):
        for part, roof in _on_roofs(chunk, rereads[run_id]):
            _write(values, part.positions, _place(part, roof))
    out = frame.copy(deep=False)
    for column, array in values.items():  # a compact frame's strings stay categories
        categorical = isinstance(frame[column].dtype, pd.CategoricalDtype)
        out[column] = pd.Categorical(array) if categorical else array
    return out


def _work_rows(
    frame: pd.DataFrame, work: pd.DataFrame, rows: npt.NDArray[np.intp], key: str
) -> pd.DataFrame:
    """``frame``'s ``rows`` (``position``, ``run_id``, ``key``, ``time_s``) with their work."""
    part = pd.DataFrame(
        {
            "position": rows,
            "run_id": frame["run_id"].to_numpy()[rows],
            key: frame[key].to_numpy()[rows].astype(object),
            "time_s": frame["time_s"].to_numpy(dtype=float)[rows],
        }
    )
    return part.merge(work.astype({key: object}), on=["run_id", key], how="inner")


def _floats(column: pd.Series) -> Floats:
    """A stored column as floats, None (and anything but a number) as NaN."""
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)


def _chunks(part: pd.DataFrame) -> Iterator[tuple[int, _Chunk]]:
    """``part``'s rows by run and shape: the FLOP precisions as stored, the tiers with bytes.

    ``place`` sums and compares a kernel's terms in the order of its FLOP precisions, so each
    chunk keeps it; its tiers go in ``TIERS``' order.
    """
    flops = part["flops"].to_numpy()
    nbytes = {tier: _floats(part[f"bytes_{tier}"]) for tier in TIERS}
    tiers = np.zeros(len(part), dtype=np.int64)  # bit i: TIERS[i] has bytes
    for i, tier in enumerate(TIERS):
        tiers |= (~np.isnan(nbytes[tier])).astype(np.int64) << i
    shapes: dict[tuple[int, tuple[Any, ...], int], list[int]] = {}
    for row, (run_id, counted, known) in enumerate(
        zip(part["run_id"].tolist(), flops, tiers.tolist(), strict=True)
    ):
        names = tuple(counted) if isinstance(counted, Mapping) else ()
        shapes.setdefault((int(run_id), names, known), []).append(row)
    positions, seconds = part["position"].to_numpy(), part["time_s"].to_numpy(dtype=float)
    stored = _stored(part, nbytes)
    for (run_id, names, known), members in shapes.items():
        at = np.asarray(members)
        yield (
            run_id,
            _Chunk(
                positions[at],
                {str(p): np.array([float(flops[i][p]) for i in members]) for p in names},
                {t: nbytes[t][at] for i, t in enumerate(TIERS) if known >> i & 1},
                seconds[at],
                stored.subset(at),
            ),
        )


def _stored(part: pd.DataFrame, nbytes: dict[str, Floats]) -> StoredRows:
    """``part``'s rows' figures as stored, ``nbytes`` their bytes by tier (NaN: unknown)."""
    return StoredRows(
        _floats(part["total_flops"]),
        nbytes,
        _floats(part["peak_flop_time_s"]),
        part["binding"].to_numpy(dtype=object),
        _floats(part["t_roof_s"]),
    )


def _on_roofs(chunk: _Chunk, reread: Reread) -> Iterator[tuple[_Chunk, Roof]]:
    """``chunk``'s rows and the roof each is placed on now.

    A ``ClockedRoof``'s kernels that recorded no clock were placed on its datasheet roof:
    those whose stored figures fit it (``rules.placedroof``, as for one row).
    """
    then, now = reread.stored, reread.today
    if not isinstance(then, ClockedRoof) or not isinstance(now, ClockedRoof):
        yield chunk, now
        return
    on_sheet = on_datasheet(then, chunk.stored)
    for rows, roof in ((~on_sheet, now), (on_sheet, now.unscaled)):
        if rows.any():
            yield chunk.subset(rows), roof


def _write(
    values: dict[str, npt.NDArray[Any]], positions: npt.NDArray[np.int64], placed: _Figures
) -> None:
    """Set the rows of ``positions`` that have a percent of roof now (the others keep theirs)."""
    known = ~np.isnan(placed.percent_of_roof)
    at = positions[known]
    values["percent_of_roof"][at] = placed.percent_of_roof[known]
    for column, field in _PLACED_COLUMNS.items():
        if column in values:
            found = getattr(placed, field)
            if isinstance(found, list):  # None: unknown, NaN in the frame
                found = np.array([math.nan if v is None else v for v in found], dtype=object)
            values[column][at] = found[known]
