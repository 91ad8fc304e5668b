"""``roofguard ingest``: store a run's reports in the history store (one transaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli.db_cmd import DbOption
from service.intake import collect_run, parse_timestamp, stamp_run
from service.roofs import resolve_roof
from service.store.db import open_store, session_scope
from service.store.repo import ingest_run


def ingest_command(
    files: Annotated[list[Path], typer.Argument(help="Report files of ONE run.")],
    repo: Annotated[str, typer.Option(help="Repository, OWNER/NAME.")],
    commit: Annotated[str, typer.Option(help="Commit SHA the run measured.")],
    branch: Annotated[str, typer.Option(help="Branch the run measured.")],
    kind: Annotated[str | None, typer.Option(help="nightly, pr or local.")] = None,
    pr: Annotated[int | None, typer.Option("--pr", help="Pull-request number (pr runs).")] = None,
    device: Annotated[str | None, typer.Option(help="Device (default: the report's).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="When measured, ISO-8601.")] = None,
    runner: Annotated[str | None, typer.Option(help="CI runner name.")] = None,
    roof: Annotated[str, typer.Option(help="datasheet or report.")] = "datasheet",
    url: DbOption = None,
) -> None:  # fmt: skip
    """Store a run's reports in the history store; the same content twice is a no-op."""
    run = stamp_run(
        collect_run(files),
        repo=repo,
        commit=commit,
        branch=branch,
        kind=kind,
        pull_request=pr,
        timestamp=parse_timestamp(timestamp),
        runner=runner,
    )
    chosen = resolve_roof(run, device=device, source=roof, catalog=builtin_catalog())
    placements = place_run(run, chosen)
    engine = open_store(url)
    try:
        with session_scope(engine) as session:
            result = ingest_run(session=session, run=run, placements=placements, roof=chosen)
    finally:
        engine.dispose()
    if result.created:
        typer.echo(f"ingested run {result.run_id} ({result.kernels} kernels)")
    else:
        typer.echo(f"already ingested as run {result.run_id} (same content)")


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to ``app``."""
    app.command("ingest")(ingest_command)
