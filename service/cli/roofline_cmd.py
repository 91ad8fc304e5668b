"""``roofguard roofline``, ``roofguard devices`` and ``roofguard schema``."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from collectors.schema import PRECISIONS, TIERS, run_json_schema
from rules import Catalog, DeviceSpec, Roof, attainable, place, ridge_point
from service.config import load_config
from service.errors import BadInput
from service.render.text_roofline import text_roofline

#: Short names people type; tensor-only formats map to their tensor precision.
PRECISION_ALIASES = {
    "fp8": "tensor_fp8",
    "bf16": "tensor_bf16",
    "tf32": "tensor_tf32",
    "int8": "tensor_int8",
    "fp4": "tensor_fp4",
}


def resolve_precision(name: str, spec: DeviceSpec | None) -> str:
    """Map a typed precision to a schema precision (``fp16`` falls back to tensor_fp16)."""
    precision = PRECISION_ALIASES.get(name.lower(), name.lower())
    if precision == "fp16" and spec is not None and "fp16" not in spec.peak_flop_per_s:
        precision = "tensor_fp16"
    if precision not in PRECISIONS:
        raise BadInput(f"--precision: unknown precision {name!r} (known: {', '.join(PRECISIONS)})")
    return precision


#: Where a figure of the calculator's roof comes from (``peak_source``, ``bandwidth_source``).
DATASHEET, CONFIG, COMMAND_LINE = "datasheet", "config", "command line"


@dataclass(frozen=True)
class CalcRoof:
    """The calculator's roof: its two figures, where each comes from, and its label."""

    name: str
    precision: str
    peak: float
    bandwidth: float
    peak_source: str
    bandwidth_source: str
    label: str


def _label(name: str, precision: str, tier: str, sources: tuple[str, str]) -> str:
    """As a verdict labels its roof, plus the figures the command line gave."""
    figures = ((precision, "peak", sources[0]), (tier, "bandwidth", sources[1]))
    config = tuple(key for key, _, source in figures if source == CONFIG)
    given = [f"{key} {what}" for key, what, source in figures if source == COMMAND_LINE]
    if not given:
        return Roof(name, "datasheet", {precision: 1.0}, {tier: 1.0}, from_config=config).label
    parts = [DATASHEET] if DATASHEET in sources else []
    parts += [f"{key} from config" for key in config]
    parts.append(f"{' and '.join(given)} from the command line")
    return f"{name} ({', '.join(parts)})"


def _figure_of(
    given: float | None, sheet: float | None, key: str, spec: DeviceSpec
) -> tuple[float | None, str]:
    """A figure of the roof and its source: the flag's, else the catalog's (or the config's)."""
    if given is not None:
        return given, COMMAND_LINE
    return sheet, CONFIG if key in spec.roof().from_config else DATASHEET


def _roof_figures(
    catalog: Catalog,
    device: str | None,
    precision: str,
    tier: str,
    given: tuple[float | None, float | None],
) -> CalcRoof:
    peak, bandwidth = given
    if device is None:
        if peak is None or bandwidth is None:
            raise BadInput("give --device, or both --peak-flops and --bandwidth")
        prec = resolve_precision(precision, None)
        label = _label("custom", prec, tier, (COMMAND_LINE, COMMAND_LINE))
        return CalcRoof("custom", prec, peak, bandwidth, COMMAND_LINE, COMMAND_LINE, label)
    spec = catalog.lookup(device)
    resolved = resolve_precision(precision, spec)
    peak_v, peak_src = _figure_of(peak, spec.peak_flop_per_s.get(resolved), resolved, spec)
    bw_v, bw_src = _figure_of(bandwidth, spec.bandwidth_byte_per_s.get(tier), tier, spec)
    if peak_v is None:
        raise BadInput(f"--precision: {spec.id} has no {resolved} peak in the catalog")
    if bw_v is None:
        raise BadInput(f"--tier: {spec.id} has no {tier} bandwidth in the catalog")
    label = _label(spec.id, resolved, tier, (peak_src, bw_src))
    return CalcRoof(spec.id, resolved, peak_v, bw_v, peak_src, bw_src, label)


def _check_figures(
    flops: float, nbytes: float, time_s: float | None, peak: float | None, bw: float | None
) -> None:
    """Refuse what cannot be placed, naming the option: NaN, infinity, negatives, zero rates."""
    for flag, value in (("--flops", flops), ("--bytes", nbytes)):
        if not math.isfinite(value):
            raise BadInput(f"{flag}: must be a finite number (got {value:g})")
        if value < 0:
            raise BadInput(f"{flag}: must be a non-negative number")
    if time_s is not None and not (math.isfinite(time_s) and time_s > 0):
        # a time of 0 would put the kernel nowhere
        raise BadInput("--time: must be a positive finite number of seconds (or left out)")
    for flag, rate in (("--peak-flops", peak), ("--bandwidth", bw)):
        if rate is not None and not (math.isfinite(rate) and rate > 0):
            raise BadInput(f"{flag}: must be a positive finite number (got {rate:g})")


def calculate(
    roof: CalcRoof,
    tier: str,
    work: tuple[float, float, float | None],
    band: float,
) -> dict[str, Any]:
    """The calculator's result object (``--json`` writes its infinities as null, as verdicts do).

    ``work`` is FLOPs, bytes and the measured time (or None). Zero bytes is unbounded intensity
    (inf, compute-bound); no FLOPs and no bytes is no regime.
    """
    flops, nbytes, time_s = work
    given = roof.peak_source == roof.bandwidth_source == COMMAND_LINE
    on = Roof(
        roof.name,
        "custom" if given else "datasheet",
        {roof.precision: roof.peak},
        {tier: roof.bandwidth},
    )
    placed = place({roof.precision: flops}, {tier: nbytes}, time_s, on, band=band)
    placeable = flops > 0 or nbytes > 0
    intensity = flops / nbytes if nbytes > 0 else (math.inf if placeable else None)
    result: dict[str, Any] = {
        "device": roof.name,
        "precision": roof.precision,
        "tier": tier,
        "intensity_flop_per_byte": intensity,
        "ridge_flop_per_byte": ridge_point(roof.peak, roof.bandwidth),
        "regime": placed.regime if placeable else None,
        "borderline": placed.borderline,
        "attainable_flop_per_s": (
            None if intensity is None else attainable(intensity, roof.peak, roof.bandwidth)
        ),
        "roof_time_s": placed.t_roof_s,
        "peak_flop_per_s": roof.peak,
        "bandwidth_byte_per_s": roof.bandwidth,
    }
    if time_s:
        result["achieved_flop_per_s"] = flops / time_s
        result["percent_of_roof"] = placed.percent_of_roof
    # after the keys the calculator always wrote, so that their order stays as it was
    result.update(
        roof=roof.label, peak_source=roof.peak_source, bandwidth_source=roof.bandwidth_source
    )
    return result


def _json(result: dict[str, Any]) -> str:
    """The result as strict JSON: infinity (unbounded intensity) is null, as verdicts write it."""
    finite = {
        k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in result.items()
    }
    return json.dumps(finite, indent=2, allow_nan=False)


def _figure(value: float | None, unit: str, scale: float = 1.0, form: str = ".4g") -> str:
    if value is None:
        return "—"
    return f"{value / scale:{form}} {unit}" if math.isfinite(value) else f"∞ {unit}"


def _intensity(value: float | None) -> str:
    if value is None:
        return "none (no FLOPs and no bytes)"
    return _figure(value, "FLOP/byte") if math.isfinite(value) else "unbounded (no bytes moved)"


def _regime(result: dict[str, Any]) -> str:
    if result["regime"] is None:
        return "neither (no FLOPs and no bytes to place)"
    return str(result["regime"]) + (" (borderline)" if result["borderline"] else "")


def _sourced(result: dict[str, Any], key: str, unit: str, scale: float) -> str:
    """A roof figure and where it comes from: "3350 GB/s (config)"."""
    source = result[key.split("_", 1)[0] + "_source"]
    return f"{_figure(result[key], unit, scale)} ({source})"


def _text(result: dict[str, Any]) -> str:
    rows = [
        ("device", result["roof"]),
        ("precision / tier", f"{result['precision']} / {result['tier']}"),
        ("peak", _sourced(result, "peak_flop_per_s", "TFLOP/s", 1e12)),
        ("bandwidth", _sourced(result, "bandwidth_byte_per_s", "GB/s", 1e9)),
        ("intensity", _intensity(result["intensity_flop_per_byte"])),
        ("ridge", _figure(result["ridge_flop_per_byte"], "FLOP/byte")),
        ("regime", _regime(result)),
        ("attainable", _figure(result["attainable_flop_per_s"], "TFLOP/s", 1e12)),
        ("roof time", _figure(result["roof_time_s"], "ms", 1e-3)),
    ]
    if "percent_of_roof" in result:
        rows.append(("achieved", _figure(result["achieved_flop_per_s"], "TFLOP/s", 1e12)))
        rows.append(("percent of roof", _figure(result["percent_of_roof"], "%", form=".1f")))
    table = "\n".join(f"{k:<18}{v}" for k, v in rows)
    plot = text_roofline(
        result["intensity_flop_per_byte"],
        result.get("achieved_flop_per_s"),
        result["peak_flop_per_s"],
        result["bandwidth_byte_per_s"],
    )
    return f"{table}\n\n{plot}"


FlopsOpt = Annotated[float, typer.Option("--flops", help="FLOPs of the kernel.")]
BytesOpt = Annotated[float, typer.Option("--bytes", help="Bytes moved at --tier.")]
DeviceOpt = Annotated[
    str | None, typer.Option(help="Catalog device (or a [devices.*] one) or a name tools print.")
]
PrecisionOpt = Annotated[
    str,
    typer.Option(
        help="fp64, fp32, fp16 (vector peaks; fp16 the tensor one on a card without), tf32, "
        "bf16, fp8, int8, fp4 (tensor peaks), or a full name such as tensor_fp16."
    ),
]
TierOpt = Annotated[str, typer.Option(help="Memory tier: dram, l2, l1.")]
TimeOpt = Annotated[float | None, typer.Option("--time", help="Measured time in seconds.")]
PeakOpt = Annotated[
    float | None, typer.Option(help="Peak FLOP/s (any hardware; replaces --device's).")
]
BandwidthOpt = Annotated[
    float | None, typer.Option(help="Bandwidth in B/s (any hardware; replaces --device's).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
DevicesJsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON list of devices.")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        help="roofguard.toml or pyproject.toml (default: the one in the current directory, "
        "as check): [devices.*], rules.borderline_band."
    ),
]


def roofline_command(
    flops: FlopsOpt,
    nbytes: BytesOpt,
    device: DeviceOpt = None,
    precision: PrecisionOpt = "fp32",
    tier: TierOpt = "dram",
    time_s: TimeOpt = None,
    peak_flops: PeakOpt = None,
    bandwidth: BandwidthOpt = None,
    as_json: JsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """Place a kernel on a roofline: intensity, ridge, regime, roof time, percent of roof."""
    if tier not in TIERS:
        raise BadInput(f"--tier: unknown tier {tier!r} (known: {', '.join(TIERS)})")
    _check_figures(flops, nbytes, time_s, peak_flops, bandwidth)
    cfg = load_config(config, cwd=Path.cwd())  # one loader, one validation, as check
    roof = _roof_figures(cfg.catalog(), device, precision, tier, (peak_flops, bandwidth))
    result = calculate(roof, tier, (flops, nbytes, time_s), cfg.rules.borderline_band)
    typer.echo(_json(result) if as_json else _text(result))


def _devices_json(specs: list[DeviceSpec]) -> str:
    """Every field of each device, and ``from_config``: the figures the configuration set."""
    rows = [{**s.model_dump(), "from_config": list(s.roof().from_config)} for s in specs]
    return json.dumps(rows, indent=2)


def _device_row(spec: DeviceSpec) -> str:
    """One line of ``devices``: a config's figures marked as a verdict labels them."""
    p, b = spec.peak_flop_per_s, spec.bandwidth_byte_per_s
    cells = [b.get("dram"), p.get("fp32"), p.get("tensor_bf16"), p.get("tensor_fp8")]
    text = "".join(f"{c / 1e12:>9.4g}" if c else f"{'-':>9}" for c in cells)
    roof = spec.roof()
    marked = roof.label.removeprefix(roof.device).strip() if roof.from_config else ""
    line = f"{spec.id:<16}{text}  {', '.join(spec.aliases[:2])}"
    return f"{line}  {marked}".rstrip() if marked else line


def devices_command(
    as_json: DevicesJsonOpt = False,
    config: ConfigOpt = None,
) -> None:
    """List the hardware catalog: dense peaks and bandwidths with their sources."""
    cfg = load_config(config, cwd=Path.cwd())
    specs = list(cfg.catalog().devices.values())
    if as_json:
        typer.echo(_devices_json(specs))
        return
    typer.echo(f"{'device':<16}{'DRAM TB/s':>9}{'FP32 TF':>9}{'BF16 TF':>9}{'FP8 TF':>9}  aliases")
    for spec in specs:
        typer.echo(_device_row(spec))
    if cfg.devices:
        typer.echo(f"(config): figures from {cfg.origin}")


def schema_command() -> None:
    """Print the JSON Schema of RunRecord (roofguard's own JSON format)."""
    typer.echo(json.dumps(run_json_schema(), indent=2))


def register(app: typer.Typer) -> None:
    """Add the commands of this module to ``app``."""
    app.command("roofline")(roofline_command)
    app.command("devices")(devices_command)
    app.command("schema")(schema_command)
