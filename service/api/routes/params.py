"""What the ``/api/v1/runs/{run_id}/...`` routes share: their parameters and who may read a run."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Query

from rules import builtin_catalog
from service.api.deps import SessionDep
from service.api.schemas import ErrorPublic
from service.compare.devicenames import match_device
from service.errors import Forbidden, NotFound
from service.store.lookups import list_devices
from service.store.queries import RunSummary, get_run
from service.store.tokens import Grant, Permission
from service.store.views import newest_run_of

#: The error answers of a run's routes, in the OpenAPI schema.
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorPublic} for code in (401, 403, 404, 422, 503)
}
RunId = Annotated[int, Path(ge=1, le=2**31 - 1, description="History-store id of the run")]
#: A page of a list the API returns: at most this many items (``limit``), from ``offset``.
Limit = Annotated[int, Query(ge=1, le=10_000, description="Most items on this page.")]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="Items skipped before it.")]


def readable_run(session: SessionDep, grant: Grant, run_id: int) -> RunSummary:
    """Run ``run_id``, when ``grant`` may read its repository.

    Raises:
        NotFound: No such run, or one the token may not read.
    """
    run = get_run(session=session, run_id=run_id)
    try:
        grant.require(repo=run.repo, permission=Permission.READ)
    except Forbidden:
        # Answered like a missing run: a token must not learn which repository owns an id.
        raise NotFound(f"run {run_id} is not in the history store") from None
    return run


def stored_device(session: SessionDep, repo: str, device: str | None) -> str | None:
    """The stored card a ``device`` filter means: itself, or the one its other name names.

    The reports name an H100 ``NVIDIA H100 80GB HBM3``, its runs are stored as ``H100-SXM5``:
    filtered by the first, every list was empty. A name no stored card answers to is kept (an
    empty list).
    """
    if device is None:
        return None
    cards = list_devices(session=session, repo=repo)
    return match_device(device, cards, builtin_catalog()) or device


def stored_repo(session: SessionDep, repo: str) -> str:
    """Repository ``repo`` (typed in any letter case) under the name its runs are stored as.

    Raises:
        NotFound: The repository holds no run; the error names no other repository, since a
            token scoped to one may not learn the others' names.
    """
    newest = newest_run_of(session=session, repo=repo)
    if newest is None:
        raise NotFound(f"no run of {repo} is stored")
    return get_run(session=session, run_id=newest).repo
