"""``/api/v1/runs``: upload a run and get its verdict; query runs and their findings.

A stored run's verdict is read through ``service.api.routes.verdict``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from collectors.schema import RunRecord
from rules import Verdict
from service.api import uploads
from service.api.deps import AuthDep, ServiceState, SessionDep, SettingsDep, StateDep
from service.api.inflight import RETRY_AFTER_S, Answer, Record, StillRunning
from service.api.publish import post_outcome
from service.api.received import receive, route_key
from service.api.routes.params import ERRORS, Limit, Offset, RunId, readable_run, stored_device
from service.api.schemas import (
    BriefResultPublic,
    CheckResultPublic,
    ErrorPublic,
    FindingsPublic,
    RunPublic,
    RunsPublic,
    StillRunningPublic,
    UploadForm,
)
from service.api.verdicts import base_url, links_for, run_url
from service.config import RoofguardConfig
from service.pipeline.basechoice import AskedBase
from service.pipeline.check import CheckOutcome
from service.pipeline.intake import COMMIT_PATTERN, merge_base
from service.pipeline.request import CheckRequest
from service.pipeline.reruns import Reruns
from service.pipeline.runmeta import with_branch
from service.store.queries import RunSummary, list_findings, list_runs
from service.store.tokens import Grant, Permission

log = logging.getLogger("roofguard.api")
router = APIRouter(tags=["runs"])


_FORM_SCHEMA = {
    **UploadForm.model_json_schema(),
    "required": ["repo", "commit", "files"],
}
_FORM_SCHEMA["properties"] = {
    **_FORM_SCHEMA["properties"],
    "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
    "reruns": {
        "type": "array",
        "items": {"type": "string", "format": "binary"},
        "description": "Re-measurements of the same commit, one report file each.",
    },
}
_UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/RunRecord"}},
            "multipart/form-data": {"schema": _FORM_SCHEMA},
        },
    }
}


def _public(run: RunSummary, base: str) -> RunPublic:
    """The run as the API shows it: the summary's fields and the run's page."""
    return RunPublic.model_validate({**run.model_dump(), "url": run_url(base, run.id)})


_PostQuery = Annotated[
    bool,
    Query(
        description="Also post the verdict to the pull request and "
        "commit (needs the service's GitHub credentials)."
    ),
]
_BaseShaQuery = Annotated[
    str | None,
    Query(
        description="The PR's merge base: the baseline stops there.",
        pattern=COMMIT_PATTERN,
    ),
]
_BaseTimeQuery = Annotated[
    datetime | None,
    Query(
        description="The merge base's commit time (ISO-8601, with base_sha): where the "
        "baseline stops when no run of base_sha is stored.",
    ),
]
_AnswerQuery = Annotated[
    Literal["full", "brief"],
    Query(
        description="`brief`: the run's id, url and the verdict's conclusion alone, for "
        "uploaders that do not read the verdict (a 2,000-kernel verdict is 1-2 MB of JSON).",
    ),
]
_BaseBranchQuery = Annotated[
    str | None,
    Query(description="Baseline branch, instead of the configured one.", max_length=255),
]
# Reruns expected: the public name of the promise is `remeasure` (CONTRIBUTING's glossary).
_RerunsExpectedQuery = Annotated[
    bool,
    Query(
        alias="remeasure",
        description="The caller re-measures the suspects (the PR gate's re-measure "
        "step): no kernel fails on one measurement. Upload the run again with the "
        "re-measurements as `reruns` files to confirm or clear them.",
    ),
]


@router.post(
    "/runs",
    status_code=201,
    response_model=CheckResultPublic | BriefResultPublic,  # brief: ?answer=brief
    openapi_extra=_UPLOAD_BODY,
    responses={
        200: {
            "model": CheckResultPublic | BriefResultPublic,
            "description": "Uploaded before: stored once, its verdict as it stands",
        },
        202: {"model": StillRunningPublic, "description": "Still judging: upload it again"},
        413: {"model": ErrorPublic},
        415: {"model": ErrorPublic},
        **ERRORS,
    },
)
async def upload_run(
    request: Request,
    grant: AuthDep,
    state: StateDep,
    settings: SettingsDep,
    post: _PostQuery = False,
    base_sha: _BaseShaQuery = None,
    base_time: _BaseTimeQuery = None,
    base_branch: _BaseBranchQuery = None,
    reruns_expected: _RerunsExpectedQuery = False,
    answer: _AnswerQuery = "full",
) -> Response:
    """Upload a run (RunRecord JSON, or report files in a form), ingest it and judge it.

    Idempotent on content: uploading the same run again stores nothing and answers 200 with
    its verdict: the first answer, unless an accept, re-measurements or another configuration
    changed the verdict since.
    A check that takes longer than ``ROOFGUARD_UPLOAD_ANSWER_S`` is answered 202 with
    ``Retry-After``; it goes on, and the same upload again gets its verdict.
    A form's ``reruns`` files (one re-measurement of the same commit each) judge the stored
    run anew; their verdict's findings replace the stored ones.
    """
    # Posting needs the run's PR and commit, so an upload to post is always parsed.
    try:
        upload = await receive(request, grant, state, reuse=not post)
    except StillRunning:
        return _still_running(settings.upload_answer_s)
    base = base_url(request, settings)
    brief = answer == "brief"
    if isinstance(upload, Answer):  # answered before: the same bytes, judged once
        _count_upload(state, None, upload, grant)
        url = run_url(base, upload.run_id)
        return await _answer(state, None, upload, url=url, post=False, brief=brief)
    _check_sizes(upload, settings.max_upload_kernels)
    config = _config(state, base_branch)
    record = _on_a_branch(upload.run, config.base_branch)
    check = CheckRequest(
        record,
        config,
        Reruns(upload.reruns, expected=reruns_expected),
        base=AskedBase(
            base_branch or None,
            merge_base(base_sha, base_time, names=("base_sha", "base_time")),
        ),
        links=partial(links_for, base, settings=settings),
        rejudge=True,  # as `roofguard check`: judged again under a changed configuration
    )
    key = route_key(request, upload.key)
    judged = await _judge_once(state, check, key, record, settings.upload_answer_s)
    if judged is None:
        return _still_running(settings.upload_answer_s)
    _count_upload(state, record, judged, grant)
    url = run_url(base, judged.run_id)
    return await _answer(state, record, judged, url=url, post=post, brief=brief)


def _on_a_branch(record: RunRecord, base_branch: str) -> RunRecord:
    """The record, a nightly or local one without a branch on the base branch (with a note).

    ``curl -F repo=... -F commit=...`` sends no branch: such a run was stored with none, drawn
    on the charts and never counted in a baseline.
    """
    placed = with_branch(record, base_branch)
    if placed is not record:
        log.warning(
            "upload repo=%s commit=%s: no branch; stored on %s",
            record.repo,
            record.commit,
            base_branch,
        )
    return placed


async def _judge_once(
    state: ServiceState, check: CheckRequest, key: str, record: RunRecord, answer_s: float
) -> Answer | None:
    """The upload's answer, judged once by whichever replica claims its key.

    None while the check runs past ``answer_s``.
    """

    async def judge(record: Record) -> CheckOutcome:
        state.metrics.checks.inc()
        async with state.check_slots:
            return await run_in_threadpool(uploads.run_check, check, state, record)

    try:
        return await state.in_flight.result(key, str(record.repo), judge, answer_s)
    except StillRunning:
        return None


def _still_running(waited_s: float) -> Response:
    """202: the check goes on; the same upload again gets its verdict (``service.api.inflight``)."""
    detail = (
        f"the check is still running after {waited_s:g} s; upload the same files again after "
        f"{RETRY_AFTER_S} s to get its verdict (the run is stored once)"
    )
    return JSONResponse(
        {"detail": detail, "retry_after_s": RETRY_AFTER_S},
        status_code=202,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def _check_sizes(upload: uploads.Upload, max_kernels: int) -> None:
    """Refuse the run or a rerun holding more kernels than the service takes in one upload."""
    for one in (upload.run, *upload.reruns):
        uploads.check_size(one, max_kernels=max_kernels)


def _config(state: ServiceState, base_branch: str | None) -> RoofguardConfig:
    """The service's configuration, with the upload's baseline branch when it names one."""
    if not base_branch:
        return state.config
    return state.config.model_copy(update={"base_branch": base_branch})


async def _answer(
    state: ServiceState,
    record: RunRecord | None,
    answer: Answer,
    *,
    url: str,
    post: bool,
    brief: bool = False,
) -> Response:
    """The upload's answer (201 stored now, 200 before), after posting it when asked to.

    The body is the stored answer with the request's fields put in front: the verdict is
    serialised once, by the check, not validated and dumped again for every answer. A
    ``brief`` answer has the verdict's conclusion instead of the verdict and its markdown.
    """
    posted, why = (
        await run_in_threadpool(_post, state, record, answer, url)
        if post and record is not None
        else (False, None)
    )
    head = {
        "run_id": answer.run_id,
        "created": answer.created,
        "url": url,
        "posted": posted,
        "post_detail": why,
    }
    if brief:
        body = json.dumps({**head, "conclusion": answer.conclusion}, separators=(",", ":"))
    else:
        body = json.dumps(head, separators=(",", ":"))[:-1] + "," + answer.answer_json[1:]
    return Response(body, status_code=201 if answer.created else 200, media_type="application/json")


def _count_upload(
    state: ServiceState, record: RunRecord | None, answer: Answer, grant: Grant
) -> None:
    """The upload's metrics and its log line (never the token, only its name).

    ``record`` is None for an upload answered before, which is not parsed again.
    """
    state.metrics.uploads.labels("created" if answer.created else "duplicate").inc()
    if answer.created and record is not None:
        state.metrics.kernels.inc(len(record.kernels))
    log.info(
        "upload repo=%s commit=%s token=%s run=%d created=%s kernels=%s",
        record.repo if record else "-",
        record.commit if record else "-",
        grant.name,
        answer.run_id,
        answer.created,
        len(record.kernels) if record else "- (answered before)",
    )


@dataclass(frozen=True)
class _Stored:
    """An answer stored before, as posting needs it."""

    verdict: Verdict
    run_id: int


def _post(
    state: ServiceState, record: RunRecord, answer: Answer, url: str
) -> tuple[bool, str | None]:
    if state.github is None:
        return False, "the service has no GitHub credentials"
    if not record.repo or not (record.pull_request or record.commit):
        return False, "the run names no pull request or commit"
    stored = json.loads(answer.answer_json)
    judged = answer.outcome or _Stored(Verdict.model_validate(stored["verdict"]), answer.run_id)
    return post_outcome(
        state.github,
        judged,
        stored["markdown"],
        repo=record.repo,
        pr=record.pull_request,
        sha=record.commit,
        details_url=url,
    )


@router.get("/runs", response_model=RunsPublic, responses=ERRORS)
def read_runs(
    request: Request,
    session: SessionDep,
    grant: AuthDep,
    settings: SettingsDep,
    repo: Annotated[str, Query(description="OWNER/NAME", max_length=200)],
    kind: Annotated[str | None, Query(pattern="^(pr|nightly|local)$")] = None,
    branch: Annotated[str | None, Query(max_length=255)] = None,
    device: Annotated[str | None, Query(max_length=200)] = None,
    pr: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
) -> RunsPublic:
    """Runs of a repository, newest first, filtered by kind, branch, device or PR."""
    grant.require(repo=repo, permission=Permission.READ)
    runs = list_runs(
        session=session,
        repo=repo,
        kind=kind,
        branch=branch,
        device=stored_device(session, repo, device),
        pull_request=pr,
        limit=limit,
        offset=offset,
    )
    base = base_url(request, settings)
    return RunsPublic(data=[_public(r, base) for r in runs], count=len(runs))


@router.get("/runs/{run_id}", response_model=RunPublic, responses=ERRORS)
def read_run(
    request: Request, run_id: RunId, session: SessionDep, grant: AuthDep, settings: SettingsDep
) -> RunPublic:
    """One run."""
    return _public(readable_run(session, grant, run_id), base_url(request, settings))


@router.get("/runs/{run_id}/findings", response_model=FindingsPublic, responses=ERRORS)
def read_findings(
    run_id: RunId, session: SessionDep, grant: AuthDep, limit: Limit = 1000, offset: Offset = 0
) -> FindingsPublic:
    """The findings of the check on one run, a page at a time (``limit``, ``offset``)."""
    readable_run(session, grant, run_id)
    findings = list_findings(session=session, run_id=run_id, limit=limit, offset=offset)
    return FindingsPublic(run_id=run_id, data=findings, count=len(findings))
