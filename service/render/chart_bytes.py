"""A chart leaves roofguard here: encoded as SVG or PNG, its words as they were written.

matplotlib writes a chart's words into SVG as ``<text>`` (``svg.fonttype: none``), so a browser
lays them out by the Unicode bidirectional algorithm: a kernel named with an override
(``<U+202E>RTL_override_kernel``) read reversed on the roofline image PR comments link, and
its ``label:`` id kept the override, where the HTML pages drop them (``escape.without_bidi``).
Every text and id of a figure is cleaned the same way before it is encoded, whichever chart
it is (run, trend, digest, compare) and wherever it goes (page, image, file).
"""

from __future__ import annotations

import io
import logging
import warnings
from typing import Literal

import matplotlib
from matplotlib.figure import Figure
from matplotlib.text import Text

from service.render.escape import bidi_free

_log = logging.getLogger(__name__)

ImageFormat = Literal["svg", "png"]


def without_bidi_text(fig: Figure) -> Figure:
    """``fig`` with the bidirectional overrides of its texts and ids as spaces (in place)."""
    for artist in fig.findobj():
        if isinstance(artist, Text) and (text := artist.get_text()) != bidi_free(text):
            artist.set_text(bidi_free(text))
        if (gid := artist.get_gid()) is not None and gid != bidi_free(gid):
            artist.set_gid(bidi_free(gid))
    return fig


def figure_bytes(fig: Figure, fmt: ImageFormat = "svg", *, dpi: int = 110) -> bytes:
    """The figure encoded as SVG or PNG (deterministic SVG: no dates, fixed ids).

    Its texts and ids lose their bidirectional overrides first (``without_bidi_text``).
    """
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    rc = matplotlib.rc_context({"svg.hashsalt": "roofguard", "svg.fonttype": "none"})
    # matplotlib draws (and warns about layout and glyphs) only here; its hints are for a
    # person at a notebook and would litter a CI log, so they go to the debug log instead.
    with rc, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        without_bidi_text(fig).savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    for warning in caught:
        _log.debug("matplotlib: %s", warning.message)
    return buffer.getvalue()
