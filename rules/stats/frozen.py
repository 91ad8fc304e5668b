"""Frozen dataclasses made without their constructor's per-field calls.

A frozen dataclass's constructor sets each field through object.__setattr__ (plain
assignment is what freezing forbids); for the objects a check makes once per kernel (the PR
gate's quiet judgements, gate decisions and their segments, a history's views) those calls
cost more than the values. ``frozen_from`` sets the instance's attribute dictionary in one
update instead. The caller gives every field, defaults included, in declared order (the
order the constructor sets them in, so ``vars`` and ``repr`` read the same). Only for plain
frozen dataclasses: no post-init step, slots or init-only fields
(``tests/rules/test_frozen.py`` holds each class made this way to that).
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def frozen_from(cls: type[T], /, **fields: Any) -> T:
    """``cls(**fields)`` for a plain frozen dataclass, without the per-field calls."""
    made = object.__new__(cls)
    made.__dict__.update(fields)
    return made
