"""A check pauses the cyclic collector and leaves it as it found it."""

from __future__ import annotations

import gc

import pytest

from rules.collection import paused_collection


def test_the_collector_is_off_inside_and_on_again_after_even_on_an_error() -> None:
    assert gc.isenabled()
    with paused_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_collection():
        raise RuntimeError("a rule crashed")
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        with paused_collection():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
