"""The digest's device changes as rows: the new card, what the roofs predicted, who fell behind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from rules import one_decimal
from service.digest.devices import DeviceChange, KernelScaling
from service.digest.model import Digest
from service.render.escape import escape_code
from service.render.figures import fmt_ratio

#: Kernels listed per device change (the JSON lists every one).
BEHIND_LIMIT = 20


def _ratios(measured: float | None, expected: float | None) -> str:
    if measured is None:
        return "—"
    predicted = f" (roofs predict {fmt_ratio(expected)})" if expected is not None else ""
    return f"{fmt_ratio(measured)}{predicted}"


def _behind(k: KernelScaling, esc: Callable[[str], str]) -> dict[str, str]:
    return {
        "kernel": esc(k.kernel),
        "levels": f"{one_decimal(k.before)}% → {one_decimal(k.after)}%",
        "time": _ratios(k.time_ratio, k.expected_time_ratio),
    }


def _row(c: DeviceChange, esc: Callable[[str], str]) -> dict[str, Any]:
    return {
        "change": f"{esc(c.from_device)} → {esc(c.to_device)}",
        "since": c.since.strftime("%Y-%m-%d"),
        "commits": f"{c.from_commit[:8]}…{c.to_commit[:8]}",
        "nights": c.nights,
        "kernels": c.kernels,
        "time": _ratios(c.time_ratio, c.expected_time_ratio),
        "summary": f"{c.kept_up} kept up, {c.faster} faster, {len(c.not_kept_up)} did not keep up",
        "behind": [_behind(k, esc) for k in c.not_kept_up[:BEHIND_LIMIT]],
        "more": max(0, len(c.not_kept_up) - BEHIND_LIMIT),
    }


def device_change_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, Any]]:
    """One row per device change of ``digest``, with the kernels that did not keep up."""
    return [_row(c, esc) for c in digest.device_changes]


def unmeasured_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, str]]:
    """One row per device the period did not measure: its last night, commit and kernels."""
    return [
        {
            "device": esc(u.device),
            "last_night": u.last_night.strftime("%Y-%m-%d"),
            "commit": u.last_commit[:8],
            "kernels": f"{u.kernels:,}",
        }
        for u in digest.unmeasured
    ]


def off_roof_rows(digest: Digest, esc: Callable[[str], str]) -> list[dict[str, str]]:
    """One row per device with kernels off the roof: how many, since when, which."""
    return [
        {
            "device": esc(o.device),
            "kernels": f"{o.kernels:,}",
            "last_on_roof": o.last_on_roof.strftime("%Y-%m-%d"),
            "commit": o.last_commit[:8],
            "examples": ", ".join(esc(name) for name in o.examples)
            + (f" and {o.kernels - len(o.examples):,} more" if o.kernels > len(o.examples) else ""),
        }
        for o in digest.off_roof
    ]


def _html_code(text: str) -> str:
    return str(Markup("<code>{}</code>").format(text))  # the text escaped, the tags kept


def untrusted_line(digest: Digest, *, markdown: bool) -> str:
    """The nightly runs the digest left out, their runner untrusted, per device ("" if none).

    Markdown with code spans, or HTML markup (``Markup``) with the device names escaped.
    """
    left = digest.untrusted_runs
    if not left:
        return ""
    code = escape_code if markdown else _html_code
    total = sum(entry.runs for entry in left)
    runs = f"{total} nightly run{'' if total == 1 else 's'}"
    if len(left) == 1:
        what = f"{runs} on {code(left[0].device)}"
        whose = "its runner failed its" if total == 1 else "their runner failed its"
    else:
        each = ", ".join(f"{entry.runs} on {code(entry.device)}" for entry in left)
        what, whose = f"{runs} ({each})", "their runners failed their"
    text = f"{what} left out: {whose} health preflight ({code('roofguard calibrate --check')})."
    return text if markdown else Markup(text)  # each device escaped above
