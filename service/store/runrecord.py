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
from typing import Any

#: Records of this many characters or more are stored compressed (some 1,200 kernels).
PACK_FROM = 2**20
#: zlib's fastest level: 14× on a gbench run's JSON against 17× at the default, at half the CPU.
_LEVEL = 1


class RecordWriter:
    """A run's record written piece by piece (``ids.write_identity``), kept as it is stored.

    Text while it is short; from ``PACK_FROM`` characters on, each piece is compressed as it
    comes, so a huge run's record is held compressed alone (a million kernels' 880 MB of JSON
    was held as its pieces and again joined: most of an ingest's peak memory).
    """

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._size = 0
        self._packer: Any = None
        self._packed: list[bytes] = []

    def write(self, piece: str) -> None:
        """Append ``piece`` to the record."""
        if self._packer is not None:
            self._packed.append(self._packer.compress(piece.encode()))
            return
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size >= PACK_FROM:
            self._packer = zlib.compressobj(_LEVEL)
            self._packed = [self._packer.compress(p.encode()) for p in self._pieces]
            self._pieces = []

    def stored(self) -> tuple[str, bytes | None]:
        """``(record_json, record_zlib)``: the text, or ``""`` and the compressed text."""
        if self._packer is None:
            return "".join(self._pieces), None
        return "", b"".join([*self._packed, self._packer.flush()])


def record_of(text: str, packed: bytes | None) -> str | bytes:
    """The record's JSON from a row's ``record_json`` and ``record_zlib`` (UTF-8 if packed)."""
    return text if packed is None else zlib.decompress(packed)
