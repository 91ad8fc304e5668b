"""The PR verdict in markdown: the sticky comment, the check summary and the job summary.

``render_verdict`` (the comment) lists the kernels that matter worst first (a table, then
collapsible details per finding) and summarises the unchanged ones, so a 2,000-kernel run
still reads in one screen. It stays under ``max_chars`` (GitHub refuses comments over 65,536
characters) by leaving out the least important kernels first, and says so.
``render_job_summary`` is the same verdict with every kernel that the summary's 1 MiB holds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jinja2

from rules import Conclusion, Finding, KernelStatus, KernelVerdict, Verdict
from service.render.causes import by_cause
from service.render.devices import judged_against
from service.render.escape import (
    cut_utf8,
    escape_code,
    escape_text,
    marker_value,
    safe_url,
    shorten,
)
from service.render.fit import fit
from service.render.judged import BASELINE_NOTE, judged_group
from service.render.ranking import far_off_unjudged, is_listed, ranked_kernels
from service.render.story import no_baseline, time_story
from service.render.verdict_view import (
    CONCLUSION_ICONS,
    TEXT_LIMIT,
    Entry,
    GroupRow,
    fmt_share,
    make_group_row,
    make_row,
)

#: GitHub's limit on a comment body; the default budget keeps a margin below it.
GITHUB_COMMENT_LIMIT = 65_536
#: Check-run ``output.summary`` and ``output.text`` limit.
CHECK_OUTPUT_LIMIT = 65_535
#: Rows in the visible table; the rest go to a collapsed table.
VISIBLE_ROWS = 20
#: Rows in the check summary.
CHECK_ROWS = 10
MAX_NOTES = 20
MAX_GROUPS = 30
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class VerdictLinks:
    """Optional links shown under the verdict (only http(s) URLs are used).

    Attributes:
        run_url: The dashboard page of this run.
        summary_url: The workflow run (job summary) on GitHub.
        charts: (label, image URL) pairs, e.g. the roofline chart; must be reachable by GitHub.
        artifact_name: Name of the workflow artifact that holds the full verdict.
        artifact_charts: Chart files in that artifact, listed when the charts are not hosted.
    """

    run_url: str | None = None
    summary_url: str | None = None
    charts: tuple[tuple[str, str], ...] = ()
    artifact_name: str | None = None
    artifact_charts: tuple[str, ...] = ()


@functools.cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("service.render", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # markdown: strings are escaped in verdict_view, per context
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def verdict_marker(repo: str | None, pr: int | None, device: str | None) -> str:
    """The hidden marker of the sticky comment: one comment per PR per device."""
    return (
        f"<!-- roofguard:verdict repo={marker_value(repo)} pr={marker_value(pr)} "
        f"device={marker_value(device)} -->"
    )


class _Listed:
    """The listed kernels, most important first; each one's row and details built when shown.

    A comment cut to GitHub's size limit shows a few dozen of hundreds of changed kernels.
    """

    def __init__(self, verdict: Verdict) -> None:
        self._verdict = verdict
        self._kernels: list[tuple[KernelVerdict, Sequence[Finding]]] = []
        self._entries: list[Entry] = []

    def __len__(self) -> int:
        return len(self._kernels)

    def add(self, kernel: KernelVerdict, found: Sequence[Finding]) -> None:
        self._kernels.append((kernel, found))

    def first(self, keep: int) -> list[Entry]:
        """The first ``keep`` entries (built once)."""
        for kernel, found in self._kernels[len(self._entries) : keep]:
            ordered = sorted(found, key=lambda f: (not f.counts, f.severity.rank))
            details = tuple(by_cause(ordered, self._verdict))
            self._entries.append(Entry(make_row(kernel, found), details))
        return self._entries[:keep]


@dataclass
class _Split:
    listed: _Listed
    unchanged: list[KernelVerdict] = field(default_factory=list)
    other: list[Finding] = field(default_factory=list)
    stored: list[KernelVerdict] = field(default_factory=list)  # new, not listed (first run)


def _split(verdict: Verdict, *, every_new: bool = False) -> _Split:
    """The listed kernels, the unchanged, findings of no kernel, and new kernels only counted.

    A first run's new kernels past the heaviest ``VISIBLE_ROWS`` are only counted unless
    ``every_new``.
    """
    keys = {k.key for k in verdict.kernels}
    split = _Split(_Listed(verdict), other=[f for f in verdict.findings if f.kernel not in keys])
    for kernel, found in ranked_kernels(verdict):
        if not is_listed(kernel, found):
            split.unchanged.append(kernel)
        elif (
            verdict.judged_nothing
            and not every_new
            and _only_new(kernel, found)
            and len(split.listed) >= VISIBLE_ROWS
        ):
            # A first run's kernels are all new: its heaviest are the roofline's first
            # snapshot, the rest a count (rows of them would fill the comment to its limit).
            split.stored.append(kernel)
        else:
            split.listed.add(kernel, found)
    split.other.sort(key=lambda f: (not f.counts, f.severity.rank))
    return split


def _only_new(kernel: KernelVerdict, found: Sequence[Finding]) -> bool:
    """New, fully placed, nothing found, near any runs it has: nothing to act on yet."""
    return (
        kernel.status == KernelStatus.NEW
        and not found
        and not kernel.missing
        and not far_off_unjudged(kernel)
    )


def _why_unjudged(verdict: Verdict) -> str:
    """Why a run's new kernels were not judged: no baseline, or one the gate cannot use yet."""
    if verdict.baseline_runs == 0:
        return "there is no baseline to judge them against yet"
    return "their baseline has too few runs to judge them yet"


def _listed_as(verdict: Verdict) -> str:
    """What the listed kernels are: on a first run all are new, else they changed."""
    return "new" if verdict.judged_nothing else "changed"


def _headline(verdict: Verdict) -> dict[str, Any]:
    warnings = verdict.warnings
    preview = sum(1 for f in verdict.findings if not f.counts)
    counts = [
        verdict.regression_count,
        f"{warnings} warning{'s' if warnings != 1 else ''}",
    ]
    if preview:
        counts.append(f"{preview} preview finding{'s' if preview != 1 else ''}")
    if verdict.judged_nothing:  # say so first; a failing finding still shows
        quiet = not (verdict.regressions or warnings)
        counts = [no_baseline(verdict), *(counts[2:] if quiet else counts)]
    device = escape_text(verdict.device or "unknown device", limit=80)
    title = {
        Conclusion.FAIL: "performance regressions",
        Conclusion.WARN: "warnings",
        Conclusion.PASS: "no regressions",
    }[verdict.conclusion]
    others = [r for r in verdict.roofs if r != verdict.roof]
    n = sum(1 for k in verdict.kernels if k.status != KernelStatus.MISSING)  # the run's own kernels
    return {
        "icon": CONCLUSION_ICONS[verdict.conclusion] if verdict.trusted else "⚠️",
        "title": f"{title if verdict.trusted else 'no regression verdict'} on {device}",
        "conclusion": verdict.conclusion.value.upper(),
        "counts": ", ".join(counts),
        "roof": escape_text(judged_against(verdict), limit=200),
        "other_roofs": ", ".join(escape_text(r, limit=120) for r in others),
        "commit": escape_code(verdict.commit[:12]) if verdict.commit else "",
        "n_kernels": f"{n:,} kernel{'s' if n != 1 else ''}",
        "trusted": verdict.trusted,
        "story": time_story(verdict),
    }


def _counted(kernels: Sequence[KernelVerdict], icon: str) -> dict[str, Any]:
    """How many kernels a line of the comment counts, their share of GPU time and its icon."""
    share = fmt_share(sum(k.time_share for k in kernels))
    count = f"{len(kernels):,}" if kernels else 0
    return {"count": count, "s": "" if len(kernels) == 1 else "s", "share": share, "icon": icon}


def _groups(verdict: Verdict) -> list[GroupRow]:
    return [make_group_row(judged_group(g, verdict.findings)) for g in verdict.groups[:MAX_GROUPS]]


def _notes(verdict: Verdict) -> list[str]:
    notes = [escape_text(n, limit=TEXT_LIMIT) for n in verdict.notes[:MAX_NOTES]]
    if len(verdict.notes) > MAX_NOTES:
        notes.append(f"…and {len(verdict.notes) - MAX_NOTES} more notes.")
    return notes


def _links(links: VerdictLinks | None) -> tuple[str, list[tuple[str, str]]]:
    if links is None:
        return "", []
    parts = []
    for label, url in (("run page", links.run_url), ("workflow run", links.summary_url)):
        if (safe := safe_url(url)) is not None:
            parts.append(f"[{label}]({safe})")
    if links.artifact_name:
        artifact = escape_code(links.artifact_name, limit=100)
        parts.append(f"full verdict in artifact {artifact}")
        if links.artifact_charts and not links.charts:
            files = ", ".join(escape_code(f, limit=100) for f in links.artifact_charts)
            parts.append(f"charts in artifact {artifact}: {files}")
    charts = [
        (escape_text(label, limit=80), url)
        for label, u in links.charts
        if (url := safe_url(u)) is not None
    ]
    return " · ".join(parts), charts


def _tidy(text: str) -> str:
    """Template whitespace aside, one blank line between blocks."""
    return _BLANK_RUNS.sub("\n\n", text)


def _hard_cut(text: str, max_chars: int) -> str:
    note = "\n\n> ✂️ Cut to stay under GitHub's size limit.\n"
    return shorten(text, max_chars - len(note)) + note if len(text) > max_chars else text


@dataclass(frozen=True)
class _Budget:
    """How large a rendering may be, how its size is counted, and which kernels it lists.

    Attributes:
        limit: The most ``size`` may be.
        limit_name: The limit, as the "left out" note names it.
        every_kernel: List every kernel (the job summary): a first run's new kernels past the
            heaviest, and the unchanged ones in a collapsed table, where a comment counts them.
        size: The size of a rendering (characters for a comment, UTF-8 bytes for a summary).
        cut: Cuts the rendering without kernels when even that is too large.
    """

    limit: int
    limit_name: str
    every_kernel: bool = False
    size: Callable[[str], int] = len
    cut: Callable[[str, int], str] = _hard_cut


def _summary_cut(text: str, max_bytes: int) -> str:
    return cut_utf8(text, max_bytes, "\n\n> ✂️ Cut to stay under the job summary's size limit.\n")


def _utf8_size(text: str) -> int:
    return len(text.encode())


def render_verdict(
    verdict: Verdict, *, links: VerdictLinks | None = None, max_chars: int = 60_000
) -> str:
    """The sticky PR comment for ``verdict``.

    Args:
        verdict: The run's verdict.
        links: Optional run page, workflow run, chart images and artifact name.
        max_chars: Size budget; the least important kernels are left out to meet it.

    Returns:
        Markdown starting with the hidden marker ``verdict_marker(repo, pr, device)``.
    """
    return _render(verdict, links, _Budget(max_chars, "GitHub's comment size limit"))


def render_job_summary(
    verdict: Verdict, *, max_bytes: int, links: VerdictLinks | None = None
) -> str:
    """The verdict for the job summary: every kernel that ``max_bytes`` of UTF-8 can hold.

    GitHub shows a step's summary up to 1 MiB, not a comment's 65,536 characters, so the
    summary lists what the comment only counts: a first run's new kernels past the heaviest
    20, and the unchanged kernels in a collapsed table. The least important go first when a
    run is larger still (20,000 kernels).
    """
    budget = _Budget(
        max_bytes,
        "the job summary's size limit",
        every_kernel=True,
        size=_utf8_size,
        cut=_summary_cut,
    )
    return _render(verdict, links, budget)


def _render(verdict: Verdict, links: VerdictLinks | None, budget: _Budget) -> str:
    """The verdict in ``verdict.md.j2`` with as many kernels, worst first, as ``budget`` holds."""
    split = _split(verdict, every_new=budget.every_kernel)
    unchanged = _Listed(verdict)
    for kernel in split.unchanged if budget.every_kernel else ():
        unchanged.add(kernel, ())
    listed = len(split.listed)
    template = _env().get_template("verdict.md.j2")
    base = _base(verdict, split, links, budget)

    def render(keep: int) -> str:
        entries = split.listed.first(min(keep, listed))
        rows = [e.row for e in entries]
        return _tidy(
            template.render(
                **base,
                rows=rows[:VISIBLE_ROWS],
                more_rows=rows[VISIBLE_ROWS:],
                details=[d for e in entries for d in e.details],
                other=by_cause(split.other, verdict) if keep or not listed else [],
                unchanged_rows=[e.row for e in unchanged.first(max(keep - listed, 0))],
                omitted=listed + len(unchanged) - keep,
            )
        )

    total = listed + len(unchanged)
    return fit(render, total, budget.limit, budget.cut, budget.size)


def _base(
    verdict: Verdict, split: _Split, links: VerdictLinks | None, budget: _Budget
) -> dict[str, Any]:
    """What every rendering of ``verdict`` shares, whichever kernels it keeps."""
    footer, charts = _links(links)
    return {
        "marker": verdict_marker(verdict.repo, verdict.pull_request, verdict.device),
        "v": _headline(verdict),
        "unchanged": _counted(split.unchanged, "✅"),
        "stored": _counted(split.stored, "🆕") | {"why": _why_unjudged(verdict)},
        "notes": _notes(verdict),
        "links": footer,
        "charts": charts,
        "groups": _groups(verdict),
        "baseline_note": escape_text(BASELINE_NOTE, limit=TEXT_LIMIT),
        "more": _listed_as(verdict),
        "limit_name": budget.limit_name,
    }


def render_check_summary(verdict: Verdict, *, max_chars: int = CHECK_OUTPUT_LIMIT) -> str:
    """The shorter check-run summary: headline, the worst kernels, the unchanged count."""
    split = _split(verdict)
    rows = [e.row for e in split.listed.first(CHECK_ROWS)]
    text = (
        _env()
        .get_template("check_summary.md.j2")
        .render(
            v=_headline(verdict),
            rows=rows,
            hidden=len(split.listed) - len(rows),
            unchanged=_counted(split.unchanged, "✅"),
            stored=_counted(split.stored, "🆕") | {"why": _why_unjudged(verdict)},
            more=_listed_as(verdict),
            notes=_notes(verdict)[:5],
            groups=_groups(verdict),
        )
    )
    return _hard_cut(_tidy(text), max_chars)


def check_title(verdict: Verdict) -> str:
    """One line for the check-run title or commit-status description (<= 140 characters)."""
    head = _headline(verdict)
    device = shorten(verdict.device or "unknown device", 40)
    return shorten(f"{head['conclusion']}: {head['counts']} on {device}", 140)
