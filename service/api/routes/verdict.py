"""``/api/v1/runs/{run_id}/verdict``: a stored run's verdict, whole or a page of its kernels.

A 20,000-kernel run's verdict is about 33 MB of JSON; a dashboard or a script that wants the
regressed kernels, or a table a page at a time, reads ``/verdict/kernels`` instead. Both are
cut from the same stored view (``service.api.verdicts.cached_view``), so a page agrees with
the whole verdict, kernel for kernel and in its order.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from rules import KernelStatus
from service.api.deps import AuthDep, SessionDep, SettingsDep, StateDep
from service.api.routes.params import ERRORS, Limit, Offset, RunId, readable_run
from service.api.schemas import CheckResultPublic, VerdictKernelsPublic
from service.api.verdicts import base_url, cached_view, links_for, run_url, stored_outcome

router = APIRouter(tags=["runs"])

_Statuses = Annotated[
    list[KernelStatus] | None,
    Query(description="Only kernels with one of these statuses (repeat the parameter)."),
]


def stored_verdict(
    request: Request,
    run_id: RunId,
    session: SessionDep,
    grant: AuthDep,
    state: StateDep,
    settings: SettingsDep,
) -> str:
    """Run ``run_id``'s verdict JSON (``CheckResultPublic``), when the token may read the run.

    Stored while nothing it shows changed (``cached_view``).
    """
    readable_run(session, grant, run_id)
    base = base_url(request, settings)

    def render() -> str:
        links = links_for(base, run_id, settings)
        outcome = stored_outcome(session=session, run_id=run_id, config=state.config, links=links)
        return CheckResultPublic(
            run_id=run_id,
            created=False,
            url=run_url(base, run_id),
            verdict=outcome.verdict,
            markdown=outcome.markdown,
        ).model_dump_json()

    return cached_view(
        engine=state.engine,
        session=session,
        config=state.config,
        run_id=run_id,
        view="verdict",
        render=render,
        extra=f"{base} {settings.public_url}",
    )


_StoredVerdict = Annotated[str, Depends(stored_verdict)]


@router.get("/runs/{run_id}/verdict", response_model=CheckResultPublic, responses=ERRORS)
def read_verdict(run_id: RunId, body: _StoredVerdict) -> Response:
    """The verdict on one run (as the upload answered it, against today's baseline)."""
    return Response(body, media_type="application/json")  # stored as validated JSON


@router.get("/runs/{run_id}/verdict/kernels", response_model=VerdictKernelsPublic, responses=ERRORS)
def read_verdict_kernels(
    run_id: RunId,
    body: _StoredVerdict,
    status: _Statuses = None,
    limit: Limit = 1000,
    offset: Offset = 0,
) -> Response:
    """The verdict's kernels a page at a time, in the verdict's order, filtered by status."""
    kernels = json.loads(body)["verdict"]["kernels"]
    if status:
        wanted = {s.value for s in status}
        kernels = [k for k in kernels if k["status"] in wanted]
    page = kernels[offset : offset + limit]
    answer = {"run_id": run_id, "total": len(kernels), "count": len(page), "data": page}
    return Response(json.dumps(answer, separators=(",", ":")), media_type="application/json")
