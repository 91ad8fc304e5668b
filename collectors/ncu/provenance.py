"""What a report says of the profiler that made it: ncu's version and its command line's options.

The clock, cache and replay controls decide what the figures mean (a run at base clocks reads
low against the boost datasheet: ``rules.clocks``), so every ncu reader records them.
"""

from __future__ import annotations

import re

from collectors.schema import ProfilerInfo

_VERSION = re.compile(rb"Nsight Compute Target.{1,4}?(\d{4}\.\d+\.\d+(?:\.\d+)?)")
_INSTALL_VERSION = re.compile(r"nsight-compute[-/](\d{4}\.\d+\.\d+)")
_OPTION = re.compile(r"--(clock-control|cache-control|replay-mode)[ =](\S+)")


def profiler_info(version: str | None, command_line: str | None) -> tuple[ProfilerInfo, list[str]]:
    """ProfilerInfo with clock/cache control read from the command line (ncu defaults noted)."""
    options = dict(_OPTION.findall(command_line or ""))
    if version is None and command_line:
        found = _INSTALL_VERSION.search(command_line)
        version = found.group(1) if found else None
    notes = []
    if command_line:
        for opt, default in (
            ("clock-control", "base"),
            ("cache-control", "all"),
            ("replay-mode", "kernel"),
        ):
            if opt not in options:
                options[opt] = default
                notes.append(f"--{opt} not on the command line: ncu's default {default!r} assumed")
    info = ProfilerInfo(
        tool="ncu",
        version=version,
        command_line=command_line,
        clock_control=options.get("clock-control"),
        cache_control=options.get("cache-control"),
        replay_mode=options.get("replay-mode"),
    )
    return info, notes


def version_from_bytes(data: bytes) -> str | None:
    """The ncu version embedded in a report (``Nsight Compute Target`` + version)."""
    found = _VERSION.search(data)
    return found.group(1).decode() if found else None
