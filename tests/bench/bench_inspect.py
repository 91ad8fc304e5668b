"""``roofguard inspect``'s text for a pipe of a huge run, against rich's table (a script).

A compact ncu raw page of ``--kernels`` distinct kernels (``bench_collect_scale.write_ncu``)
is read and placed once on the H100's datasheet roof, then the text ``inspect`` prints to a
pipe is made two ways in the same process, alternated ``--repeat`` times, CPU seconds each:

* ``plain``: ``inspect_cmd.render`` as it is, the kernel table joined as text
  (``service.render.plain_table``);
* ``rich``: the same parts with the kernel table printed by rich as a table as wide as its
  cells (what ``render`` did before), the reference.

Both texts are compared byte for byte. Usage::

    python tests/bench/bench_inspect.py [--kernels 20000,200000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from bench_collect_scale import write_ncu  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from collectors import collect  # noqa: E402
from collectors.schema import RunRecord  # noqa: E402
from rules import Roof  # noqa: E402
from service.cli import inspect_cmd  # noqa: E402
from service.render.text_fit import UNBOUNDED  # noqa: E402


def rich_render(path: Path, run: RunRecord, roof: Roof | None) -> str:
    """``render`` as before: rich prints the kernel table as wide as its cells (the reference)."""
    buffer = io.StringIO()
    text, rows = (
        Console(file=buffer, width=size, color_system=None, highlight=False)
        for size in (200, UNBOUNDED)
    )
    plain_table = inspect_cmd._pipe_table
    inspect_cmd._pipe_table = lambda run, roof, placed: inspect_cmd.kernel_table(
        run, roof, None, placed
    )
    try:
        parts = inspect_cmd.render_run(path, run, roof)
    finally:
        inspect_cmd._pipe_table = plain_table
    for part in parts:
        (rows if isinstance(part, Table) else text).print(part)
    return buffer.getvalue().rstrip("\n")


def cpu(make: Callable[[], str]) -> tuple[float, str]:
    """CPU seconds of ``make()`` and what it made."""
    began = time.process_time()
    out = make()
    return time.process_time() - began, out


def measure(kernels: int, repeat: int) -> dict[str, float]:
    """CPU seconds of both renders of one ``kernels``-kernel run, the best of ``repeat``."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.csv"
        write_ncu(path, kernels)
        run, roof = inspect_cmd.resolve_roof(collect(path), "H100-SXM5")
    plain, reference = [], []
    for _ in range(repeat):
        seconds, ours = cpu(lambda: inspect_cmd.render(path, run, roof))
        plain.append(seconds)
        seconds, theirs = cpu(lambda: rich_render(path, run, roof))
        reference.append(seconds)
        if ours != theirs:
            raise SystemExit(f"{kernels} kernels: the texts differ")
    best, ref = min(plain), min(reference)
    return {"kernels": kernels, "plain_s": best, "rich_s": ref, "speed-up": ref / best}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default="20000,200000")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print("| kernels | plain text, CPU s | rich table, CPU s | speed-up | µs a row |")
    print("|--:|--:|--:|--:|--:|")
    for count in (int(n) for n in args.kernels.split(",")):
        row = measure(count, args.repeat)
        per_row = 1e6 * row["plain_s"] / count
        print(
            f"| {count:,} | {row['plain_s']:.2f} | {row['rich_s']:.2f} "
            f"| {row['speed-up']:.0f}× | {per_row:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
