"""Raw-page ncu CSV as columns (``collectors.batch``): the reader of runs of many kernels.

Pandas reads the recipe's columns a chunk at a time, as the fast path does
(``collectors.ncu.frames``); the plan runs once on the chunk's arrays, and where every
launch is a kernel of its own (a run of distinct kernels) the chunk's kernels become
columns at once: durations, FLOPs, bytes, clocks and profile figures as arrays, the
arithmetic of ``collectors.ncu.aggregate`` done element by element on them. The shape of
the chunk's kernels is made from the first one's real record. Launches with ``n/a`` cells
are read as the record readers read them, in file order: each run of launches with the same
cells missing as columns of the plan without them, and a failed launch (no duration) as a
kernel not measured, named in the run's notes: one failed launch among a million does not
send the file to the record path, at 5 KB a kernel. Launches of one kernel
gathered over rows, tensor-pipe probes, mixed devices or anything the fast path would not
vouch for raise ``NotBatchable``: the record path reads the file.
"""

from __future__ import annotations

from typing import Any, TextIO

import numpy as np

from collectors.batch import ChunkBuilder, Leaf, NotBatchable
from collectors.identity import make_key
from collectors.ncu import frames, recipe
from collectors.ncu.aggregate import RunBuilder, _Kernel
from collectors.ncu.peaks import DeviceFacts, device_facts
from collectors.ncu.profile import MEMORY_CLOCK, SM_CLOCK
from collectors.schema import KernelRecord


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
        with np.errstate(over="ignore", invalid="ignore"):  # a sum past 1.8e308: the record
            for chunk in frames.chunks(pd, handle, header, names):  # path names its launch
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
    """Add a chunk's launches, each run of them with the same cells missing as one part."""
    cc = frames._one_device(chunk, runs)
    values = {n: chunk[n].to_numpy(dtype=float) * factors[n] for n in names}
    for array in values.values():
        if (array < 0).any() or np.isinf(array).any():
            raise NotBatchable("negative or infinite values")
    _count_ids(chunk, runs, seen_ids)
    gaps = np.column_stack([np.isnan(values[n]) for n in names])
    if not gaps.any():
        return _add_launches(chunk, values, recipe.plan_for(frozenset(names), cc), runs, chunks)
    facts = None
    for rows in _alike(gaps, np.arange(len(chunk))):  # in file order, as the record readers
        figs = recipe.launch_figures({n: float(values[n][rows[0]]) for n in names}, cc)
        if figs.plan is None or figs.failed is not None:
            _add_failed(chunk.iloc[rows], figs, runs, chunks)
            continue
        present = [n for n, gap in zip(names, gaps[rows[0]], strict=True) if not gap]
        got = _add_launches(chunk.iloc[rows], _at(values, rows, present), figs.plan, runs, chunks)
        facts = facts or (got if len(present) == len(names) else None)  # a plain launch's
    return facts


def _count_ids(chunk: Any, runs: RunBuilder, seen_ids: set[str]) -> None:
    ids = [str(i) for i in frames._column(chunk, "ID")]
    seen_ids.update(ids)
    if len(seen_ids) != runs.launch_count + len(ids):
        raise NotBatchable("a launch ID twice")
    runs.launch_count += len(ids)


def _at(values: dict[str, Any], rows: Any, names: list[str]) -> dict[str, Any]:
    """The values of ``names`` at ``rows``."""
    return {n: values[n][rows] for n in names}


def _alike(gaps: Any, rows: Any) -> list[Any]:
    """``rows`` split where the cells missing change: each part is read by one plan."""
    if not len(rows):
        return []
    changed = (gaps[rows[1:]] != gaps[rows[:-1]]).any(axis=1)
    return np.split(rows, np.flatnonzero(changed) + 1)


def _add_launches(
    chunk: Any, values: dict[str, Any], plan: recipe.Plan, runs: RunBuilder, chunks: ChunkBuilder
) -> DeviceFacts:
    """Launches with every value ``plan`` reads, as columns; the device facts of the first."""
    if plan.duration is None or any(s.key.startswith("busy.") for s in plan.specs):
        raise NotBatchable("no duration, or tensor-pipe probes")
    every = plan.evaluate(values)
    columns, first = _columns(chunk, plan, every, runs)
    shape = chunks.shape_for(
        (plan, frozenset(columns)),  # the plan and the fields present fix the rest
        lambda: _first_record(runs, every.each()(0), columns),
    )
    chunks.add_columns(shape, columns, len(chunk))
    strings = {frames.DISPLAY_NAME: str(first)} if first is not None else {}
    return device_facts({n: float(array[0]) for n, array in values.items()}, strings)


def _add_failed(
    chunk: Any, figs: recipe.LaunchFigures, runs: RunBuilder, chunks: ChunkBuilder
) -> None:
    """Failed launches (no duration): kernels not measured, as the record path keeps them."""
    columns = _identities(chunk, runs)
    columns[("duration_s",)] = np.zeros(len(chunk))
    signature = (figs.failed, figs.missing, frozenset(columns))
    shape = chunks.shape_for(signature, lambda: _first_record(runs, figs, columns))
    chunks.add_columns(shape, columns, len(chunk))
    runs.failed += len(chunk)


#: The leaves that name a launch, in ``_Kernel``'s order of arguments.
_IDENTITY: tuple[Leaf, ...] = (("name",), ("key",), ("source", "row"), ("grid",), ("block",))


def _identities(chunk: Any, runs: RunBuilder) -> dict[Leaf, Any]:
    """Each launch's kernel name, identity key, launch ID, grid and block."""
    kernels = [str(k) for k in frames._column(chunk, "Kernel Name")]
    grids, blocks = frames._column(chunk, "Grid Size"), frames._column(chunk, "Block Size")
    if not all(k.strip() for k in kernels):
        raise NotBatchable("an empty kernel name")
    options = runs.options.keys
    keys = [
        make_key(k, None, options, grid=g, block=b)
        for k, g, b in zip(kernels, grids, blocks, strict=True)
    ]
    ids = [str(i) for i in frames._column(chunk, "ID")]
    return {
        ("name",): kernels,
        ("key",): keys,
        ("source", "row"): ids,
        ("grid",): grids,
        ("block",): blocks,
    }


def _columns(
    chunk: Any, plan: recipe.Plan, every: recipe.LaunchFigures, runs: RunBuilder
) -> tuple[dict[Leaf, Any], str | None]:
    """Every leaf a kernel of this plan may have, as the record path computes it."""
    seconds: Any = every.duration_s
    arrays: list[Any] = list(every.values)  # arrays here: the plan ran on a chunk
    extras: list[Any] = list(every.extras)
    columns = _identities(chunk, runs)
    columns[("duration_s",)] = 0.0 + seconds  # a kernel's total starts at 0.0, as in _Kernel
    columns[("samples_s", "0")] = seconds
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
    runs: RunBuilder, figs: recipe.LaunchFigures, columns: dict[Leaf, Any]
) -> KernelRecord:
    """The columns' first kernel's record, its launch ``figs``, by the record path's own code."""
    name, key, row, grid, block = (columns[leaf][0] for leaf in _IDENTITY)
    first = _Kernel(name, key, row, grid, block, None)
    first.add(figs)
    return first.record(runs.path, runs.fmt)
