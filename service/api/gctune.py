"""The cyclic garbage collector tuned for a long-lived service process.

An upload of 2,000 kernels makes hundreds of thousands of short-lived objects (records, rows,
frames), nearly none of them in a reference cycle. At Python's default thresholds (700, 10,
10) they set off collections that also walk every long-lived object: the modules, the
application, the pydantic models. Measured in-process (`bench_service_load.py --phases`
shape): 0.08 CPU s of a 0.39-0.43 s upload. At start, what the process holds lives as long as
it does: it is frozen out of the collections, and the youngest generation is collected every
``GEN0_THRESHOLD`` allocations instead of 700 (0.01 s an upload). Garbage in cycles is still
collected, a little later.

For a process's own entry point only (``app_from_environment``): in a long-lived caller, such
as a test run, freezing would keep that caller's uncollected garbage alive.
"""

from __future__ import annotations

import gc

#: Allocations between collections of the youngest generation (Python's default: 700).
GEN0_THRESHOLD = 50_000
#: Collections of one generation between collections of the next (Python's default: 10).
OLDER_THRESHOLD = 20


def tune_for_service() -> None:
    """Freeze what the process holds now, and collect less often from here on."""
    gc.collect()  # garbage is not carried into the frozen generation
    gc.freeze()
    gc.set_threshold(GEN0_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)
