"""Verdicts of stored runs, and the links a verdict carries to the dashboard."""

from __future__ import annotations

import logging
from collections.abc import Callable

import sqlalchemy as sa
from fastapi import Request
from sqlalchemy.engine import Engine
from sqlmodel import Session

from service import __version__
from service.config import RoofguardConfig
from service.errors import StoreUnavailable
from service.pipeline.check import CheckOutcome, check_run
from service.render.markdown import VerdictLinks
from service.settings import Settings
from service.store.db import session_scope
from service.store.queries import get_run_record
from service.store.views import get_view, history_stamp, put_view, view_key

log = logging.getLogger("roofguard.api")


def base_url(request: Request, settings: Settings) -> str:
    """The dashboard's base URL: ``ROOFGUARD_PUBLIC_URL``, else the URL this request came to."""
    return (settings.public_url or str(request.base_url)).rstrip("/")


def run_url(base: str, run_id: int) -> str:
    """The dashboard page of run ``run_id``."""
    return f"{base}/runs/{run_id}"


def links_for(base: str, run_id: int, settings: Settings) -> VerdictLinks:
    """Links under the PR comment: the run's page, and its chart when GitHub can reach it."""
    url = run_url(base, run_id)
    charts = (("roofline", f"{url}/roofline.svg"),) if settings.public_url else ()
    return VerdictLinks(run_url=url, charts=charts)


def stored_outcome(
    *, session: Session, run_id: int, config: RoofguardConfig, links: VerdictLinks | None = None
) -> CheckOutcome:
    """The verdict of stored run ``run_id``, re-derived from its stored record.

    The record is stored byte-for-byte as uploaded, so the check finds it by its content hash
    and writes nothing: the stored findings are returned and the placements and baseline are
    computed again from the stored history (every number is reproducible), on the base
    branch and merge base its stored verdict was judged against (``service.pipeline.basechoice``).

    Raises:
        NotFound: No such run.
    """
    record = get_run_record(session=session, run_id=run_id)
    return check_run(session=session, run=record, config=config, links=links)


def cached_view(
    *,
    engine: Engine,
    session: Session,
    config: RoofguardConfig,
    run_id: int | None,
    view: str,
    render: Callable[[], str],
    extra: str = "",
) -> str:
    """View ``view`` of run ``run_id``: stored when nothing it shows has changed, else rendered.

    The key is roofguard's version, the configuration, the repository's history stamp and
    ``extra`` (what else the body depends on, e.g. the base URL of its links). Storing the
    rendered body is best effort: a busy store costs the next view a render, not this one.
    A page of a whole repository is kept under its newest run (``newest_run_of``; None, a
    repository with none, is rendered): the digest and compare pages read every nightly
    measurement (20 s at tens of thousands of kernels), need no token, and rendered on every
    request a few reloads slowed the fleet's uploads tenfold.
    """
    if run_id is None:
        return render()
    key = view_key(
        __version__, config.model_dump_json(), history_stamp(session=session, run_id=run_id), extra
    )
    body = get_view(session=session, run_id=run_id, view=view, key=key)
    if body is not None:
        return body
    body = render()
    try:
        with session_scope(engine) as writer:
            put_view(session=writer, run_id=run_id, view=view, key=key, body=body)
    except (StoreUnavailable, sa.exc.IntegrityError) as exc:  # a concurrent view stored it
        log.info("view %s of run %d not stored: %s", view, run_id, type(exc).__name__)
    return body
