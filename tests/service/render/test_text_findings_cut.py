"""The terminal verdict prints the findings of the kernels its table shows, and counts the rest.

A 20,000-kernel PR printed all 13,248 finding blocks (25 MB of text), in the verdict's order
(rule, then kernel name), where its table showed 30 rows.
"""

from __future__ import annotations

from pathlib import Path

from csv_checks import check_csv

from service.render.text import MAX_ROWS, render_verdict_text


def test_the_findings_past_the_tables_kernels_are_counted(tmp_path: Path) -> None:
    count = MAX_ROWS + 10
    for night in range(5):
        rows = "".join(f"gemm_{i},0.001,1e10,1e8,1\n" for i in range(count))
        check_csv(tmp_path, "acme/many", f"n{night}", rows)
    slower = "".join(f"gemm_{i},{0.002 + i * 1e-5},1e10,1e8,1\n" for i in range(count))
    verdict = check_csv(tmp_path, "acme/many", "pr", slower, "--branch", "feat", "--pr", "3")
    text = render_verdict_text(verdict)
    blocks = [line for line in text.splitlines() if line.startswith("❌ roof-drop: ")]
    assert len(blocks) == MAX_ROWS
    shown = {line.split(": ", 1)[1] for line in blocks}
    assert f"gemm_{count - 1}" in shown and "gemm_0" not in shown  # the slowest are shown
    assert text.rstrip().endswith("…and 10 more finding(s) on 10 kernels (see --format json)")
