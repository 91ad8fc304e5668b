"""``roofguard calibrate``: measure the runner's roofline, store it, or check the runner's health.

Exit codes: 0 calibrated (or healthy), 1 the ``--check`` preflight found the runner degraded,
2 bad input, no stored calibration to check against, no GPU visible to check (its health file
written), or the ``calibrate`` extra is missing.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from rules import builtin_catalog
from service.calibrate.backend import Backend, NoGpu, load_backend
from service.calibrate.health import Health, decide_health, format_rate, no_gpu, uncalibrated
from service.calibrate.measure import Plan, make_plan, parse_precisions, run_calibration
from service.calibrate.model import Ceilings
from service.calibrate.storage import (
    DEFAULT_HEALTH_PATH,
    check_chart_path,
    check_output_path,
    latest_ceilings,
    save_ceilings,
    write_json_atomic,
)
from service.cli.common import store_session
from service.cli.db_cmd import DbOption
from service.errors import BadInput
from service.progress import labelled_bar
from service.store.db import DEFAULT_SQLITE_PATH, open_store, session_scope

EXIT_DEGRADED, EXIT_UNCALIBRATED = 1, 2
NO_CUDA = "no CUDA device found (a CPU-only torch build, or no driver)"


def _summary(c: Ceilings) -> str:
    lines = [f"device    {c.device} ({c.identity.kind}; {c.identity.runtime or c.backend})"]
    for tier, value in c.bandwidth_byte_per_s.items():
        ratio = c.datasheet_ratio.get(f"bandwidth.{tier}")
        sheet = f"  ({ratio:.0%} of datasheet)" if ratio else ""
        lines.append(f"{tier:<10}{format_rate(value, 'B/s')}{sheet}")
    for precision, value in sorted(c.peak_flop_per_s.items(), key=lambda kv: -kv[1]):
        ratio = c.datasheet_ratio.get(f"peak.{precision}")
        sheet = f"  ({ratio:.0%} of datasheet)" if ratio else ""
        ridge = c.ridge_flop_per_byte.get(precision)
        ridge_text = f"  ridge {ridge:.3g} FLOP/B" if ridge else ""
        lines.append(f"{precision:<10}{format_rate(value, 'FLOP/s')}{ridge_text}{sheet}")
    sweep = ", ".join(f"K={p.k}: {format_rate(p.flop_per_s, 'FLOP/s')}" for p in c.sweep)
    lines.append(f"sweep     {sweep}")
    lines.extend(f"method    {note}" for note in c.method)
    return "\n".join(lines)


def _default_device(backend: str, device: str | None) -> str:
    if device:
        return device
    return "auto" if backend == "torch" else "cuda:0"


def _measure(backend: Backend, plan: Plan, runner: str) -> Ceilings:
    with labelled_bar(plan.steps, "calibrating") as step:
        return run_calibration(backend, plan, runner=runner, progress=step)


def _store(ceilings: Ceilings, db: str | None) -> None:
    """Store the ceilings as the runner's measured roof."""
    with store_session(db) as session:
        row = save_ceilings(session=session, ceilings=ceilings)
    typer.echo(f"stored as runner {ceilings.runner!r}'s measured roof (row {row})")


def _stored(backend: Backend, runner: str, db: str | None, health_path: Path) -> Ceilings:
    """The calibration ``--check`` compares with, looked up before anything is measured.

    A check only reads: a store that does not exist is nothing calibrated, and is not created.

    Raises:
        typer.Exit: None stored (``EXIT_UNCALIBRATED``), its health written.
    """
    device = backend.identity().name
    stored = None
    if not _missing_sqlite_file(db):
        engine = open_store(db, create=False)
        try:
            with session_scope(engine, readonly=True) as session:
                stored = latest_ceilings(
                    session=session, runner=runner, device=device, backend=backend.name
                )
        finally:
            engine.dispose()
    if stored is None:
        where = db or str(DEFAULT_SQLITE_PATH)
        _report(uncalibrated(runner, device, where), health_path)
        raise typer.Exit(EXIT_UNCALIBRATED)
    return stored


def _missing_sqlite_file(db: str | None) -> bool:
    """Whether ``db`` names a SQLite file that does not exist (the default store included)."""
    if db is None:
        return not DEFAULT_SQLITE_PATH.exists()
    try:
        url = make_url(db)
    except ArgumentError:
        return False  # not a URL: opening it says so
    name = url.database
    if url.get_backend_name() != "sqlite" or not name or name == ":memory:":
        return False
    return not Path(name).exists()


def _no_gpu_check(runner: str, device: str | None, detail: str, health_path: Path) -> NoReturn:
    """``--check`` where no GPU is visible: untrusted, written down; nothing measured or stored."""
    _report(no_gpu(runner, device or "cuda", detail), health_path)
    raise typer.Exit(EXIT_UNCALIBRATED)


def _check(ceilings: Ceilings, stored: Ceilings, tolerance: float, health_path: Path) -> int:
    health = decide_health(current=ceilings, stored=stored, tolerance=tolerance)
    _report(health, health_path)
    return 0 if health.trusted else EXIT_DEGRADED


def _report(health: Health, health_path: Path) -> None:
    write_json_atomic(health_path, health)
    typer.echo(f"roofguard: {health.message}", err=not health.trusted)
    for note in health.notes:
        typer.echo(f"roofguard: note: {note}", err=True)
    typer.echo(f"roofguard: health written to {health_path} (trusted: {health.trusted})")


def _write_outputs(ceilings: Ceilings, output: Path | None, chart: Path | None) -> None:
    """Write ``--output`` and ``--chart``; a failure is one error naming the flag."""
    flag, path = "--output", output
    try:
        if output is not None:
            write_json_atomic(output, ceilings)
            typer.echo(f"ceilings written to {output}")
        if chart is not None:
            from service.calibrate.chart import roofline_figure, save_chart

            flag, path = "--chart", chart
            spec = builtin_catalog().find(ceilings.device)
            save_chart(roofline_figure(ceilings, spec.roof() if spec else None), chart)
            typer.echo(f"chart written to {chart}")
    except OSError as exc:
        raise BadInput(f"{flag} {path}: cannot write: {exc.strerror or exc}") from exc


BackendOpt = Annotated[str, typer.Option(help="torch or cupy.")]
DeviceOpt = Annotated[
    str | None, typer.Option(help="cuda:0, cpu ... (default: the GPU if any, else cpu).")
]
PrecisionsOpt = Annotated[
    str | None, typer.Option(help="Matmul precisions: fp32,tf32,bf16,fp16,fp8,fp64.")
]
QuickOpt = Annotated[bool, typer.Option(help="The quick subset (same sizes, fewer points).")]
OutputOpt = Annotated[Path | None, typer.Option(help="Write the ceilings as JSON here.")]
StoreOpt = Annotated[bool, typer.Option(help="Store the ceilings as this runner's measured roof.")]
RunnerOpt = Annotated[
    str | None, typer.Option(help="Runner name (default: $RUNNER_NAME, else the host name).")
]
CheckOpt = Annotated[
    bool, typer.Option(help="Health preflight: quick run compared with the stored ceilings.")
]
ToleranceOpt = Annotated[
    float, typer.Option(help="--check: lowest acceptable fraction of the calibrated ceilings.")
]
ChartOpt = Annotated[Path | None, typer.Option(help="Write a roofline chart (.svg or .png).")]
SweepOpt = Annotated[
    str, typer.Option(help="Intensity sweep: auto, compiled (torch.compile) or eager.")
]
ThreadsOpt = Annotated[
    int | None, typer.Option(help="CPU threads for torch (default: all it sees).")
]
HealthFileOpt = Annotated[Path, typer.Option(help="--check: where to write the health verdict.")]


def calibrate_command(
    backend: BackendOpt = "torch",
    device: DeviceOpt = None,
    precisions: PrecisionsOpt = None,
    quick: QuickOpt = False,
    output: OutputOpt = None,
    store: StoreOpt = False,
    db: DbOption = None,
    runner: RunnerOpt = None,
    check: CheckOpt = False,
    tolerance: ToleranceOpt = 0.8,
    chart: ChartOpt = None,
    sweep: SweepOpt = "auto",
    threads: ThreadsOpt = None,
    health_file: HealthFileOpt = DEFAULT_HEALTH_PATH,
) -> None:
    """Measure this runner's roofline (bandwidth, peaks, ridge), or check its health."""
    files = {"--output": output, "--health-file": health_file if check else None}
    _refuse_bad_flags(check=check, store=store, tolerance=tolerance, chart=chart, files=files)
    name = runner or os.environ.get("RUNNER_NAME") or socket.gethostname()
    try:
        chosen = load_backend(backend, _default_device(backend, device), threads)
    except NoGpu as exc:
        if not check:
            raise
        _no_gpu_check(name, device, exc.detail, health_file)
    if check and device is None and chosen.kind == "cpu":
        seen = f"{chosen.identity().runtime or chosen.name} sees no CUDA device"
        _no_gpu_check(name, device, f"{seen}: a CPU-only build, or no driver", health_file)
    _when_no_gpu(chosen, chosen_by_default=device is None, store=store)
    plan = make_plan(
        chosen.kind,
        quick=quick or check,
        sweep_impl=sweep,
        precisions=parse_precisions(precisions, chosen.kind),
    )
    stored = _stored(chosen, name, db, health_file) if check else None
    ceilings = _measure(chosen, plan, name)
    typer.echo(_summary(ceilings))
    if store:  # before the files: a file that cannot be written must not lose the measurement
        _store(ceilings, db)
    _write_outputs(ceilings, output, chart)
    if stored is not None:
        raise typer.Exit(_check(ceilings, stored, tolerance, health_file))


def _when_no_gpu(chosen: Backend, *, chosen_by_default: bool, store: bool) -> None:
    """Say that the CPU is measured where no GPU was found; refuse to store it as the roof.

    A GPU runner with a CPU-only torch build (the default wheel on some indexes) or a broken
    driver measured its CPU in silence, and ``--store`` made that the runner's measured roof.
    """
    if not chosen_by_default or chosen.kind != "cpu":
        return
    if store:
        raise BadInput(
            f"--store: {NO_CUDA}, so this "
            "would store the CPU's ceilings as the runner's measured roof; pass --device cpu "
            "to calibrate the CPU, or --device cuda:0 to require the GPU"
        )
    typer.echo(
        f"roofguard: note: {NO_CUDA}: measuring the CPU; --device cuda:0 requires the GPU",
        err=True,
    )


def _refuse_bad_flags(
    *, check: bool, store: bool, tolerance: float, chart: Path | None, files: dict[str, Path | None]
) -> None:
    """Refuse flags that contradict each other or files that cannot be written, before measuring."""
    if chart is not None:
        check_chart_path(chart)
    for flag, path in files.items():
        if path is not None:
            check_output_path(path, flag)
    if check and store:
        raise BadInput(
            "--check and --store: a preflight measures the quick subset; "
            "store a full calibration instead"
        )
    if not 0 < tolerance <= 1:
        raise BadInput(f"--tolerance: must lie in (0, 1], got {tolerance}")


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to ``app``."""
    app.command("calibrate")(calibrate_command)
