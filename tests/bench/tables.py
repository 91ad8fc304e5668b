"""What the table benchmarks share: build the table, print it, its time, and maybe a file."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path


def publish(make_table: Callable[[], str], markdown: Path | None) -> None:
    """Print ``make_table()`` and how long it took (stderr); also write it to ``markdown``."""
    started = time.perf_counter()
    table = make_table()
    print(table)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    if markdown:
        markdown.write_text(table, encoding="utf-8")
