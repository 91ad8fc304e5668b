"""One digest of what an ``ingest`` was given, so that the same inputs find their stored run.

Re-ingesting a file (a CI job re-run) read and hashed it whole before it could say "already
ingested": 16 s for a million-launch ncu page, whose bytes take 0.15 s to hash. The stored
run depends on the files' bytes and on how roofguard reads them: its version and collector
plugins, the command's flags, the config (identity keys, work models, devices, roofs) and
the limits. The digest covers all of them but the timestamp, which the content hash leaves
out as well (``service.store.ids``): inputs of the same digest make the same stored run, so
``service.store.ingestinputs`` may answer for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import astuple
from pathlib import Path

from collectors import installed_collectors
from service import __version__
from service.config import RoofguardConfig
from service.pipeline.runmeta import RunMeta
from service.pipeline.storable import StoreLimits


def ingest_digest(
    files: Sequence[Path], *, meta: RunMeta, config: RoofguardConfig, limits: StoreLimits
) -> str | None:
    """The sha256 of the inputs; None where a path is no regular file (the reader says why)."""
    if not files or not all(path.is_file() for path in files):
        return None
    digest = hashlib.sha256()
    parts = (
        f"roofguard {__version__}",
        *installed_collectors(),
        meta.model_dump_json(exclude={"timestamp"}),
        config.model_dump_json(),
        repr(astuple(limits)),
        *(_file_digest(path) for path in files),
    )
    for part in parts:  # each part's length first: no two lists of parts read the same
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
