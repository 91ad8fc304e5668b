"""``roofguard digest``: the weekly regression digest as markdown, HTML, JSON or a GitHub issue."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from sqlalchemy import Engine

from service.cli.db_cmd import DbOption
from service.config import RoofguardConfig, load_config
from service.digest.build import build_digest
from service.digest.changes import PARALLEL_POINTS, SLABS
from service.digest.chartread import chart_history
from service.digest.devices import judge_card
from service.digest.ignored import without_ignored
from service.digest.model import Digest, DigestOptions, targets_from_config
from service.digest.rowread import CardRows, compact_card_rows
from service.digest.storeread import (
    compact_history,
    digest_repo,
    with_acceptances,
    with_store_facts,
)
from service.digest.untrusted import left_out_runs
from service.digest.workers import Workers, usable_cores
from service.errors import BadInput
from service.github.auth import GitHubCredentials, resolve_api_url
from service.github.client import ReadOnlyToken, make_client
from service.progress import labelled_bar
from service.render.digest_charts import (
    TRENDS_PER_SECTION,
    roofline_chart_jobs,
    trend_chart_jobs,
)
from service.render.digest_render import (
    DIGEST_LABEL,
    digest_title,
    render_digest_html,
    render_digest_json,
    render_digest_markdown,
)
from service.store.db import open_store, session_scope
from service.store.lookups import require_runs_of
from service.store.memory import give_back_freed, map_large_allocations

_SPAN = re.compile(r"^\s*(\d+)\s*([hdw])\s*$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}
#: The stages build_digest reports, plus loading and rendering (for the progress bar).
_STAGES = 7


def parse_span(text: str) -> timedelta:
    """``7d``, ``2w``, ``36h`` -> a timedelta; BadInput naming ``--since`` otherwise."""
    match = _SPAN.match(text)
    if not match:
        raise BadInput(f"--since: expected a span like 7d, 2w or 36h, got {text!r}")
    if not int(match.group(1)):
        raise BadInput(f"--since: {text!r} is no span; give one of at least 1h")
    try:
        return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    except OverflowError:
        raise BadInput(f"--since: {text!r} reaches before the year 1") from None


def _parse_when(flag: str, text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise BadInput(f"{flag}: {text!r} is not an ISO-8601 date or timestamp") from exc
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def resolve_period(
    since: str | None, start: str | None, end: str | None, *, now: datetime
) -> tuple[datetime, datetime]:
    """The period from ``--since`` or ``--from``/``--to`` (a bare ``--to`` date is inclusive)."""
    if since is not None and start is not None:
        raise BadInput("--since: give either --since or --from/--to, not both")
    stop = now if end is None else _parse_when("--to", end)
    after = stop  # the period's exclusive end: a span before it is whole days of a bare date
    if end is not None and len(end) == 10:  # a date: the whole day is in the period
        after = _moved("--to", stop, lambda: timedelta(days=1))
        stop = after - timedelta(microseconds=1)
    begin = _parse_when("--from", start) if start else None
    if begin is None:
        span = parse_span(since or "7d")
        begin = _moved("--since", after, lambda: -span)
    if begin >= stop:
        raise BadInput(f"--from: {begin.isoformat()} is not before --to {stop.isoformat()}")
    if begin > now:  # a cron job's dates gone wrong: no night of it can be stored yet
        raise BadInput(
            f"--from: the period starts {begin.isoformat()}, after now ({now:%Y-%m-%d %H:%M} "
            "UTC): it has not happened yet"
        )
    return begin, stop


def _moved(flag: str, when: datetime, by: Callable[[], timedelta]) -> datetime:
    """``when + by()``; BadInput naming ``flag`` where that is outside the years 1 to 9999."""
    try:
        return when + by()
    except OverflowError:
        raise BadInput(f"{flag}: the digest would read outside the years 1 to 9999") from None


def digest_reach(
    period: tuple[datetime, datetime], lookback_days: int
) -> tuple[datetime, datetime]:
    """What the digest reads from the store: the period and its lookback, the end exclusive."""
    return (
        _moved("--lookback-days", period[0], lambda: -timedelta(days=lookback_days)),
        _moved("--to", period[1], lambda: timedelta(microseconds=1)),
    )


def _load(
    engine: Engine,
    repo: str | None,
    read: tuple[datetime, datetime],
    period: tuple[datetime, datetime],
    options: DigestOptions,
) -> tuple[str | None, pd.DataFrame, list[CardRows], DigestOptions]:
    """The repository, its nightly history of ``read`` (end exclusive), compact, with its ids.

    And the rows that judge each card that started in ``period`` (``rowread``), against the
    card before's last ``options.gate_window`` nights, and ``options`` with the acceptances
    made by the period's end. A ``repo`` with no run stored at all is refused
    (``require_runs_of``): named wrong, its cron job posted "nothing to digest" every week.
    Without ``repo``, the one whose nights are in reach (``digest_repo``: more are refused).
    """
    with session_scope(engine, readonly=True) as session:
        if repo is not None:
            require_runs_of(session=session, repo=repo)
        repo = digest_repo(session, repo, (read[0], period[1]))
        history = compact_history(session, repo, *read, with_ids=True)
        history = without_ignored(history, options.ignore_kernels)
        cards = compact_card_rows(session, history, period, options.gate_window)
        options = with_acceptances(session, repo, period[1], options)
    give_back_freed()  # what reading the cards' rows held (``service.store.memory``)
    return repo, history, cards, options


def _from_store(engine: Engine, digest: Digest) -> Digest:
    """``with_store_facts``, opening the store only where there is a fact to read."""
    if not digest.shared_moves and digest.measurements:
        return digest
    with session_scope(engine, readonly=True) as session:
        return with_store_facts(session, digest)


def _charts(
    engine: Engine, history: pd.DataFrame, digest: Digest, workers: Workers
) -> dict[str, bytes]:
    """The HTML's trend charts and rooflines, drawn from their rows (``chartread``)."""
    with session_scope(engine, readonly=True) as session:
        rows = chart_history(session, history, digest, limit=TRENDS_PER_SECTION)
    jobs = {**trend_chart_jobs(rows, digest), **roofline_chart_jobs(rows, digest)}
    return dict(zip(jobs, workers.run_all(jobs.values()), strict=True))


def _build(
    url: str | None,
    repo: str | None,
    read: tuple[datetime, datetime],
    period: tuple[datetime, datetime],
    *,
    html: bool,
    build: Callable[[pd.DataFrame, str | None, DigestOptions, Workers], Digest],
    options: DigestOptions,
) -> tuple[Digest, dict[str, bytes]]:
    """The digest (``build`` of the history), its device changes, and its charts for ``html``.

    ``build`` is given the repository (``digest_repo``) and ``options`` with its acceptances
    (``with_acceptances``).

    A large history's stages share ``options.workers`` processes: the new cards are judged
    in them while the history is prepared, and the charts drawn there.
    """
    map_large_allocations()  # the history's arrays, freed, go back to the system: see memory
    engine = open_store(url, create=False)
    try:
        repo, history, cards, options = _load(engine, repo, read, period, options)
        # No more workers than the scans' slabs. The scans choose by their points; the cards
        # and charts go to the workers from as many rows (the scans start them anyway).
        with Workers(min(options.workers, SLABS)) as workers:
            beside = workers if len(history) >= PARALLEL_POINTS else Workers(1)
            judged = [beside.submit(judge_card, old, new) for old, new in cards]
            del cards
            # Counted from the run ids, here: without --html they go before the build.
            left_out = left_out_runs(history, start=period[0], end=period[1])
            if not html:  # the ids serve the charts' rows
                del history["run_id"], history["kernel_id"]
            digest = _from_store(engine, build(history, repo, options, workers))
            changes = [change for change in (j() for j in judged) if change is not None]
            update = {"device_changes": changes, "untrusted_runs": left_out}
            digest = digest.model_copy(update=update)
            return digest, _charts(engine, history, digest, beside) if html else {}
    finally:
        engine.dispose()


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot write: {exc.strerror}") from exc


def post_digest(digest: Digest, body: str, *, repo: str, github_url: str | None) -> int:
    """Create the week's issue or update it; returns the issue number."""
    client = make_client(
        GitHubCredentials.from_env(os.environ), api_url=resolve_api_url(github_url, os.environ)
    )
    try:
        issue = client.upsert_issue(repo, digest_title(digest), body, [DIGEST_LABEL])
    except ReadOnlyToken as exc:
        raise BadInput(
            f"--post {repo}: the token cannot write issues there ({exc}); give the digest's "
            "job `permissions: issues: write`"
        ) from None
    return int(issue.number)


def _options(
    config: RoofguardConfig, lookback_days: int, min_segment: int, workers: int | None
) -> DigestOptions:
    """The command's options: the gate's window from the config, one worker a core unless set."""
    return DigestOptions(
        lookback_days=lookback_days,
        min_segment=min_segment,
        gate_window=config.baseline.gate_window,
        workers=workers or usable_cores(),
        ignore_kernels=config.rules.ignore_kernels,
    )


def digest_command(
    since: Annotated[str | None, typer.Option(help="Period ending now: 7d, 2w, 36h.")] = None,
    start: Annotated[str | None, typer.Option("--from", help="Start (ISO date or time).")] = None,
    end: Annotated[str | None, typer.Option("--to", help="End (ISO; a date is inclusive).")] = None,
    repo: Annotated[
        str | None,
        typer.Option(help="Repository OWNER/NAME (default: the store's one; several: refused)."),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the markdown here.")] = None,
    html: Annotated[Path | None, typer.Option(help="Write self-contained HTML here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    post: Annotated[
        str | None,
        typer.Option(
            help="Post the week's issue to OWNER/NAME (its own digest unless --repo is given)."
        ),
    ] = None,
    github_url: Annotated[str | None, typer.Option(help="API URL (or GITHUB_API_URL).")] = None,
    config: Annotated[Path | None, typer.Option(help="roofguard.toml (default: found).")] = None,
    lookback_days: Annotated[
        int,
        typer.Option(
            min=0, help="History scanned before the period (a regression older than it drops out)."
        ),
    ] = 90,
    min_segment: Annotated[int, typer.Option(min=1, help="Nights a new level must hold.")] = 2,
    workers: Annotated[
        int | None,
        typer.Option(min=1, help="Processes for a large history (default: one per core)."),
    ] = None,
    url: DbOption = None,
) -> None:
    """The regression digest of a period: regressions, improvements, flips, unresolved."""
    period = resolve_period(since, start, end, now=datetime.now(UTC))
    # A store shared by many repositories: an issue of one holds that one's digest only.
    repo = repo if repo is not None or post is None else post
    found = load_config(config, cwd=Path.cwd())  # --config, or the one found here
    options = _options(found, lookback_days, min_segment, workers)
    targets = targets_from_config(found)
    read = digest_reach(period, lookback_days)  # the store's end is exclusive, the digest's not
    with labelled_bar(_STAGES, "digest") as step:
        step("loading history")

        def build(
            history: pd.DataFrame, repo: str | None, chosen: DigestOptions, workers: Workers
        ) -> Digest:
            return build_digest(
                history,
                start=period[0],
                end=period[1],
                repo=repo,
                targets=targets,
                options=chosen,
                progress=step,
                workers=workers,
            )

        digest, charts = _build(
            url, repo, read, period, html=html is not None, build=build, options=options
        )
        step("rendering")
        markdown = render_digest_markdown(digest)
        if html is not None:
            _write(html, render_digest_html(digest, charts))
    if output is not None:
        _write(output, markdown)
    if post is not None:
        number = post_digest(digest, markdown, repo=post, github_url=github_url)
        typer.echo(f"posted {digest_title(digest)} as {post}#{number}", err=True)
    if as_json:
        typer.echo(render_digest_json(digest), nl=False)
    elif output is None and html is None and post is None:
        typer.echo(markdown, nl=False)


def register(app: typer.Typer) -> None:
    """Add ``digest`` to ``app``."""
    app.command("digest")(digest_command)
