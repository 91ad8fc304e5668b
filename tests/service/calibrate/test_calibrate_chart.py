"""The measured-roofline chart: the plotted data sit where the ceilings say."""

from __future__ import annotations

import numpy as np
import pytest
from calibrate_factories import make_ceilings, make_points
from matplotlib.collections import PathCollection
from matplotlib.lines import Line2D

from rules.hardware import builtin_catalog
from service.calibrate.chart import roofline_figure, save_chart
from service.errors import BadInput

W, P = 3.0e12, 50e12
CEILINGS = make_ceilings(
    bandwidth={"dram": W},
    peaks={"fp32": P, "tensor_bf16": 700e12},
    sweep=make_points(W, P, factors={1: 0.8, 512: 0.9}),
)
SHEET = builtin_catalog().lookup("H100-SXM5").roof()


def _artist(fig, gid, kind):
    found = [a for a in fig.axes[0].get_children() if isinstance(a, kind) and a.get_gid() == gid]
    assert len(found) == 1, f"no single {kind.__name__} with gid {gid!r}"
    return found[0]


def test_sweep_points_are_plotted_at_their_intensity_and_rate():
    fig = roofline_figure(CEILINGS, SHEET)
    offsets = _artist(fig, "sweep", PathCollection).get_offsets()
    expected = [(p.intensity_flop_per_byte, p.flop_per_s) for p in CEILINGS.sweep]
    np.testing.assert_allclose(np.asarray(offsets), expected, rtol=1e-12)
    assert offsets[0][1] == pytest.approx(0.8 * 0.25 * W)  # K=1 on the slope, 20 % below


def test_measured_roof_is_min_of_peak_and_slope_per_precision():
    fig = roofline_figure(CEILINGS, SHEET)
    for precision, peak in CEILINGS.peak_flop_per_s.items():
        line = _artist(fig, f"measured {precision}", Line2D)
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        np.testing.assert_allclose(y, np.minimum(peak, x * W), rtol=1e-12)
        assert x.min() < 0.25 and x.max() > 256  # spans the sweep (K=1 .. 1024)
        assert y.max() == pytest.approx(peak)


def test_datasheet_roof_lies_above_the_measured_one():
    fig = roofline_figure(CEILINGS, SHEET)
    sheet = _artist(fig, "datasheet fp32", Line2D)
    measured = _artist(fig, "measured fp32", Line2D)
    x = np.asarray(sheet.get_xdata())
    np.testing.assert_allclose(sheet.get_ydata(), np.minimum(66.9e12, x * 3.35e12), rtol=1e-12)
    assert np.all(np.asarray(sheet.get_ydata()) >= np.asarray(measured.get_ydata()))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"


def test_without_a_datasheet_only_the_measured_roof_is_drawn():
    fig = roofline_figure(CEILINGS, None)
    gids = {a.get_gid() for a in fig.axes[0].get_lines()}
    assert gids == {"measured fp32", "measured tensor_bf16"}


def test_svg_and_png_files(tmp_path):
    fig = roofline_figure(CEILINGS, SHEET)
    save_chart(fig, tmp_path / "calib.svg")
    save_chart(fig, tmp_path / "out" / "calib.png")
    svg = (tmp_path / "calib.svg").read_text()
    assert svg.startswith("<?xml") and "<svg" in svg and 'id="sweep"' in svg
    assert (tmp_path / "out" / "calib.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(BadInput, match="--chart"):
        save_chart(fig, tmp_path / "calib.pdf")
