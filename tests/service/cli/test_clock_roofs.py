"""Real reports at base clocks are judged on the datasheet roof at those clocks (issue 30)."""

from __future__ import annotations

import pytest

from collectors import collect
from rules import Roof, builtin_catalog
from service.cli import run
from service.pipeline.roofs import choose_roof

CUTLASS = "ncu-rep/panjd123_cutlass__report-s4.ncu-rep"  # A100 80GB PCIe, --clock-control base
SGEMM = "ncu-rep/tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep"


def test_inspect_names_the_clocks_and_the_scale(corpus_dir, capsys):
    assert run(["inspect", str(corpus_dir / CUTLASS)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "roof: A100-PCIe-80GB (datasheet)" in out
    assert (
        "A100-PCIe-80GB's datasheet roof is scaled to the report's clocks: SM clock 1.06 GHz "
        "against the 1.41 GHz boost clock: FLOP/s peaks and L1/L2 bandwidth x0.755" in out
    )
    assert "memory clock 1.51 GHz is the nominal one: DRAM bandwidth as is" in out


@pytest.mark.parametrize("name", [CUTLASS, SGEMM])
def test_the_scaled_datasheet_peak_is_the_peak_the_report_implies(corpus_dir, name):
    record = collect(corpus_dir / name)
    assert record.profiler.clock_control == "base"
    choice = choose_roof(record, device=None, source="datasheet", catalog=builtin_catalog())
    # ncu's own peak (FFMA/cycle x the clock it measured) and the datasheet at that clock agree
    report = record.device.peak_flop_per_s["fp32"]
    assert choice.roof.peak_flop_per_s["fp32"] == pytest.approx(report, rel=0.02)
    spec = builtin_catalog().lookup(record.device.name)
    assert choice.roof.peak_flop_per_s["fp32"] < 0.9 * spec.peak_flop_per_s["fp32"]
    assert choice.note is not None and "boost clock" in choice.note


def test_measured_and_report_roofs_are_never_scaled(corpus_dir):
    record = collect(corpus_dir / CUTLASS)
    measured = Roof("A100-PCIe-80GB", "measured", {"fp32": 13.1e12}, {"dram": 1.7e12})
    catalog = builtin_catalog()
    chosen = choose_roof(record, device=None, source="measured", catalog=catalog, measured=measured)
    assert chosen.roof is measured and chosen.note is None
    report = choose_roof(record, device=None, source="report", catalog=catalog)
    assert report.roof.peak_flop_per_s == record.device.peak_flop_per_s and report.note is None
