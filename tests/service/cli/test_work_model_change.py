"""A work model fixed in roofguard.toml restarts its kernels' history instead of failing.

Eight nights of a GEMM whose FLOPs come from ``2*M*N*K``, then the team corrects the model
(here to ``M*N*K``, half): percent of roof halves at the same time. The nightly check failed
"regressed (confirmed)" on the second night; now the kernel is judged as new from the night
of the change, the verdict says why, and the nights after it are judged on the new model only.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from factories import make_kernel, make_run

from service.cli import run
from service.store.coretables import BASELINE_ACCEPTANCES as ACCEPTANCES
from service.store.db import open_store

REPO = "acme/gemms"
START = datetime(2026, 11, 1, 2, tzinfo=UTC)
MODEL = '[[work_models]]\npattern = "BM_gemm*"\nflops = {{ tensor_bf16 = "{flops}" }}\n'


def _night(tmp_path: Path, url: str, night: int, flops: str, *pr: str) -> tuple[int, dict]:
    """Night ``night`` through ``roofguard check`` under the model ``flops``: (exit, verdict).

    ``pr``: the run is that pull request's instead (``--pr N --branch feature``).
    """
    config = tmp_path / "roofguard.toml"
    config.write_text(MODEL.format(flops=flops))
    gemm = make_kernel(
        "BM_gemm/4096",
        flops={},
        dram_bytes=None,
        time_s=1e-3 * (1 + 0.004 * math.sin(night)),
        params={"M": 4096, "N": 4096, "K": 4096},
    )
    copy = make_kernel("copy", time_s=2e-3 * (1 + 0.004 * math.cos(night)))
    when = START + timedelta(days=night)
    report = tmp_path / f"night-{night}.json"
    report.write_text(make_run(repo=REPO, kernels=[gemm, copy], timestamp=when).model_dump_json())
    out = tmp_path / f"verdict-{night}.json"
    argv = ["check", str(report), "--repo", REPO, "--commit", f"{night:07x}"]
    argv += [*pr] if pr else ["--branch", "main", "--kind", "nightly"]
    argv += ["--config", str(config), "--db", url]
    code = run([*argv, "--format", "json", "--output", str(out)])
    return code, json.loads(out.read_text())


def _gemm(verdict: dict) -> dict:
    return next(k for k in verdict["kernels"] if k["key"] == "BM_gemm/4096")


def test_a_corrected_work_model_restarts_the_history_and_fails_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    for night in range(8):
        assert _night(tmp_path, url, night, "2*M*N*K")[0] == 0
    code, fixed = _night(tmp_path, url, 8, "M*N*K")
    assert code == 0 and fixed["conclusion"] != "fail"
    (note,) = [n for n in fixed["notes"] if "declared work model" in n]
    assert "BM_gemm/4096: flops.tensor_bf16 '2*M*N*K' → 'M*N*K'" in note
    assert "judged as a new kernel from this run on" in note
    assert _gemm(fixed)["status"] == "new"
    for night in (9, 10, 11):  # the nights before the change are no longer its baseline
        code, later = _night(tmp_path, url, night, "M*N*K")
        assert code == 0 and later["conclusion"] == "pass", later["findings"]
        assert not [n for n in later["notes"] if "declared work model" in n]
    engine = open_store(url)
    with engine.connect() as conn:
        reasons = conn.execute(sa.select(ACCEPTANCES.c.accepted_by, ACCEPTANCES.c.reason)).all()
    engine.dispose()
    assert [by for by, _ in reasons] == ["roofguard"]  # recorded once, by the nightly
    assert "work model changed (BM_gemm/4096: flops.tensor_bf16" in reasons[0][1]


def test_the_same_model_night_after_night_restarts_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    verdicts = [_night(tmp_path, url, night, "2*M*N*K")[1] for night in range(5)]
    assert _gemm(verdicts[-1])["status"] != "new"
    assert not any("declared work model" in n for v in verdicts for n in v["notes"])


def test_a_pull_request_that_edits_a_model_restarts_only_its_own_baseline(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    for night in range(8):
        _night(tmp_path, url, night, "2*M*N*K")
    code, pr = _night(tmp_path, url, 8, "M*N*K", "--pr", "7", "--branch", "feature")
    assert code == 0 and _gemm(pr)["status"] == "new"
    assert any("declared work model of 1 kernel changed" in n for n in pr["notes"])
    engine = open_store(url)
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(ACCEPTANCES)).scalar() == 0
    engine.dispose()
    assert _night(tmp_path, url, 9, "2*M*N*K")[1]["conclusion"] == "pass"  # main kept its model


def test_the_weekly_digest_does_not_list_the_restart_as_a_regression(
    tmp_path: Path, capsys
) -> None:
    """The digest read the nights before the edit too: a -50% "regression" of every kernel."""
    url = f"sqlite:///{tmp_path / 'history.db'}"
    for night in range(14):
        _night(tmp_path, url, night, "2*M*N*K" if night < 8 else "M*N*K")
    capsys.readouterr()
    period = ["--from", "2026-11-08", "--to", "2026-11-14", "--lookback-days", "7"]
    assert run(["digest", *period, "--repo", REPO, "--db", url, "--json"]) == 0
    digest = json.loads(capsys.readouterr().out)
    moved = [m["kernel"] for name in ("regressions", "improvements") for m in digest[name]]
    assert "BM_gemm/4096" not in moved, digest["headline"]
    assert digest["measurements"] > 0
