"""Details-page display labels -> metric names (SpeedOfLight and friends, ncu 2020 to 2025).

``--print-metric-name label`` (the default) prints section labels, not metric names; the
recipe needs names. Labels are mapped per section first (``Memory Throughput`` is a percent in
SpeedOfLight and a byte rate in Memory Workload Analysis), then globally.
"""

from __future__ import annotations

import re

_METRIC_NAME = re.compile(r"^[a-z0-9]+__[A-Za-z0-9_.]+$")
_LABEL_NAME = re.compile(r"^(?P<label>.*?)\s*\((?P<name>[a-z0-9]+__[A-Za-z0-9_.]+)\)\s*$")

_ANY_SECTION = {
    "Duration": "gpu__time_duration.sum",
    "Elapsed Cycles": "gpc__cycles_elapsed.max",
    "SM Frequency": "gpc__cycles_elapsed.avg.per_second",
    "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
    "Memory Frequency": "dram__cycles_elapsed.avg.per_second",
    "SM Active Cycles": "sm__cycles_active.avg",
    "Compute (SM) Throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "SM [%]": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "Memory [%]": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "L1/TEX Cache Throughput": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "SOL TEX": "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "L2 Cache Throughput": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL L2": "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "DRAM Throughput": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "SOL FB": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "Waves Per SM": "launch__waves_per_multiprocessor",
    "# SMs": "launch__sm_count",
}
_PER_SECTION = {
    (
        "GPU Speed Of Light Throughput",
        "Memory Throughput",
    ): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    (
        "GPU Speed Of Light",
        "Memory Throughput",
    ): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
    ("Launch Statistics", "Grid Size"): "launch__grid_size",
    ("Launch Statistics", "Block Size"): "launch__block_size",
}


def header_name(cell: str) -> str:
    """A raw-page column: ``Label (metric__name)`` (``--print-metric-name label-name``) -> name."""
    both = _LABEL_NAME.match(cell)
    return both.group("name") if both else cell


def metric_name(section: str, printed: str) -> str:
    """The metric name behind a printed ``Metric Name`` cell (name, label or label-name).

    Unknown labels come back as ``"<section>/<label>"`` so they never collide with a name.
    """
    if _METRIC_NAME.match(printed):
        return printed
    both = _LABEL_NAME.match(printed)
    if both:
        return both.group("name")
    return (
        _PER_SECTION.get((section, printed)) or _ANY_SECTION.get(printed) or f"{section}/{printed}"
    )
