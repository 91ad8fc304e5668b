"""The roofline's log axes label their ticks in plain text, on the ticks matplotlib would label."""

from __future__ import annotations

import re

import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rules.hardware import builtin_catalog
from service.render.charts import KernelPoint, roofline_chart
from service.render.roof_lines import PowerOfTenFormatter, log_axes

_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _labels(ax: Axes) -> list[str]:
    FigureCanvasAgg(ax.figure).draw()
    return [t.get_text() for minor in (False, True) for t in ax.xaxis.get_ticklabels(minor=minor)]


def _as_plain(mathtext: str) -> str:
    """matplotlib's ``$\\mathdefault{2\\times10^{-1}}$`` written as ``2×10⁻¹``."""
    found = re.fullmatch(r"\$\\mathdefault\{(?:(\d+)\\times)?10\^\{(-?\d+)\}\}\$", mathtext)
    if found is None:
        return mathtext
    coefficient, exponent = found.groups()
    return f"{coefficient + '×' if coefficient else ''}10{exponent.translate(_SUPER)}"


@pytest.mark.parametrize("span", [(1e-2, 1e4), (2.0, 8.0), (0.3, 5.0), (1e11, 3e15)])
def test_plain_labels_are_the_default_labels_without_mathtext(span):
    axes = []
    for plain in (False, True):
        ax = Figure().add_subplot()
        log_axes(ax) if plain else (ax.set_xscale("log"), ax.set_yscale("log"))
        ax.set_xlim(*span)
        axes.append(_labels(ax))
    default, plain_labels = axes
    assert plain_labels == [_as_plain(label) for label in default]
    assert any(plain_labels) and not any("$" in label for label in plain_labels)


def test_a_power_of_ten_is_never_written_with_a_coefficient_of_ten():
    formatter = PowerOfTenFormatter()
    assert formatter._num_to_string(1000.0, 1.0, 1e4) == "10³"
    assert formatter._num_to_string(0.001, 1e-4, 1.0) == "10⁻³"
    assert formatter._num_to_string(3e-7, 1e-8, 1e-6) == "3×10⁻⁷"


def test_the_roofline_chart_draws_its_axes_with_the_plain_labels():
    roof = builtin_catalog().lookup("H100-SXM5").roof()
    fig = roofline_chart(roof, [KernelPoint("gemv", 0.5, 1e12, 0.5)])
    ax = fig.axes[0]
    assert isinstance(ax.xaxis.get_major_formatter(), PowerOfTenFormatter)
    assert isinstance(ax.yaxis.get_minor_formatter(), PowerOfTenFormatter)
    FigureCanvasAgg(fig).draw()
    assert "10¹²" in [t.get_text() for t in ax.yaxis.get_ticklabels()]
