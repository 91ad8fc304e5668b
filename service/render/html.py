"""Dashboard pages: jinja2 HTML templates, autoescaped, with charts inlined as SVG.

No JavaScript and no asset build: every page is one HTML document with its styles and
charts inside, so it also works when saved or opened from a PR comment behind a proxy.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, TypeGuard

import jinja2
from markupsafe import Markup
from matplotlib.figure import Figure

from service.render.chart_bytes import figure_bytes
from service.render.escape import without_bidi
from service.render.figures import fmt_seconds

_XML_PROLOGUE = re.compile(rb"^\s*<\?xml[^>]*\?>\s*(<!DOCTYPE[^>]*>\s*)?", re.DOTALL)


@functools.cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        # The pages first; then the digest's sections the CLI's HTML digest shares with its page.
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("service.render", "templates/pages"),
                jinja2.PackageLoader("service.render", "templates"),
            ]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=without_bidi,
    )
    env.filters["pct"] = _pct
    env.filters["seconds"] = _seconds
    env.filters["short"] = lambda sha: (sha or "")[:10]
    return env


def _known(value: float | None) -> TypeGuard[float]:
    """A figure to show: not missing (None, or NaN from a frame's row)."""
    return value is not None and not math.isnan(value)


def _pct(value: float | None) -> str:
    return f"{value:.1f} %" if _known(value) else "–"


def _seconds(value: float | None) -> str:
    return fmt_seconds(value) if _known(value) else "–"


def inline_svg(fig: Figure) -> Markup:
    """A matplotlib figure as SVG markup to put inside a page.

    Matplotlib escapes the text it writes into SVG, so kernel names (C++ templates with
    ``<``, ``&``) cannot break out; the XML prologue is dropped because it is not valid
    inside HTML.
    """
    svg = _XML_PROLOGUE.sub(b"", figure_bytes(fig, "svg"))
    return Markup(svg.decode("utf-8"))


def render_page(template: str, **context: Any) -> str:
    """Render ``pages/<template>`` with ``context`` (every value autoescaped)."""
    return _env().get_template(template).render(**context)
