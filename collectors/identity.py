"""Identity keys: how a kernel is recognised across runs although its printed name varies.

ncu prints demangled C++ (several kB at times), Triton appends numbered suffixes
(``triton_poi_fused_add_3``), and benchmark harnesses add parameters. The key folds what
should not matter; the options decide what that is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

_TRITON_SUFFIX = re.compile(r"^(triton_[a-z]+_[A-Za-z0-9_]*?)_\d+$")
_RETURN_TYPE = re.compile(r"^(?:void|int|float|double|auto)\s+")
_SPACE = re.compile(r"\s+")


class KeyOptions(BaseModel):
    """How names are normalised into identity keys.

    Attributes:
        strip_template_args: Drop ``<...>`` template arguments (``gemm<float, 128>`` -> ``gemm``).
        strip_arguments: Drop the parameter list ``(...)`` of a signature.
        strip_return_type: Drop a leading ``void``.
        fold_triton_suffix: ``triton_poi_fused_add_3`` -> ``triton_poi_fused_add``.
        include_launch_config: Append grid and block, so one kernel launched with different
            shapes is followed as separate series.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    strip_template_args: bool = False
    strip_arguments: bool = True
    strip_return_type: bool = True
    fold_triton_suffix: bool = True
    include_launch_config: bool = False


def _strip_balanced(text: str, opening: str, closing: str) -> str:
    """Remove every balanced ``opening ... closing`` group (nesting-aware)."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == opening:
            depth += 1
        elif ch == closing and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _strip_parameter_list(name: str) -> str:
    """Drop the trailing parameter list of a signature, keeping ``operator()`` names intact."""
    stripped = name.rstrip()
    if not stripped.endswith(")"):
        return name
    opening = stripped.rfind("(")
    if opening < 0:  # no list opened: nothing to drop
        return name
    if ")" in stripped[opening + 1 : -1]:  # nested parentheses: find the matching one
        return _strip_nested_parameter_list(name, stripped)
    head = stripped[:opening]  # one flat list (a million names a huge run): no scan
    return head if head and not head.endswith("operator") else name


def _strip_nested_parameter_list(name: str, stripped: str) -> str:
    """``_strip_parameter_list`` where the list holds parentheses: scanned from its end."""
    depth = 0
    for pos in range(len(stripped) - 1, -1, -1):
        ch = stripped[pos]
        depth += ch == ")"
        depth -= ch == "("
        if depth == 0:
            head = stripped[:pos]
            return head if head and not head.endswith("operator") else name
    return name


def normalise_name(name: str, options: KeyOptions | None = None) -> str:
    """The name part of an identity key."""
    opts = options or KeyOptions()
    key = _SPACE.sub(" ", name.strip())
    if opts.strip_return_type:
        key = _RETURN_TYPE.sub("", key)
    if opts.strip_arguments:
        key = _strip_parameter_list(key)
    if opts.strip_template_args:
        key = _strip_balanced(key, "<", ">")
    if opts.fold_triton_suffix and key.startswith("triton_"):  # the pattern's own prefix
        key = _TRITON_SUFFIX.sub(r"\1", key)
    return key.strip() or name.strip()


def make_key(
    name: str,
    params: Mapping[str, str | float] | None = None,
    options: KeyOptions | None = None,
    *,
    grid: str | None = None,
    block: str | None = None,
) -> str:
    """Identity key: the normalised name, then ``[k=v,...]`` parameters in sorted order."""
    opts = options or KeyOptions()
    key = normalise_name(name, opts)
    if opts.include_launch_config and (grid or block):
        key += f" grid{grid or '?'} block{block or '?'}"
    if params:
        rendered = ",".join(f"{k}={_fmt(v)}" for k, v in sorted(params.items()))
        key += f"[{rendered}]"
    return key


def _fmt(value: str | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
