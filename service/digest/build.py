"""The weekly digest: change points in nightly history, tracked until they recover.

Every (device, kernel) nightly series of percent of roof is scanned with
``rules.stats.change_points_many`` over the period *and* the lookback before it, all series at
once (one 2-D array, rows = series, columns = the n-th night of the series). A change is then
reported once, in the period whose scan first finds it (``service.digest.found``), with the
commit range: the last night at
the old level (``from_commit``) and the first at the new one (``to_commit``). A regression stays
listed as unresolved, by age, until a later level is back within ``recovery_tolerance`` of the
level before it. A regression a maintainer accepted (``/roofguard accept``, read once into
``DigestOptions.accepted``) is listed apart (``service.digest.accepted``), as the gate passes it.
Everything is pandas group-bys and numpy over the whole history; the only Python loops run over
reported entries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from rules import HISTORY_COLUMNS, require_columns
from service.digest.accepted import accepted_changes, without_accepted, without_accepted_time
from service.digest.changes import scan_changes
from service.digest.classify import ClassifiedChanges, classify
from service.digest.devices import device_changes, trusted_of
from service.digest.events import (
    time_regressions,
    unresolved_time_regressions,
    vanished_kernels,
)
from service.digest.found import with_found
from service.digest.model import (
    BindingFlip,
    Digest,
    DigestOptions,
    KernelTarget,
    Movement,
    RegimeFlip,
)
from service.digest.offroof import off_roof
from service.digest.seriesrows import first_rows, last_rows
from service.digest.shared import shared_moves
from service.digest.tables import (
    below_target,
    binding_flips,
    device_summaries,
    mislabels,
    regime_flips,
    sparklines,
    with_timed_devices,
)
from service.digest.unmeasured import unmeasured_devices
from service.digest.untrusted import left_out_runs
from service.digest.workers import Workers
from service.store.digestread import DIGEST_READ_COLUMNS
from service.store.memory import give_back_freed

#: Columns of the history frame the digest reads (a subset of rules.frames.HISTORY_COLUMNS):
#: those the store's compact read gives, in its order.
DIGEST_COLUMNS = DIGEST_READ_COLUMNS
Progress = Callable[[str], None]


def _floats(column: pd.Series) -> npt.NDArray[np.floating]:
    """``column``'s values as floats, without a copy where they are (float32 at 29 M rows)."""
    values = column.to_numpy()
    return values if values.dtype.kind == "f" else column.to_numpy(dtype=float, na_value=np.nan)


def prepare_history(
    history: pd.DataFrame, *, end: datetime | None = None, value: str = "percent_of_roof"
) -> pd.DataFrame:
    """Nightly rows with a ``value``, sorted by series then time, with ``series`` and ``pos``.

    Args:
        history: A frame with ``DIGEST_COLUMNS`` (``kind`` and ``trusted`` too, when present:
            only nightly rows of runners that passed their health preflight are kept).
        end: Rows after it are dropped.
        value: The measure the rows must have (``percent_of_roof``: placed rows; ``time_s``:
            every timed row, for time regressions and vanished kernels).

    Returns:
        A new frame: ``series`` numbers (device, kernel) pairs in sorted order, ``pos`` is the
        night's position within its series.
    """
    require_columns(history, DIGEST_COLUMNS, "digest history")
    # Finite only: a stored outlier (a 5e-324 s time, stored before the door refused it) is an
    # infinite percent of roof, and the scan's differences of two such nights are undefined.
    keep = np.isfinite(_floats(history[value]))
    # A runner that failed its health preflight gives no night, as a check's baseline reads.
    keep &= trusted_of(history)
    if "kind" in history.columns:
        keep &= (history["kind"] == "nightly").to_numpy()
    stamps = _utc(history["timestamp"])
    if end is not None:
        keep &= (stamps <= pd.Timestamp(end)).to_numpy()
    rows = np.flatnonzero(keep)
    series = _series_numbers(
        history["device"].array.take(rows), history["kernel_key"].array.take(rows)
    )
    order = _by_series_then_time(series, stamps, rows)
    # Each of these is 0.2 GB at 29 M rows: only what the columns need is held while they are
    # taken, one take of each column (in series order; each copy of the frame is 1 GB).
    series, taken = series[order], rows[order]
    del rows, order
    pos = np.arange(len(taken), dtype=np.int64)
    pos -= first_rows(series)[series]
    columns = {
        c: (stamps if c == "timestamp" else history[c]).array.take(taken) for c in DIGEST_COLUMNS
    }
    del taken
    # One frame of the columns as they are: a column set on a frame is copied, 0.2 GB each.
    frame = pd.DataFrame({**columns, "series": series, "pos": pos}, copy=False)
    frame["percent_of_roof"] = frame["percent_of_roof"].astype(float)
    if not pd.api.types.is_numeric_dtype(frame["time_s"]):  # numbers already: no copy
        frame["time_s"] = pd.to_numeric(frame["time_s"], errors="coerce")
    prepared: pd.DataFrame = frame
    return prepared


def _utc(stamps: pd.Series) -> pd.Series:
    """``stamps`` as UTC times; already so (the compact read), they are not copied."""
    if isinstance(stamps.dtype, pd.DatetimeTZDtype) and str(stamps.dtype.tz) == "UTC":
        return stamps
    return pd.to_datetime(stamps, utc=True)


def _instants(stamps: pd.Series) -> npt.NDArray[np.datetime64]:
    """The UTC instants of ``stamps`` as naive datetime64 (NaT sorts last): a view, no copy."""
    return np.asarray(stamps.array.asi8).view(f"M8[{stamps.array.unit}]")


def _series_numbers(
    device: pd.api.extensions.ExtensionArray, kernel: pd.api.extensions.ExtensionArray
) -> npt.NDArray[np.int64]:
    """Number of each row's (device, kernel) pair, pairs in sorted order, as a group-by's.

    Codes of each (sorted) ranked through a table of the pairs: no sort of the rows.
    """
    device_codes, devices = _sorted_codes(device)
    kernel_codes, kernels = _sorted_codes(kernel)
    if (device_codes < 0).any() or (kernel_codes < 0).any():  # no key: as the group-by does
        pairs = pd.DataFrame({"device": device, "kernel": kernel})
        grouped = pairs.groupby(["device", "kernel"], sort=True, observed=True)
        return np.asarray(grouped.ngroup().to_numpy(), dtype=np.int64)
    width = max(len(kernels), 1)
    small = len(devices) * width < 2**31  # pair numbers in 4 bytes, not 8 (0.1 GB at 29 M)
    wide = device_codes.astype(np.int32) if small else device_codes.astype(np.int64)
    pair = wide * width + kernel_codes
    present = np.zeros(len(devices) * max(len(kernels), 1), dtype=bool)
    present[pair] = True
    rank = np.cumsum(present) - 1
    numbers: npt.NDArray[np.int64] = rank[pair]
    return numbers


def _sorted_codes(values: Any) -> tuple[npt.NDArray[np.integer[Any]], Any]:
    """Codes in the order a sorted group-by takes them, and the values they stand for.

    A categorical's own codes (its categories' order), else those of the sorted values.
    """
    if isinstance(values, pd.Categorical):
        return values.codes, values.categories  # int8 or int16: no copy
    codes, distinct = pd.factorize(values, sort=True)
    return codes, distinct


def _by_series_then_time(
    series: npt.NDArray[np.int64], stamps: pd.Series, rows: npt.NDArray[np.intp]
) -> npt.NDArray[np.intp]:
    """``rows`` sorted by series, then time, ties in row order (``np.lexsort``'s order).

    Histories are read in time order; then a stable sort by series alone gives that order
    (a radix sort when the series fit in 16 bits), several times quicker than ``lexsort``.
    Every row's time is checked in place: when all are in order, so are those of ``rows``
    (the rows' own times would be a copy, 0.2 GB at 29 M rows).
    """
    every = _instants(stamps)
    if len(rows) and bool((every[1:] >= every[:-1]).all()):
        small = np.uint16 if series.max() < 2**16 else np.int64
        order: npt.NDArray[np.intp] = np.argsort(series.astype(small), kind="stable")
        return order
    return np.asarray(np.lexsort((every[rows], series)), dtype=np.intp)


def _movements(
    changes: pd.DataFrame, frame: pd.DataFrame, end: datetime, sparks: dict[int, str]
) -> list[Movement]:
    current = frame["percent_of_roof"].to_numpy()[last_rows(frame)]
    out = changes.assign(
        kernel=changes["kernel_key"],
        current=current[changes["series"].to_numpy()],
        age_days=(pd.Timestamp(end) - changes["since"]).dt.total_seconds() / 86400.0,
        sparkline=[sparks.get(s, "") for s in changes["series"]],
    )
    if "recovered_at" in out.columns:
        out["recovered_at"] = (
            out["recovered_at"].astype(object).where(out["recovered_at"].notna(), None)
        )
    return [Movement.model_validate(r) for r in out.to_dict("records")]


def iso_week(start: datetime, end: datetime) -> str:
    """ISO week of the period's middle, e.g. "2026-W48"."""
    year, week, _ = (start + (end - start) / 2).isocalendar()
    return f"{year}-W{week:02d}"


def build_digest(
    history: pd.DataFrame,
    *,
    start: datetime,
    end: datetime,
    repo: str | None = None,
    targets: Sequence[KernelTarget] = (),
    options: DigestOptions | None = None,
    progress: Progress | None = None,
    workers: Workers | None = None,
) -> Digest:
    """The digest of ``[start, end]`` from nightly history (the period plus its lookback).

    Args:
        history: History frame (``rules.frames.HISTORY_COLUMNS``; ``DIGEST_COLUMNS`` needed).
        start: Start of the period (tz-aware).
        end: End of the period (tz-aware).
        repo: OWNER/NAME, shown in the digest.
        targets: Declared regimes and target percent of roof from the config's kernel groups.
        options: Thresholds (``DigestOptions`` defaults when None).
        progress: Called with the name of each stage (for a progress bar).
        workers: Processes a large history's scans run in (default: ``options.workers`` of
            its own, for this call).
    """
    opts = options or DigestOptions()
    step = _trimmed(progress or (lambda _stage: None))
    with ExitStack() as stack:
        pool = workers or stack.enter_context(Workers(opts.workers))
        step("preparing history")
        frame = prepare_history(history, end=end)
        step("finding change points")
        changes, segments = scan_changes(frame, opts, pool)()
        changes = with_found(frame, changes, opts, pool, start=start)
        step("classifying changes")
        parts = classify(changes, segments, frame, start=start, end=end, options=opts)
        parts, accepted = without_accepted(parts, frame, opts, start=start, end=end)
        step("summarising")
        digest = _assemble(
            frame, parts, start=start, end=end, repo=repo, targets=targets, opts=opts
        )
        step("scanning time and inventory")
        timed = _timed(history, frame, end)
        digest = _with_time(digest, (frame, timed, accepted), opts, pool)
    left_out = left_out_runs(history, start=start, end=end)
    digest = digest.model_copy(
        update={"shared_moves": shared_moves(digest), "untrusted_runs": left_out}
    )
    return _with_devices(digest, history, opts.gate_window)


def _trimmed(progress: Progress) -> Progress:
    """``progress``, with the heap's freed pages returned before each stage.

    Each stage frees what the one before it held, and the C library would keep some of it
    under the next stage's peak (``service.store.memory``).
    """

    def step(stage: str) -> None:
        give_back_freed()
        progress(stage)

    return step


def _with_devices(digest: Digest, history: pd.DataFrame, window: int) -> Digest:
    """The digest with the cards that started in its period, against the card before each."""
    if not set(HISTORY_COLUMNS) <= set(history.columns):
        return digest  # a frame of the digest's own columns only: no roofs to judge with
    changes = device_changes(history, start=digest.start, end=digest.end, window=window)
    return digest.model_copy(update={"device_changes": changes})


def _timed(history: pd.DataFrame, placed: pd.DataFrame, end: datetime) -> pd.DataFrame:
    """The prepared frame of timed rows: ``placed`` itself when every timed row is placed.

    (ncu histories: nothing is prepared twice.)
    """
    unplaced = history["percent_of_roof"].isna() & history["time_s"].notna()
    return prepare_history(history, end=end, value="time_s") if unplaced.any() else placed


def _with_time(
    digest: Digest,
    frames: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
    opts: DigestOptions,
    workers: Workers,
) -> Digest:
    """The digest with binding flips, time regressions, vanished and accepted kernels added.

    ``frames`` are the prepared frames of placed and timed rows, and the accepted changes of
    percent of roof (``accepted.without_accepted``). A large time scan runs in the workers
    while the vanished kernels are found here (not the flips too: their peak beside the scan's
    slabs was 0.2 GB more at 29 M rows).
    """
    placed, timed, accepted = frames
    period = {"start": digest.start, "end": digest.end}
    flips = binding_flips(placed, **period, min_segment=opts.min_segment)
    time_changes = scan_changes(timed, opts, workers, "time_s")
    vanished = vanished_kernels(timed, **period, min_segment=opts.min_segment)
    judged = {(m.kernel, m.device) for m in digest.unresolved}
    # A result: it is taken once.
    time_scan, time_segments = time_changes()
    time_scan = with_found(timed, time_scan, opts, workers, start=digest.start, value="time_s")
    scanned, accepted_time = without_accepted_time(
        timed, (time_scan, time_segments), opts, **period
    )
    return digest.model_copy(
        update={
            "binding_flips": [BindingFlip.model_validate(r) for r in flips.to_dict("records")],
            "time_regressions": time_regressions(timed, scanned[0], **period),
            "unresolved_time": unresolved_time_regressions(timed, scanned, opts, judged),
            "vanished": vanished,
            "measurements": max(digest.measurements, len(timed)),
            "devices": with_timed_devices(digest.devices, timed, **period),
            "unmeasured": unmeasured_devices(timed, start=digest.start),
            "off_roof": off_roof(placed, timed, start=digest.start),
            "accepted": accepted_changes(accepted, accepted_time, opts),
        }
    )


def _assemble(
    frame: pd.DataFrame,
    parts: ClassifiedChanges,
    *,
    start: datetime,
    end: datetime,
    repo: str | None,
    targets: Sequence[KernelTarget],
    opts: DigestOptions,
) -> Digest:
    # Every listed row gets its sparkline: a table whose rows past one section's top had one
    # only when another section listed them high read as broken ("–" between trends).
    listed = pd.concat([p["series"] for p in vars(parts).values()])
    sparks = sparklines(frame, listed.unique(), start=start, end=end)
    flips = regime_flips(frame, start=start, end=end, min_segment=opts.min_segment)
    sections = {name: _movements(table, frame, end, sparks) for name, table in vars(parts).items()}
    return Digest(
        repo=repo,
        start=start,
        end=end,
        week=iso_week(start, end),
        measurements=len(frame),
        **sections,
        regime_flips=[RegimeFlip.model_validate(r) for r in flips.to_dict("records")],
        mislabels=mislabels(frame, targets),
        below_target=below_target(frame, targets, opts.min_segment),
        devices=device_summaries(frame, parts, flips, start=start, end=end),
        lookback_days=opts.lookback_days,
    )
