"""Progress bars for long work: shown on a terminal, silent in CI logs and pipes."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

#: Below this many items a bar is more noise than help.
MIN_ITEMS = 3


def progress_enabled() -> bool:
    """A bar only when stderr is a terminal and we are not in CI."""
    return sys.stderr.isatty() and not os.environ.get("CI")


def progress(items: Sequence[T], description: str) -> Iterator[T]:
    """Iterate ``items``, drawing a rich progress bar on a terminal."""
    if len(items) < MIN_ITEMS or not progress_enabled():
        yield from items
        return
    from rich.progress import track

    yield from track(items, description=description, transient=True)


def progress_iter(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Like ``progress`` for iterables of known or unknown length."""
    if not progress_enabled():
        yield from items
        return
    from rich.progress import track

    yield from track(items, description=description, total=total, transient=True)


@contextmanager
def stage(description: str) -> Iterator[None]:
    """A spinner saying ``description`` while a step of unknown length runs (terminal only).

    Not around a step that draws a bar of its own: rich shows one live display at a time.
    """
    if not progress_enabled():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(description):
        yield
