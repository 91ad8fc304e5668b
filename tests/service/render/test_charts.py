"""The charts draw the right data: roof vertices, kernel coordinates, arrows, labels, trends."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from rules.roofline import Roof, place
from rules.stats import two_modes
from service.render.chart_bytes import figure_bytes
from service.render.charts import KernelPoint, roofline_chart
from service.render.labels import label_box
from service.render.trend_parts import alternating_modes
from service.render.trends import trend_chart

ROOF = Roof(
    "H100-SXM5",
    "datasheet",
    {"fp32": 67e12, "tensor_bf16": 989e12, "fp64": 34e12},
    {"dram": 3.35e12, "l2": 12e12},
)


def _gid(ax, gid):
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, f"expected one artist {gid!r}, found {len(found)}"
    return found[0]


def _gids(ax, prefix):
    return sorted(a.get_gid() for a in ax.get_children() if (a.get_gid() or "").startswith(prefix))


@pytest.fixture
def gemv_points():
    current = place({"fp32": 2e9}, {"dram": 4e9, "l2": 8e9}, 2e-3, ROOF)
    baseline = place({"fp32": 2e9}, {"dram": 3e9, "l2": 8e9}, 1.5e-3, ROOF)
    gemv = KernelPoint.from_placement("gemv", current, time_share=0.6, baseline=baseline)
    assert gemv is not None
    gemm = KernelPoint("gemm_bf16", 120.0, 4e14, 0.4, "tensor_bf16")
    return [gemv, gemm]


def test_roofs_only_for_used_precisions_with_exact_vertices(gemv_points):
    ax = roofline_chart(ROOF, gemv_points).axes[0]
    assert _gids(ax, "roof:") == [
        "roof:fp32:dram",
        "roof:fp32:l2",
        "roof:tensor_bf16:dram",
        "roof:tensor_bf16:l2",
    ]  # fmt: skip  (no fp64: unused)
    lo, hi = ax.get_xlim()
    xy = _gid(ax, "roof:fp32:dram").get_xydata()
    ridge = 67e12 / 3.35e12
    np.testing.assert_allclose(xy, [[lo, lo * 3.35e12], [ridge, 67e12], [hi, 67e12]])
    marker = _gid(ax, "ridge:tensor_bf16:l2").get_xydata()
    np.testing.assert_allclose(marker, [[989e12 / 12e12, 989e12]])
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_kernel_points_sit_at_intensity_and_achieved_flops(gemv_points):
    ax = roofline_chart(ROOF, gemv_points).axes[0]
    scatter = _gid(ax, "kernels")
    # gemv: 2e9 FLOP over 4e9 DRAM bytes in 2 ms -> I = 0.5, 1e12 FLOP/s.
    np.testing.assert_allclose(scatter.get_offsets(), [[0.5, 1e12], [120.0, 4e14]])
    sizes = scatter.get_sizes()
    assert sizes[0] > sizes[1], "the kernel with the larger time share gets the larger marker"


def test_arrow_runs_from_baseline_to_current(gemv_points):
    ax = roofline_chart(ROOF, gemv_points).axes[0]
    arrow = _gid(ax, "arrow:gemv")
    np.testing.assert_allclose(arrow.xy, (0.5, 1e12))
    np.testing.assert_allclose(arrow.xyann, (2e9 / 3e9, 2e9 / 1.5e-3))
    assert _gids(ax, "arrow:") == ["arrow:gemv"], "no arrow for kernels without a baseline"


def test_labels_of_crowded_points_do_not_overlap():
    kernels = [
        KernelPoint(f"kernel_{i}", 10.0 * (1 + 0.02 * i), 1e13 * (1 + 0.03 * i), 0.1, "fp32")
        for i in range(8)
    ]
    fig = roofline_chart(ROOF, kernels)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if (t.get_gid() or "").startswith("label:")]
    assert len(labels) == 8
    boxes = []
    for text in labels:
        anchor = ax.transData.transform(text.xy) * 72.0 / fig.dpi
        boxes.append(label_box(anchor, text.xyann, text.get_text(), text.get_fontsize()))
    for a, b in itertools.combinations(boxes, 2):
        apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
        assert apart, f"labels overlap: {a} {b}"


def test_trend_chart_data_change_points_and_band():
    stamps = pd.date_range("2026-01-01", periods=20, freq="D", tz="UTC")
    values = [80.0] * 10 + [70.0] * 10
    series = pd.DataFrame(
        {"timestamp": stamps, "percent_of_roof": values, "commit": [f"c{i:02d}" for i in range(20)]}
    )
    changes = pd.DataFrame({"since": [stamps[10]], "to_commit": ["c10abcdef123"]})
    ax = trend_chart(series, title="gemv", change_points=changes, baseline=(80.0, 1.5)).axes[0]
    line = _gid(ax, "series")
    np.testing.assert_allclose(line.get_ydata(), values)
    assert pd.Timestamp(line.get_xdata()[10]) == stamps[10].tz_localize(None)
    change = _gid(ax, "change:0")
    assert pd.Timestamp(change.get_xdata()[0]) == stamps[10].tz_localize(None)
    band = _gid(ax, "baseline-band").get_extents()  # pixel box; check through the data transform
    y0, y1 = ax.transData.inverted().transform([[0, band.y0], [0, band.y1]])[:, 1]
    np.testing.assert_allclose([y0, y1], [78.5, 81.5], rtol=1e-6)
    assert "c10abcde" in [t.get_text() for t in ax.texts]


def test_figure_bytes_svg_and_png(gemv_points):
    fig = roofline_chart(ROOF, gemv_points)
    svg = figure_bytes(fig, "svg")
    assert svg.lstrip().startswith(b"<?xml") and b"<svg" in svg and b"gemv" in svg
    assert figure_bytes(fig, "svg") == svg, "SVG output is deterministic"
    assert figure_bytes(fig, "png").startswith(b"\x89PNG\r\n\x1a\n")


def test_kernel_without_bytes_is_not_drawn():
    placed = place({"fp32": 1e9}, {}, 1e-3, ROOF)
    assert KernelPoint.from_placement("nobytes", placed) is None


def test_trend_chart_keeps_pr_runs_off_the_nightly_line_and_draws_time():
    stamps = pd.date_range("2026-01-01", periods=6, freq="D", tz="UTC")
    series = pd.DataFrame(
        {
            "timestamp": stamps,
            "time_s": [1e-3, 1e-3, 9e-3, 1e-3, 1e-3, 1e-3],  # night 2 is a PR run
            "percent_of_roof": [80.0] * 6,
            "kind": ["nightly", "nightly", "pr", "nightly", "nightly", "nightly"],
        }
    )
    ax = trend_chart(series, title="gemv", metric="time_s").axes[0]
    np.testing.assert_allclose(_gid(ax, "series").get_ydata(), [1.0] * 5)  # in ms
    others = _gid(ax, "other-runs").get_offsets()
    np.testing.assert_allclose(np.asarray(others)[:, 1], [9.0])
    assert ax.get_ylabel() == "time (ms)"
    with pytest.raises(ValueError, match="metric"):
        trend_chart(series, title="gemv", metric="flops")


def test_trend_chart_marks_a_binding_change_and_names_the_roof():
    stamps = pd.date_range("2026-01-01", periods=8, freq="D", tz="UTC")
    series = pd.DataFrame(
        {
            "timestamp": stamps,
            "percent_of_roof": [70.0] * 5 + [4.7] * 3,
            "binding": ["tensor_bf16"] * 5 + ["fp32"] * 3,
            "reference_binding": ["tensor_bf16"] * 8,
            "kind": ["nightly"] * 8,
        }
    )
    ax = trend_chart(series, title="gemm").axes[0]
    np.testing.assert_allclose(_gid(ax, "series").get_ydata(), [70.0] * 5 + [4.7] * 3)
    marker = _gid(ax, "binding:0")
    assert pd.Timestamp(marker.get_xdata()[0]) == stamps[5].tz_localize(None)
    assert _gid(ax, "binding-label:0").get_text() == "tensor_bf16 → fp32"
    assert ax.get_ylabel() == "% of tensor_bf16 roof"
    steady = trend_chart(series.assign(binding="tensor_bf16"), title="gemm").axes[0]
    assert _gids(steady, "binding") == []


def test_trend_chart_shades_a_two_level_kernels_modes():
    stays = [0] * 6 + [1] * 5 + [0] * 7 + [1] * 4 + [0] * 6 + [1] * 5 + [0] * 8
    rng = np.random.default_rng(3)
    values = np.where(np.array(stays) == 1, 62.0, 71.0) * (1 + 0.01 * rng.standard_normal(41))
    stamps = pd.date_range("2026-01-01", periods=41, freq="D", tz="UTC")
    series = pd.DataFrame({"timestamp": stamps, "percent_of_roof": values})
    modes = two_modes(values)
    assert modes is not None
    ax = trend_chart(series, title="gemv", modes=modes).axes[0]
    for name, level in (("low", 62.0), ("high", 71.0)):
        band = _gid(ax, f"mode-{name}").get_extents()
        y0, y1 = ax.transData.inverted().transform([[0, band.y0], [0, band.y1]])[:, 1]
        assert y0 < level < y1
    assert two_modes(np.full(41, 70.0)) is None  # one level: nothing to shade
    assert alternating_modes(values) == modes


def test_a_regression_and_its_fix_are_no_modes_to_shade():
    """85% for 19 nights, 64% for 4, 85% again: a change and its fix, not two clock states."""
    rng = np.random.default_rng(5)
    levels = np.array([85.0] * 19 + [64.0] * 4 + [85.0] * 12)
    values = levels * (1 + 0.005 * rng.standard_normal(levels.size))
    assert two_modes(values) is not None  # the gate's mixture reads one visit as two modes
    assert alternating_modes(values) is None
    again = np.concatenate([values, [64.1, 63.9, 64.3, 85.2, 84.9, 85.1]])
    assert alternating_modes(again) is not None  # the low level visited twice
