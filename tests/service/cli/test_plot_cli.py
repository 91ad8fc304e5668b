"""``roofguard plot run`` and ``plot kernel``: files from reports and from the store."""

from __future__ import annotations

import html
import re
import warnings
from datetime import UTC, datetime

import pytest
from digest_history import history_runs, make_digest_history
from factories import make_kernel, make_run

from rules.hardware import builtin_catalog
from rules.placement import place_run
from service.cli import run
from service.cli.plot_cmd import run_points
from service.render.charts import roofline_chart
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

H100 = builtin_catalog().lookup("H100-SXM5").roof()


def _report(tmp_path, name, dram_bytes):
    record = make_run(
        kernels=[
            make_kernel("gemv", flops={"fp32": 2e9}, dram_bytes=dram_bytes, time_s=2e-3),
            make_kernel("gemm", flops={"tensor_bf16": 4e12}, dram_bytes=1e10, time_s=8e-3),
        ],
        timestamp=datetime(2026, 11, 20, tzinfo=UTC),
    )
    path = tmp_path / f"{name}.json"
    path.write_text(record.model_dump_json())
    return path, record


def _ids(svg: str, prefix: str) -> list[str]:
    return sorted(set(re.findall(rf'id="({re.escape(prefix)}[^"]*)"', svg)))


def test_run_points_place_kernels_with_time_share_and_baseline(tmp_path):
    _, current = _report(tmp_path, "current", 4e9)
    _, base = _report(tmp_path, "base", 2e9)
    points = run_points(current, place_run(current, H100), place_run(base, H100))
    gemv = next(p for p in points if p.name == "gemv")
    assert (gemv.intensity, gemv.achieved_flop_per_s) == (0.5, 1e12)
    assert gemv.time_share == pytest.approx(0.2) and gemv.baseline == (1.0, 1e12)
    ax = roofline_chart(H100, points).axes[0]
    precisions = {
        a.get_gid().split(":")[1]
        for a in ax.get_children()
        if (a.get_gid() or "").startswith("roof:")
    }
    assert precisions == {"fp32", "tensor_bf16"}, "only the precisions the kernels use"


def test_plot_run_from_files_with_baseline(tmp_path, capsys):
    current, _ = _report(tmp_path, "current", 4e9)
    base, _ = _report(tmp_path, "base", 2e9)
    out = tmp_path / "chart.svg"
    assert run(["plot", "run", str(current), "--baseline", str(base), "--output", str(out)]) == 0
    svg = out.read_text()
    assert _ids(svg, "arrow:") == ["arrow:gemv"], "gemm did not move: no arrow"
    assert _ids(svg, "label:") == ["label:gemm", "label:gemv"]
    assert "roof:tensor_bf16:dram" in _ids(svg, "roof:")
    assert f"wrote {out}" in capsys.readouterr().out


def test_plot_run_png_and_bad_output(tmp_path, capsys):
    current, _ = _report(tmp_path, "current", 4e9)
    png = tmp_path / "chart.png"
    assert run(["plot", "run", str(current), "--output", str(png)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert run(["plot", "run", str(current), "--output", str(tmp_path / "chart.pdf")]) == 2
    assert "must end in .svg or .png" in capsys.readouterr().err


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('plot') / 'history.db'}"
    engine = open_store(url)
    with session_scope(engine) as session:
        for record in history_runs(make_digest_history()):
            roof = builtin_catalog().lookup(record.device.name).roof()
            ingest_run(session=session, run=record, placements=place_run(record, roof), roof=roof)
    engine.dispose()
    return url


def test_plot_run_from_the_store(store_url, tmp_path):
    out = tmp_path / "run.svg"
    assert (
        run(["plot", "run", "1", "--baseline", "3", "--db", store_url, "--output", str(out)]) == 0
    )
    svg = out.read_text()
    assert len(_ids(svg, "label:")) == 6 and "A100-SXM4-80GB (datasheet)" in svg


def test_plot_kernel_trend_with_change_point(store_url, tmp_path):
    out = tmp_path / "trend.svg"
    args = ["plot", "kernel", "gemv_bf16", "--repo", "acme/kernels", "--db", store_url]
    assert run([*args, "--device", "H100-SXM5", "--output", str(out)]) == 0
    svg = out.read_text()
    assert _ids(svg, "change:") == ["change:0"] and _ids(svg, "baseline-band")
    assert "035c0ffe" in svg, "the first bad commit labels the change"


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3", "h100-sxm5", "H100"])
def test_plot_kernel_takes_a_cards_other_names(store_url, tmp_path, name):
    """The driver's name, any case, a prefix one card begins: as compare --devices takes."""
    out = tmp_path / "trend.svg"
    args = ["plot", "kernel", "gemv_bf16", "--repo", "acme/kernels", "--db", store_url]
    assert run([*args, "--device", name, "--output", str(out)]) == 0
    assert "gemv_bf16 on H100-SXM5" in out.read_text()


def test_plot_kernel_on_a_card_it_never_ran_on_names_its_cards(store_url, tmp_path, capsys):
    args = ["plot", "kernel", "gemv_bf16", "--repo", "acme/kernels", "--db", store_url]
    assert run([*args, "--device", "B200", "--output", str(tmp_path / "t.svg")]) != 0
    err = capsys.readouterr().err
    assert "--device: kernel 'gemv_bf16' has no nightly history on 'B200'" in err
    assert "it runs on A100-SXM4-80GB, H100-SXM5" in err


def test_plot_kernel_on_two_cards_draws_both_in_percent_of_roof(store_url, tmp_path, capsys):
    out = tmp_path / "cards.svg"
    args = ["plot", "kernel", "gemv_bf16", "--repo", "acme/kernels", "--db", store_url]
    assert run([*args, "--output", str(out)]) == 0
    svg = out.read_text()
    assert _ids(svg, "series:") == ["series:A100-SXM4-80GB", "series:H100-SXM5"]
    assert _ids(svg, "card:") == ["card:0"]  # one card joined the other
    assert run([*args, "--metric", "time", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--device: kernel 'gemv_bf16' runs on A100-SXM4-80GB, H100-SXM5" in err
    assert "its time on one card is no baseline for another's" in err


def test_plot_kernel_errors(store_url, capsys):
    assert run(["plot", "kernel", "nope", "--repo", "acme/kernels", "--db", store_url]) != 0
    assert "no nightly history" in capsys.readouterr().err
    assert run(["plot", "run", "not-a-file-or-id", "--db", store_url]) == 2
    assert "neither a report file nor a run id" in capsys.readouterr().err


def test_matplotlib_layout_warnings_do_not_reach_the_terminal(corpus_dir, tmp_path, capfd):
    """A V100 report with long kernel names collapsed constrained_layout: a warning leaked."""
    out = tmp_path / "chart.svg"
    report = corpus_dir / "ncu-rep/kulnaman_lammps__output.ncu-rep"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning that escapes fails the command
        assert run(["plot", "run", str(report), "--output", str(out)]) == 0
    assert out.read_bytes().startswith(b"<?xml")
    assert "Warning" not in capfd.readouterr().err


def test_long_cutlass_names_are_cut_and_stay_on_the_chart(corpus_dir, tmp_path):
    """The V100 CUTLASS GEMMs have names of hundreds of characters: they ran off the figure."""
    out = tmp_path / "chart.svg"
    report = corpus_dir / "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"
    assert run(["plot", "run", str(report), "--output", str(out)]) == 0
    svg = out.read_text()
    width = float(re.search(r'<svg[^>]* viewBox="0 0 ([\d.]+) ', svg).group(1))
    labels = re.findall(
        r'<g id="label:([^"]*)">\s*<text style="[^"]*text-anchor: (\w+)" x="([\d.]+)"[^>]*>'
        r"([^<]*)</text>",
        svg,
    )
    cutlass = [label for label in labels if label[0].startswith("cutlass::Kernel")]
    assert len(cutlass) == 2, labels
    for full, anchor, x, text in cutlass:
        shown = html.unescape(text)
        assert len(shown) <= 48 and "…" in shown, shown
        assert len(html.unescape(full)) > 48, "the label's id keeps the full name"
        extent = 0.6 * 8 * len(shown)  # the estimate the placement uses
        left, right = (
            (float(x), float(x) + extent) if anchor == "start" else (float(x) - extent, float(x))
        )
        assert left >= 0 and right <= width, (shown, left, right, width)


def test_plot_kernel_draws_pr_runs_apart_from_the_nightly_line(tmp_path):
    """The docs promise PR runs as open markers off the line; `plot kernel` dropped them."""
    db = f"sqlite:///{tmp_path}/h.db"
    for night in range(6):
        path, _ = _report(tmp_path, f"n{night}", 4e9)
        argv = ["--commit", f"n{night}", "--branch", "main", "--kind", "nightly"]
        argv += ["--timestamp", f"2026-11-{10 + night}T02:00:00Z"]
        assert run(["ingest", str(path), "--repo", "acme/k", "--db", db, *argv]) == 0
    slow = make_run(
        kernels=[make_kernel("gemv", flops={"fp32": 2e9}, dram_bytes=4e9, time_s=9e-3)],
        timestamp=datetime(2026, 11, 18, tzinfo=UTC),
    )
    pr = tmp_path / "pr.json"
    pr.write_text(slow.model_dump_json())
    argv = ["--commit", "p1", "--branch", "feat", "--kind", "pr", "--pr", "3"]
    assert run(["ingest", str(pr), "--repo", "acme/k", "--db", db, *argv]) == 0
    out = tmp_path / "trend.svg"
    argv = ["--repo", "acme/k", "--metric", "time", "--output", str(out), "--db", db]
    assert run(["plot", "kernel", "gemv", *argv]) == 0
    svg = out.read_text()
    assert _ids(svg, "other-runs") == ["other-runs"], "the PR run is drawn, apart"
    line = re.search(r'<g id="series">\s*<path d="([^"]*)"', svg).group(1)
    assert line.count("L ") == 5, "the line joins the six nights only"


@pytest.mark.parametrize(
    ("runners", "marked"),
    [(["r1"] * 4 + ["r2"] * 4, True), (["r1", "r2"] * 4, False)],
    ids=["a swap", "a pool taking turns"],
)
def test_plot_kernel_marks_the_night_a_runner_took_over(tmp_path, runners, marked):
    """As the dashboard's kernel page and the digest's charts do."""
    db = f"sqlite:///{tmp_path}/h.db"
    for night, runner in enumerate(runners):
        path, _ = _report(tmp_path, f"n{night}", 4e9)
        argv = ["--commit", f"n{night}", "--branch", "main", "--kind", "nightly"]
        argv += ["--timestamp", f"2026-11-{10 + night}T02:00:00Z", "--runner", runner]
        assert run(["ingest", str(path), "--repo", "acme/k", "--db", db, *argv]) == 0
    out = tmp_path / "trend.svg"
    assert (
        run(["plot", "kernel", "gemv", "--repo", "acme/k", "--output", str(out), "--db", db]) == 0
    )
    svg = out.read_text()
    assert _ids(svg, "runner:") == (["runner:0"] if marked else [])
    assert ("runner r1 → r2" in svg) is marked
