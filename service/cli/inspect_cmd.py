"""``roofguard inspect FILE...``: read reports of any format and show them on the roofline.

Nothing is stored. Each file is read by the collector its content names, declared work models
from ``--config`` are applied, and every kernel is placed on a roof: the catalog datasheet
roof of ``--device`` or of the device the report names, else the roof the report implies
(its peaks and bandwidths at measured clocks), else the kernel stays "unplaced".

``--json`` prints the RunRecord (roofguard's own JSON format) of one file, or a JSON list of
RunRecords, one per file in the order given, for several files (records are not merged:
each file is one run on one device).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from collectors import CollectOptions, collect
from collectors.schema import KernelRecord, RunRecord
from collectors.workmodel import WorkModel, apply_work_models
from rules.hardware import UnknownDevice, builtin_catalog
from rules.placement import place_kernel
from rules.roofline import Placement, Roof
from service.config import RoofguardConfig, load_config
from service.errors import BadInput
from service.pipeline.check import noted
from service.pipeline.roofs import DeviceConflict, choose_roof

#: Longest kernel name shown in the table (names can be kilobytes of demangled C++).
NAME_WIDTH = 44
_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


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
    """Cut long names in the middle so the start and the end both stay readable."""
    if len(name) <= width:
        return name
    half = (width - 1) // 2
    return f"{name[:half]}…{name[-(width - 1 - half) :]}"


def resolve_roof(
    run: RunRecord, device: str | None, config: RoofguardConfig | None = None
) -> tuple[RunRecord, Roof | None]:
    """The roof to place ``run`` on (see the module docstring); None: unplaced.

    The same choice as ``check`` (``service.pipeline.roofs``); the run comes back with a note
    when the report's own roof stands in for a device the catalog lacks.

    Raises:
        DeviceConflict: The report names another device than ``--device`` or the config's.
        UnknownDevice: ``--device`` names no catalog device and the report has no peaks.
    """
    config = config or RoofguardConfig()
    given = device or config.device
    source = "report" if config.roof == "report" else "datasheet"
    origin = "--device" if device else "the config's `device`"
    catalog = builtin_catalog().with_overrides(config.devices)
    try:
        choice = choose_roof(run, device=given, source=source, catalog=catalog, origin=origin)
    except UnknownDevice:
        if given:
            raise
        return run, None
    except DeviceConflict:
        raise
    except BadInput:  # --roof report on a report without peaks: the datasheet roof, if any
        known = catalog.find(run.device.name)
        return run, known.roof() if known else None
    return noted(run, choice), choice.roof


def _amounts(amounts: Mapping[str, float]) -> str:
    return " ".join(f"{name} {si(value)}" for name, value in amounts.items()) or "-"


def _uses_declared(kernel: KernelRecord) -> bool:
    """Whether the placement uses a declared count for lack of a measured one."""
    return bool(
        (kernel.declared_flops and not kernel.flops) or (kernel.declared_bytes and not kernel.bytes)
    )


def _row(kernel: KernelRecord, placement: Placement | None) -> str:
    flops, nbytes = kernel.work()
    declared = "*" if _uses_declared(kernel) else " "
    intensity = placement.intensity.get("dram") if placement else None
    pct = placement.percent_of_roof if placement else None
    cells = [
        f"{shorten(kernel.key):<{NAME_WIDTH}}",
        f"{kernel.launches:>8}",
        f"{seconds(kernel.duration_s):>10}",
        f"{_amounts(flops):<22}",
        f"{_amounts(nbytes):<18}{declared}",
        f"{intensity:>9.3g}" if intensity is not None else f"{'-':>9}",
        f"{pct:>7.1f}" if pct is not None else f"{'-':>7}",
        f"{(placement.regime or '-') if placement else 'unplaced':<14}",
        f"{(placement.binding or '-') if placement else '-'}",
    ]
    return " ".join(cells).rstrip()


HEADER = " ".join(
    [
        f"{'kernel':<{NAME_WIDTH}}",
        f"{'launches':>8}",
        f"{'time':>10}",
        f"{'FLOPs':<22}",
        f"{'bytes':<18} ",
        f"{'FLOP/B':>9}",
        f"{'% roof':>7}",
        f"{'regime':<14}",
        "binding",
    ]
)


def render(path: Path, run: RunRecord, roof: Roof | None) -> str:
    """The human report of one file: run line, roof line, one row per kernel, notes."""
    lines = [
        f"{path}: {run.profiler.tool} on {run.device.name}, {len(run.kernels)} kernel(s)",
        f"roof: {roof.label if roof else 'unplaced (no catalog device and no report roof)'}",
        "",
        HEADER,
    ]
    for kernel in run.kernels:
        lines.append(_row(kernel, place_kernel(kernel, roof) if roof else None))
    if any(
        (not k.flops and k.declared_flops) or (not k.bytes and k.declared_bytes)
        for k in run.kernels
    ):
        lines.append("* declared work model (no measured count)")
    lines += [f"note: {note}" for note in run.notes[:5]]
    if len(run.notes) > 5:
        lines.append(f"note: ... and {len(run.notes) - 5} more (see --json)")
    return "\n".join(lines)


FILES_HELP = "Reports: ncu, nvbench, Google Benchmark, pytest-benchmark, Kineto, roofguard."
DEVICE_HELP = "Catalog device whose datasheet roof to use (default: the report's device)."
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
    runs = [(path, _read(path, device, cfg, str(config or "roofguard config"))) for path in files]
    if as_json:
        records = [json.loads(run.model_dump_json()) for _, run in runs]
        typer.echo(json.dumps(records[0] if len(records) == 1 else records, indent=2))
        return
    placed = [(path, *resolve_roof(run, device, cfg)) for path, run in runs]
    reports = [render(path, run, roof) for path, run, roof in placed]
    typer.echo("\n\n".join(reports))


def register(app: typer.Typer) -> None:
    """Add ``inspect`` to ``app``."""
    app.command("inspect")(inspect_command)
