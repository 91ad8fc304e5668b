"""Raw-page ncu CSV as columns (``collectors.batch``): the reader of runs of many kernels.

Pandas reads the recipe's columns a chunk at a time, as the fast path does
(``collectors.ncu.frames``); the plan runs once on the chunk's arrays, and where every
launch is a kernel of its own (a run of distinct kernels) the chunk's kernels become
columns at once: durations, FLOPs, bytes, clocks and profile figures as arrays, the
arithmetic of ``collectors.ncu.aggregate`` done element by element on them. The shape of
the chunk's kernels is made from the first one's real record. Launches of one kernel
gathered over rows, failed or n/a counters, tensor-pipe probes, mixed devices or anything
the fast path would not vouch for raise ``NotBatchable``: the record path reads the file.
"""

from __future__ import annotations

from typing import Any, TextIO

import numpy as np

from collectors.batch import ChunkBuilder, Leaf, NotBatchable, shape_of
from collectors.identity import make_key
from collectors.ncu import frames, recipe
from collectors.ncu.aggregate import RunBuilder, _Kernel
from collectors.ncu.peaks import DeviceFacts, device_facts
from collectors.ncu.profile import MEMORY_CLOCK, SM_CLOCK


def read(
    handle: TextIO,
    header: list[str],
    numeric: tuple[tuple[int, str, float], ...],
    runs: RunBuilder,
    chunks: ChunkBuilder,
) -> DeviceFacts | None:
    """Read the data rows into ``chunks``; the device facts of the first launch."""
    import pandas as pd

    if len(set(header)) != len(header):
        raise NotBatchable("duplicate column names")
    names = [name for _, name, _ in numeric]
    factors = {name: factor for _, name, factor in numeric}
    facts: DeviceFacts | None = None
    ids: set[str] = set()
    try:
        for chunk in frames._chunks(pd, handle, header, names):
            if chunk[header[-1]].isna().any():
                raise NotBatchable("a row has fewer fields than the header")
            if header[-1] in factors:
                chunk[header[-1]] = pd.to_numeric(chunk[header[-1]].replace(frames._NA, "nan"))
            got = _chunk(chunk, names, factors, runs, chunks, ids)
            facts = facts or got
    except (ValueError, OverflowError, pd.errors.ParserError, frames.Fallback) as exc:
        raise NotBatchable(str(exc)) from exc
    return facts


def _chunk(
    chunk: Any,
    names: list[str],
    factors: dict[str, float],
    runs: RunBuilder,
    chunks: ChunkBuilder,
    seen_ids: set[str],
) -> DeviceFacts | None:
    cc = frames._one_device(chunk, runs)
    values = {n: chunk[n].to_numpy(dtype=float) * factors[n] for n in names}
    for array in values.values():
        if not np.isfinite(array).all() or (array < 0).any():
            raise NotBatchable("n/a, negative or infinite values")
    plan = recipe.plan_for(frozenset(names), cc)
    if plan.duration is None or any(s.key.startswith("busy.") for s in plan.specs):
        raise NotBatchable("no duration, or tensor-pipe probes")
    ids = [str(i) for i in frames._column(chunk, "ID")]
    seen_ids.update(ids)
    if len(seen_ids) != runs.launch_count + len(ids):
        raise NotBatchable("a launch ID twice")
    runs.launch_count += len(ids)
    every = plan.evaluate(values)
    columns, first = _columns(chunk, plan, every, runs, ids)
    shape = shape_of(_first_record(runs, plan, every, columns))
    chunks.add_columns(shape, columns, len(ids))
    strings = {frames.DISPLAY_NAME: str(first)} if first is not None else {}
    return device_facts({n: float(array[0]) for n, array in values.items()}, strings)


def _columns(
    chunk: Any, plan: recipe.Plan, every: recipe.LaunchFigures, runs: RunBuilder, ids: list[str]
) -> tuple[dict[Leaf, Any], str | None]:
    """Every leaf a kernel of this plan may have, as the record path computes it."""
    kernels = [str(k) for k in frames._column(chunk, "Kernel Name")]
    grids, blocks = frames._column(chunk, "Grid Size"), frames._column(chunk, "Block Size")
    if not all(k.strip() for k in kernels):
        raise NotBatchable("an empty kernel name")
    options = runs.options.keys
    keys = [
        make_key(k, None, options, grid=g, block=b)
        for k, g, b in zip(kernels, grids, blocks, strict=True)
    ]
    seconds: Any = every.duration_s
    arrays: list[Any] = list(every.values)  # arrays here: the plan ran on a chunk
    extras: list[Any] = list(every.extras)
    columns: dict[Leaf, Any] = {
        ("name",): kernels,
        ("key",): keys,
        ("grid",): grids,
        ("block",): blocks,
        ("source", "row"): ids,
        ("duration_s",): 0.0 + seconds,  # a kernel's total starts at 0.0, as in _Kernel
        ("samples_s", "0"): seconds,
    }
    for spec, array in zip(plan.specs, arrays, strict=True):
        kind, _, which = spec.key.partition(".")
        columns[(kind, which)] = (0.0 + array) + 0.0  # the run's total, then the kernel's
    for (name, _), array in zip(plan.extras, extras, strict=True):
        weighted, time = 0.0 + array * seconds, 0.0 + seconds
        mean = np.where(time > 0, weighted / np.where(time > 0, time, 1.0), (0.0 + array) / 1)
        if name in (SM_CLOCK, MEMORY_CLOCK):
            if not np.all(array > 0):  # a clock not recorded leaves the field out
                raise NotBatchable("a clock of zero")
            columns[("sm_clock_hz" if name == SM_CLOCK else "memory_clock_hz",)] = mean
        else:
            columns[("profile", name)] = mean
    first = None
    if frames.DISPLAY_NAME in chunk.columns:
        first = chunk[frames.DISPLAY_NAME].iloc[0]
    return columns, first


def _first_record(
    runs: RunBuilder, plan: recipe.Plan, every: recipe.LaunchFigures, columns: dict[Leaf, Any]
) -> Any:
    """The first kernel's record, made by the record path's own aggregation."""
    seconds: Any = every.duration_s
    arrays: list[Any] = list(every.values)
    extras: list[Any] = list(every.extras)
    figs = recipe.LaunchFigures(
        duration_s=float(seconds[0]),
        duration=every.duration,
        plan=plan,
        values=tuple(float(v[0]) for v in arrays),
        missing=every.missing,
        extras=tuple(float(v[0]) for v in extras),
    )
    first = _Kernel(
        columns[("name",)][0],
        columns[("key",)][0],
        columns[("source", "row")][0],
        columns[("grid",)][0],
        columns[("block",)][0],
        None,
    )
    first.add(figs)
    return first.record(runs.path, runs.fmt)
