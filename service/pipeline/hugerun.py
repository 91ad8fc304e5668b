"""Huge runs read as columns: ``roofguard ingest`` of one big Google Benchmark or ncu file.

A run of hundreds of thousands of kernels read as records holds a validated object graph
per kernel (3.9-4.8 KB and 54-68 µs each); read as columns (``collectors.collect_columns``)
it holds a few hundred bytes a kernel and is stored by ``service.store.batch_ingest`` with
the same content hash, record and rows. Only a single file of a format with a column reader,
read without declared work models, at least ``COLUMNS_FROM_BYTES`` large, takes this path;
whatever the column reader cannot vouch for is read as records, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, cast

from collectors import CollectOptions, KernelChunk, NotBatchable, RunColumns, collect_columns
from collectors.schema import RunRecord
from service.config import RoofguardConfig
from service.pipeline.roofs import run_device
from service.pipeline.runmeta import RunMeta
from service.pipeline.storable import StoreLimits, refuse_unstorable, too_many
from service.pipeline.storable import _check_name as check_name

#: Files from this size on are read as columns (some 30,000 benchmarks or launches): below
#: it, records cost under a few seconds and keep the path every check takes.
COLUMNS_FROM_BYTES = 8 * 2**20


def read_columns(
    paths: Sequence[Path],
    *,
    meta: RunMeta,
    config: RoofguardConfig,
    max_kernels: int | None = None,
    from_bytes: int | None = None,
) -> RunColumns | None:
    """The run of ``paths`` as columns, stamped with ``meta``; None: read it as records.

    ``from_bytes`` (default ``COLUMNS_FROM_BYTES``) is the size from which a file is read so.

    Raises:
        TooManyKernels: More kernels than ``max_kernels``.
        DeviceConflict: The report names another device than the meta's.
    """
    smallest = COLUMNS_FROM_BYTES if from_bytes is None else from_bytes
    if len(paths) != 1 or config.work_models or not paths[0].is_file():
        return None  # a missing file: the record reader names it
    if paths[0].stat().st_size < smallest:
        return None
    given = meta.device or config.device
    options = CollectOptions(keys=config.keys, device=given, max_kernels=max_kernels)
    try:
        columns = collect_columns(paths[0], options=options)
    except NotBatchable:
        return None
    if columns.kernel_count == columns.unmeasured_count:
        return None  # nothing measured: the record reader refuses it, naming why
    if meta.device:
        run_device(
            columns.head, given=meta.device, catalog=config.catalog(), origin=meta.device_origin
        )
    columns.head = meta.stamp(columns.head)
    return columns


def refuse_unstorable_columns(columns: RunColumns, *, where: str, limits: StoreLimits) -> None:
    """``storable.refuse_unstorable`` for a run read as columns (its figures are checked).

    Raises:
        RunTooLarge: More kernels than ``limits.max_kernels``.
        BadInput: A field the store cannot hold, naming it.
    """
    count = columns.kernel_count
    if count > limits.max_kernels:
        raise too_many(count, limits.max_kernels, where)
    refuse_unstorable(columns.head, where=where, limits=limits)
    index = 0
    for chunk in columns.chunks:
        for name, key in zip(chunk.names, chunk.keys, strict=True):
            check_name(name, f"{where}: kernels.{index}.name", limits.max_name_bytes)
            check_name(key, f"{where}: kernels.{index}.key", limits.max_name_bytes)
            index += 1


class _Clocked(NamedTuple):
    """What ``rules.clocks`` reads of a kernel: its time and the clocks it ran at."""

    duration_s: float
    sm_clock_hz: float | None
    memory_clock_hz: float | None


def clocked(columns: RunColumns) -> RunRecord:
    """The run's head with stand-ins for its kernels that carry their times and clocks alone.

    The roof of a run is scaled to the clocks its kernels ran at (their time-weighted mean,
    ``rules.clocks.run_clock``): ``choose_for`` of this run gives the roof and note that
    ``choose_for`` of the records gives, the same floats summed in the same order. Not for
    storing: its kernels are no records.
    """
    return columns.head.model_copy(update={"kernels": tuple(_clock_rows(columns))})


def _clock_rows(columns: RunColumns) -> Iterator[_Clocked]:
    for chunk in columns.chunks:
        if ("sm_clock_hz",) not in chunk.columns and ("memory_clock_hz",) not in chunk.columns:
            continue  # no clock to weigh: rules.clocks skips such kernels
        sm, memory = (_floats(chunk, name) for name in ("sm_clock_hz", "memory_clock_hz"))
        for seconds, sm_hz, memory_hz in zip(_floats(chunk, "duration_s"), sm, memory, strict=True):
            yield _Clocked(seconds, sm_hz, memory_hz)  # type: ignore[arg-type]  # a time is there


def _floats(chunk: KernelChunk, name: str) -> list[float | None]:
    """A column of single numbers as Python floats (None throughout when the shape lacks it)."""
    if (name,) not in chunk.columns:
        return [None] * chunk.size
    return cast("list[float | None]", chunk.numbers((name,)).tolist())
