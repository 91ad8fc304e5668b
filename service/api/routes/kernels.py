"""``/api/v1/kernels/history`` (JSON or CSV) and ``/api/v1/devices``."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import pandas as pd
from fastapi import APIRouter, Query
from fastapi.responses import Response

from service.api.deps import AuthDep, SessionDep
from service.api.routes.params import stored_device, stored_repo
from service.api.schemas import DevicesPublic, ErrorPublic, HistoryPoint, KernelHistoryPublic
from service.errors import NotFound
from service.render.escape import csv_cell
from service.store.history import kernel_history
from service.store.lookups import list_devices
from service.store.tokens import Permission

router = APIRouter(tags=["kernels"])

#: Columns of the CSV history, in order (a subset of the store's history frame).
CSV_COLUMNS = (
    "run_id",
    "commit",
    "timestamp",
    "kind",
    "device",
    "branch",
    "kernel_key",
    "percent_of_roof",
    "regime",
    "binding",
    "time_s",
    "total_flops",
    "bytes_dram",
    "bytes_l2",
    "bytes_l1",
)
_ERRORS: dict[int | str, dict[str, Any]] = {c: {"model": ErrorPublic} for c in (401, 403, 422)}
_Repo = Annotated[str, Query(description="OWNER/NAME", max_length=200)]


def _none_if_nan(value: Any) -> Any:
    # Frames mark missing values as NaN in float and object columns alike.
    return None if isinstance(value, float) and math.isnan(value) else value


_POINT_FIELDS = (
    "run_id",
    "commit",
    "timestamp",
    "kind",
    "device",
    "percent_of_roof",
    "regime",
    "binding",
    "time_s",
)


def _points(frame: pd.DataFrame) -> list[HistoryPoint]:
    rows = frame.loc[:, list(_POINT_FIELDS)].to_dict(orient="records")
    return [HistoryPoint(**{str(k): _none_if_nan(v) for k, v in row.items()}) for row in rows]


def history_csv(frame: pd.DataFrame) -> str:
    """The CSV history; text cells that a spreadsheet would run as formulas are quoted.

    Every column that may hold text is defused, whatever its dtype (object, string or
    category): choosing text columns by dtype would skip a categorical one.
    """
    table = frame.loc[:, list(CSV_COLUMNS)].copy()
    text = table.select_dtypes(exclude=["number", "datetime", "datetimetz", "bool"]).columns
    for column in text:
        table[column] = table[column].map(csv_cell)
    return table.to_csv(index=False, date_format="%Y-%m-%dT%H:%M:%SZ")


@router.get(
    "/kernels/history",
    response_model=KernelHistoryPublic,
    responses={200: {"content": {"text/csv": {}}}, 404: {"model": ErrorPublic}, **_ERRORS},
)
def read_kernel_history(
    session: SessionDep,
    grant: AuthDep,
    repo: _Repo,
    key: Annotated[str, Query(description="The kernel's identity key", min_length=1)],
    device: Annotated[str | None, Query(max_length=200)] = None,
    format: Annotated[Literal["json", "csv"], Query()] = "json",
    limit: Annotated[int, Query(ge=1, le=10_000, description="Most points on this page.")] = 1000,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1, description="Points skipped before.")] = 0,
) -> KernelHistoryPublic | Response:
    """Stored measurements of one kernel, oldest first, as JSON or CSV; ``repo`` in any case."""
    grant.require(repo=repo, permission=Permission.READ)
    repo = stored_repo(session, repo)
    frame = _stored_history(session, repo, key, device).iloc[offset : offset + limit]
    if format == "csv":
        return Response(history_csv(frame), media_type="text/csv; charset=utf-8")
    points = _points(frame)
    return KernelHistoryPublic(repo=repo, key=key, data=points, count=len(points))


def _stored_history(session: SessionDep, repo: str, key: str, device: str | None) -> pd.DataFrame:
    """Every stored measurement of ``key`` (on ``device``), oldest first; never empty.

    A key or card spelt wrong would otherwise read as a kernel with no history. The error
    names no other repository: a token scoped to one may not learn the others' names.

    Raises:
        NotFound: No stored run of ``repo`` measured ``key`` (on ``device``).
    """
    on = stored_device(session, repo, device)
    frame = kernel_history(session=session, repo=repo, key=key, device=on)
    if frame.empty:
        where = f" on {device}" if device else ""
        raise NotFound(f"no measurement of kernel {key}{where} is stored for {repo}")
    return frame


@router.get(
    "/devices", response_model=DevicesPublic, responses={404: {"model": ErrorPublic}, **_ERRORS}
)
def read_devices(session: SessionDep, grant: AuthDep, repo: _Repo) -> DevicesPublic:
    """Devices a repository has runs on; ``repo`` as stored, in any letter case."""
    grant.require(repo=repo, permission=Permission.READ)
    stored = stored_repo(session, repo)
    return DevicesPublic(repo=stored, data=list_devices(session=session, repo=stored))
