"""``roofguard ingest`` of a page it stored before, beside reading that page (a script, not a test).

A CI job re-run ingests the same files with the same flags. The command answers from the
digest of its inputs (``service.pipeline.inputdigest``) instead of reading and hashing the
run again. Every line is a fresh process, timed wall and CPU, with its peak resident memory:

* ``ingest, first``: the page stored (SQLite), as the nightly job does;
* ``ingest, again``: the same command once more (``--repeat`` times, the median);
* ``ingest, again, page one blank line longer``: another digest for the same run, so the
  page is read, hashed and found stored: what every repeated ingest paid before;
* references: the page read as columns (``collectors.collect_columns``, what an ingest
  that reads the page pays at least) and its sha256 (what the digest reads of it).

Usage::

    python tests/bench/bench_ingest_again.py [--kernels 1000000] [--repeat 3] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_collect_scale import write_ncu
from tables import publish

PY = sys.executable
FLAGS = ["--repo", "bench/again", "--branch", "main", "--kind", "nightly", "--device", "H100-SXM5"]
READ = "import sys, collectors; collectors.collect_columns(sys.argv[1], 'ncu-csv-raw')"
HASH = "import hashlib, sys; hashlib.file_digest(open(sys.argv[1], 'rb'), 'sha256')"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str]) -> tuple[float, float, float]:
    """Wall s, CPU s and peak MB of one process (the peak read by ``/usr/bin/time``'s way)."""
    cpu, start = _children_cpu(), time.perf_counter()
    wrapped = ["/usr/bin/time", "-f", "%M", *args]
    done = subprocess.run(wrapped, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{args}: exit {done.returncode}\n{done.stderr}")
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    return wall, cpu, int(done.stderr.strip().splitlines()[-1]) / 1024


def _ingest(page: Path, db: str, commit: str) -> list[str]:
    return [PY, "-m", "service", "ingest", str(page), *FLAGS, "--commit", commit, "--db", db]


def _longer(twin: Path, db: str) -> list[str]:
    """The ingest of ``twin`` after one more blank line: the same run, bytes not seen yet."""
    with twin.open("a", encoding="utf-8") as handle:
        handle.write("\n")
    return _ingest(twin, db, "a" * 40)


def table(args: argparse.Namespace) -> str:
    """The rows, each line's median over ``--repeat`` runs (the first ingest runs once)."""
    with tempfile.TemporaryDirectory() as tmp:
        page, twin, db = Path(tmp) / "page.csv", Path(tmp) / "twin.csv", f"sqlite:///{tmp}/h.db"
        write_ncu(page, args.kernels, gaps=5)
        megabytes = page.stat().st_size / 1e6
        twin.write_bytes(page.read_bytes())
        lines: dict[str, Callable[[], list[str]]] = {
            "ingest, again": lambda: _ingest(page, db, "a" * 40),
            "ingest, again, page one blank line longer": lambda: _longer(twin, db),
            "read as columns (reference)": lambda: [PY, "-c", READ, str(page)],
            "sha256 of the page (reference)": lambda: [PY, "-c", HASH, str(page)],
        }
        rows = {"ingest, first": [timed(_ingest(page, db, "a" * 40))]}
        for name, line in lines.items():
            rows[name] = [timed(line()) for _ in range(args.repeat)]
    out = [
        f"ncu raw page, {args.kernels:,} launches ({megabytes:.0f} MB), SQLite, "
        f"load average {os.getloadavg()[0]:.1f}, median of {args.repeat}",
        "",
        "| process | wall (s) | CPU (s) | peak (MB) |",
        "|---|--:|--:|--:|",
    ]
    for name, times in rows.items():
        wall, cpu, peak = (statistics.median(t[i] for t in times) for i in range(3))
        out.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {peak:,.0f} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    # A store of huge runs raises the kernel limit (200,000 by default), as this does.
    os.environ["ROOFGUARD_MAX_UPLOAD_KERNELS"] = str(max(args.kernels, 200_000))
    publish(lambda: table(args), args.markdown)


if __name__ == "__main__":
    main()
