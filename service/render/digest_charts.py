"""Charts for the digest: a trend chart per listed kernel and a roofline per device.

Both are drawn from the history frame (``rules.frames.HISTORY_COLUMNS``), so the digest needs
no other query. Charts are keyed like the digest view's rows (``kernel@device``) and
``roofline:<device>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd

from rules import Roof, builtin_catalog, precision_of_peak
from service.digest.model import Digest, Movement, TimeMovement
from service.render.chart_bytes import figure_bytes
from service.render.charts import KernelPoint, roofline_chart
from service.render.kernel_trend import baseline_band
from service.render.trends import trend_chart, with_runner_marks

#: Trend charts drawn per section of the digest (its first entries).
TRENDS_PER_SECTION = 10
#: A chart to draw: a module-level function and its arguments, which pickle (so a worker
#: process can draw it; ``service.digest.workers``).
ChartJob = tuple[Callable[..., bytes], tuple[Any, ...]]
#: Most kernels per roofline chart (by time share, changed kernels always included).
ROOFLINE_KERNELS = 25


def _listed(digest: Digest, limit: int) -> list[Movement]:
    seen: dict[str, Movement] = {}
    for section in (digest.regressions, digest.improvements, digest.unresolved):
        for m in section[:limit]:
            seen.setdefault(f"{m.kernel}@{m.device}", m)
    return list(seen.values())


def _series(
    history: pd.DataFrame,
    movements: Iterable[Movement | TimeMovement],
    since: pd.Timestamp,
    metric: str = "percent_of_roof",
) -> pd.DataFrame:
    recent = history[pd.to_datetime(history["timestamp"], utc=True) >= since]
    pairs = pd.MultiIndex.from_tuples([(m.kernel, m.device) for m in movements])
    keep = pd.MultiIndex.from_frame(recent[["kernel_key", "device"]]).isin(pairs)
    rows = recent.loc[keep & recent[metric].notna().to_numpy()]
    return rows.assign(timestamp=pd.to_datetime(rows["timestamp"], utc=True)).sort_values(
        "timestamp"
    )


def _window_start(
    movements: Sequence[Movement | TimeMovement], digest: Digest, context: timedelta
) -> pd.Timestamp:
    """The first instant any of the movements' charts draws."""
    return pd.Timestamp(min(min(m.since for m in movements), digest.start) - context)


def _own_rows(
    rows: pd.DataFrame, m: Movement | TimeMovement, digest: Digest, context: timedelta
) -> pd.DataFrame:
    """The rows of ``m``'s chart: its series from ``context`` before its change or the period.

    The window starts ``context`` before the earlier of the two. Each chart has its own: when
    all started at the oldest listed change, a regression of this week listed beside one two
    years old was a sliver at the right of two years of nights.
    """
    series = rows[(rows["kernel_key"] == m.kernel) & (rows["device"] == m.device)]
    start = _window_start([m], digest, context)
    return series[series["timestamp"] >= start]


def draw_charts(jobs: Mapping[str, ChartJob]) -> dict[str, bytes]:
    """Each chart drawn here, in the jobs' order."""
    return {key: call(*args) for key, (call, args) in jobs.items()}


def trend_charts(
    history: pd.DataFrame,
    digest: Digest,
    *,
    limit: int = TRENDS_PER_SECTION,
    context_days: int = 28,
) -> dict[str, bytes]:
    """SVG trend charts of the kernels the digest lists first (``trend_chart_jobs``)."""
    return draw_charts(trend_chart_jobs(history, digest, limit=limit, context_days=context_days))


def trend_chart_jobs(
    history: pd.DataFrame,
    digest: Digest,
    *,
    limit: int = TRENDS_PER_SECTION,
    context_days: int = 28,
) -> dict[str, ChartJob]:
    """The trend charts of the kernels the digest lists first (``limit`` per section).

    Percent of roof for the movements (``kernel@device``), time for the time regressions
    (``time:kernel@device``); each chart from ``context_days`` before its change or the
    period, whichever is earlier.
    """
    context = timedelta(days=context_days)
    movements = _movement_chart_jobs(history, digest, _listed(digest, limit), context)
    return movements | _time_chart_jobs(history, digest, limit=limit, context=context)


def _movement_chart_jobs(
    history: pd.DataFrame, digest: Digest, movements: list[Movement], context: timedelta
) -> dict[str, ChartJob]:
    if not movements:
        return {}
    rows = _series(history, movements, _window_start(movements, digest, context))
    jobs: dict[str, ChartJob] = {}
    for m in movements:  # one chart per listed kernel, at most a few dozen
        series = _own_rows(rows, m, digest, context)
        before = series[series["timestamp"] < pd.Timestamp(m.since)]["percent_of_roof"]
        band = baseline_band(before) if len(before) else None
        title = f"{m.kernel} on {m.device}"
        jobs[f"{m.kernel}@{m.device}"] = (_trend_svg, (series, title, _change(m), band))
    return jobs


def _change(m: Movement | TimeMovement) -> pd.DataFrame:
    return pd.DataFrame({"since": [m.since], "to_commit": [m.to_commit]})


def _trend_svg(
    series: pd.DataFrame,
    title: str,
    change: pd.DataFrame,
    band: tuple[float, float] | None,
    metric: str = "percent_of_roof",
) -> bytes:
    fig = trend_chart(series, title=title, change_points=change, baseline=band, metric=metric)
    if "runner" in series:  # the digest's chart rows carry it (``chartread``)
        fig = with_runner_marks(fig, series["runner"], series["timestamp"])
    return figure_bytes(fig, "svg")


def _time_chart_jobs(
    history: pd.DataFrame, digest: Digest, *, limit: int, context: timedelta
) -> dict[str, ChartJob]:
    """Charts of time for the first time regressions, keyed ``time:kernel@device``."""
    listed = digest.time_regressions[:limit]
    if not listed:
        return {}
    rows = _series(history, listed, _window_start(listed, digest, context), metric="time_s")
    jobs: dict[str, ChartJob] = {}
    for t in listed:
        series = _own_rows(rows, t, digest, context)
        title = f"{t.kernel} on {t.device}: time"
        jobs[f"time:{t.kernel}@{t.device}"] = (
            _trend_svg,
            (series, title, _change(t), None, "time_s"),
        )
    return jobs


def chart_precision(roof: Roof, binding: object, flops: float, peak_time: float) -> str | None:
    """The precision whose roof a kernel is drawn against.

    Its binding when that is a precision, else the precision of its effective peak
    (``sum F / sum F_p / P_p``), so a memory-bound bf16 GEMM brings the bf16 roof onto the chart.
    """
    if isinstance(binding, str) and binding in roof.peak_flop_per_s:
        return binding
    if flops > 0 and peak_time > 0:
        return precision_of_peak(roof.peak_flop_per_s, flops / peak_time)
    return None


def _points(
    night: pd.DataFrame, baselines: dict[str, tuple[float, float]], roof: Roof
) -> list[KernelPoint]:
    flops = night["total_flops"].astype(float)
    peak_time = pd.to_numeric(night["peak_flop_time_s"], errors="coerce").fillna(0.0)
    intensity = flops / night["bytes_dram"].astype(float)
    achieved = flops / night["time_s"].astype(float)
    share = night["time_s"] / night["time_s"].sum()
    ok = np.isfinite(intensity) & (intensity > 0) & np.isfinite(achieved) & (achieved > 0)
    columns = (
        night["kernel_key"][ok],
        intensity[ok],
        achieved[ok],
        share[ok],
        night["binding"][ok],
        flops[ok],
        peak_time[ok],
    )
    return [
        KernelPoint(
            key,
            float(i),
            float(a),
            float(s),
            chart_precision(roof, binding, float(f), float(p)),
            baselines.get(key),
        )
        for key, i, a, s, binding, f, p in zip(*columns, strict=True)
    ] + _no_flop_points(night, share)


def _no_flop_points(night: pd.DataFrame, share: pd.Series) -> list[KernelPoint]:
    """Copies and memsets: their percent of roof is their percent of the bandwidth roof."""
    percent = pd.to_numeric(night["percent_of_roof"], errors="coerce")
    flops = night["total_flops"].astype(float)
    ok = (flops == 0) & (night["time_s"].astype(float) > 0) & np.isfinite(percent)
    return [
        KernelPoint(key, 0.0, 0.0, float(s), bandwidth_percent=float(p))
        for key, s, p in zip(night["kernel_key"][ok], share[ok], percent[ok], strict=True)
    ]


def roofline_charts(history: pd.DataFrame, digest: Digest) -> dict[str, bytes]:
    """SVG rooflines of the digest's devices (``roofline_chart_jobs``)."""
    return draw_charts(roofline_chart_jobs(history, digest))


def roofline_chart_jobs(history: pd.DataFrame, digest: Digest) -> dict[str, ChartJob]:
    """Per device: the last night's kernels on the datasheet roof, arrows for regressions.

    Every precision the kernels bind to (or run at, when memory-bound) gets its roof.
    """
    frame = history.assign(timestamp=pd.to_datetime(history["timestamp"], utc=True))
    frame = frame[frame["timestamp"] <= pd.Timestamp(digest.end)]
    jobs: dict[str, ChartJob] = {}
    for device in sorted(frame["device"].unique()):  # a handful of devices
        spec = builtin_catalog().find(str(device))
        rows = frame[frame["device"] == device]
        if spec is None or rows.empty:
            continue
        roof = spec.roof()
        points = _last_night_points(rows, digest, str(device), roof)
        jobs[f"roofline:{device}"] = (_roofline_svg, (roof, points, f"{device}: last night"))
    return jobs


def _last_night_points(
    rows: pd.DataFrame, digest: Digest, device: str, roof: Roof
) -> list[KernelPoint]:
    """The device's last night: its longest kernels and every regression, with baselines."""
    night = rows[rows["run_id"] == rows["run_id"].iloc[rows["timestamp"].argmax()]]
    changed = {m.kernel: m.from_commit for m in digest.regressions if m.device == device}
    base = rows[rows["kernel_key"].isin(changed) & rows["commit"].isin(changed.values())]
    base = base[base["commit"] == base["kernel_key"].map(changed)]
    baselines = {
        p.name: (p.intensity, p.achieved_flop_per_s) for p in _points(base, {}, roof) if p.on_roof
    }
    night = night.sort_values("time_s", ascending=False)
    night = night[night["kernel_key"].isin(changed) | (np.arange(len(night)) < ROOFLINE_KERNELS)]
    return _points(night, baselines, roof)


def _roofline_svg(roof: Roof, points: list[KernelPoint], title: str) -> bytes:
    return figure_bytes(roofline_chart(roof, points, title=title), "svg")
