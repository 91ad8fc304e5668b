"""``check`` over damaged files: a verdict, or exit 2 with one line; never a traceback.

CI reads exit 1 as a failing verdict, so a crash must never end with it: every error,
expected or not, is one ``roofguard: error:`` line and exit 2 (issue 32 item 6). The files
are reports mutated as careless CI and attackers damage them (the collectors' seeded
mutator), a history store that is not a database, a config and a health file cut short.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "collectors"))
from fuzzing import JSON_MUTATORS, LIMIT_MUTATORS, TEXT_MUTATORS, mutations

from service.cli import run

SOURCES = {
    "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json": JSON_MUTATORS,
    "ncu-csv/Lashi0812_CudaProgramming__ncu_reduceInteger.csv": TEXT_MUTATORS,
    "nvbench/R100001_PMPP__image_to_grayscale_BenchResults2060.csv": LIMIT_MUTATORS,
}
PER_SOURCE = 6
GOOD = "gbench/google_benchmark__tools_gbench_Inputs_test1_run1.json"


def _check(tmp_path: Path, report: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "verdict.md"
    out.unlink(missing_ok=True)
    args = ["check", str(report), "--repo", "acme/k", "--commit", "c1", "--branch", "main"]
    db = ["--db", f"sqlite:///{tmp_path / 'h.db'}"] if "--db" not in extra else []
    return run([*args, *db, "--output", str(out), "--device", "NVIDIA H100 80GB HBM3", *extra]), out


def _assert_verdict_or_one_line(code: int, out: Path, err: str, what: str) -> None:
    assert "Traceback" not in err, f"{what}: {err}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("roofguard: error: "), f"{what}: {err}"
    else:
        assert code in (0, 1) and out.read_text(), f"{what}: exit {code}: {err}"


def _damaged(corpus_dir: Path, tmp_path: Path) -> list[Path]:
    files = []
    for name, mutators in SOURCES.items():
        data = (corpus_dir / name).read_bytes()
        for index, mutant in enumerate(mutations(data, name, PER_SOURCE, mutators)):
            path = tmp_path / f"m{len(files)}-{index}{Path(name).suffix}"
            path.write_bytes(mutant)
            files.append(path)
    return files


def test_check_over_damaged_reports_gives_a_verdict_or_one_line(corpus_dir, tmp_path, capsys):
    for path in _damaged(corpus_dir, tmp_path):
        code, out = _check(tmp_path, path)
        _assert_verdict_or_one_line(code, out, capsys.readouterr().err, path.name)


@pytest.mark.parametrize(
    ("what", "damage"),
    [
        ("a history store that is not a database", "db"),
        ("a history store cut to its first page", "cut-db"),
        ("a config cut short", "config"),
        ("a health file cut short", "health"),
    ],
)
def test_check_with_a_damaged_store_config_or_health_file_is_one_line(
    corpus_dir, tmp_path, capsys, what, damage
):
    report = tmp_path / "r.json"
    report.write_bytes((corpus_dir / GOOD).read_bytes())
    extra: list[str] = []
    if damage in ("db", "cut-db"):
        store = tmp_path / "damaged.db"
        if damage == "db":
            store.write_bytes(b"\x00garbage" * 512)
        else:
            assert _check(tmp_path, report)[0] in (0, 1)
            store.write_bytes((tmp_path / "h.db").read_bytes()[:4096])
        extra = ["--db", f"sqlite:///{store}"]
    elif damage == "config":
        (tmp_path / "roofguard.toml").write_text('[rules.time-regression]\nthreshold = "', "utf-8")
        extra = ["--config", str(tmp_path / "roofguard.toml")]
    else:
        (tmp_path / "health.json").write_text('{"trusted": tr', "utf-8")
        extra = ["--health-file", str(tmp_path / "health.json")]
    capsys.readouterr()
    code, out = _check(tmp_path, report, *extra)
    _assert_verdict_or_one_line(code, out, capsys.readouterr().err, what)
    assert code == 2, what
