"""Dashboard pages, server-rendered HTML without JavaScript.

A run's verdict with its roofline chart, a kernel's trend per device, the latest digest and
a kernel search.

The pages are read-only and need no token, so that links in PR comments open in a browser;
put the service behind your single sign-on proxy when the history is confidential.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

import pandas as pd
from fastapi import APIRouter, Path, Query
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from matplotlib.figure import Figure

from service.api.deps import SessionDep, StateDep
from service.api.verdicts import stored_outcome
from service.digest.build import build_digest
from service.digest.model import DigestOptions
from service.pipeline.check import CheckOutcome
from service.render.charts import KernelPoint, figure_bytes, roofline_chart, trend_chart
from service.render.html import inline_svg, render_page
from service.store.history import kernel_history, nightly_history
from service.store.lookups import search_kernels
from service.store.queries import get_run

router = APIRouter(include_in_schema=False)

#: The roofline chart labels this many kernels at most (the largest time shares).
CHART_KERNELS = 40
#: The run page lists this many kernels (worst first); the API has them all.
PAGE_KERNELS = 500
SEARCH_LIMIT = 200
DIGEST_DAYS = 7
_RunId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def _roofline_figure(outcome: CheckOutcome) -> Figure:
    """The run on its roof: the kernels with the largest time shares, labelled by name."""
    placements = outcome.placements
    kernels = sorted(outcome.verdict.kernels, key=lambda k: -k.time_share)[:CHART_KERNELS]
    points = [
        KernelPoint.from_placement(k.name, placements[k.key], time_share=k.time_share)
        for k in kernels
        if k.key in placements
    ]
    return roofline_chart(outcome.roof, [p for p in points if p is not None])


@router.get("/", response_class=RedirectResponse)
def index() -> RedirectResponse:
    """The dashboard starts at the kernel search."""
    return RedirectResponse("/search")


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(run_id: _RunId, session: SessionDep, state: StateDep) -> HTMLResponse:
    """A run's verdict: conclusion, roofline chart, findings and kernels."""
    run = get_run(session=session, run_id=run_id)
    outcome = stored_outcome(session=session, run_id=run_id, config=state.config)
    chart = inline_svg(_roofline_figure(outcome))
    html = render_page(
        "run.html.j2", run=run, verdict=outcome.verdict, chart=chart, kernel_limit=PAGE_KERNELS
    )
    return HTMLResponse(html)


@router.get("/runs/{run_id}/roofline.svg")
def run_chart(run_id: _RunId, session: SessionDep, state: StateDep) -> Response:
    """The run's roofline chart as an SVG image (linked from PR comments)."""
    outcome = stored_outcome(session=session, run_id=run_id, config=state.config)
    figure = _roofline_figure(outcome)
    return Response(
        figure_bytes(figure, "svg"),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=300"},
    )


def _trend_charts(frame: pd.DataFrame, key: str) -> list[tuple[str, Markup]]:
    charts = []
    for device, series in frame.groupby("device", sort=True):
        placed = series.dropna(subset=["percent_of_roof"])
        if not placed.empty:
            figure = trend_chart(placed, title=f"{key} on {device}")
            charts.append((str(device), inline_svg(figure)))
    return charts


@router.get("/kernels", response_class=HTMLResponse)
def kernel_page(
    session: SessionDep,
    repo: Annotated[str, Query(max_length=200)],
    key: Annotated[str, Query(min_length=1)],
) -> HTMLResponse:
    """A kernel's percent of roof over time, one chart per device, and its latest runs."""
    frame = kernel_history(session=session, repo=repo, key=key)
    name = str(frame["kernel_name"].iloc[-1]) if not frame.empty else key
    recent = frame.iloc[::-1].head(30).to_dict(orient="records")
    html = render_page(
        "kernel.html.j2",
        repo=repo,
        key=key,
        name=name,
        points=len(frame),
        charts=_trend_charts(frame, key),
        recent=recent,
    )
    return HTMLResponse(html)


@router.get("/search", response_class=HTMLResponse)
def search_page(
    session: SessionDep,
    q: Annotated[str, Query(max_length=200)] = "",
    repo: Annotated[str | None, Query(max_length=200)] = None,
) -> HTMLResponse:
    """Kernels whose name or key contains the query."""
    hits = (
        search_kernels(session=session, text=q, repo=repo or None, limit=SEARCH_LIMIT) if q else []
    )
    html = render_page("search.html.j2", query=q, repo=repo, hits=hits, limit=SEARCH_LIMIT)
    return HTMLResponse(html)


@router.get("/digest", response_class=HTMLResponse)
def digest_page(
    session: SessionDep, repo: Annotated[str | None, Query(max_length=200)] = None
) -> HTMLResponse:
    """The digest of the last week's nightly runs of a repository."""
    digest = None
    if repo:
        end = datetime.now(UTC)
        start = end - timedelta(days=DIGEST_DAYS)
        lookback = start - timedelta(days=DigestOptions().lookback_days)
        history = nightly_history(session=session, repo=repo, start=lookback, end=end)
        if not history.empty:
            digest = build_digest(history, start=start, end=end, repo=repo)
    html = render_page("digest.html.j2", repo=repo, digest=digest, days=DIGEST_DAYS)
    return HTMLResponse(html)
