"""``/roofguard accept KERNEL`` on a kernel of a group (``[[rules.groups]]``) that fell with it.

A GEMM that fell off the tensor cores fails its own rules and its group's roof-drop. Accepted
by name, it showed accepted while ``roof-drop: group:GEMMs`` kept the check red; only a bare
``/roofguard accept`` cleared it, naming the group as a kernel. A group falls with its
kernels: once every kernel of it that fell is accepted, so is the group's fall.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from github_server import FakeGitHub
from svc_helpers import Service, auth
from test_api_accept_cards import H100, START, accept, accepted, night, pr_run, the, upload
from test_api_webhook import PR

from service.config import RoofguardConfig


def grouped(make_service, github_server: FakeGitHub, pattern: str) -> Service:
    """A service posting to the fake GitHub, whose config groups the kernels ``pattern`` names."""
    group = {"name": "GEMMs", "pattern": pattern, "regime": "compute-bound", "target_percent": 65}
    config = RoofguardConfig.model_validate({"rules": {"groups": [group]}})
    return make_service(config, github_token="ghs_service_token", github_api_url=github_server.url)


def pr_judged(service: Service, repo: str, **changes: object) -> tuple[int, dict]:
    """Eight H100 nights, then PR 7 with ``changes``: its run id and verdict."""
    for n in range(8):
        upload(service, night(repo, H100, START + timedelta(days=n)))
    answer = service.upload(pr_run(repo, H100, **changes), service.token(repo))
    assert answer.status_code == 201, answer.text
    return int(answer.json()["run_id"]), answer.json()["verdict"]


def findings_of(service: Service, repo: str, run_id: int) -> list[tuple[str, str]]:
    """(rule, kernel) of each failing finding of the run's verdict, as the API serves it."""
    read = auth(service.token(repo, write=False))
    answer = service.client.get(f"/api/v1/runs/{run_id}/verdict", headers=read)
    verdict = answer.json()["verdict"]
    return sorted((f["rule"], f["kernel"]) for f in verdict["findings"] if f["severity"] == "fail")


@pytest.mark.parametrize("pattern", ["gemm*", "*"], ids=["its-only-kernel", "copy-kept-up"])
def test_accepting_the_kernel_that_fell_accepts_its_groups_fall(
    make_service, github_server, repo, pattern
) -> None:
    service = grouped(make_service, github_server, pattern)
    run_id, verdict = pr_judged(service, repo, fell=True)
    assert verdict["conclusion"] == "fail"
    assert ("roof-drop", "group:GEMMs") in findings_of(service, repo, run_id)
    answer = accept(service, repo, "/roofguard accept gemm -- fp32 on purpose", 1)
    assert answer["detail"] == f"alice accepted 'gemm' on H100-SXM5 (run {run_id})"
    assert github_server.check_runs[-1]["conclusion"] == "success"
    assert findings_of(service, repo, run_id) == []
    (comment,) = github_server.pr_comments(PR)
    note = "group \\'GEMMs\\' accepted with \\'gemm\\'\\: every kernel of it that fell is accepted"
    assert note in comment["body"]
    assert accepted(service, repo) == [("gemm", run_id)]  # no group named as a kernel
    bare = accept(service, repo, "/roofguard accept -- again", 2)
    assert bare["detail"].startswith("nothing new accepted by alice; already accepted: 'gemm'")


def test_a_group_keeps_its_fall_while_a_kernel_that_fell_with_it_is_not_accepted(
    make_service, github_server, repo
) -> None:
    service = grouped(make_service, github_server, "*")
    run_id, verdict = pr_judged(service, repo, fell=True, slow_copy=1.6)
    assert the(verdict, "copy")["status"] == "regressed"
    accept(service, repo, "/roofguard accept gemm -- fp32 on purpose", 1)
    left = findings_of(service, repo, run_id)
    assert ("roof-drop", "group:GEMMs") in left and all(k != "gemm" for _, k in left)
    assert github_server.check_runs[-1]["conclusion"] == "failure"
    answer = accept(service, repo, "/roofguard accept copy -- wider rows, slower", 2)
    assert answer["detail"] == f"alice accepted 'copy' on H100-SXM5 (run {run_id})"
    assert findings_of(service, repo, run_id) == []
    assert github_server.check_runs[-1]["conclusion"] == "success"
    assert [key for key, _ in accepted(service, repo)] == ["gemm", "copy"]
