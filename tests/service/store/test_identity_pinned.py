"""The content identity written in chunks is the text and hash it always was (issue 29).

Stored runs are found again by their content hash, so a faster ``identity`` must give every
run the very hash and record JSON the straightforward one gave: ``reference`` below is that
definition (the run's canonical JSON with file names only; the hash of it without timestamp
and file names, its kernels each hashed alone without their place and taken sorted, and its
notes sorted, since migration 0017), checked on every corpus report, on edge cases and on a
pinned value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from factories import make_kernel, make_run

import service.store.ids as ids
from collectors import CollectorError, collect
from collectors.schema import Provenance, ProvenanceKind, SourceRef
from service.store.ids import _dumps, identity, stored_record


def reference(run) -> tuple[str, str]:
    """The identity as defined: whole-run dumps of ``stored_record(run)``, repo in lower case.

    The kernels are hashed each alone, their source's file and place in it blanked, and taken
    sorted by their sha256: in no order; so are the run's notes.
    """
    data = stored_record(run).model_dump(mode="json")
    record = json.dumps(data, sort_keys=True, separators=(",", ":"))
    data.pop("timestamp", None)
    data["repo"] = data["repo"].lower() if data.get("repo") else data.get("repo")
    for source in data["sources"]:
        source["path"] = ""
    data["notes"] = sorted(data["notes"])
    digests = []
    for kernel in data.pop("kernels"):
        if kernel.get("source"):
            kernel["source"].update(path="", row=None)
        digests.append(hashlib.sha256(_dumps(kernel).encode("utf-8")).digest())
    head, tail = _dumps({**data, "kernels": "KERNELS"}).split('"KERNELS"')
    hashed = f"{head}[".encode() + b"".join(sorted(digests)) + f"]{tail}".encode()
    return record, hashlib.sha256(hashed).hexdigest()


def _corpus_runs(corpus: Path):
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.name != "SOURCES.md")
    for path in [p for p in files if p.stat().st_size < 300_000]:  # larger ones: a minute more
        try:
            yield path, collect(path)
        except CollectorError:
            continue


def test_every_corpus_run_keeps_its_identity(corpus_dir, monkeypatch) -> None:
    monkeypatch.setattr(ids, "_CHUNK", 7)  # several chunks even for small reports
    checked = 0
    for path, run in _corpus_runs(corpus_dir):
        assert identity(run) == reference(run), path
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize("chunk", [1, 2, 3, 10_000])
def test_edge_cases_keep_their_identity(chunk, monkeypatch) -> None:
    monkeypatch.setattr(ids, "_CHUNK", chunk)
    here, there = SourceRef(path="/ci/1/a.json", row="3"), SourceRef(path="C:\\w\\b.csv")
    kernels = [
        make_kernel("gemv", source=here),
        make_kernel("tiny", time_s=5e-324, source=there, params={"kernels": "[]"}),
        make_kernel("plain", params={"path": "a.json"}),  # the source's name, not a source
        make_kernel('quo"te \u00e9', source=SourceRef(path="rel/c.json", format="x")),
        make_kernel("every field", **_EVERY_FIELD),
    ]
    for run in (
        make_run(kernels=kernels, sources=(here, there)),
        make_run(kernels=[]),
        make_run(kernels=kernels[:1], notes=('"kernels":[]',)),
    ):
        assert identity(run) == reference(run)


#: A kernel with every field of the record set: the field-by-field writer covers each one.
_EVERY_FIELD = {
    "samples_s": (1e-3, 2.5e-07, 3.0),
    "declared_flops": {"tensor_bf16": 1e12},
    "declared_bytes": {"l1": 7.0},
    "provenance": {
        "flops.fp16": Provenance(kind=ProvenanceKind.SUM, metrics=("a", "b"), note="\u00b5")
    },
    "grid": "(80, 1, 1)",
    "block": "(128, 1, 1)",
    "sm_clock_hz": 1.98e9,
    "memory_clock_hz": 2619000000.0,
    "profile": {"launch__registers_per_thread": 128.0, "z": 0.0},
    "nvtx_range": "fwd/attn",
    "params": {"n": 4096.0, "dtype": "bf16", "big": float("inf"), "\u2603": 1e300},
    "counters": {"items_per_second": -1.5, "bytes": 12.0},
    "failed_launches": 2,
    "missing": ("flops: no counters", '"quoted"'),
    "source": SourceRef(path="D:\\runs\\x.json", row="17", format="gbench-json"),
}


def test_the_hash_of_a_fixed_run_is_pinned() -> None:
    source = SourceRef(path="/ci/7/run.json", row="1")
    run = make_run(
        kernels=[make_kernel("gemv", source=source), make_kernel("gemm", time_s=2e-3)],
        sources=(source,),
        timestamp=None,
    )
    assert identity(run)[1] == PINNED


PINNED = "aeb855fe79300bc6f8cf81a01d2947ebf884fdc3d181ab7cdbaf300734cbbb9e"
