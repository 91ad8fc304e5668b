"""What the work model edit check costs a declared-work check (a script, not a test).

Every kernel of a run whose work comes from ``[[work_models]]`` is compared with its newest
baseline run's expressions (``service.pipeline.workchange``): that run's stored record is read
back. Timed here as a CLI check meets it, with no record kept from the night before: the CPU
of ``check_run`` on a night of ``--kernels`` GEMMs after ``--nights`` nights, with the check
and without it (the same function swapped for one that finds no edit), alternated.

Usage::

    python tests/bench/bench_work_model_restart.py [--kernels 2000] [--nights 30] [--samples 10]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from factories import make_kernel, make_run

import service.pipeline.check as check_module
import service.store.profiles as profiles
from collectors import RunRecord, WorkModel, apply_work_models
from service.config import RoofguardConfig
from service.store.db import open_store, session_scope

MODELS = [
    WorkModel(pattern="BM_*", flops={"tensor_bf16": "2*M*N*K"}, bytes={"dram": "2*(M*K+K*N+M*N)"})
]
START = datetime(2026, 11, 1, 2, tzinfo=UTC)


def night(index: int, kernels: int) -> RunRecord:
    """Night ``index``: ``kernels`` GEMMs timed with a little noise, their work declared."""
    gemms = [
        make_kernel(
            f"BM_gemm/{i}",
            flops={},
            dram_bytes=None,
            time_s=1e-3 * (1 + 0.01 * math.sin(index + i)),
            params={"M": 1024 + i, "N": 1024, "K": 1024},
        )
        for i in range(kernels)
    ]
    when = START + timedelta(days=index)
    run = make_run(repo="acme/bench", kernels=gemms, timestamp=when, commit=f"{index:07x}")
    return apply_work_models(run, MODELS, "roofguard.toml")


def _no_edit(*args: object) -> tuple[object, None]:
    """``workchange.on_todays_work`` that finds no edit: the baseline as read (its 3rd argument)."""
    return args[2], None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--nights", type=int, default=30)
    parser.add_argument("--samples", type=int, default=10, help="checks of each kind")
    args = parser.parse_args()
    config = RoofguardConfig(work_models=MODELS)
    engine = open_store(f"sqlite:///{Path(tempfile.mkdtemp()) / 'history.db'}")
    for index in range(args.nights):
        with session_scope(engine) as session:
            check_module.check_run(session=session, run=night(index, args.kernels), config=config)
    checked = check_module.on_todays_work
    spent: dict[str, list[float]] = {"with the check": [], "without it": []}
    for sample in range(2 * args.samples):
        kind = "with the check" if sample % 2 else "without it"
        check_module.on_todays_work = checked if sample % 2 else _no_edit
        run = night(args.nights + sample, args.kernels)
        profiles._RECORDS.clear()  # a CLI process keeps no record from the night before
        began = time.process_time()
        with session_scope(engine) as session:
            check_module.check_run(session=session, run=run, config=config)
        spent[kind].append(time.process_time() - began)
    for kind, seconds in spent.items():
        print(f"{kind}: median {statistics.median(seconds):.3f} CPU s of {len(seconds)} checks")


if __name__ == "__main__":
    main()
