"""The cross-device view as text, markdown, JSON and one roofline chart per card.

Every cell is prepared here once (``Cell``); the terminal table and the markdown template
only lay them out. Kernel and card names are data: markdown escapes them, the terminal
drops control characters.
"""

from __future__ import annotations

import functools
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import jinja2
from matplotlib.figure import Figure
from rich.console import Console
from rich.text import Text

from rules import DeviceLevel, Roof
from service.compare.cards import Card, CompareView
from service.compare.model import CompareRow, Comparison
from service.render.charts import KernelPoint, roofline_chart
from service.render.escape import escape_code, escape_text, strip_terminal_escapes
from service.render.figures import fmt_ratio, fmt_seconds
from service.render.labels import ellipsize_middle, short_names
from service.render.names import distinct_cuts, shown_name
from service.render.text_fit import Cell as TextCell
from service.render.text_fit import Column, fitted_or_cropped

#: Words for ``CompareRow.keeping``.
KEEPING = {
    "kept-up": "kept up",
    "not-kept-up": "did not keep up",
    "fell-since": "kept up, then fell on this card",
    "faster": "faster than the roofs predict",
}
NAME_WIDTH = 48
#: Marks the runs of a kernel with too few for a level on its card (``few_runs_note``).
FEW = " (median)"


@dataclass(frozen=True)
class Cell:
    """One row's cells as plain text (escaped later, per format)."""

    kernel: str
    card: str
    percent: str
    time: str
    binding: str
    runs: str
    versus: str
    scaling: str


def versus(row: CompareRow) -> str:
    """``0.93× (roofs predict 0.70×)``; a forecast reads ``0.70× the time on H100-SXM5``."""
    if row.forecast:
        ratio = fmt_ratio(row.time_ratio) if row.time_ratio else "—"
        return f"{ratio} the time on {row.source}"
    if row.time_ratio is None:
        return "—" if row.reference else "(the first card)"
    expected = row.expected_time_ratio
    predicted = f" (roofs predict {fmt_ratio(expected)})" if expected else ""
    return f"{fmt_ratio(row.time_ratio)}{predicted}"


def cell(row: CompareRow) -> Cell:
    """The text of one row."""
    return Cell(
        kernel=row.name,
        card=row.device,
        percent=f"{row.percent_of_roof:.1f}%"
        + (" (kept)" if row.forecast else "")
        + (" above roof!" if row.above_roof else ""),
        time=fmt_seconds(row.time_s),
        binding=row.binding or "—",
        runs="forecast" if row.forecast else f"{row.runs}{FEW if row.few_runs else ''}",
        versus=versus(row),
        scaling=KEEPING.get(row.keeping or "", "—"),
    )


#: The terminal table's columns; the comparison with the first card and the verdict wrap.
TEXT_COLUMNS = (
    Column("kernel", folds=True, floor=24),  # a name folds only where the room is short
    Column("card"),
    Column("% of roof", "right"),
    Column("time", "right"),
    Column("binding", "right"),
    Column("runs", "right"),
    Column("vs the first card", "right", wraps=True, floor=12),
    Column("scaling", "right", wraps=True, floor=8),
)
#: Hidden in this order when the terminal is too narrow for every column.
SPARE_COLUMNS = ("runs", "binding", "time")


def _cuts(comparison: Comparison, width: int) -> dict[str, str]:
    """Each kernel's name cut to ``width``, apart where the middle cut of two collides."""
    names = list(dict.fromkeys(_clean(row.kernel) for row in comparison.rows))
    return dict(zip(names, distinct_cuts(names, width), strict=True))


def _text_row(c: Cell, cuts: dict[str, str]) -> list[TextCell]:
    return [
        Text(cuts.get(_clean(c.kernel)) or _clean(c.kernel, NAME_WIDTH)),
        Text(_clean(c.card)),
        c.percent,
        c.time,
        Text(_clean(c.binding)),
        c.runs,
        Text(_clean(c.versus)),
        c.scaling,
    ]


def _clean(text: str, width: int | None = None) -> str:
    text = strip_terminal_escapes(text)
    text = "".join(ch for ch in text if ch.isprintable())
    return ellipsize_middle(text, width) if width else text


def render_text(comparison: Comparison, *, width: int = 200) -> str:
    """The view as a terminal table, with the cards' roofs and the forecast's assumption.

    The table fits ``width`` (``service.render.text_fit``): the runs, then the binding, then
    the time are hidden, and named, where the columns do not fit.
    """
    cuts = _cuts(comparison, NAME_WIDTH)
    rows = [_text_row(cell(row), cuts) for row in comparison.rows]
    table = fitted_or_cropped(TEXT_COLUMNS, rows, width, SPARE_COLUMNS)
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, highlight=False)
    console.print(Text(_clean(headline(comparison))))
    for column in comparison.devices:
        console.print(Text(_clean(f"  {column.device}: {column.runs} runs on {column.roof}")))
    if suite := suite_line(comparison):
        console.print(Text(_clean(suite)))
    console.print(table)
    if note := few_runs_note(comparison):
        console.print(Text(note))
    if comparison.assumption:
        console.print(Text(_clean(f"forecast on {comparison.forecast}: {comparison.assumption}")))
    return buffer.getvalue()


def headline(comparison: Comparison) -> str:
    """One line: what is compared with what."""
    cards = ", ".join(c.device for c in comparison.devices) or "no card with history"
    first = comparison.reference or "—"
    tolerance = f"{100 * comparison.tolerance:.0f}%"
    return (
        f"roofguard compare {comparison.repo}: {cards}; percent of roof on each card's own "
        f"{comparison.roof_source} roofs, every card against {first} (a fall of more than "
        f"{tolerance} did not keep up)"
    )


def suite_line(comparison: Comparison) -> str:
    """What a new card gives the suite: its GPU time on each card; empty with one card.

    ``GPU time over the 2,000 kernels on every card: H100-SXM5 40.4 ms; B200 17.3 ms
    (0.43×, forecast)``. Over the kernels every card shown has: a kernel one card lacks
    would skew its total.
    """
    times: dict[str, dict[str, float]] = {}  # card -> kernel -> time, the first card first
    for row in comparison.rows:
        times.setdefault(row.device, {})[row.kernel] = row.time_s
    common = set.intersection(*(set(t) for t in times.values())) if len(times) > 1 else set()
    if not common:
        return ""
    totals = {card: sum(t[k] for k in common) for card, t in times.items()}
    forecast = {row.device for row in comparison.rows if row.forecast}
    first = next(iter(totals.values()))
    parts = []
    for number, (card, total) in enumerate(totals.items()):
        said = [fmt_ratio(total / first)] if number and first else []
        said += ["forecast"] if card in forecast else []
        parts.append(f"{card} {fmt_seconds(total)}" + (f" ({', '.join(said)})" if said else ""))
    return f"GPU time over the {len(common):,} kernels on every card: " + "; ".join(parts)


def few_runs_note(comparison: Comparison) -> str:
    """What ``(median)`` beside a row's runs means, when a row has it."""
    if not any(r.few_runs for r in comparison.rows):
        return ""
    return (
        f"(median): fewer than the {comparison.min_runs} runs a kernel's level needs on that "
        "card; its percent of roof and time are the median of the runs it has"
    )


@functools.cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("service.compare", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # markdown: cells are escaped here, per context
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _markdown_cell(c: Cell, cuts: dict[str, str]) -> Cell:
    shown = cuts.get(_clean(c.kernel)) or shown_name(c.kernel, 90)
    return Cell(
        kernel=escape_code(shown, in_table=True),  # template args kept, rows told apart
        card=escape_text(c.card, limit=80),
        percent=c.percent,
        time=c.time,
        binding=escape_text(c.binding, limit=24),
        runs=c.runs,
        versus=escape_text(c.versus, limit=120),
        scaling=c.scaling,
    )


def render_markdown(comparison: Comparison) -> str:
    """The view as GitHub markdown (a job summary, a comment, a file)."""
    cuts = _cuts(comparison, 90)
    return (
        _env()
        .get_template("compare.md.j2")
        .render(
            headline=escape_text(headline(comparison), limit=600),
            devices=[
                (escape_text(d.device, limit=80), escape_text(d.roof, limit=120), d.runs, d.kernels)
                for d in comparison.devices
            ],
            rows=[_markdown_cell(cell(r), cuts) for r in comparison.rows],
            forecast=escape_text(comparison.forecast or "", limit=80),
            assumption=escape_text(comparison.assumption or "", limit=400),
            few_runs=escape_text(few_runs_note(comparison), limit=400),
            suite=escape_text(suite_line(comparison), limit=600),
        )
    )


def render_json(comparison: Comparison) -> str:
    """The view as JSON: a list of rows (``kernel``, ``device``, ``percent_of_roof`` ...)."""
    return json.dumps([r.model_dump(mode="json") for r in comparison.rows], indent=2) + "\n"


def _point(
    level: DeviceLevel, roof: Roof, name: str, time_s: float, total: float
) -> KernelPoint | None:
    flops, dram = level.work.flops, level.work.nbytes.get("dram")
    share = time_s / total if total else 0.0
    if not flops and level.work.nbytes and time_s > 0 and math.isfinite(level.percent):
        # A copy or memset: its level is its percent of the bandwidth roof (the zero-FLOP strip).
        return KernelPoint(name, 0.0, 0.0, share, bandwidth_percent=level.percent)
    if not flops or not dram or not time_s > 0:
        return None
    return KernelPoint(name, flops / dram, flops / time_s, share, level.work.precision(roof))


def card_points(view: CompareView, card: Card, names: dict[str, str]) -> list[KernelPoint]:
    """The card's kernels as chart points; those that did not keep up there flagged.

    ``names``: each kernel name's chart label. Flagged points are named first on a chart of
    more kernels than it names.
    """
    rows = view.comparison.rows
    behind = {r.kernel for r in rows if r.device == card.label and r.keeping == "not-kept-up"}
    total = sum(level.time_s for level in card.levels.values())
    found = (
        (_point(lv, card.roof, names[lv.name], lv.time_s, total), key)
        for key, lv in card.levels.items()
    )
    return [replace(p, flagged=key in behind) for p, key in found if p is not None]


def device_charts(view: CompareView, keys: Sequence[str] | None = None) -> list[tuple[str, Figure]]:
    """One roofline per card with each kernel's point (and the forecast card's, if any)."""
    shown = set(keys) if keys is not None else {r.kernel for r in view.comparison.rows}
    cards = [
        Card(c.label, c.roof, c.runs, {k: v for k, v in c.levels.items() if k in shown})
        for c in view.cards
    ]
    names = short_names(sorted({lv.name for c in cards for lv in c.levels.values()}))
    charts = []
    for card in cards:
        title = f"{card.label} ({card.roof.source})"
        points = card_points(view, card, names)
        charts.append((card.label, roofline_chart(card.roof, points, title=title)))
    if view.target is not None:
        charts.append((view.target.device, _forecast_chart(view, cards, names)))
    return charts


def _forecast_chart(view: CompareView, cards: Sequence[Card], names: dict[str, str]) -> Figure:
    assert view.target is not None
    rows = [r for r in view.comparison.rows if r.forecast]
    total = sum(r.time_s for r in rows)
    points = []
    for row in rows:
        card = next((c for c in cards if c.label == row.source), None)
        level = card.levels.get(row.kernel) if card else None
        point = (
            _point(level, card.roof, names[level.name], row.time_s, total)
            if level and card
            else None
        )
        if point is not None and math.isfinite(point.achieved_flop_per_s):
            points.append(point)
    title = f"{view.target.device}: forecast (each kernel keeps its percent of roof)"
    return roofline_chart(view.target, points, title=title)
