"""Long kernel names cut to fit, keeping what tells two kernels apart: the template arguments.

CUTLASS and PyTorch kernels print as demangled signatures hundreds of characters long; two
instances of one template (``softmax_kernel<float, 8192>`` and ``<float, 4096>``) differ only
in their template arguments. A plain cut in the middle drops exactly those, so a name is first
made compact (no return type, the parameter list as ``(…)``, as identity keys drop them too)
and only then, if still too long, cut in the middle.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from collectors import normalise_name

ELLIPSIS = "…"
#: C0 control characters and DEL as their Unicode control pictures (U+2400-U+2421).
_PICTURES = str.maketrans({c: 0x2400 + c for c in range(0x20)} | {0x7F: 0x2421})
_END_SPACES = re.compile(r"^ +| +$")
#: Characters kept before the first difference of names whose cuts collide (``distinct_cuts``):
#: enough for ``GemmShape<`` before ``128, 256, 32>``.
DIFFERENCE_CONTEXT = 12


def compact_signature(name: str) -> str:
    """``void f<float, 8>(const float*, int)`` -> ``f<float, 8>(…)``: the name that identifies."""
    core = normalise_name(name)
    if core == name.strip():
        return core
    # the parameter list was dropped (``operator()`` itself ends in a parenthesis too)
    has_parameters = name.rstrip().endswith(")") and not name.rstrip().endswith(core)
    return f"{core}({ELLIPSIS})" if has_parameters else core


def cut_middle(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with "…" in the middle (start and end kept)."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return f"{text[:head]}{ELLIPSIS}{text[len(text) - (limit - 1 - head) :]}"


def ellipsize_middle(name: str, limit: int) -> str:
    """``name`` in at most ``limit`` characters, its template arguments kept when they fit.

    The full name when it fits; else its compact signature; else that cut in the middle,
    which keeps the start of the name and the end of its template arguments.
    """
    if len(name) <= limit:
        return name
    return cut_middle(compact_signature(name), limit)


def visible(name: str) -> str:
    r"""``name`` with what a comment would hide made visible, so names differing there differ.

    A newline or tab shows as its control picture (``␊``, ``␉``) rather than a space, and
    spaces at either end as ``␠``: ``new\nline`` and ``new line``, or ``k`` and ``k ``, read
    the same otherwise (roofguard JSON keeps names as given).
    """
    pictured = name.replace("\r\n", "\n").translate(_PICTURES)
    return _END_SPACES.sub(lambda spaces: "\u2420" * len(spaces.group()), pictured)


def shown_name(name: str, limit: int) -> str:
    """``name`` as the comment shows it: ``visible``, then cut (``ellipsize_middle``)."""
    return ellipsize_middle(visible(name), limit)


def distinct_cuts(texts: Sequence[str], limit: int) -> list[str]:
    """``ellipsize_middle`` of each text; texts whose cuts collide cut where they differ.

    Two instances of a CUTLASS template differ in a tile shape in the middle of a long
    signature, exactly what a cut in the middle drops: both rows of a table read the same.
    """
    return kept_apart(texts, [ellipsize_middle(text, limit) for text in texts], limit)


def kept_apart(texts: Sequence[str], cuts: Sequence[str], limit: int) -> list[str]:
    """``cuts`` (``ellipsize_middle`` of ``texts``), those that collide cut where they differ."""
    groups: dict[str, set[str]] = {}
    for text, cut in zip(texts, cuts, strict=True):
        groups.setdefault(cut, set()).add(text)
    apart: dict[str, str] = {}
    for same in groups.values():
        if len(same) > 1:
            apart |= _cut_where_they_differ(sorted(same), limit)
    return [apart.get(text, cut) for text, cut in zip(texts, cuts, strict=True)]


def _cut_where_they_differ(texts: list[str], limit: int) -> dict[str, str]:
    """Each of ``texts`` (distinct, colliding cuts) cut to show where they first differ."""
    forms = [compact_signature(text) for text in texts]
    if len(set(forms)) < len(forms):  # overloads: only their parameter lists differ
        forms = list(texts)
    at = _first_difference(forms)
    return {text: _around(form, at, limit) for text, form in zip(texts, forms, strict=True)}


def _first_difference(texts: Sequence[str]) -> int:
    """The first index at which ``texts`` differ (the shortest's length if one starts another)."""
    shortest = min(len(text) for text in texts)
    return next((i for i in range(shortest) if len({t[i] for t in texts}) > 1), shortest)


def _around(text: str, at: int, limit: int) -> str:
    """``text`` in ``limit`` characters: its start, "…", and the part from near ``at`` on."""
    if len(text) <= limit:
        return text
    head = min(limit // 3, at)
    begin = max(head, at - DIFFERENCE_CONTEXT)
    if begin <= head:
        return f"{text[: limit - 1]}{ELLIPSIS}"
    room = limit - head - 2  # two ellipses
    if begin + room >= len(text):
        return f"{text[:head]}{ELLIPSIS}{text[len(text) - (limit - head - 1) :]}"
    return f"{text[:head]}{ELLIPSIS}{text[begin : begin + room]}{ELLIPSIS}"
