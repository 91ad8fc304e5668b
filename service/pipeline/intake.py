"""Input files -> one RunRecord, and the checks of a run's timestamp (for ingest and check)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from collectors import CollectOptions, collect
from collectors.schema import RunRecord
from service.errors import BadInput
from service.progress import progress
from service.store.history import MergeBase


def merge_runs(records: Sequence[RunRecord], paths: Sequence[Path]) -> RunRecord:
    """One run from the records of several files of that run: the kernels of all of them.

    Raises:
        BadInput: Two files carry the same kernel key, or were measured on different devices.
    """
    first = records[0]
    owner: dict[str, Path] = {}
    for record, path in zip(records, paths, strict=True):
        if record.device.name != first.device.name:
            raise BadInput(
                f"{path}: measured on {record.device.name!r}, but {paths[0]} on "
                f"{first.device.name!r}; ingest each device as its own run"
            )
        for kernel in record.kernels:
            if kernel.key in owner:
                raise BadInput(
                    f"{path}: kernel key {kernel.key!r} is already in {owner[kernel.key]}; "
                    "one run cannot hold a kernel twice"
                )
            owner[kernel.key] = path
    if len(records) == 1:
        return first
    tools: dict[str, str] = {}
    for record in records:
        tools.update(record.tools)
    return first.model_copy(
        update={
            "kernels": tuple(k for r in records for k in r.kernels),
            "notes": tuple(n for r in records for n in r.notes),
            "sources": tuple(s for r in records for s in r.sources),
            "tools": tools,
        }
    )


def collect_run(paths: Sequence[str | Path], options: CollectOptions | None = None) -> RunRecord:
    """Collect ``paths`` (all files of one run) into one RunRecord."""
    if not paths:
        raise BadInput("give at least one report file")
    files = [Path(p) for p in paths]
    records = [collect(p, options=options) for p in progress(files, "reading reports")]
    return merge_runs(records, files)


#: How far ahead of this machine's clock a run's timestamp may be (runner clocks drift).
FUTURE_SKEW = timedelta(minutes=5)


def refuse_future(ts: datetime, *, where: str, now: datetime | None = None) -> None:
    """Raise BadInput when ``ts`` lies in the future (beyond ``FUTURE_SKEW``).

    A future run would sort after every real one and stay "latest" for as long as it is
    ahead; most often it is a naive local time taken as UTC.
    """
    now = now or datetime.now(UTC)
    if ts > now + FUTURE_SKEW:
        ahead = ts - now
        raise BadInput(
            f"{where}: {ts.isoformat()} is {_hours(ahead)} in the future (this machine's "
            f"clock says {now.isoformat(timespec='seconds')}); a wrong clock or time zone?"
        )


def _hours(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:.1f} h" if hours >= 1 else f"{delta.total_seconds() / 60:.0f} min"


def parse_timestamp(text: str | None, flag: str = "--timestamp") -> datetime | None:
    """An ISO-8601 timestamp (UTC when it names no zone), None for None; ``flag`` is named."""
    if text is None:
        return None
    try:
        ts = datetime.fromisoformat(text)
    except ValueError as exc:
        raise BadInput(f"{flag}: {text!r} is not an ISO-8601 timestamp") from exc
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts


def merge_base(
    sha: str | None, time: datetime | None, names: tuple[str, str] = ("--base-sha", "--base-time")
) -> MergeBase | None:
    """The PR's merge base from its commit ``sha`` and commit ``time`` (None: neither given).

    Raises:
        BadInput: A time without a commit (``names`` are the two inputs, as the caller calls
            them).
    """
    if sha is None:
        if time is not None:
            raise BadInput(f"{names[1]}: give the merge base's commit ({names[0]}) with its time")
        return None
    return MergeBase(sha, time)
