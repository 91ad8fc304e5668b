"""Rendered views of stored runs (page, chart, verdict), kept until what they show changes.

Judging a stored run again means its baseline, every rule and the rendering: seconds for a
run of thousands of kernels, on every view. What a view shows depends only on the run, the
code, the configuration and the repository's history (later runs move the baseline window,
acceptances restart it), so a hash of those keys the stored body.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import sqlalchemy as sa

from service.store.coretables import BASELINE_ACCEPTANCES as _ACCEPT
from service.store.coretables import FINDINGS as _FINDINGS
from service.store.coretables import RENDERED_VIEWS as _VIEWS
from service.store.coretables import RUNS as _RUNS
from service.store.ids import repo_id
from service.store.sessions import StoreSession


def history_stamp(*, session: StoreSession, run_id: int) -> str:
    """The state of the history of run ``run_id``'s repository, and of its stored verdict.

    It changes with every new run, deleted run and acceptance of that repository, and with
    the run's stored verdict (``_verdict_stamp``).
    """
    repo = sa.select(_RUNS.c.repo_id).where(_RUNS.c.id == run_id).scalar_subquery()
    runs = session.execute(
        sa.select(sa.func.max(_RUNS.c.id), sa.func.count(_RUNS.c.id)).where(_RUNS.c.repo_id == repo)
    ).one()
    accepted = session.execute(
        sa.select(sa.func.max(_ACCEPT.c.id)).where(_ACCEPT.c.repo_id == repo)
    ).scalar()
    return f"{runs[0]}:{runs[1]}:{accepted}:{_verdict_stamp(session, run_id)}"


def _verdict_stamp(session: StoreSession, run_id: int) -> str:
    """The state of run ``run_id``'s stored verdict: when its findings were saved, how judged.

    Re-measurements (``reruns``) or a check under another configuration save its findings
    again (all at one new ``created_at``; SQLite may give the new rows the old ids), and
    re-measurements may judge it against another baseline: a view kept from before showed
    the verdict they replaced.
    """
    c = _RUNS.c
    newest = sa.select(sa.func.max(_FINDINGS.c.created_at)).where(_FINDINGS.c.run_id == run_id)
    judged = (c.judged, c.judged_config, c.judged_base_branch, c.judged_base_sha)
    stmt = sa.select(newest.scalar_subquery(), *judged, c.judged_base_time).where(c.id == run_id)
    row = session.execute(stmt).first()
    return "" if row is None else ":".join(map(str, row))


def newest_run_of(*, session: StoreSession, repo: str) -> int | None:
    """The newest run of repository ``repo`` (a page of the whole repository is kept under it)."""
    rid = repo_id(session=session, repo=repo)
    if rid is None:
        return None
    newest = session.execute(sa.select(sa.func.max(_RUNS.c.id)).where(_RUNS.c.repo_id == rid))
    found = newest.scalar()
    return None if found is None else int(found)


#: Variants of one page kept per run (the forms of ``/compare``, the repositories of
#: ``/digest``): each was a render of seconds, and the pages need no token, so their number
#: is bounded; the oldest stored goes first.
VARIANTS_KEPT = 16


def variant_view(view: str, variant: str) -> str:
    """The stored name of one variant of ``view`` (a form of it): ``compare:<16 hex digits>``.

    Under one name, each form asked for replaced the other's copy: two forms taking turns
    were rendered on every request (2.6-8 s each for a small repository).
    """
    return f"{view}:{hashlib.sha256(variant.encode('utf-8')).hexdigest()[:16]}"


def view_key(*parts: str) -> str:
    """The cache key of a view: sha256 of its parts."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def get_view(*, session: StoreSession, run_id: int, view: str, key: str) -> str | None:
    """The stored body of ``view`` of run ``run_id`` if it was rendered under ``key``."""
    stmt = sa.select(_VIEWS.c.body).where(
        _VIEWS.c.run_id == run_id, _VIEWS.c.view == view, _VIEWS.c.cache_key == key
    )
    found = session.execute(stmt).scalar()
    return None if found is None else str(found)


def put_view(*, session: StoreSession, run_id: int, view: str, key: str, body: str) -> None:
    """Store ``body`` as ``view`` of run ``run_id`` under ``key`` (replacing an older one)."""
    session.execute(sa.delete(_VIEWS).where(_VIEWS.c.run_id == run_id, _VIEWS.c.view == view))
    row = {
        "run_id": run_id,
        "view": view,
        "cache_key": key,
        "body": body,
        "created_at": datetime.now(UTC),
    }
    session.execute(sa.insert(_VIEWS), row)
    if ":" in view:
        _keep_newest_variants(session, run_id, view.split(":", 1)[0])


def _keep_newest_variants(session: StoreSession, run_id: int, view: str) -> None:
    """Delete the variants of ``view`` of run ``run_id`` past the newest ``VARIANTS_KEPT``."""
    variants = sa.select(_VIEWS.c.view).where(
        _VIEWS.c.run_id == run_id, _VIEWS.c.view.startswith(f"{view}:", autoescape=True)
    )
    older = variants.order_by(_VIEWS.c.created_at.desc()).offset(VARIANTS_KEPT)
    names = list(session.execute(older).scalars())
    if names:
        session.execute(
            sa.delete(_VIEWS).where(_VIEWS.c.run_id == run_id, _VIEWS.c.view.in_(names))
        )
