"""Like-for-like history: every run against the roof its kernel is usually bound by."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from factories import GEMM_FLOPS, H100_BF16, falling_gemm_runs, make_kernel, make_run
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import (
    RuleContext,
    binding_changes,
    builtin_catalog,
    evaluate,
    like_for_like_history,
    reference_binding,
    series_references,
)
from rules.frames import history_from_runs

START = datetime(2026, 3, 1, tzinfo=UTC)


def _history() -> tuple[pd.DataFrame, dict[int, object]]:
    roof = builtin_catalog().lookup("H100").roof()
    frame = history_from_runs(falling_gemm_runs(start=START), roof)
    return frame, dict.fromkeys(range(1, 11), roof)


def test_the_gemm_that_fell_off_the_tensor_cores_drops_instead_of_staying_flat():
    frame, roofs = _history()
    gemm = frame[frame["kernel_key"] == "gemm_bf16_128x128"]
    assert gemm["percent_of_roof"].round(1).tolist() == [70.0] * 10, "stored: flat"

    like = like_for_like_history(frame, roofs)
    gemm = like[like["kernel_key"] == "gemm_bf16_128x128"]
    assert set(gemm["reference_binding"]) == {"tensor_bf16"}
    after = gemm["percent_of_roof"].to_numpy()[7:]
    expected = 100 * GEMM_FLOPS / H100_BF16 / (GEMM_FLOPS / 66.9e12 / 0.70)
    assert gemm["percent_of_roof"].to_numpy()[:7].round(1).tolist() == [70.0] * 7
    assert after.round(2).tolist() == [round(expected, 2)] * 3
    assert 4.6 < expected < 4.8
    assert gemm["own_percent_of_roof"].round(1).tolist() == [70.0] * 10
    copy = like[like["kernel_key"] == "copy"]
    assert copy["percent_of_roof"].tolist() == copy["own_percent_of_roof"].tolist()


def test_binding_changes_mark_the_fall_and_ignore_a_one_night_flip():
    frame, _ = _history()
    gemm = frame[frame["kernel_key"] == "gemm_bf16_128x128"]
    changes = binding_changes(gemm)
    assert changes[["from_binding", "to_binding"]].values.tolist() == [["tensor_bf16", "fp32"]]
    assert changes["since"].iloc[0] == gemm["timestamp"].iloc[7]

    flip = gemm.assign(binding=["tensor_bf16"] * 3 + ["fp32"] + ["tensor_bf16"] * 6)
    assert binding_changes(flip).empty, "one night on another roof is not a change"
    last = gemm.assign(binding=["tensor_bf16"] * 9 + ["fp32"])
    assert len(binding_changes(last)) == 1, "the newest run counts at once"


def test_reference_binding_is_the_majority_and_a_tie_goes_to_the_earliest():
    assert reference_binding(["a", "b", "b", None]) == "b"
    assert reference_binding(["a", "b", "b", "a"]) == "a"
    assert reference_binding([None, float("nan")]) is None


def _judged_gemm(nights: int, fall_at: int):
    roof = builtin_catalog().lookup("H100").roof()
    runs = falling_gemm_runs(start=START, nights=nights, fall_at=fall_at)
    ctx = RuleContext(run=runs[-1], roof=roof, history=history_from_runs(runs[:-1], roof))
    outcome = evaluate(ctx)
    (gemm,) = [k for k in outcome.verdict.kernels if k.key == "gemm_bf16_128x128"]
    assert gemm.baseline is not None
    return gemm, [f.rule for f in outcome.verdict.findings if f.kernel == gemm.key]


def test_the_comments_sparkline_shows_baseline_nights_after_a_fall_like_for_like():
    """An fp32 night in a baseline of tensor_bf16 ones reads 4.7%, not a flat 70%."""
    gemm, found = _judged_gemm(nights=9, fall_at=7)
    assert [round(v, 1) for v in gemm.baseline.history] == [70.0] * 7 + [4.7]
    assert gemm.percent_of_baseline_roof == pytest.approx(4.7, abs=0.05)
    assert "regime-flip" in found  # the fall's second night: still off the tensor cores


def test_a_fall_the_base_branch_kept_is_its_binding_now():
    """Three fp32 nights on main: the next run is judged on fp32, as main now runs.

    Against the majority (seven tensor_bf16 nights) every PR of the next four nights failed
    for main's fall: "fell off the tensor cores" at 70% of fp32, the same time as main.
    """
    gemm, found = _judged_gemm(nights=11, fall_at=7)
    assert gemm.percent_of_baseline_roof == pytest.approx(70.0, abs=0.05)
    assert found == []
    # The sparkline, like for like against fp32, still shows the fall: the bf16 nights did
    # the same work 14.8x faster than the fp32 roof allows.
    assert [round(v, 1) for v in gemm.baseline.history] == [1035.2] * 7 + [70.0] * 3


def test_nights_of_other_work_read_at_the_reference_runs_work_a_broken_fusion_falls():
    """Four fused nights (compute-bound), then six main kept broken (memory-bound, 4.2x slower).

    Against the majority's dram roof the fused nights, at their own 1/200 of the bytes, read
    3.3%: the digest called the break an improvement, +2296%. At the broken nights' bytes in
    their own time they read 80% x 307 / 73 ms, and the break is the fall it was.
    """
    roof = builtin_catalog().lookup("A100-SXM4-80GB").roof()
    fp32, dram, flops = roof.peak_flop_per_s["fp32"], roof.bandwidth_byte_per_s["dram"], 1e12
    fused_s, broken_s = flops / fp32 / 0.70, flops / 2 / dram / 0.80
    nights = [(flops / 200, fused_s)] * 4 + [(flops / 2, broken_s)] * 6
    runs = [
        make_run(
            commit=f"c{n}",
            timestamp=START + timedelta(days=n),
            kernels=[make_kernel("mlp", flops={"fp32": flops}, dram_bytes=b, time_s=t)],
            device="NVIDIA A100-SXM4-80GB",
        )
        for n, (b, t) in enumerate(nights)
    ]
    frame = history_from_runs(runs, roof)
    like = like_for_like_history(frame, dict.fromkeys(frame["run_id"], roof))
    assert set(like["reference_binding"]) == {"dram"}
    percents = like["percent_of_roof"].to_numpy()
    assert percents[:4] == pytest.approx([80.0 * broken_s / fused_s] * 4)
    assert percents[4:] == pytest.approx([80.0] * 6), "the runs at the reference keep theirs"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["H100", "A100"]),
            st.sampled_from(["k1", "k2", "k3"]),
            st.sampled_from(["dram", "fp32", "l2", None]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.booleans(),
)
def test_series_references_are_each_series_reference_binding(rows, categorical) -> None:
    """Vectorised over every series at once, the same binding as ``reference_binding`` of each."""
    frame = pd.DataFrame(rows, columns=["device", "kernel_key", "binding"])
    if categorical:
        frame = frame.astype("category")
    got = series_references(frame)
    for _, series in frame.groupby(["device", "kernel_key"], observed=True):
        want = reference_binding([b for b in series["binding"] if isinstance(b, str)])
        assert set(got[series.index].map(lambda b: b if isinstance(b, str) else None)) == {want}


def _mlp_runs(nights: list[tuple[float, float, float]]) -> list:
    """One A100 run per night of the MLP: (FLOPs, dram bytes, time)."""
    return [
        make_run(
            commit=f"c{n}",
            timestamp=START + timedelta(days=n),
            kernels=[make_kernel("mlp", flops={"fp32": f}, dram_bytes=b, time_s=t)],
            device="NVIDIA A100-SXM4-80GB",
        )
        for n, (f, b, t) in enumerate(nights)
    ]


def test_a_shape_changed_before_reads_each_night_at_the_nearest_reference_runs_work():
    """Eight dram nights at 1 GB, eight at 2 GB (the benchmark's shape doubled), two on fp32.

    The fp32 nights read at the 2 GB of the dram nights just before them: the median of every
    dram night (1.5 GB) would make them 25% slower than they were.
    """
    roof = builtin_catalog().lookup("A100-SXM4-80GB").roof()
    dram = roof.bandwidth_byte_per_s["dram"]
    nights = [(1e9, 1e9, 1e9 / dram / 0.8)] * 8 + [(2e9, 2e9, 2e9 / dram / 0.8)] * 8
    nights += [(2.4e10, 2e9, 2e9 / dram / 0.7)] * 2  # 88% of fp32; dram roof time / 0.7
    frame = history_from_runs(_mlp_runs(nights), roof)
    like = like_for_like_history(frame, dict.fromkeys(frame["run_id"], roof))
    assert like["binding"].tolist()[-2:] == ["fp32", "fp32"]
    assert like["percent_of_roof"].to_numpy()[-2:] == pytest.approx([70.0, 70.0])


def test_the_verdict_reads_a_new_binding_at_the_newest_nights_work():
    """The same history judged: the run on fp32 reads at the newest dram nights' 2 GB."""
    roof = builtin_catalog().lookup("A100-SXM4-80GB").roof()
    dram = roof.bandwidth_byte_per_s["dram"]
    nights = [(1e9, 1e9, 1e9 / dram / 0.8)] * 8 + [(2e9, 2e9, 2e9 / dram / 0.8)] * 5
    runs = _mlp_runs([*nights, (2.4e10, 2e9, 2e9 / dram / 0.7)])
    ctx = RuleContext(run=runs[-1], roof=roof, history=history_from_runs(runs[:-1], roof))
    (mlp,) = evaluate(ctx).verdict.kernels
    assert mlp.binding == "fp32"
    assert mlp.percent_of_baseline_roof == pytest.approx(70.0)
