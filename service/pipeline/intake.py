"""Input files -> one RunRecord, and the checks of a run's timestamp (for ingest and check)."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from collectors import CollectOptions, collect
from collectors.schema import RunRecord
from service.errors import BadInput
from service.pipeline.roofs import names_device, same_cc
from service.progress import progress
from service.store.history import MergeBase

#: What a merge base can be: a commit as runs store it (a SHA, full or abbreviated, or a CI's
#: own commit id), not a revision expression (``HEAD~1``, ``origin/main``) no run is stored at.
COMMIT_PATTERN = "^[0-9A-Za-z._-]{1,64}$"


def merge_runs(
    records: Sequence[RunRecord],
    paths: Sequence[Path],
    same_device: Callable[[str, str], bool] = operator.eq,
) -> RunRecord:
    """One run from the records of several files of that run: the kernels of all of them.

    ``same_device`` says when two device names are one card (the catalog's names of it).

    Raises:
        BadInput: Two files carry the same kernel key, or were measured on different devices
            (names, or compute capabilities: one card's name given to two cards' files).
    """
    first = records[0]
    _refuse_other_cc(records, paths)
    owner: dict[str, Path] = {}
    for record, path in zip(records, paths, strict=True):
        if not same_device(record.device.name, first.device.name):
            raise BadInput(_other_device(path, record.device.name, paths[0], first.device.name))
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
    # the run's CC is the one its files record, where the first file records none
    cc = next((r.device.compute_capability for r in records if r.device.compute_capability), None)
    return first.model_copy(
        update={
            "device": first.device.model_copy(update={"compute_capability": cc}),
            "kernels": tuple(k for r in records for k in r.kernels),
            "notes": tuple(n for r in records for n in r.notes),
            "sources": tuple(s for r in records for s in r.sources),
            "tools": tools,
        }
    )


def _refuse_other_cc(records: Sequence[RunRecord], paths: Sequence[Path]) -> None:
    """Raise BadInput when two files of one run record different compute capabilities."""
    recorded = [
        (record.device.compute_capability, path)
        for record, path in zip(records, paths, strict=True)
        if record.device.compute_capability
    ]
    for cc, path in recorded[1:]:
        if not same_cc(cc, recorded[0][0]):
            raise BadInput(
                f"{path}: the report records compute capability {cc}, but {recorded[0][1]} "
                f"records {recorded[0][0]}: two cards' files, whatever device names them; "
                "ingest each card as its own run"
            )


def _other_device(path: Path, device: str, first_path: Path, first: str) -> str:
    """Why two files are not one run's: two cards, or one file naming none (no --device)."""
    if names_device(device) != names_device(first):
        unnamed, named, card = (
            (first_path, path, device) if names_device(device) else (path, first_path, first)
        )
        return (
            f"{unnamed}: names no device, and {named} was measured on {card!r}; give the "
            "device with --device"
        )
    return (
        f"{path}: measured on {device!r}, but {first_path} on {first!r}; ingest each device "
        "as its own run"
    )


def collect_run(
    paths: Sequence[str | Path],
    options: CollectOptions | None = None,
    same_device: Callable[[str, str], bool] = operator.eq,
    *,
    require_measured: bool = True,
) -> RunRecord:
    """Collect ``paths`` (all files of one run) into one RunRecord (``merge_runs``).

    ``require_measured``: refuse a file without a measured kernel (``refuse_nothing_measured``).
    """
    if not paths:
        raise BadInput("give at least one report file")
    files = [Path(p) for p in paths]
    records = [collect(p, options=options) for p in progress(files, "reading reports")]
    if require_measured:
        for record, path in zip(records, files, strict=True):
            refuse_nothing_measured(record, where=str(path))
    # The files in the order of their first kernel's key (one run holds each key once): the
    # same files given in another order (a glob, a locale) are the same run, one content hash.
    order = sorted(range(len(files)), key=lambda i: _first_key(records[i]))
    return merge_runs([records[i] for i in order], [files[i] for i in order], same_device)


def _first_key(record: RunRecord) -> str:
    return record.kernels[0].key if record.kernels else ""


def refuse_nothing_measured(record: RunRecord, *, where: str) -> None:
    """Raise BadInput when no kernel of ``record`` has a measured time.

    A benchmark binary on a runner that lost its GPU reports every benchmark as an error: a
    run of none would be stored and pass every check (nothing to compare is nothing fallen).
    """
    if any(kernel.measured for kernel in record.kernels):
        return
    unmeasured = f"{len(record.kernels)} kernel(s) without a time" if record.kernels else ""
    notes = f"{len(record.notes)} note(s), the first: {record.notes[0]}" if record.notes else ""
    why = "; ".join(part for part in (unmeasured, notes) if part) or "it holds no result"
    raise BadInput(f"{where}: no measured kernel, nothing to store or judge ({why})")


#: How far ahead of this machine's clock a run's timestamp may be (runner clocks drift).
FUTURE_SKEW = timedelta(minutes=5)
#: No run is older than this (CUDA itself is from 2007).
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)


def refuse_impossible_time(ts: datetime, *, where: str, now: datetime | None = None) -> None:
    """Raise BadInput when ``ts`` lies in the future (beyond ``FUTURE_SKEW``) or before 2000.

    A future run would sort after every real one and stay "latest" for as long as it is
    ahead; most often it is a naive local time taken as UTC. A run before ``EARLIEST`` is a
    clock never set (1970-01-01) or a placeholder (0001-01-01, which the charts cannot even
    draw): it would sort before every real night and start every kernel's history.
    """
    now = now or datetime.now(UTC)
    if ts > now + FUTURE_SKEW:
        ahead = ts - now
        raise BadInput(
            f"{where}: {ts.isoformat()} is {_hours(ahead)} in the future (this machine's "
            f"clock says {now.isoformat(timespec='seconds')}); a wrong clock or time zone?"
        )
    if ts < EARLIEST:
        raise BadInput(
            f"{where}: {ts.isoformat()} is before {EARLIEST.year}, before any GPU this "
            "measures; a clock never set, or a placeholder time?"
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
        BadInput: A time without a commit, or a revision expression for a commit (no run
            is stored at ``HEAD~1``). ``names`` are the two inputs, as the caller calls them.
    """
    if sha is None:
        if time is not None:
            raise BadInput(f"{names[1]}: give the merge base's commit ({names[0]}) with its time")
        return None
    if not re.fullmatch(COMMIT_PATTERN, sha):
        raise BadInput(
            f"{names[0]}: {sha!r} is not a commit: pass its SHA "
            "(`git merge-base HEAD origin/main`), not a revision expression"
        )
    return MergeBase(sha, time)
