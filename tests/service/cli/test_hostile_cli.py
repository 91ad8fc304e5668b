"""Hostile input through the real commands: names are data, never markup."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from factories import make_kernel, make_run

from service.cli import run

#: matplotlib would parse this as math text (and fail on the unbalanced ``\frac``).
MATH_NAME = r"gemv_$\frac{a}$_<half>$"


def _report(path, *, commit: str, night: int = 0, time_s: float = 1e-3):
    record = make_run(
        commit=commit,
        timestamp=datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night),
        kernels=[
            make_kernel(MATH_NAME, time_s=time_s),
            make_kernel("$$", dram_bytes=8e9, time_s=4e-3),
        ],
    )
    path.write_text(record.model_dump_json(), encoding="utf-8")
    return path


def test_plot_run_draws_a_kernel_named_like_math_text(tmp_path):
    out = tmp_path / "chart.svg"
    report = _report(tmp_path / "r.json", commit="c1")
    assert run(["plot", "run", str(report), "--output", str(out)]) == 0
    svg = out.read_text()
    assert "gemv_$\\frac{a}$_&lt;half&gt;$" in svg, "the name is drawn as given"


def test_check_charts_with_math_text_names(tmp_path):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    common = ["--repo", "acme/kernels", "--db", db]
    for night in range(3):
        report = _report(tmp_path / f"n{night}.json", commit=f"c{night}", night=night)
        args = ["ingest", str(report), *common, "--commit", f"c{night}", "--branch", "main"]
        assert run([*args, "--kind", "nightly"]) == 0
    pr = _report(tmp_path / "pr.json", commit="f00d", night=4, time_s=2e-3)
    charts = tmp_path / "charts"
    args = ["check", str(pr), *common, "--commit", "f00d", "--pr", "7", "--charts", str(charts)]
    assert run([*args, "--output", str(tmp_path / "v.md")]) in (0, 1)
    assert "\\frac{a}" in (charts / "roofline.svg").read_text()


def test_ingest_refuses_a_run_from_the_future(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'h.db'}"
    report = _report(tmp_path / "r.json", commit="c1")
    args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", "c1", "--db", db]
    args += ["--branch", "main"]
    assert run([*args, "--timestamp", "2099-01-01T00:00:00Z"]) == 2
    err = capsys.readouterr().err
    assert "--timestamp: 2099-01-01T00:00:00+00:00 is " in err and "in the future" in err
    assert run(args) == 0, "the report's own (past) timestamp is fine"


def test_inspect_prints_no_terminal_escape_from_a_report(tmp_path, capsys):
    osc8 = "\x1b]8;;https://evil.example/\x1b\\gemm\x1b]8;;\x1b\\"
    record = make_run(
        kernels=[make_kernel(osc8 + "\x1b[2J"), make_kernel("\x9b31mred")],  # keys = names
        device="NVIDIA H100 80GB HBM3\x1b]0;pwned\x07",
    )
    path = tmp_path / "r.json"
    path.write_text(record.model_dump_json(), encoding="utf-8")
    assert run(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert "gemm" in out and "red" in out and "pwned" not in out
