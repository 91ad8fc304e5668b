"""The Collector interface: one subclass per input format."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from collectors.errors import TooManyKernels
from collectors.identity import KeyOptions
from collectors.schema import RunRecord


class CollectOptions(BaseModel):
    """Options every collector honours.

    Attributes:
        keys: How kernel names are normalised into identity keys.
        device: Device name to record when the input does not name one.
        max_kernels: The most kernels one file may hold (None: no cap). Readers that go
            kernel by kernel stop at the first one past it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    keys: KeyOptions = KeyOptions()
    device: str | None = None
    max_kernels: int | None = Field(default=None, ge=1)

    def count(self, kernels: int, path: Path | str) -> None:
        """Raise TooManyKernels when ``kernels`` is past ``max_kernels``."""
        if self.max_kernels is not None and kernels > self.max_kernels:
            raise TooManyKernels(str(path), self.max_kernels)


class Collector(ABC):
    """Reads one input format into a RunRecord.

    Subclasses set ``name`` (kebab-case, shown to users), ``description`` (one line) and
    ``example`` (a command that produces the format), which ``roofguard formats`` lists,
    ``suffixes`` (a hint only), and implement ``sniff`` (a cheap content check on the first
    bytes, since several formats share ``.json`` and ``.csv``) and ``parse``.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    example: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]] = ()
    #: Higher priority collectors are asked first when several sniff positive.
    priority: ClassVar[int] = 0

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls, "__abstractmethods__", None):
            return  # an intermediate base; its concrete subclasses are checked
        for attribute in ("name", "description", "example"):
            value = getattr(cls, attribute, None)
            if not isinstance(value, str) or not value.strip():
                raise TypeError(f"collector {cls.__qualname__} lacks a {attribute!r} string")

    def __init__(self, options: CollectOptions | None = None) -> None:
        self.options = options or CollectOptions()

    @classmethod
    @abstractmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        """Whether the file whose first bytes are ``head`` is of this format."""

    @abstractmethod
    def parse(self, path: Path) -> RunRecord:
        """Read ``path`` into a RunRecord.

        Raises:
            MalformedReport: The content is wrong; names the file, row and field.
        """
