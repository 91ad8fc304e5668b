"""The comment's size search finds what trying every kernel count would, with fewer renders."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from service.render import markdown
from service.render.fit import NOTE_MARGIN, fit

NOTE = 230  # the "left out" note, shown below the full count


def comment(sizes: list[int]) -> tuple[list[int], Callable[[int], str]]:
    """A render whose comment holds the first ``keep`` kernels of ``sizes`` (and the note)."""
    probes: list[int] = []

    def render(keep: int) -> str:
        probes.append(keep)
        note = NOTE if keep < len(sizes) else 0
        return "x" * (500 + sum(sizes[:keep]) + note)

    return probes, render


def cut(text: str, max_chars: int) -> str:
    return "cut:" + text[: max_chars - 4]


def every_count(sizes: list[int], max_chars: int) -> str:
    _, render = comment(sizes)
    full = render(len(sizes))
    if len(full) <= max_chars:
        return full
    fitting = [k for k in range(len(sizes)) if len(render(k)) <= max_chars]
    return render(max(fitting)) if fitting else cut(render(0), max_chars)


@pytest.mark.parametrize("seed", range(40))
def test_same_comment_as_trying_every_count(seed: int):
    rng = random.Random(seed)
    sizes = [rng.choice([50, 400, 1500, 6000]) for _ in range(rng.randint(0, 300))]
    for max_chars in (400, 700, 2_000, 20_000, 60_000, 500 + sum(sizes), 10**7):
        _, render = comment(sizes)
        assert fit(render, len(sizes), max_chars, cut) == every_count(sizes, max_chars)


def test_full_comment_kept_when_dropping_the_note_makes_it_fit():
    sizes = [100] * 10
    max_chars = 500 + 1_000  # the full comment fits; 9 kernels and the note do not
    _, render = comment(sizes)
    assert len(fit(render, 10, max_chars, cut)) == max_chars


def test_margin_beyond_the_templates_note():
    template = Path(markdown.__file__).parent / "templates" / "verdict.md.j2"
    note = [line for line in template.read_text().splitlines() if "left out" in line]
    assert note and len(note[0]) + 4 < NOTE_MARGIN  # the line and its blank lines


def test_a_cut_comment_builds_few_kernels():
    sizes = [1_500] * 250
    probes, render = comment(sizes)
    text = fit(render, len(sizes), 60_000, cut)
    assert len(text) == 500 + 39 * 1_500 + NOTE
    assert max(probes) < 80 and len(probes) <= 8
