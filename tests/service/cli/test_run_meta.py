"""The run's meta: one model (RunMeta) that the commands build and that stamps a RunRecord."""

from datetime import UTC, datetime, timedelta

import pytest

from collectors.schema import RunKind
from service.cli import run as cli
from service.errors import BadInput
from service.pipeline.runmeta import RunMeta, parse_kind
from tests.factories import make_run


def test_stamping_overrides_what_the_files_say_and_keeps_the_rest():
    files = make_run(repo="files/say", commit="f11e5", branch="x", kind="local")
    files = files.model_copy(update={"runner": "runner-from-file"})
    meta = RunMeta(repo="acme/kernels", commit="abc", branch="feat", pull_request=7)
    stamped = meta.stamp(files)
    assert (stamped.repo, stamped.commit, stamped.branch) == ("acme/kernels", "abc", "feat")
    assert (stamped.kind, stamped.pull_request) == (RunKind.PR, 7)  # a PR number means pr
    assert (stamped.runner, stamped.timestamp) == ("runner-from-file", files.timestamp)
    assert stamped.notes[-1].startswith("the report names repository 'files/say'")
    assert stamped.kernels == files.kernels
    assert RunMeta(repo="a/b", commit="c").stamp(files).kind == RunKind.LOCAL


def test_a_kind_not_given_is_what_the_files_say():
    nightly = make_run(kind="nightly")
    assert RunMeta(repo="a/b", commit="c").stamp(nightly).kind == RunKind.NIGHTLY
    pr = make_run(kind="pr").model_copy(update={"pull_request": 12})
    assert (RunMeta(repo="a/b", commit="c").stamp(pr).pull_request) == 12
    given = RunMeta(repo="a/b", commit="c", kind=RunKind.LOCAL).stamp(pr)
    assert (given.kind, given.pull_request) == (RunKind.LOCAL, None)  # the flag wins, whole


def test_a_run_stored_in_another_repository_than_its_file_names_says_so(tmp_path, capsys):
    report = tmp_path / "r.json"
    report.write_text(make_run(repo="acme/kernels").model_dump_json(), encoding="utf-8")
    argv = ["ingest", str(report), "--repo", "other/repo", "--commit", "c", "--branch", "main"]
    assert cli([*argv, "--db", f"sqlite:///{tmp_path / 'h.db'}"]) == 0
    note = "the report names repository 'acme/kernels'; stored in 'other/repo' as given"
    assert note in capsys.readouterr().err
    same = make_run(repo="Other/Repo")  # repositories are named in any case
    assert RunMeta(repo="other/repo", commit="c").stamp(same).notes == same.notes


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (RunMeta(repo="acme", commit="c"), "--repo: 'acme' is not OWNER/NAME"),
        # stored, a name the upload API refuses: its runs were out of the service's reach
        (RunMeta(repo="acme/ kernels", commit="c"), "--repo: 'acme/ kernels' is not OWNER/NAME"),
        (
            RunMeta(repo="a/b", commit="c", kind=RunKind.NIGHTLY, pull_request=5),
            "--pr 5 given with --kind nightly; use --kind pr",
        ),
        (
            RunMeta(repo="a/b", commit="c", timestamp=datetime.now(UTC) + timedelta(days=2)),
            "--timestamp: ",
        ),
    ],
)
def test_stamping_refuses_bad_meta_naming_the_flag(meta, message):
    with pytest.raises(BadInput, match="^" + message.replace("+", r"\+")):
        meta.stamp(make_run())


def test_a_kind_given_as_text_names_the_flag(tmp_path, capsys):
    assert parse_kind("nightly") == RunKind.NIGHTLY and parse_kind(None) is None
    report = tmp_path / "r.json"
    report.write_text(make_run().model_dump_json(), encoding="utf-8")
    argv = ["ingest", str(report), "--repo", "a/b", "--commit", "c", "--branch", "main"]
    assert cli([*argv, "--kind", "weekly", "--db", f"sqlite:///{tmp_path / 'h.db'}"]) == 2
    assert "--kind: 'weekly' is not one of nightly, pr, local" in capsys.readouterr().err
    assert not (tmp_path / "h.db").exists()
