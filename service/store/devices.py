"""A repository's history per device: which cards it ran on, their roofs and runners.

The cross-device baseline (``service.pipeline.crossdevice``) and ``roofguard compare``
(``service.compare``) read another card's base-branch history with
``service.store.history.read_baseline``; this module says which cards there are, which one
ran last, the roof each card's runs were placed on (``runs.roof_json``, as stored), which
runner measured each run, and which runs' runners failed their health preflight: those decide
no card and give no level anywhere (``rules.trusted_rows``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from rules import ClockedRoof, Roof
from service.store.baselines import BASELINE_KINDS
from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import as_utc, same_repo
from service.store.sessions import StoreSession

_CHUNK = 5000


@dataclass(frozen=True)
class DeviceRuns:
    """One device's base-branch runs in a repository.

    Attributes:
        device: The device as stored.
        runs: How many base-branch runs (nightly or local) it has.
        newest: When its newest one ran.
    """

    device: str
    runs: int
    newest: datetime


def _base_runs(repo: str, base_branch: str, roof_source: str | None) -> sa.Select[Any]:
    stmt = (
        sa.select(_DEVICES.c.name, sa.func.count(_RUNS.c.id), sa.func.max(_RUNS.c.timestamp))
        .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .where(
            same_repo(_REPOS.c.name, repo),
            _RUNS.c.branch == base_branch,
            _RUNS.c.kind.in_(BASELINE_KINDS),
        )
        .group_by(_DEVICES.c.name)
    )
    return stmt if roof_source is None else stmt.where(_RUNS.c.roof_source == roof_source)


def device_runs(
    *,
    session: StoreSession,
    repo: str,
    base_branch: str,
    roof_source: str | None = None,
    before: datetime | None = None,
    trusted_only: bool = True,
) -> list[DeviceRuns]:
    """The devices with base-branch runs of ``repo`` (placed on ``roof_source``), newest first.

    ``before``: only runs up to then (a PR's merge base). ``trusted_only``: only the runs of
    runners that passed their health preflight (those a baseline is made of), by default: a
    runner whose preflight failed decides no card, for a check, ``compare`` or the digest.
    """
    stmt = _base_runs(repo, base_branch, roof_source)
    if before is not None:
        stmt = stmt.where(_RUNS.c.timestamp <= as_utc(before))
    if trusted_only:
        stmt = stmt.where(_RUNS.c.trusted.is_(True))
    rows = [DeviceRuns(str(d), int(n), as_utc(t)) for d, n, t in session.execute(stmt)]
    return sorted(rows, key=lambda r: (r.newest, r.device), reverse=True)


def _roof(values: dict[str, Any], fallback: str) -> Roof:
    roof = Roof(
        str(values.get("device") or fallback),
        values.get("source", "datasheet"),
        {str(k): float(v) for k, v in (values.get("peak_flop_per_s") or {}).items()},
        {str(k): float(v) for k, v in (values.get("bandwidth_byte_per_s") or {}).items()},
        from_config=tuple(str(name) for name in values.get("from_config") or ()),
    )
    if not values.get("unscaled"):
        return roof
    # The run's kernels that record no clock were placed on the datasheet roof as it is.
    return ClockedRoof(**vars(roof), unscaled=_roof(dict(values["unscaled"]), fallback))


def run_roofs(*, session: StoreSession, run_ids: Sequence[int]) -> dict[int, Roof]:
    """The roof each run's kernels were placed on (``runs.roof_json``), by run id."""
    found: dict[int, Roof] = {}
    ids = sorted(set(run_ids))
    for start in range(0, len(ids), _CHUNK):
        stmt = (
            sa.select(_RUNS.c.id, _RUNS.c.roof_json, _DEVICES.c.name)
            .join(_DEVICES, _DEVICES.c.id == _RUNS.c.device_id)
            .where(_RUNS.c.id.in_(ids[start : start + _CHUNK]))
        )
        for run_id, values, device in session.execute(stmt):
            found[int(run_id)] = _roof(dict(values or {}), str(device))
    return found


def untrusted_runs(*, session: StoreSession, run_ids: Sequence[int]) -> set[int]:
    """The runs of ``run_ids`` whose runner failed its health preflight."""
    found: set[int] = set()
    ids = sorted(set(run_ids))
    for start in range(0, len(ids), _CHUNK):
        stmt = sa.select(_RUNS.c.id).where(
            _RUNS.c.id.in_(ids[start : start + _CHUNK]), _RUNS.c.trusted.is_(False)
        )
        found |= {int(i) for (i,) in session.execute(stmt)}
    return found


def run_runners(*, session: StoreSession, run_ids: Sequence[int]) -> dict[int, str | None]:
    """The runner that measured each run (None: not recorded), by run id."""
    found: dict[int, str | None] = {}
    ids = sorted(set(run_ids))
    for start in range(0, len(ids), _CHUNK):
        stmt = sa.select(_RUNS.c.id, _RUNS.c.runner).where(
            _RUNS.c.id.in_(ids[start : start + _CHUNK])
        )
        found |= {int(i): (str(r) if r else None) for i, r in session.execute(stmt)}
    return found
