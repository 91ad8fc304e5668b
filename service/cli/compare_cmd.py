"""``roofguard compare``: every kernel's percent of roof, time and binding on every card.

Store mode reads the history store (``--repo``, ``--db``). The command takes no positional
argument yet: report files (``roofguard compare BASE_FILES... --against PR_FILES...``) can be
added as positional arguments later without changing any flag here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from service.cli.common import load_cli_config
from service.cli.db_cmd import DbOption
from service.compare.build import CompareRequest, compare_history
from service.compare.cards import CompareView
from service.compare.render import device_charts, render_json, render_markdown, render_text
from service.errors import BadInput
from service.render.charts import ImageFormat, figure_bytes
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
    return render_markdown(view.comparison) if fmt == "markdown" else render_text(view.comparison)


def compare_command(
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
    """Every kernel on every card: percent of roof, time, binding, and how it scaled."""
    if fmt not in FORMATS:
        raise BadInput(f"--format: must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if not repo:
        raise BadInput("--repo: the repository whose history to compare (OWNER/NAME)")
    cfg = load_cli_config(config, roof=roof)
    request = CompareRequest(repo, _devices(devices), kernel, forecast, by_runner)
    engine = open_store(db)
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
