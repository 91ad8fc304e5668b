"""``roofguard demo``: a month of nightly history and one pull request, judged end to end.

The example data (service/demo/data, Nsight Compute raw-page CSV written by
``python -m service.demo.generate``) is an LLM decode step on an H100: 30 nightly runs of
the main branch, then a pull request in which the residual-add + RMSNorm fusion broke and
the speculative-decoding verify GEMM fell off the tensor cores. With ``--device-change`` the
pull request is instead the first run of the healthy step on an H200 (the runners moved to a
new card): judged against the H100's history in percent of roof.
"""

from __future__ import annotations

import hashlib
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from collectors.schema import RunKind
from service.cli.common import core_session
from service.cli.verdict_output import FORMAT_HELP, resolve_format, write_verdict
from service.config import load_config
from service.demo.generate import DATA_DIR, MOVED_RUN
from service.pipeline.basechoice import AskedBase
from service.pipeline.check import CheckOutcome, check_run
from service.pipeline.reading import collect_run
from service.pipeline.runmeta import RunMeta
from service.progress import progress
from service.store.history import MergeBase

DEMO_REPO = "example/llm-serving"
DEMO_CONFIG = Path(__file__).resolve().parents[1] / "demo" / "roofguard.toml"
FIRST_NIGHT = datetime(2026, 10, 31, 2, 0, tzinfo=UTC)


def demo_commit(label: str) -> str:
    """A stable fake commit SHA for a demo run."""
    return hashlib.sha1(label.encode(), usedforsecurity=False).hexdigest()


def _nightly_meta(night: int) -> RunMeta:
    return RunMeta(
        repo=DEMO_REPO,
        commit=demo_commit(f"night-{night}"),
        branch="main",
        kind=RunKind.NIGHTLY,
        timestamp=FIRST_NIGHT + timedelta(days=night),
        runner="gpu-runner-07",
    )


#: The demo's pull requests: (report, PR number, branch, runner).
BROKEN_PR = ("pr-1234.csv", 1234, "fuse-norm-into-attention", "gpu-runner-07")
MOVED_PR = (MOVED_RUN, 1240, "move-ci-to-h200", "h200-runner-01")


def run_demo(db_url: str, *, device_change: bool = False) -> CheckOutcome:
    """Build the history in ``db_url`` and check the pull request against it.

    ``device_change``: the pull request is the first run on an H200 (``MOVED_PR``).
    """
    config = load_config(DEMO_CONFIG, cwd=DEMO_CONFIG.parent)
    if device_change:  # the config's card names reports that name none; these name theirs
        config = config.model_copy(update={"device": None})
    nightlies = sorted(DATA_DIR.glob("nightly-*.csv"))
    with core_session(db_url) as session:
        for night, path in enumerate(progress(nightlies, "building 30 nights of history"), 1):
            run = collect_run([path], meta=_nightly_meta(night), config=config)
            check_run(session=session, run=run, config=config)
    report, number, branch, runner = MOVED_PR if device_change else BROKEN_PR
    pr_meta = RunMeta(
        repo=DEMO_REPO,
        commit=demo_commit(f"pr-{number}"),
        branch=branch,
        pull_request=number,
        timestamp=FIRST_NIGHT + timedelta(days=len(nightlies), hours=9),
        runner=runner,
    )
    pr_run = collect_run([DATA_DIR / report], meta=pr_meta, config=config)
    base = AskedBase(merge_base=MergeBase(demo_commit(f"night-{len(nightlies)}")))
    with core_session(db_url) as session:
        return check_run(session=session, run=pr_run, config=config, base=base)


def demo_command(
    db: Annotated[
        str | None, typer.Option("--db", help="Keep the demo history here (default: temporary).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "auto",
    device_change: Annotated[
        bool,
        typer.Option(
            "--device-change",
            help="The pull request is the first run on an H200, judged against the H100's.",
        ),
    ] = False,
) -> None:
    """Judge a pull request against a month of nightly history (example data shipped)."""
    resolve_format(fmt, None)
    with tempfile.TemporaryDirectory(prefix="roofguard-demo-") as tmp:
        url = db or f"sqlite:///{Path(tmp) / 'history.db'}"
        outcome = run_demo(url, device_change=device_change)
    verdict = outcome.verdict
    write_verdict(verdict, lambda: outcome.markdown, fmt, None)
    number = MOVED_PR[1] if device_change else BROKEN_PR[1]
    typer.echo(
        f"\nroofguard demo: 30 nightly runs stored, PR #{number} judged: "
        f"{verdict.conclusion.value} with {verdict.regression_count}. `roofguard check` would exit "
        f"{1 if verdict.conclusion.value == 'fail' else 0}.",
        err=True,
    )


def register(app: typer.Typer) -> None:
    """Add ``demo`` to ``app``."""
    app.command("demo")(demo_command)
