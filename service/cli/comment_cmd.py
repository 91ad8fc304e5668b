"""``roofguard comment``: post a verdict JSON (made by ``check``) to a pull request.

``post_verdict_from_env`` (re-exported here) is what ``check --post`` calls.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import pydantic
import typer

from rules import Conclusion, Verdict
from service.errors import BadInput
from service.github.actions import set_outputs
from service.github.client import PublishResult
from service.github.policy import CheckKind, FailurePolicy, PublishPolicy, check_conclusion
from service.github.publish import (
    PostOptions,
    PostTarget,
    SummaryMode,
    as_posted,
    post_verdict_from_env,
    result_outputs,
    workflow_links,
)
from service.render.markdown import VerdictLinks, render_verdict

#: A verdict file larger than this is refused (the artifact is untrusted in fork-safe mode).
#: ``check --format json`` writes 2.5-3.5 KB a kernel (indented, 30-point sparklines, long
#: template names): 50 MiB refused the verdict of 20,000 kernels that check had just written.
#: This holds about 80,000; reading one of 62 MB took 1.1 s and 0.37 GB.
MAX_VERDICT_BYTES = 256 * 1024 * 1024

__all__ = ["load_verdict", "post_verdict_from_env", "register"]


def load_verdict(path: Path) -> Verdict:
    """Read and validate a verdict JSON; BadInput names the file and the field."""
    try:
        size = path.stat().st_size
        if size > MAX_VERDICT_BYTES:
            raise BadInput(f"{path}: {size} bytes; a verdict may have at most {MAX_VERDICT_BYTES}")
        verdict = Verdict.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise BadInput(f"--verdict: {path}: {exc.strerror}") from exc
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise BadInput(f"{path}: field {where}: {first['msg']}") from exc
    problem = _not_a_check_verdict(verdict)
    if problem:
        raise BadInput(f"{path}: field {problem}; refusing to post it")
    return verdict


def _not_a_check_verdict(verdict: Verdict) -> str | None:
    """What ``verdict`` lacks of what ``check`` always writes, or where it contradicts itself.

    A truncated or foreign file that validates (``{"conclusion": "fail"}``) posted a red X
    on "unknown device" with 0 regressions behind it. Every verdict ``check`` writes names
    its device and commit, holds a kernel (a run without one is refused), and concludes
    what its counting findings say (``rules.engine.conclude``): fail or warn with a finding
    that fails or warns, pass without one.
    """
    for name in ("device", "commit"):
        if not getattr(verdict, name):
            return f"{name}: missing (`roofguard check` writes it in every verdict)"
    if not verdict.kernels:
        return "kernels: empty (a verdict of `roofguard check` holds every kernel of the run)"
    flagged = verdict.regressions + verdict.warnings
    if (verdict.conclusion == Conclusion.PASS) != (flagged == 0):
        return (
            f"conclusion: {verdict.conclusion.value}, but its findings hold "
            f"{verdict.regressions} regression(s) and {verdict.warnings} warning(s)"
        )
    return None


RepoOpt = Annotated[str, typer.Option("--repo", help="OWNER/NAME of the repository.")]
VerdictOpt = Annotated[Path, typer.Option("--verdict", help="Verdict JSON from `check`.")]
PrOpt = Annotated[int | None, typer.Option("--pr", help="PR number (default: the verdict's).")]
ShaOpt = Annotated[str | None, typer.Option("--sha", help="Commit for the check or status.")]
UrlOpt = Annotated[
    str | None, typer.Option("--github-url", help="API URL or GHES root (default GITHUB_API_URL).")
]
DeviceOpt = Annotated[str | None, typer.Option("--device", help="Device name for the marker.")]
PolicyOpt = Annotated[FailurePolicy, typer.Option("--failure-policy", help="When the check fails.")]
CheckOpt = Annotated[CheckKind, typer.Option("--check", help="Check run, status, auto or none.")]
VerifyOpt = Annotated[
    bool, typer.Option("--verify-head", help="Refuse unless the PR's head commit is --sha.")
]
RunUrlOpt = Annotated[
    str | None, typer.Option("--run-url", help="Dashboard page of the run (an http(s) URL).")
]


SummaryOpt = Annotated[
    SummaryMode,
    typer.Option(
        "--summary",
        help="Verdict in the job summary: when not posted (fallback), always, or never (a "
        "step before wrote it; a failed post still adds its one-line note).",
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the comment and set outputs; post nothing.")
]


def comment_command(
    repo: RepoOpt,
    verdict_path: VerdictOpt,
    pr: PrOpt = None,
    sha: ShaOpt = None,
    github_url: UrlOpt = None,
    device: DeviceOpt = None,
    failure_policy: PolicyOpt = FailurePolicy.ON_REGRESSION,
    check: CheckOpt = CheckKind.AUTO,
    verify_head: VerifyOpt = False,
    run_url: RunUrlOpt = None,
    summary: SummaryOpt = SummaryMode.FALLBACK,
    dry_run: DryRunOpt = False,
) -> None:
    """Post a verdict as the PR's sticky comment plus a check run or commit status."""
    links = workflow_links(os.environ, run_url)  # a bad --run-url is refused before anything
    verdict = load_verdict(verdict_path)
    if device:
        verdict = verdict.model_copy(update={"device": device})
    pr = pr if pr is not None else verdict.pull_request
    sha = sha or None
    policy = PublishPolicy(failure=failure_policy, check=check)
    target = PostTarget(repo, pr, sha, check_head=verify_head)
    if dry_run:  # what a post would send: the marker names --repo and --pr, as posted
        _dry_run(as_posted(verdict, target), policy, links)
        return
    if pr is None and sha is None:
        raise BadInput("--pr: the verdict names no PR; give --pr and/or --sha")
    result = post_verdict_from_env(
        verdict,
        target,
        PostOptions(github_url=github_url, policy=policy, links=links, summary=summary),
    )
    where = result.comment_url or f"{repo}#{pr}"
    state = f"comment {result.comment_action}" if result.posted else "not posted"
    typer.echo(
        f"roofguard: {state} ({where}); check: {result.check_kind or 'none'}, "
        f"conclusion {result.conclusion}",
        err=True,
    )


def _dry_run(verdict: Verdict, policy: PublishPolicy, links: VerdictLinks | None) -> None:
    typer.echo(render_verdict(verdict, links=links))
    conclusion = check_conclusion(verdict, policy.failure)
    result = PublishResult(False, "skipped", None, None, None, conclusion, "dry run")
    set_outputs(result_outputs(result), os.environ)


def register(app: typer.Typer) -> None:
    """Add ``comment`` to ``app``."""
    app.command("comment")(comment_command)
