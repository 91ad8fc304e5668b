"""``roofguard inspect``: the JSON holds every note the text shows or counts.

An H800 report's text ended "note: ... and 1 more (see --json)", and the JSON had no such
note: the roof's (how the datasheet roof is scaled to the report's clocks) was added to the
run after the JSON was written, and only ``check`` showed it.
"""

from __future__ import annotations

import re

from collectors.schema import RunRecord
from service.cli import run

SCALED_H800 = "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"  # 5 collector notes and the roof's


def test_the_json_holds_every_note_the_text_shows_or_counts(corpus_dir, capsys):
    report = str(corpus_dir / SCALED_H800)
    assert run(["inspect", report]) == 0
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: ")]
    assert run(["inspect", report, "--json"]) == 0
    notes = RunRecord.model_validate_json(capsys.readouterr().out).notes
    more = re.fullmatch(r"note: \.\.\. and (\d+) more \(see --json\)", shown[-1])
    assert more is not None
    assert len(notes) == len(shown) - 1 + int(more.group(1))
    for line, note in zip(shown[:-1], notes, strict=False):
        assert note.startswith(line.removeprefix("note: "))  # a long note wraps in the text
    assert any("H800-SXM's datasheet roof is scaled" in note for note in notes)


def test_the_roofs_note_leads_the_text_whatever_the_collector_noted(corpus_dir, capsys):
    assert run(["inspect", str(corpus_dir / SCALED_H800)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: ")]
    assert notes[0].startswith("note: H800-SXM's datasheet roof is scaled to the report's clocks")
