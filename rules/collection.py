"""Judging a run without pauses of the cyclic garbage collector.

A check builds tens of objects per kernel (histories, judgements, decisions, rows) that live
until its verdict is built: 2,000 kernels make about 100,000, 20,000 make a million. Each of
them counts towards the collector's next pass, and a full pass walks every object alive, so
the passes cost more the more kernels there are: a 20,000-kernel check spent more than a
tenth of its time in them, for nothing, as a check makes no reference cycles to collect.
``paused_collection`` turns the collector off for the duration of a check; reference counting
still frees every object as usual, and the collector runs again afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_collection() -> Iterator[None]:
    """The block runs with the cyclic collector off, if it was on (and on again after).

    The collector is process-wide: another thread allocating meanwhile is not collected
    either until the block ends, which bounds that to the length of one check.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
