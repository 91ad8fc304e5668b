"""A pr run needs its PR number: without it no PR comment finds the run, nor a compare."""

from __future__ import annotations

from factories import make_run
from svc_helpers import Service
from test_api_store_types import _form, _runs_stored

from service.cli import run


def test_a_form_upload_of_kind_pr_without_its_pr_is_a_422(service: Service, repo: str) -> None:
    """Was 201: stored as a pr run of no pull request."""
    answer = _form(service, repo, {"kind": "pr"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == (
        "form field pr: missing; kind=pr needs the pull-request number (or kind=local)"
    )
    assert _runs_stored(service, repo) == 0


def test_a_json_upload_of_kind_pr_without_its_pr_is_a_422(service: Service, repo: str) -> None:
    answer = service.upload(make_run(repo=repo, kind="pr"), service.token(repo))
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == (
        "request body: pull_request: missing; a run of kind pr needs its number"
    )
    assert _runs_stored(service, repo) == 0


def test_check_and_ingest_refuse_kind_pr_without_pr_the_same_way(tmp_path, capsys) -> None:
    """The command line stored it too (exit 0); now the upload's refusal, in its flags."""
    report = tmp_path / "run.json"
    report.write_text(make_run().model_dump_json())
    db = f"sqlite:///{tmp_path / 'h.db'}"
    common = ["--repo", "acme/kernels", "--commit", "f00d", "--kind", "pr", "--db", db]
    for command in (["check", str(report)], ["ingest", str(report), "--branch", "topic"]):
        assert run([*command, *common]) == 2
        error = capsys.readouterr().err.strip().splitlines()[-1]
        expected = "--pr: missing; --kind pr needs the pull-request number (or --kind local)"
        assert error == f"roofguard: error: {expected}", error
