"""The baseline run's record of a kernel, for ``rules.profilediff`` to compare with.

The figures live in the stored record (``runs.record_json``, ``KernelRecord.profile``), so no
column holds them; only the kernels asked for are validated, not the whole run.

Every PR checked against the same nightly run asks for that run's kernels: the record (1.4 MB
of JSON at 2,000 kernels, 0.1-0.15 CPU s to parse and validate) is parsed once per process
and kept for the next checks (``_RECORDS``). A stored run's record never changes; the key is
the database, the run's id and its content hash, so another database's run is never taken.
A run the process stores is kept as it goes in (``keep_stored``): the next night's check of a
service compares with it, and read back it cost that night's check 0.07-0.15 CPU s.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable

import pandas as pd
import sqlalchemy as sa

from collectors import KernelRecord, RunRecord, declared_definition, definition_of
from service.store.coretables import RUNS as _RUNS
from service.store.runrecord import record_of
from service.store.sessions import StoreSession


def baseline_kernels(
    session: StoreSession, history: pd.DataFrame, keys: Iterable[str]
) -> dict[str, KernelRecord]:
    """Each of ``keys`` as the newest baseline run in ``history`` recorded it.

    Args:
        session: The store.
        history: Baseline rows (``rules.frames.HISTORY_COLUMNS``).
        keys: Identity keys; those without a baseline row are left out.
    """
    by_run = _newest_runs(history, keys)
    found: dict[str, KernelRecord] = {}
    for run_id, kernels in _run_kernels(session, list(by_run)).items():
        for key in by_run[run_id]:
            if (record := kernels.get(key)) is not None:
                found[key] = record
    return found


def baseline_definitions(
    session: StoreSession, history: pd.DataFrame, keys: Iterable[str]
) -> dict[str, dict[str, str]]:
    """Each of ``keys``'s declared work expressions in its newest baseline run (``history``).

    Read off the record's provenance without validating its kernels: every kernel of a run
    whose work is declared is asked for, and validating 2,000 cost a check 0.15 CPU s.
    """
    by_run = _newest_runs(history, keys)
    found: dict[str, dict[str, str]] = {}
    for run_id, kernels in _run_kernels(session, list(by_run)).items():
        for key in by_run[run_id]:
            if (definition := kernels.definition(key)) is not None:
                found[key] = definition
    return found


def _newest_runs(history: pd.DataFrame, keys: Iterable[str]) -> dict[int, set[str]]:
    """The newest run in ``history`` of each of ``keys`` that has a row: keys by run id."""
    wanted = set(keys)
    if history.empty or not wanted:
        return {}
    rows = history[history["kernel_key"].isin(wanted)]
    newest = rows.sort_values("timestamp").groupby("kernel_key")["run_id"].last()
    by_run: dict[int, set[str]] = {}
    for key, run_id in newest.items():
        by_run.setdefault(int(run_id), set()).add(str(key))
    return by_run


def keep_stored(session: StoreSession, run_id: int, content_hash: str, run: RunRecord) -> None:
    """Keep a run this process just stored, as validated records, for the checks after it.

    The next night's check compares with this run: without it, a service that stored the run
    read its 1.4 MB record back and parsed it. The record differs from ``run`` only in its
    files' names, which the comparison does not read.
    """
    if len(run.kernels) <= _KEPT_KERNELS:
        kernels = _Kernels(None, {k.key: k for k in run.kernels})
        _keep((_database(session), run_id, content_hash), kernels)


class _Kernels:
    """A stored run's kernels as its record holds them, each validated when first asked for."""

    def __init__(self, text: str | bytes | None, valid: dict[str, KernelRecord] | None = None):
        self._raw = {k.get("key"): k for k in json.loads(text).get("kernels", ())} if text else {}
        self._valid: dict[str, KernelRecord] = valid or {}

    def __len__(self) -> int:
        return max(len(self._raw), len(self._valid))

    def definition(self, key: str) -> dict[str, str] | None:
        """The kernel's declared work expressions (``collectors.definition_of``), unvalidated."""
        if key in self._valid:
            return declared_definition(self._valid[key])
        if (raw := self._raw.get(key)) is None:
            return None
        notes = {n: (p or {}).get("note") for n, p in (raw.get("provenance") or {}).items()}
        return definition_of(bool(raw.get("flops")), bool(raw.get("bytes")), notes)

    def get(self, key: str) -> KernelRecord | None:
        if key not in self._valid:
            if (raw := self._raw.get(key)) is None:
                return None
            self._valid[key] = KernelRecord.model_validate(raw)  # frozen: safe to share
        return self._valid[key]


#: Parsed records kept (least recently used first out), and the largest run kept.
_KEPT_RUNS = 8
_KEPT_KERNELS = 20_000
_RECORDS: OrderedDict[tuple[str, int, str], _Kernels] = OrderedDict()
_LOCK = threading.Lock()  # the service checks in threads


def _run_kernels(session: StoreSession, run_ids: list[int]) -> dict[int, _Kernels]:
    """The kernels of each run of ``run_ids``: kept ones, the others read and parsed."""
    database = _database(session)
    hashes = session.execute(
        sa.select(_RUNS.c.id, _RUNS.c.content_hash).where(_RUNS.c.id.in_(run_ids))
    )
    keys = {int(run_id): (database, int(run_id), str(digest)) for run_id, digest in hashes}
    out: dict[int, _Kernels] = {}
    with _LOCK:
        for run_id, key in keys.items():
            if key in _RECORDS:
                _RECORDS.move_to_end(key)
                out[run_id] = _RECORDS[key]
    missing = [run_id for run_id in keys if run_id not in out]
    if missing:
        runs = _RUNS.c
        stmt = sa.select(runs.id, runs.record_json, runs.record_zlib).where(runs.id.in_(missing))
        for run_id, text, packed in session.execute(stmt):
            out[int(run_id)] = kernels = _Kernels(record_of(text, packed))
            if len(kernels) <= _KEPT_KERNELS:
                _keep(keys[int(run_id)], kernels)
    return out


def _database(session: StoreSession) -> str:
    return session.get_bind().engine.url.render_as_string(hide_password=True)


def _keep(key: tuple[str, int, str], kernels: _Kernels) -> None:
    with _LOCK:
        _RECORDS[key] = kernels
        while len(_RECORDS) > _KEPT_RUNS:
            _RECORDS.popitem(last=False)
