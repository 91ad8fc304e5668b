"""The digest as markdown (the GitHub issue body), self-contained HTML and JSON.

Numbers are formatted and user strings escaped here, per context (``escape_code`` for kernel
names in GFM tables, jinja2 autoescaping for HTML); the templates only lay the rows out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

import jinja2
from markupsafe import Markup

from rules import one_decimal
from service.digest.model import BindingFlip, Digest, Movement, TimeMovement, VanishedKernel
from service.render.digest_accepted import accepted_rows
from service.render.digest_devices import (
    device_change_rows,
    off_roof_rows,
    unmeasured_rows,
    untrusted_line,
)
from service.render.digest_shared import shared_move_rows, shared_moves_left_out
from service.render.escape import escape_code, without_bidi
from service.render.figures import fmt_ratio, fmt_seconds, time_change
from service.render.names import distinct_cuts, shown_name, visible

#: Label of the weekly issue; the issue is found again by its title, label and marker.
DIGEST_LABEL = "roofguard-digest"
#: Kernel names longer than this are shortened in tables (the JSON keeps them whole).
NAME_LIMIT = 80
#: Rows per movement section in markdown and HTML (the JSON lists every entry).
ROW_LIMIT = 50


def digest_title(digest: Digest) -> str:
    """Title of the week's issue, e.g. "roofguard digest 2026-W48".

    A period longer than a week is titled by its dates: ``--since 30d`` read "2026-W47", the
    week of its middle, over a month of changes.
    """
    if digest.end - digest.start <= timedelta(days=7):
        return f"roofguard digest {digest.week}"
    return f"roofguard digest {digest.start:%Y-%m-%d} to {digest.end:%Y-%m-%d}"


@functools.cache
def _env(autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("service.render", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=without_bidi if autoescape else None,
    )


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{one_decimal(value)} %"


def _change(value: float) -> str:
    return f"{value * 100:+.1f} %"


def _day(value: datetime | None) -> str:
    return "–" if value is None else value.strftime("%Y-%m-%d")


def _movement_row(m: Movement, esc: Callable[[str], str]) -> dict[str, str]:
    return {
        "kernel": esc(m.kernel),
        "device": esc(m.device),
        "change": _change(m.relative_change),
        "levels": f"{_pct(m.before)} → {_pct(m.after)}",
        "current": _pct(m.current),
        "since": _day(m.since),
        "commits": f"{m.from_commit[:8]}…{m.to_commit[:8]}",
        "recovered": _day(m.recovered_at),
        "age": f"{m.age_days:.0f} d",
        "sparkline": m.sparkline or "–",
        "id": f"{m.kernel}@{m.device}",
    }


_SECTIONS = ("regressions", "improvements", "recoveries", "unresolved")
#: The sections whose rows name a kernel each (``entry.kernel``).
_KERNEL_SECTIONS = (
    *_SECTIONS,
    "regime_flips",
    "binding_flips",
    "time_regressions",
    "unresolved_time",
    "vanished",
    "mislabels",
    "below_target",
    "accepted",
)


#: The sections of what is new in the period (found by its scan, not by the one before).
_NEW_SECTIONS = ("regressions", "improvements", "time_regressions")


def _found(since: datetime, digest: Digest, section: str) -> dict[str, str]:
    """A new entry whose step began before the period says so: it was found in this one."""
    if section not in _NEW_SECTIONS or since >= digest.start:
        return {}
    period = "this week" if digest.end - digest.start <= timedelta(days=7) else "in this period"
    return {"since": f"{_day(since)}, found {period}"}


def _commits(from_commit: str, to_commit: str) -> str:
    return f"{from_commit[:8]}…{to_commit[:8]}"


def time_sections(digest: Digest, esc: Callable[[str], str]) -> dict[str, list[dict[str, str]]]:
    """Rows of the time regression, binding flip and vanished-kernel sections."""
    return {
        "time_regressions": [
            _time_row(t, esc) | _found(t.since, digest, "time_regressions")
            for t in digest.time_regressions[:ROW_LIMIT]
        ],
        "unresolved_time": [_still_row(t, esc) for t in digest.unresolved_time[:ROW_LIMIT]],
        "binding_flips": [_flip_row(f, esc) for f in digest.binding_flips[:ROW_LIMIT]],
        "vanished": [
            _vanished_row(v, esc, _before(v, digest.vanished)) for v in digest.vanished[:ROW_LIMIT]
        ],
    }


def _time_row(t: TimeMovement, esc: Callable[[str], str]) -> dict[str, str]:
    moved = t.from_binding != t.to_binding
    return {
        "kernel": esc(t.kernel),
        "device": esc(t.device),
        "time": time_change(t.after_s, t.before_s),
        "binding": esc(f"{t.from_binding} → {t.to_binding}") if moved else "unchanged",
        "since": _day(t.since),
        "commits": _commits(t.from_commit, t.to_commit),
        "id": f"time:{t.kernel}@{t.device}",
    }


def _still_row(t: TimeMovement, esc: Callable[[str], str]) -> dict[str, str]:
    """An unresolved time regression: its rise, and its time on the period's last night."""
    return {
        "kernel": esc(t.kernel),
        "device": esc(t.device),
        "time": time_change(t.after_s, t.before_s),
        "now": fmt_seconds(t.current_s),
        "since": _day(t.since),
        "commits": _commits(t.from_commit, t.to_commit),
    }


def _flip_row(f: BindingFlip, esc: Callable[[str], str]) -> dict[str, str]:
    return {
        "kernel": esc(f.kernel),
        "device": esc(f.device),
        "flip": esc(f"{f.from_binding} → {f.to_binding}"),
        "time": "—" if f.time_ratio is None else f"{fmt_ratio(f.time_ratio)} the time",
        "change": _change(f.relative_change),
        "since": _day(f.since),
        "commits": _commits(f.from_commit, f.to_commit),
    }


def _before(v: VanishedKernel, vanished: list[VanishedKernel]) -> float:
    """The time its replacements stand beside: its own, or with ``merged_with``, the group's."""
    group = {(v.device, v.since, k) for k in v.merged_with}
    return v.last_time_s + sum(
        o.last_time_s for o in vanished if (o.device, o.since, o.kernel) in group
    )


def _vanished_row(v: VanishedKernel, esc: Callable[[str], str], before: float) -> dict[str, str]:
    after = v.replacement_time_s
    return {
        "kernel": esc(v.kernel),
        "device": esc(v.device),
        "change": esc(_vanished_change(v)),
        "time": time_change(after, before) if after else fmt_seconds(v.last_time_s),
        "since": _day(v.since),
        "commits": _commits(v.from_commit, v.to_commit),
    }


def _vanished_change(v: VanishedKernel) -> str:
    names = ", ".join(v.replaced_by[:4]) + (" …" if len(v.replaced_by) > 4 else "")
    if v.change == "merged":
        return f"with {', '.join(v.merged_with[:4])}, replaced by {names}"
    if v.change == "split":
        return f"split into {len(v.replaced_by)}: {names}"
    return f"replaced by {names}" if v.change == "replaced" else "vanished"


def digest_view(digest: Digest, *, code: bool = True, rows: int = ROW_LIMIT) -> dict[str, Any]:
    """What the templates render: every value already formatted (and escaped when ``code``).

    Each movement section lists at most ``rows`` entries (worst first) and counts the rest
    in ``more``, so the issue body stays under GitHub's 65,536 characters.
    """
    esc = _escaper(code, _kernel_cuts(digest, rows) if code else {})
    return {
        "more": {name: max(0, len(getattr(digest, name)) - rows) for name in _SECTIONS},
        "title": digest_title(digest),
        "headline": digest.headline,
        "repo": digest.repo or "",
        "start": _day(digest.start),
        "end": _day(digest.end),
        "measurements": f"{digest.measurements:,}",
        "untrusted": untrusted_line(digest, markdown=code),
        "sections": {
            name: [
                _movement_row(m, esc) | _found(m.since, digest, name)
                for m in getattr(digest, name)[:rows]
            ]
            for name in _SECTIONS
        },
        **time_sections(digest, esc),
        "flips": _flip_rows(digest, esc),
        "mislabels": _mislabel_rows(digest, esc),
        "below": _below_rows(digest, esc),
        "devices": _device_rows(digest, esc),
        "device_changes": device_change_rows(digest, esc),
        "unmeasured": unmeasured_rows(digest, esc),
        "off_roof": off_roof_rows(digest, esc),
        "shared_moves": shared_move_rows(digest, esc),
        "shared_more": shared_moves_left_out(digest),
        "lookback": _lookback(digest),
        "accepted": accepted_rows(digest, esc, markdown=code),
    }


def _lookback(digest: Digest) -> str:
    """What "unresolved" covers: a regression older than the lookback left the list unsaid."""
    since = _day(digest.start - timedelta(days=digest.lookback_days))
    return (
        f"Regressions that began since {since} ({digest.lookback_days} days before the "
        "period, `--lookback-days`); one that began earlier is no longer listed."
    )


def _escaper(code: bool, cuts: Mapping[str, str]) -> Callable[[str], str]:
    """Escape a user string for a GFM table cell when ``code``, else leave it as it is.

    A long kernel name is cut in the middle as ``cuts`` says (``_kernel_cuts``); any other long
    string keeps its start and the end of its template arguments (``names.shown_name``). Cut
    at the end, every CUTLASS GEMM of a fleet read the same 80 characters.
    """
    if code:
        return lambda s: escape_code(cuts.get(s) or shown_name(s, NAME_LIMIT), in_table=True)
    return lambda s: s


def _kernel_cuts(digest: Digest, rows: int) -> dict[str, str]:
    """The shown form of each kernel name the tables list, cut apart where names collide."""
    names = sorted(
        {
            str(entry.kernel)
            for section in _KERNEL_SECTIONS
            for entry in getattr(digest, section)[:rows]
        }
    )
    shown = [visible(name) for name in names]
    return dict(zip(names, distinct_cuts(shown, NAME_LIMIT), strict=True))


def _flip_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, Any]]:
    return [
        {
            "kernel": esc(f.kernel),
            "device": esc(f.device),
            "flip": f"{f.from_regime} → {f.to_regime}",
            "change": _change(f.relative_change),
            "since": _day(f.since),
            "commits": f"{f.from_commit[:8]}…{f.to_commit[:8]}",
        }
        for f in digest.regime_flips
    ]


def _mislabel_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, Any]]:
    return [
        {
            "kernel": esc(m.kernel),
            "device": esc(m.device),
            "group": esc(m.group),
            "declared": m.declared,
            "measured": m.measured,
        }
        for m in digest.mislabels
    ]


def _below_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, Any]]:
    return [
        {
            "kernel": esc(b.kernel),
            "device": esc(b.device),
            "group": esc(b.group),
            "target": _pct(b.target_percent),
            "current": _pct(b.current),
            "gap": f"{one_decimal(b.gap)} pts",
        }
        for b in digest.below_target
    ]


def _device_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, Any]]:
    return [
        {
            "device": esc(d.device),
            "kernels": d.kernels,
            "nights": d.nights,
            "median": _pct(d.median_percent_of_roof),
            "regressions": d.regressions,
            "improvements": d.improvements,
            "flips": d.regime_flips,
            "unresolved": d.unresolved,
        }
        for d in digest.devices
    ]


def render_digest_markdown(digest: Digest) -> str:
    """The digest as GitHub-flavoured markdown (the weekly issue's body)."""
    return _env(False).get_template("digest.md.j2").render(**digest_view(digest))


def _inline_svg(svg: bytes | str) -> Markup:
    text = svg.decode("utf-8") if isinstance(svg, bytes) else svg
    start = text.find("<svg")
    return Markup(text[start:] if start >= 0 else text)  # our own matplotlib output


def render_digest_html(digest: Digest, charts: Mapping[str, bytes | str] | None = None) -> str:
    """The digest as one self-contained HTML page; ``charts`` (id -> SVG) are inlined.

    Args:
        digest: The digest.
        charts: SVG charts keyed like the view rows' ``id`` (``kernel@device``), plus
            optionally ``roofline:<device>``; each is drawn under its row or section.
    """
    svgs = {key: _inline_svg(svg) for key, svg in (charts or {}).items()}
    return (
        _env(True)
        .get_template("digest.html.j2")
        .render(**digest_view(digest, code=False), charts=svgs)
    )


def render_digest_json(digest: Digest) -> str:
    """The digest as one JSON object (``Digest``'s fields; timestamps in ISO 8601).

    Every key is there in every digest (``accepted`` an empty list in a week without one):
    a consumer reads one shape.
    """
    return digest.model_dump_json(indent=2) + "\n"
