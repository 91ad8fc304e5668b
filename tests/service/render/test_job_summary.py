"""The job summary is the verdict with every kernel its 1 MiB holds, not the cut comment.

A PR comment is capped at 65,536 characters, so it counts what it cannot list: a first run's
new kernels past the heaviest 20, and the unchanged kernels. The job summary has room for them
and lists them, least important cut first, in UTF-8 bytes (GitHub's unit for that limit).
"""

from __future__ import annotations

import re
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options
from verdict_factory import make_finding, make_kernel, make_unchanged, make_verdict

from rules.verdict import KernelStatus
from service.cli import run
from service.github.actions import SUMMARY_LIMIT_BYTES, append_verdict_summary
from service.render.markdown import render_job_summary, render_verdict

_ROW = re.compile(r"^\| [^|]* \| `([^`]+)`", re.M)  # a kernel table's row: its name


def _changed_and_unchanged(unchanged: int, prefix: str = "elementwise_kernel"):
    changed = [
        make_kernel(f"hot_{i}", share=0.01, status=KernelStatus.REGRESSED, pct=50.0, center=60.0)
        for i in range(5)
    ]
    rest = make_unchanged(unchanged, share=0.95, prefix=prefix)
    for i, kernel in enumerate(rest):  # distinct shares: the lightest is the least important
        rest[i] = kernel.model_copy(update={"time_share": 0.95 * (unchanged - i) / unchanged**2})
    return make_verdict([*changed, *rest], [make_finding(k) for k in changed])


def test_the_summary_lists_the_unchanged_kernels_the_comment_counts() -> None:
    verdict = _changed_and_unchanged(1995)
    comment = render_verdict(verdict)
    summary = render_job_summary(verdict, max_bytes=SUMMARY_LIMIT_BYTES)
    assert "elementwise_kernel_7`" not in comment
    names = [f"elementwise_kernel_{i}" for i in range(1995)]
    assert [n for n in _ROW.findall(summary) if n.startswith("elementwise")] == names
    assert len(summary.encode()) <= SUMMARY_LIMIT_BYTES and "left out" not in summary
    html = cmarkgfm.github_flavored_markdown_to_html(summary, options=Options.CMARK_OPT_UNSAFE)
    unchanged = html.split("1,995 other kernels unchanged")[1].split("</details>")[0]
    assert unchanged.count("<tr>") == 1996, "the unchanged rows form one table"
    assert comment.split("### Findings")[1] == summary.split("### Findings")[1]


def test_a_summary_past_its_budget_keeps_the_changed_and_heaviest_kernels() -> None:
    verdict = _changed_and_unchanged(400, prefix="ядро_поэлементное")  # 2 bytes a letter
    budget = 60_000
    summary = render_job_summary(verdict, max_bytes=budget)
    assert len(summary) < budget < len(summary.encode()) + 1_000, "the budget is in bytes"
    kept = [n for n in _ROW.findall(summary) if n.startswith("ядро")]
    assert 0 < len(kept) < 400 and kept == [f"ядро_поэлементное_{i}" for i in range(len(kept))]
    assert all(f"`hot_{i}`" in summary for i in range(5))
    left_out = f"✂️ {400 - len(kept)} less important kernels left out"
    assert left_out in summary and "to stay under the job summary's size limit" in summary


def test_a_summary_with_no_room_is_cut_to_it() -> None:
    summary = render_job_summary(_changed_and_unchanged(10), max_bytes=300)
    assert len(summary.encode()) <= 300 and "Cut to stay under the job summary's" in summary


def test_the_summary_shares_the_step_limit_with_what_is_there(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("x" * (SUMMARY_LIMIT_BYTES - 50_000))
    env = {"GITHUB_STEP_SUMMARY": str(path)}
    assert append_verdict_summary(_changed_and_unchanged(1995), env, note="> note\n\n")
    text = path.read_text()
    assert len(text.encode()) <= SUMMARY_LIMIT_BYTES and "less important kernels left out" in text
    assert text[SUMMARY_LIMIT_BYTES - 50_000 :].startswith("> note\n\n<!-- roofguard:verdict")
    assert not append_verdict_summary(_changed_and_unchanged(1), {})


def _check(tmp_path: Path, report: Path) -> None:
    args = ["check", str(report), "--repo", "acme/kernels", "--commit", report.stem]
    args += ["--branch", "main", "--kind", "nightly", "--device", "H100-SXM5"]
    args += ["--db", f"sqlite:///{tmp_path / 'runs.db'}", "--output", str(tmp_path / "v.md")]
    assert run(args) == 0


def _report(tmp_path: Path, name: str, kernels: int) -> Path:
    rows = "".join(f"gemm_{i:03d},{0.001 * (1 + i)},1e10,1e8,1\n" for i in range(kernels))
    path = tmp_path / f"{name}.csv"
    path.write_text("name,duration_s,flops_fp32,bytes_dram,launches\n" + rows)
    return path


def test_check_in_actions_writes_every_kernel_to_the_summary(tmp_path, monkeypatch):
    kernels = 60
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    _check(tmp_path, _report(tmp_path, "first", kernels))
    first = summary.read_text()
    assert sorted(_ROW.findall(first)) == [f"gemm_{i:03d}" for i in range(kernels)]
    assert "more new kernels stored" not in first
    assert "more new kernels stored" in (tmp_path / "v.md").read_text(), "the comment counts"
    for night in ("second", "third"):  # the gate judges from 3 runs
        _check(tmp_path, _report(tmp_path, night, kernels))
    summary.write_text("")
    _check(tmp_path, _report(tmp_path, "fourth", kernels))
    second = summary.read_text()
    assert sorted(_ROW.findall(second)) == [f"gemm_{i:03d}" for i in range(kernels)]
    assert f"<details><summary>✅ All {kernels} kernels unchanged (100.0% of GPU time)" in second
    assert "gemm_000" not in (tmp_path / "v.md").read_text(), "the comment counts them"
