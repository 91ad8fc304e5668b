"""``roofguard demo``: a month of nightly history and one pull request, judged end to end.

The example data (service/demo/data, Nsight Compute raw-page CSV written by
``python -m service.demo.generate``) is an LLM decode step on an H100: 30 nightly runs of
the main branch, then a pull request in which the residual-add + RMSNorm fusion broke and
the speculative-decoding verify GEMM fell off the tensor cores.
"""

from __future__ import annotations

import hashlib
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from collectors.schema import RunKind
from service.cli.common import store_session
from service.cli.verdict_output import FORMAT_HELP, resolve_format, write_verdict
from service.config import load_config
from service.demo.generate import DATA_DIR
from service.pipeline.check import CheckOutcome, check_run
from service.pipeline.reading import collect_run
from service.pipeline.runmeta import RunMeta
from service.progress import progress

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


def run_demo(db_url: str) -> CheckOutcome:
    """Build the history in ``db_url`` and check the pull request against it."""
    config = load_config(DEMO_CONFIG, cwd=DEMO_CONFIG.parent)
    nightlies = sorted(DATA_DIR.glob("nightly-*.csv"))
    with store_session(db_url) as session:
        for night, path in enumerate(progress(nightlies, "building 30 nights of history"), 1):
            run = collect_run([path], meta=_nightly_meta(night), config=config)
            check_run(session=session, run=run, config=config)
    pr_meta = RunMeta(
        repo=DEMO_REPO,
        commit=demo_commit("pr-1234"),
        branch="fuse-norm-into-attention",
        pull_request=1234,
        timestamp=FIRST_NIGHT + timedelta(days=len(nightlies), hours=9),
        runner="gpu-runner-07",
    )
    pr_run = collect_run([DATA_DIR / "pr-1234.csv"], meta=pr_meta, config=config)
    base_sha = demo_commit(f"night-{len(nightlies)}")
    with store_session(db_url) as session:
        return check_run(session=session, run=pr_run, config=config, base_sha=base_sha)


def demo_command(
    db: Annotated[
        str | None, typer.Option("--db", help="Keep the demo history here (default: temporary).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "auto",
) -> None:
    """Judge a pull request against a month of nightly history (example data shipped)."""
    resolve_format(fmt, None)
    with tempfile.TemporaryDirectory(prefix="roofguard-demo-") as tmp:
        outcome = run_demo(db or f"sqlite:///{Path(tmp) / 'history.db'}")
    verdict = outcome.verdict
    write_verdict(verdict, outcome.markdown, fmt, None)
    typer.echo(
        f"\nroofguard demo: 30 nightly runs stored, PR #1234 judged: {verdict.conclusion.value} "
        f"with {verdict.regression_count}. `roofguard check` would exit "
        f"{1 if verdict.conclusion.value == 'fail' else 0}.",
        err=True,
    )


def register(app: typer.Typer) -> None:
    """Add ``demo`` to ``app``."""
    app.command("demo")(demo_command)
