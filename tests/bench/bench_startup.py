"""Start-up of the ``roofguard`` process beside its references (a script, not a test).

Every command runs in a fresh Python process, alternated round by round with the others (as
hyperfine would, but interleaved, so the box's load moves every row alike); the table gives
each one's median and best wall time over ``--runs`` rounds, its median CPU time (user +
system, which a shared box's load disturbs less) and both medians' ratios to its reference:

* ``roofguard --help`` beside ``python -c "import typer"`` (goal <= 1.3x): the overview lists
  the commands without importing any command module;
* ``roofguard check`` of a ``--kernels`` PR run against ``--nights`` nightly runs (SQLite, the
  levels stored by the last nightly check, as in CI) beside
  ``python -c "import pandas, sqlalchemy"`` (goal <= 2x).

``python -X importtime`` of both ``roofguard`` lines follows: the modules imported, their
import time, and the heaviest top-level imports.

roofguard's own modules are byte-compiled first (``compile_tree``), as ``pip install`` leaves
them (it compiles at install, whatever ``PYTHONDONTWRITEBYTECODE`` says) and as the
references' site-packages are: a checkout run where that variable is set (this box) would
otherwise compile about 110 modules from source in every process, 0.2-0.25 s of CPU a
``check`` that no installed copy pays.

Usage::

    python tests/bench/bench_startup.py [--runs 10] [--kernels 2000] [--nights 60]
        [--markdown FILE]
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import REPO, check_nightly, grow_history, run_record
from tables import publish

from collectors.schema import RunKind
from service.config import RoofguardConfig

PY = sys.executable
REPO_ROOT = Path(__file__).resolve().parents[2]


def check_line(db: str, report: Path, tag: str) -> list[str]:
    """``roofguard check`` of the PR report, as a new commit each time (it is ingested)."""
    commit = f"{tag:0>40}"[-40:]
    return [
        *("-m", "service", "check", str(report), "--repo", REPO, "--commit", commit, "--pr", "1"),
        *("--device", "H100-SXM5", "--db", db, "--format", "json", "--output", os.devnull),
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float]:
    """Wall and CPU time of one fresh ``python ARGS`` process (it must pass or fail a check)."""
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run([PY, *args], capture_output=True, text=True, check=False)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{args}: exit {proc.returncode}\n{proc.stderr}")
    return elapsed, cpu


def history(tmp: Path, kernels: int, nights: int) -> tuple[str, Path]:
    """A SQLite store of ``nights`` nightly runs (levels stored) and the PR report after them."""
    rng = random.Random(7)
    db = f"sqlite:///{tmp}/history.db"
    grow_history(db, 0, nights - 1, kernels, rng)
    last = run_record(kernels, nights - 1, rng, RunKind.NIGHTLY)
    check_nightly(db, last, RoofguardConfig(device="H100-SXM5"))
    report = tmp / "pr.json"
    report.write_text(run_record(kernels, nights, rng, RunKind.PR).model_dump_json())
    return db, report


def rounds(
    lines: dict[str, list[str] | None], runs: int, db: str, report: Path
) -> dict[str, list[tuple[float, float]]]:
    """Each line's (wall, CPU) times over ``runs`` interleaved rounds (None: the check)."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in lines}
    for n in range(runs):
        for name, args in lines.items():
            line = args if args is not None else check_line(db, report, f"s{n}")  # a new commit
            times[name].append(timed(line))
    return times


def imports(args: list[str]) -> tuple[int, float, list[tuple[str, float]]]:
    """Modules ``python -X importtime ARGS`` imports, their total time (s), the heaviest tops."""
    proc = subprocess.run([PY, "-X", "importtime", *args], capture_output=True, text=True)
    rows = [line.split("|") for line in proc.stderr.splitlines() if line.startswith("import time")]
    rows = [r for r in rows[1:] if len(r) == 3]
    tops = Counter({r[2].strip(): int(r[1]) / 1e6 for r in rows if not r[2].startswith("  ")})
    total = sum(int(r[0].split(":")[1]) for r in rows) / 1e6
    return len(rows), total, tops.most_common(6)


def table(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        db, report = history(Path(tmp), args.kernels, args.nights)
        lines: dict[str, list[str] | None] = {
            "python -c 'import typer'": ["-c", "import typer"],
            "roofguard --help": ["-m", "service", "--help"],
            "python -c 'import pandas, sqlalchemy'": ["-c", "import pandas, sqlalchemy"],
            f"roofguard check ({args.kernels:,} kernels, {args.nights} nights)": None,
        }
        times = rounds(lines, args.runs, db, report)
        profiles = {
            "roofguard --help": imports(["-m", "service", "--help"]),
            "roofguard check": imports(check_line(db, report, "importtime")),
        }
    walls = {name: [w for w, _ in t] for name, t in times.items()}
    medians = {name: statistics.median(w) for name, w in walls.items()}
    cpus = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    names = list(lines)
    out = [
        f"load average {os.getloadavg()[0]:.1f}, {args.runs} interleaved rounds",
        "",
        "| process | median (s) | best (s) | median / reference | CPU (s) | CPU / reference |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for i, name in enumerate(names):
        ref = names[i - 1]
        ratio = f"{medians[name] / medians[ref]:.2f}x" if i % 2 else "reference"
        cpu_ratio = f"{cpus[name] / cpus[ref]:.2f}x" if i % 2 else "reference"
        out.append(
            f"| `{name}` | {medians[name]:.3f} | {min(walls[name]):.3f} | {ratio} "
            f"| {cpus[name]:.3f} | {cpu_ratio} |"
        )
    out += ["", "| `-X importtime` | modules | import time (s) | heaviest top-level imports |"]
    out.append("|---|--:|--:|---|")
    for name, (count, total, tops) in profiles.items():
        heavy = ", ".join(f"{m} {t:.2f}" for m, t in tops)
        out.append(f"| `{name}` | {count} | {total:.2f} | {heavy} |")
    return "\n".join(out)


def compile_tree() -> None:
    """Byte-compile roofguard's packages into their ``__pycache__`` (what pip does at install)."""
    for package in ("collectors", "rules", "service"):
        compileall.compile_dir(REPO_ROOT / package, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--kernels", type=int, default=2000)
    parser.add_argument("--nights", type=int, default=60)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    compile_tree()
    publish(lambda: table(args), args.markdown)


if __name__ == "__main__":
    main()
