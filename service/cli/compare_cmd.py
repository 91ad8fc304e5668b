"""``roofguard compare``: two runs' reports side by side, or every kernel on every card.

File mode (``roofguard compare BASE_FILES... --against PR_FILES...``) reads two runs' report
files and compares them kernel by kernel with no database (``service.compare.runs``). Store
mode (``--repo``, ``--db``) reads the history store: every kernel's percent of roof, time and
binding on every card. One of the two: both, or neither, is a usage error.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from rules import place_run
from service.cli.common import load_cli_config
from service.cli.db_cmd import DbOption
from service.compare.build import CompareRequest, compare_history
from service.compare.cards import CompareView
from service.compare.render import device_charts, render_json, render_markdown, render_text
from service.compare.runs import DEFAULT_THRESHOLD, RunComparison, Side, compare_runs
from service.compare.runs_render import render_json as runs_json
from service.compare.runs_render import render_markdown as runs_markdown
from service.compare.runs_render import render_text as runs_text
from service.config import RoofguardConfig
from service.errors import BadInput
from service.pipeline.reading import read_run
from service.pipeline.roofs import choose_for
from service.pipeline.runmeta import RunMeta
from service.render.chart_bytes import ImageFormat, figure_bytes
from service.store.db import open_store, session_scope

FORMATS = ("text", "markdown", "json")


def _devices(text: str | None) -> tuple[str, ...]:
    """``A100-SXM4-80GB,H100-SXM5`` -> the names, in order."""
    if text is None:
        return ()
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise BadInput(f"--devices: {text!r} names no card (comma-separated names)")
    return names


def _chart_paths(path: Path, labels: list[str]) -> list[Path]:
    """``out/compare.svg`` and cards -> ``out/compare-<card>.svg`` (one roofline per card)."""
    suffix = path.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise BadInput(f"--chart: {path} must end in .svg or .png")
    safe = ["".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in lb) for lb in labels]
    return [path.with_name(f"{path.stem}-{name}{suffix}") for name in safe]


def write_charts(view: CompareView, path: Path) -> list[Path]:
    """Write one roofline per card (and the forecast card) beside ``path``; the paths."""
    charts = device_charts(view)
    paths = _chart_paths(path, [label for label, _ in charts])
    fmt: ImageFormat = "png" if path.suffix.lower() == ".png" else "svg"
    for target, (_, figure) in zip(paths, charts, strict=True):
        try:
            target.write_bytes(figure_bytes(figure, fmt))
        except OSError as exc:
            raise BadInput(f"--chart: cannot write {target}: {exc.strerror}") from exc
    return paths


def _render(view: CompareView, fmt: str) -> str:
    if fmt == "json":
        return render_json(view.comparison)
    if fmt == "markdown":
        return render_markdown(view.comparison)
    # A pipe's or a log's lines are laid out for 200 columns.
    return render_text(view.comparison, width=_terminal_width() or 200)


def _side(paths: list[Path], device: str | None, cfg: RoofguardConfig) -> Side:
    label = " ".join(p.name for p in paths)
    run = read_run(paths, RunMeta(repo="local/compare", commit="-", device=device), cfg)
    roof = choose_for(run, cfg).roof
    return label, run, place_run(run, roof, band=cfg.rules.borderline_band)


def compare_files(
    base: list[Path],
    against: list[Path],
    *,
    device: str | None,
    cfg: RoofguardConfig,
    threshold: float,
) -> RunComparison:
    """The runs of ``against``'s files compared with ``base``'s, each on its own roof."""
    if not 0 < threshold < math.inf:  # nan too: every kernel at 1.00x read as faster
        raise BadInput(f"--threshold: must be a number above 0, not {threshold}")
    return compare_runs(
        _side(base, device, cfg),
        _side(against, device, cfg),
        threshold=threshold,
    )


def _render_runs(comparison: RunComparison, fmt: str) -> str:
    if fmt == "json":
        return runs_json(comparison)
    if fmt == "markdown":
        return runs_markdown(comparison)
    return runs_text(comparison, _terminal_width())


def _terminal_width() -> int | None:
    """The terminal's columns; None for a pipe or a log."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def _mode(repo: str | None, files: list[Path], against: list[Path], store_only: bool) -> str:
    """``files`` or ``store``; a usage error for both, neither, or half of file mode."""
    if repo and (files or against):
        raise BadInput(
            "give report files (BASE_FILES... --against PR_FILES...) or --repo, not both"
        )
    if repo:
        return "store"
    if not files and not against:
        raise BadInput(
            "give BASE_FILES... --against PR_FILES... (two runs' reports) or --repo OWNER/NAME "
            "(the history store)"
        )
    if not files or not against:
        missing = (
            "the base run's report files before --against" if not files else "--against PR_FILES..."
        )
        raise BadInput(f"file mode needs {missing}")
    if store_only:
        raise BadInput("--devices, --forecast, --by-runner and --chart need --repo (the store)")
    return "files"


def compare_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="The base run's report files (file mode, with --against)."),
    ] = None,
    against: Annotated[
        list[Path] | None,
        typer.Option(
            help="The compared run's report files: every word after it, up to the next option."
        ),
    ] = None,
    device: Annotated[
        str | None, typer.Option(help="File mode: the device of reports that name none.")
    ] = None,
    threshold: Annotated[
        float, typer.Option(help="File mode: relative change of time that counts (0.05: 5%).")
    ] = DEFAULT_THRESHOLD,
    repo: Annotated[
        str | None, typer.Option(help="Repository OWNER/NAME whose history to compare.")
    ] = None,
    devices: Annotated[
        str | None,
        typer.Option(help="Cards to compare, comma-separated; the first is the reference."),
    ] = None,
    kernel: Annotated[
        str | None, typer.Option(help="Only kernels whose key or name matches this regex.")
    ] = None,
    forecast: Annotated[
        str | None,
        typer.Option(help="A catalog card: each kernel's time there if it kept its % of roof."),
    ] = None,
    by_runner: Annotated[
        bool, typer.Option("--by-runner", help="Compare each card's runners instead.")
    ] = False,
    fmt: Annotated[str, typer.Option("--format", help="text, markdown or json.")] = "text",
    chart: Annotated[
        Path | None,
        typer.Option(help="Write one roofline per card beside this path (.svg or .png)."),
    ] = None,
    roof: Annotated[
        str | None, typer.Option(help="Roof source: datasheet, report or measured.")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="roofguard.toml (default: found).")] = None,
    db: DbOption = None,
) -> None:
    """Two runs' reports kernel by kernel, or every kernel on every card of a repository."""
    if fmt not in FORMATS:
        raise BadInput(f"--format: must be one of {', '.join(FORMATS)}, not {fmt!r}")
    store_only = bool(devices or forecast or by_runner or chart)
    mode = _mode(repo, list(files or []), list(against or []), store_only)
    # --device names the files' card as check's does (a default for reports naming none)
    cfg = load_cli_config(config, roof=roof, device=device if mode == "files" else None)
    if mode == "files":
        found = compare_files(
            list(files or []), list(against or []), device=device, cfg=cfg, threshold=threshold
        )
        typer.echo(_render_runs(found, fmt), nl=False)
        return
    assert repo is not None  # store mode
    if chart is not None and not chart.parent.is_dir():  # refused after the table was printed
        raise BadInput(f"--chart: the folder {chart.parent} does not exist")
    request = CompareRequest(repo, _devices(devices), kernel, forecast, by_runner)
    engine = open_store(db, create=False)
    try:
        with session_scope(engine, readonly=True) as session:
            view = compare_history(session=session, request=request, config=cfg)
    finally:
        engine.dispose()
    typer.echo(_render(view, fmt), nl=False)
    if chart is not None:
        for path in write_charts(view, chart):
            typer.echo(f"wrote {path}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``compare`` to ``app``."""
    app.command("compare")(compare_command)
