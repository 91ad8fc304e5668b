"""A finding's figures in words and units: ``time 5.10 ms``, ``baseline spread ± 0.4 pts``.

Rules keep their figures under stable keys (``numbers``, the JSON contract); readers get a
label and a unit per key instead. The unit of a comparison's figures (``current``,
``baseline_center``, ...) depends on what was compared: seconds for time-regression, MFU
for a group's MFU, percent of roof otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rules import Finding, one_decimal

Formatter = Callable[[float], str]


def fmt_seconds(value: float) -> str:
    """``0.005098`` -> ``"5.10 ms"`` (three significant digits, the unit that reads best)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(value) >= scale:
            return f"{_three(value / scale)} {unit}"
    return f"{_three(value / 1e-9)} ns"


def _three(value: float) -> str:
    """Three significant digits, trailing zeros kept (``5.10``, ``338``, ``0.340``).

    Beyond a million, and for a value that is not finite (a stored outlier), in exponent form.
    """
    if value == 0:
        return "0"
    if not math.isfinite(value) or abs(value) >= 1e6:
        return f"{value:.3g}"
    digits = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{digits}f}"


def _pct(value: float) -> str:
    return f"{one_decimal(value)}%"


def _pts(value: float) -> str:
    return f"± {one_decimal(value)} pts" if value < 10 else f"± {value:.0f} pts"


def _fraction(value: float) -> str:
    return f"{100 * value:.1f}%"


def _signed(value: float) -> str:
    return f"{100 * value:+.1f}%".replace("-", "−")


def _share(value: float) -> str:
    """A share of GPU time as the tables show it (``<0.1%`` when too small for one decimal)."""
    return "<0.1%" if 0 < value < 0.001 else _fraction(value)


def _level_since(value: float) -> str:
    """Where the level starts: the first baseline run, or the run after the last change."""
    return (
        "the first baseline run (no change since)"
        if value == 0
        else f"baseline run {value + 1:,.0f}"
    )


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _times(value: float) -> str:
    return f"{value:.2f}×"


def _plain(value: float) -> str:
    return f"{value:.3g}"


#: Fixed figures: key -> (label, formatter of a number).
LABELS: dict[str, tuple[str, Formatter]] = {
    "percent_of_roof": ("percent of roof", _pct),
    "percent_of_baseline_roof": ("percent of the baseline's roof", _pct),
    "baseline_percent_of_roof": ("baseline percent of roof", _pct),
    "time_s": ("time", fmt_seconds),
    "baseline_time_s": ("baseline time", fmt_seconds),
    "last_time_s": ("last time", fmt_seconds),
    "t_roof_s": ("roof time (speed of light)", fmt_seconds),
    "t_compute_s": ("compute time at peak", fmt_seconds),
    "t_memory_s": ("memory time at bandwidth", fmt_seconds),
    "time_share": ("share of GPU time", _share),
    # the gate's figures (``rules.figures.GateFigures``), in words
    "segment_start": ("level measured since", _level_since),
    "run": ("measurements beyond noise in a row", _count),
    "confirm_runs": ("measurements needed to confirm a change", _count),
    "relative_change": ("change", _signed),
    "min_effect": ("smallest change that counts", _fraction),
    "z": ("robust z", lambda v: f"{v:.1f}".replace("-", "−")),  # the sign "change" uses
    "z_threshold": ("z threshold", lambda v: f"{v:.1f}"),
    "baseline_n": ("baseline runs", _count),
    "baseline_runs": ("baseline runs", _count),
    "current_samples": ("samples this run", _count),
    # across a device change (device-scaling)
    "expected_time_ratio": ("time ratio the roofs predict", _times),
    "time_ratio": ("time ratio measured", _times),
    "tolerance": ("fall that counts", _fraction),
    "baseline_roof_time_s": ("roof time on the baseline's card", fmt_seconds),
    "expected_roof_time_s": ("roof time of that work here", fmt_seconds),
    # a move shared by many kernels of the run (``rules.runnerwide``)
    "kernels_moved": ("kernels beyond noise on that side", _count),
    "kernels_judged": ("kernels judged", _count),
    "share_moved": ("share of the judged kernels", _fraction),
    "median_relative_change": ("their median change", _signed),
    "kernels_beyond": ("kernels beyond that move", _count),
    "worst_beyond_change": ("its change", _signed),
    # a kernel's work moved (``work-change``)
    "flops": ("FLOPs", _plain),
    "baseline_flops": ("baseline FLOPs", _plain),
    "work_ratio": ("work ratio", _times),
    # kernels that left the roof at once (``lost-counters``)
    "kernels_lost": ("kernels off the roof", _count),
    # a kernel too young for the gate, far worse than its nights (``early-slowdown``)
    "gate_min_runs": ("baseline runs the gate needs", _count),
    "times_worse": ("times worse than every baseline run", _times),
    "min_ratio": ("times worse that counts", _times),
    # a new kernel doing a vanished one's work (``rules.renames``)
    "renamed_baseline_percent_of_roof": ("percent of roof of the likely old name", _pct),
    "renamed_baseline_time_s": ("time of the likely old name", fmt_seconds),
}
TEXT_LABELS = {
    "regime": "regime",
    "binding": "binding",
    "baseline_binding": "baseline binding",
    "baseline_device": "baseline device",
    "expected_binding": "binding of that work here",
    "baseline_regime": "baseline regime",
    "method": "method",
    "measure": "measure",
    "last_commit": "last seen at commit",
    "likely_rename_of": "likely a rename of",
    "likely_renamed_to": "likely renamed to",
    "worst_beyond_kernel": "the worst beyond that move",
    "error": "error",
}
#: Comparison figures, whose unit depends on the compared measure.
COMPARED = {
    "current": "now",
    "level": "level",
    "baseline_center": "baseline median",
    "baseline_spread": "baseline spread",
    "noise_used": "noise used",
    "worst_night": "worst baseline run",
    "best_night": "best baseline run",
}


def _compared_unit(finding: Finding) -> tuple[Formatter, Formatter]:
    """(value, spread) formatters of a finding's comparison figures."""
    if finding.rule == "time-regression" or finding.measure == "time_s":
        return fmt_seconds, lambda v: f"± {fmt_seconds(v)}"
    if finding.measure == "mfu":
        return _fraction, lambda v: f"± {100 * v:.2f} pts"
    return _pct, _pts


#: Words for the measure a comparison judged (``numbers["measure"]``).
MEASURES = {"percent_of_roof": "percent of roof", "mfu": "MFU", "time_s": "time"}


def _text(key: str, value: str) -> tuple[str, str]:
    label = TEXT_LABELS.get(key, key.replace("_", " "))
    if key == "measure":
        return label, MEASURES.get(value, value)
    return label, value[:12] if key == "last_commit" else value


def figure(finding: Finding, key: str, value: float | str | None) -> tuple[str, str]:
    """(label, value in its unit) of one figure of ``finding`` (labels are plain text)."""
    if value is None:
        return LABELS.get(key, (key.replace("_", " "), _plain))[0], "—"
    if isinstance(value, str):
        return _text(key, value)
    if not math.isfinite(value):
        return key.replace("_", " "), str(value)
    if key.startswith("intensity_"):
        return f"intensity ({key.removeprefix('intensity_')})", f"{value:.3g} FLOP/B"
    if key in COMPARED:
        value_fmt, spread_fmt = _compared_unit(finding)
        spread = key in {"baseline_spread", "noise_used"}
        return COMPARED[key], (spread_fmt if spread else value_fmt)(value)
    label, fmt = LABELS.get(key, (key.replace("_", " "), _plain))
    binding = finding.numbers.get("binding")
    if key == "percent_of_roof" and isinstance(binding, str):
        # Beside "now" (against the baseline's roof) a bare "percent of roof" contradicted it.
        label = f"percent of the {binding} roof"
    return label, fmt(value)


def figures(finding: Finding) -> list[tuple[str, str]]:
    """Every figure of ``finding`` in words and units, in the rule's order."""
    return [figure(finding, key, value) for key, value in finding.numbers.items()]


def _shared(value: float, scale: float) -> str:
    scaled = value / scale
    if not math.isfinite(scaled) or scaled >= 1e6:
        return f"{scaled:.3g}"
    return f"{scaled:.2f}" if scaled < 10 else f"{scaled:.1f}" if scaled < 100 else f"{scaled:.0f}"


def fmt_ratio(ratio: float) -> str:
    """``15.06`` -> ``"15.1×"``, ``1.0`` -> ``"1.00×"``, ``0.00056`` -> ``"0.00056×"``."""
    if not math.isfinite(ratio) or ratio >= 1e6 or 0 < ratio < 0.01:
        return f"{ratio:.2g}×" if ratio < 0.01 else f"{ratio:.3g}×"
    return f"{ratio:.1f}×" if ratio >= 10 else f"{ratio:.2f}×"


#: The smaller time, in the larger one's unit, below which each gets its own unit: 7.19 ms
#: and 4 µs read ``7.19 → 0.00 ms`` in one.
SHARED_UNIT_FLOOR = 0.1


def time_change(now: float | None, before: float | None) -> str:
    """``0.34 → 5.10 ms (15.1×)``: both times in one unit (each its own when far apart)."""
    if now is None or not math.isfinite(now):
        return "—"
    if before is None or before <= 0 or not math.isfinite(before):
        return fmt_seconds(now)
    largest = max(now, before)
    unit, scale = next(
        ((u, s) for u, s in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)) if largest >= s),
        ("ns", 1e-9),
    )
    ratio = fmt_ratio(now / before)
    if 0 < min(now, before) / scale < SHARED_UNIT_FLOOR:
        return f"{fmt_seconds(before)} → {fmt_seconds(now)} ({ratio})"
    return f"{_shared(before, scale)} → {_shared(now, scale)} {unit} ({ratio})"


def profile_line(changes: Sequence[str], escape: Callable[..., str]) -> str | None:
    """What the profiler saw move against the baseline run (``Finding.profile``), one line."""
    if not changes:
        return None
    moved = "; ".join(escape(change, limit=200) for change in changes)
    return f"**Profiler, against the baseline run:** {moved}"
