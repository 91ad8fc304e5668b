"""The why from the profiler (issue 30, part 9): the figures that moved most, in words."""

from __future__ import annotations

from collectors import collect
from rules import Finding, Severity, Verdict, profile_changes, with_profile_changes
from tests.factories import make_kernel, make_run

BASE = {
    "launch__registers_per_thread": 96.0,
    "launch__block_size": 256.0,
    "launch__grid_size": 1024.0,
    "launch__shared_mem_per_block_static": 0.0,
    "launch__shared_mem_per_block_dynamic": 49152.0,
    "sm__maximum_warps_per_active_cycle_pct": 50.0,
    "sm__warps_active.avg.pct_of_peak_sustained_active": 47.0,
    "l1tex__t_sector_hit_rate.pct": 30.0,
    "lts__t_sector_hit_rate.pct": 80.0,
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 2.0,
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio": 6.0,
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio": 1.0,
}


def _kernel(**changes: float):
    return make_kernel("gemm", dram_bytes=1e9, profile={**BASE, **changes})


def test_more_registers_is_named_with_the_occupancy_it_cost():
    after = _kernel(
        launch__registers_per_thread=168.0,
        sm__maximum_warps_per_active_cycle_pct=25.0,
        **{"sm__warps_active.avg.pct_of_peak_sustained_active": 24.0},
    )
    changes = profile_changes(_kernel(), after)
    assert changes == (
        "registers 96 -> 168: occupancy 50% -> 25%",
        "achieved occupancy 47% -> 24%",
    )


def test_stalls_hit_rates_and_bytes_per_launch_are_ranked_by_how_far_they_moved():
    after = make_kernel(
        "gemm",
        dram_bytes=2e9,
        profile={
            **BASE,
            "lts__t_sector_hit_rate.pct": 41.0,
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 6.0,
            "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio": 2.0,
        },
    )
    assert profile_changes(_kernel(), after) == (
        "long scoreboard stalls 25% -> 75%",  # 50 points of the stalls ("selected" is none)
        "math pipe throttle stalls 75% -> 25%",
        "L2 hit rate 80% -> 41%",  # 39 points
        "DRAM bytes 1 GB -> 2 GB per launch",  # a doubling: 25 points' worth
    )


def test_small_moves_and_one_sided_figures_say_nothing():
    nudged = _kernel(**{"lts__t_sector_hit_rate.pct": 78.0})
    assert profile_changes(_kernel(), nudged) == ()
    assert profile_changes(make_kernel("gemm"), _kernel()) == ()  # no profiler on one side


def test_a_real_pair_where_registers_change(corpus_dir):
    """Two SGEMMs of one real report (A10G): 121 and 150 registers per thread."""
    record = collect(corpus_dir / "ncu-rep/AveryClapp_ESMM-Research__profile_output.ncu-rep")
    by_name = {k.name.split("<")[0].removeprefix("void "): k for k in record.kernels}
    before, after = by_name["vectorized_blocktiling"], by_name["two_blocktiling"]
    changes = profile_changes(before, after)
    assert changes[0] == "registers 121 -> 150: occupancy 33% -> 17%"
    assert "DRAM bytes 14.9 MB -> 17.2 MB per launch" in changes


def test_the_worst_finding_of_each_regressed_kernel_carries_the_changes():
    before = _kernel()
    after = _kernel(launch__registers_per_thread=168.0, sm__maximum_warps_per_active_cycle_pct=25.0)
    findings = tuple(
        Finding(rule=rule, kernel="gemm", severity=severity, message="slower")
        for rule, severity in (("roof-drop", Severity.FAIL), ("time-regression", Severity.FAIL))
    )
    verdict = Verdict(conclusion="fail", findings=findings)
    explained = with_profile_changes(verdict, make_run(kernels=[after]), {"gemm": before})
    first, second = explained.findings
    assert first.profile == ("registers 96 -> 168: occupancy 50% -> 25%",)
    assert second.profile == ()
