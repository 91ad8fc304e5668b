"""Progress bars for long work: shown on a terminal, silent in CI logs and pipes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from rich.console import Console

T = TypeVar("T")

#: Below this many items a bar is more noise than help.
MIN_ITEMS = 3


#: What ``CI`` says on a machine that is not a CI runner (set by a shell profile or by hand).
_NOT_CI = frozenset({"", "0", "false", "no", "off"})


def in_ci() -> bool:
    """Whether ``CI`` says this is a CI runner (``true``, ``1``): ``CI=false`` is no runner."""
    return os.environ.get("CI", "").strip().lower() not in _NOT_CI


def progress_enabled() -> bool:
    """A bar only when stderr is a terminal and we are not in CI."""
    return sys.stderr.isatty() and not in_ci()


def progress(items: Sequence[T], description: str) -> Iterator[T]:
    """Iterate ``items``, drawing a rich progress bar on a terminal."""
    if len(items) < MIN_ITEMS or not progress_enabled():
        yield from items
        return
    yield from _tracked(items, description, len(items))


def progress_iter(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Like ``progress`` for iterables of known or unknown length."""
    if not progress_enabled():
        yield from items
        return
    yield from _tracked(items, description, total)


def _tracked(items: Iterable[T], description: str, total: int | None) -> Iterator[T]:
    """``items`` under a bar on stderr, the terminal ``progress_enabled`` asked about.

    rich's default console is stdout, often a pipe or a file (``--json > run.json``): the bar
    was never drawn there, though stderr was a terminal.
    """
    from rich.console import Console
    from rich.progress import track

    console = Console(stderr=True)
    yield from track(items, description=description, total=total, transient=True, console=console)


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


@contextmanager
def labelled_bar(total: int, description: str) -> Iterator[Callable[[str], None]]:
    """A bar of ``total`` steps on stderr (terminal only); call it with each step's label."""
    if not progress_enabled():
        yield lambda _label: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda label: bar.update(task, advance=1, description=label)


@contextmanager
def steps(
    labels: Sequence[str], description: str, console: Console | None = None
) -> Iterator[Callable[[], None]]:
    """A bar over the steps ``labels`` names, saying the one under way (terminal only).

    Yields the function to call when a step is done. Even one step gets the bar: a step of
    its own can take minutes (a migration that copies a table of millions of rows).
    ``console``: where to draw it (default: stderr).
    """
    if not labels or not (console or progress_enabled()):
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=console or Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"{description}: {labels[0]}", total=len(labels))
        done = 0

        def advance() -> None:
            nonlocal done
            done += 1
            now = labels[min(done, len(labels) - 1)]
            bar.update(task, advance=1, description=f"{description}: {now}")

        yield advance
