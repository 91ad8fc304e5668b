"""The ``Allow`` header of a 405: every method the path's routes take, not the first route's.

Starlette answers a method no route of a path takes with the methods of the first route that
matched the path alone: ``DELETE /api/v1/runs`` said ``Allow: POST`` though ``GET`` lists the
runs (RFC 9110 15.5.6: the methods the target resource supports). The routes are read from
the OpenAPI document, which FastAPI builds once and keeps.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fastapi import FastAPI
from starlette.routing import compile_path


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods the API's routes take at ``path``, sorted (none where no route is documented)."""
    return sorted(
        {
            method.upper()
            for template, operations in app.openapi()["paths"].items()
            if _pattern(template).match(path)
            for method in operations
        }
    )


@lru_cache(maxsize=256)
def _pattern(template: str) -> re.Pattern[str]:
    return compile_path(template)[0]
