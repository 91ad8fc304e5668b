"""Unit strings and number cells as profilers print them, normalised to SI base units.

ncu scales with SI factors (1 Kbyte = 1000 byte) and has renamed its base units over the years
(``nsecond`` -> ``ns``, ``cycle/second`` -> ``hz``, ``byte/second`` -> ``byte/s``). ncu prints
no binary prefix; where another tool does (``KiB``, ``Mibyte``), it means a power of 1024.
"""

from __future__ import annotations

import math
import re

from collectors.errors import shown

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
#: Binary (IEC) prefixes: ``Ki`` = 1024, ``Mi`` = 1024**2 ...
_BINARY = {p: 1024.0**n for n, p in enumerate("KMGTP", start=1)}
_TIME = {
    "nsecond": 1e-9,
    "ns": 1e-9,
    "usecond": 1e-6,
    "us": 1e-6,
    "µs": 1e-6,  # U+00B5 MICRO SIGN
    "μs": 1e-6,  # U+03BC GREEK SMALL LETTER MU: what a Greek keyboard or a locale prints
    "msecond": 1e-3,
    "ms": 1e-3,
    "second": 1.0,
    "sec": 1.0,
    "s": 1.0,
}
_FREQ = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
#: Denominators of rates: the per-second factor of each time unit (``cycle/us`` is 1e6 Hz).
_PER_TIME = {
    **dict.fromkeys(("second", "s", "sec"), 1.0),
    **dict.fromkeys(("msecond", "ms"), 1e3),
    **dict.fromkeys(("usecond", "us", "µs", "μs"), 1e6),
    **dict.fromkeys(("nsecond", "ns"), 1e9),
}
#: Dimensionless or count units, kept as they are.
_COUNTS = {
    "",
    "inst",
    "cycle",
    "sector",
    "request",
    "warp",
    "thread",
    "block",
    "SM",
    "sample",
    "branches",
    "pass",
    "cluster",
    "%",
    "register/thread",
    "inst/cycle",
    "inst/warp",
    "warp/cycle",
    "sector/request",
    "byte/block",
    "flop",
    "FLOP",
    "op",
    "ops",
    "x",
    "instance",
    "tpc",
    "bank",
    "wavefront",
}

#: ``byte``/``B`` with an SI prefix (``Kbyte``, ``kB``, ``MB``) or a binary one (``KiB``).
_BYTE = re.compile(r"^(?:([kKMGTP])(i?))?(?:byte|B)$")


class UnknownUnit(ValueError):
    """A unit string roofguard does not know how to scale."""


def unit_factor(unit: str) -> float:
    """Factor that converts a value printed in ``unit`` to SI base units.

    Bytes -> byte, times -> second, frequencies and cycle rates -> Hz (cycle/second),
    byte rates -> byte/second. Counts and ratios keep their value (factor 1).

    Raises:
        UnknownUnit: The unit is not one ncu or the benchmark tools print.
    """
    u = unit.strip()
    if u in _COUNTS:
        return 1.0
    if u in _TIME:
        return _TIME[u]
    if u.lower() in _FREQ:
        return _FREQ[u.lower()]
    if "/" in u:
        return _rate_factor(u)
    m = _BYTE.match(u)
    if m:
        prefix, binary = m.group(1) or "", m.group(2)
        return _BINARY[prefix.upper()] if binary else _PREFIX[prefix]
    raise UnknownUnit(f"unknown unit {shown(unit)}")


def _rate_factor(unit: str) -> float:
    num, _, den = unit.partition("/")
    den_factor = _PER_TIME.get(den.strip())
    if den_factor is None:
        if den.strip() in {"cycle", "block", "thread", "warp", "request", "launch", "elem"}:
            return unit_factor(num)
        raise UnknownUnit(f"unknown unit {shown(unit)}")
    if num.strip() in {"cycle", "inst", "sector", "request", "warp", "flop", "op", "item", ""}:
        return den_factor
    return unit_factor(num) * den_factor


def unit_dimension(unit: str) -> str:
    """What ``unit`` measures: time, byte, byte rate, frequency, count, rate, or other.

    ``rate`` is a count per time (``inst/second``); ``other`` a ratio to something else than
    time (``inst/cycle``, ``byte/block``).

    Raises:
        UnknownUnit: The unit is not one ncu or the benchmark tools print.
    """
    unit_factor(unit)  # an unknown unit is refused as it is there
    u = unit.strip()
    if u in _TIME:
        return "time"
    if u.lower() in _FREQ:
        return "frequency"
    if "/" in u:
        return _rate_dimension(u)
    return "byte" if _BYTE.match(u) else "count"


def _rate_dimension(unit: str) -> str:
    num, _, den = (part.strip() for part in unit.partition("/"))
    if den not in _PER_TIME:
        return "other"
    if num == "cycle":
        return "frequency"
    return "byte rate" if _BYTE.match(num) else "rate"


def is_unit_known(unit: str) -> bool:
    """Whether ``unit_factor`` can scale ``unit``."""
    try:
        unit_factor(unit)
    except UnknownUnit:
        return False
    return True


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_MISSING = {"", "n/a", "N/A", "nan", "NaN", "-", "--"}


class NotANumber(ValueError):
    """A cell that should hold a number holds text."""


def parse_number(cell: str | float | int | None) -> float | None:
    """Parse a numeric cell as profilers print it.

    Accepts thousands separators (``"4,963,609,951.19"``), ``--print-fp`` floats and
    exponents. ``n/a``, empty cells and ``None`` give ``None``; "nan" gives NaN.

    Raises:
        NotANumber: The cell holds text that is not a number.
    """
    if cell is None:
        return None
    if isinstance(cell, int | float):
        return float(cell)
    text = cell.strip().replace("\u202f", "").replace("\xa0", "")
    if text in _MISSING:
        return math.nan if text.lower() == "nan" else None
    if "," in text and re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?", text):
        text = text.replace(",", "")
    if not _NUMBER.match(text):
        if text.lower() in {"inf", "+inf", "-inf"}:
            return float(text)
        raise NotANumber(f"not a number: {shown(cell)}")
    return float(text)
