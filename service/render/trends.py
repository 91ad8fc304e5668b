"""The per-kernel trend chart: percent of roof (like for like) or time over the nightly runs.

Artists carry a ``gid`` a reader (or a test) can find: ``series`` for the nightly line,
``other-runs`` for PR and local runs, ``change:<i>`` for change points, ``binding:<i>`` for
binding changes (a GEMM that fell off the tensor cores: ``tensor_bf16 → fp32``),
``baseline-band`` / ``baseline-median`` for the baseline, ``mode-low`` / ``mode-high`` for
a two-level kernel's modes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from rules import binding_changes, held_changes
from rules.stats import Modes
from service.render.labels import fit_title
from service.render.trend_parts import draw_modes

#: Runner changes a trend marks; more is a pool's rotation, not a swap.
RUNNER_MARKS = 3
#: What a trend chart can show: column, axis label, and the scale of the unit that reads best.
TREND_METRICS = ("percent_of_roof", "time_s")


def _trend_values(series: pd.DataFrame, metric: str) -> tuple[pd.Series, str, float]:
    """The values of ``metric``, and the unit and scale they are drawn in."""
    if metric not in TREND_METRICS:
        raise ValueError(f"metric must be one of {TREND_METRICS}, not {metric!r}")
    values = pd.to_numeric(series[metric], errors="coerce")
    unit, scale = _time_unit(values) if metric == "time_s" else ("%", 1.0)
    return values, unit, scale


def _time_unit(values: pd.Series) -> tuple[str, float]:
    typical = float(values.abs().median()) if len(values) else 1.0
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if typical >= scale:
            return unit, scale
    return "ns", 1e-9


def trend_chart(
    series: pd.DataFrame,
    *,
    title: str,
    change_points: pd.DataFrame | None = None,
    baseline: tuple[float, float] | None = None,
    metric: str = "percent_of_roof",
    bindings: pd.DataFrame | None = None,
    reference: str | None = None,
    modes: Modes | None = None,
) -> Figure:
    """Percent of roof (or time) over time for one kernel on one device.

    Only nightly runs make the line: when ``series`` has a ``kind`` column, PR and local runs
    are drawn apart as open markers (gid ``other-runs``), so one PR does not bend the trend.

    Args:
        series: Columns ``timestamp`` and ``metric`` (and ``commit``, ``kind``), oldest first.
        title: Chart title, e.g. the kernel key and device.
        change_points: Columns ``since`` (timestamp of the first night at the new level) and
            ``to_commit``; each is drawn as a vertical line labelled with the short commit.
        baseline: (median, spread) in ``metric``'s unit: the band ``median ± spread`` is shaded.
        metric: ``percent_of_roof`` or ``time_s`` (drawn in ms, µs ... as fits).
        bindings: Binding changes, columns ``since``, ``from_binding``, ``to_binding``; each is a
            vertical line labelled ``tensor_bf16 → fp32``. By default ``rules.binding_changes``
            of the nightly rows when ``series`` has a ``binding`` column.
        reference: The binding percent of roof is measured against (like for like), for the
            axis label; by default the ``reference_binding`` column's (``rules``).
        modes: A two-level kernel's modes (``rules.two_modes``), in ``metric``'s unit: each
            mode's band is shaded (gids ``mode-low``, ``mode-high``).
    """
    values, unit, scale = _trend_values(series, metric)
    fig = Figure(figsize=(8, 3.2), layout="constrained")
    ax = fig.add_subplot()
    times = pd.to_datetime(series["timestamp"], utc=True).dt.tz_localize(None)
    nightly = (series["kind"] == "nightly").to_numpy() if "kind" in series else None
    _draw_series(ax, times, values / scale, nightly)
    if baseline is not None:
        median, spread = baseline[0] / scale, baseline[1] / scale
        band = ax.axhspan(median - spread, median + spread, color="#2ca02c", alpha=0.15)
        band.set_gid("baseline-band")
        ax.axhline(median, color="#2ca02c", linewidth=0.8).set_gid("baseline-median")
    if modes is not None:
        draw_modes(ax, modes, scale)
    if change_points is not None:
        _draw_changes(ax, change_points)
    _draw_binding_changes(ax, _binding_changes(series, bindings))
    reference = reference or _reference(series)
    ax.set_ylabel(_axis_label(metric, unit, reference), parse_math=False)
    fit_title(ax, title)
    ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    return fig


def _draw_series(
    ax: Axes, times: pd.Series, values: pd.Series, nightly: npt.NDArray[np.bool_] | None
) -> None:
    """The nightly line, and other runs (PRs) as open markers off it."""
    on_line = nightly if nightly is not None else np.ones(len(values), dtype=bool)
    (line,) = ax.plot(times[on_line], values[on_line], "-o", markersize=2.5, linewidth=1.2)
    line.set_gid("series")
    if nightly is None or nightly.all():
        return
    others = ax.scatter(
        times[~nightly],
        values[~nightly],
        marker="D",
        facecolors="none",
        edgecolors="#ff7f0e",
        label="PR / local runs",
        zorder=3,
    )
    others.set_gid("other-runs")
    ax.legend(loc="best", fontsize="small")


def _draw_changes(ax: Axes, changes: pd.DataFrame) -> None:
    """A dashed line per change point, labelled with the first commit at the new level."""
    for i, row in enumerate(changes.itertuples()):  # a few change points per kernel
        style = {"color": "#d62728", "linewidth": 1.0, "linestyle": "--"}
        gids = (f"change:{i}", None)
        label_line(ax, row.since, str(row.to_commit)[:8], gids=gids, top=True, **style)


def _binding_changes(series: pd.DataFrame, given: pd.DataFrame | None) -> pd.DataFrame | None:
    if given is not None or "binding" not in series:
        return given
    nightly = series[series["kind"] == "nightly"] if "kind" in series else series
    return binding_changes(nightly)


def _reference(series: pd.DataFrame) -> str | None:
    column = "reference_binding"  # rules.like_for_like_history's
    if column not in series:
        return None
    known = series[column].dropna()
    return str(known.iloc[-1]) if len(known) else None


def _axis_label(metric: str, unit: str, reference: str | None) -> str:
    if metric != "percent_of_roof":
        return f"time ({unit})"
    return f"% of {reference} roof" if reference else "% of roof"


def _draw_binding_changes(ax: Axes, changes: pd.DataFrame | None) -> None:
    """A solid line per binding change, labelled ``from → to`` (the roof the kernel left)."""
    if changes is None:
        return
    for i, row in enumerate(changes.itertuples()):  # a few binding changes per kernel
        label = f"{row.from_binding} → {row.to_binding}"
        gids = (f"binding:{i}", f"binding-label:{i}")
        label_line(ax, row.since, label, gids=gids, top=False, color="#9467bd", linewidth=1.4)


def runner_changes(runners: pd.Series, stamps: pd.Series) -> pd.DataFrame | None:
    """The nights a runner took over a series and held it (``rules.held_changes``).

    ``runners``: each run's, by row (missing where a run names none); ``stamps``: its time.
    Columns ``since``, ``from_runner``, ``to_runner``, as ``mark_runner_changes`` takes them.
    None for one runner, or for a pool's rotation (more than ``RUNNER_MARKS`` changes): there
    is no swap to mark.
    """
    named = runners.dropna()
    changes = held_changes(named, stamps.loc[named.index])
    if not changes or len(changes) > RUNNER_MARKS:
        return None
    return pd.DataFrame(changes, columns=["since", "from_runner", "to_runner"])


def with_runner_marks(figure: Figure, runners: pd.Series, stamps: pd.Series) -> Figure:
    """``figure`` with the nights a runner took over marked (``runner_changes``), if any.

    ``runners``: each point's runner, by row (missing where its run names none).
    """
    swaps = runner_changes(runners, stamps)
    return figure if swaps is None else mark_runner_changes(figure, swaps)


def mark_runner_changes(figure: Figure, changes: pd.DataFrame) -> Figure:
    """``figure`` (a ``trend_chart``) with a dotted line per runner change, ``runner r1 → r2``.

    ``changes``: columns ``since``, ``from_runner``, ``to_runner`` (gids ``runner:<i>``). A
    step on the night a runner took over is the card's, not the code's.
    """
    ax = figure.axes[0]
    for i, row in enumerate(changes.itertuples()):  # a swap or two per kernel
        label = f"runner {row.from_runner} → {row.to_runner}"
        gids = (f"runner:{i}", f"runner-label:{i}")
        style = {"color": "#7f7f7f", "linewidth": 1.0, "linestyle": ":"}
        label_line(ax, row.since, label, gids=gids, top=False, **style)
    return figure


def label_line(
    ax: Axes,
    since: object,
    label: str,
    *,
    gids: tuple[str, str | None],
    top: bool,
    **line: object,
) -> None:
    """A vertical line at ``since`` with ``label`` along it, at the top or the bottom.

    ``gids``: the line's and the label's (None: the label has none).
    """
    when = _naive_utc(since)
    ax.axvline(when, **line).set_gid(gids[0])  # type: ignore[arg-type]  # dates take Timestamps
    text = ax.annotate(
        label,
        xy=(when, 1.0 if top else 0.02),
        xycoords=("data", "axes fraction"),
        rotation=90,
        fontsize=7,
        color=None if top else line.get("color"),
        va="top" if top else "bottom",
        ha="right",
        parse_math=False,
    )
    text.set_gid(gids[1])


def _naive_utc(value: object) -> pd.Timestamp:
    stamp = pd.Timestamp(value)  # type: ignore[arg-type]
    return stamp.tz_convert(None) if stamp.tzinfo is not None else stamp
