"""The baseline run's parsed record is kept across checks (``service.store.profiles``).

Every PR against the same nightly asks for that nightly's kernels; the record is parsed
once per process, and not at all by the process that stored the run. A run of another
database with the same id is never taken for it.
"""

from __future__ import annotations

from collections import OrderedDict

import pandas as pd
import pytest
from factories import make_kernel, make_run

from service.config import RoofguardConfig
from service.pipeline.check import check_run
from service.store import profiles
from service.store.db import make_engine, migrate, session_scope


def _stored(url: str, registers: float) -> tuple[object, int]:
    engine = make_engine(url)
    migrate(engine)
    k = make_kernel("gemm", profile={"registers": registers})
    with session_scope(engine) as session:
        outcome = check_run(session=session, run=make_run(kernels=[k]), config=RoofguardConfig())
    return engine, outcome.run_id


def _history(run_id: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"kernel_key": ["gemm"], "run_id": [run_id], "timestamp": [pd.Timestamp(0, tz="UTC")]}
    )


def test_a_baseline_record_is_parsed_once_and_never_taken_from_another_database(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, first_id = _stored(f"sqlite:///{tmp_path / 'a.db'}", 121.0)
    second, second_id = _stored(f"sqlite:///{tmp_path / 'b.db'}", 150.0)
    assert first_id == second_id  # the same id in two stores
    with session_scope(first) as session:
        found = profiles.baseline_kernels(session, _history(first_id), ["gemm"])
    assert found["gemm"].profile == {"registers": 121.0}

    def no_parse(text: str) -> object:
        raise AssertionError("the kept record was parsed again")

    with monkeypatch.context() as patched:
        patched.setattr(profiles.json, "loads", no_parse)
        with session_scope(first) as session:
            again = profiles.baseline_kernels(session, _history(first_id), ["gemm"])
    assert again == found
    with session_scope(second) as session:
        other = profiles.baseline_kernels(session, _history(second_id), ["gemm"])
    assert other["gemm"].profile == {"registers": 150.0}
    for engine in (first, second):
        engine.dispose()


def _no_parse(text: str) -> object:
    raise AssertionError("the record was parsed")


def test_a_run_the_check_stored_is_kept_as_it_went_in(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next night's check compares with it: read back, its record was parsed every night."""
    engine, run_id = _stored(f"sqlite:///{tmp_path / 'a.db'}", 121.0)
    with monkeypatch.context() as patched:
        patched.setattr(profiles.json, "loads", _no_parse)
        with session_scope(engine) as session:
            kept = profiles.baseline_kernels(session, _history(run_id), ["gemm"])
    monkeypatch.setattr(profiles, "_RECORDS", OrderedDict())  # another process: reads it back
    with session_scope(engine) as session:
        read = profiles.baseline_kernels(session, _history(run_id), ["gemm"])
    assert kept == read and kept["gemm"].profile == {"registers": 121.0}
    engine.dispose()
