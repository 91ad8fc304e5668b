"""A run's stored record: its canonical JSON as text, or zlib-compressed when it is large.

A run keeps its whole ``RunRecord`` (every verdict figure derives from it). Its JSON is some
880 bytes a kernel: 880 MB for a run of a million kernels, one text value that PostgreSQL
compressed again itself (pglz, on one core) and wrote to its log, near its 1 GB limit a
value (an ncu run's 1.15 KB a kernel passes it). From ``PACK_FROM`` bytes the record is kept
in ``runs.record_zlib`` instead, compressed at zlib's fastest level (a gbench run's JSON
shrinks 14×, at some 2.5 ms of CPU a MB), and ``runs.record_json`` holds ``""``; smaller
records stay text, as every row stored before migration 0011. ``record_of`` reads either.
"""

from __future__ import annotations

import zlib

#: Records of this many characters or more are stored compressed (some 1,200 kernels).
PACK_FROM = 2**20
#: Characters compressed at a time: the record is never held encoded whole.
_PIECE = 2**24
#: zlib's fastest level: 14× on a gbench run's JSON against 17× at the default, at half the CPU.
_LEVEL = 1


def stored(record: str) -> tuple[str, bytes | None]:
    """``(record_json, record_zlib)`` for a run whose record is ``record``."""
    if len(record) < PACK_FROM:
        return record, None
    packer = zlib.compressobj(_LEVEL)
    # Slices end on whole characters, so their UTF-8 is the whole text's, piece by piece.
    pieces = [
        packer.compress(record[at : at + _PIECE].encode()) for at in range(0, len(record), _PIECE)
    ]
    return "", b"".join([*pieces, packer.flush()])


def record_of(text: str, packed: bytes | None) -> str | bytes:
    """The record's JSON from a row's ``record_json`` and ``record_zlib`` (UTF-8 if packed)."""
    return text if packed is None else zlib.decompress(packed)
