"""Raw-page fast path: pandas reads only the recipe's columns, in chunks; plans run on arrays.

The careful reader (collectors.formats.ncu_csv_raw) splits every row in Python, which costs
more than pandas' whole C parse. Here pandas tokenises in C, converts only the used columns,
and the plan evaluates a chunk of launches per kernel at once. Memory stays bounded by the
chunk size. Anything unusual (text in a number column, ``nan``, a negative or infinite value, a
ragged or truncated row, mixed devices, duplicate IDs) raises ``Fallback``; the careful reader
then re-reads the file and names the row and field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from collectors.errors import MalformedReport
from collectors.ncu import csvio, recipe
from collectors.ncu.aggregate import RunBuilder
from collectors.ncu.peaks import DeviceFacts, device_facts
from collectors.ncu.tally import Tally

CHUNK_ROWS = 8192
#: Cells that are no value (a metric not collected). ``nan`` is not among them: pandas then
#: refuses it, and the careful reader tells a failed replay (its duration NaN too) from a
#: damaged value.
_NA = ["", "n/a", "N/A", "-", "--"]
TEXT_COLUMNS = ("ID", "Kernel Name", "Grid Size", "Block Size", "Device", "CC")
DISPLAY_NAME = "device__attribute_display_name"


class Fallback(Exception):
    """The fast path cannot vouch for this file; the careful reader must read it."""


def ends_cleanly(path: str, width: int) -> bool:
    """Whether the file's last line is a full row (a cut file's is not).

    ncu quotes every cell, so a row cut short ends without its quote or with cells missing;
    line ends and blank lines after it are left out (``collectors.ncu.tally`` too).
    """
    last, _ = csvio.last_line(path)
    return last.count('","') + 1 == width and last.startswith('"') and last.endswith('"')


def read(
    handle: TextIO,
    header: list[str],
    numeric: Sequence[tuple[int, str, float]],
    builder: RunBuilder,
) -> DeviceFacts | None:
    """Read the data rows after the header (and units row) from ``handle``.

    Raises:
        Fallback: pandas is missing or the file is not plain; nothing was decided.
    """
    try:
        import numpy as np
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - pandas is a core dependency
        raise Fallback("pandas is not installed") from exc
    if len(set(header)) != len(header):
        raise Fallback("duplicate column names")
    names = [name for _, name, _ in numeric]
    factors = {name: factor for _, name, factor in numeric}
    facts: DeviceFacts | None = None
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # the kernel's record names a sum
            for chunk in chunks(pd, handle, header, names):  # past 1.8e308 (RunBuilder)
                got = _chunk(chunk, names, factors, builder)
                facts = facts or got
    # UnicodeDecodeError is a ValueError; OverflowError is an integer past a float's range;
    # a launch refused (a launch ID twice) is named with its line by the careful reader
    except (ValueError, OverflowError, pd.errors.ParserError, MalformedReport) as exc:
        raise Fallback(str(exc)) from exc
    return facts


def chunks(pd: Any, handle: TextIO, header: list[str], names: list[str]) -> Iterator[Any]:
    """The data rows, a frame of ``CHUNK_ROWS`` at a time: text columns as text, metrics as floats.

    Raises:
        Fallback: A row may have fewer fields than the header (a cut file): pandas reads a
            missing last cell as an empty one, so an empty last cell is left to the careful
            reader, which tells them apart. Or, once every row is read, its lines are not one
            row of the header's width each (``collectors.ncu.tally``).
    """
    tally, rows = Tally(handle), 0
    for chunk in _chunks(pd, tally, header, names):
        last = header[-1]
        if (chunk[last].isna() | (chunk[last] == "")).any():
            raise Fallback("a row may have fewer fields than the header")
        if last in names:  # a metric the recipe reads, as text: ``nan`` left to the careful
            values = pd.to_numeric(chunk[last].replace(_NA, float("nan")))  # reader, as above
            if (values.isna() & ~chunk[last].isin(_NA)).any():
                raise Fallback("a nan cell")
            chunk[last] = values
        rows += len(chunk)
        yield chunk
    if not tally.whole_rows(rows, len(header)):
        raise Fallback("a row of another width, or a line break inside a cell")


def _chunks(pd: Any, handle: Tally, header: list[str], names: list[str]) -> Any:
    """Pandas' chunked reader of the used columns: text columns as text, metrics as floats."""
    # The last column is read as text: a short (cut) row leaves it missing ("" under pandas 3,
    # NaN before), which ``chunks`` tells the careful reader to look at.
    text = list(dict.fromkeys(c for c in (*TEXT_COLUMNS, DISPLAY_NAME, header[-1]) if c in header))
    floats = [n for n in names if n not in text]
    return pd.read_csv(
        handle,
        header=None,
        names=header,
        usecols=list(dict.fromkeys(text + names)),
        index_col=False,
        dtype={**{c: str for c in text}, **{n: "float64" for n in floats}},
        keep_default_na=False,
        na_values={n: _NA for n in floats},
        chunksize=CHUNK_ROWS,
        engine="c",
    )


def _column(chunk: Any, name: str) -> list[str | None]:
    return chunk[name].tolist() if name in chunk.columns else [None] * len(chunk)


def _chunk(
    chunk: Any, names: list[str], factors: dict[str, float], builder: RunBuilder
) -> DeviceFacts | None:
    import numpy as np

    columns = [_column(chunk, c) for c in ("ID", "Kernel Name", "Grid Size", "Block Size")]
    cc = _one_device(chunk, builder)
    values = {n: chunk[n].to_numpy(dtype=float) * factors[n] for n in names}
    nan_rows = np.zeros(len(chunk), dtype=bool)
    for array in values.values():
        if (array < 0).any() or np.isinf(array).any():
            raise Fallback("negative or infinite value")
        nan_rows |= np.isnan(array)
    plan = recipe.plan_for(frozenset(names), cc)
    plain = np.flatnonzero(~nan_rows)
    if plan.duration is None:  # nothing to vectorise: every launch fails the same way
        plain = np.array([], dtype=int)
        nan_rows[:] = True
    if nan_rows.any():
        _add_one_by_one(builder, _launches(plan, values, plain), values, cc, columns)
    else:
        _add_groups(builder, plan, values, plain, columns)
    if not len(plain):
        return None
    first = int(plain[0])
    strings = (
        {DISPLAY_NAME: str(chunk[DISPLAY_NAME].iloc[first])}
        if DISPLAY_NAME in chunk.columns
        else {}
    )
    return device_facts({n: float(array[first]) for n, array in values.items()}, strings)


def _launches(
    plan: recipe.Plan, values: dict[str, Any], plain: Any
) -> Callable[[int], recipe.LaunchFigures | None]:
    """The figures of the chunk's row, by row: the plan run once on the ``plain`` rows' arrays.

    Element by element the arithmetic is the recipe's of one launch, and so are the figures.
    A row not plain has none here (None).
    """
    if not len(plain):
        return lambda row: None
    one = plan.evaluate({n: array[plain] for n, array in values.items()}).each()
    position = {int(row): i for i, row in enumerate(plain.tolist())}
    return lambda row: None if (i := position.get(row)) is None else one(i)


def _add_one_by_one(
    builder: RunBuilder,
    launches: Callable[[int], recipe.LaunchFigures | None],
    values: dict[str, Any],
    cc: str | None,
    columns: list[list[Any]],
) -> None:
    """A chunk with failed counters or ``n/a`` cells: each launch in the file's order.

    A kernel's launches then add up in the order the careful reader adds them, its samples
    and the gaps it names in that order too, so the record is the same whichever reads it.
    """
    for row, (launch_id, kernel, grid, block) in enumerate(zip(*columns, strict=True)):
        figs = launches(row)
        if figs is None:  # failed counters or n/a: the recipe of what this launch has
            figs = recipe.launch_figures({n: float(a[row]) for n, a in values.items()}, cc)
        builder.add(str(launch_id), str(kernel), figs, grid=grid, block=block)


def _add_groups(
    builder: RunBuilder,
    plan: recipe.Plan,
    values: dict[str, Any],
    plain: Any,
    columns: list[list[Any]],
) -> None:
    """Add the chunk's launches, every one usable, kernel by kernel.

    A kernel launched once in the chunk (every kernel of a run of distinct kernels) is added
    as plain numbers: numpy's per-call cost on one-element arrays was most of the time of such
    runs. A kernel launched more often is added as a batch of arrays, summed in order.
    """
    ids, kernels, grids, blocks = columns
    groups: dict[tuple[Any, Any, Any], list[int]] = {}
    for row in plain.tolist():
        groups.setdefault((kernels[row], grids[row], blocks[row]), []).append(row)
    launches = _launches(plan, values, plain)
    for (kernel, grid, block), rows in groups.items():
        if len(rows) > 1:
            figs = plan.evaluate({n: array[rows] for n, array in values.items()})
            launch_ids = [str(ids[r]) for r in rows]
            builder.add_batch(launch_ids, str(kernel), figs, grid=grid, block=block)
        else:
            single = launches(rows[0])
            assert single is not None  # a plain row
            builder.add(str(ids[rows[0]]), str(kernel), single, grid=grid, block=block)


def _one_device(chunk: Any, builder: RunBuilder) -> str | None:
    """The chunk's CC; more than one device (name or index, and CC) is left to the careful path."""
    name_column = DISPLAY_NAME if DISPLAY_NAME in chunk.columns else "Device"
    devices, ccs = _column(chunk, name_column), _column(chunk, "CC")
    pairs = set(zip(devices, ccs, strict=True))
    if len(pairs) != 1:
        raise Fallback("several devices")
    device, cc = pairs.pop()
    device = device or (chunk["Device"].iloc[0] if "Device" in chunk.columns else None)
    if builder.device_key is not None and builder.device_key != (device, cc):
        raise Fallback("several devices")
    builder.check_device("", device, cc)
    return cc
