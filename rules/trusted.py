"""Verdict rows made from figures of their fields' own types, without validating them again.

A check of 20,000 kernels builds a ``KernelVerdict`` and a ``BaselineSummary`` per kernel;
validating their twenty-odd fields costs 5-8 us each, a tenth of the check (and testing each
value's type in Python first costs as much as pydantic's validation). The engine builds the
usual rows from figures it computed itself, of the very types validation would leave
(``float``, ``str``, enum members, tuples of them), so ``trusted`` sets the fields as
validation would: in declared order, defaults filled, the fields given as set.
``tests/rules/test_trusted.py`` holds every row a check makes this way equal to the validated
one, field by field and type by type; a model with validators, private attributes or extra
fields is validated as usual.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def trusted(model: type[M], fields: Mapping[str, Any]) -> M:
    """``model(**fields)`` for ``fields`` already of their fields' types, not validated again."""
    template, needed = _shape(model)
    if template is None or not needed <= fields.keys():
        return model(**fields)  # validated as usual (a required field missing: refused)
    made = model.__new__(model)
    values = template.copy()
    values.update(fields)  # the template's order: the fields' declared order
    object.__setattr__(made, "__dict__", values)
    object.__setattr__(made, "__pydantic_fields_set__", set(fields))
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", None)
    return made


@cache
def _shape(model: type[BaseModel]) -> tuple[dict[str, Any] | None, frozenset[str]]:
    """Every field's default, in declared order, and the fields ``trusted`` needs given.

    Those are the required fields and those whose default a factory makes (a new one per
    row); they are None in the template. None for a model with private attributes, extra
    fields, validators or a post-init step: it is validated.
    """
    fields = model.model_fields
    decorators = model.__pydantic_decorators__
    plain = (
        not model.__private_attributes__
        and model.model_config.get("extra") != "allow"
        and not (decorators.field_validators or decorators.model_validators)
        and not (decorators.validators or decorators.root_validators)
        and model.__pydantic_post_init__ is None
    )
    if not plain:
        return None, frozenset()
    template = {
        name: None if f.is_required() or f.default_factory else f.default
        for name, f in fields.items()
    }
    needed = frozenset(
        name for name, f in fields.items() if f.is_required() or f.default_factory is not None
    )
    return template, needed
