"""Kernels without FLOPs in the verdict table, in markdown and on the terminal alike.

A copy with bytes and zero FLOPs is placed on the memory roof at its percent of the bandwidth
roof (not ``unplaced ... ≥ 85.2%``), from roofguard's CSV and from a PyTorch trace's device
copies; a kernel that cannot be placed is listed by the text table as by the markdown.
"""

from __future__ import annotations

import json

from service.cli import run
from service.render.listing import VISIBLE_ROWS
from service.render.text import MAX_ROWS

COPY_ROW = "copy_kernel,0.001,0,2.854e9,1"  # 2.854 GB in 1 ms: 85.2% of 3.35 TB/s


def _check(tmp_path, report, fmt):
    out = tmp_path / f"verdict.{fmt}"
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", "c0ffee", "--branch"]
    args += ["main", "--kind", "nightly", "--device", "H100-SXM5", "--format", fmt]
    args += ["--db", f"sqlite:///{tmp_path / f'{fmt}.db'}", "--output", str(out)]
    assert run(args) == 0
    return out.read_text()


def _row(text, name):
    """The table row of ``name``: a markdown row, or a terminal line that starts with it."""
    (line,) = [line for line in text.splitlines() if line.startswith((name, f"| 🆕 | `{name}`"))]
    return line


def test_a_zero_flop_copy_in_roofguard_csv_is_on_the_memory_roof(tmp_path):
    report = tmp_path / "run.csv"
    report.write_text(f"name,duration_s,flops_fp32,bytes_dram,launches\n{COPY_ROW}\n")
    for fmt in ("markdown", "text"):
        row = _row(_check(tmp_path, report, fmt), "copy_kernel")
        assert "85.2%" in row and "memory (dram)" in row, row
        assert "unplaced" not in row and "≥" not in row, row


def test_device_copies_of_a_pytorch_trace_are_on_the_memory_roof(tmp_path):
    events = [
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "dur": 20,
         "args": {"device": 0, "bytes": 33554432}},
        {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "dur": 100, "args": {"device": 0}},
    ]  # fmt: skip
    report = tmp_path / "trace.json"
    report.write_text(json.dumps({"traceEvents": events}))
    verdict = json.loads(_check(tmp_path, report, "json"))
    copy = next(k for k in verdict["kernels"] if k["name"].startswith("Memcpy DtoD"))
    assert copy["regime"] == "memory-bound" and not copy["percent_is_lower_bound"]
    # 2 x 32 MiB (read and write) in 20 µs against 3.35 TB/s
    assert abs(copy["percent_of_roof"] - 100 * 2 * 33554432 / 3.35e12 / 20e-6) < 0.01


def test_the_text_table_lists_the_unplaced_kernels_the_markdown_shows(tmp_path):
    gemms = "".join(f"gemm_{i},0.001,1e10,1e8,1\n" for i in range(MAX_ROWS + 5))
    report = tmp_path / "run.csv"  # the unplaced kernel has the smallest share: ranked last
    report.write_text(
        "name,duration_s,flops_fp32,bytes_dram,launches\n"
        + gemms
        + "nocounters_kernel,0.00001,,2.854e7,1\n"
    )
    markdown, text = (_check(tmp_path, report, fmt) for fmt in ("markdown", "text"))
    assert "nocounters_kernel" in markdown
    row = next(line for line in text.splitlines() if line.startswith("nocounters_kernel"))
    assert "unplaced: no FLOP counts" in row and "≥ 85.2%" in row
    assert "…and 5 more new kernels stored" in text, "placed kernels past the limit are counted"


def test_a_suite_timed_alone_gets_the_first_rows_and_a_count_like_any_other(tmp_path):
    """Every kernel unplaced: 2,000 benchmarks made a 668-row first comment, 2,000 lines."""
    benches = "".join(f"bench_{i},0.001,1\n" for i in range(MAX_ROWS + 15))
    report = tmp_path / "run.csv"
    report.write_text("name,duration_s,launches\n" + benches)
    markdown, text = (_check(tmp_path, report, fmt) for fmt in ("markdown", "text"))
    assert markdown.count("| 🆕 | `bench_") == VISIBLE_ROWS
    assert f"{MAX_ROWS + 15 - VISIBLE_ROWS} more new kernels stored" in markdown
    assert sum(line.startswith("bench_") for line in text.splitlines()) == MAX_ROWS
    assert "…and 15 more new kernels stored" in text


def test_a_kernel_timed_alone_reads_time_only_on_one_line(tmp_path):
    report = tmp_path / "run.csv"  # a benchmark timed without work: no FLOP or byte counts
    report.write_text("name,duration_s,launches\nbench_softmax,0.0002,10\n")
    for fmt in ("markdown", "text"):
        text = _check(tmp_path, report, fmt)
        row = _row(text, "bench_softmax")
        assert "unplaced\\: time only" in row or "unplaced: time only" in row, row
        assert "declared work" not in row, "the whole reason is for the details, not each row"
        # The terminal row is one line: the next line is not the row's wrapped remainder.
        lines = text.splitlines()
        following = (lines[lines.index(row) + 1 :] or [""])[0]
        assert not following.startswith(" "), following
    # The name column is as wide as the longest name shown, not a fixed 48 characters.
    assert row.startswith("bench_softmax ") and "bench_softmax" + " " * 8 not in row, row


def test_a_first_check_has_no_footnote_on_baselines_it_does_not_have(tmp_path):
    report = tmp_path / "run.csv"
    report.write_text("name,duration_s,launches\nbench_softmax,0.0002,10\n")
    for fmt in ("markdown", "text"):
        text = _check(tmp_path, report, fmt)
        assert "bench_softmax" in text, text
        assert "Baseline:" not in text and "Baseline\\:" not in text, text  # text; markdown
