"""Verdicts of stored runs, and the links a verdict carries to the dashboard."""

from __future__ import annotations

from fastapi import Request
from sqlmodel import Session

from service.config import RoofguardConfig
from service.pipeline.check import CheckOutcome, check_run
from service.render.markdown import VerdictLinks
from service.settings import Settings
from service.store.queries import get_run_record


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
    computed again from the stored history (every number is reproducible).

    Raises:
        NotFound: No such run.
    """
    record = get_run_record(session=session, run_id=run_id)
    return check_run(session=session, run=record, config=config, links=links)
