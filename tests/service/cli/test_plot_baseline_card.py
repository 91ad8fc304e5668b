"""``plot run --baseline``: a baseline run from another card is refused, naming both cards.

The chart draws the baseline's achieved FLOP/s on the run's roof: an A100 run's point on the
H100 roof read as "improved from 25% to 34% of the H100 roof", which it never was.
"""

from __future__ import annotations

from datetime import UTC, datetime

from factories import make_kernel, make_run

from service.cli import run


def _report(tmp_path, name, device, time_s=2e-3):
    record = make_run(
        kernels=[make_kernel("gemv", flops={"fp32": 2e9}, dram_bytes=4e9, time_s=time_s)],
        timestamp=datetime(2026, 11, 20, tzinfo=UTC),
        device=device,
    )
    path = tmp_path / f"{name}.json"
    path.write_text(record.model_dump_json())
    return path


def test_a_report_from_another_card_is_no_baseline(tmp_path, capsys):
    current = _report(tmp_path, "h100", "NVIDIA H100 80GB HBM3")
    base = _report(tmp_path, "a100", "NVIDIA A100-SXM4-80GB", time_s=4e-3)
    out = tmp_path / "cross.svg"
    assert run(["plot", "run", str(current), "--baseline", str(base), "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, "one line"
    assert f"--baseline: {base} ran on A100-SXM4-80GB, {current} on H100-SXM5" in err
    assert "no baseline on another's roof" in err
    assert f"`roofguard compare {base} --against {current}`" in err
    assert not out.exists()


def test_two_names_of_one_card_are_a_baseline(tmp_path):
    current = _report(tmp_path, "now", "NVIDIA H100 80GB HBM3")
    base = _report(tmp_path, "base", "H100-SXM5", time_s=4e-3)
    out = tmp_path / "same.svg"
    assert run(["plot", "run", str(current), "--baseline", str(base), "--output", str(out)]) == 0
    assert 'id="arrow:gemv"' in out.read_text()


def test_a_stored_run_from_another_card_is_no_baseline(tmp_path, capsys):
    db = f"sqlite:///{tmp_path}/h.db"
    for night, device in enumerate(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"]):
        path = _report(tmp_path, f"n{night}", device)
        argv = ["--commit", f"n{night}", "--branch", "main", "--kind", "nightly"]
        argv += ["--timestamp", f"2026-11-{10 + night}T02:00:00Z"]
        assert run(["ingest", str(path), "--repo", "acme/k", "--db", db, *argv]) == 0
    capsys.readouterr()
    out = tmp_path / "cross.svg"
    assert run(["plot", "run", "1", "--baseline", "2", "--db", db, "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--baseline: run 2 ran on A100-SXM4-80GB, run 1 on H100-SXM5" in err
    assert "`roofguard compare BASE_FILES... --against FILES...`" in err
    assert "/compare/runs?base=2&head=1" in err
    assert not out.exists()
    assert run(["plot", "run", "1", "--baseline", "1", "--db", db, "--output", str(out)]) == 0


def test_a_stored_run_of_another_repository_is_no_baseline(tmp_path, capsys):
    """Accepted in silence, it drew no arrow: none of its kernels is the run's."""
    db = f"sqlite:///{tmp_path}/h.db"
    for night, repo in enumerate(["acme/serving", "other/repo"]):
        path = _report(tmp_path, f"n{night}", "NVIDIA H100 80GB HBM3")
        argv = ["--commit", f"n{night}", "--branch", "main", "--kind", "nightly"]
        assert run(["ingest", str(path), "--repo", repo, "--db", db, *argv]) == 0
    capsys.readouterr()
    out = tmp_path / "other.svg"
    assert run(["plot", "run", "2", "--baseline", "1", "--db", db, "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--baseline: run 1 is a run of acme/serving, the run drawn one of other/repo" in err
    assert run(["plot", "run", "2", "--baseline", "999", "--db", db, "--output", str(out)]) == 2
    assert "--baseline: run 999 is not in the history store" in capsys.readouterr().err
    assert not out.exists()
