"""One digest of what an ``ingest`` was given, so that the same inputs find their stored run.

Re-ingesting a file (a CI job re-run) read and hashed it whole before it could say "already
ingested": 16 s for a million-launch ncu page, whose bytes take 0.15 s to hash. The stored
run depends on the files' bytes and on how roofguard reads them. So the digest covers:

- roofguard's own files (its code and data, 23 ms to hash: a checkout's edits and a release
  that kept its version number count) and the versions of the libraries that read for it;
- the collector plugins installed;
- the command's flags but the timestamp, which the content hash leaves out as well
  (``service.store.ids``), the config (identity keys, work models, devices, roofs) and the
  limits;
- each file's bytes, and the files' state when hashed: a file rewritten before it was read
  leaves no digest (``InputDigest.unchanged``).

Inputs of the same digest make the same stored run, so ``service.store.ingestinputs`` may
answer for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from stat import S_ISREG

import collectors
import rules
import service
from collectors import installed_collectors
from service.config import RoofguardConfig
from service.pipeline.runmeta import RunMeta
from service.pipeline.storable import StoreLimits

#: The libraries whose versions can change what a report reads as.
_READING_LIBRARIES = ("pandas", "numpy", "pydantic", "pydantic-core", "ncu-report")


@dataclass(frozen=True)
class InputDigest:
    """The sha256 of an ingest's inputs, and each file's (inode, size, mtime) before hashing."""

    hexdigest: str
    files: tuple[Path, ...]
    state: tuple[tuple[int, int, int], ...]

    def unchanged(self) -> bool:
        """Whether every file is as it was hashed (one rewritten meanwhile gives no digest)."""
        try:
            return _state(self.files) == self.state
        except OSError:
            return False


def ingest_digest(
    files: Sequence[Path], *, meta: RunMeta, config: RoofguardConfig, limits: StoreLimits
) -> InputDigest | None:
    """The digest of the inputs; None where a path is no readable file (the reader says why)."""
    if not files:
        return None
    try:
        state = _state(files)
        contents = [_file_digest(path) for path in files]
    except OSError:
        return None
    parts = (
        _code_digest(),
        *installed_collectors(),
        meta.model_dump_json(exclude={"timestamp"}),
        config.model_dump_json(),
        repr(astuple(limits)),
        *contents,
    )
    digest = hashlib.sha256()
    for part in parts:  # each part's length first: no two lists of parts read the same
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little") + data)
    return InputDigest(digest.hexdigest(), tuple(files), state)


def _state(files: Sequence[Path]) -> tuple[tuple[int, int, int], ...]:
    stats = [path.stat() for path in files]
    if not all(S_ISREG(s.st_mode) for s in stats):
        raise OSError("not a regular file")
    return tuple((s.st_ino, s.st_size, s.st_mtime_ns) for s in stats)


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@cache
def _code_digest() -> str:
    """The sha256 of roofguard's files and of the reading libraries' versions."""
    digest = hashlib.sha256(f"roofguard {service.__version__}".encode())
    for name, data in _own_files():
        digest.update(name.encode() + len(data).to_bytes(8, "little") + data)
    for library in _READING_LIBRARIES:
        digest.update(f"\n{library} {_version(library)}".encode())
    return digest.hexdigest()


def _own_files() -> Iterator[tuple[str, bytes]]:
    for package in (collectors, rules, service):
        root = Path(str(package.__file__)).parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield str(path.relative_to(root.parent)), path.read_bytes()


def _version(library: str) -> str:
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return "not installed"
