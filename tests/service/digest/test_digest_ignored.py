"""``roofguard digest`` leaves out the kernels the config's ``ignore_kernels`` names.

Before, a warm-up kernel a team ignores (never judged by a check) was listed by the weekly
digest as a regression when its time moved.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

from service.cli import run
from service.digest.ignored import without_ignored
from tests.factories import make_kernel, make_run

DAY0 = datetime(2026, 11, 1, 2, tzinfo=UTC)
NIGHTS, SLOWER_FROM = 21, 14
PERIOD = ["--from", (DAY0 + timedelta(days=10)).isoformat()]
PERIOD += ["--to", (DAY0 + timedelta(days=NIGHTS)).isoformat()]


def _store(tmp_path: Path) -> str:
    """21 nights of gemv and a warm-up; both 1.5x slower from night 14."""
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for night in range(NIGHTS):
        slower = 1.5 if night >= SLOWER_FROM else 1.0
        jitter = 1 + 0.005 * (night % 3)
        kernels = [
            make_kernel(
                "gemv", flops={"fp32": 2e9}, dram_bytes=4e9, time_s=1.5e-3 * jitter * slower
            ),
            make_kernel(
                "warmup_fill", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4 * jitter * slower
            ),
        ]
        record = make_run(
            kernels=kernels, commit=f"c{night:04d}", timestamp=DAY0 + timedelta(days=night)
        )
        report = tmp_path / f"n{night}.json"
        report.write_text(record.model_dump_json(), encoding="utf-8")
        args = ["ingest", str(report), "--repo", "acme/kernels", "--commit", f"c{night:04d}"]
        assert run([*args, "--branch", "main", "--kind", "nightly", "--db", db]) == 0
    return db


def _moved(db: str, config: Path, capsys) -> set[str]:
    capsys.readouterr()
    args = ["digest", *PERIOD, "--repo", "acme/kernels", "--json", "--db", db]
    assert run([*args, "--config", str(config)]) == 0
    data = json.loads(capsys.readouterr().out)
    return {e["kernel"] for s in ("regressions", "improvements", "unresolved") for e in data[s]}


def test_an_ignored_kernel_is_not_listed_by_the_digest(tmp_path, capsys) -> None:
    db = _store(tmp_path)
    plain, ignoring = tmp_path / "plain.toml", tmp_path / "ignoring.toml"
    plain.write_text("", encoding="utf-8")
    ignoring.write_text('[rules]\nignore_kernels = ["warmup_*"]\n', encoding="utf-8")
    assert _moved(db, plain, capsys) == {"gemv", "warmup_fill"}
    assert _moved(db, ignoring, capsys) == {"gemv"}


def test_a_pattern_matches_a_kernel_by_its_key_or_its_name() -> None:
    frame = pd.DataFrame(
        {
            "kernel_key": pd.Categorical(["a", "b", "c", "a"]),
            "kernel_name": pd.Categorical(["gemm<1>", "fill<2>", "norm", "gemm<1>"]),
        }
    )
    assert without_ignored(frame, ["fill*", "c"])["kernel_key"].tolist() == ["a", "a"]
    assert without_ignored(frame, []) is frame
