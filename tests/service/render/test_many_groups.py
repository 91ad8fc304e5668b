"""A comment with many failing kernel groups still names the worst kernels.

The findings on groups (and on the whole run) each had a section, all of them: 100 failing
groups' sections filled the comment before a single kernel row, and the group table's rows
past ``MAX_GROUPS`` vanished without a word.
"""

from __future__ import annotations

from verdict_factory import make_finding, make_group, make_kernel, make_verdict

from rules.verdict import Finding, KernelStatus, Severity
from service.render.markdown import (
    GITHUB_COMMENT_LIMIT,
    MAX_GROUP_SECTIONS,
    MAX_GROUPS,
    render_job_summary,
    render_verdict,
)

GROUPS, PER_GROUP = 100, 10


def many_failing_groups():
    """1,000 regressed kernels in 100 groups, every group failing too."""
    kernels = [
        make_kernel(f"layer{g:03d}_kernel_{j}", status=KernelStatus.REGRESSED, pct=40.0)
        for g in range(GROUPS)
        for j in range(PER_GROUP)
    ]
    group_findings = [
        Finding(
            rule="roof-drop",
            kernel=f"group:layer{g:03d}",
            kernel_name=f"group layer{g:03d}",
            severity=Severity.FAIL,
            message="the group fell below its baseline " + "because " * 60,
        )
        for g in range(GROUPS)
    ]
    groups = tuple(make_group(f"layer{g:03d}") for g in range(GROUPS))
    findings = [*(make_finding(k) for k in kernels), *group_findings]
    return make_verdict(kernels, findings, groups=groups)


def test_the_comment_names_kernels_and_says_what_it_left_out():
    markdown = render_verdict(many_failing_groups())
    assert len(markdown) < GITHUB_COMMENT_LIMIT
    kernel_rows = [line for line in markdown.splitlines() if line.startswith("| ❌ | `layer")]
    assert len(kernel_rows) >= 20
    assert markdown.count("<code>group layer") == MAX_GROUP_SECTIONS
    left = GROUPS - MAX_GROUP_SECTIONS
    assert f"…and the findings of {left} more groups, left out" in markdown
    assert f"…and {GROUPS - MAX_GROUPS} more groups; the verdict JSON has every one." in markdown


def test_the_job_summary_gives_more_of_them_a_section():
    summary = render_job_summary(many_failing_groups(), max_bytes=1 << 20)
    assert summary.count("<code>group layer") == GROUPS
    assert "the findings of" not in summary
