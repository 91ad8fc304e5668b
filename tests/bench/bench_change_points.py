"""Speed of the batch change-point scan: 2,000 kernels x 4 devices x 365 nights.

The digest scans every (kernel, device) series of a year at once. Side by side in the same
run: ``change_points_many`` over the whole matrix, the same detector called series by
series (``change_points`` in a loop, timed on a sample and scaled up), and Apache Otava
(e-divisive) on a smaller sample, scaled up. With ``--before DIR`` (a checkout of an earlier
commit, e.g. ``git worktree add /tmp/before <commit>``), the batch scan of that tree too, in a
child process on the same series, and whether its whole output (change points, z, relative
change, noise, drift) is the same bytes.

Wall and CPU time are both reported; on a shared, loaded box the CPU time of the process is
the fair comparison (wall time there measures the other processes as much as this one).

Run: ``python tests/bench/bench_change_points.py [--kernels 2000] [--devices 4]``.
"""

from __future__ import annotations

import argparse
import inspect
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import rules.stats
from rules.stats import ChangePointScan, change_points, change_points_many


def year_of_nights(series: int, nights: int, seed: int = 0) -> np.ndarray:
    """Percent-of-roof series with 2% noise, clock dips, and a step in one series of ten."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(30, 90, (series, 1)) * (1 + 0.02 * rng.standard_normal((series, nights)))
    dips = rng.random((series, nights)) < 0.02
    values[dips] *= 0.8
    stepped = rng.random(series) < 0.1
    at = rng.integers(30, nights - 5, series)
    for row in np.flatnonzero(stepped):
        values[row, at[row] :] *= 0.9
    return values


def timed(label: str, clock: tuple[float, float], series: int, total: int) -> str:
    """A table row: wall and CPU seconds for the series timed, both scaled to all series."""
    wall, cpu = (
        (time.perf_counter() - clock[0]) * total / series,
        (time.process_time() - clock[1]) * total / series,
    )
    return f"| {label} | {series:,} | {wall:.1f} s | {cpu:.1f} s |"


def start() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


#: The batch scan of another checkout (``--before``): the same series, made by the same code
#: (the bench module is not imported there: it would put this tree first on ``sys.path``), the
#: scan module's file checked to lie in that checkout, CPU time printed, its output saved.
BEFORE = """
import sys, time, numpy as np
sys.path.insert(0, {tree!r})
import rules.stats
from rules.stats import change_points_many
if not rules.stats.__file__.startswith({tree!r}):
    raise SystemExit("rules.stats came from " + rules.stats.__file__ + ", not " + {tree!r})
print(rules.stats.__file__)
{make}
values = year_of_nights({total}, {nights})
clock = time.process_time()
scan = change_points_many(values)
print(time.process_time() - clock)
np.savez({out!r}, **{{name: getattr(scan, name) for name in {fields!r}}})
"""

#: Every array of the scan's output, compared byte for byte with the tree before.
FIELDS = ("is_change", "z", "relative_change", "noise", "drift")


def scan_before(
    tree: str, shape: tuple[int, int], scan: ChangePointScan
) -> tuple[float, bool, str]:
    """CPU seconds of the batch scan of ``tree``, whether its output is the same bytes, its file."""
    tree = str(Path(tree).resolve())
    make = inspect.getsource(year_of_nights)
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "scan.npz")
        code = BEFORE.format(
            tree=tree, make=make, total=shape[0], nights=shape[1], out=out, fields=FIELDS
        )
        run = subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONPATH": tree, "PATH": ""},
            cwd=tree,
            capture_output=True,
            text=True,
            check=True,
        )
        module, cpu = run.stdout.split()[-2:]
        with np.load(out) as before:
            same = all(
                before[name].dtype == getattr(scan, name).dtype
                and before[name].tobytes() == getattr(scan, name).tobytes()
                for name in FIELDS
            )
        return float(cpu), same, module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--otava-sample", type=int, default=100)
    parser.add_argument("--before", help="a checkout of an earlier commit to time beside")
    args = parser.parse_args()
    total = args.kernels * args.devices
    values = year_of_nights(total, args.nights)
    rows = [
        "| method | series timed | wall, all series | CPU, all series |",
        "|---|---|---|---|",
    ]
    clock = start()
    scan = change_points_many(values)
    rows.append(timed("change_points_many (batch)", clock, total, total))
    batch_cpu = time.process_time() - clock[1]
    if args.before:
        cpu, same, module = scan_before(args.before, values.shape, scan)
        print(f"this tree: {rules.stats.__file__}; the tree before: {module}")
        rows.append(f"| change_points_many, the tree before | {total:,} | | {cpu:.1f} s |")
        print(f"output (change points, z, relative change, noise, drift) the same bytes: {same}")
    sample = values[:400]
    clock = start()
    for row in sample:
        change_points(row)
    rows.append(timed("change_points per series", clock, 400, total))
    from otava.analysis import compute_change_points

    clock = start()
    for row in values[: args.otava_sample]:
        compute_change_points([float(v) for v in row], window_len=50, max_pvalue=1e-6)
    otava_cpu = (time.process_time() - clock[1]) * total / args.otava_sample
    rows.append(timed("Apache Otava per series", clock, args.otava_sample, total))
    print(f"{total:,} series x {args.nights} nights; {int(scan.is_change.sum()):,} change points")
    print("\n".join(rows))
    print(
        f"batch vs Otava (CPU time, the fair measure on a loaded box): {otava_cpu / batch_cpu:.1f}x"
    )


if __name__ == "__main__":
    main()
