"""Freed memory handed back to the system, where the C library would keep it.

glibc serves an allocation from its heap unless it is at least a threshold, which starts at
128 KB and rises to the size of each mapped block freed, up to 32 MB. A read of 29 M
measurements in batches frees many blocks of a few hundred KB to a few MB (each batch's
arrays, PostgreSQL's packed runs): freed on the heap, they are kept (0.7 GB), and arrays made
later that fit in that free space take it again and keep it when they are freed, under every
peak that follows, more or less from one run to the next. A fixed threshold of 1 MB gives the
larger blocks, and every array of 1 MB or more made later, mappings of their own, returned
when freed (128 KB gave no lower peak at 29 M rows, for 2.4 M more page faults: 6 s of system
time); ``malloc_trim`` returns the pages the heap has free, between the digest's stages.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

_M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h); setting it also fixes the threshold
_MAPPED_FROM = 1 << 20


def _glibc() -> Any:
    """The C library when it is glibc on Linux, else None (musl, macOS: nothing to do)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def map_large_allocations() -> None:
    """From now on, allocations of 1 MB or more get mappings of their own (freed: returned)."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MAPPED_FROM)


def give_back_freed() -> None:
    """Return the heap's free pages to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
