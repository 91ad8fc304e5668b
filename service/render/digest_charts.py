"""Charts for the digest: a trend chart per listed kernel and a roofline per device.

Both are drawn from the history frame (``rules.frames.HISTORY_COLUMNS``), so the digest needs
no other query. Charts are keyed like the digest view's rows (``kernel@device``) and
``roofline:<device>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

import numpy as np
import pandas as pd

from rules.hardware import builtin_catalog
from rules.stats import robust_center_spread
from service.digest.model import Digest, Movement
from service.render.charts import KernelPoint, figure_bytes, roofline_chart, trend_chart

#: Nights before a change that make up the baseline band of its trend chart.
BASELINE_NIGHTS = 14
#: Most kernels per roofline chart (by time share, changed kernels always included).
ROOFLINE_KERNELS = 25


def _listed(digest: Digest, limit: int) -> list[Movement]:
    seen: dict[str, Movement] = {}
    for section in (digest.regressions, digest.improvements, digest.unresolved):
        for m in section[:limit]:
            seen.setdefault(f"{m.kernel}@{m.device}", m)
    return list(seen.values())


def _series(
    history: pd.DataFrame, movements: Iterable[Movement], since: pd.Timestamp
) -> pd.DataFrame:
    recent = history[pd.to_datetime(history["timestamp"], utc=True) >= since]
    pairs = pd.MultiIndex.from_tuples([(m.kernel, m.device) for m in movements])
    keep = pd.MultiIndex.from_frame(recent[["kernel_key", "device"]]).isin(pairs)
    rows = recent.loc[keep & recent["percent_of_roof"].notna().to_numpy()]
    return rows.assign(timestamp=pd.to_datetime(rows["timestamp"], utc=True)).sort_values(
        "timestamp"
    )


def trend_charts(
    history: pd.DataFrame, digest: Digest, *, limit: int = 10, context_days: int = 28
) -> dict[str, bytes]:
    """SVG trend charts of the kernels the digest lists first (``limit`` per section)."""
    movements = _listed(digest, limit)
    if not movements:
        return {}
    oldest = min(min(m.since for m in movements), digest.start) - timedelta(days=context_days)
    rows = _series(history, movements, pd.Timestamp(oldest))
    charts: dict[str, bytes] = {}
    for m in movements:  # one chart per listed kernel, at most a few dozen
        series = rows[(rows["kernel_key"] == m.kernel) & (rows["device"] == m.device)]
        before = series[series["timestamp"] < pd.Timestamp(m.since)].tail(BASELINE_NIGHTS)
        center, spread = robust_center_spread(before["percent_of_roof"].to_numpy())
        band = (center, spread) if len(before) else None
        change = pd.DataFrame({"since": [m.since], "to_commit": [m.to_commit]})
        fig = trend_chart(
            series, title=f"{m.kernel} on {m.device}", change_points=change, baseline=band
        )
        charts[f"{m.kernel}@{m.device}"] = figure_bytes(fig, "svg")
    return charts


def _points(night: pd.DataFrame, baselines: dict[str, tuple[float, float]]) -> list[KernelPoint]:
    flops = night["total_flops"].astype(float)
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
    )
    return [
        KernelPoint(key, float(i), float(a), float(s), binding, baselines.get(key))
        for key, i, a, s, binding in zip(*columns, strict=True)
    ]


def roofline_charts(history: pd.DataFrame, digest: Digest) -> dict[str, bytes]:
    """Per device: the last night's kernels on the datasheet roof, arrows for regressions."""
    frame = history.assign(timestamp=pd.to_datetime(history["timestamp"], utc=True))
    frame = frame[frame["timestamp"] <= pd.Timestamp(digest.end)]
    charts: dict[str, bytes] = {}
    for device in sorted(frame["device"].unique()):  # a handful of devices
        spec = builtin_catalog().find(str(device))
        rows = frame[frame["device"] == device]
        if spec is None or rows.empty:
            continue
        night = rows[rows["run_id"] == rows.loc[rows["timestamp"].idxmax(), "run_id"]]
        changed = {m.kernel: m.from_commit for m in digest.regressions if m.device == device}
        base = rows[rows["kernel_key"].isin(changed) & rows["commit"].isin(changed.values())]
        base = base[base["commit"] == base["kernel_key"].map(changed)]
        baselines = {p.name: (p.intensity, p.achieved_flop_per_s) for p in _points(base, {})}
        night = night.sort_values("time_s", ascending=False)
        night = night[
            night["kernel_key"].isin(changed) | (np.arange(len(night)) < ROOFLINE_KERNELS)
        ]
        fig = roofline_chart(spec.roof(), _points(night, baselines), title=f"{device}: last night")
        charts[f"roofline:{device}"] = figure_bytes(fig, "svg")
    return charts
