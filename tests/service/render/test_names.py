"""Names cut to fit keep their template arguments: two instances of one template stay apart."""

from __future__ import annotations

import re

import pytest
from verdict_factory import make_finding, make_kernel, make_verdict

from rules.verdict import KernelStatus
from service.render.labels import short_names
from service.render.markdown import render_verdict
from service.render.names import compact_signature, distinct_cuts, ellipsize_middle
from service.render.text import clean, kernel_table
from service.render.verdict_view import NAME_LIMIT

SOFTMAX = "void softmax_kernel<float, 8192>(const float*, float*, int)"


@pytest.mark.parametrize(
    ("name", "compact"),
    [
        (SOFTMAX, "softmax_kernel<float, 8192>(…)"),
        ("gemv", "gemv"),
        ("BM_copy/4096/real_time", "BM_copy/4096/real_time"),
        ("void ns::k<2>::operator()(int)", "ns::k<2>::operator()(…)"),
    ],
)
def test_a_compact_signature_drops_what_keys_drop(name: str, compact: str) -> None:
    assert compact_signature(name) == compact


def test_the_cut_keeps_the_template_arguments() -> None:
    assert ellipsize_middle(SOFTMAX, 40) == "softmax_kernel<float, 8192>(…)"
    assert ellipsize_middle(SOFTMAX, len(SOFTMAX)) == SOFTMAX, "a name that fits is whole"
    cut = ellipsize_middle(SOFTMAX, 20)
    assert len(cut) == 20 and cut.endswith("8192>(…)")


def test_two_instances_stay_apart_on_charts_and_in_the_terminal() -> None:
    names = [SOFTMAX, SOFTMAX.replace("8192", "4096")]
    labels = short_names(names)
    assert labels == {
        names[0]: "softmax_kernel<float, 8192>(…)",
        names[1]: "softmax_kernel<float, 4096>(…)",
    }
    assert [clean(name, 32) for name in names] == list(labels.values())


def test_two_long_instances_stay_apart_in_the_comment() -> None:
    """The comment cut names at their start: CUTLASS instances differing in a late template
    argument (or nvbench states in their axes) read the same in rows and summaries."""
    head = ", ".join(f"cutlass::arch::Sm90_{i}" for i in range(8))
    names = [f"void huge_kernel<{head}, {tile}>(Params const&)" for tile in (64, 128)]
    kernels = [make_kernel(n, status=KernelStatus.REGRESSED, pct=40.0) for n in names]
    markdown = render_verdict(make_verdict(kernels, [make_finding(k) for k in kernels]))
    rows = [line.split(" | ")[1] for line in markdown.splitlines() if line.startswith("| ❌")]
    summaries = re.findall(r"<summary>.*?<code>(.*?)</code>", markdown)
    assert len(set(rows)) == len(set(summaries)) == 2
    assert all(row.endswith(("64>(…)`", "128>(…)`")) for row in rows)
    assert markdown.count("Kernel: `void huge_kernel<") == 2  # in full where there is room


CUTLASS = (
    "void cutlass::Kernel2<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::threadblock::"
    "MmaMultistage<cutlass::gemm::GemmShape<{tile}, 32>, cutlass::gemm::GemmShape<64, 64, 32>, "
    "cutlass::gemm::GemmShape<16, 8, 16>, cutlass::bfloat16_t, cutlass::layout::RowMajor>, "
    "cutlass::epilogue::threadblock::Epilogue<float>>>(Params)"
)


def _tiles(*tiles: str) -> list[str]:
    return [CUTLASS.format(tile=tile) for tile in tiles]


def test_instances_differing_in_the_middle_stay_apart_in_rows_summaries_and_the_terminal():
    """Two CUTLASS GEMMs differing only in their tile shape, mid-signature, read the same in
    the comment's rows and summaries and in the terminal table: the cut dropped the shape."""
    names = _tiles("128, 256", "256, 128")
    assert ellipsize_middle(names[0], NAME_LIMIT) == ellipsize_middle(names[1], NAME_LIMIT)
    kernels = [make_kernel(n, status=KernelStatus.REGRESSED, pct=40.0) for n in names]
    verdict = make_verdict(kernels, [make_finding(k) for k in kernels])
    markdown = render_verdict(verdict)
    rows = [line.split(" | ")[1] for line in markdown.splitlines() if line.startswith("| ❌")]
    summaries = re.findall(r"<summary>.*?<code>(.*?)</code>", markdown)
    shape = "`cutlass::Kernel2<cutlass::gemm…::GemmShape<{}, 32>, cutlass::gemm::GemmShape<64, 64…`"
    assert sorted(rows) == [shape.format("128, 256"), shape.format("256, 128")]
    assert len(set(summaries)) == 2 and all("GemmShape&lt;" in s for s in summaries)
    table, _ = kernel_table(verdict)
    cells = [str(cell) for cell in table.columns[0]._cells]
    assert sorted(cells) == [
        "cutlass::Kernel2…::GemmShape<128, 256, 32>, cut…",
        "cutlass::Kernel2…::GemmShape<256, 128, 32>, cut…",
    ]
    assert sorted(short_names(names).values()) == sorted(cells), "the charts' labels too"


def test_cuts_that_do_not_collide_are_left_as_they_were():
    names = [*_tiles("128, 256"), SOFTMAX, "gemv", *_tiles("128, 256")]
    assert distinct_cuts(names, 48) == [ellipsize_middle(n, 48) for n in names]
    overloads = [f"void {'x' * 60}_f<float>({kind})" for kind in ("int", "float")]
    assert len(set(distinct_cuts(overloads, 48))) == 2, "only the parameter lists differ"
