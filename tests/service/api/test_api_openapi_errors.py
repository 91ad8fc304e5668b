"""Every route that needs the history store documents its 503 in the OpenAPI document.

``store_ready`` answers 503 until the store is at this roofguard's migration, on every route
of the API and the dashboard; the kernels and webhook routes did not list it, so a client
generated from the document (or schemathesis) took the 503 for an undocumented answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from service.api.app import create_app
from service.api.deps import store_ready
from service.config import RoofguardConfig
from service.settings import Settings

#: Routes the walk must find among those of the store: the API's, the webhook, a page.
SOME_OF_THE_STORE = {
    "/api/v1/runs",
    "/api/v1/kernels/history",
    "/api/v1/devices",
    "/api/v1/github/webhook",
    "/runs/{run_id}",
    "/compare",
}


def _depends_on(dependant: Dependant, call: Any) -> bool:
    return any(d.call is call or _depends_on(d, call) for d in dependant.dependencies)


def _api_routes(app: FastAPI) -> list[Any]:
    """Each route as the application serves it, with its routers' dependencies and responses.

    FastAPI 0.165 keeps an included router whole (``app.routes`` holds the router, not copies
    of its routes); ``iter_route_contexts`` gives each route as included. Before, the copies.
    """
    contexts = getattr(routing, "iter_route_contexts", None)
    if contexts is None:
        return [r for r in app.routes if isinstance(r, APIRoute)]
    return [c for c in contexts(app.routes) if isinstance(c.original_route, APIRoute)]


def _store_routes(tmp_path: Path) -> tuple[list[Any], dict[str, Any]]:
    """The routes of the application that depend on ``store_ready``, and its OpenAPI document."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'history.db'}")
    app = create_app(settings, RoofguardConfig())
    routes = [r for r in _api_routes(app) if _depends_on(r.dependant, store_ready)]
    return routes, app.openapi()


def test_every_route_that_needs_the_store_documents_503(tmp_path: Path) -> None:
    routes, document = _store_routes(tmp_path)
    assert {r.path_format for r in routes} >= SOME_OF_THE_STORE
    undocumented = []
    for route in routes:
        if 503 not in route.responses and "503" not in route.responses:
            undocumented.append(f"{sorted(route.methods)} {route.path_format}")
        if not route.include_in_schema:  # a dashboard page: in no document
            continue
        for method in route.methods:
            answers = document["paths"][route.path_format][method.lower()]["responses"]
            error = answers.get("503", {}).get("content", {}).get("application/json", {})
            if error.get("schema") != {"$ref": "#/components/schemas/ErrorPublic"}:
                undocumented.append(f"{method} {route.path_format} in the document")
    assert not undocumented, undocumented
