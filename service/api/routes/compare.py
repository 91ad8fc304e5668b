"""The dashboard's compare pages: across cards (``/compare``) and two runs (``/compare/runs``).

Every kernel's percent of roof, time and binding on every card of a repository, how each
scaled against the first card beside what the roofs predict, an optional forecast on a card
the repository never ran on, and one roofline per card. Server-rendered like the other pages;
a wrong card or pattern is the page again with the error, not a stack trace.

``/compare/runs?base=RUN_ID&head=RUN_ID`` is ``roofguard compare BASE --against HEAD`` on two
stored runs: each stored record placed on the roof it was stored with, kernel by kernel
(``service.compare.runs``). A run that is not stored is a 404 page naming it; two runs of
different repositories are the form again with the error, naming both.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from rules import place_run
from service.api.deps import SessionDep, StateDep
from service.api.pagerrors import runs_form_again
from service.api.verdicts import cached_view
from service.compare.build import CompareRequest, compare_history
from service.compare.render import (
    KEEPING,
    cell,
    device_charts,
    few_runs_note,
    headline,
    suite_line,
)
from service.compare.runs import RunComparison, Side, compare_runs
from service.compare.runs_render import cells
from service.compare.runs_render import headline as runs_headline
from service.errors import BadInput, NotFound
from service.render.html import inline_svg, render_page
from service.store.devices import run_roofs
from service.store.queries import RunSummary, get_run, get_run_record
from service.store.views import newest_run_of, variant_view

router = APIRouter(include_in_schema=False)
_Text = Annotated[str | None, Query(max_length=200)]
_RunParam = Annotated[int | None, Query(ge=1, le=2**31 - 1)]


def _devices(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())


@router.get("/compare", response_class=HTMLResponse)
def compare_page(
    session: SessionDep,
    state: StateDep,
    repo: _Text = None,
    devices: _Text = None,
    kernel: _Text = None,
    forecast: _Text = None,
    by_runner: bool = False,
) -> HTMLResponse:
    """Every kernel on every card of ``repo``: percent of roof, time, binding and scaling."""
    form: dict[str, object] = {"repo": repo or "", "devices": devices or ""}
    form |= {"kernel": kernel or "", "forecast": forecast or "", "by_runner": by_runner}
    if not repo:
        return HTMLResponse(render_page("compare.html.j2", form=form, view=None, error=None))
    request = CompareRequest(repo, _devices(devices), kernel or None, forecast or None, by_runner)
    shown_form = json.dumps(form, sort_keys=True)
    try:
        page = cached_view(
            engine=state.engine,
            session=session,
            config=state.config,
            run_id=newest_run_of(session=session, repo=repo),
            view=variant_view("compare", shown_form),
            render=lambda: _compare_page(session, state, request, form),
            extra=shown_form,
        )
    except BadInput as exc:
        page = render_page("compare.html.j2", form=form, view=None, error=str(exc))
        return HTMLResponse(page, status_code=exc.status)
    return HTMLResponse(page)


def _compare_page(
    session: SessionDep, state: StateDep, request: CompareRequest, form: dict[str, object]
) -> str:
    """The compare page of ``request`` (raises ``BadInput`` for a wrong card or pattern)."""
    view = compare_history(session=session, request=request, config=state.config)
    charts: list[tuple[str, Markup]] = [
        (label, inline_svg(figure)) for label, figure in device_charts(view)
    ]
    comparison = view.comparison
    return render_page(
        "compare.html.j2",
        form=form,
        view=comparison,
        headline=headline(comparison),
        few_runs=few_runs_note(comparison),
        suite=suite_line(comparison),
        rows=[(row, cell(row)) for row in comparison.rows],
        charts=charts,
        keeping=KEEPING,
        error=None,
    )


def _stored_side(session: SessionDep, run: RunSummary, band: float) -> Side:
    """A stored run for the comparison: its label, record and placements on its stored roof."""
    record = get_run_record(session=session, run_id=run.id)
    roof = run_roofs(session=session, run_ids=[run.id])[run.id]
    label = f"run {run.id} ({(run.commit or '')[:10]}, {run.kind}, {run.device})"
    return label, record, place_run(record, roof, band=band)


def _one_repository(base: RunSummary, head: RunSummary) -> None:
    """Refuse two runs of different repositories: their kernels are not one suite's.

    Raises:
        BadInput: The runs are of two repositories (both named).
    """
    if base.repo != head.repo:  # stored under one name, in whatever case it is asked for
        raise BadInput(
            f"run {base.id} is of {base.repo} and run {head.id} of {head.repo}: "
            "compare two runs of one repository"
        )


@router.get("/compare/runs", response_class=HTMLResponse)
def compare_runs_page(
    request: Request,
    session: SessionDep,
    state: StateDep,
    base: _RunParam = None,
    head: _RunParam = None,
) -> HTMLResponse:
    """Two stored runs of a repository kernel by kernel: time ratio, like-for-like % of roof."""
    form = {"base": base or "", "head": head or ""}
    if base is None or head is None:
        page = render_page(
            "compare_runs.html.j2", form=form, view=None, rows=[], headline="", error=None
        )
        return HTMLResponse(page)
    band = state.config.rules.borderline_band
    try:
        base_run, head_run = (get_run(session=session, run_id=r) for r in (base, head))
        _one_repository(base_run, head_run)
        view: RunComparison = compare_runs(
            _stored_side(session, base_run, band), _stored_side(session, head_run, band)
        )
    except NotFound as exc:
        return HTMLResponse(render_page("not_found.html.j2", message=str(exc)), status_code=404)
    except BadInput as exc:
        return runs_form_again(request, str(exc), exc.status)
    rows = [(k, cells(k)) for k in view.kernels]
    headline = runs_headline(view)
    page = render_page(
        "compare_runs.html.j2", form=form, view=view, rows=rows, headline=headline, error=None
    )
    return HTMLResponse(page)
