"""A browser's bad input to a dashboard page: an HTML page saying what was wrong.

FastAPI checks a page's query and path values before the page runs, and its 422 is JSON; a
person who typed a run id wrong, or sent the compare form empty, read ``{"detail": ...}``.
A browser (``text/html`` in ``Accept``) asking a route that answers HTML now gets the page's
form again with the error where it has one, else an error page; API clients keep the JSON.
So does a query refused before routing (a NUL byte, ``guards``: ``refused_page``), a
browser's unknown path outside the API is the HTML 404 page (``unknown_page``), and a page
while the store is unavailable the HTML 503 page (``unavailable_page``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from service.render.html import render_page

#: Where the API's routes live: their unknown paths stay JSON, whoever asks.
API_PATHS = "/api/"


def wants_html(request: Request) -> bool:
    """A browser (``text/html`` in ``Accept``), not an API client."""
    return "text/html" in request.headers.get("accept", "")


def runs_form_again(request: Request, message: str, status: int = 422) -> HTMLResponse:
    """``/compare/runs`` with its form as sent and ``message`` as the error."""
    # a NUL byte refused before routing (``refused_page``) is not shown back in the form
    form = {n: request.query_params.get(n, "").replace("\0", "") for n in ("base", "head")}
    page = render_page(
        "compare_runs.html.j2", form=form, view=None, rows=[], headline="", error=message
    )
    return HTMLResponse(page, status_code=status)


def _error_page(request: Request, message: str, status: int = 422) -> HTMLResponse:
    return HTMLResponse(render_page("bad_input.html.j2", message=message), status_code=status)


#: Pages whose form is shown again with the error of its input, by route path.
_FORMS: dict[str, Callable[[Request, str, int], HTMLResponse]] = {
    "/compare/runs": runs_form_again,
}


def invalid_page(request: Request, message: str) -> HTMLResponse | None:
    """A browser's 422 of an HTML page as a page; None for an API client or a JSON route."""
    route = request.scope.get("route")
    if not wants_html(request) or not isinstance(route, APIRoute):
        return None
    if route.response_class is not HTMLResponse:
        return None  # a JSON route, or an image (the roofline chart) an <img> asked for
    return _FORMS.get(route.path, _error_page)(request, message, 422)


def refused_page(scope: Scope, pages: Sequence[BaseRoute], message: str) -> HTMLResponse | None:
    """``invalid_page`` of a request refused before routing: its route found among ``pages``."""
    route = next((r for r in pages if r.matches(scope)[0] is Match.FULL), None)
    return invalid_page(Request({**scope, "route": route}), message)


def _browser_page(request: Request) -> bool:
    """A browser (``wants_html``) asking a path outside the API."""
    return wants_html(request) and not request.url.path.startswith(API_PATHS)


def not_found_page(message: str) -> HTMLResponse:
    """The HTML 404 page saying ``message``."""
    return HTMLResponse(render_page("not_found.html.j2", message=message), status_code=404)


def unavailable_page(
    request: Request, message: str, headers: dict[str, str]
) -> HTMLResponse | None:
    """A browser's 503 of a page (the store unavailable) as the HTML 503 page, else None."""
    if not _browser_page(request):
        return None
    page = render_page("unavailable.html.j2", message=message)
    return HTMLResponse(page, status_code=503, headers=headers)


def unknown_page(request: Request, status: int) -> HTMLResponse | None:
    """A browser's 404 of a path no route serves (outside the API) as the 404 page, else None."""
    if status != 404 or not _browser_page(request):
        return None
    return not_found_page(f"no page at {request.url.path}")
