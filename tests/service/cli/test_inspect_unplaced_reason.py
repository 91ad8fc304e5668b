"""``roofguard inspect`` says why a kernel is unplaced, not the first gap its roof has.

On an A40 report, an int8 GEMM whose tensor-pipe (IMMA) work ncu counts none of read
"unplaced: no bandwidth for l2 on this roof" (the catalog's A40 lacks an L2 figure, which
the kernel beside it, placed at 95%, shows is no obstacle), and an H800 launch whose replay
failed, every figure NaN, read "unplaced: FLOP counts (no FLOP counters ...)".
"""

from __future__ import annotations

import io

from rich.console import Console

from collectors import collect
from rules import builtin_catalog, place_kernel
from service.cli.inspect_cmd import _read, kernel_table, resolve_roof
from service.config import RoofguardConfig

IMMA = "ncu-rep/eschnett_IndexSpaces.jl__profile.ncu-rep"
FAILED_REPLAY = "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"


def _rows(path) -> dict[str, str]:
    """The table's rows by the kernel name they start with (one line each through a pipe)."""
    config = RoofguardConfig()
    run, roof = resolve_roof(_read(path, None, config, "test"), None, config)
    buffer = io.StringIO()
    Console(file=buffer, width=400, color_system=None).print(kernel_table(run, roof, None))
    return {line.split()[0]: line for line in buffer.getvalue().splitlines() if line.strip()}


def test_uncounted_tensor_work_is_the_reason_not_the_roofs_l2_gap(corpus_dir):
    rows = _rows(corpus_dir / IMMA)
    assert "unplaced: tensor-core work not counted" in rows["julia_bb_4477"]
    assert "memory-bound" in rows["julia__5_6739"]


def test_a_failed_replay_is_not_measured(corpus_dir):
    rows = _rows(corpus_dir / FAILED_REPLAY)
    failed = next(line for name, line in rows.items() if name.startswith("flash_fwd_kernel"))
    assert "unplaced: not measured: gpu__time_duration.sum is NaN (replay failed)" in failed


def test_the_placement_leads_with_the_uncounted_work(corpus_dir):
    run = collect(corpus_dir / IMMA)
    kernel = next(k for k in run.kernels if k.name.startswith("julia_bb"))
    placement = place_kernel(kernel, builtin_catalog().lookup("A40").roof())
    assert placement.missing[0].startswith("flops: left out: the tensor pipe ran integer")
    # Its percent is of the bytes alone: the verdict marks such a figure a lower bound.
    assert placement.percent_of_roof is not None and placement.regime is None
