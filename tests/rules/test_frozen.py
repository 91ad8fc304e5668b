"""``rules.stats.frozen.frozen_from`` and the classes made with it (one per kernel of a check)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rules.gated import GateDecision, Segment
from rules.history import KernelHistory
from rules.judging import Measured
from rules.stats import Judgement
from rules.stats.frozen import frozen_from

MADE_WITHOUT_INIT = [Judgement, Segment, GateDecision, Measured, KernelHistory]


@pytest.mark.parametrize("cls", MADE_WITHOUT_INIT, ids=lambda c: c.__name__)
def test_each_class_made_without_its_init_is_a_plain_frozen_dataclass(cls):
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    assert not hasattr(cls, "__post_init__"), "frozen_from would skip its __post_init__"
    assert "__slots__" not in vars(cls), "frozen_from sets __dict__"
    assert not any(isinstance(f.type, dataclasses.InitVar) for f in dataclasses.fields(cls))


def test_a_frozen_from_equals_its_init_and_stays_frozen():
    history = np.array([1.0, 2.0])
    made = frozen_from(Measured, history=history, current=3.0, reruns=())
    assert made == Measured(history, 3.0) and repr(made) == repr(Measured(history, 3.0))
    assert Measured.one(history, 3.0) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.current = 4.0  # type: ignore[misc]
    assert frozen_from(Segment, n=5, after=2) == Segment(5, 2)
