"""A read pauses the cyclic garbage collector and always turns it back on (issue 29)."""

from __future__ import annotations

import gc

import pytest

from collectors import CollectorError, collect, paused_gc


def test_a_read_leaves_the_collector_on_after_success_and_failure(tmp_path) -> None:
    good = tmp_path / "run.csv"
    good.write_text("name,duration_s\nk,0.001\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,duration_s\nk,-1\n")
    assert gc.isenabled()
    assert len(collect(good).kernels) == 1
    assert gc.isenabled()
    with pytest.raises(CollectorError, match="duration_s"):
        collect(bad)
    assert gc.isenabled()


def test_the_collector_is_off_inside_and_left_off_when_it_was() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled(), "a caller that turned it off keeps it off"
    finally:
        gc.enable()
