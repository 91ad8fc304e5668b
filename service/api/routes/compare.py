"""The dashboard's cross-device page: ``/compare?repo=OWNER/NAME`` (``roofguard compare``).

Every kernel's percent of roof, time and binding on every card of a repository, how each
scaled against the first card beside what the roofs predict, an optional forecast on a card
the repository never ran on, and one roofline per card. Server-rendered like the other pages;
a wrong card or pattern is the page again with the error, not a stack trace.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from service.api.deps import SessionDep, StateDep
from service.compare.build import CompareRequest, compare_history
from service.compare.render import KEEPING, cell, device_charts, headline
from service.errors import BadInput
from service.render.html import inline_svg, render_page

router = APIRouter(include_in_schema=False)
_Text = Annotated[str | None, Query(max_length=200)]


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
    try:
        view = compare_history(session=session, request=request, config=state.config)
    except BadInput as exc:
        page = render_page("compare.html.j2", form=form, view=None, error=str(exc))
        return HTMLResponse(page, status_code=exc.status)
    charts: list[tuple[str, Markup]] = [
        (label, inline_svg(figure)) for label, figure in device_charts(view)
    ]
    comparison = view.comparison
    return HTMLResponse(
        render_page(
            "compare.html.j2",
            form=form,
            view=comparison,
            headline=headline(comparison),
            rows=[(row, cell(row)) for row in comparison.rows],
            charts=charts,
            keeping=KEEPING,
            error=None,
        )
    )
