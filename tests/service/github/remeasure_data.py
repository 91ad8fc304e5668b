"""A stable nightly history and PR reports of it, for the Action's re-measure step tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from action_runner import REPO
from factories import make_kernel, make_run

from rules.verdict import KernelVerdict, Verdict
from service.cli import run as cli


def gemv_report(path: Path, scale: float, commit: str = "c0009") -> Path:
    """A run whose gemv takes ``scale`` times its usual time (norm unchanged)."""
    gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=1.5e-3 * scale)
    norm = make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
    path.write_text(make_run(kernels=[gemv, norm], commit=commit).model_dump_json())
    return path


def stable_history(tmp: Path, db: str | None = None, repo: str = REPO) -> str:
    """8 nightly runs of gemv (about 1% noise) and norm in ``db`` (default: SQLite in ``tmp``)."""
    db = db or f"sqlite:///{tmp / 'history.db'}"
    for night in range(8):
        time_s = 1.5e-3 * (1 + 0.01 * (night % 3))
        gemv = make_kernel("gemv", flops={"tensor_bf16": 2e10}, dram_bytes=4e9, time_s=time_s)
        norm = make_kernel("norm", flops={"fp32": 1e7}, dram_bytes=4e8, time_s=2e-4)
        ts = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=night)
        record = make_run(kernels=[gemv, norm], commit=f"n{night}", timestamp=ts)
        path = tmp / f"night-{night}.json"
        path.write_text(record.model_dump_json())
        args = ["ingest", str(path), "--repo", repo, "--commit", f"n{night}", "--branch", "main"]
        assert cli([*args, "--kind", "nightly", "--db", db]) == 0
    return db


def judged_gemv(steps: dict[str, Any]) -> KernelVerdict:
    """gemv as judged in the verdict the Action's check step wrote."""
    path = Path(steps["Check the reports"].outputs["verdict-path"])
    verdict = Verdict.model_validate_json(path.read_text())
    return next(k for k in verdict.kernels if k.key == "gemv")


def profiling_command(seen: Path, report: Path, *shown: str) -> str:
    """A user's profiling command: writes the ``shown`` expansions to ``seen`` ("|"-joined)
    and hands ``report`` back as the re-measurement."""
    fmt = "|".join(["%s"] * len(shown))
    quoted = " ".join(f'"{value}"' for value in shown)
    return f'printf "{fmt}" {quoted} > "{seen}"; cp "{report}" "$ROOFGUARD_RERUN_DIR/"'
