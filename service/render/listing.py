"""Which of a verdict's kernels a rendering lists, counts as unchanged, or only counts as new.

``split_kernels`` walks the kernels worst first (``ranking``): those with findings or a status
other than unchanged are listed (their rows and details built only when a rendering keeps
them, ``Listed``), a first run's new kernels past the heaviest ``VISIBLE_ROWS`` are counted,
and findings of no kernel are kept apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rules import Finding, KernelStatus, KernelVerdict, Verdict
from service.render.causes import by_cause
from service.render.names import ellipsize_middle, kept_apart, visible
from service.render.ranking import far_off_unjudged, is_listed, ranked_kernels, timed_alone
from service.render.verdict_view import NAME_LIMIT, Entry, make_row

#: Rows in the visible table; the rest go to a collapsed table.
VISIBLE_ROWS = 20


class Listed:
    """The listed kernels, most important first; each one's row and details built when shown.

    A comment cut to GitHub's size limit shows a few dozen of hundreds of changed kernels.
    """

    def __init__(self, verdict: Verdict) -> None:
        self._verdict = verdict
        self._kernels: list[tuple[KernelVerdict, Sequence[Finding]]] = []
        self._entries: list[Entry] = []
        self._names: list[str] = []  # each entry's row's name, as shown
        self._texts: list[str] = []  # each listed kernel's name, visible (``names.visible``)
        self._cuts: list[str] = []  # and cut (``names.ellipsize_middle``)

    def __len__(self) -> int:
        return len(self._kernels)

    def add(self, kernel: KernelVerdict, found: Sequence[Finding]) -> None:
        """List ``kernel`` next, with its findings ``found``."""
        self._kernels.append((kernel, found))

    def first(self, keep: int) -> list[Entry]:
        """The first ``keep`` entries (each built once, again if its name's cut moved).

        No two rows show one name: names whose cuts collide are cut where they differ.
        """
        kept = self._kernels[:keep]
        for kernel, _ in kept[len(self._texts) :]:  # each name cut once: 20,000 in a summary
            self._texts.append(visible(kernel.name))
            self._cuts.append(ellipsize_middle(self._texts[-1], NAME_LIMIT))
        shown = kept_apart(self._texts[: len(kept)], self._cuts[: len(kept)], NAME_LIMIT)
        for index, ((kernel, found), name) in enumerate(zip(kept, shown, strict=True)):
            if index == len(self._entries):
                self._entries.append(self._entry(kernel, found, name))
                self._names.append(name)
            elif self._names[index] != name:
                self._entries[index] = self._entry(kernel, found, name)
                self._names[index] = name
        return self._entries[:keep]

    def _entry(self, kernel: KernelVerdict, found: Sequence[Finding], name: str) -> Entry:
        """``kernel``'s row and details, its name shown as ``name``."""
        ordered = sorted(found, key=lambda f: (not f.counts, f.severity.rank))
        return Entry(make_row(kernel, found, name), tuple(by_cause(ordered, self._verdict, name)))


@dataclass
class Split:
    """A verdict's kernels as a rendering takes them (``split_kernels``)."""

    listed: Listed
    unchanged: list[KernelVerdict] = field(default_factory=list)
    other: list[Finding] = field(default_factory=list)
    stored: list[KernelVerdict] = field(default_factory=list)  # new, not listed (first run)


def split_kernels(verdict: Verdict, *, every_new: bool = False) -> Split:
    """The listed kernels, the unchanged, findings of no kernel, and new kernels only counted.

    A first run's new kernels past the heaviest ``VISIBLE_ROWS`` are only counted unless
    ``every_new``.
    """
    keys = {k.key for k in verdict.kernels}
    split = Split(Listed(verdict), other=[f for f in verdict.findings if f.kernel not in keys])
    alone = timed_alone(verdict)
    for kernel, found in ranked_kernels(verdict):
        if not is_listed(kernel, found):
            split.unchanged.append(kernel)
        elif (
            verdict.judged_nothing
            and not every_new
            and only_new(kernel, found, timed=alone)
            and len(split.listed) >= VISIBLE_ROWS
        ):
            # A first run's kernels are all new: its heaviest are the roofline's first
            # snapshot, the rest a count (rows of them would fill the comment to its limit).
            split.stored.append(kernel)
        else:
            split.listed.add(kernel, found)
    split.other.sort(key=lambda f: (not f.counts, f.severity.rank))
    return split


def only_new(kernel: KernelVerdict, found: Sequence[Finding], *, timed: bool = False) -> bool:
    """New, nothing found, near any runs it has: nothing to act on yet.

    Fully placed, too, unless the whole run is ``timed`` alone (``ranking.timed_alone``).
    """
    return (
        kernel.status == KernelStatus.NEW
        and not found
        and (timed or not kernel.missing)
        and not far_off_unjudged(kernel)
    )
