"""``roofguard inspect FILE...``: read reports of any format and show them on the roofline.

Nothing is stored. Each file is read by the collector its content names, declared work models
from ``--config`` are applied, and every kernel is placed on a roof: the catalog datasheet
roof of the device the report names (``--device`` names it for reports that name none),
else the roof the report implies (its peaks and bandwidths at measured clocks), else the
kernel stays "unplaced".

``--json`` prints the RunRecord (roofguard's own JSON format) of one file, or a JSON list of
RunRecords, one per file in the order given, for several files (records are not merged:
each file is one run on one device). Each holds every note the text shows or counts, the
roof's note (how the datasheet roof was scaled, what stands in for it) among them.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from collectors import CollectOptions, WorkModel, apply_work_models, collect
from collectors.schema import LEFT_OUT_WORK, NOT_AVERAGED, KernelRecord, RunRecord
from rules import (
    Placement,
    Roof,
    UnknownDevice,
    above_roof,
    percent_is_lower_bound,
    place_kernel,
)
from service.cli.overview import DEVICE_HELP
from service.config import RoofguardConfig, load_config
from service.errors import BadInput
from service.pipeline.roofs import DeviceConflict, choose_roof, names_device
from service.progress import progress
from service.render.escape import terminal_text
from service.render.judged import lower_bound_text
from service.render.names import ellipsize_middle
from service.render.plain_table import pipe_lines
from service.render.text import clean
from service.render.text_fit import Column, fitted_or_cropped

#: Longest kernel name shown in the table (names can be kilobytes of demangled C++).
NAME_WIDTH = 44
_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float) -> str:
    """``1.342e8`` -> ``"134.2M"``: four significant digits and an SI prefix."""
    for scale, prefix in _PREFIXES:
        if abs(value) >= scale:
            return f"{value / scale:.4g}{prefix}"
    return f"{value:.4g}"


def seconds(value: float) -> str:
    """A duration with a readable unit: ``2.648e-4`` -> ``"264.8 us"``."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if value >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value / 1e-9:.4g} ns"


def shorten(name: str, width: int = NAME_WIDTH) -> str:
    """Cut long names in the middle, their template arguments kept (``render.names``)."""
    return ellipsize_middle(name, width)


def resolve_roof(
    run: RunRecord, device: str | None, config: RoofguardConfig | None = None
) -> tuple[RunRecord, Roof | None]:
    """The roof to place ``run`` on (see the module docstring); None: unplaced.

    The same choice as ``check`` (``service.pipeline.roofs``); the run comes back with the
    choice's note (the clocks the datasheet roof is scaled to, the report's roof standing in for
    a device the catalog lacks) first among its notes: it explains the roof line above the
    table, and a long list of the collector's notes must not push it out of the text.

    Raises:
        DeviceConflict: The report names another device than ``--device``.
        UnknownDevice: ``--device`` names no catalog device and the report has no peaks.
    """
    config = config or RoofguardConfig()
    # the config's device is a default for reports that name none, as for check
    given = device or (None if names_device(run.device.name) else config.device)
    source = "report" if config.roof == "report" else "datasheet"
    origin = "--device" if device else "the config's `device`"
    catalog = config.catalog()
    try:
        choice = choose_roof(run, device=given, source=source, catalog=catalog, origin=origin)
    except UnknownDevice:
        # A name the user gave (read into a report naming none) that the catalog lacks is a
        # typo to refuse, as check does: only a report's own unknown card stays unplaced.
        if given or run.device.name in {device, config.device}:
            raise
        return run, None
    except DeviceConflict:
        raise
    except BadInput:  # --roof report on a report without peaks: the datasheet roof, if any
        known = catalog.find(run.device.name)
        return run, known.roof() if known else None
    if choice.note is None or choice.note in run.notes:
        return run, choice.roof
    return run.model_copy(update={"notes": (choice.note, *run.notes)}), choice.roof


def _amounts(amounts: Mapping[str, float]) -> str:
    """``tensor_bf16 137.4G``: the precisions or tiers with work (zeros are hidden)."""
    shown = " ".join(f"{name} {si(value)}" for name, value in amounts.items() if value > 0)
    return shown or ("0" if amounts else "-")


def _uses_declared(kernel: KernelRecord) -> bool:
    """Whether the placement uses a declared count for lack of a measured one."""
    return bool(_declared_mark(kernel.flops, kernel.declared_flops)) or bool(
        _declared_mark(kernel.bytes, kernel.declared_bytes)
    )


def _declared_mark(measured: Mapping[str, float], declared: Mapping[str, float]) -> str:
    """``*`` on the cell whose count is declared for lack of a measured one (FLOPs or bytes).

    One mark on the bytes cell read as declared bytes where the FLOPs were the declared ones.
    """
    return "*" if declared and not measured else ""


def _tier(placement: Placement) -> str | None:
    """The tier whose intensity is shown: the binding one (the memory side's when compute-bound)."""
    for tier in (placement.binding, placement.memory.binding):
        if tier in placement.intensity:
            return tier
    return next(iter(placement.intensity), None)


def _intensity(placement: Placement | None) -> str:
    tier = _tier(placement) if placement else None
    if placement is None or tier is None:
        return "-"
    return f"{placement.intensity[tier]:.3g} ({tier})"


def _percent(placement: Placement | None) -> Text:
    """The percent of roof, ``≥`` before a lower bound (part of the work timed), as in check."""
    pct = placement.percent_of_roof if placement else None
    if placement is None or pct is None:
        return Text("-")
    shown = f"{'≥ ' if percent_is_lower_bound(placement) else ''}{pct:.1f}"
    if above_roof(pct):  # what check's above-roof rule flags
        return Text(f"{shown} above roof!", style="bold yellow")
    return Text(shown)


def _regime(kernel: KernelRecord, placement: Placement | None, roof: Roof | None) -> str:
    if roof is None:
        return "unplaced: no roof for this device"
    if placement is None:
        return "unplaced: no counters"
    if placement.regime is None:
        return f"unplaced: {_unplaced_why(kernel, placement)}"
    return placement.regime + (" ~ridge" if placement.borderline else "")


def _unplaced_why(kernel: KernelRecord, placement: Placement) -> str:
    """Why ``placement`` has no regime: the side without a roof time, the kernel's own note first.

    A roof's gap on the other side (no L2 bandwidth in the catalog) is not the reason, and a
    launch whose replay failed has every figure NaN: it was not measured.
    """
    failed = [m.partition(NOT_AVERAGED)[2] for m in kernel.missing if NOT_AVERAGED in m]
    if not kernel.duration_s and failed:
        return f"not measured: {failed[0]}"
    compute_side = placement.compute.time_s is None
    side = placement.compute if compute_side else placement.memory
    heads = ("flops:", "FLOP counts") if compute_side else ("bytes", "byte counts")
    reasons = [m for m in placement.missing if m.startswith(heads)] + list(side.missing)
    why = (reasons or list(placement.missing) or ["no counters"])[0]
    # The whole note (what ran, what to collect) is the run's note below the table.
    return "tensor-core work not counted" if why.startswith(LEFT_OUT_WORK) else why


def _row(kernel: KernelRecord, placement: Placement | None, roof: Roof | None) -> list[Text | str]:
    flops, nbytes = kernel.work()
    return [
        Text(clean(shorten(kernel.key))),
        f"{kernel.launches}",
        seconds(kernel.duration_s),
        _amounts(flops) + _declared_mark(kernel.flops, kernel.declared_flops),
        _amounts(nbytes) + _declared_mark(kernel.bytes, kernel.declared_bytes),
        _intensity(placement),
        _percent(placement),
        _regime(kernel, placement, roof),
        (placement.binding or "-") if placement else "-",
    ]


#: The table's columns; the names fold and the work and regime wrap on a narrow terminal.
COLUMNS = (
    Column("kernel", folds=True, floor=20),
    Column("launches", "right"),
    Column("time", "right"),
    Column("FLOPs", wraps=True, floor=10),
    Column("bytes", wraps=True, floor=12),
    Column("FLOP/B (tier)", "right"),
    Column("% roof", "right"),
    Column("regime", wraps=True, floor=14, cap=32),
    Column("binding"),
)
#: Hidden in this order when the terminal is too narrow for every column.
SPARE_COLUMNS = ("launches", "FLOP/B (tier)", "binding")


def _placements(run: RunRecord, roof: Roof | None) -> list[Placement | None]:
    """Each kernel of ``run`` placed on ``roof``, in order (None throughout without a roof)."""
    return [place_kernel(kernel, roof) if roof else None for kernel in run.kernels]


def kernel_table(
    run: RunRecord,
    roof: Roof | None,
    width: int | None = None,
    placements: Sequence[Placement | None] | None = None,
) -> Table:
    """One row per kernel: its work, intensity, percent of roof, regime and binding.

    No wider than ``width`` where it can be; else as wide as it is, cropped by the console.
    ``placements``: the kernels already placed on ``roof`` (``_placements``), else placed here.
    """
    return fitted_or_cropped(COLUMNS, _rows(run, roof, placements), width, SPARE_COLUMNS)


def _rows(
    run: RunRecord, roof: Roof | None, placements: Sequence[Placement | None] | None
) -> list[list[Text | str]]:
    placed = _placements(run, roof) if placements is None else placements
    return [_row(k, p, roof) for k, p in zip(run.kernels, placed, strict=True)]


def _pipe_table(run: RunRecord, roof: Roof | None, placements: Sequence[Placement | None]) -> str:
    """The kernel table for a pipe, one line a row (``service.render.plain_table``)."""
    return "\n".join(pipe_lines(COLUMNS, _rows(run, roof, placements))) + "\n"


def lower_bound_legend(placements: Sequence[Placement | None]) -> str:
    """What ``≥`` before a percent means and why (what the roof leaves untimed), as check says."""
    return lower_bound_text(
        why for p in placements if p and percent_is_lower_bound(p) for why in p.missing
    )


def render_run(
    path: Path, run: RunRecord, roof: Roof | None, width: int | None = None
) -> list[RenderableType]:
    """The human report of one file: run line, roof line, the kernel table (``width``), notes.

    A pipe's (``width`` None) table comes laid out as text, one line a row (``_pipe_table``).
    """
    count = len(run.kernels)
    placements = _placements(run, roof)
    parts: list[RenderableType] = [
        Text(f"{path}: {run.profiler.tool} on {clean(run.device.name)}, {count} kernel(s)"),
        Text(f"roof: {roof.label if roof else 'unplaced (no catalog device and no report roof)'}"),
        _pipe_table(run, roof, placements)
        if width is None
        else kernel_table(run, roof, width, placements),
    ]
    if legend := lower_bound_legend(placements):
        parts.append(Text(clean(legend)))
    if any(_uses_declared(k) for k in run.kernels):
        parts.append(Text("* declared work model (no measured count)"))
    parts += [Text(f"note: {clean(note)}") for note in run.notes[:5]]
    if len(run.notes) > 5:
        parts.append(Text(f"note: ... and {len(run.notes) - 5} more (see --json)"))
    return parts


def render(path: Path, run: RunRecord, roof: Roof | None, *, width: int = 200) -> str:
    """``render_run`` as plain text (no colours) for a pipe: lines wrap at ``width``.

    The table's rows stay one line each, however wide, so that grep finds a kernel's figures.
    """
    buffer = io.StringIO()
    text = Console(file=buffer, width=width, color_system=None, highlight=False)
    for part in render_run(path, run, roof):
        if isinstance(part, str):  # the kernel table, already laid out (``_pipe_table``)
            buffer.write(part)
        else:
            text.print(part)
    return buffer.getvalue().rstrip("\n")


FILES_HELP = "Reports: ncu, nvbench, Google Benchmark, pytest-benchmark, Kineto, roofguard."
JSON_HELP = "Print the RunRecord as JSON (a JSON list of records for several files)."
CONFIG_HELP = (
    "roofguard.toml or pyproject.toml (default: the one in the current directory, as check): "
    "work_models, keys, device, [devices.*]."
)


def _read(path: Path, device: str | None, cfg: RoofguardConfig, source: str) -> RunRecord:
    run = collect(path, options=CollectOptions(keys=cfg.keys, device=device or cfg.device))
    models: list[WorkModel] = list(cfg.work_models)
    return apply_work_models(run, models, source) if models else run


def inspect_command(
    files: Annotated[list[Path], typer.Argument(help=FILES_HELP)],
    device: Annotated[str | None, typer.Option(help=DEVICE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
    config: Annotated[Path | None, typer.Option(help=CONFIG_HELP)] = None,
) -> None:
    """Read reports without storing them and place every kernel on its roofline."""
    cfg = load_config(config, cwd=Path.cwd())  # one loader, one validation, as check
    reading = progress(files, "reading reports")  # a bar on a terminal: seconds a report
    runs = [(path, _read(path, device, cfg, cfg.origin)) for path in reading]
    # The roof's note joins the run's notes: the JSON holds every note the text refers to.
    placed = [(path, *resolve_roof(run, device, cfg)) for path, run in runs]
    if as_json:
        records = [json.loads(run.model_dump_json()) for _, run, _ in placed]
        typer.echo(json.dumps(records[0] if len(records) == 1 else records, indent=2))
        return
    if sys.stdout.isatty():  # a terminal: colours and its own width
        console = Console(highlight=False)
        for index, (path, run, roof) in enumerate(placed):
            if index:
                console.print()
            for part in render_run(path, run, roof, console.width):
                console.print(part)
        return
    reports = [render(path, run, roof) for path, run, roof in placed]
    # Names come from the reports: no escape sequence of theirs reaches the terminal.
    typer.echo("\n".join(terminal_text(line) for line in "\n\n".join(reports).split("\n")))


def register(app: typer.Typer) -> None:
    """Add ``inspect`` to ``app``."""
    app.command("inspect")(inspect_command)
