"""``roofguard inspect`` on a terminal fits its width; through a pipe every row is one line.

A real ncu report of an H800 (sglang's flash-attention and an unnamed ATen kernel, one of them
unplaced) makes a table 198 columns wide: a 100-column terminal cropped half of it. A pipe
wraps text at 200 columns, and a kernel with work in four precisions made a row wider than
that, cropped too.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from service.cli.inspect_cmd import _read, kernel_table, render, resolve_roof
from service.config import RoofguardConfig
from tests.factories import make_kernel, make_run

REPORT = "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"


@pytest.fixture
def placed(corpus_dir):
    config = RoofguardConfig()
    run, roof = resolve_roof(_read(corpus_dir / REPORT, None, config, "test"), None, config)
    return corpus_dir / REPORT, run, roof


def printed(table, width: int) -> list[str]:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(table, crop=False)
    return buffer.getvalue().splitlines()


@pytest.mark.parametrize("width", [100, 120, 160])
def test_a_terminal_gets_a_table_no_wider_than_itself(placed, width):
    _, run, roof = placed
    lines = printed(kernel_table(run, roof, width), width)
    assert max(map(len, lines)) <= width
    words = set(" ".join(lines).split())
    assert {"memory-bound", "unplaced:", "14.6", "87.14"} <= words


def test_the_columns_hidden_are_named(placed):
    _, run, roof = placed
    table = kernel_table(run, roof, 100)
    headers = {str(column.header) for column in table.columns}
    assert "launches" not in headers and {"kernel", "% roof", "regime"} <= headers
    assert str(table.caption).endswith("hidden to fit 100 columns")
    assert kernel_table(run, roof, 240).caption is None


def test_a_pipe_gets_each_kernel_on_one_whole_line(tmp_path):
    precisions = {"fp32": 1.1e9, "fp16": 2.2e9, "tensor_fp16": 3.3e9, "tensor_bf16": 4.4e12}
    kernel = make_kernel("k" * 44, flops=precisions, dram_bytes=5.5e9, l2_bytes=6.6e9)
    run = make_run(kernels=[kernel])
    _, roof = resolve_roof(run, "H100-SXM5", RoofguardConfig())
    rows = [line for line in render(tmp_path, run, roof).splitlines() if line.startswith("kkk")]
    assert len(rows) == 1 and len(rows[0].rstrip()) > 200
    assert "tensor_bf16 4.4T" in rows[0] and "l2 6.6G" in rows[0]
    assert rows[0].split()[-1] == "tensor_bf16"  # the binding column, past 200 characters
