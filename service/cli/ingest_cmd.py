"""``roofguard ingest``: store a run's reports in the history store (one transaction)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from sqlalchemy.exc import SQLAlchemyError

from service.cli.common import cli_limits, core_session, load_cli_config
from service.cli.db_cmd import DbOption
from service.cli.overview import DEVICE_HELP
from service.errors import BadInput, StoreUnavailable
from service.pipeline.check import store_run
from service.pipeline.hugerun import clocked, read_columns, refuse_unstorable_columns
from service.pipeline.inputdigest import InputDigest, ingest_digest
from service.pipeline.intake import parse_timestamp, refuse_impossible_time
from service.pipeline.reading import collect_run
from service.pipeline.roofs import choose_for, noted
from service.pipeline.runmeta import RunMeta, parse_kind
from service.pipeline.storable import refuse_unstorable, refuse_unstorable_flags
from service.pipeline.workchange import record_edits
from service.progress import stage
from service.store.batch_ingest import ingest_columns
from service.store.db import DEFAULT_SQLITE_PATH, core_scope, open_store
from service.store.ingestinputs import remember_inputs, run_of_inputs, stored_time

if TYPE_CHECKING:
    from collectors import RunColumns
    from collectors.schema import RunRecord
    from rules import Roof
    from service.config import RoofguardConfig
    from service.pipeline.storable import StoreLimits
    from service.store.ingest import IngestResult
    from service.store.sessions import StoreSession


def ingest_command(
    files: Annotated[list[Path], typer.Argument(help="Report files of ONE run.")],
    repo: Annotated[str, typer.Option(help="Repository, OWNER/NAME.")],
    commit: Annotated[str, typer.Option(help="Commit SHA the run measured.")],
    branch: Annotated[str, typer.Option(help="Branch the run measured.")],
    kind: Annotated[str | None, typer.Option(help="nightly, pr or local.")] = None,
    pr: Annotated[int | None, typer.Option("--pr", help="Pull-request number (pr runs).")] = None,
    device: Annotated[str | None, typer.Option(help=DEVICE_HELP)] = None,
    timestamp: Annotated[str | None, typer.Option(help="When measured, ISO-8601.")] = None,
    runner: Annotated[str | None, typer.Option(help="CI runner name.")] = None,
    roof: Annotated[str | None, typer.Option(help="datasheet or report (default: config).")] = None,
    config: Annotated[Path | None, typer.Option(help="roofguard.toml or pyproject.toml.")] = None,
    url: DbOption = None,
) -> None:
    """Store a run's reports in the history store; the same content twice is a no-op.

    Reads the reports exactly as ``check`` does (identity keys, work models, device overrides
    and borderline band from the config), so nightly runs and PR runs key kernels alike.
    """
    cfg = load_cli_config(config, device=device, roof=roof)
    meta = RunMeta(
        repo=repo,
        commit=commit,
        branch=_given(branch),
        kind=parse_kind(kind),
        pull_request=pr,
        device=device,
        timestamp=parse_timestamp(timestamp),
        runner=runner,
    )
    limits = cli_limits()
    digest, before = _stored_before(files, meta, cfg, limits, url)
    if before is not None:  # the same files and flags were stored: nothing to read
        _already(*before, meta)
        return
    where = ", ".join(map(str, files))
    with stage("reading the reports"):  # a huge run's: a minute and more
        # One big file is read as columns where it can be (the same stored run, see hugerun).
        columns = read_columns(files, meta=meta, config=cfg, max_kernels=limits.max_kernels)
        if columns is None:
            run = collect_run(files, meta=meta, config=cfg, max_kernels=limits.max_kernels)
            refuse_unstorable(run, where=where, limits=limits, files=list(map(str, files)))
        else:
            refuse_unstorable_columns(columns, where=where, limits=limits)
            run = columns.head
    # before the store opens: a bad device writes nothing
    chosen = choose_for(run if columns is None else clocked(columns), cfg)
    run = noted(run, chosen)
    with core_session(url) as session:
        result = _store(session, (run, columns), chosen.roof, cfg)
        if digest is not None and digest.unchanged():  # a file rewritten meanwhile: no digest
            remember_inputs(session, digest.hexdigest, result)
        stored_at = None if result.created else stored_time(session, result.run_id)
    _say(run, result, None if columns is None else columns.unmeasured_count, meta, stored_at)


def _store(
    session: StoreSession,
    read: tuple[RunRecord, RunColumns | None],
    roof: Roof,
    cfg: RoofguardConfig,
) -> IngestResult:
    """Store the run by records (its work model edits recorded) or, a huge one, by columns."""
    run, columns = read
    if columns is None:
        result, _ = store_run(session=session, run=run, config=cfg, roof=roof)
        record_edits(session, run, roof, cfg.base_branch, result)
        return result
    columns.head = run
    return ingest_columns(
        session=session, columns=columns, roof=roof, band=cfg.rules.borderline_band
    )


def _stored_before(
    files: list[Path], meta: RunMeta, cfg: RoofguardConfig, limits: StoreLimits, url: str | None
) -> tuple[InputDigest | None, tuple[int, datetime | None] | None]:
    """The digest of the inputs, and the run stored from the same ones and its time, if any.

    The timestamp is left out of the digest, so a future one is refused here, as a read would.
    """
    refuse_unstorable_flags(meta)
    if meta.timestamp is not None:
        refuse_impossible_time(meta.timestamp, where="--timestamp")
    digest = ingest_digest(files, meta=meta, config=cfg, limits=limits)
    return digest, _run_of_inputs(url, digest)


def _given(branch: str) -> str:
    """``--branch`` as given, refused empty.

    An unset $GITHUB_HEAD_REF: an upload would have stored the run on the base branch, so
    one content made two runs.
    """
    if not branch.strip():
        raise BadInput("--branch: empty; give the branch the run measured")
    return branch


def _run_of_inputs(
    url: str | None, digest: InputDigest | None
) -> tuple[int, datetime | None] | None:
    """The run an ingest of the same inputs stored; None also where there is no store yet.

    A store that is missing, behind its migrations or broken is not an error here: the
    ingest goes on and says so where it always did, after reading the files.
    """
    if digest is None or (url is None and not DEFAULT_SQLITE_PATH.exists()):
        return None  # (the default store's folder is made by the ingest, not by this look)
    try:
        engine = open_store(url, create=False)
    except (BadInput, StoreUnavailable, SQLAlchemyError):
        return None
    try:
        with core_scope(engine, readonly=True) as session:
            found = run_of_inputs(session, digest.hexdigest)
            return None if found is None else (found, stored_time(session, found))
    except (StoreUnavailable, SQLAlchemyError):
        return None
    finally:
        engine.dispose()


def _already(run_id: int, stored_at: datetime | None, meta: RunMeta) -> None:
    """The run stored before; a ``--timestamp`` given does not move it (time is no content).

    Said only of another time than the stored one: a nightly job retried says the same.
    """
    typer.echo(f"already ingested as run {run_id} (same content)")
    if meta.timestamp is not None and meta.timestamp != stored_at:
        typer.echo(
            f"note: --timestamp not applied: run {run_id} keeps the time it was stored with",
            err=True,
        )


def _say(
    run: RunRecord,
    result: IngestResult,
    unmeasured: int | None,
    meta: RunMeta,
    stored_at: datetime | None,
) -> None:
    """The run's notes, then what was stored (``unmeasured``: counted already, for columns).

    ``stored_at``: the time of the run stored before with the same content (not created).
    """
    for note in run.notes:  # the roof's, and the reports' (failed launches, unmeasured kernels)
        typer.echo(f"note: {note}", err=True)
    if not result.created:
        _already(result.run_id, stored_at, meta)
        return
    if unmeasured is None:
        unmeasured = sum(not k.measured for k in run.kernels)
    left_out = f"; {unmeasured} not measured, not stored" if unmeasured else ""
    typer.echo(f"ingested run {result.run_id} ({result.kernels} kernels{left_out})")


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to ``app``."""
    app.command("ingest")(ingest_command)
