"""Names cut to fit keep their template arguments: two instances of one template stay apart."""

from __future__ import annotations

import re

import pytest
from verdict_factory import make_finding, make_kernel, make_verdict

from rules.verdict import KernelStatus
from service.render.labels import short_names
from service.render.markdown import render_verdict
from service.render.names import compact_signature, ellipsize_middle
from service.render.text import clean

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
