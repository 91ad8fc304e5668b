"""``roofguard check``: ingest a run, judge it against its baseline, write the verdict."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from collectors.schema import RunKind, RunRecord
from rules import Conclusion, UnknownDevice
from service.cli.common import cli_limits, core_session, load_cli_config
from service.cli.db_cmd import DbOption
from service.cli.overview import DEVICE_HELP
from service.cli.suspects import RerunOpt, SuspectsOpt, SuspectsRegexOpt, write_suspects
from service.cli.verdict_output import (
    FORMAT_HELP,
    refuse_unwritable_outputs,
    resolve_format,
    write_verdict,
)
from service.config import RoofguardConfig
from service.errors import BadInput
from service.github.actions import append_verdict_summary, emit_annotations, in_actions
from service.pipeline.artifacts import artifact_links, write_charts
from service.pipeline.basechoice import AskedBase
from service.pipeline.check import CheckOutcome
from service.pipeline.intake import merge_base, parse_timestamp
from service.pipeline.request import CheckRequest
from service.pipeline.reruns import Reruns, collect_with_reruns
from service.pipeline.roofs import refuse_unknown_given, runner_roof
from service.pipeline.runmeta import RunMeta
from service.pipeline.storable import refuse_unstorable, refuse_unstorable_flags

if TYPE_CHECKING:  # jinja2: the markdown is rendered only where it is written or posted
    from service.render.markdown import VerdictLinks

FilesArg = Annotated[list[Path], typer.Argument(help="Reports of one run (any format).")]
RepoOpt = Annotated[str, typer.Option(help="OWNER/NAME.")]
CommitOpt = Annotated[str, typer.Option(help="Commit SHA the run measured.")]
BranchOpt = Annotated[str | None, typer.Option(help="Branch of the run.")]
PrOpt = Annotated[int | None, typer.Option("--pr", help="Pull-request number (kind pr).")]
BaseBranchOpt = Annotated[str | None, typer.Option(help="Baseline branch (config default).")]
BaseShaOpt = Annotated[str | None, typer.Option(help="PR merge base: baseline stops there.")]
BaseTimeOpt = Annotated[
    str | None,
    typer.Option(
        help="The merge base's commit time, ISO-8601 (`git log -1 --format=%cI SHA`): "
        "where the baseline stops when no run of --base-sha is stored."
    ),
]
DeviceOpt = Annotated[str | None, typer.Option(help=DEVICE_HELP)]
RoofOpt = Annotated[
    str | None,
    typer.Option(help="datasheet, report or measured (default: the config's `roof`)."),
]
ConfigOpt = Annotated[Path | None, typer.Option(help="roofguard.toml or pyproject.toml.")]
FormatOpt = Annotated[str, typer.Option("--format", help=FORMAT_HELP)]
OutputOpt = Annotated[Path | None, typer.Option(help="Write the verdict here (else stdout).")]
KindOpt = Annotated[RunKind | None, typer.Option(help="nightly, pr or local.")]
TimestampOpt = Annotated[
    str | None, typer.Option(help="When measured, ISO-8601 (default: what the reports say).")
]
PostOpt = Annotated[bool, typer.Option("--post", help="Post the verdict to the PR.")]
RunnerOpt = Annotated[
    str | None,
    typer.Option(envvar="RUNNER_NAME", help="CI runner name (its calibration, measured roof)."),
]
ChartsOpt = Annotated[
    Path | None,
    typer.Option(help="Write the run's roofline chart here (a folder); the comment lists it."),
]
ArtifactOpt = Annotated[
    str, typer.Option(help="Workflow artifact the verdict and charts are uploaded as.")
]
#: ``service.calibrate.storage.DEFAULT_HEALTH_PATH`` (a test holds them equal), written out:
#: a check on a runner without a preflight imports none of the calibration's models.
DEFAULT_HEALTH_PATH = Path(".roofguard/health.json")
HealthOpt = Annotated[
    Path, typer.Option(help="Health verdict of `roofguard calibrate --check` (if present).")
]


@dataclass(frozen=True)
class CheckOutputs:
    """Where ``check`` writes and posts what it found: its output flags, as one value.

    Attributes:
        fmt: ``--format``.
        output: ``--output``: the verdict's file (else stdout).
        charts: ``--charts``: the folder of the run's roofline chart.
        artifact_name: ``--artifact-name``: the workflow artifact the charts travel in.
        suspects: ``--suspects``: the suspects' file; given, reruns are expected.
        suspects_regex: ``--suspects-regex``: the suspects as one regular expression.
        post: ``--post``: post the verdict to the PR.
    """

    fmt: str
    output: Path | None
    charts: Path | None
    artifact_name: str
    suspects: Path | None
    suspects_regex: Path | None
    post: bool

    @property
    def links(self) -> VerdictLinks | None:
        """The verdict's links to its charts (a workflow artifact), when there are charts."""
        return artifact_links(self.charts, self.artifact_name)


def check_command(
    files: FilesArg,
    repo: RepoOpt,
    commit: CommitOpt,
    branch: BranchOpt = None,
    pr: PrOpt = None,
    base_branch: BaseBranchOpt = None,
    base_sha: BaseShaOpt = None,
    base_time: BaseTimeOpt = None,
    device: DeviceOpt = None,
    roof: RoofOpt = None,
    config: ConfigOpt = None,
    db: DbOption = None,
    fmt: FormatOpt = "auto",
    output: OutputOpt = None,
    kind: KindOpt = None,
    timestamp: TimestampOpt = None,
    post: PostOpt = False,
    runner: RunnerOpt = None,
    health_file: HealthOpt = DEFAULT_HEALTH_PATH,
    charts: ChartsOpt = None,
    artifact_name: ArtifactOpt = "roofguard",
    suspects: SuspectsOpt = None,
    suspects_regex: SuspectsRegexOpt = None,
    rerun: RerunOpt = None,
) -> int:
    """Ingest the run, judge it kernel by kernel on percent of roof, and write the verdict.

    A PR run is screened against the base branch's level: kernels worse beyond noise are
    suspects (``--suspects`` writes them); ``--rerun`` re-measurements of the commit confirm
    or clear them. Exit 0 when the conclusion is pass or warn, 1 when it is fail, 2 for bad
    input (then nothing is stored or written).
    """
    resolve_format(fmt, output)  # a wrong --format fails before anything is stored
    refuse_unwritable_outputs(output, suspects, suspects_regex)
    cfg = load_cli_config(config, base_branch=base_branch, device=device, roof=roof)
    meta = RunMeta(
        repo=repo,
        commit=commit,
        branch=branch,
        kind=kind,
        pull_request=pr,
        device=device,
        timestamp=parse_timestamp(timestamp),
        runner=runner,
    )
    outputs = CheckOutputs(fmt, output, charts, artifact_name, suspects, suspects_regex, post)
    base = AskedBase(
        base_branch or None, merge_base(base_sha, parse_timestamp(base_time, flag="--base-time"))
    )
    check = _request(files, rerun or [], meta, cfg, outputs, base=base, health=health_file)
    outcome = _judge(check, db)
    _report(outcome, check.run, meta, outputs)
    return 1 if outcome.verdict.conclusion == Conclusion.FAIL else 0


def _refuse_unknown_flag(run: RunRecord, device: str, config: RoofguardConfig) -> None:
    """Refuse a ``--device`` no roof can judge, naming the flag (``refuse_unknown_given``)."""
    try:
        refuse_unknown_given(run, device, config)
    except UnknownDevice as exc:
        raise BadInput(f"--device: {exc}") from None


def _request(
    files: Sequence[Path],
    reruns: Sequence[Path],
    meta: RunMeta,
    config: RoofguardConfig,
    outputs: CheckOutputs,
    *,
    base: AskedBase,
    health: Path,
) -> CheckRequest:
    """The check the flags ask for: the run and its reruns read and checked, the runner's health.

    Raises:
        BadInput: A report or a rerun is bad (nothing is stored then).
    """
    refuse_unstorable_flags(meta)
    limits = cli_limits()
    run, again = collect_with_reruns(
        files, reruns, meta=meta, config=config, max_kernels=limits.max_kernels
    )
    named = [str(path) for path in files]
    refuse_unstorable(run, where=", ".join(named), limits=limits, files=named)
    if meta.device:  # judged, the error would name the file, which names no device
        _refuse_unknown_flag(run, meta.device, config)
    for path, rerun in zip(reruns, again, strict=True):
        refuse_unstorable(rerun, where=f"--rerun {path}", limits=limits)
    return CheckRequest(
        run,
        config,
        Reruns(again, expected=outputs.suspects is not None),
        base=base,
        links=outputs.links,
        trusted=_runner_trusted(health),
        rejudge=True,
    )


def _judge(check: CheckRequest, db: str | None) -> CheckOutcome:
    """Ingest and judge the run in the history store, on the runner's measured roof if any."""
    with core_session(db) as session:
        measured = runner_roof(session=session, run=check.run, config=check.config)
        return replace(check, measured=measured).judge(session)


def _report(outcome: CheckOutcome, run: RunRecord, meta: RunMeta, outputs: CheckOutputs) -> None:
    """The verdict, the suspects and the chart where the flags say; published in Actions."""
    # A terminal gets rich tables; files, pipes, --post and the job summary get markdown.
    write_verdict(outcome.verdict, lambda: outcome.markdown, outputs.fmt, outputs.output)
    if outputs.suspects is not None:
        write_suspects(outcome.verdict, outputs.suspects, outputs.suspects_regex)
    if outputs.charts is not None:
        write_charts(outcome, run, outputs.charts)
    _publish(outcome, meta, post=outputs.post, links=outputs.links)


def _runner_trusted(path: Path) -> bool:
    """False when the runner's health preflight found it degraded (no regression verdicts)."""
    if not path.exists():  # no preflight ran
        return True
    from service.calibrate.storage import load_health

    health = load_health(path)
    if health is None:
        return True
    if not health.trusted:
        typer.echo(f"roofguard: runner untrusted ({path}): {health.message}", err=True)
    return health.trusted


def _publish(
    outcome: CheckOutcome, meta: RunMeta, *, post: bool, links: VerdictLinks | None
) -> None:
    """Job summary and annotations inside Actions; the sticky comment and check with --post."""
    env = os.environ
    if in_actions(env):
        append_verdict_summary(outcome.verdict, env, links=outcome.links)
        emit_annotations(outcome.verdict, sys.stdout, env)
    if post:
        from service.github.publish import (  # github3, on demand
            PostOptions,
            PostTarget,
            SummaryMode,
            post_verdict_from_env,
            workflow_links,
        )

        if links is not None:
            links = replace(
                workflow_links(env),
                artifact_name=links.artifact_name,
                artifact_charts=links.artifact_charts,
            )
        result = post_verdict_from_env(
            outcome.verdict,
            PostTarget(meta.repo, meta.pull_request, meta.commit),
            PostOptions(summary=SummaryMode.NEVER, links=links),
        )
        # without a PR there is no comment: the check run (or status) alone was posted
        alone = f"{result.check_kind or 'nothing'} on commit {meta.commit[:12]}"
        typer.echo(f"posted: {result.comment_url or result.reason or alone}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``check`` to ``app``."""
    app.command("check")(check_command)
