"""A repository whose CI fleet moved between cards: nightly history on real catalog cards.

Every kernel is given a percent of roof per card; each night's time is its roof time on that
card over that percent, with a small deterministic wobble, so every figure a test reads can
be recomputed from the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from factories import make_kernel, make_run

from collectors.schema import RunKind, RunRecord
from rules import Roof, builtin_catalog, place_run
from service.cli import run
from service.store.db import open_store, session_scope
from service.store.ingest import ingest_run

REPO = "acme/serving"
FIRST = datetime(2026, 2, 1, 2, 0, tzinfo=UTC)
#: A small, deterministic night-to-night wobble (about ±0.3%).
WOBBLE = (1.000, 1.003, 0.998, 1.002, 0.997, 1.001, 0.999, 1.002)


@dataclass(frozen=True)
class Work:
    """A kernel's work (FLOPs by precision, bytes by tier) and its percent of roof per card."""

    flops: Mapping[str, float]
    nbytes: Mapping[str, float]
    percent: Mapping[str, float] = field(default_factory=dict)

    def roof_time(self, roof: Roof) -> float:
        """``T_roof`` of this work on ``roof`` (rules/README.md)."""
        compute = max(f / roof.peak_flop_per_s[p] for p, f in self.flops.items())
        memory = max(b / roof.bandwidth_byte_per_s[t] for t, b in self.nbytes.items())
        return max(compute, memory)

    def time_on(self, card: str, roof: Roof | None = None) -> float:
        """Its time on ``card`` at its percent of roof there."""
        return self.roof_time(roof or datasheet(card)) / (self.percent[card] / 100.0)


#: A memory-bound GEMV that keeps its percent of roof everywhere, and a bf16 GEMM that does
#: not keep up with the H100 (80% of the A100's tensor roof, 50% of the H100's).
KERNELS = {
    "gemv": Work({"fp32": 5e8}, {"dram": 1e9}, {"A100-SXM4-80GB": 85.0, "H100-SXM5": 84.0}),
    "gemm": Work({"tensor_bf16": 2e12}, {"dram": 4e9}, {"A100-SXM4-80GB": 80.0, "H100-SXM5": 50.0}),
}


def datasheet(card: str) -> Roof:
    return builtin_catalog().lookup(card).roof()


def nights(
    card: str,
    count: int,
    *,
    start: int = 0,
    kernels: Mapping[str, Work] = KERNELS,
    roof: Roof | None = None,
    runner: str | None = None,
    kind: RunKind = RunKind.NIGHTLY,
) -> list[RunRecord]:
    """``count`` nightly runs of ``kernels`` on ``card`` from night ``start``."""
    return [
        make_run(
            repo=REPO,
            commit=f"n{start + i:04d}",
            kind=kind,
            timestamp=FIRST + timedelta(days=start + i),
            device=card,
            runner=runner,
            kernels=[
                make_kernel(
                    key,
                    flops=dict(work.flops),
                    dram_bytes=work.nbytes.get("dram"),
                    time_s=work.time_on(card, roof) * WOBBLE[(start + i) % len(WOBBLE)],
                )
                for key, work in kernels.items()
            ],
        )
        for i in range(count)
    ]


def store(engine: sa.Engine, runs: Sequence[RunRecord], roof: Roof) -> None:
    """Ingest ``runs``, each placed on ``roof``."""
    with session_scope(engine) as session:
        for run in runs:
            ingest_run(session=session, run=run, placements=place_run(run, roof), roof=roof)


def stored_history(folder: Path, card: str, kernels: Mapping[str, Work] = KERNELS) -> str:
    """A SQLite store in ``folder`` holding 30 nights of ``kernels`` on ``card``; its URL."""
    url = f"sqlite:///{folder / 'history.db'}"
    engine = open_store(url)
    try:
        store(engine, nights(card, 30, kernels=kernels), datasheet(card))
    finally:
        engine.dispose()
    return url


def slowed(record: RunRecord, factor: float, key: str = "gemv") -> RunRecord:
    """``record`` with kernel ``key``'s time ``factor`` times its own."""
    kernels = tuple(
        k.model_copy(update={"duration_s": k.duration_s * factor}) if k.key == key else k
        for k in record.kernels
    )
    return record.model_copy(update={"kernels": kernels})


def nightly_check(folder: Path, url: str, record: RunRecord) -> dict[str, Any]:
    """The JSON verdict of ``roofguard check`` of ``record`` as main's nightly run."""
    report, out = folder / f"{record.commit}.json", folder / f"{record.commit}.verdict.json"
    report.write_text(record.model_dump_json())
    argv = ["check", str(report), "--repo", REPO, "--commit", str(record.commit)]
    argv += ["--branch", "main", "--kind", "nightly", "--db", url]
    assert run([*argv, "--format", "json", "--output", str(out)]) in (0, 1)
    return dict(json.loads(out.read_text()))
