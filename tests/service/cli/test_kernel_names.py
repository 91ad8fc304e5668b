"""A kernel is found by its key or by its name as the verdict prints it, full or cut."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from factories import make_kernel, make_run

from service.cli import run
from service.render.labels import ellipsize_middle
from service.store.db import open_store, session_scope
from service.store.history import kernel_history
from service.store.kernelnames import matching_keys, resolve_kernel_key

NAME = "void softmax_kernel<float, 8192>(const float*, float*, int)"
KEY = "softmax_kernel<float, 8192>"
REPO = "acme/kernels"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Six nights of softmax (and a second instance of it) stored by `roofguard ingest`."""
    tmp = tmp_path_factory.mktemp("names")
    url = f"sqlite:///{tmp / 'history.db'}"
    for night in range(6):
        kernels = [
            make_kernel(NAME, key=KEY, dram_bytes=4e9, time_s=1.5e-3 * (1 + 0.01 * night)),
            make_kernel(NAME.replace("8192", "4096"), key=KEY.replace("8192", "4096"), time_s=8e-4),
        ]
        when = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=night)
        path = tmp / f"night-{night}.json"
        record = make_run(kernels=kernels, commit=f"n{night}", timestamp=when)
        path.write_text(record.model_dump_json())
        args = ["ingest", str(path), "--repo", REPO, "--commit", f"n{night}", "--branch", "main"]
        assert run([*args, "--kind", "nightly", "--db", url]) == 0
    return url


@pytest.mark.parametrize(
    "spelling",
    [
        KEY,
        NAME,
        f"  {NAME.replace(', ', ',  ')} ",
        ellipsize_middle(NAME, 40),
        ellipsize_middle(NAME, 20),
    ],
    ids=["key", "printed-name", "spaced", "compacted", "compacted-and-cut"],
)
def test_plot_kernel_takes_the_name_as_the_verdict_prints_it(
    store: str, tmp_path: Path, spelling: str
) -> None:
    out = tmp_path / "trend.svg"
    args = ["plot", "kernel", spelling, "--repo", REPO, "--db", store, "--output", str(out)]
    assert run(args) == 0
    assert out.read_text().startswith("<?xml")


def test_the_history_of_a_printed_name_is_its_kernels(store: str) -> None:
    engine = open_store(store)
    with session_scope(engine, readonly=True) as session:
        by_name = kernel_history(session=session, repo=REPO, key=NAME)
        by_key = kernel_history(session=session, repo=REPO, key=KEY)
    engine.dispose()
    assert len(by_name) == len(by_key) == 6
    assert set(by_name["kernel_key"]) == {KEY}


def test_a_name_that_names_two_kernels_is_refused_with_their_keys(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plot", "kernel", "void softmax_kernel…int)", "--repo", REPO, "--db", store]
    assert run(args) == 2
    err = capsys.readouterr().err
    assert "names 2 kernels" in err and KEY in err and KEY.replace("8192", "4096") in err


def test_matching_prefers_the_closest_spelling() -> None:
    pairs = [("gemm", "void gemm(float*)"), ("gemm[arg0=1024]", "gemm")]
    assert matching_keys("gemm", pairs) == ["gemm"], "a key beats a printed name"
    assert matching_keys("void gemm(float*)", pairs) == ["gemm"]
    assert matching_keys("nothing", pairs) == []


def test_a_key_longer_than_sqlites_like_pattern_names_no_kernel(store: str) -> None:
    """A 60,000-character key (under the service's 64 KiB name limit) made the candidates'
    LIKE pattern too long for SQLite: the kernel page and history API answered 503 "history
    store failed" and named a schema mismatch. It names no kernel, as any unknown key."""
    long_key = "x" * 60_000
    engine = open_store(store)
    try:
        with session_scope(engine) as session:
            assert resolve_kernel_key(session=session, repo=REPO, text=long_key) == long_key
            # The same word at the end of a real key's spelling still finds it.
            assert resolve_kernel_key(session=session, repo=REPO, text=NAME) == KEY
    finally:
        engine.dispose()
