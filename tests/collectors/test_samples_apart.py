"""Per-launch samples must bracket the kernel's time per launch, whichever reader made them.

``duration_s`` is the total over ``launches`` and each sample one launch's (or, with
``launches`` 1, one iteration's or repetition's) time. A kernel whose time per launch lies
more than 2x outside its samples' range is refused on the record path and not vouched for
on the column path; a slow repetition beside a median ``duration_s`` is no such kernel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collectors
from collectors.batch import ChunkBuilder, NotBatchable, leaves_of
from collectors.schema import KernelRecord

GBENCH_REPS = Path(__file__).parent / "data" / "micro" / "gbench_gemm_gpu.json"


def _kernel(duration_s: float, launches: int = 10) -> KernelRecord:
    return KernelRecord(
        name="k", key="k", launches=launches, duration_s=duration_s, samples_s=(0.00995, 0.01005)
    )


def _chunk(kernel: KernelRecord) -> None:
    """Gather ``kernel`` into a chunk of columns and close it (its checks run)."""
    builder = ChunkBuilder("run.csv")
    values = {("name",): "k", ("key",): "k", ("duration_s",): kernel.duration_s}
    values |= {("samples_s", str(i)): s for i, s in enumerate(kernel.samples_s)}
    row = tuple(values[leaf] for leaf in leaves_of(kernel)[0])
    builder.add_values("one shape", row, lambda: kernel)
    builder.flush()


def test_columns_whose_samples_are_each_the_run_s_time_are_not_vouched_for() -> None:
    with pytest.raises(NotBatchable, match="samples"):
        _chunk(_kernel(0.01))  # 1 ms a launch, samples of 10 ms
    with pytest.raises(NotBatchable, match="samples"):
        _chunk(_kernel(0.01, launches=1).model_copy(update={"duration_s": 0.03}))
    _chunk(_kernel(0.1))
    _chunk(_kernel(0.01, launches=1))


def test_a_slow_repetition_beside_the_median_duration_is_kept(tmp_path: Path) -> None:
    """Google Benchmark's time is the repetitions' median: one 10x slower (a cold first run)
    puts their mean 4x from it, yet the median lies within them, as every median does."""
    report = json.loads(GBENCH_REPS.read_text())
    report["benchmarks"][2]["real_time"] *= 10
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(report))
    kernel = collectors.collect(path).kernels[0]
    assert kernel.launches == 1 and len(kernel.samples_s) == 3
    assert sum(kernel.samples_s) / 3 > 4 * kernel.duration_s


def test_a_kernel_timed_per_run_in_a_record_file_is_refused_naming_it(tmp_path: Path) -> None:
    run = collectors.collect(GBENCH_REPS)
    kernel = run.kernels[0].model_copy(update={"launches": 200})  # the iterations, as launches
    path = tmp_path / "run.json"
    path.write_text(run.model_copy(update={"kernels": (kernel,)}).model_dump_json())
    with pytest.raises(collectors.CollectorError) as refused:
        collectors.collect(path)
    message = str(refused.value)
    assert message.startswith(f"{path}, row kernels[0], field 'samples_s': duration_s ")
    assert "over 200 launch(es)" in message
