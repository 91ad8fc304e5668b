"""Long kernel names cut to fit, keeping what tells two kernels apart: the template arguments.

CUTLASS and PyTorch kernels print as demangled signatures hundreds of characters long; two
instances of one template (``softmax_kernel<float, 8192>`` and ``<float, 4096>``) differ only
in their template arguments. A plain cut in the middle drops exactly those, so a name is first
made compact (no return type, the parameter list as ``(…)``, as identity keys drop them too)
and only then, if still too long, cut in the middle.
"""

from __future__ import annotations

from collectors import normalise_name

ELLIPSIS = "…"


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
