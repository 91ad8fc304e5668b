"""A card change whose runs mix an ncu report (clocks) with a roofguard CSV (none), for real.

30 nights of a copy kernel on an RTX 3090, then `roofguard check` on an RTX 4090 of a real ncu
report (SM and memory clocks per kernel: DRAM x0.975) beside a CSV of the copy. The copy's
percent of roof is on the datasheet roof as it is (``rules.ClockedRoof``); what it is expected
to take on the other card, and `roofguard compare`'s figures, must be from that roof too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from device_fleet import REPO, Work, datasheet, stored_history

from service.cli import run

RTX4090_NCU = "ncu-rep/victor-lvsy_seq_align__profile.ncu-rep"
OLD, NEW = "RTX-3090", "RTX-4090"
COPY = {"copy": Work({"fp32": 1e6}, {"dram": 2e9}, {OLD: 85.0, NEW: 83.0})}


def _csv(folder: Path, night: int) -> Path:
    """The copy on the RTX 4090 at 83% of its datasheet roof, as a roofguard CSV."""
    path = folder / f"copy-{night}.csv"
    seconds = COPY["copy"].time_on(NEW)
    lines = ["# device: NVIDIA GeForce RTX 4090", "name,key,duration_s,flops_fp32,bytes_dram"]
    path.write_text("\n".join([*lines, f"copy,copy,{seconds!r},1000000,2000000000", ""]))
    return path


def _check(store: tuple[Path, str, Path], night: int, *how: str) -> dict:
    """`roofguard check` of the ncu report and the CSV as one run on day ``night`` of April."""
    folder, url, ncu = store
    out = folder / "verdict.json"
    argv = ["check", str(ncu), str(_csv(folder, night)), "--repo", REPO, "--commit", f"c{night}"]
    argv += ["--timestamp", f"2026-04-{night:02d}T00:00:00Z", "--db", url, *how]
    assert run([*argv, "--format", "json", "--output", str(out)]) in (0, 1)
    return json.loads(out.read_text())


def _bandwidth_ratio() -> float:
    """The copy's roof time on the RTX 4090's datasheet roof over the RTX 3090's."""
    old, new = datasheet(OLD), datasheet(NEW)
    return old.bandwidth_byte_per_s["dram"] / new.bandwidth_byte_per_s["dram"]


@pytest.fixture
def moved(tmp_path: Path, corpus_dir: Path) -> tuple[Path, str, Path]:
    """The folder the checks write in, a store of 30 RTX 3090 nights in it, the ncu report."""
    return tmp_path, stored_history(tmp_path, OLD, COPY), corpus_dir / RTX4090_NCU


def test_a_mixed_pr_on_the_new_card_expects_the_copy_on_its_own_roof(moved) -> None:
    """The copy read 85.1% of its RTX 3090 level's roof, the 4090's at the ncu report's clock."""
    verdict = _check(moved, 1, "--branch", "feature", "--pr", "7")
    assert any("copy-1.csv (1 kernel) records no clock" in note for note in verdict["notes"])
    copy = next(k for k in verdict["kernels"] if k["key"] == "copy")
    assert copy["baseline"]["device"] == OLD and copy["percent_of_roof"] == pytest.approx(83.0)
    assert copy["expected_time_ratio"] == pytest.approx(_bandwidth_ratio())
    assert copy["percent_of_baseline_roof"] == pytest.approx(83.0, rel=5e-3)


def test_compare_reads_the_copy_of_mixed_nights_on_its_own_roof(moved, capsys) -> None:
    """Either card first, and forecast from the mixed card alone: the datasheet roof, not x0.975."""
    url = moved[1]
    for night in (2, 3):
        _check(moved, night, "--branch", "main", "--kind", "nightly")
    capsys.readouterr()

    def rows(*args: str) -> dict[str, dict]:
        code = run(["compare", "--repo", REPO, "--db", url, "--format", "json", *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return {r["device"]: r for r in json.loads(out) if r["kernel"] == "copy"}

    assert rows("--devices", f"{OLD},{NEW}")[NEW]["expected_time_ratio"] == pytest.approx(
        _bandwidth_ratio()
    )
    assert rows("--devices", f"{NEW},{OLD}")[OLD]["expected_time_ratio"] == pytest.approx(
        1 / _bandwidth_ratio()
    )
    ahead = rows("--devices", NEW, "--forecast", "H100-SXM5")["H100-SXM5"]
    h100 = datasheet("H100-SXM5").bandwidth_byte_per_s["dram"]
    assert ahead["source"] == NEW
    assert ahead["expected_time_ratio"] == pytest.approx(1.008e12 / h100)
