"""Two runs compared (``service.compare.runs``) as text, markdown and JSON.

Every cell is prepared once (``cells``); the terminal table, the markdown table and the
dashboard page only lay them out. Kernel names are data: markdown escapes them and the
terminal drops control characters.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from rules import CROSS_DEVICE_TOLERANCE
from service.compare.runs import KernelChange, RunComparison
from service.render.devices import with_prediction
from service.render.escape import escape_code, escape_text, strip_terminal_escapes
from service.render.figures import fmt_ratio, time_change
from service.render.names import distinct_cuts
from service.render.plain_table import pipe_lines
from service.render.story import SET_CHANGE_SHARE
from service.render.text_fit import Cell as TextCell
from service.render.text_fit import Column, fitted_or_cropped

#: Kernel names longer than this are cut in the middle in the terminal table.
NAME_WIDTH = 60
#: A markdown table's kernel names are cut at this many characters (where they still differ).
MARKDOWN_NAME_WIDTH = 120
_HEADERS = ("kernel", "time (base → now)", "% of roof (base → now)", "binding", "status")
_COLUMNS = (
    Column(_HEADERS[0], folds=True, floor=24),  # a name folds only where the room is short
    Column(_HEADERS[1], "right", wraps=True, floor=20),
    Column(_HEADERS[2], "right", wraps=True, floor=16),
    Column(_HEADERS[3]),
    Column(_HEADERS[4], wraps=True, floor=12),
)


@dataclass(frozen=True)
class Cells:
    """One kernel's row, as plain text."""

    name: str
    time: str
    percent: str
    binding: str
    status: str


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"


def percent_cell(k: KernelChange) -> str:
    """``71.8% → 4.8% of tensor_bf16 (70.5% of fp32)`` when the binding changed.

    A kernel faster off the base's binding has no like-for-like figure (a fusion restored
    would read 1.4% of the dram roof it no longer needs): ``79.4% of dram → 70.8% of fp32``;
    nor has one on a card without a roof of the base's binding (``50.0% of fp32 → no fp32
    roof``). Across cards the like-for-like figure is of the roof the base's work has there
    (``baseline_roof_binding``).
    """
    if k.status in ("new", "missing"):
        return _pct(k.percent_of_roof if k.status == "new" else k.base_percent_of_roof)
    base, like, own = _pct(k.base_percent_of_roof), k.percent_of_baseline_roof, k.percent_of_roof
    moved = bool(k.base_binding and k.binding and k.base_binding != k.binding)
    if like is None and k.by_time_alone:
        return f"{base} of {k.base_binding} → no {k.base_binding} roof"
    if k.baseline_roof_binding is None:  # one card: the figure is of the base's binding
        alike, of = like == own, k.base_binding
    else:
        of = k.baseline_roof_binding
        alike = of == k.binding and _pct(like) == _pct(own)
    if alike and moved:
        return f"{base} of {k.base_binding} → {_pct(own)} of {k.binding}"
    if alike or (not moved and k.baseline_roof_binding is None):
        return f"{base} → {_pct(own)}"
    return f"{base} → {_pct(like)} of {of} ({_pct(own)} of {k.binding})"


def shown_names(kernels: Sequence[KernelChange], width: int) -> list[str]:
    """Each row's kernel as the table shows it, cut to ``width`` where rows still differ.

    Two kernels of one display name show their keys (``softmax[n=4096]``), and long names whose
    cuts in the middle collide (CUTLASS tiles) are cut where they differ: both rows read the
    same before, one slower and one unchanged.
    """
    counts = Counter(k.name for k in kernels)
    texts = [strip_terminal_escapes(k.key if counts[k.name] > 1 else k.name) for k in kernels]
    return distinct_cuts(texts, width)


def cells(k: KernelChange) -> Cells:
    """The row of ``k`` (its name unescaped: each output escapes it its own way)."""
    if k.status == "new":
        time = time_change(k.time_s, None)
    elif k.status == "missing":
        gone = "not measured" if k.failed_on_other_side else "missing"
        time = f"{time_change(k.base_time_s, None)} → {gone}"
    else:
        time = with_prediction(time_change(k.time_s, k.base_time_s), k.expected_time_ratio)
    if k.base_binding and k.binding and k.base_binding != k.binding:
        binding = f"{k.base_binding} → {k.binding}"
    else:
        binding = k.binding or k.base_binding or "—"
    status = f"{k.status}, likely renamed" if k.renamed_from else k.status
    if k.by_time_alone:  # across cards, on a card without a peak or bandwidth its work needs
        status = f"{status}, by time alone"
    if k.failed_on_other_side:  # a replay that failed: not measured, rather than absent
        status = "not measured now" if k.status == "missing" else "not measured before"
    return Cells(k.name, time, percent_cell(k), binding, status)


def renamed_lines(c: RunComparison) -> list[str]:
    """``likely renamed (the same FLOPs and DRAM bytes): old → new``, one per pair."""
    return [
        f"likely renamed (the same FLOPs and DRAM bytes): {k.renamed_from} → {k.key}"
        for k in c.kernels
        if k.renamed_from
    ]


def headline(c: RunComparison) -> str:
    """``2 slower, ...; GPU time 2.58 → 7.34 ms (2.84×)``.

    Across cards, a kernel is slower or faster than the time the two roofs predict for its
    work (``KernelChange.expected_time_ratio``), by more than the tolerance cards differ by;
    one the card has no roof for is judged by time (``KernelChange.by_time_alone``).
    """
    total = time_change(c.time_s, c.base_time_s) + _in_both(c)
    across = any(k.expected_time_ratio is not None for k in c.kernels)
    by_time = f"time beyond ±{100 * c.threshold:.0f}%"
    alone = sum(1 for k in c.kernels if k.by_time_alone)
    beyond = (
        f"than the roofs predict, percent of roof beyond ±{100 * CROSS_DEVICE_TOLERANCE:.0f}%"
        + (f"; {alone} by {by_time}" if alone else "")
        if across
        else by_time
    )
    return f"{c.headline} ({beyond}) · GPU time {total}"


def _in_both(c: RunComparison) -> str:
    """``; 1.00× over the 1,000 kernels in both`` where kernels new or missing hold much time.

    As the verdict's GPU time (``service.render.story.other_kernels``): from
    ``SET_CHANGE_SHARE`` of the base run's time, the totals compare different kernels.
    """
    odd = sum(
        (k.base_time_s if k.status == "missing" else k.time_s) or 0.0
        for k in c.kernels
        if k.status in ("new", "missing")
    )
    both = [k for k in c.kernels if k.status not in ("new", "missing") and k.base_time_s]
    before = sum(k.base_time_s or 0.0 for k in both)
    if odd < SET_CHANGE_SHARE * c.base_time_s or not before:
        return ""
    ratio = sum(k.time_s or 0.0 for k in both) / before
    kernels = "kernel" if len(both) == 1 else "kernels"
    return f"; {fmt_ratio(ratio)} over the {len(both):,} {kernels} in both"


def render_text(c: RunComparison, width: int | None = None) -> str:
    """The table for a terminal ``width`` columns wide, or for a pipe or a log (None).

    A terminal's hides the binding, and says so, where the columns do not fit it; a pipe's
    is as wide as its cells, one line a kernel.
    """
    rows: list[list[TextCell]] = [
        [Text(name), r.time, r.percent, r.binding, r.status]
        for name, r in zip(
            shown_names(c.kernels, NAME_WIDTH), (cells(k) for k in c.kernels), strict=True
        )
    ]
    lines = [
        f"roofguard compare: {strip_terminal_escapes(c.head)} against "
        f"{strip_terminal_escapes(c.base)}",
        headline(c),
        f"roofs: {c.base_roof} → {c.roof}",
        *(strip_terminal_escapes(note) for note in c.notes),
        "",
        *(line.rstrip() for line in _table_lines(rows, width)),
    ]
    renamed = [strip_terminal_escapes(line) for line in renamed_lines(c)]
    return "\n".join(lines + (["", *renamed] if renamed else [])) + "\n"


def render_markdown(c: RunComparison) -> str:
    """A markdown table (a PR comment, a job summary)."""
    lines = [
        "## roofguard compare",
        "",
        f"{escape_text(c.head)} against {escape_text(c.base)}: {escape_text(headline(c))}",
        "",
        f"<sub>roofs: {escape_text(c.base_roof)} → {escape_text(c.roof)}</sub>",
        *(line for note in c.notes for line in ("", f"<sub>{escape_text(note)}</sub>")),
        "",
        "| " + " | ".join(h[0].upper() + h[1:] for h in _HEADERS) + " |",
        "|---|--:|--:|---|---|",
    ]
    names = shown_names(c.kernels, MARKDOWN_NAME_WIDTH)
    for shown, r in zip(names, (cells(k) for k in c.kernels), strict=True):
        name = escape_code(shown, in_table=True)
        row = (name, r.time, escape_text(r.percent), escape_text(r.binding), r.status)
        lines.append("| " + " | ".join(row) + " |")
    renamed = [f"<sub>{escape_text(line)}</sub>" for line in renamed_lines(c)]
    return "\n".join(lines + (["", *renamed] if renamed else [])) + "\n"


def render_json(c: RunComparison) -> str:
    """The comparison as JSON (``RunComparison``'s fields and ``headline``)."""
    return c.model_dump_json(indent=2) + "\n"


def _table_lines(rows: list[list[TextCell]], width: int | None) -> list[str]:
    """The kernel table fitted to a terminal ``width``; a pipe's (None) one line a kernel."""
    if width is None:
        return pipe_lines(_COLUMNS, rows)
    buffer = io.StringIO()
    table = fitted_or_cropped(_COLUMNS, rows, width, ("binding",))
    Console(file=buffer, width=width, color_system=None).print(table)
    return buffer.getvalue().splitlines()
