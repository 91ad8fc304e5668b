"""Greedy placement of point labels so that they neither overlap each other nor the points.

Labels are placed in order (most important first); each tries candidate offsets around its
anchor, nearest first, and takes the first whose box overlaps no placed box. Boxes are estimated
from the character count, which is enough for short kernel names and needs no renderer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

#: Candidate offsets in points (dx, dy): right, left, above, below, diagonals, then further out.
_DIRECTIONS = ((1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1.5), (0, -1.5))
_RADII = (6.0, 14.0, 24.0, 36.0, 50.0)
_CHAR_WIDTH = 0.6  # of the font size, for the average glyph


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


def _overlaps(box: tuple[float, float, float, float], boxes: npt.NDArray[np.float64]) -> bool:
    if not len(boxes):
        return False
    x0, y0, x1, y1 = box
    hit = (boxes[:, 0] < x1) & (boxes[:, 2] > x0) & (boxes[:, 1] < y1) & (boxes[:, 3] > y0)
    return bool(hit.any())


def _point_boxes(
    anchors: npt.NDArray[np.float64], radii: npt.NDArray[np.float64]
) -> list[tuple[float, ...]]:
    return [(x - r, y - r, x + r, y + r) for (x, y), r in zip(anchors, radii, strict=True)]


def place_labels(
    anchors: npt.ArrayLike,
    texts: Sequence[str],
    *,
    fontsize: float,
    radii: Sequence[float] | None = None,
) -> list[tuple[float, float]]:
    """Offsets in points, one per label, chosen greedily so that boxes do not overlap.

    Args:
        anchors: Display coordinates in points (n x 2) of the points, most important first.
        texts: The labels, in the same order.
        fontsize: Font size in points.
        radii: Marker radius of each point in points (labels keep clear of every marker).

    Returns:
        One (dx, dy) per label. When no candidate is free (a crowded chart), the farthest
        candidate is used, so every label is still drawn.
    """
    anchors = np.asarray(anchors, dtype=float)
    marker_radii = np.full(len(anchors), 4.0) if radii is None else np.asarray(radii, dtype=float)
    placed = _point_boxes(anchors, marker_radii)
    offsets: list[tuple[float, float]] = []
    candidates = [(dx * r, dy * r) for r in _RADII for dx, dy in _DIRECTIONS]
    for anchor, text, radius in zip(anchors, texts, marker_radii, strict=True):
        # Offsets start at the marker's edge, so big markers push their labels out.
        shifted = [
            (dx + float(np.sign(dx)) * radius, dy + float(np.sign(dy)) * radius)
            for dx, dy in candidates
        ]
        boxes = np.array(placed)
        free = (c for c in shifted if not _overlaps(label_box(anchor, c, text, fontsize), boxes))
        chosen = next(free, shifted[-1])
        placed.append(label_box(anchor, chosen, text, fontsize))
        offsets.append(chosen)
    return offsets
