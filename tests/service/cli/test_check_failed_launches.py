"""A kernel none of whose launches has a duration is not measured, through `roofguard check`.

A real H800 report (``flyinglandlord_sglang__profile.ncu-rep``) holds a ``flash_fwd_kernel``
whose one replay read NaN. Before, a PR whose profile had it read "182 ms → 0.00 ms (0.00×)
improved" and passed, and a nightly stored it at 0 s.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import collectors
from rules.verdict import KernelStatus, Verdict
from service.cli import run

REPORT = "ncu-rep/flyinglandlord_sglang__profile.ncu-rep"
REPO = "acme/sglang"


def _nights(record: collectors.RunRecord, folder: Path) -> list[Path]:
    """Three nights of the report in which the failed kernel ran (1 ms), as RunRecord JSON."""
    good, failed = record.kernels
    ran = failed.model_copy(update={"launches": 1, "failed_launches": 0, "duration_s": 1e-3})
    start = datetime.now(UTC) - timedelta(days=4)
    paths = []
    for night in range(3):
        path = folder / f"night{night}.json"
        copy = record.model_copy(
            update={"kernels": (good, ran), "timestamp": start + timedelta(days=night)}
        )
        path.write_text(copy.model_dump_json())
        paths.append(path)
    return paths


@pytest.mark.corpus
def test_a_kernel_whose_replay_failed_is_missing_not_improved(tmp_path, corpus_dir) -> None:
    report = corpus_dir / REPORT
    record = collectors.collect(report)
    assert [k.launches for k in record.kernels] == [4, 0]
    db = f"sqlite:///{tmp_path / 'history.db'}"
    common = ["--repo", REPO, "--db", db, "--format", "json"]
    for night, path in enumerate(_nights(record, tmp_path)):
        nightly = ["--commit", f"n{night}", "--branch", "main", "--kind", "nightly"]
        assert run(["check", str(path), *common, *nightly]) == 0
    out = tmp_path / "pr.json"
    pr = ["--commit", "pr", "--branch", "feat", "--pr", "7", "--output", str(out)]
    assert run(["check", str(report), *common, *pr]) == 0  # a warning: exit 0
    verdict = Verdict.model_validate_json(out.read_text())
    statuses = {row.name.split("<")[0]: row.status for row in verdict.kernels}
    assert statuses["void flash_fwd_kernel"] == KernelStatus.MISSING
    assert KernelStatus.IMPROVED not in statuses.values()
    [finding] = [f for f in verdict.findings if f.rule == "missing-kernel"]
    assert "its 1 launch(es) in this run have no duration (" in finding.message
    assert "NaN" in finding.message and finding.numbers["failed_launches"] == 1
    assert verdict.conclusion == "warn"
    with sqlite3.connect(tmp_path / "history.db") as store:  # no 0 s row stored for it
        counted = store.execute(
            "select count(*) from measurements m join runs r on r.id = m.run_id"
            " where r.pull_request = 7"
        ).fetchone()
    assert counted == (1,)


@pytest.mark.corpus
def test_ingest_says_which_kernel_it_did_not_store(tmp_path, corpus_dir, capsys) -> None:
    """ingest printed "(2 kernels)" and stored one measurement, without a word of the other."""
    db = f"sqlite:///{tmp_path / 'history.db'}"
    argv = ["ingest", str(corpus_dir / REPORT), "--repo", REPO, "--commit", "n1", "--db", db]
    assert run([*argv, "--branch", "main"]) == 0
    out, err = capsys.readouterr()
    assert "(2 kernels; 1 not measured, not stored)" in out
    assert "note: not measured, no launch with a duration: void flash_fwd_kernel" in err
