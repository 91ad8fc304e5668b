"""The PR verdict markdown: goldens, hostile names through a GFM renderer, size limits."""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from verdict_factory import (
    make_finding,
    make_group,
    make_kernel,
    make_time_kernel,
    make_unchanged,
    make_verdict,
    regression_verdict,
)

from rules.verdict import Conclusion, Finding, KernelStatus, Severity, Stability
from service.render.escape import WORD_JOINER, escape_code, escape_text, safe_url
from service.render.markdown import (
    GITHUB_COMMENT_LIMIT,
    VerdictLinks,
    render_check_summary,
    render_verdict,
    verdict_marker,
)
from service.render.names import visible as pictured
from service.render.sparklines import sparkline

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
LINKS = VerdictLinks(
    run_url="https://roofguard.example/runs/7",
    summary_url="https://github.com/acme/kernels/actions/runs/1",
    charts=(("roofline", "https://roofguard.example/runs/7/roofline.svg"),),
    artifact_name="roofguard-verdict",
)

HOSTILE = [
    "void gemm<float, 128>(float const*, int)",
    "cutlass::Kernel<T>",
    "a`b|c",
    "`leading",
    "``` triple",
    "ends\\",
    "x\\|y",
    "line1\nline2\r\nline3",
    "@octocat please look #123 GH-7 acme/other#9",
    "<script>alert(1)</script><img src=x onerror=alert(1)>",
    "[click](https://evil.example) https://evil.example www.evil.example",
    "**bold** _em_ ~~del~~ <!-- hidden -->",
    "<details><summary>x</summary>",
    "</code></summary></details>",
    "| pipe | table |",
    "&lt;entity&gt; &amp;",
]


def _time_and_groups():
    """A kernel without counters (judged on time) and a kernel group with a group finding."""
    timed = make_time_kernel()
    findings = [
        make_finding(timed, rule="time-regression", message="wall time up 20%", advice=None),
        Finding(
            rule="roof-drop",
            kernel="group:attention",
            kernel_name="group attention",
            severity=Severity.WARN,
            message="the group fell below its baseline",
        ),
    ]
    return make_verdict([timed], findings, groups=(make_group(),))


def gfm(text: str) -> str:
    """What GitHub's renderer makes of it, raw HTML allowed (GitHub sanitises afterwards)."""
    return cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)


def visible(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("fail", regression_verdict()),
        ("pass", make_verdict(make_unchanged(40, share=1.0))),
        (
            "warn-preview",
            make_verdict(
                [k := make_kernel("softmax", status=KernelStatus.REGRESSED, pct=70.0, center=72.0)],
                [
                    make_finding(k, severity=Severity.WARN, rule="intensity-shift"),
                    make_finding(k, stability=Stability.PREVIEW),
                ],
                notes=("driver 550 vs 535 in baseline",),
            ),
        ),
        ("untrusted", regression_verdict(trusted=False)),
        ("time-and-groups", _time_and_groups()),
    ],
)
def test_golden_comments(golden, name, verdict) -> None:
    golden(GOLDEN / f"verdict-{name}.md", render_verdict(verdict, links=LINKS))


def test_golden_check_summary(golden) -> None:
    golden(GOLDEN / "check-summary-fail.md", render_check_summary(regression_verdict()))


def test_headline_and_worst_first_order() -> None:
    text = render_verdict(regression_verdict())
    assert text.startswith(verdict_marker("acme/kernels", 42, "H100-SXM5") + "\n## ❌ roofguard:")
    assert (
        "1 regression, 1 warning" in text
        and "judged against **H100\\-SXM5 \\(datasheet\\)**" in text
    )
    rows = [line for line in text.splitlines() if line.startswith("| ") and "FLOP/B" in line]
    assert [r.split(" | ")[1] for r in rows] == [
        "`decode_gemv<half>`",
        "`void gemm<float, 128>(float const*, int)`",
        "`rope_kernel`",
        "`fused_rmsnorm`",
    ]
    assert (
        "−24.0 pts (−28.2%)" in rows[0] and "6 other kernels unchanged (22.0% of GPU time)" in text
    )


def test_sparkline_follows_history() -> None:
    kernel = make_kernel(
        "k", status=KernelStatus.REGRESSED, pct=10.0, center=50.0, history=(50.0, 60.0, 70.0)
    )
    text = render_verdict(make_verdict([kernel], [make_finding(kernel)]))
    assert "| ▆▇█▁ |" in text


def test_sparkline_ends_on_the_like_for_like_figure() -> None:
    """A GEMM that fell off the tensor cores: 69% of the fp32 roof, 4.8% of its old one."""
    kernel = make_kernel(
        "gemm", status=KernelStatus.REGRESSED, pct=69.1, center=70.0, history=(60.0, 65.0, 70.0)
    ).model_copy(update={"binding": "fp32", "percent_of_baseline_roof": 4.8})
    text = render_verdict(make_verdict([kernel], [make_finding(kernel)]))
    assert f"| {sparkline([60.0, 65.0, 70.0, 4.8])} |" in text, "it ends low, beside 4.8%"


def _hostile_verdict(name: str):
    kernel = make_kernel(name, status=KernelStatus.REGRESSED, pct=50.0, center=80.0)
    finding = make_finding(kernel, message=f"fell: {name}")
    return make_verdict([kernel], [finding], notes=(f"note about {name}",))


def _tags_outside_code(out: str) -> Counter[str]:
    outside = re.sub(r"<code>.*?</code>", "", out, flags=re.S)
    return Counter(re.findall(r"<(/?[a-zA-Z][a-zA-Z0-9]*|!--)", outside))


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_kernel_names_render_safely(name: str) -> None:
    out = gfm(render_verdict(_hostile_verdict(name)))
    flat = " ".join(name.replace("\r\n", "\n").split("\n"))  # prose: one line
    shown = pictured(name)  # the name's cell: a newline as its control picture
    table = out.split("<tbody>")[1].split("</tbody>")[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table)
    assert len(cells) == 11, "a name broke the table row"
    assert cells[1] == f"<code>{html.escape(shown, quote=False)}</code>"
    assert visible(cells[1]) == shown  # nothing vanished
    # the name added no markup at all: the same tags as for a benign name
    assert _tags_outside_code(out) == _tags_outside_code(gfm(render_verdict(_hostile_verdict("k"))))
    outside = re.sub(r"<code>.*?</code>", "", out, flags=re.S)
    for ping in ("@octocat", "#123", "GH-7", "acme/other#9"):
        assert ping not in outside  # a word joiner sits after every @ and #
    text = visible(out).replace(WORD_JOINER, "")
    assert f"fell: {flat}" in text and f"note about {flat}" in text


def test_names_differing_only_in_whitespace_read_apart() -> None:
    """Flattened to spaces, ``new\\nline`` and ``new line`` (or ``k `` and ``k``) read the same."""
    for one, other in (("new\nline", "new line"), ("tab\tk", "tab k"), ("k ", "k"), ("\n", " ")):
        rows = [
            line.split(" | ")[1]
            for name in (one, other)
            for line in render_verdict(_hostile_verdict(name)).splitlines()
            if line.startswith("| ❌")
        ]
        assert rows[0] != rows[1] and "*(empty)*" not in rows


def test_markdown_links_in_urls_are_inert() -> None:
    assert safe_url("javascript:alert(1)") is None and safe_url("data:image/png;base64,x") is None
    assert safe_url("https://x.example/a b)(<") == "https://x.example/a%20b%29%28%3C"
    links = VerdictLinks(
        run_url="https://x.example/run)[evil](https://evil.example",
        charts=(("chart](https://evil", "javascript:alert(1)"),),
    )
    out = gfm(render_verdict(regression_verdict(), links=links))
    assert re.findall(r'href="([^"]+)"', out) == [
        "https://x.example/run%29%5Bevil%5D%28https://evil.example"
    ]
    assert "<img" not in out


def test_escape_helpers() -> None:
    assert escape_code("a`b") == "``a`b``" and escape_code("`x`") == "`` `x` ``"
    assert escape_code("a|b", in_table=True) == r"`a\|b`" and escape_code("\n") == "*(empty)*"
    assert escape_text("@me #1") == f"\\@{WORD_JOINER}me \\#{WORD_JOINER}1"


def test_two_thousand_kernels_read_in_one_screen() -> None:
    changed = [
        make_kernel(
            f"hot_kernel_{i}", share=0.01, status=KernelStatus.REGRESSED, pct=50.0, center=60.0
        )
        for i in range(5)
    ]
    verdict = make_verdict(
        [*changed, *make_unchanged(1995, share=0.95)], [make_finding(k) for k in changed]
    )
    text = render_verdict(verdict)
    assert "1,995 other kernels unchanged (95.0% of GPU time)" in text
    screen = re.sub(r"<details>.*?</details>", "", text, flags=re.S)  # collapsed by default
    assert "2,000 kernels" in text and len([ln for ln in screen.splitlines() if ln.strip()]) < 15
    assert sum(1 for line in text.splitlines() if "FLOP/B" in line) == 5


def test_size_limit_cuts_least_important_rows_first() -> None:
    long = "very_long_templated_kernel_name_" * 20
    kernels = [
        make_kernel(
            f"k{i:03d}_{long}", share=0.0005, status=KernelStatus.REGRESSED, pct=50.0, center=60.0
        )
        for i in range(600)
    ]
    findings = [
        make_finding(k, severity=Severity.FAIL if i < 3 else Severity.INFO)
        for i, k in enumerate(kernels)
    ]
    verdict = make_verdict(kernels, findings, conclusion=Conclusion.FAIL)
    text = render_verdict(verdict)
    assert len(text) <= 60_000 < len(render_verdict(verdict, max_chars=10**9))
    match = re.search(r"✂️ (\d+) less important kernels left out", text)
    assert match and int(match.group(1)) > 0
    assert all(f"`k{i:03d}_" in text for i in range(3))  # the failures stayed
    assert "`k599_" not in text  # the least important went first
    tiny = render_verdict(verdict, max_chars=3000)
    assert len(tiny) <= 3000 < GITHUB_COMMENT_LIMIT and tiny.startswith("<!-- roofguard:verdict")


def test_the_headline_counts_regressed_kernels_not_findings() -> None:
    gemm = make_kernel("gemm")
    findings = [make_finding(gemm, rule=r) for r in ("roof-drop", "time-regression", "regime")]
    verdict = make_verdict([gemm], findings)
    assert (verdict.regressed, verdict.regressions) == (1, 3)
    assert "**FAIL** · 1 regression, 0 warnings" in render_verdict(verdict)  # one cause, once


def test_a_percent_from_part_of_the_work_reads_as_a_lower_bound() -> None:
    partial = make_kernel("copy_kernel", pct=42.0).model_copy(
        update={"percent_is_lower_bound": True, "missing": ("FLOP counts",)}
    )
    listed = make_kernel("gemm", pct=42.0)
    text = render_verdict(make_verdict([partial, listed], [make_finding(partial)]))
    assert text.count("≥ 42.0%") == 1  # the partial kernel's row only
    # the legend says what the mark means, and why (the JSON's ``missing`` alone did)
    assert "a lower bound\\, the roof times part of the work only \\(FLOP counts\\)" in text


def test_the_terminal_shows_a_lower_bound_beside_its_baseline_too() -> None:
    from service.render.text import _percent_figure

    partial = make_kernel("copy_kernel", pct=42.0).model_copy(
        update={"percent_is_lower_bound": True, "missing": ("FLOP counts",)}
    )
    assert _percent_figure(partial) == "80.0 → ≥ 42.0%"
    assert _percent_figure(make_kernel("gemm", pct=42.0)) == "80.0 → 42.0%"


@pytest.mark.parametrize(
    ("rule", "measure", "level", "shown"),
    [
        ("roof-drop", "percent_of_roof", 71.8, "71.8%"),
        ("roof-drop", "mfu", 0.718, "71.8%"),
        ("time-regression", "time_s", 0.000338, "338 µs"),
    ],
)
def test_the_gate_level_reads_in_the_unit_of_what_it_judged(rule, measure, level, shown) -> None:
    from service.render.figures import figure

    finding = make_finding(rule=rule).model_copy(
        update={"numbers": {"measure": measure, "level": level}}
    )
    assert figure(finding, "level", level) == ("level", shown)


def test_escaping_keeps_no_long_string_in_its_cache() -> None:
    """A service fed 64 KiB kernel names must not hold thousands of them in memory."""
    from service.render import escape

    name = "gemm<" + "x" * 10_000 + ">"
    before = escape._escaped_short_text.cache_info().currsize
    assert escape.escape_text(name) == escape.escape_text(name)
    assert escape._escaped_short_text.cache_info().currsize == before
    assert escape.escape_text("tensor_bf16") == "tensor\\_bf16"
    assert escape._escaped_short_text.cache_info().currsize >= 1
