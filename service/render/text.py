"""The verdict for a terminal: rich tables and plain words, no GitHub markdown escapes.

``check``, ``demo`` and ``inspect`` print this on a terminal; markdown is for files, the PR
comment and the job summary. Kernel names are data: they go into ``rich.text.Text`` objects,
never into console markup, and terminal control characters are dropped from them.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from rules import (
    NOT_JUDGED,
    Finding,
    GroupVerdict,
    KernelStatus,
    KernelVerdict,
    Severity,
    Verdict,
    is_cleared,
    one_decimal,
    shown_conclusion,
)
from service.render.bindings import across_roofs, rebound
from service.render.causes import findings_by_cause
from service.render.devices import judged_against, scaled_history
from service.render.escape import strip_terminal_escapes
from service.render.figures import figures, time_change
from service.render.judged import (
    BASELINE_NOTE,
    judged_group,
    judged_kernel,
    lower_bound_legend,
    shows_a_baseline,
)
from service.render.names import distinct_cuts, ellipsize_middle
from service.render.ranking import (
    cleared_line,
    is_listed,
    ranked_kernels,
    timed_alone,
    unplaced,
)
from service.render.story import no_baseline, time_story
from service.render.text_figures import FigureRows
from service.render.text_fit import (
    Cell,
    Column,
    fitted_hiding,
    hidden_note,
    natural_table,
    without,
)
from service.render.verdict_view import (
    ICONS,
    at_least,
    binding_tier,
    fmt_pct,
    fmt_share,
    kernel_share,
    kernel_time,
    regime_text,
    remeasured,
    status_words,
    target_text,
    verdict_words,
    worst,
)

#: Rows of the kernel table; the rest are counted.
MAX_ROWS = 30
#: ``ranked_kernels``' answer: every kernel with its findings, most important first.
Ranked = list[tuple[KernelVerdict, list[Finding]]]
NAME_WIDTH = 48
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_STYLE = {Severity.FAIL: "bold red", Severity.WARN: "yellow", Severity.INFO: "cyan"}
_CONCLUSION_STYLE = {
    "fail": "bold red",
    "warn": "bold yellow",
    "pass": "bold green",
    NOT_JUDGED: "bold",
}


def clean(text: str, width: int | None = None) -> str:
    """``text`` without terminal control characters, cut in the middle beyond ``width``."""
    text = _CONTROL.sub("", strip_terminal_escapes(text))  # whole sequences, then strays
    if width is None:
        return text
    return ellipsize_middle(text, width)


def intensity_text(kernel: KernelVerdict) -> str:
    """The binding tier's intensity in FLOP/byte: ``441 (dram)``."""
    tier = binding_tier(kernel)
    if tier is None:
        return "—"
    value = kernel.intensity[tier]
    return f"{'∞' if value == float('inf') else f'{value:.3g}'} ({tier})"


def percent_text(kernel: KernelVerdict) -> str:
    """Percent of roof at baseline → now, like for like: ``71.8 → 4.8% of tensor_bf16``.

    Re-measurements (``check --rerun``) follow: ``71.8 → 4.8%, re-measured 4.7, 4.9%``.
    """
    text, again = _percent_figure(kernel), remeasured(kernel)
    return f"{text}, {again}" if again else text


def _percent_figure(kernel: KernelVerdict) -> str:
    base = kernel.baseline
    if kernel.status == KernelStatus.MISSING:
        known = base is not None and base.center is not None
        return f"{fmt_pct(base.center)} → missing" if known and base else "missing"
    if base is not None and base.metric == "time_s":
        return "— (judged on time)"
    old = rebound(kernel)
    now = kernel.percent_of_baseline_roof if old else kernel.percent_of_roof
    text = ("" if old else at_least(kernel)) + fmt_pct(now)
    if base is not None and base.center is not None:
        scaled = scaled_history(base)  # another card's level, scaled to this one
        card = f" ({scaled})" if scaled else ""
        text = f"{one_decimal(base.center)}{card} → {text}"
    elif kernel.status in (KernelStatus.NEW, KernelStatus.ACCEPTED):
        text = f"{kernel.status}: {text}"
    if old:
        text += f" of {old} ({fmt_pct(kernel.percent_of_roof)} of {kernel.binding})"
    elif across_roofs(kernel) and base is not None and base.center is not None:
        text = f"{fmt_pct(base.center)} of {base.binding} → {fmt_pct(now)} of {kernel.binding}"
    return text


def _verdict_cell(kernel: KernelVerdict, found: Sequence[Finding]) -> Text:
    top = worst(found)
    if top is None:
        return Text(status_words(kernel))
    return Text(verdict_words(found), style=_STYLE[top.severity], overflow="fold")


#: The kernel table's columns after the name. Where the terminal lacks the room for every
#: cell on one line, the wrapping ones are capped: a long cell wraps inside its column.
_KERNEL_COLUMNS = (
    Column("share", "right"),
    Column("time (baseline → now)", "right", wraps=True, floor=22),  # a plain change on a line
    Column("% of roof (baseline → now)", "right", wraps=True, floor=16, cap=30),
    Column("regime (binding)", wraps=True, floor=14, cap=28),
    Column("FLOP/B (tier)", "right"),
    Column("verdict", wraps=True, floor=18, cap=32),
)


#: Hidden in this order when the terminal is too narrow for every column; the kernel, its
#: time, its percent of roof and the verdict always stay.
SPARE_COLUMNS = ("FLOP/B (tier)", "share", "regime (binding)")
#: Then names fold from this many characters on.
SQUEEZED_NAME = 20


def kernel_table(
    verdict: Verdict, width: int | None = None, ranked: Ranked | None = None
) -> tuple[Table, int]:
    """The kernels that changed or have findings (worst first), and how many are unchanged.

    ``width``: the terminal's columns; the table hides columns to fit it (``SPARE_COLUMNS``).
    ``ranked``: ``ranked_kernels(verdict)``, where the caller has it already.
    """
    # The markdown's order and selection, so the row limit cuts the same least important ones.
    ranked = ranked_kernels(verdict) if ranked is None else ranked
    listed = [(k, found) for k, found in ranked if is_listed(k, found)]
    # Unplaced kernels past the limit still get a row: the markdown lists every one of them,
    # and a kernel roofguard cannot judge on the roof is what a reader must not miss (unless
    # the whole suite is timed alone).
    past = [] if timed_alone(verdict) else listed[MAX_ROWS:]
    rows = listed[:MAX_ROWS] + [(k, f) for k, f in past if unplaced(k)]
    names = distinct_cuts([clean(kernel.name) for kernel, _ in rows], NAME_WIDTH)
    cells = [_kernel_cells(judged_kernel(k, found), found) for k, found in rows]
    table, hidden = _fitted_grid(names, cells, width)
    notes = [hidden_note(hidden, width)] if hidden and width else []
    if len(listed) > len(rows):
        what = "new kernels stored" if verdict.judged_nothing else "changed kernels"
        notes.append(f"…and {len(listed) - len(rows)} more {what} (see --format json)")
    table.caption = "; ".join(notes) or None
    return table, len(verdict.kernels) - len(listed)


def _kernel_cells(kernel: KernelVerdict, found: Sequence[Finding]) -> tuple[Cell, ...]:
    """A row's cells after the name, in ``_KERNEL_COLUMNS`` order (the finding's figures)."""
    return (
        kernel_share(kernel),
        kernel_time(kernel),
        percent_text(kernel),
        regime_text(kernel),
        intensity_text(kernel),
        _verdict_cell(kernel, found),
    )


def _fitted_grid(
    names: Sequence[str], cells: Sequence[tuple[Cell, ...]], width: int | None
) -> tuple[Table, tuple[str, ...]]:
    """The kernel table no wider than ``width``, and the headers of the columns it hides.

    Every column when ``width`` is None; when hiding ``SPARE_COLUMNS`` is not enough, names
    fold and every column wraps; when even that is not enough, the console crops it.
    """
    rows = [(Text(name), *row) for name, row in zip(names, cells, strict=True)]
    columns = [Column("kernel"), *_KERNEL_COLUMNS]  # a cut name on one line
    if width is None:
        return natural_table(columns, rows), ()
    squeezed = [Column("kernel", folds=True, floor=SQUEEZED_NAME)]
    squeezed += [c._replace(wraps=True, floor=0) for c in _KERNEL_COLUMNS]
    found = fitted_hiding(columns, rows, width, SPARE_COLUMNS) or fitted_hiding(
        squeezed, rows, width, SPARE_COLUMNS
    )
    if found is None:  # the console crops even this
        return natural_table(*without(squeezed, rows, SPARE_COLUMNS)), SPARE_COLUMNS
    return found


def _arrow(before: float | None, now: float | None) -> str:
    return fmt_pct(now) if before is None else f"{one_decimal(before)} → {fmt_pct(now)}"


def group_table(groups: Sequence[GroupVerdict], findings: Sequence[Finding] = ()) -> Table:
    """Kernel groups: time, percent of roof and MFU, each against its baseline.

    A group with a finding shows that finding's level (``service.render.judged``).
    """
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in ("group", "share", "time (baseline → now)", "% of roof (baseline → now)"):
        table.add_column(header, justify="left" if header == "group" else "right")
    table.add_column("MFU (baseline → now)", justify="right")
    table.add_column("target", justify="right")
    for g in (judged_group(group, findings) for group in groups):
        mfu = "—" if g.mfu is None else f"{100 * g.mfu:.1f}%"
        if g.mfu_baseline is not None and g.mfu_baseline.center is not None:
            mfu = f"{100 * g.mfu_baseline.center:.1f}% → {mfu}"
        if g.mfu is not None and g.mfu_precision:
            mfu += f" of {g.mfu_precision}"
        table.add_row(
            Text(clean(g.name, NAME_WIDTH)),
            fmt_share(g.time_share),
            time_change(g.time_s, g.baseline.time_s if g.baseline else None),
            _arrow(g.baseline.center if g.baseline else None, g.percent_of_roof),
            mfu,
            target_text(g.target_percent, g.percent_of_roof),
        )
    return table


def finding_block(finding: Finding, evidence: Sequence[Finding] = ()) -> RenderableType:
    """One finding: rule and kernel, its message, its figures in words and units, advice.

    ``evidence``: the same kernel's other findings, one line each (one cause, one block).
    """
    name = clean(finding.kernel_name or finding.kernel or "(whole run)", 160)
    head = Text(f"{ICONS[finding.severity]} {finding.rule}: ", style=_STYLE[finding.severity])
    head.append(name, style="bold")
    grid = FigureRows([(label, clean(value)) for label, value in figures(finding)])
    parts: list[RenderableType] = [head, Text(clean(finding.message)), grid]
    if finding.profile:
        parts.append(
            Text(f"profiler, against the baseline run: {clean('; '.join(finding.profile))}")
        )
    if finding.advice_text:
        parts.append(Text(f"advice: {finding.advice_text}", style="italic"))
    for other in evidence:
        parts.append(Text(f"  and {other.rule}: {clean(other.message)}", style="dim"))
    return Group(*parts, Text(""))


def finding_blocks(verdict: Verdict, ranked: Ranked | None = None) -> Iterator[RenderableType]:
    """Each cause's block (the verdict's order): the run's and groups', then ``MAX_ROWS`` kernels'.

    The kernels are the most important ones with findings, as the table ranks them (``ranked``:
    ``ranked_kernels(verdict)``, where the caller has it); the rest are counted. A
    20,000-kernel PR printed 13,248 blocks, 25 MB, sorted by kernel name.
    """
    asking = [f for f in verdict.findings if not is_cleared(f)]  # cleared: counted on a line
    asks = {id(f) for f in asking}
    ranked = ranked_kernels(verdict) if ranked is None else ranked
    asked = [k.key for k, found in ranked if any(id(f) in asks for f in found)]
    shown = set(asked[:MAX_ROWS])
    kernels = {k.key for k in verdict.kernels}
    left = 0
    for main, *evidence in findings_by_cause(asking):
        if main.kernel not in kernels or main.kernel in shown:
            yield finding_block(main, evidence)
        else:
            left += 1 + len(evidence)
    if left:
        more = len(asked) - len(shown)
        yield Text(f"…and {left:,} more finding(s) on {more:,} kernels (see --format json)")


def _headline_text(verdict: Verdict) -> Text:
    """``roofguard: FAIL · 1 regression, 2 warning(s) on H100-SXM5 · judged against …``."""
    conclusion = shown_conclusion(verdict.conclusion, verdict.judged_nothing)
    head = Text(f"roofguard: {conclusion.upper()}", style=_CONCLUSION_STYLE[conclusion])
    head.append(f" · {_counts(verdict)}")
    head.append(f" on {verdict.device or 'unknown device'}")
    head.append(f" · judged against {judged_against(verdict)}")
    return head


def _counts(verdict: Verdict) -> str:
    """The markdown headline's counts: regressions, warnings, preview findings (if any)."""
    preview = sum(1 for f in verdict.findings if not f.counts)
    previews = [f"{preview} preview finding(s)"] if preview else []
    counts = [verdict.regression_count, f"{verdict.warnings} warning(s)", *previews]
    if verdict.judged_nothing:  # say so first; a failing finding still shows
        quiet = not (verdict.regressions or verdict.warnings)
        shown = previews if quiet else counts
        return no_baseline(verdict) + (f"; {', '.join(shown)}" if shown else "")
    return ", ".join(counts)


def _kernel_lines(table: Table, unchanged: int, cleared: str) -> Iterator[RenderableType]:
    """The kernel table, the count of the others, and the suspects re-measurement cleared."""
    if table.row_count:
        yield table
        if unchanged:
            yield Text(f"{unchanged} other kernel(s) unchanged.")
    elif unchanged:
        yield Text(f"All {unchanged} kernel(s) unchanged.")
    if cleared:
        yield Text(clean(cleared))


def verdict_renderables(verdict: Verdict, width: int | None = None) -> Iterable[RenderableType]:
    """The verdict as rich renderables, headline first; the kernel table fits ``width``."""
    yield _headline_text(verdict)
    story = time_story(verdict, code=False)
    if story:
        yield Text(clean(story), style="bold")
    ranked = ranked_kernels(verdict)  # the table's rows and the findings shown, ranked once
    table, unchanged = kernel_table(verdict, width, ranked)
    yield from _kernel_lines(table, unchanged, cleared_line(verdict))
    if verdict.groups:
        yield group_table(verdict.groups, verdict.findings)
    if table.row_count or verdict.groups:
        baseline = BASELINE_NOTE if shows_a_baseline(verdict) else ""
        note = f"{baseline} {lower_bound_legend(verdict)}".strip()
        if note:
            yield Text(note, style="dim")
    yield from finding_blocks(verdict, ranked)
    for note in verdict.notes[:20]:
        yield Text(f"note: {clean(note)}")


def print_verdict(verdict: Verdict, console: Console) -> None:
    """Print the verdict on ``console``."""
    for part in verdict_renderables(verdict, console.width):
        console.print(part)


def render_verdict_text(verdict: Verdict, *, width: int = 200) -> str:
    """The terminal verdict as plain text (no colours), e.g. for tests and pipes."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, highlight=False)
    print_verdict(verdict, console)
    return buffer.getvalue()
