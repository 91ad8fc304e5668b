"""What a caller says about a run: one model for the command line and the upload form.

``RunMeta`` is the base: the run's repository, commit, branch, kind, pull request, device,
runner and time, which override what its files say; ``RunMeta.stamp`` writes them into a
RunRecord. The commands build it from their flags; the upload form
(``service.api.schemas.UploadForm``) derives from it and adds the validation of the HTTP
fields, as the FastAPI template's ``ItemCreate`` derives from ``ItemBase``. The pull request
is ``pull_request`` inside, as in a RunRecord; its public spelling, ``--pr`` and the form
field ``pr``, stays at the edges.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from collectors.schema import RunKind, RunRecord, is_repo_name
from service.errors import BadInput
from service.pipeline.intake import refuse_impossible_time


def parse_kind(text: str | None) -> RunKind | None:
    """A ``--kind`` given as text (``roofguard ingest``); None when not given.

    Raises:
        BadInput: Not one of nightly, pr, local.
    """
    try:
        return RunKind(text) if text else None
    except ValueError as exc:
        raise BadInput(f"--kind: {text!r} is not one of nightly, pr, local") from exc


class RunMeta(BaseModel):
    """What the command line or an upload says about a run (overrides what files say).

    Attributes:
        repo: OWNER/NAME of the repository measured.
        commit: Commit SHA measured.
        branch: Branch name.
        kind: nightly, pr or local (default: pr when a pull request is given, else what the
            files say, local when they say nothing).
        pull_request: Pull-request number, for pr runs (``--pr``, the form field ``pr``).
        device: Device of reports that name none (a report naming another is an error).
        runner: The CI runner's name (default: what the files say).
        timestamp: When the run was measured (default: what the files say).
    """

    model_config = ConfigDict(frozen=True)

    #: How an error names where ``device`` comes from, when a report names another device.
    device_origin: ClassVar[str] = "--device"
    #: How an error names a field, and a field with its value: the command line's flags (an
    #: upload's form names its fields, ``UploadForm``).
    named: ClassVar[str] = "--{}"
    valued: ClassVar[str] = "--{} {}"

    repo: str
    commit: str
    branch: str | None = None
    kind: RunKind | None = None
    pull_request: int | None = None
    device: str | None = None
    runner: str | None = None
    timestamp: datetime | None = None

    def stamp(self, run: RunRecord) -> RunRecord:
        """``run`` with this repository, commit, branch, kind, PR, time and runner set.

        Raises:
            BadInput: A wrong repository name, an empty commit, a PR number with a non-pr
                kind, or a run timestamp in the future.
        """
        if not is_repo_name(self.repo):  # stored, it was a name the API then refused
            raise BadInput(f"{self.named.format('repo')}: {self.repo!r} is not OWNER/NAME")
        if not self.commit.strip():  # an unset $GITHUB_SHA: the run would key on no commit
            raise BadInput(f"{self.named.format('commit')}: empty; give the SHA the run measured")
        kind, pull_request = self._kind(run)
        update: dict[str, object] = {
            "repo": self.repo,
            "commit": self.commit,
            "branch": self.branch,
            "kind": kind,
            "pull_request": pull_request,
            "runner": self.runner or run.runner,
            "notes": (*run.notes, *self._replaced(run)),
        }
        if self.timestamp is not None:
            update["timestamp"] = self.timestamp
        # The run's own fields are validated again; its kernels, device and sources are kept as
        # they are (pydantic does not validate a model instance again), not dumped and rebuilt.
        try:
            stamped = RunRecord.model_validate({**dict(run), **update})
        except ValidationError as exc:  # e.g. --pr past the store's integers
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in error["loc"]).replace("pull_request", "pr")
            raise BadInput(f"{self.named.format(field)}: {error['msg']}") from None
        where = self.named.format("timestamp") if self.timestamp else "run timestamp"
        refuse_impossible_time(stamped.timestamp, where=where)
        return stamped

    def _kind(self, run: RunRecord) -> tuple[RunKind, int | None]:
        """The run's kind and pull request: as given, else as its files say (local if not).

        Raises:
            BadInput: A pull request given with another kind than pr, or kind pr without one
                (no PR comment finds such a run, nor a compare of the PR).
        """
        if self.kind is None and self.pull_request is None:
            return run.kind, run.pull_request if run.kind == RunKind.PR else None
        kind = self.kind or RunKind.PR
        if self.pull_request is not None and kind != RunKind.PR:
            given, with_kind = self.valued.format("pr", self.pull_request), kind.value
            raise BadInput(
                f"{given} given with {self.valued.format('kind', with_kind)}; "
                f"use {self.valued.format('kind', 'pr')}"
            )
        if kind == RunKind.PR and self.pull_request is None:
            raise BadInput(
                f"{self.named.format('pr')}: missing; {self.valued.format('kind', 'pr')} "
                f"needs the pull-request number (or {self.valued.format('kind', 'local')})"
            )
        return kind, self.pull_request

    def _replaced(self, run: RunRecord) -> tuple[str, ...]:
        """A note when the run's files name another repository than the one it is stored in.

        A RunRecord names its repository; stored under another one, it joins that one's
        history, which is what ``--repo`` asks but rarely what a user meant.
        """
        if run.repo is None or run.repo.casefold() == self.repo.casefold():  # as the store
            return ()
        return (f"the report names repository {run.repo!r}; stored in {self.repo!r} as given",)


def with_branch(run: RunRecord, base_branch: str) -> RunRecord:
    """``run``, a nightly or local run without a branch stored on ``base_branch``, with a note.

    Baselines are the base branch's nightly and local runs: one stored with no branch (an
    upload that sent none) was drawn on the charts but never counted. A PR run keeps its
    branch as given: it is judged, never a baseline.
    """
    if run.branch or run.kind == RunKind.PR:
        return run
    note = (
        f"no branch given: stored on the base branch {base_branch!r}, whose history it joins "
        "(send the branch the run measured)"
    )
    return run.model_copy(update={"branch": base_branch, "notes": (*run.notes, note)})
