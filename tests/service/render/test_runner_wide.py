"""A move shared by many kernels of a run, through the real commands: one note, in the headline.

Twelve nights of twenty memory-bound kernels (0.6% noise) are ingested into a SQLite store;
a pull request then runs fourteen of them 10% slower (a throttled card, say), or only two.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from factories import make_kernel, make_run
from typer.testing import CliRunner

from service.cli import build_app

KERNELS = 20
PR_COMMIT = "f" * 40


def _run(path: Path, night: int, slower: int, rng: np.random.Generator, **extra) -> Path:
    kernels = [
        make_kernel(
            f"decode_k{i:02d}",
            flops={"fp32": 1e8},
            dram_bytes=1e9 * (1 + i % 4),
            time_s=0.0118 * (1 + i % 4) * (1 + rng.normal(0, 0.006)) * (1.10 if i < slower else 1),
        )
        for i in range(KERNELS)
    ]
    stamp = datetime(2026, 11, 1, 2, tzinfo=UTC) + timedelta(days=night)
    run = make_run(kernels=kernels, timestamp=stamp, device="H100-SXM5", **extra)
    path.write_text(run.model_dump_json(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, str]:
    """The twelve nights, ingested with ``roofguard ingest``."""
    folder = tmp_path_factory.mktemp("runnerwide")
    db = f"sqlite:///{folder / 'history.db'}"
    rng = np.random.default_rng(5)
    for night in range(12):
        report = _run(folder / f"night{night}.json", night, 0, rng)
        commit = f"{night + 1:040x}"
        args = ["ingest", str(report), "--repo", "acme/kernels", "--branch", "main"]
        result = CliRunner().invoke(build_app(), [*args, "--commit", commit, "--db", db])
        assert result.exit_code == 0, result.output
    return folder, db


def _check(
    store: tuple[Path, str], slower: int, *config: str, commit: str = PR_COMMIT
) -> tuple[str, dict]:
    """The PR's markdown headline and its JSON verdict (``config``: more flags)."""
    folder, db = store
    report = _run(folder / f"pr{slower}.json", 12, slower, np.random.default_rng(7), kind="pr")
    common = ["check", str(report), "--repo", "acme/kernels", "--commit", commit]
    common += ["--pr", "7", "--kind", "pr", "--db", db, *config]
    outputs = []
    for fmt in ("markdown", "json"):
        result = CliRunner().invoke(build_app(), [*common, "--format", fmt])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    return outputs[0], json.loads(outputs[1])


def _notes(verdict: dict) -> list[dict]:
    return [f for f in verdict["findings"] if f["kernel"] is None and f["rule"] == "roof-drop"]


def test_fourteen_of_twenty_slower_is_noted_once_in_the_headline(store) -> None:
    markdown, verdict = _check(store, 14)
    suspects = [f for f in verdict["findings"] if f["kernel"] and f["severity"] == "warn"]
    assert len(suspects) == 14
    (note,) = _notes(verdict)
    assert note["severity"] == "info"
    numbers = note["numbers"]
    assert (numbers["kernels_moved"], numbers["kernels_judged"]) == (14, 20)
    changes = [f["numbers"]["relative_change"] for f in suspects]
    assert numbers["median_relative_change"] == pytest.approx(float(np.median(changes)))
    story = next(line for line in markdown.splitlines() if line.startswith("⏱️"))
    assert "runner\\-wide\\: 14 of 20 kernels below their levels" in story


def test_two_slower_kernels_are_their_own_business(store) -> None:
    markdown, verdict = _check(store, 2)
    assert not _notes(verdict)
    assert "runner" not in markdown


def test_kernel_groups_are_not_counted_as_kernels(store, tmp_path) -> None:
    """Groups are judged too (``group:<name>``): counted, 1,000 kernels in 100 groups read
    "1,100 of 1,100 kernels"."""
    config = tmp_path / "roofguard.toml"
    config.write_text(
        "".join(f'[[rules.groups]]\nname = "g{i}"\npattern = "decode_k{i}*"\n\n' for i in range(2))
    )
    markdown, verdict = _check(store, 14, "--config", str(config), commit="e" * 40)
    assert [g["name"] for g in verdict["groups"]] == ["g0", "g1"]
    (note,) = _notes(verdict)
    assert (note["numbers"]["kernels_moved"], note["numbers"]["kernels_judged"]) == (14, 20)
    assert "runner\\-wide\\: 14 of 20 kernels below their levels" in markdown
