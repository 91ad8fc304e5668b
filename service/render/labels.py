"""Greedy placement of point labels so that they neither overlap each other nor the points.

Labels are placed in order (most important first); each tries candidate offsets around its
anchor, nearest first, and takes the first whose box overlaps no placed box. Boxes are estimated
from the character count, which is enough for short kernel names and needs no renderer; a label
moved off the ring beside its point gets a leader line (``displaced``). A chart's title is
measured as drawn instead (``fit_title``): a wide name overran the estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.text import Text

from service.render import names
from service.render.escape import bidi_free
from service.render.names import distinct_cuts

#: Candidate offsets in points (dx, dy): right, left, above, below, diagonals, then further out.
_DIRECTIONS = ((1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1.5), (0, -1.5))
_RADII = (6.0, 14.0, 24.0, 36.0, 50.0)
#: An optional label tries the nearest this many of ``_RADII`` only.
_OPTIONAL_RADII = 2
_CHAR_WIDTH = 0.6  # of the font size, for the average glyph
#: A thin grey line from a label moved away from its point to the point (``displaced``).
LEADER_LINE = {"arrowstyle": "-", "color": "#999999", "lw": 0.5}
#: Kernel names longer than this are cut in the middle on charts: CUTLASS names run to
#: hundreds of characters and would run off the figure.
CHART_NAME_CHARS = 48
#: A chart title's kernel part is cut to no fewer characters than this (``cut_to_fit``).
_TITLE_MIN_CHARS = 16


def displaced(offset: tuple[float, float], radius: float) -> bool:
    """Whether a label at ``offset`` points from a marker of ``radius`` is off its first ring.

    Beside its marker (``_RADII``' nearest ring, diagonals and above or below included) a
    label is its point's; farther out, another point may sit nearer: it gets a leader line.
    """
    dx, dy = (max(abs(v) - radius, 0.0) for v in offset)
    return max(dx, dy) > _RADII[0] * max(abs(d) for _, d in _DIRECTIONS)


def label_box(
    anchor: Sequence[float], offset: tuple[float, float], text: str, fontsize: float
) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in points of a label drawn at ``anchor + offset``.

    Labels to the right of the anchor are left-aligned, labels to its left right-aligned, and
    every label is vertically centred, as ``roofline_chart`` draws them.
    """
    width = _CHAR_WIDTH * fontsize * len(text)
    x = anchor[0] + offset[0]
    y = anchor[1] + offset[1]
    x0 = x if offset[0] >= 0 else x - width
    return x0, y - fontsize / 2, x0 + width, y + fontsize / 2


def ellipsize_middle(name: str, limit: int = CHART_NAME_CHARS) -> str:
    """``name`` cut to ``limit`` characters, its template arguments kept (``names``)."""
    return names.ellipsize_middle(name, limit)


def short_names(names: Sequence[str]) -> dict[str, str]:
    """Full name -> chart label: cut where names differ (``names.distinct_cuts``), else " #2"."""
    labels: dict[str, str] = {}
    used: set[str] = set()
    for name, cut in zip(names, distinct_cuts(names, CHART_NAME_CHARS), strict=True):
        label, n = cut, 1
        while label in used:
            n += 1
            label = f"{ellipsize_middle(name, CHART_NAME_CHARS - 3)} #{n}"
        used.add(label)
        labels[name] = label
    return labels


def _overlaps(box: tuple[float, float, float, float], boxes: npt.NDArray[np.float64]) -> bool:
    if not len(boxes):
        return False
    x0, y0, x1, y1 = box
    hit = (boxes[:, 0] < x1) & (boxes[:, 2] > x0) & (boxes[:, 1] < y1) & (boxes[:, 3] > y0)
    return bool(hit.any())


def _inside(
    box: tuple[float, float, float, float], bounds: tuple[float, float, float, float] | None
) -> bool:
    if bounds is None:
        return True
    x0, y0, x1, y1 = box
    return x0 >= bounds[0] and y0 >= bounds[1] and x1 <= bounds[2] and y1 <= bounds[3]


def _choose(
    anchor: Sequence[float],
    candidates: Sequence[tuple[float, float]],
    text: str,
    fontsize: float,
    boxes: npt.NDArray[np.float64],
    bounds: tuple[float, float, float, float] | None,
) -> tuple[tuple[float, float], bool]:
    """The first candidate inside ``bounds`` that overlaps nothing, else the first inside.

    And whether it is free (overlaps nothing).
    """
    inside = [c for c in candidates if _inside(label_box(anchor, c, text, fontsize), bounds)]
    free = (c for c in inside if not _overlaps(label_box(anchor, c, text, fontsize), boxes))
    found = next(free, None)
    if found is not None:
        return found, True
    return (inside[0] if inside else candidates[-1]), False


def point_boxes(
    anchors: npt.NDArray[np.floating[Any]], radii: npt.NDArray[np.floating[Any]]
) -> list[tuple[float, ...]]:
    """(x0, y0, x1, y1) of each marker: its centre in ``anchors``, its radius in ``radii``."""
    return [(x - r, y - r, x + r, y + r) for (x, y), r in zip(anchors, radii, strict=True)]


def place_labels(
    anchors: npt.ArrayLike,
    texts: Sequence[str],
    *,
    fontsize: float,
    radii: Sequence[float] | None = None,
    bounds: tuple[float, float, float, float] | None = None,
    optional: Sequence[bool] | None = None,
    obstacles: Sequence[tuple[float, ...]] = (),
) -> list[tuple[float, float] | None]:
    """Offsets in points, one per label, chosen greedily so that boxes do not overlap.

    Args:
        anchors: Display coordinates in points (n x 2) of the points, most important first.
        texts: The labels, in the same order.
        fontsize: Font size in points.
        radii: Marker radius of each point in points (labels keep clear of every marker).
        bounds: (x0, y0, x1, y1) in points that every label should stay inside (the axes),
            so a label near the right edge goes to the left of its point.
        optional: Per label, whether to leave it out (None) where no candidate near its
            point is free.
        obstacles: More boxes to keep clear of (the markers of points without a label).

    Returns:
        One (dx, dy) per label. When no candidate is free (a crowded chart), the nearest one
        inside ``bounds`` is used (else the farthest), so every label that is not optional
        is still drawn.
    """
    anchors = np.asarray(anchors, dtype=float)
    marker_radii = np.full(len(anchors), 4.0) if radii is None else np.asarray(radii, dtype=float)
    placed = [*point_boxes(anchors, marker_radii), *obstacles]
    skippable = [False] * len(anchors) if optional is None else list(optional)
    offsets: list[tuple[float, float] | None] = []
    candidates = [(dx * r, dy * r) for r in _RADII for dx, dy in _DIRECTIONS]
    for anchor, text, radius, skip in zip(anchors, texts, marker_radii, skippable, strict=True):
        # Offsets start at the marker's edge, so big markers push their labels out.
        shifted = [
            (dx + float(np.sign(dx)) * radius, dy + float(np.sign(dy)) * radius)
            for dx, dy in candidates
        ]
        if skip:  # far from its point, a name among many does not say whose it is
            shifted = shifted[: len(_DIRECTIONS) * _OPTIONAL_RADII]
        chosen, free = _choose(anchor, shifted, text, fontsize, np.array(placed), bounds)
        if skip and not free:
            offsets.append(None)
            continue
        placed.append(label_box(anchor, chosen, text, fontsize))
        offsets.append(chosen)
    return offsets


class TitleFit(Artist):
    """Draws nothing: cuts its axes' title to the axes' width as the figure is drawn.

    The axes' width is final only once the layout has run; measured then, with the renderer
    that draws the title, the fit costs no layout pass of its own (one was a third of a trend
    chart's render). Drawn before every other artist of its axes (lowest ``zorder``).
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title = title
        self.set_zorder(-math.inf)
        self.set_in_layout(False)

    def draw(self, renderer: RendererBase) -> None:
        """Set the axes' title to the longest cut of ``title`` that fits over the axes."""
        if self.axes is not None:
            room = self.axes.get_window_extent(renderer).width
            cut_to_fit(self.axes.title, bidi_free(self.title), room, renderer)
        self.stale = False


def cut_to_fit(text: Text, title: str, room: float, renderer: RendererBase) -> None:
    """``text`` set to ``title`` with its kernel part cut in the middle until ``room`` holds it.

    The part after the last " on " (the card) stays whole; widths are in display units, as
    the renderer measures the glyphs (CUTLASS names run wider than an average glyph).
    """
    head, on, card = title.rpartition(" on ")
    head, card = (head, on + card) if on else (title, "")
    kept = len(head)
    text.set_text(title)
    width = text.get_window_extent(renderer).width
    while width > room and kept > _TITLE_MIN_CHARS:
        kept = max(_TITLE_MIN_CHARS, min(kept - 1, int(kept * room / width)))
        text.set_text(names.cut_middle(head, kept) + card)
        width = text.get_window_extent(renderer).width


def fit_title(ax: Axes, title: str, fontsize: float = 10.0) -> None:
    """Give ``ax`` the title ``title``, cut to the axes' width when drawn (``TitleFit``).

    A chart's title is a kernel's name and its card: a template signature ran off both edges
    of the image (matplotlib centres the title over the axes and clips nothing), and a guess
    of 0.6 em a glyph still lost the card's last letters under a wide CUTLASS name.
    """
    ax.set_title(title, fontsize=fontsize, parse_math=False)
    ax.add_artist(TitleFit(title))
