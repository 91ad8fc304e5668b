"""The digest finds the planted changes, reports each once, tracks it until it recovers."""

from __future__ import annotations

import json
import multiprocessing
import os
from datetime import timedelta
from pathlib import Path

import pytest
from digest_history import (
    BLIPS,
    FIRST_NIGHT,
    PERIOD_END,
    PERIOD_START,
    PLANTED,
    commit_of,
    make_digest_history,
    night_of,
)

import service.digest.changes as changes
import service.digest.workers as workers
from rules.frames import empty_history
from service.digest.build import build_digest, iso_week, prepare_history
from service.digest.changes import detect_changes
from service.digest.model import DigestOptions, KernelTarget
from service.render.digest_render import (
    digest_title,
    render_digest_html,
    render_digest_json,
    render_digest_markdown,
)

GOLDEN = Path(__file__).parents[1] / "golden"
TARGETS = (
    KernelTarget(pattern="gemv*", name="decode GEMV", regime="memory-bound", target_percent=80),
    KernelTarget(pattern="fused_*", name="MLP", regime="compute-bound"),
    KernelTarget(pattern="*", target_percent=40),
)


@pytest.fixture(scope="module")
def history():
    return make_digest_history()


@pytest.fixture(scope="module")
def digest(history):
    return build_digest(
        history, start=PERIOD_START, end=PERIOD_END, repo="acme/kernels", targets=TARGETS
    )


def _moves(entries):
    return {(e.kernel, e.device, night_of(e.since)) for e in entries}


def test_change_points_found_where_planted_and_nowhere_else(history):
    changes, _ = detect_changes(prepare_history(history), DigestOptions())
    found = {(r.kernel_key, r.device, night_of(r.since)) for r in changes.itertuples()}
    planted = {(s.kernel, s.device, s.night) for s in PLANTED}
    planted |= {(s.kernel, s.device, s.until) for s in PLANTED if s.until is not None}
    assert found == planted
    blips = {(k, d, n) for k, d, n, _ in BLIPS}
    assert not found & blips, "one bad night (or only the last night) must not be a change"


def test_commit_range_is_last_good_and_first_bad(digest):
    gemv = next(m for m in digest.regressions if m.kernel == "gemv_bf16")
    assert (gemv.from_commit, gemv.to_commit) == (commit_of(34), commit_of(35))
    assert gemv.since == FIRST_NIGHT + timedelta(days=35)
    assert gemv.relative_change == pytest.approx(-0.20, abs=0.01)
    assert gemv.relative_change == pytest.approx(gemv.after / gemv.before - 1)


def test_sections_hold_what_was_planted(digest):
    assert _moves(digest.regressions) == {
        ("fused_mlp", "A100-SXM4-80GB", 34),
        ("gemv_bf16", "H100-SXM5", 35),
    }
    assert [m.relative_change for m in digest.regressions] == sorted(
        m.relative_change for m in digest.regressions
    ), "worst first"
    assert _moves(digest.improvements) == {("gemm_bf16", "A100-SXM4-80GB", 36)}
    assert _moves(digest.recoveries) == {("layernorm_fwd", "A100-SXM4-80GB", 20)}
    assert night_of(digest.recoveries[0].recovered_at) == 34
    assert _moves(digest.unresolved) == {
        ("softmax_fwd", "H100-SXM5", 10),
        ("fused_mlp", "A100-SXM4-80GB", 34),
        ("gemv_bf16", "H100-SXM5", 35),
    }
    assert digest.unresolved[0].kernel == "softmax_fwd", "oldest first"


def test_a_regression_is_reported_once_then_tracked(history):
    week_of_it = build_digest(
        history,
        start=FIRST_NIGHT + timedelta(days=9, hours=-1),
        end=FIRST_NIGHT + timedelta(days=15, hours=1),
    )
    assert ("softmax_fwd", "H100-SXM5", 10) in _moves(week_of_it.regressions)
    later = build_digest(history, start=PERIOD_START, end=PERIOD_END)
    assert "softmax_fwd" not in {m.kernel for m in later.regressions}
    softmax = next(m for m in later.unresolved if m.kernel == "softmax_fwd")
    assert softmax.age_days == pytest.approx(29.04, abs=0.01)


def test_a_change_on_a_periods_last_night_is_reported_the_next_period(history):
    """fused_mlp fell and went memory-bound on night 34: the last night of one week.

    Too young for that week's digest (one night of two), and begun before the next week's,
    it was in neither: only the next week's unresolved list, 8 days old, named it.
    """
    fused = ("fused_mlp", "A100-SXM4-80GB", 34)

    def week(first: int):
        start = FIRST_NIGHT + timedelta(days=first, hours=-1)
        return build_digest(history, start=start, end=start + timedelta(days=6, hours=2))

    before, after = week(28), week(35)
    assert fused not in _moves(before.regressions) and not before.regime_flips
    assert fused in _moves(after.regressions)
    assert [(f.kernel, night_of(f.since)) for f in after.regime_flips] == [("fused_mlp", 34)]


def test_regime_flip_held_is_reported_and_a_one_night_flip_is_not(digest):
    flips = [
        (f.kernel, f.device, f.from_regime, f.to_regime, night_of(f.since))
        for f in digest.regime_flips
    ]
    assert flips == [("fused_mlp", "A100-SXM4-80GB", "compute-bound", "memory-bound", 34)]
    assert (digest.regime_flips[0].from_commit, digest.regime_flips[0].to_commit) == (
        commit_of(33),
        commit_of(34),
    )


def test_mislabels_and_targets_from_config_groups(digest):
    assert [(m.kernel, m.device, m.declared, m.measured) for m in digest.mislabels] == [
        ("fused_mlp", "A100-SXM4-80GB", "compute-bound", "memory-bound")
    ]
    below = {(b.kernel, b.device, b.group) for b in digest.below_target}
    assert below == {("gemv_bf16", "H100-SXM5", "decode GEMV")}, "68 % is below the 80 % target"


def test_minimum_segment_is_an_option(history, digest):
    eager = build_digest(
        history, start=PERIOD_START, end=PERIOD_END, options=DigestOptions(min_segment=1)
    )
    last_night = ("gemm_bf16", "H100-SXM5", 39)
    assert last_night in _moves(eager.regressions), "one night is enough with min_segment=1"
    assert last_night not in _moves(digest.regressions), "but not by default (two nights)"
    strict = build_digest(
        history, start=PERIOD_START, end=PERIOD_END, options=DigestOptions(min_segment=6)
    )
    assert _moves(strict.regressions) == {("fused_mlp", "A100-SXM4-80GB", 34)}, "gemv: 5 nights"


def test_device_summary(digest):
    rows = {d.device: d for d in digest.devices}
    assert set(rows) == {"A100-SXM4-80GB", "H100-SXM5"}
    a100 = rows["A100-SXM4-80GB"]
    assert (a100.kernels, a100.nights, a100.regressions, a100.improvements) == (6, 7, 1, 1)
    assert (a100.regime_flips, a100.unresolved) == (1, 1)
    assert (rows["H100-SXM5"].regressions, rows["H100-SXM5"].unresolved) == (1, 2)


def test_empty_history_gives_an_empty_digest():
    empty = build_digest(empty_history(), start=PERIOD_START, end=PERIOD_END)
    assert empty.regressions == empty.regime_flips == empty.devices == []
    headline = "**No nightly run stored up to 2026-11-27: nothing to digest**"
    assert headline in render_digest_markdown(empty)  # not "0 new regressions", a quiet week


def test_week_title_names_the_iso_week(digest):
    assert iso_week(PERIOD_START, PERIOD_END) == "2026-W48" == digest.week
    assert digest_title(digest) == "roofguard digest 2026-W48"


def test_a_period_longer_than_a_week_is_titled_by_its_dates(digest):
    month = digest.model_copy(update={"start": PERIOD_START - timedelta(days=23)})
    assert digest_title(month) == "roofguard digest 2026-10-29 to 2026-11-27"


def test_golden_markdown_and_json(digest, golden):
    golden(GOLDEN / "digest.md", render_digest_markdown(digest))
    golden(GOLDEN / "digest.json", render_digest_json(digest))
    data = json.loads(render_digest_json(digest))
    for section in ("regressions", "improvements", "regime_flips"):
        for entry in data[section]:
            assert {
                "kernel",
                "device",
                "relative_change",
                "since",
                "from_commit",
                "to_commit",
            } <= set(entry)


def test_kernel_names_are_escaped_in_markdown_and_html(history):
    odd = history.assign(
        kernel_key=history["kernel_key"].replace("gemv_bf16", "gemv<half, 4>|@team #1")
    )
    digest = build_digest(odd, start=PERIOD_START, end=PERIOD_END)
    markdown = render_digest_markdown(digest)
    assert "`gemv<half, 4>\\|@team #1`" in markdown
    html = render_digest_html(digest)
    assert "gemv&lt;half, 4&gt;|@team #1" in html and "<half" not in html


def test_progress_reports_each_stage(history):
    stages: list[str] = []
    build_digest(history, start=PERIOD_START, end=PERIOD_END, progress=stages.append)
    assert stages == [
        "preparing history",
        "finding change points",
        "classifying changes",
        "summarising",
        "scanning time and inventory",
    ]


def test_scans_and_medians_a_few_series_at_a_time_give_the_same_digest(history, monkeypatch):
    """Series are scanned, and segments' medians taken, a slab at a time (memory): same digest."""
    whole = render_digest_json(build_digest(history, start=PERIOD_START, end=PERIOD_END))
    monkeypatch.setattr("service.digest.changes.MEDIAN_ROWS", 7)
    monkeypatch.setattr("service.digest.changes.BLOCK_POINTS", 1)  # a slab a series or two
    monkeypatch.setattr("service.digest.changes.BLOCKS_PLACED_TOGETHER", 1)
    sliced = render_digest_json(build_digest(history, start=PERIOD_START, end=PERIOD_END))
    assert sliced == whole


def test_slabs_scanned_in_worker_processes_give_the_same_digest(history, monkeypatch):
    """A large scan with workers goes to worker processes (spawned): the same digest.

    One pool serves both scans: the time scan's slabs follow the percent of roof's.
    """
    whole = render_digest_json(build_digest(history, start=PERIOD_START, end=PERIOD_END))
    monkeypatch.setattr("service.digest.changes.BLOCK_POINTS", 1)  # several slabs
    monkeypatch.setattr("service.digest.changes.BLOCKS_PLACED_TOGETHER", 1)
    monkeypatch.setattr("service.digest.changes.PARALLEL_POINTS", 0)
    pools: list[int] = []
    real_pool = workers.ProcessPoolExecutor

    def counted(count: int, **kw):
        pools.append(count)
        return real_pool(count, **kw)

    monkeypatch.setattr("service.digest.workers.ProcessPoolExecutor", counted)
    two = DigestOptions(workers=2)
    parallel = render_digest_json(
        build_digest(history, start=PERIOD_START, end=PERIOD_END, options=two)
    )
    assert pools == [2]
    assert parallel == whole


def test_workers_that_cannot_start_leave_the_scan_to_this_process(history, monkeypatch, caplog):
    whole = render_digest_json(build_digest(history, start=PERIOD_START, end=PERIOD_END))
    monkeypatch.setattr("service.digest.changes.PARALLEL_POINTS", 0)

    def no_processes(count: int, **kw):
        raise OSError("no processes in this sandbox")

    monkeypatch.setattr("service.digest.workers.ProcessPoolExecutor", no_processes)
    two = DigestOptions(workers=2)
    alone = render_digest_json(
        build_digest(history, start=PERIOD_START, end=PERIOD_END, options=two)
    )
    assert alone == whole
    assert "workers failed (no processes in this sandbox)" in caplog.text


_SLAB_CELLS = changes._slab_cells


def _exit_in_worker(*args):
    """A slab's cells here; in a worker process, the worker dies (as one killed would)."""
    if multiprocessing.parent_process() is not None:
        os._exit(1)
    return _SLAB_CELLS(*args)


def test_a_worker_that_dies_leaves_its_slabs_to_this_process(history, monkeypatch, caplog):
    """A pool that breaks mid-scan (a worker killed for memory): its pieces are done here."""
    whole = render_digest_json(build_digest(history, start=PERIOD_START, end=PERIOD_END))
    monkeypatch.setattr("service.digest.changes.BLOCK_POINTS", 1)
    monkeypatch.setattr("service.digest.changes.BLOCKS_PLACED_TOGETHER", 1)
    monkeypatch.setattr("service.digest.changes.PARALLEL_POINTS", 0)
    monkeypatch.setattr("service.digest.changes._slab_cells", _exit_in_worker)
    with workers.Workers(2) as pool:
        broken = build_digest(history, start=PERIOD_START, end=PERIOD_END, workers=pool)
    assert render_digest_json(broken) == whole
    assert "workers failed" in caplog.text
