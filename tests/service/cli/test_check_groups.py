"""Kernel groups (``[[rules.groups]]``) judged through `roofguard check`, with a real config."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from csv_checks import HEADER

from rules.verdict import GroupVerdict, Verdict
from service.cli import run

FIRST = datetime(2026, 10, 1, 2, 0, tzinfo=UTC)
# 1e10 fp32 FLOPs take 0.15 ms at the H100's fp32 peak: gemm_a runs at 25% of its roof, the
# warm-up at 88%.
NIGHT = "gemm_a,{a},1e10,1e8,1\ngemm_warmup,{warmup},1e10,1e8,1\n"
GROUP = '[[rules.groups]]\nname = "gemm"\npattern = "gemm_*"\n'


def _check(tmp_path: Path, config: str, commit: str, day: int, rows: str, *more: Path) -> Verdict:
    """A nightly check on main of ``rows`` (CSV under ``header``) and ``more`` under ``config``."""
    (tmp_path / "roofguard.toml").write_text(config, encoding="utf-8")
    report, out = tmp_path / f"{commit}.csv", tmp_path / f"{commit}.json"
    report.write_text(rows if rows.startswith("name,") else HEADER + rows)
    args = ["check", str(report), *map(str, more), "--repo", "acme/groups", "--commit", commit]
    args += ["--branch", "main", "--kind", "nightly", "--device", "H100-SXM5"]
    args += ["--timestamp", (FIRST + timedelta(days=day)).isoformat()]
    args += ["--config", str(tmp_path / "roofguard.toml")]
    args += ["--db", f"sqlite:///{tmp_path / 'history.db'}", "--format", "json"]
    assert run([*args, "--output", str(out)]) in (0, 1)
    return Verdict.model_validate_json(out.read_text())


def _nights(tmp_path: Path, config: str, template: str, count: int = 10) -> Verdict:
    """``count`` nights of ``template`` (1% noise), then one more at its plain times."""
    for day in range(count):
        scale = 1 + 0.01 * ((day * 7) % 5 - 2)
        rows = template.format(a=0.0006 * scale, warmup=0.00017 * scale)
        _check(tmp_path, config, f"n{day:03d}", day, rows)
    return _check(tmp_path, config, "today", count, template.format(a=0.0006, warmup=0.00017))


def _group(verdict: Verdict, name: str) -> GroupVerdict:
    return next(g for g in verdict.groups if g.name == name)


def test_an_ignored_kernel_is_left_out_of_the_groups_baseline_too(tmp_path) -> None:
    """A warm-up in ``ignore_kernels`` left today's group but stayed in its baseline.

    The group read "24.9% of roof, level 38.8%": a roof-drop of a group whose one judged
    kernel ran as it did every night.
    """
    config = f'[rules]\nignore_kernels = ["*warmup*"]\n\n{GROUP}'
    verdict = _nights(tmp_path, config, NIGHT)
    group = _group(verdict, "gemm")
    assert group.kernels == ("gemm_a",)
    assert group.baseline is not None and group.baseline.center is not None
    assert group.percent_of_roof == pytest.approx(24.9, abs=0.05)
    assert group.baseline.center == pytest.approx(group.percent_of_roof, rel=0.01)
    assert group.mfu_baseline is not None and group.mfu_baseline.center is not None
    assert group.mfu_baseline.center == pytest.approx(group.mfu, rel=0.01)
    # The row's time against its baseline runs' (rules.groupverdict): 0.78x with the warm-up.
    assert group.time_ratio == pytest.approx(1.0, abs=0.02)
    assert not [f for f in verdict.findings if f.kernel == "group:gemm"], verdict.findings
    assert verdict.conclusion == "pass"


def test_a_group_after_a_catch_all_names_the_group_that_took_its_kernels(tmp_path) -> None:
    """Every ``gemm_*`` kernel joined the catch-all listed first: ``gemm`` read 0 kernels.

    Its note said "2 would, ignoring case", sending the reader after a case typo it did not have.
    """
    catch_all = '[[rules.groups]]\nname = "all"\npattern = "*"\n\n'
    verdict = _nights(tmp_path, catch_all + GROUP, NIGHT, count=3)
    assert _group(verdict, "all").kernels == ("gemm_a", "gemm_warmup")
    assert _group(verdict, "gemm").kernels == ()
    [note] = [n for n in verdict.notes if n.startswith("group 'gemm'")]
    assert note == (
        "group 'gemm' has no kernel of this run: the 2 kernels its pattern 'gemm_*' matches "
        "joined the earlier group 'all' (a kernel joins only the first group it matches; "
        "list 'gemm' above it to judge them on their own)"
    )
    assert "ignoring case" not in " ".join(verdict.notes)


# Two GEMMs per group, one in an ncu report at 0.75x the H100's boost clock, one in a CSV
# that records no clock: the CSV's kernels sit on the datasheet roof as it is.
BF16, SCALE, GEMM_FLOPS = 989.4e12, 0.75, 240.5e9
BENCH = "name,duration_s,flops_tensor_bf16,flops_fp32,bytes_dram,launches\n"
BENCH += "gemm_bench,{gemm},{flops},0,5.45e8,1\nverify_bench,{verify},0,{flops},5.45e8,1\n"
NCU_TIME, GEMM_TIME, VERIFY_TIME = 0.4e-3, 0.338e-3, 5.1e-3


def _ncu_report(path: Path, scale: float) -> Path:
    """roofguard JSON of an ncu run: two bf16 GEMMs at ``SCALE`` x the boost clock."""
    kernels = [
        {
            "name": key,
            "key": key,
            "duration_s": NCU_TIME * scale,
            "flops": {"tensor_bf16": GEMM_FLOPS},
            "bytes": {"dram": 5.45e8},
            "sm_clock_hz": SCALE * 1.98e9,
        }
        for key in ("gemm_ncu", "verify_ncu")
    ]
    device, profiler = {"name": "NVIDIA H100 80GB HBM3"}, {"tool": "ncu"}
    path.write_text(json.dumps({"device": device, "profiler": profiler, "kernels": kernels}))
    return path


def _mixed_run(tmp_path: Path, config: str, commit: str, day: int, scale: float) -> Verdict:
    rows = BENCH.format(gemm=GEMM_TIME * scale, verify=VERIFY_TIME * scale, flops=GEMM_FLOPS)
    ncu = _ncu_report(tmp_path / f"{commit}.ncu.json", scale)
    return _check(tmp_path, config, commit, day, rows, ncu)


def test_group_mfu_reads_each_kernel_against_its_own_roof_in_a_mixed_run(tmp_path) -> None:
    """An ncu report beside a CSV: each kernel's MFU against the bf16 peak of its own roof.

    ``verify_bench`` fell onto the fp32 units; held to the run's scaled bf16 peak it read
    11.8% for the group, not 10.3%. ``gemm`` (both on the tensor cores) named no precision:
    the CSV GEMM's own peak is none of the scaled roof's.
    """
    config = GROUP + '\n[[rules.groups]]\nname = "verify"\npattern = "verify_*"\n'
    config += 'precision = "tensor_bf16"\n'
    for day in range(4):
        _mixed_run(tmp_path, config, f"n{day:03d}", day, 1 + 0.01 * ((day * 7) % 5 - 2))
    verdict = _mixed_run(tmp_path, config, "today", 4, 1.0)
    [note] = [n for n in verdict.notes if "datasheet roof is scaled" in n]
    assert "x0.750" in note and "records no clock" in note
    on_ncu, on_bench = GEMM_FLOPS / (SCALE * BF16), GEMM_FLOPS / BF16  # seconds at P_ref
    for name, time in (("gemm", GEMM_TIME), ("verify", VERIFY_TIME)):
        group = _group(verdict, name)
        assert group.mfu_precision == "tensor_bf16", name
        assert group.mfu == pytest.approx((on_ncu + on_bench) / (NCU_TIME + time), rel=1e-6)
        assert group.mfu_baseline is not None and group.mfu_baseline.center is not None
        assert group.mfu_baseline.center == pytest.approx(group.mfu, rel=0.02), name


# A bf16 GEMM (10.1 ms at the H100's bf16 peak, run at 81%) and a copy, then the GEMM falls
# onto the fp32 units (149 ms at their peak): 14x its time, and the group's.
FALL = "name,duration_s,flops_tensor_bf16,flops_fp32,bytes_dram,launches\n"
FALL += "gemm_bf16,{gemm},{bf16},{fp32},2e9,5\ncopy_f4,{copy},0,0,4e9,10\n"
MEMORY_GROUP = '[[rules.groups]]\nname = "all"\npattern = "*"\nregime = "memory-bound"\n'


def _fall_night(tmp_path: Path, day: int, fallen: bool) -> Verdict:
    scale = 1 + 0.005 * ((day * 7) % 5 - 2)
    gemm, bf16, fp32 = (0.175, 0, 1e13) if fallen else (0.0125, 1e13, 0)
    rows = FALL.format(gemm=gemm * scale, bf16=bf16, fp32=fp32, copy=0.0015 * scale)
    return _check(tmp_path, MEMORY_GROUP, f"n{day:03d}", day, rows)


def test_a_groups_time_change_is_confirmed_the_next_night_then_its_level_is_the_new_one(
    tmp_path,
) -> None:
    """A GEMM off the tensor cores makes its memory-bound group 14x slower.

    The group warned for three nights and failed on the fourth, a stable night, "13.7x its
    baseline time, confirmed" beside a row at 1.0x its baseline: its nights 1% apart in time
    disagreed in the old level's noise (0.2 ms), and on the second night a suspect percent of
    roof was reported in place of the time the gate had confirmed.
    """
    for day in range(10):
        _fall_night(tmp_path, day, fallen=False)
    nights = [_fall_night(tmp_path, day, fallen=True) for day in range(10, 15)]
    found = [[f for f in v.findings if f.kernel == "group:all"] for v in nights]
    assert [f.severity for f in found[0]] == ["warn"]
    [confirmed] = found[1]
    assert confirmed.severity == "fail" and confirmed.measure == "time_s", confirmed.message
    gate, row = confirmed.gate, _group(nights[1], "all")
    assert gate is not None and row.time_ratio is not None
    assert gate.current / gate.level == pytest.approx(row.time_ratio, rel=0.02)
    assert gate.current / gate.level == pytest.approx(0.1765 / 0.014, rel=0.02)
    for verdict, group in zip(nights[2:], found[2:], strict=True):
        assert group == [], group
        assert _group(verdict, "all").time_ratio == pytest.approx(1.0, abs=0.03)
        assert verdict.conclusion != "fail", verdict.findings
