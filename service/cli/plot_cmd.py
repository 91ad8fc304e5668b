"""``roofguard plot run`` (a run's roofline chart) and ``roofguard plot kernel`` (a trend chart)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from matplotlib.figure import Figure

from collectors.schema import RunRecord
from rules import Placement, Roof, builtin_catalog, place_run
from service.cli.db_cmd import DbOption
from service.cli.overview import HELP_MARKUP
from service.compare.devicenames import match_device
from service.config import load_config
from service.errors import BadInput, NotFound
from service.pipeline.reading import read_run
from service.pipeline.roofs import choose_roof, same_card
from service.pipeline.runmeta import RunMeta
from service.render.chart_bytes import ImageFormat, figure_bytes
from service.render.chart_note import NO_PLACED_KERNEL
from service.render.charts import roofline_chart, run_points
from service.render.kernel_trend import kernel_trend
from service.render.trend_cards import cards_trend_chart
from service.store.db import open_store, session_scope
from service.store.history import kernel_history
from service.store.likeforlike import with_like_for_like
from service.store.queries import RunSummary, get_run, get_run_record, runners_of

plot_app = typer.Typer(
    help="Draw roofline and trend charts (SVG or PNG).",
    no_args_is_help=True,
    rich_markup_mode=HELP_MARKUP,
)


def _format(path: Path) -> ImageFormat:
    suffix = path.suffix.lower()
    if suffix == ".png":
        return "png"
    if suffix != ".svg":
        raise BadInput(f"--output: {path} must end in .svg or .png")
    return "svg"


def _write_chart(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise BadInput(f"{path}: cannot write: {exc.strerror}") from exc
    typer.echo(f"wrote {path}")


def load_run(ref: str, *, url: str | None, device: str | None) -> tuple[RunRecord, Roof]:
    """A run and its roof from a report file, or from the store when ``ref`` is a run id."""
    if Path(ref).exists():
        return _report_run(Path(ref), device)
    if not ref.isdigit():
        raise BadInput(f"{ref}: neither a report file nor a run id of the history store")
    summary, run = _stored_run(url, int(ref))
    catalog = builtin_catalog()
    # the store keeps the card each run was placed on: --device has no report to name
    if device and not same_card(device, summary.device, catalog):
        raise BadInput(
            f"--device: run {ref} is stored as a run on {summary.device}, and a stored run keeps "
            "its card; --device only names the device of report files that name none: drop it"
        )
    source = summary.roof_source if summary.roof_source in ("datasheet", "report") else "datasheet"
    choice = choose_roof(
        run, device=summary.device, source=source, catalog=catalog, origin="the stored run"
    )
    return run, choice.roof


def _report_run(path: Path, device: str | None) -> tuple[RunRecord, Roof]:
    """A report file's run and datasheet roof, read as check and inspect read it.

    ``read_run`` puts ``--device`` (else the config's ``device``) into a file naming none: read
    without it, a pytest-benchmark file named its CPU and ``--device`` was refused as another.
    """
    config = load_config(None, cwd=Path.cwd())  # the one check and inspect find here
    run = read_run([path], RunMeta(repo="local/plot", commit="-", device=device), config)
    choice = choose_roof(
        run, device=device, source="datasheet", catalog=config.catalog(), origin="--device"
    )
    if choice.note:
        typer.echo(f"note: {choice.note}", err=True)
    return run, choice.roof


def _stored_run(url: str | None, run_id: int) -> tuple[RunSummary, RunRecord]:
    """A stored run's summary (its device, its roof source) and its record."""
    engine = open_store(url, create=False)
    try:
        with session_scope(engine, readonly=True) as session:
            return get_run(session=session, run_id=run_id), get_run_record(
                session=session, run_id=run_id
            )
    finally:
        engine.dispose()


def _load_baseline(
    baseline: str, url: str | None, device: str | None, drawn: tuple[str, RunRecord]
) -> tuple[RunRecord, Roof]:
    """``--baseline``'s run and roof: a stored run of the drawn stored run's repository.

    Raises:
        NotFound: A run id the store does not hold, named as ``--baseline``'s.
        BadInput: A run of another repository (its kernels drew no arrow, and no word).
    """
    ref, run = drawn
    # --device names report files only: a stored baseline keeps its card, as the run does
    given = device if Path(baseline).exists() else None
    try:
        base_run, base_roof = load_run(baseline, url=url, device=given)
    except NotFound as exc:
        raise NotFound(f"--baseline: {exc}") from None
    stored = not Path(ref).exists() and not Path(baseline).exists()  # a file's repo: as it says
    if stored and run.repo and base_run.repo and run.repo.casefold() != base_run.repo.casefold():
        raise BadInput(
            f"--baseline: {_what(baseline)} is a run of {base_run.repo}, the run drawn one of "
            f"{run.repo}: pick a baseline of {run.repo}"
        )
    return base_run, base_roof


def _what(ref: str) -> str:
    """``run 12`` for a stored run, the path for a report file."""
    return ref if Path(ref).exists() else f"run {ref}"


def _compare_hint(ref: str, baseline: str) -> str:
    """How ``roofguard compare`` (or the dashboard, for stored runs) compares the two runs."""
    if Path(ref).exists() and Path(baseline).exists():
        return f"`roofguard compare {shlex.quote(baseline)} --against {shlex.quote(ref)}`"
    hint = "`roofguard compare BASE_FILES... --against FILES...` on their reports"
    if ref.isdigit() and baseline.isdigit():
        hint += f", or the dashboard's /compare/runs?base={baseline}&head={ref}"
    return hint


def _same_card(ref: str, baseline: str, roof: Roof, base_roof: Roof) -> None:
    """Refuse a baseline from another card: its FLOP/s on this card's roof would mislead.

    Raises:
        BadInput: Naming both runs' cards and how to compare runs across cards.
    """
    if same_card(roof.device, base_roof.device, builtin_catalog()):
        return
    raise BadInput(
        f"--baseline: {_what(baseline)} ran on {base_roof.device}, {_what(ref)} on {roof.device}; "
        "its FLOP/s on one card is no baseline on another's roof: compare the two runs across "
        f"cards, against the time the roofs predict, with {_compare_hint(ref, baseline)}"
    )


@plot_app.command("run")
def plot_run_command(
    ref: Annotated[str, typer.Argument(metavar="RUN_ID|FILE", help="Stored run id or report.")],
    baseline: Annotated[
        str | None,
        typer.Option(
            metavar="RUN_ID|FILE", help="Draw arrows from this run's kernels to the run's."
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            help="Device of report files that name none (a report naming another is an error; "
            "a stored run keeps its own)."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(help=".svg or .png (default: roofline-RUN.svg, RUN the id or file name)."),
    ] = None,
    url: DbOption = None,
) -> None:
    """The roofline chart of a run: roofs, ridge points, kernels sized by time share."""
    path = output or Path(f"roofline-{Path(ref).stem}.svg")
    fmt = _format(path)
    run, roof = load_run(ref, url=url, device=device)
    base: Mapping[str, Placement] = {}
    if baseline is not None:
        base_run, base_roof = _load_baseline(baseline, url, device, (ref, run))
        _same_card(ref, baseline, roof, base_roof)
        base = place_run(base_run, roof)  # the same roof, so arrows compare like with like
    points = run_points(run, place_run(run, roof), base)
    if not points:
        raise BadInput(f"{ref}: {NO_PLACED_KERNEL}")
    title = f"{roof.label}: {run.commit[:12] if run.commit else Path(ref).name}"
    _write_chart(path, figure_bytes(roofline_chart(roof, points, title=title), fmt))


def _kernel_series(
    url: str | None, repo: str, key: str, device: str | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The kernel's nightly rows, and its other (PR, local) timed rows (every device's).

    With each row's ``runner`` (None where its run names none), for the chart's swaps.
    """
    engine = open_store(url, create=False)
    try:
        with session_scope(engine, readonly=True) as session:
            history = kernel_history(session=session, repo=repo, key=key)
            # on today's roofs and work models, as the gate reads them
            history = with_like_for_like(session=session, frame=history, repo=repo)
            runners = runners_of(session=session, run_ids=history["run_id"])
    finally:
        engine.dispose()
    timed = history[history["time_s"].notna()].assign(runner=lambda f: f["run_id"].map(runners))
    if timed[timed["kind"] == "nightly"].empty:
        raise NotFound(f"kernel {key!r} has no nightly history in {repo}")
    if device is not None:
        timed = timed[timed["device"] == _stored_card(device, timed, key)]
    nightly = timed[timed["kind"] == "nightly"]
    return nightly, timed[timed["kind"] != "nightly"]


def _stored_card(device: str, timed: pd.DataFrame, key: str) -> str:
    """The card ``--device`` means among the kernel's nightly cards (an alias, a prefix).

    Raises:
        NotFound: None of them, naming those it runs on.
    """
    cards = sorted(timed.loc[timed["kind"] == "nightly", "device"].unique())
    card = match_device(device, cards, builtin_catalog())
    if card is None:
        raise NotFound(
            f"--device: kernel {key!r} has no nightly history on {device!r}; it runs on "
            f"{', '.join(cards)}"
        )
    return card


def _cards_chart(nightly: pd.DataFrame, key: str, metric: str) -> Figure:
    """A kernel on several cards: its percent of roof on each, one chart (time: one card)."""
    devices = sorted(nightly["device"].unique())
    if metric != "percent":
        raise BadInput(
            f"--device: kernel {key!r} runs on {', '.join(devices)}; its time on one card is "
            "no baseline for another's: pick one (percent of roof draws every card)"
        )
    return cards_trend_chart(nightly, title=f"{key} on {', '.join(devices)}")


@plot_app.command("kernel")
def plot_kernel_command(
    key: Annotated[str, typer.Argument(help="Identity key of the kernel.")],
    repo: Annotated[str, typer.Option(help="Repository OWNER/NAME.")],
    device: Annotated[
        str | None, typer.Option(help="Device (default: every card, in percent of roof).")
    ] = None,
    output: Annotated[Path | None, typer.Option(help=".svg or .png (default: trend.svg).")] = None,
    metric: Annotated[str, typer.Option(help="percent (of roof) or time.")] = "percent",
    url: DbOption = None,
) -> None:
    """Percent of roof (or time) over time for one kernel, change points and the baseline.

    A kernel on several cards without --device: its percent of roof on each, one line per
    card, marked where each card's nights begin (a runner swap, a new GPU generation).
    """
    path = output or Path("trend.svg")
    fmt = _format(path)
    column = {"percent": "percent_of_roof", "time": "time_s"}.get(metric)
    if column is None:
        raise BadInput(f"--metric: must be percent or time, not {metric!r}")
    nightly, others = _kernel_series(url, repo, key, device)
    if nightly["device"].nunique() > 1:
        _write_chart(path, figure_bytes(_cards_chart(nightly, key, metric), fmt))
        return
    others = others[others["device"] == nightly["device"].iloc[0]]
    title = f"{key} on {nightly['device'].iloc[0]}"
    fig = kernel_trend(
        nightly, column=column, title=title, runners=nightly["runner"], others=others
    )
    if fig is None:
        raise NotFound(f"kernel {key!r} has no nightly {metric} history in {repo}")
    _write_chart(path, figure_bytes(fig, fmt))


def register(app: typer.Typer) -> None:
    """Add ``plot run`` and ``plot kernel`` to ``app``."""
    app.add_typer(plot_app, name="plot")
