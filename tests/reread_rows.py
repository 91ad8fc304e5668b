"""The datasheet re-read placed row by row: the reference ``rules.reread_history`` must equal.

``rules.reread_history`` placed each affected history row with ``rules.place`` (about 28 µs a
row) until it placed them a chunk of one shape at a time (``rules.batchplace``). This is that
row-by-row path, kept for the equality test (tests/rules/test_reread_batch.py) and the
benchmark beside it (tests/bench/bench_reread.py). A ``ClockedRoof`` run's row is on the roof
``rules.placedroof.placed_roof`` gives its stored figures, one row at a time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from rules import (
    ClockedRoof,
    Datasheet,
    Placement,
    Reread,
    Roof,
    builtin_catalog,
    place,
    reread_roof,
)
from rules.placedroof import placed_roof
from rules.scaling import Work

#: The history columns a re-read sets beside percent of roof, and the ``Placement`` fields.
PLACED_COLUMNS = {"regime": "regime", "binding": "binding", "peak_flop_time_s": "peak_flop_time_s"}


def _work_of(row: Mapping[Any, Any]) -> tuple[dict[str, float], dict[str, float]]:
    flops = row["flops"] if isinstance(row["flops"], Mapping) else {}
    nbytes = {
        tier: float(value)
        for tier in ("dram", "l2", "l1")
        if (value := row[f"bytes_{tier}"]) is not None and value == value
    }
    return {str(p): float(v) for p, v in flops.items()}, nbytes


def _known(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _now(reread: Reread, row: Mapping[Any, Any], nbytes: Mapping[str, float]) -> Roof:
    """The roof ``row`` is placed on now: of a ``ClockedRoof``, the one its figures fit."""
    then, now = reread.stored, reread.today
    if not isinstance(then, ClockedRoof) or not isinstance(now, ClockedRoof):
        return now
    binding = row["binding"] if isinstance(row["binding"], str) else None
    work = Work(_known(row["total_flops"]), nbytes, _known(row["peak_flop_time_s"]), binding)
    return now.unscaled if placed_roof(then, work, _known(row["t_roof_s"])) is not then else now


def _placed_now(row: Mapping[Any, Any], reread: Reread) -> Placement | None:
    flops, nbytes = _work_of(row)
    now = _now(reread, row, nbytes)
    time_s = float(row["time_s"])
    return place(flops, nbytes, time_s, now) if time_s > 0 else None


def reread_rows(
    frame: pd.DataFrame,
    work: pd.DataFrame,
    rereads: Mapping[int, Reread],
    key: str = "kernel_key",
) -> pd.DataFrame:
    """``rules.reread_history`` as it was at 7a52e42: each affected row placed by ``place``."""
    if frame.empty or not rereads:
        return frame
    rows = np.flatnonzero(frame["run_id"].isin(list(rereads)).to_numpy())
    if not len(rows):
        return frame
    part = pd.DataFrame(
        {
            "position": rows,
            "run_id": frame["run_id"].to_numpy()[rows],
            key: frame[key].to_numpy()[rows].astype(object),
            "time_s": frame["time_s"].to_numpy(dtype=float)[rows],
        }
    )
    part = part.merge(work.astype({key: object}), on=["run_id", key], how="inner")
    columns = [c for c in ("percent_of_roof", *PLACED_COLUMNS) if c in frame]
    values = {c: frame[c].to_numpy().copy() for c in columns}
    for row in part.to_dict("records"):
        placed = _placed_now(row, rereads[int(row["run_id"])])
        if placed is None or placed.percent_of_roof is None:
            continue
        values["percent_of_roof"][row["position"]] = placed.percent_of_roof
        for column, value in PLACED_COLUMNS.items():
            if column in values:
                found = getattr(placed, value)
                values[column][row["position"]] = math.nan if found is None else found
    out = frame.copy(deep=False)
    for column, array in values.items():
        categorical = isinstance(frame[column].dtype, pd.CategoricalDtype)
        out[column] = pd.Categorical(array) if categorical else array
    return out


#: What a stored row keeps of its placement beside its work (``rules.reread_history`` reads it).
STORED = ("total_flops", "peak_flop_time_s", "binding", "t_roof_s")
#: Precisions a generated kernel counts (``tensor_int4``: no H100 peak, a missing resource).
PRECISIONS = ("tensor_bf16", "fp32", "fp16", "tensor_fp8", "fp64", "tensor_int4")


def _clocked(roof: Roof, sm: float, clocked: bool) -> Roof:
    """``roof`` at ``sm`` times its SM clock (DRAM at its own), a ``ClockedRoof`` or plain."""
    scaled = replace(
        roof,
        peak_flop_per_s={p: v * sm for p, v in roof.peak_flop_per_s.items()},
        bandwidth_byte_per_s={
            t: v * (1.0 if t == "dram" else sm) for t, v in roof.bandwidth_byte_per_s.items()
        },
    )
    return ClockedRoof(**vars(scaled), unscaled=roof) if clocked else scaled


def _flops(rng: np.random.Generator, varied: bool) -> dict[str, float] | None:
    """0-3 precisions in any order, some zero; now and then no mapping at all.

    Not ``varied``: one precision, tensor_bf16 or fp32 (a nightly run's few shapes).
    """
    if not varied:
        return {str(rng.choice(["tensor_bf16", "fp32"])): float(10 ** rng.uniform(6, 12))}
    if rng.random() < 0.03:
        return None
    names = rng.permutation(PRECISIONS)[: rng.integers(0, 4)]
    return {str(p): float(rng.choice([0.0, 10 ** rng.uniform(6, 12)])) for p in names}


def _bytes(rng: np.random.Generator, size: int, missing: float) -> list[float | None]:
    values: list[float | None] = list(10 ** rng.uniform(3, 10, size))
    for i in np.flatnonzero(rng.random(size) < missing):
        values[i] = None if rng.random() < 0.5 else math.nan
    return values


def _run_roofs(rng: np.random.Generator, old: Roof, new: Roof, sheet: Datasheet) -> Reread:
    """A run stored on ``old``'s figures (as it is, scaled or clocked), re-read on ``new``'s."""
    kind = rng.integers(0, 3)
    then = old if kind == 0 else _clocked(old, float(rng.uniform(0.7, 0.95)), kind == 2)
    today = new if kind == 0 else _clocked(new, 0.88, kind == 2)
    reread = reread_roof(then, today, sheet)
    assert reread is not None
    return reread


def _kernels(
    rng: np.random.Generator, run_id: int, kernels: int, reread: Reread, varied: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One run's history rows and stored work; a ClockedRoof's kernels half on its datasheet."""
    keys = [f"k{i}" for i in range(kernels)]
    flops = [_flops(rng, varied) for _ in keys]
    missing = (0.1, 0.5, 0.9) if varied else (0.0, 0.0, 1.0)
    nbytes = {
        t: _bytes(rng, kernels, m) for t, m in zip(("dram", "l2", "l1"), missing, strict=True)
    }
    then = reread.stored
    placed = []
    for i, work in enumerate(flops):
        on = then.unscaled if isinstance(then, ClockedRoof) and rng.random() < 0.5 else then
        known = {t: float(b[i]) for t, b in nbytes.items() if b[i] is not None and b[i] == b[i]}
        placed.append(place(work or {}, known, None, on))
    times = 10 ** rng.uniform(-6, -2, kernels)
    if varied:
        times[rng.random(kernels) < 0.03] = 0.0
        times[rng.random(kernels) < 0.03] = math.nan
    frame = pd.DataFrame(
        {
            "run_id": run_id,
            "kernel_key": keys,
            "time_s": times,
            "percent_of_roof": rng.uniform(1, 90, kernels),
            "regime": "memory-bound",
            "binding": "dram",
            "peak_flop_time_s": rng.uniform(0, 1e-3, kernels),
        }
    )
    work = pd.DataFrame(
        {"run_id": run_id, "kernel_key": keys, "flops": flops}
        | {f"bytes_{t}": b for t, b in nbytes.items()}
        | {field: [getattr(p, field) for p in placed] for field in STORED}
    )
    return frame, work.sample(frac=0.97, random_state=run_id)  # some rows have no work


def history(
    runs: int, kernels: int, seed: int = 0, *, varied: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, Reread]]:
    """A history of ``runs`` runs of ``kernels`` kernels on the H100, its work, the re-reads.

    Each run is stored on the catalog's figures as they are, scaled to a clock, or as a
    ``ClockedRoof``; today's figures have dram and tensor_bf16 corrected. One run in ten is
    left out of the re-reads (it holds today's figures). ``varied``: kernels of many shapes
    (precisions in any order, bytes missing, no time); else of two, as a nightly run's.
    """
    rng = np.random.default_rng(seed)
    catalog = builtin_catalog()
    old = catalog.lookup("H100-SXM5").roof()
    fixes = {"bandwidth_byte_per_s": {"dram": 6.7e12}, "peak_flop_per_s": {"tensor_bf16": 1.5e15}}
    new = catalog.with_overrides({"H100-SXM5": fixes}).lookup("H100-SXM5").roof()
    sheet = Datasheet(new, sm_clocked=True, memory_clocked=False)
    frames, works, rereads = [], [], {}
    for run_id in range(1, runs + 1):
        reread = _run_roofs(rng, old, new, sheet)
        frame, work = _kernels(rng, run_id, kernels, reread, varied)
        frames.append(frame)
        works.append(work)
        if run_id % 10:
            rereads[run_id] = reread
    return pd.concat(frames, ignore_index=True), pd.concat(works, ignore_index=True), rereads
