"""A work model fixed in roofguard.toml: earlier nights judged on the new work, nothing fails.

Eight nights of a GEMM whose FLOPs come from ``2*M*N*K``, then the team corrects the model
(here to ``M*N*K``, half): percent of roof halves at the same time. The nightly check failed
"regressed (confirmed)" on the second night. Now each night before the edit is judged on the
new work (its percent of roof from its own time), so the edit fails nothing and a real
slowdown on the night of the edit still fails, as on any other night.
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
NOTE = "declared work model of 1 kernel changed"


def _night(
    tmp_path: Path, url: str, night: int, flops: str, *pr: str, slower: float = 1.0
) -> tuple[int, dict]:
    """Night ``night`` through ``roofguard check`` under the model ``flops``: (exit, verdict).

    ``pr``: the run is that pull request's instead (``--pr N --branch feature``); ``slower``:
    the GEMM's time is that many times its usual.
    """
    config = tmp_path / "roofguard.toml"
    config.write_text(MODEL.format(flops=flops))
    report = _report(tmp_path, night, slower)
    out = tmp_path / f"verdict-{night}.json"
    argv = ["check", str(report), "--repo", REPO, "--commit", f"{night:07x}"]
    argv += [*pr] if pr else ["--branch", "main", "--kind", "nightly"]
    argv += ["--config", str(config), "--db", url]
    code = run([*argv, "--format", "json", "--output", str(out)])
    return code, json.loads(out.read_text())


def _report(tmp_path: Path, night: int, slower: float = 1.0) -> Path:
    """Night ``night``'s report: the GEMM (work from its M, N, K) and a copy, a little noise."""
    gemm = make_kernel(
        "BM_gemm/4096",
        flops={},
        dram_bytes=None,
        time_s=slower * 1e-3 * (1 + 0.004 * math.sin(night)),
        params={"M": 4096, "N": 4096, "K": 4096},
    )
    copy = make_kernel("copy", time_s=2e-3 * (1 + 0.004 * math.cos(night)))
    when = START + timedelta(days=night)
    report = tmp_path / f"night-{night}.json"
    report.write_text(make_run(repo=REPO, kernels=[gemm, copy], timestamp=when).model_dump_json())
    return report


def _gemm(verdict: dict) -> dict:
    return next(k for k in verdict["kernels"] if k["key"] == "BM_gemm/4096")


def _history(tmp_path: Path, nights: int = 8, flops: str = "2*M*N*K") -> str:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    for night in range(nights):
        assert _night(tmp_path, url, night, flops)[0] == 0
    return url


def _acceptances(url: str) -> list[tuple[str, str]]:
    engine = open_store(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(ACCEPTANCES.c.accepted_by, ACCEPTANCES.c.reason)).all()
    engine.dispose()
    return [(str(by), str(reason)) for by, reason in rows]


def test_a_corrected_work_model_fails_nothing_and_says_why(tmp_path: Path) -> None:
    url = _history(tmp_path)
    code, fixed = _night(tmp_path, url, 8, "M*N*K")
    assert code == 0 and fixed["conclusion"] == "pass", fixed["findings"]
    (note,) = [n for n in fixed["notes"] if NOTE in n]
    assert "BM_gemm/4096: flops.tensor_bf16 '2 * M * N * K' → 'M * N * K'" in note
    assert "each earlier night is judged on the new model's work" in note
    assert _gemm(fixed)["status"] == "unchanged"  # judged, not new
    for night in (9, 10, 11):  # the nights before the edit stay on the new work
        code, later = _night(tmp_path, url, night, "M*N*K")
        assert code == 0 and later["conclusion"] == "pass", later["findings"]
        assert not [n for n in later["notes"] if NOTE in n]
    ((by, reason),) = _acceptances(url)  # recorded once, by the nightly
    assert by == "roofguard" and "work model changed (BM_gemm/4096: flops" in reason


def test_a_slowdown_on_the_night_of_the_edit_still_fails(tmp_path: Path) -> None:
    """Restarted as a new kernel, a GEMM 2x slower on that night passed, and for good."""
    url = _history(tmp_path)
    first = _night(tmp_path, url, 8, "M*N*K", slower=2.0)[1]
    assert _gemm(first)["status"] in ("suspect", "regressed"), first["findings"]
    code, second = _night(tmp_path, url, 9, "M*N*K", slower=2.0)
    assert code == 1 and _gemm(second)["status"] == "regressed"


def test_spacing_and_comments_are_no_edit(tmp_path: Path) -> None:
    """A ' = ' in a comment hid an edit; reformatting alone restarted the history."""
    url = _history(tmp_path, flops="2*M*N*K  # 2 flops an FMA: flops = v1")
    same = _night(tmp_path, url, 8, "2 * M * N * K  # flops = v2")[1]
    assert not [n for n in same["notes"] if NOTE in n] and not _acceptances(url)
    code, edited = _night(tmp_path, url, 9, "M*N*K  # flops = v2")
    assert code == 0 and [n for n in edited["notes"] if NOTE in n]


def test_a_pull_request_that_edits_a_model_rescales_only_its_own_baseline(
    tmp_path: Path,
) -> None:
    url = _history(tmp_path)
    code, pr = _night(tmp_path, url, 8, "M*N*K", "--pr", "7", "--branch", "feature")
    assert code == 0 and _gemm(pr)["status"] == "unchanged"
    assert any(NOTE in n for n in pr["notes"]) and not _acceptances(url)
    slow = _night(tmp_path, url, 9, "M*N*K", "--pr", "8", "--branch", "f2", slower=3.0)[1]
    assert _gemm(slow)["status"] in ("suspect", "regressed")  # the edit hides no slowdown
    assert _night(tmp_path, url, 10, "2*M*N*K")[1]["conclusion"] == "pass"  # main's model


def test_the_weekly_digest_lists_the_edit_as_no_regression(tmp_path: Path, capsys) -> None:
    """The digest read the nights before the edit as they were: a -50% "regression"."""
    url = _history(tmp_path)
    for night in range(8, 14):
        _night(tmp_path, url, night, "M*N*K")
    capsys.readouterr()
    period = ["--from", "2026-11-08", "--to", "2026-11-14", "--lookback-days", "7"]
    assert run(["digest", *period, "--repo", REPO, "--db", url, "--json"]) == 0
    digest = json.loads(capsys.readouterr().out)
    moved = [m["kernel"] for name in ("regressions", "improvements") for m in digest[name]]
    assert "BM_gemm/4096" not in moved, digest["headline"]
    assert digest["measurements"] > 0


def test_the_same_model_night_after_night_records_no_edit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'history.db'}"
    verdicts = [_night(tmp_path, url, night, "2*M*N*K")[1] for night in range(5)]
    assert _gemm(verdicts[-1])["status"] != "new"
    assert not any(NOTE in n for v in verdicts for n in v["notes"])


def test_a_night_ingested_with_the_edit_records_it_too(tmp_path: Path) -> None:
    """Ingested, the edited night recorded nothing: the next check failed as a regression."""
    url = _history(tmp_path)
    config = tmp_path / "roofguard.toml"
    config.write_text(MODEL.format(flops="M*N*K"))
    report = _report(tmp_path, 8)
    argv = ["ingest", str(report), "--repo", REPO, "--commit", "0000008", "--branch", "main"]
    assert run([*argv, "--kind", "nightly", "--config", str(config), "--db", url]) == 0
    assert [by for by, _ in _acceptances(url)] == ["roofguard"]
    code, after = _night(tmp_path, url, 9, "M*N*K")
    assert code == 0 and after["conclusion"] == "pass", after["findings"]


def test_plot_kernel_draws_the_earlier_nights_on_the_new_work(tmp_path: Path) -> None:
    """The trend joined the old model's level to the new one, a change point at the edit."""
    from service.cli.plot_cmd import _kernel_series

    url = _history(tmp_path)
    for night in (8, 9, 10):
        _night(tmp_path, url, night, "M*N*K")
    nightly, _ = _kernel_series(url, REPO, "BM_gemm/4096", None)
    percent = nightly["percent_of_roof"].astype(float)
    assert len(percent) == 11 and percent.max() / percent.min() < 1.02  # one level
