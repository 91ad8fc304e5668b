"""Read-only lookups the HTTP service needs beside the store's verbs.

Devices of a repository, a kernel search, and the run a webhook event refers to.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from service.store.coretables import DEVICES as _DEVICES
from service.store.coretables import KERNELS as _KERNELS
from service.store.coretables import REPOSITORIES as _REPOS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import same_repo
from service.store.sessions import StoreSession


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


def latest_run_for(
    *, session: StoreSession, repo: str, commit: str | None = None, pull_request: int | None = None
) -> int | None:
    """The newest run of ``repo`` at ``commit`` and/or for ``pull_request``; None if none."""
    stmt = (
        sa.select(_RUNS.c.id)
        .join(_REPOS, _REPOS.c.id == _RUNS.c.repo_id)
        .where(same_repo(_REPOS.c.name, repo))
    )
    if commit is not None:
        stmt = stmt.where(_RUNS.c.commit == commit)
    if pull_request is not None:
        stmt = stmt.where(_RUNS.c.pull_request == pull_request)
    found = session.execute(stmt.order_by(_RUNS.c.timestamp.desc(), _RUNS.c.id.desc())).first()
    return None if found is None else int(found[0])
