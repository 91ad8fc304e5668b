"""``roofguard roofline``, ``roofguard devices`` and ``roofguard schema``."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import typer

from collectors.schema import PRECISIONS, TIERS, run_json_schema
from rules import DeviceSpec, Roof, attainable, builtin_catalog, place, ridge_point
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


def _roof_figures(
    device: str | None, precision: str, tier: str, peak: float | None, bandwidth: float | None
) -> tuple[str, str, float, float]:
    if device is None:
        if peak is None or bandwidth is None:
            raise BadInput("give --device, or both --peak-flops and --bandwidth")
        return "custom", resolve_precision(precision, None), peak, bandwidth
    spec = builtin_catalog().lookup(device)
    resolved = resolve_precision(precision, spec)
    peak = peak if peak is not None else spec.peak_flop_per_s.get(resolved)
    bandwidth = bandwidth if bandwidth is not None else spec.bandwidth_byte_per_s.get(tier)
    if peak is None:
        raise BadInput(f"--precision: {spec.id} has no {resolved} peak in the catalog")
    if bandwidth is None:
        raise BadInput(f"--tier: {spec.id} has no {tier} bandwidth in the catalog")
    return spec.id, resolved, peak, bandwidth


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
    *,
    device: str | None,
    precision: str,
    tier: str,
    flops: float,
    nbytes: float,
    time_s: float | None,
    peak: float | None = None,
    bandwidth: float | None = None,
) -> dict[str, Any]:
    """The calculator's result object (``--json`` writes its infinities as null, as verdicts do).

    Zero bytes is unbounded intensity (inf, compute-bound); no FLOPs and no bytes is no regime.
    """
    if tier not in TIERS:
        raise BadInput(f"--tier: unknown tier {tier!r} (known: {', '.join(TIERS)})")
    _check_figures(flops, nbytes, time_s, peak, bandwidth)
    name, prec, peak_v, bw = _roof_figures(device, precision, tier, peak, bandwidth)
    roof = Roof(name, "custom" if device is None else "datasheet", {prec: peak_v}, {tier: bw})
    placed = place({prec: flops}, {tier: nbytes}, time_s, roof)
    placeable = flops > 0 or nbytes > 0
    intensity = flops / nbytes if nbytes > 0 else (math.inf if placeable else None)
    result: dict[str, Any] = {
        "device": name,
        "precision": prec,
        "tier": tier,
        "intensity_flop_per_byte": intensity,
        "ridge_flop_per_byte": ridge_point(peak_v, bw),
        "regime": placed.regime if placeable else None,
        "borderline": placed.borderline,
        "attainable_flop_per_s": None if intensity is None else attainable(intensity, peak_v, bw),
        "roof_time_s": placed.t_roof_s,
        "peak_flop_per_s": peak_v,
        "bandwidth_byte_per_s": bw,
    }
    if time_s:
        result["achieved_flop_per_s"] = flops / time_s
        result["percent_of_roof"] = placed.percent_of_roof
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


def _text(result: dict[str, Any]) -> str:
    rows = [
        ("device", result["device"]),
        ("precision / tier", f"{result['precision']} / {result['tier']}"),
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
DeviceOpt = Annotated[str | None, typer.Option(help="Catalog device or a name tools print.")]
PrecisionOpt = Annotated[
    str,
    typer.Option(
        help="fp64, fp32, fp16 (vector peaks; fp16 the tensor one on a card without), tf32, "
        "bf16, fp8, int8, fp4 (tensor peaks), or a full name such as tensor_fp16."
    ),
]
TierOpt = Annotated[str, typer.Option(help="Memory tier: dram, l2, l1.")]
TimeOpt = Annotated[float | None, typer.Option("--time", help="Measured time in seconds.")]
PeakOpt = Annotated[float | None, typer.Option(help="Peak FLOP/s (any hardware).")]
BandwidthOpt = Annotated[float | None, typer.Option(help="Bandwidth in B/s (any hardware).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


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
) -> None:
    """Place a kernel on a roofline: intensity, ridge, regime, roof time, percent of roof."""
    result = calculate(
        device=device,
        precision=precision,
        tier=tier,
        flops=flops,
        nbytes=nbytes,
        time_s=time_s,
        peak=peak_flops,
        bandwidth=bandwidth,
    )
    typer.echo(_json(result) if as_json else _text(result))


def devices_command(
    as_json: JsonOpt = False,
) -> None:
    """List the hardware catalog: dense peaks and bandwidths with their sources."""
    specs = list(builtin_catalog().devices.values())
    if as_json:
        typer.echo(json.dumps([s.model_dump() for s in specs], indent=2))
        return
    typer.echo(f"{'device':<16}{'HBM TB/s':>9}{'FP32 TF':>9}{'BF16 TF':>9}{'FP8 TF':>9}  aliases")
    for s in specs:
        p, b = s.peak_flop_per_s, s.bandwidth_byte_per_s
        cells = [b.get("dram"), p.get("fp32"), p.get("tensor_bf16"), p.get("tensor_fp8")]
        text = "".join(f"{c / 1e12:>9.4g}" if c else f"{'-':>9}" for c in cells)
        typer.echo(f"{s.id:<16}{text}  {', '.join(s.aliases[:2])}")


def schema_command() -> None:
    """Print the JSON Schema of RunRecord (roofguard's own JSON format)."""
    typer.echo(json.dumps(run_json_schema(), indent=2))


def register(app: typer.Typer) -> None:
    """Add the commands of this module to ``app``."""
    app.command("roofline")(roofline_command)
    app.command("devices")(devices_command)
    app.command("schema")(schema_command)
