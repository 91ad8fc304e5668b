"""What re-reading a baseline on corrected datasheet figures costs (a script, not a test).

After a peak is corrected in ``[devices.X]``, every check for the next ``baseline.window``
nights re-reads the baseline runs stored on the old figures (``rules.reread_history``). Timed
here on generated histories (``tests/reread_rows.history``: runs on the figures as they are,
scaled to a clock, or ``ClockedRoof``) against the row-by-row placement it replaced
(``tests/reread_rows.reread_rows``, each row through ``rules.place``), alternated in one
process; each pair of results is compared for equality first.

Usage::

    python tests/bench/bench_reread.py [--runs 60] [--kernels 2000] [--samples 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd
from reread_rows import history, reread_rows

from rules import reread_history


def _cpu(call: object, *args: object) -> float:
    start = time.process_time()
    call(*args)  # type: ignore[operator]
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    for varied in (False, True):
        frame, work, rereads = history(args.runs, args.kernels, seed=7, varied=varied)
        rows = int(frame["run_id"].isin(list(rereads)).sum())
        pd.testing.assert_frame_equal(
            reread_history(frame, work, rereads), reread_rows(frame, work, rereads)
        )
        spent: dict[str, list[float]] = {"row by row": [], "by chunks": []}
        for _ in range(args.samples):
            spent["row by row"].append(_cpu(reread_rows, frame, work, rereads))
            spent["by chunks"].append(_cpu(reread_history, frame, work, rereads))
        shapes = "many shapes" if varied else "two shapes"
        print(f"{args.runs} runs x {args.kernels} kernels, {rows:,} rows re-read ({shapes}):")
        for name, seconds in spent.items():
            median = statistics.median(seconds)
            print(f"  {name:>10}: median {median:.3f} CPU s, {1e6 * median / rows:.1f} µs a row")


if __name__ == "__main__":
    main()
