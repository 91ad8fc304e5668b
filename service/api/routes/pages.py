"""Dashboard pages, server-rendered HTML without JavaScript.

The recent runs, a run's verdict with its roofline chart, a kernel's nightly trend per device,
the latest digest and a kernel search. A browser asking for a run or kernel that does not exist
gets an HTML 404 page; API clients (no ``text/html`` in ``Accept``) get the JSON error.

The pages are read-only and need no token, so that links in PR comments open in a browser;
put the service behind your single sign-on proxy when the history is confidential.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated

import pandas as pd
from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from sqlmodel import Session

from rules import conclude, shown_conclusion
from service.api.deps import SessionDep, StateDep
from service.api.pagerrors import not_found_page, wants_html
from service.api.verdicts import cached_view, stored_outcome
from service.config import RoofguardConfig
from service.digest.build import build_digest
from service.digest.ignored import without_ignored
from service.digest.model import DigestOptions, targets_from_config
from service.digest.storeread import with_acceptances, with_store_facts
from service.errors import NotFound
from service.pipeline.check import CheckOutcome
from service.render.chart_bytes import figure_bytes
from service.render.chart_note import no_chart_reason
from service.render.charts import KernelPoint, judged_point, roofline_chart
from service.render.digest_render import digest_view
from service.render.digest_shared import shared_move_rows
from service.render.escape import bidi_free
from service.render.html import inline_svg, render_page
from service.render.kernel_trend import kernel_trend
from service.render.labels import ellipsize_middle, short_names
from service.render.run_page import page_kernels
from service.render.story import no_baseline, time_story
from service.render.trend_cards import cards_trend_chart
from service.store.history import kernel_history, nightly_history
from service.store.likeforlike import with_like_for_like
from service.store.lookups import require_runs_of, search_kernels
from service.store.queries import RunSummary, get_run, list_findings, list_runs, runners_of
from service.store.views import variant_view

router = APIRouter(include_in_schema=False)

#: The run page lists this many kernels (worst first); the API has them all.
PAGE_KERNELS = 500
SEARCH_LIMIT = 200
DIGEST_DAYS = 7
#: The start page lists this many runs, newest first.
RECENT_RUNS = 30
#: The run kind a kernel's trend is drawn from; PR runs are listed apart.
TREND_KIND = "nightly"
_RunId = Annotated[int, Path(ge=1, le=2**31 - 1)]


#: A kernel label's group in matplotlib's SVG, on the roof or in the no-FLOPs strip: its id
#: quoted with ``"`` or, when it holds one, ``'`` (and escaped as matplotlib escapes it).
_LABEL_GROUP = re.compile(r"""<g id=(["'])(?:no-flops:)?label:(.*?)\1>""")


def _with_tooltips(svg: Markup, labels: dict[str, str]) -> Markup:
    """Give each cut kernel label of the chart its full name as an SVG ``<title>`` tooltip.

    Labels are matched by their id read back (``html.unescape``): matched as ``html.escape``
    writes them, a label holding a quote, or any in the no-FLOPs strip, had no tooltip. Ids
    are written without bidirectional overrides (``chart_bytes``), so labels are read so too.
    """
    full = {bidi_free(short): name for name, short in labels.items()}

    def add_title(match: re.Match[str]) -> str:
        name = full.get(html.unescape(match.group(2)))
        return match.group(0) + (f"\n   <title>{html.escape(name)}</title>" if name else "")

    return Markup(_LABEL_GROUP.sub(add_title, str(svg)))


def _roofline_points(outcome: CheckOutcome) -> tuple[list[KernelPoint], dict[str, str]]:
    """The run's kernels on its roof, the flagged and the longest named (``chart_focus``)."""
    placements = outcome.placements
    kernels = [k for k in outcome.verdict.kernels if k.key in placements]
    labels = short_names([k.name for k in kernels])
    points = [
        (KernelPoint.from_placement(labels[k.name], placements[k.key], time_share=k.time_share), k)
        for k in kernels
    ]
    return [judged_point(p, k) for p, k in points if p is not None], labels


def _roofline_chart(outcome: CheckOutcome) -> Markup | None:
    """The run's roofline chart, labels with their tooltips; None when no kernel is placed."""
    points, labels = _roofline_points(outcome)
    if not points:  # the page says why (``no_chart_reason``), not empty axes
        return None
    return _with_tooltips(inline_svg(roofline_chart(outcome.roof, points)), labels)


def _html_or_json(request: Request, page: Callable[[], HTMLResponse]) -> HTMLResponse:
    """``page()``; a NotFound becomes an HTML 404 page for a browser (JSON for the API)."""
    try:
        return page()
    except NotFound as exc:
        if not wants_html(request):
            raise
        return not_found_page(str(exc))


def _conclusion(session: Session, run: RunSummary, config: RoofguardConfig) -> str:
    """The run's verdict from its stored findings (no re-check: the list stays cheap).

    A run whose check judged nothing, or one stored without a check (``ingest``), is not
    judged.
    """
    findings = list_findings(session=session, run_id=run.id)
    return shown_conclusion(conclude(findings, config.rules.fail_on), run.judged is not True)


@router.get("/", response_class=HTMLResponse)
def index(
    session: SessionDep,
    state: StateDep,
    repo: Annotated[str | None, Query(max_length=200)] = None,
    kind: Annotated[str | None, Query(max_length=16)] = None,
) -> HTMLResponse:
    """The recent runs (repository, kind, commit, device, verdict, time) and the search box."""
    runs = list_runs(session=session, repo=repo or None, kind=kind or None, limit=RECENT_RUNS)
    rows = [(run, _conclusion(session, run, state.config)) for run in runs]
    return HTMLResponse(render_page("index.html.j2", rows=rows, repo=repo, kind=kind))


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request, run_id: _RunId, session: SessionDep, state: StateDep
) -> HTMLResponse:
    """A run's verdict: conclusion, roofline chart, findings and kernels."""

    def page() -> HTMLResponse:
        run = get_run(session=session, run_id=run_id)

        def render() -> str:
            outcome = stored_outcome(session=session, run_id=run_id, config=state.config)
            chart = _roofline_chart(outcome)
            verdict = outcome.verdict
            return render_page(
                "run.html.j2",
                run=run,
                verdict=verdict,
                shown=shown_conclusion(verdict.conclusion, verdict.judged_nothing),
                not_judged=no_baseline(verdict) if verdict.judged_nothing else None,
                story=time_story(verdict, code=False),
                chart=chart,
                no_chart=None if chart is not None else no_chart_reason(),
                kernels=page_kernels(verdict, PAGE_KERNELS),
                kernel_limit=PAGE_KERNELS,
            )

        return HTMLResponse(_cached(state, session, run_id, "page", render))

    return _html_or_json(request, page)


@router.get("/runs/{run_id}/roofline.svg")
def run_chart(run_id: _RunId, session: SessionDep, state: StateDep) -> Response:
    """The run's roofline chart as an SVG image (linked from PR comments)."""
    get_run(session=session, run_id=run_id)

    def render() -> str:
        outcome = stored_outcome(session=session, run_id=run_id, config=state.config)
        points, _ = _roofline_points(outcome)  # none placed: a note of why (``chart_note``)
        return figure_bytes(roofline_chart(outcome.roof, points), "svg").decode("utf-8")

    return Response(
        _cached(state, session, run_id, "roofline.svg", render),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=300"},
    )


def _cached(
    state: StateDep, session: SessionDep, run_id: int, view: str, render: Callable[[], str]
) -> str:
    """The stored view of the run while nothing it shows has changed (``cached_view``)."""
    return cached_view(
        engine=state.engine,
        session=session,
        config=state.config,
        run_id=run_id,
        view=view,
        render=render,
    )


def _trend_charts(
    frame: pd.DataFrame, name: str, runners: Mapping[int, str]
) -> list[tuple[str, Markup]]:
    """One chart per device, drawn from the nightly runs only (PR runs would zig-zag it).

    A kernel on several cards gets one chart of them all first: its percent of roof carried
    across each runner swap (``service.render.trend_cards``).

    Each chart is ``roofguard plot kernel``'s (``kernel_trend``): the confirmed changes with
    their commits, the baseline band, a two-level kernel's modes and the nights a runner took
    over (``runners``: each run's, by id). A benchmark timed without work (no roof) gets its
    time instead: it had no chart at all.
    """
    charts = []
    nightly = frame[frame["kind"] == TREND_KIND]
    if nightly.dropna(subset=["percent_of_roof"])["device"].nunique() > 1:
        across = cards_trend_chart(nightly, title=f"{ellipsize_middle(name, 64)} on every card")
        charts.append(("every card", inline_svg(across)))
    for device, series in nightly.groupby("device", sort=True):
        placed = series["percent_of_roof"].notna().any()
        figure = kernel_trend(
            series,
            column="percent_of_roof" if placed else "time_s",
            title=f"{ellipsize_middle(name, 64)} on {device}",
            runners=series["run_id"].map(runners),
        )
        if figure is not None:
            charts.append((str(device), inline_svg(figure)))
    return charts


@router.get("/kernels", response_class=HTMLResponse)
def kernel_page(
    request: Request,
    session: SessionDep,
    repo: Annotated[str | None, Query(max_length=200)] = None,
    key: str | None = None,
) -> Response:
    """A kernel's nightly percent of roof over time per device; its latest runs, PR runs apart.

    Without a kernel named, the search page (a bare URL answered a JSON 422 to a browser, and
    an empty ``key=`` a 422 page: it is sent to the search as an empty ``repo=`` is). A
    repository with no run stored, or a kernel it never measured, is a 404.
    """
    if not repo or not key:
        return RedirectResponse("/search", status_code=303)
    return _html_or_json(request, lambda: HTMLResponse(_kernel_html(session, repo, key)))


def _measurements(session: SessionDep, repo: str, key: str) -> pd.DataFrame:
    """The stored measurements of ``key`` in ``repo``, oldest first (never empty).

    Raises:
        NotFound: No run of ``repo`` is stored (naming those stored), or none measured ``key``.
    """
    require_runs_of(session=session, repo=repo)
    stored = kernel_history(session=session, repo=repo, key=key)
    if stored.empty:
        raise NotFound(f"no measurement of kernel {key} is stored for {repo}")
    return stored


def _kernel_html(session: SessionDep, repo: str, key: str) -> str:
    """The kernel page of ``key`` in ``repo`` (raises ``NotFound``: ``_measurements``)."""
    # Like for like: every run against the roof the kernel is usually bound by, so a GEMM
    # that fell off the tensor cores drops on the chart and in the tables.
    frame = with_like_for_like(session=session, frame=_measurements(session, repo, key), repo=repo)
    name = str(frame["kernel_name"].iloc[-1])
    newest = frame.iloc[::-1]
    trend = newest[newest["kind"] == TREND_KIND]
    others = newest[newest["kind"] != TREND_KIND]
    runners = runners_of(session=session, run_ids=frame["run_id"])
    return render_page(
        "kernel.html.j2",
        repo=repo,
        key=key,
        name=name,
        points=len(trend),
        devices=int(trend["device"].nunique()),
        charts=_trend_charts(frame, name, runners),
        runners=runners,
        placed=bool(frame["percent_of_roof"].notna().any()),
        recent=trend.head(30).to_dict(orient="records"),
        others=others.head(30).to_dict(orient="records"),
        trend_kind=TREND_KIND,
    )


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
    text = render_page("search.html.j2", query=q, repo=repo, hits=hits, limit=SEARCH_LIMIT)
    return HTMLResponse(text)


@router.get("/digest", response_class=HTMLResponse)
def digest_page(
    request: Request,
    session: SessionDep,
    state: StateDep,
    repo: Annotated[str | None, Query(max_length=200)] = None,
) -> HTMLResponse:
    """The digest of the last week's nightly runs of a repository.

    Kept until a run of the repository is stored or the hour turns (``cached_view``). A
    repository with no run stored is a 404 naming those stored, not an empty digest.
    """
    if not repo:
        return HTMLResponse(_digest_page(session, None))
    now = datetime.now(UTC)

    def page() -> HTMLResponse:
        newest = require_runs_of(session=session, repo=repo)
        return HTMLResponse(
            cached_view(
                engine=state.engine,
                session=session,
                config=state.config,
                run_id=newest,
                view=variant_view("digest", repo),
                render=lambda: _digest_page(session, repo, now, state.config),
                extra=f"{repo}\x1f{now:%Y-%m-%dT%H}",
            )
        )

    return _html_or_json(request, page)


def _digest_page(
    session: SessionDep,
    repo: str | None,
    end: datetime | None = None,
    config: RoofguardConfig | None = None,
) -> str:
    """The digest page of ``repo``'s ``DIGEST_DAYS`` up to ``end`` (none without a repo).

    ``config``: its kernel groups and ignored kernels, as ``roofguard digest`` reads them.
    """
    digest = None
    if repo and end is not None:
        start = end - timedelta(days=DIGEST_DAYS)
        ignored = config.rules.ignore_kernels if config else ()
        options = with_acceptances(session, repo, end, DigestOptions(ignore_kernels=ignored))
        lookback = start - timedelta(days=options.lookback_days)
        history = nightly_history(session=session, repo=repo, start=lookback, end=end)
        history = without_ignored(history, options.ignore_kernels)
        history = with_like_for_like(session=session, frame=history, repo=repo, first_held=True)
        digest = build_digest(
            history,
            start=start,
            end=end,
            repo=repo,
            targets=targets_from_config(config) if config else (),
            options=options,
        )
        digest = with_store_facts(session, digest)
    shared = shared_move_rows(digest, str) if digest is not None else []
    # The sections the CLI's HTML digest has too, from the same rows (``digest_view``).
    view = digest_view(digest, code=False) if digest is not None else {}
    return render_page(
        "digest.html.j2", repo=repo, digest=digest, days=DIGEST_DAYS, shared=shared, view=view
    )
