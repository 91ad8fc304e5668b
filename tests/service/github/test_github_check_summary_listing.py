"""The check run's summary says truthfully where the kernels past its rows are listed."""

from __future__ import annotations

import re

import pytest
from github_server import FakeClock, FakeGitHub, github_server_fixture  # noqa: F401
from verdict_factory import make_finding, make_kernel, make_verdict

from rules.verdict import KernelStatus, Verdict
from service.github.auth import GitHubCredentials
from service.github.client import make_client, publish_verdict
from service.render.markdown import CHECK_ROWS, render_verdict

REPO, PR = "acme/kernels", 42
SHA = "a" * 40
EVERYTHING = "the verdict JSON (`--format json`) has all of them"


def regressed(n: int) -> Verdict:
    """``n`` regressed kernels with long template names, each with its finding."""
    kernels = [
        make_kernel(
            f"verify_gemm_bf16_variant_{i}<512, 14336, 4096>",
            share=0.9 / n,
            pct=61.0,
            center=85.0,
            status=KernelStatus.REGRESSED,
        )
        for i in range(n)
    ]
    return make_verdict(kernels, [make_finding(k) for k in kernels], pr=PR)


def posted(server: FakeGitHub, verdict: Verdict, *, pr: int | None = PR) -> tuple[str, str]:
    """(comment body or check text, check summary) as GitHub received them."""
    markdown = render_verdict(verdict)
    client = make_client(GitHubCredentials(token="ghs_t"), api_url=server.url, clock=FakeClock())
    publish_verdict(verdict, markdown, repo=REPO, pr=pr, sha=SHA, client=client)
    (check,) = server.check_runs
    body = server.pr_comments(PR)[0]["body"] if pr is not None else check["output"]["text"]
    return body, check["output"]["summary"]


def test_a_comment_that_left_kernels_out_is_not_said_to_list_them_all(
    github_server: FakeGitHub,
) -> None:
    """300 regressed kernels: the summary sent to the comment "and the job summary" for all of
    them, while the comment listed 40 and said 260 were left out."""
    comment, summary = posted(github_server, regressed(300))
    left_out = re.search(r"^> ✂️ (\d+) less important kernels left out", comment, re.MULTILINE)
    assert left_out is not None and 0 < int(left_out[1]) < 300
    assert f"…and {300 - CHECK_ROWS} more changed kernels; " in summary
    assert "list them all" not in summary and "job summary" not in summary
    assert "leave the least important out to stay under GitHub's size limit" in summary
    assert EVERYTHING in summary


@pytest.mark.parametrize("pr", [PR, None], ids=["pull-request", "commit-only"])
def test_a_comment_that_lists_every_kernel_says_so(github_server: FakeGitHub, pr: int | None):
    verdict = regressed(15)
    comment, summary = posted(github_server, verdict.model_copy(update={"pull_request": pr}), pr=pr)
    assert "✂️" not in comment and comment.count("verify_gemm_bf16_variant_") >= 15
    listing = "the PR comment and the details below" if pr else "the details below"
    assert f"…and {15 - CHECK_ROWS} more changed kernels; {listing} list them all." in summary
    assert "job summary" not in summary
