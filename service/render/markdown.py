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
from dataclasses import dataclass
from typing import Any

import jinja2

from rules import Conclusion, KernelStatus, KernelVerdict, Verdict, shown_conclusion
from service.render.causes import run_and_group_causes
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
from service.render.judged import (
    BASELINE_NOTE,
    judged_group,
    lower_bound_legend,
    shows_a_baseline,
)
from service.render.listing import VISIBLE_ROWS, Listed, Split, split_kernels
from service.render.names import shown_name
from service.render.ranking import cleared_line
from service.render.sparklines import runner_legend
from service.render.story import no_baseline, time_story
from service.render.verdict_view import (
    TEXT_LIMIT,
    GroupRow,
    conclusion_icon,
    fmt_share,
    make_group_row,
)

#: GitHub's limit on a comment body; the default budget keeps a margin below it.
GITHUB_COMMENT_LIMIT = 65_536
#: Check-run ``output.summary`` and ``output.text`` limit.
CHECK_OUTPUT_LIMIT = 65_535
#: Rows in the check summary.
CHECK_ROWS = 10
MAX_NOTES = 20
MAX_GROUPS = 30
#: Groups whose findings get a section of their own in a comment (worst first): unbounded,
#: 100 failing groups' sections filled it before a single kernel was named.
MAX_GROUP_SECTIONS = 10
_BLANK_RUNS = re.compile(r"\n{3,}")
#: The comment's note that it left kernels out (``verdict.md.j2``) or was cut (``_hard_cut``):
#: a line of its own, which no name or note begins (each is escaped to one line, inside one).
_CUT_NOTE = re.compile(r"^> ✂️ ", re.MULTILINE)


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


def _stored(split: Split, verdict: Verdict) -> dict[str, Any]:
    """The line counting new kernels not listed, with why they were not judged."""
    return _counted(split.stored, "🆕") | {"why": _why_unjudged(verdict)}


def _why_unjudged(verdict: Verdict) -> str:
    """Why a run's new kernels were not judged: no baseline, or one the gate cannot use yet."""
    if verdict.baseline_runs == 0:
        return "there is no baseline to judge them against yet"
    return "their baseline has too few runs to judge them yet"


def _listed_as(verdict: Verdict) -> str:
    """What the listed kernels are: on a first run all are new, else they changed."""
    return "new" if verdict.judged_nothing else "changed"


def _title(verdict: Verdict) -> str:
    """``no regressions``; a first run's ``nothing judged yet`` (its check is neutral)."""
    if verdict.not_judged:
        return "nothing judged yet"
    return {
        Conclusion.FAIL: "performance regressions",
        Conclusion.WARN: "warnings",
        Conclusion.PASS: "no regressions",
    }[verdict.conclusion]


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
    others = [r for r in verdict.roofs if r != verdict.roof]
    n = sum(1 for k in verdict.kernels if k.status != KernelStatus.MISSING)  # the run's own kernels
    return {
        "icon": conclusion_icon(verdict) if verdict.trusted else "⚠️",
        "title": f"{_title(verdict) if verdict.trusted else 'no regression verdict'} on {device}",
        "conclusion": shown_conclusion(verdict.conclusion, verdict.judged_nothing).upper(),
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
        group_sections: The most groups whose findings get a section.
        size: The size of a rendering (characters for a comment, UTF-8 bytes for a summary).
        cut: Cuts the rendering without kernels when even that is too large.
    """

    limit: int
    limit_name: str
    every_kernel: bool = False
    size: Callable[[str], int] = len
    cut: Callable[[str, int], str] = _hard_cut
    group_sections: int = MAX_GROUP_SECTIONS


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
        group_sections=10 * MAX_GROUP_SECTIONS,
    )
    return _render(verdict, links, budget)


def _render(verdict: Verdict, links: VerdictLinks | None, budget: _Budget) -> str:
    """The verdict in ``verdict.md.j2`` with as many kernels, worst first, as ``budget`` holds."""
    split = split_kernels(verdict, every_new=budget.every_kernel)
    unchanged = Listed(verdict)
    for kernel in split.unchanged if budget.every_kernel else ():
        unchanged.add(kernel, ())
    listed = len(split.listed)
    template = _env().get_template("verdict.md.j2")
    base = _base(verdict, split, links, budget)
    other, other_left = run_and_group_causes(split.other, verdict, budget.group_sections)

    def render(keep: int) -> str:
        entries = split.listed.first(min(keep, listed))
        rows = [e.row for e in entries]
        with_other = bool(keep or not listed)
        return _tidy(
            template.render(
                **base,
                rows=rows[:VISIBLE_ROWS],
                more_rows=rows[VISIBLE_ROWS:],
                details=[d for e in entries for d in e.details],
                other=other if with_other else [],
                other_left=other_left if with_other else 0,
                unchanged_rows=[e.row for e in unchanged.first(max(keep - listed, 0))],
                omitted=listed + len(unchanged) - keep,
            )
        )

    total = listed + len(unchanged)
    return fit(render, total, budget.limit, budget.cut, budget.size)


def _base(
    verdict: Verdict, split: Split, links: VerdictLinks | None, budget: _Budget
) -> dict[str, Any]:
    """What every rendering of ``verdict`` shares, whichever kernels it keeps."""
    footer, charts = _links(links)
    has_baseline = shows_a_baseline(verdict)
    return {
        "marker": verdict_marker(verdict.repo, verdict.pull_request, verdict.device),
        "v": _headline(verdict),
        "unchanged": _counted(split.unchanged, "✅"),
        "cleared": cleared_line(verdict, lambda name: escape_code(shown_name(name, 80))),
        "stored": _stored(split, verdict),
        "notes": _notes(verdict),
        "links": footer,
        "charts": charts,
        "groups": _groups(verdict),
        "groups_left": max(len(verdict.groups) - MAX_GROUPS, 0),
        "baseline_note": _table_note(verdict, has_baseline),
        "has_baseline": has_baseline,
        "more": _listed_as(verdict),
        "limit_name": budget.limit_name,
    }


def _table_note(verdict: Verdict, has_baseline: bool) -> str:
    """The tables' footnote: their baselines (where a row states one), the trend's mark, ``≥``."""
    baseline = BASELINE_NOTE + runner_legend(verdict) if has_baseline else ""
    legend = lower_bound_legend(verdict)
    return escape_text(f"{baseline} {legend}".strip(), limit=TEXT_LIMIT)


def render_check_summary(
    verdict: Verdict, *, comment: str | None = None, max_chars: int = CHECK_OUTPUT_LIMIT
) -> str:
    """The shorter check-run summary: headline, the worst kernels, the unchanged count.

    Args:
        verdict: The run's verdict.
        comment: The PR comment (``render_verdict``), which is the check's text below the
            summary: where the kernels past the summary's rows are listed, or some left out.
        max_chars: GitHub's limit on the summary.
    """
    split = split_kernels(verdict)
    rows = [e.row for e in split.listed.first(CHECK_ROWS)]
    text = (
        _env()
        .get_template("check_summary.md.j2")
        .render(
            v=_headline(verdict),
            rows=rows,
            hidden=len(split.listed) - len(rows),
            hidden_where=_listed_where(verdict, comment),
            unchanged=_counted(split.unchanged, "✅"),
            stored=_stored(split, verdict),
            more=_listed_as(verdict),
            notes=_notes(verdict)[:5],
            groups=_groups(verdict),
            has_baseline=shows_a_baseline(verdict),
        )
    )
    return _hard_cut(_tidy(text), max_chars)


def _listed_where(verdict: Verdict, comment: str | None) -> str:
    """Where the kernels past the check summary's rows are: the comment only when it has all."""
    everything = "the verdict JSON (`--format json`) has all of them"
    if comment is None:
        return everything
    below = "the details below"
    if verdict.pull_request is not None:
        below = "the PR comment and the details below"
    if _CUT_NOTE.search(comment):
        return (
            f"{below} leave the least important out to stay under GitHub's size limit; {everything}"
        )
    return f"{below} list them all"


def check_title(verdict: Verdict) -> str:
    """One line for the check-run title or commit-status description (<= 140 characters)."""
    head = _headline(verdict)
    device = shorten(verdict.device or "unknown device", 40)
    return shorten(f"{head['conclusion']}: {head['counts']} on {device}", 140)
