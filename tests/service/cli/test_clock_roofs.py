"""Real reports at base clocks are judged on the datasheet roof at those clocks (issue 30)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors import collect
from rules import ClockedRoof, Roof, Verdict, builtin_catalog, place_run
from service.cli import run
from service.pipeline.roofs import choose_roof
from service.store.db import open_store, session_scope
from service.store.devices import run_roofs
from service.store.queries import get_run_record

CUTLASS = "ncu-rep/panjd123_cutlass__report-s4.ncu-rep"  # A100 80GB PCIe, --clock-control base
SGEMM = "ncu-rep/tanvisharma_nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep"
RTX4090_NCU = "ncu-rep/victor-lvsy_seq_align__profile.ncu-rep"  # SM and memory clocks per kernel
RTX4090_TRACE = "other/xytpai_nvbench__test_kineto_trace.json"  # Kineto: no clock recorded


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


def _checked(folder: Path, *reports: Path) -> Verdict:
    """The verdict of a check of ``reports`` as one run, in a store of its own in ``folder``."""
    folder.mkdir()
    out, db = folder / "verdict.json", f"sqlite:///{folder / 'history.db'}"
    argv = ["check", *map(str, reports), "--repo", "acme/k", "--commit", "c1", "--branch", "main"]
    assert run([*argv, "--db", db, "--format", "json", "--output", str(out)]) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


def test_a_report_without_clocks_keeps_its_percents_beside_an_ncu_report(corpus_dir, tmp_path):
    """A Kineto trace's memcpy read 369.9% alone, 379.2% beside an ncu report of the same card.

    Its kernels were placed on the datasheet roof scaled to the ncu kernels' clocks (DRAM
    x0.975), clocks nobody recorded for them.
    """
    ncu, trace = corpus_dir / RTX4090_NCU, corpus_dir / RTX4090_TRACE
    alone = {
        k.key: k.percent_of_roof
        for verdict in (_checked(tmp_path / "ncu", ncu), _checked(tmp_path / "trace", trace))
        for k in verdict.kernels
    }
    together = _checked(tmp_path / "both", ncu, trace)
    assert {k.key: k.percent_of_roof for k in together.kernels} == alone
    memcpy = next(k for k in together.kernels if k.name.startswith("Memcpy DtoD"))
    assert memcpy.percent_of_roof == pytest.approx(369.9, abs=0.05)
    [note] = [n for n in together.notes if "datasheet roof is scaled" in n]
    assert "scaled to the clocks of victor-lvsy_seq_align__profile.ncu-rep (2 kernels)" in note
    assert "xytpai_nvbench__test_kineto_trace.json (3 kernels) records no clock" in note


def test_the_stored_roof_places_each_kernel_as_the_check_did(corpus_dir, tmp_path):
    """A stored run placed again on its stored roof (the compare page) gives the stored figures."""
    ncu, trace = corpus_dir / RTX4090_NCU, corpus_dir / RTX4090_TRACE
    verdict = _checked(tmp_path / "both", ncu, trace)
    engine = open_store(f"sqlite:///{tmp_path / 'both' / 'history.db'}")
    try:
        with session_scope(engine, readonly=True) as session:
            roof = run_roofs(session=session, run_ids=[1])[1]
            record = get_run_record(session=session, run_id=1)
    finally:
        engine.dispose()
    assert isinstance(roof, ClockedRoof) and roof.unscaled.bandwidth_byte_per_s["dram"] == 1008e9
    again = place_run(record, roof)
    assert {k.key: k.percent_of_roof for k in verdict.kernels} == {
        k.key: again[k.key].percent_of_roof for k in verdict.kernels
    }
