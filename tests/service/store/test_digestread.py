"""The digest's compact read: the same rows and digest as ``nightly_history``, both backends."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd
import sqlalchemy as sa
from both_backends import both_backends_engine  # noqa: F401  (the fixture ``engine``)
from factories import make_kernel, make_run
from store_cases import A100, day, nightly, store

import service.store.digestread as digestread
from service.digest.build import DIGEST_COLUMNS, build_digest
from service.store.db import session_scope
from service.store.digestread import DIGEST_READ_COLUMNS, digest_history
from service.store.history import nightly_history

REPO = "acme/kernels"


def fill(engine) -> None:
    """Twelve nights on two devices; kernel ``a`` slows down by a third from night 8."""
    for n in range(12):
        store(engine, nightly(n, time_a=1e-3 if n < 8 else 1.5e-3))
        slow = [make_kernel("a", time_s=2e-3), make_kernel("c", time_s=3e-3)]
        store(engine, make_run(kernels=slow, commit=f"x{n:03d}", timestamp=day(n)), roof=A100)
    store(engine, nightly(5, kind="pr", pull_request=2, commit="pr"))  # not nightly: left out


def both(engine, **window) -> tuple[pd.DataFrame, pd.DataFrame]:
    with session_scope(engine, readonly=True) as session:
        return (
            digest_history(session=session, **window),
            nightly_history(session=session, **window),
        )


def test_the_compact_read_holds_the_same_rows_in_the_same_order(engine):
    fill(engine)
    compact, full = both(engine, repo=REPO, start=day(2), end=day(11))
    assert tuple(compact.columns) == DIGEST_READ_COLUMNS == DIGEST_COLUMNS
    assert len(compact) == len(full) == 9 * 4
    assert compact["kernel_key"].dtype == "category"
    pd.testing.assert_frame_equal(
        compact.astype(
            {c: object for c in ("commit", "kernel_key", "kernel_name", "device")}
        ).astype({"regime": object, "binding": object}),
        full.loc[:, list(DIGEST_COLUMNS)].astype(
            {c: object for c in ("commit", "kernel_key", "kernel_name", "device")}
        ),
        check_dtype=False,
    )


def test_the_digest_of_the_compact_read_is_the_digest_of_the_full_one(engine):
    fill(engine)
    window = {"repo": REPO, "start": day(0), "end": day(12)}
    compact, full = both(engine, **window)
    period = {"start": day(6), "end": day(11), "repo": REPO}
    from_compact = build_digest(compact, **period)
    from_full = build_digest(full.loc[:, list(DIGEST_COLUMNS)], **period)
    assert from_compact == from_full
    assert [m.kernel for m in from_compact.regressions] == ["a"]


def test_nothing_stored_reads_an_empty_frame_with_the_columns(engine):
    fill(engine)
    compact, _ = both(engine, repo="other/repo", start=day(0), end=day(12) + timedelta(days=1))
    assert compact.empty and tuple(compact.columns) == DIGEST_READ_COLUMNS


def _names_change(engine) -> None:
    """Kernel ``a`` memory-bound for five nights, then compute-bound (a new binding), on H100."""
    for n in range(8):
        a = (
            make_kernel("a", dram_bytes=4e9, flops={"fp16": 2e9})
            if n < 5
            else make_kernel("a", dram_bytes=1e6, flops={"fp32": 5e12})
        )
        store(engine, make_run(kernels=[a, make_kernel("b")], commit=f"n{n}", timestamp=day(n)))


def test_names_met_in_a_later_batch_are_read_as_the_full_read_has_them(engine, monkeypatch):
    monkeypatch.setattr(digestread, "RUNS_PER_BATCH", 2)
    _names_change(engine)
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    compact, full = both(engine, repo=REPO, start=day(0), end=day(8))
    for column in ("regime", "binding"):
        assert compact[column].astype(object).tolist() == full[column].tolist(), column
    assert set(full["binding"]) == {"dram", "fp32"}
    names_read = [s for s in statements if "SELECT DISTINCT regime, binding" in s]
    if engine.dialect.name == "postgresql":  # each connection's first batch, first with fp32
        assert len(names_read) == 4


def test_rows_are_found_by_id_alike_in_a_table_and_by_search():
    """Small ids are looked up in a table, sparse ones by binary search: the same rows."""
    rng = np.random.default_rng(7)
    for ids in (rng.permutation(50) + 1, rng.choice(10**9, 50, replace=False)):
        wanted = rng.choice(ids, 200).astype(np.int32)
        rows = digestread._rows_of(ids, wanted)
        assert (ids[rows] == wanted).all()
