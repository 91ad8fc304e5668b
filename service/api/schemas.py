"""API input and output models, kept apart from the store's tables and the domain records.

The domain's own pydantic models (``RunRecord``, ``Verdict``, ``Finding``) appear inside these
where the API hands them out unchanged, so a client sees exactly what ``roofguard check
--format json`` writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from collectors.schema import MAX_COUNT, REPO_NAME, RunKind
from rules import Conclusion, Finding, KernelVerdict, Regime, Verdict
from service.pipeline.runmeta import RunMeta
from service.store.queries import RunBase


class _Public(BaseModel):
    model_config = ConfigDict(frozen=True)


class CheckResultPublic(_Public):
    """The answer to an upload: the check's verdict, as JSON and as markdown.

    Attributes:
        run_id: History-store id of the run (the same on every retry of the same content).
        created: False when the same content was uploaded before (the first result is returned).
        url: The run's dashboard page.
        verdict: The verdict (``roofguard check --format json``).
        markdown: The verdict as the PR comment shows it.
        posted: Whether the service posted it to GitHub (``?post=true``).
        post_detail: Why it was not posted, when asked to.
    """

    run_id: int
    created: bool
    url: str
    verdict: Verdict
    markdown: str
    posted: bool = False
    post_detail: str | None = None


class BriefResultPublic(_Public):
    """The answer to an upload asked with ``?answer=brief``: the verdict's conclusion alone.

    Attributes:
        run_id: History-store id of the run (the same on every retry of the same content).
        created: False when the same content was uploaded before.
        url: The run's dashboard page.
        posted: Whether the service posted it to GitHub (``?post=true``).
        post_detail: Why it was not posted, when asked to.
        conclusion: The verdict's conclusion (``pass``, ``warn``, ``fail``).
    """

    run_id: int
    created: bool
    url: str
    posted: bool = False
    post_detail: str | None = None
    conclusion: Conclusion


class StillRunningPublic(_Public):
    """The answer to an upload whose check outlived ``ROOFGUARD_UPLOAD_ANSWER_S`` (202).

    Attributes:
        detail: What to do: upload the same files again after ``retry_after_s``.
        retry_after_s: Seconds to wait (also the ``Retry-After`` header).
    """

    detail: str
    retry_after_s: int


class RunPublic(RunBase):
    """One stored run.

    Attributes:
        id: History-store id.
        repo: OWNER/NAME.
        device: Device (catalog id when known).
        commit: Commit SHA.
        branch: Branch name.
        pull_request: PR number for pr runs.
        kind: nightly, pr or local.
        timestamp: When it was measured (UTC).
        runner: CI runner name.
        roof: The roof its kernels were placed on.
        trusted: False when the runner failed its health preflight.
        judged: False when its check judged nothing (no baseline yet, or fewer runs than the
            gate needs; its verdict is not a pass); None when stored without a check
            (``roofguard ingest``): its verdict is judged when asked for.
        url: Its dashboard page.
    """

    # A store RunSummary calls it roof_label: RunPublic.model_validate reads either name.
    roof: str = Field(validation_alias=AliasChoices("roof", "roof_label"))
    trusted: bool
    judged: bool | None = None
    url: str


class RunsPublic(_Public):
    """A page of runs, newest first.

    Attributes:
        data: The runs.
        count: How many are on this page.
    """

    data: list[RunPublic]
    count: int


class FindingsPublic(_Public):
    """The findings of the check on one run, worst first.

    Attributes:
        run_id: The run.
        data: The findings.
        count: How many.
    """

    run_id: int
    data: list[Finding]
    count: int


class VerdictKernelsPublic(_Public):
    """A page of a run's verdict kernels (``verdict.kernels``), in the verdict's order.

    Attributes:
        run_id: The run.
        total: Kernels in the verdict with the statuses asked for (all, when none were).
        count: Kernels on this page.
        data: The kernels, as in ``CheckResultPublic.verdict.kernels``.
    """

    run_id: int
    total: int
    count: int
    data: list[KernelVerdict]


class HistoryPoint(_Public):
    """One measurement of a kernel.

    Attributes:
        run_id: The run.
        commit: Its commit.
        timestamp: When it was measured.
        kind: nightly, pr or local.
        device: The device.
        percent_of_roof: 100 x T_roof / T (None when the kernel could not be placed).
        regime: memory-bound or compute-bound.
        binding: Binding precision or tier.
        time_s: Total measured time.
    """

    run_id: int
    commit: str | None
    timestamp: datetime
    kind: RunKind
    device: str
    percent_of_roof: float | None
    regime: Regime | None
    binding: str | None
    time_s: float | None


class KernelHistoryPublic(_Public):
    """A kernel's stored history, oldest first.

    Attributes:
        repo: OWNER/NAME.
        key: The kernel's identity key.
        data: Its measurements.
        count: How many.
    """

    repo: str
    key: str
    data: list[HistoryPoint]
    count: int


class DevicesPublic(_Public):
    """Devices a repository has runs on.

    Attributes:
        repo: OWNER/NAME.
        data: Device names (catalog ids when known), sorted.
    """

    repo: str
    data: list[str]


#: The form's ``kind`` as the API has always documented it (pr first), not as RunKind lists it.
_FORM_KINDS = ("pr", "nightly", "local")
_KIND_SCHEMA = {
    "anyOf": [{"enum": list(_FORM_KINDS), "type": "string"}, {"type": "null"}],
    "title": "Kind",
}


def _form_kind(value: object) -> object:
    """Refuse an unknown kind with the message the form has always given (pr first)."""
    if value is None or value in _FORM_KINDS:
        return value
    expected = "'pr', 'nightly' or 'local'"
    raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})


_FormKind = Annotated[RunKind | None, BeforeValidator(_form_kind), WithJsonSchema(_KIND_SCHEMA)]


class UploadForm(RunMeta):
    """The multipart form of ``POST /api/v1/runs`` (besides one or more ``files``).

    Attributes:
        repo: OWNER/NAME of the repository measured.
        commit: Commit SHA measured.
        branch: Branch name.
        kind: pr, nightly or local (default: pr when ``pr`` is given, else what the files say).
        pr: Pull-request number, for pr runs.
        device: Device name, when the reports do not name it.
        runner: The CI runner's name.
        timestamp: When the run was measured (default: now).
    """

    # The run's meta plus what HTTP input needs: bounds on every field, no unknown field, and
    # the pull request under its public name ``pr``.
    model_config = ConfigDict(extra="forbid")

    device_origin: ClassVar[str] = "the upload's device field"
    named: ClassVar[str] = "form field {}"
    valued: ClassVar[str] = "{}={}"

    repo: str = Field(pattern=REPO_NAME, max_length=200)
    commit: str = Field(min_length=1, max_length=64)
    branch: str | None = Field(default=None, max_length=255)
    kind: _FormKind = None
    pull_request: int | None = Field(default=None, ge=1, le=MAX_COUNT, alias="pr")
    device: str | None = Field(default=None, max_length=200)
    runner: str | None = Field(default=None, max_length=255)


class Health(_Public):
    """Liveness or readiness.

    Attributes:
        status: ok, or unavailable.
        detail: Why not ready, when not.
    """

    status: Literal["ok", "unavailable"]
    detail: str | None = None


class ErrorPublic(_Public):
    """An error answer.

    Attributes:
        detail: What went wrong, naming the file, row and field where it applies.
    """

    detail: str
