"""Read-only lookups the HTTP service needs beside the store's verbs.

Devices of a repository, a kernel search, the run a webhook event refers to, each device's
last nightly run, and the repositories stored (a repository named wrong is told them).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from service.errors import NotFound
from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import KERNELS as _KERNELS
from service.store.coretables import MEASUREMENTS as _MEASUREMENTS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import as_utc, same_repo
from service.store.sessions import StoreSession
from service.store.views import newest_run_of

#: How many stored repositories the error of a repository with no run names.
NAMED_REPOS = 5


@dataclass(frozen=True)
class KernelHit:
    """A kernel found by a search.

    Attributes:
        repo: OWNER/NAME.
        key: Identity key.
        name: Display name.
    """

    repo: str
    key: str
    name: str


@dataclass(frozen=True)
class LastNight:
    """A device's newest nightly run.

    Attributes:
        device: Device name.
        timestamp: When it was measured (UTC).
        commit: Its commit ("" when none was given).
        kernels: Kernels it measured.
    """

    device: str
    timestamp: datetime
    commit: str
    kernels: int


def _nightly_runs(repo: str | None, until: datetime) -> sa.Subquery:
    """The nightly runs of ``repo`` (of any repository: None) up to ``until``."""
    stmt = sa.select(_RUNS.c.id, _RUNS.c.device_id, _RUNS.c.timestamp, _RUNS.c.commit).where(
        _RUNS.c.kind == "nightly", _RUNS.c.timestamp <= as_utc(until)
    )
    if repo is not None:
        stmt = stmt.join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        stmt = stmt.where(same_repo(_REPOS.c.name, repo))
    return stmt.subquery()


def last_nights(*, session: StoreSession, repo: str | None, until: datetime) -> list[LastNight]:
    """Each device's newest nightly run of ``repo`` (of any repository: None) up to ``until``.

    Oldest first. Where runs of two repositories tie as a device's newest, the first is kept.
    """
    runs = _nightly_runs(repo, until)
    newest = (
        sa.select(runs.c.device_id, sa.func.max(runs.c.timestamp).label("stamp"))
        .group_by(runs.c.device_id)
        .subquery()
    )
    newest_of_device = (newest.c.device_id == runs.c.device_id) & (
        newest.c.stamp == runs.c.timestamp
    )
    stmt = (
        sa.select(_DEVICES.c.name, runs.c.timestamp, runs.c.commit, sa.func.count())
        .join(newest, newest_of_device)
        .join(_DEVICES, _DEVICES.c.id == runs.c.device_id)
        .join(_MEASUREMENTS, _MEASUREMENTS.c.run_id == runs.c.id)
        .group_by(runs.c.id, _DEVICES.c.name, runs.c.timestamp, runs.c.commit)
        .order_by(runs.c.timestamp, runs.c.id)
    )
    found: dict[str, LastNight] = {}
    for device, stamp, commit, kernels in session.execute(stmt):
        night = LastNight(str(device), as_utc(stamp), commit or "", int(kernels))
        found.setdefault(night.device, night)
    return sorted(found.values(), key=lambda night: night.timestamp)


def list_devices(*, session: StoreSession, repo: str) -> list[str]:
    """Names of the devices ``repo`` has runs on, sorted."""
    stmt = (
        sa.select(_DEVICES.c.name)
        .distinct()
        .join(_RUNS, _RUNS.c.device_id == _DEVICES.c.id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .where(same_repo(_REPOS.c.name, repo))
        .order_by(_DEVICES.c.name)
    )
    return [str(name) for name in session.execute(stmt).scalars()]


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped.lower()}%"


def search_kernels(
    *, session: StoreSession, text: str, repo: str | None = None, limit: int = 100
) -> list[KernelHit]:
    """Kernels whose key or name contains ``text`` (case-insensitive), by repository and key."""
    pattern = _like_pattern(text)
    stmt = (
        sa.select(_REPOS.c.name, _KERNELS.c.key, _KERNELS.c.name)
        .join(_REPOS, _REPOS.c.id == _KERNELS.c.repo_id)
        .where(
            sa.or_(
                sa.func.lower(_KERNELS.c.key).like(pattern, escape="\\"),
                sa.func.lower(_KERNELS.c.name).like(pattern, escape="\\"),
            )
        )
        .order_by(_REPOS.c.name, _KERNELS.c.key)
        .limit(limit)
    )
    if repo is not None:
        stmt = stmt.where(same_repo(_REPOS.c.name, repo))
    return [KernelHit(str(r), str(k), str(n)) for r, k, n in session.execute(stmt)]


def latest_runs_for(
    *, session: StoreSession, repo: str, commit: str | None = None, pull_request: int | None = None
) -> list[int]:
    """The newest run of ``repo`` at ``commit`` and/or for ``pull_request`` on each device.

    Newest first. A PR checked on two cards has a verdict on each (its own comment and check),
    so what a webhook event does applies to each card's newest run, not only to the last one
    uploaded.
    """
    stmt = (
        sa.select(_RUNS.c.id, _RUNS.c.device_id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .where(same_repo(_REPOS.c.name, repo))
    )
    if commit is not None:
        stmt = stmt.where(_RUNS.c.commit == commit)
    if pull_request is not None:
        stmt = stmt.where(_RUNS.c.pull_request == pull_request)
    newest: dict[int, int] = {}  # device id -> run id; the runs of one PR are a few
    for run_id, device in session.execute(
        stmt.order_by(_RUNS.c.timestamp.desc(), _RUNS.c.id.desc())
    ):
        newest.setdefault(int(device), int(run_id))
    return list(newest.values())


def stored_repos(*, session: StoreSession) -> list[str]:
    """Names of the repositories with a run stored (nightly or PR), sorted."""
    has_run = sa.exists().where(_RUNS.c.repo_id == _REPOS.c.id)
    stmt = sa.select(_REPOS.c.name).where(has_run).order_by(_REPOS.c.name)
    return [str(name) for name in session.execute(stmt).scalars()]


def closest_first(name: str, names: Sequence[str], limit: int = NAMED_REPOS) -> list[str]:
    """At most ``limit`` of ``names``, those most like ``name`` (difflib, any case) first."""
    folded = {n.lower(): n for n in names}  # unique lower-cased: uq_repositories_name_lower
    close = difflib.get_close_matches(name.lower(), list(folded), n=limit)
    return list(dict.fromkeys([*(folded[c] for c in close), *names]))[:limit]


def require_runs_of(*, session: StoreSession, repo: str) -> int:
    """The newest run of ``repo``, in any letter case.

    Raises:
        NotFound: No run of ``repo`` is stored: a repository named wrong, whose digest read
            "nothing to digest" every week. The error names the repositories stored, the
            closest first.
    """
    newest = newest_run_of(session=session, repo=repo)
    if newest is not None:
        return newest
    names = stored_repos(session=session)
    if not names:
        raise NotFound(f"no run of {repo} is in the history store, nor of any repository")
    shown = closest_first(repo, names)
    more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
    raise NotFound(
        f"no run of {repo} is in the history store (a repository named wrong?); "
        f"it holds runs of {', '.join(shown)}{more}"
    )
