"""The first PR on a new card (issue 27): judged against the old card's history.

30 nightly runs on one card, then `roofguard check` of a PR on another: each kernel is judged
in percent of roof against the old card's level, each card on its own datasheet roofs. Real
catalog pairs: A100 -> H100, V100 -> A100, L4 -> L40S and two consumer cards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from device_fleet import REPO, Work, datasheet, nights, store, stored_history

from collectors.schema import RunKind
from service.cli import run
from service.store.db import open_store

A100, H100 = "A100-SXM4-80GB", "H100-SXM5"
#: What ``roofguard calibrate --check`` writes on a runner whose torch sees no GPU.
NO_GPU = {
    "trusted": False,
    "status": "no-gpu",
    "runner": "r1",
    "device": "cuda",
    "checked_at": "2026-12-07T17:02:01Z",
    "calibrated_at": None,
    "tolerance": 0.8,
    "ratios": {},
    "reasons": ["no GPU visible (torch 2.13.0+cpu sees no CUDA device)"],
    "notes": [],
    "message": "runner 'r1' is untrusted: no GPU visible; nothing was measured",
}
#: (old card, new card): a memory-bound kernel that kept its percent of roof, and a
#: compute-bound one that fell from 80% to 50% of its tensor roof on the new card.
PAIRS = [
    ("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16"),
    ("V100-SXM2-32GB", "A100-SXM4-80GB", "tensor_fp16"),
    ("L4", "L40S", "tensor_bf16"),
    ("RTX-3090", "RTX-4090", "tensor_bf16"),
]


def fleet(old: str, new: str, precision: str) -> dict[str, Work]:
    return {
        "copy": Work({"fp32": 1e6}, {"dram": 2e9}, {old: 85.0, new: 83.0}),
        "gemm": Work({precision: 2e12}, {"dram": 1e9}, {old: 80.0, new: 50.0}),
    }


def swapped(tmp_path: Path, kernels: dict[str, Work], h100_nights: int) -> str:
    """30 A100 nights, then ``h100_nights`` on the H100: the store's URL."""
    url = stored_history(tmp_path, "A100-SXM4-80GB", kernels)
    engine = open_store(url)
    try:
        h100 = nights("H100-SXM5", h100_nights, start=30, kernels=kernels)
        store(engine, h100, datasheet("H100-SXM5"))
    finally:
        engine.dispose()
    return url


def check(tmp_path: Path, url: str, new: str, kernels: dict[str, Work], *extra: str) -> dict:
    pr = nights(new, 1, start=40, kernels=kernels, kind=RunKind.PR)[0]
    report = tmp_path / "pr.json"
    report.write_text(pr.model_dump_json())
    out = tmp_path / "verdict.json"
    argv = ["check", str(report), "--repo", REPO, "--commit", "pr1", "--branch", "feature"]
    argv += ["--format", "json", "--output", str(out), "--db", url, *extra]
    assert run(argv) in (0, 1)
    return json.loads(out.read_text())


@pytest.mark.parametrize(("old", "new", "precision"), PAIRS, ids=[f"{o}->{n}" for o, n, _ in PAIRS])
def test_the_first_pr_on_a_new_card_is_judged_against_the_old_one(tmp_path, old, new, precision):
    kernels = fleet(old, new, precision)
    verdict = check(tmp_path, stored_history(tmp_path, old, kernels), new, kernels)
    assert verdict["device"] == new
    assert verdict["baseline"]["device"] == old and verdict["baseline"]["n"] == 30
    by = {k["key"]: k for k in verdict["kernels"]}
    assert (by["copy"]["status"], by["gemm"]["status"]) == ("unchanged", "suspect")
    old_roof, new_roof = datasheet(old), datasheet(new)
    copy_ratio = old_roof.bandwidth_byte_per_s["dram"] / new_roof.bandwidth_byte_per_s["dram"]
    gemm_ratio = old_roof.peak_flop_per_s[precision] / new_roof.peak_flop_per_s[precision]
    assert by["copy"]["expected_time_ratio"] == pytest.approx(copy_ratio)
    assert by["gemm"]["expected_time_ratio"] == pytest.approx(gemm_ratio)
    for kernel in by.values():  # percent now / before = expected / measured time ratio
        now_over_before = kernel["percent_of_baseline_roof"] / kernel["baseline"]["center"]
        ratio = kernel["expected_time_ratio"] / kernel["time_ratio"]
        assert now_over_before == pytest.approx(ratio)
        assert kernel["baseline"]["device"] == old
    [finding] = verdict["findings"]
    assert finding["rule"] == "device-scaling" and finding["kernel"] == "gemm"
    assert f"on {new}, measured" in finding["message"] and "80% → 50%" in finding["message"]
    assert finding["advice"] == "compute-efficiency"


def test_the_pr_comment_names_the_other_cards_history(tmp_path):
    kernels = fleet("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16")
    url = stored_history(tmp_path, "A100-SXM4-80GB", kernels)
    pr = nights("H100-SXM5", 1, start=40, kernels=kernels, kind=RunKind.PR)[0]
    report = tmp_path / "pr.json"
    report.write_text(pr.model_dump_json())
    out = tmp_path / "verdict.md"
    argv = ["check", str(report), "--repo", REPO, "--commit", "pr1", "--branch", "feature"]
    assert run([*argv, "--format", "markdown", "--output", str(out), "--db", url]) == 0
    text = out.read_text()
    assert "judged against **A100\\-SXM4\\-80GB history\\, 30 runs\\, in percent of roof" in text
    assert "(n=30: A100\\-SXM4\\-80GB scaled to H100\\-SXM5)" in text  # its card, scaled
    assert "roofs predict 0.32×)" in text  # the gemm's time beside the bf16 peaks' ratio
    assert "GPU time of the 2 kernel" in text


def test_cross_device_false_makes_every_kernel_new(tmp_path):
    kernels = fleet("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16")
    url = stored_history(tmp_path, "A100-SXM4-80GB", kernels)
    config = tmp_path / "roofguard.toml"
    config.write_text("[baseline]\ncross_device = false\n")
    verdict = check(tmp_path, url, "H100-SXM5", kernels, "--config", str(config))
    assert {k["status"] for k in verdict["kernels"]} == {"new"}
    assert verdict["baseline"]["runs"] == 0  # judged against nothing: no other card either
    assert not verdict["findings"]


def test_the_new_cards_settled_history_takes_over(tmp_path):
    kernels = fleet("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16")
    url = swapped(tmp_path, kernels, h100_nights=6)
    verdict = check(tmp_path, url, "H100-SXM5", kernels)
    assert verdict["baseline"]["device"] == "H100-SXM5"
    assert all(k["expected_time_ratio"] is None for k in verdict["kernels"])
    assert {k["status"] for k in verdict["kernels"]} == {"unchanged"}


def test_a_pr_that_left_main_before_the_swap_is_judged_on_its_cards_nights_after_it(tmp_path):
    """Its merge base is the A100's last night; the H100 has run 8 nights of main since.

    Judged against the A100 cut at its merge base, a kernel the H100's own nights hold at
    its level read "did not keep up" (at most a warning); the H100's nights nearest after the
    merge base are its baseline now, and the verdict says so.
    """
    kernels = fleet("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16")
    url = swapped(tmp_path, kernels, h100_nights=8)
    verdict = check(tmp_path, url, "H100-SXM5", kernels, "--base-sha", "n0029")
    assert verdict["baseline"]["device"] == "H100-SXM5" and verdict["baseline"]["n"] == 8
    [note] = [note for note in verdict["notes"] if "merge base" in note]
    assert "merge base n0029 was measured on another card only, and H100-SXM5 has no" in note
    assert "its 8 main runs nearest after it (n0030 to n0037)" in note
    by = {k["key"]: k["status"] for k in verdict["kernels"]}
    assert by == {"copy": "unchanged", "gemm": "unchanged"}  # its 50% there, as main's nights


def test_a_pr_fall_fails_whether_its_branch_left_main_before_the_swap_or_after(tmp_path):
    """A PR's copy kernel at 62% of the H100's roof, main's H100 nights at 83%: it failed with
    its merge base on the H100 and only warned "did not keep up with the new card" (exit 0)
    with its merge base the A100's last night."""
    kernels = fleet("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16")
    url = swapped(tmp_path, kernels, h100_nights=8)
    fallen = {**kernels, "copy": Work({"fp32": 1e6}, {"dram": 2e9}, {"H100-SXM5": 62.0})}
    for base in ("n0037", "n0029"):
        verdict = check(tmp_path, url, "H100-SXM5", fallen, "--base-sha", base)
        assert verdict["conclusion"] == "fail", base
        assert [
            (f["kernel"], f["rule"]) for f in verdict["findings"] if f["severity"] == "fail"
        ] == [("copy", "roof-drop")]


def test_a_pr_on_a_card_with_no_night_of_main_is_judged_on_the_card_before(tmp_path):
    """No H100 night after the merge base either: the A100's history up to it judges it."""
    kernels = fleet("A100-SXM4-80GB", "H100-SXM5", "tensor_bf16")
    url = stored_history(tmp_path, "A100-SXM4-80GB", kernels)
    verdict = check(tmp_path, url, "H100-SXM5", kernels, "--base-sha", "n0025")
    assert verdict["baseline"]["device"] == "A100-SXM4-80GB" and verdict["baseline"]["n"] == 26
    assert not any("merge base" in note for note in verdict["notes"])


def test_the_verdict_says_which_kernels_the_ridge_moved_past(tmp_path):
    """Intensity 200: compute-bound on the A100 (bf16 ridge 153), memory-bound on the H100 (295)."""
    kernels = {
        "attention": Work({"tensor_bf16": 2e11}, {"dram": 1e9}, {A100: 70.0, H100: 70.0}),
        "copy": Work({"fp32": 1e6}, {"dram": 2e9}, {A100: 85.0, H100: 83.0}),
    }
    verdict = check(tmp_path, stored_history(tmp_path, A100, kernels), H100, kernels)
    [note] = [n for n in verdict["notes"] if n.startswith("the ridge moved")]
    assert note == (
        f"the ridge moved for 1 of them: the same work binds another resource on {H100} than "
        f"on {A100} (1 tensor_bf16 → dram), and with it what to tune"
    )
    assert {k["key"]: k["status"] for k in verdict["kernels"]} == {
        "attention": "unchanged",
        "copy": "unchanged",
    }


def test_a_stray_night_on_a_third_card_does_not_hide_the_old_cards_history(tmp_path):
    """One night on an L40S after 30 on the A100: the newest other card, it was taken and
    had too few runs, so the first H100 PR judged nothing (every kernel new)."""
    kernels = {
        "copy": Work({"fp32": 1e6}, {"dram": 2e9}, {A100: 85.0, H100: 83.0, "L40S": 80.0}),
        "gemm": Work({"tensor_bf16": 2e12}, {"dram": 1e9}, {A100: 80.0, H100: 50.0, "L40S": 80.0}),
    }
    url = stored_history(tmp_path, A100, kernels)
    engine = open_store(url)
    try:
        store(engine, nights("L40S", 1, start=30, kernels=kernels), datasheet("L40S"))
    finally:
        engine.dispose()
    verdict = check(tmp_path, url, H100, kernels)
    assert verdict["baseline"]["device"] == A100 and verdict["baseline"]["n"] == 30
    by = {k["key"]: k["status"] for k in verdict["kernels"]}
    assert by == {"copy": "unchanged", "gemm": "suspect"}


def test_a_gemm_off_the_tensor_cores_on_the_new_card_fails_the_first_pr(tmp_path):
    """Its bf16 FLOPs ran on the A100's tensor cores and now run on the H100's CUDA cores."""
    kernels = fleet(A100, H100, "tensor_bf16")
    fallen = {**kernels, "gemm": Work({"fp32": 2e12}, {"dram": 1e9}, {H100: 70.0})}
    verdict = check(tmp_path, stored_history(tmp_path, A100, kernels), H100, fallen)
    assert verdict["conclusion"] == "fail"
    gemm = {k["key"]: k for k in verdict["kernels"]}["gemm"]
    assert gemm["status"] == "regressed"
    [flip] = [f for f in verdict["findings"] if f["rule"] == "regime-flip"]
    assert flip["severity"] == "fail" and flip["kernel"] == "gemm"
    fell = "fell off the tensor cores on H100-SXM5, bound by fp32 instead of tensor_bf16"
    assert fell in flip["message"]
    numbers = flip["numbers"]
    roof_a100, roof_h100 = datasheet(A100), datasheet(H100)
    bf16 = roof_a100.peak_flop_per_s["tensor_bf16"] / roof_h100.peak_flop_per_s["tensor_bf16"]
    assert numbers["expected_time_ratio"] == pytest.approx(bf16)
    # 70% of the H100's fp32 roof against 80% of the A100's tensor roof, as the work says.
    time_ratio = (2e12 / roof_h100.peak_flop_per_s["fp32"] / 0.70) / (
        2e12 / roof_a100.peak_flop_per_s["tensor_bf16"] / 0.80
    )
    assert numbers["time_ratio"] == pytest.approx(time_ratio, rel=0.02)
    assert numbers["percent_of_baseline_roof"] == pytest.approx(80.0 * bf16 / time_ratio, rel=0.02)


def test_a_gemm_off_the_tensor_cores_on_its_new_cards_nights_is_not_the_prs(tmp_path):
    """Main's first H100 nights already ran it on fp32: those nights' finding, not the PR's."""
    kernels = fleet(A100, H100, "tensor_bf16")
    fallen = {**kernels, "gemm": Work({"fp32": 2e12}, {"dram": 1e9}, {H100: 70.0})}
    url = stored_history(tmp_path, A100, kernels)
    engine = open_store(url)
    try:
        store(engine, nights(H100, 2, start=30, kernels=fallen), datasheet(H100))
    finally:
        engine.dispose()
    verdict = check(tmp_path, url, H100, fallen)
    assert not [f for f in verdict["findings"] if f["rule"] == "regime-flip"]


def untrusted_nights(tmp_path: Path, url: str, card: str, kernels: dict[str, Work], **at) -> None:
    """Main's nights on ``card`` checked by ``roofguard check`` on a runner that sees no GPU."""
    health = tmp_path / "no-gpu-health.json"
    health.write_text(json.dumps(NO_GPU))
    for night in nights(card, kernels=kernels, **at):
        report = tmp_path / f"{night.commit}.json"
        report.write_text(night.model_dump_json())
        argv = ["check", str(report), "--repo", REPO, "--commit", night.commit, "--branch", "main"]
        argv += ["--format", "json", "--output", str(tmp_path / "night.json"), "--db", url]
        assert run([*argv, "--health-file", str(health)]) == 0


def test_an_old_card_measured_only_by_an_untrusted_runner_judges_no_new_card(tmp_path):
    """The A100's nights ran where torch saw no GPU: a PR on the A100 is not judged, and a PR
    on the H100 was "judged against A100-SXM4-80GB history, 6 runs" with a device-scaling
    finding, as if those nights were a baseline."""
    kernels = fleet(A100, H100, "tensor_bf16")
    url = f"sqlite:///{tmp_path / 'history.db'}"
    untrusted_nights(tmp_path, url, A100, kernels, count=6)
    # On its own card the untrusted nights are named; another card has no history of its own.
    for card, rules in ((A100, ["env-mismatch"]), (H100, [])):
        verdict = check(tmp_path, url, card, kernels)
        assert verdict["baseline"]["runs"] == 0 and verdict["baseline"]["device"] == card
        assert {k["status"] for k in verdict["kernels"]} == {"new"}
        assert [f["rule"] for f in verdict["findings"]] == rules


def test_untrusted_nights_choose_no_card_and_count_in_no_baseline(tmp_path):
    """30 trusted A100 nights, 2 untrusted ones after them, then 6 untrusted on an L40S: the
    L40S was taken as the newest card, and the A100's count held the untrusted nights."""
    kernels = {**fleet(A100, H100, "tensor_bf16")}
    kernels["copy"] = Work({"fp32": 1e6}, {"dram": 2e9}, {A100: 85.0, H100: 83.0, "L40S": 80.0})
    kernels["gemm"] = Work(
        {"tensor_bf16": 2e12}, {"dram": 1e9}, {A100: 80.0, H100: 50.0, "L40S": 80.0}
    )
    url = stored_history(tmp_path, A100, kernels)
    untrusted_nights(tmp_path, url, A100, kernels, count=2, start=30)
    untrusted_nights(tmp_path, url, "L40S", kernels, count=6, start=32)
    verdict = check(tmp_path, url, H100, kernels)
    assert verdict["baseline"]["device"] == A100 and verdict["baseline"]["n"] == 30
    by = {k["key"]: k["status"] for k in verdict["kernels"]}
    assert by == {"copy": "unchanged", "gemm": "suspect"}


def test_a_new_cards_untrusted_nights_leave_it_judged_on_the_old_card(tmp_path):
    """12 H100 nights where torch saw no GPU: no baseline on the H100, yet they made its
    kernels settled there, so its first trusted PR judged nothing against the A100's 30."""
    kernels = fleet(A100, H100, "tensor_bf16")
    url = stored_history(tmp_path, A100, kernels)
    untrusted_nights(tmp_path, url, H100, kernels, count=12, start=30)
    verdict = check(tmp_path, url, H100, kernels)
    assert verdict["baseline"]["device"] == A100 and verdict["baseline"]["n"] == 30
    by = {k["key"]: k["status"] for k in verdict["kernels"]}
    assert by == {"copy": "unchanged", "gemm": "suspect"}
