"""``roofguard artifact``: the fork-safe pair's hand-over, pack (untrusted) and unpack (trusted).

``pack`` runs in the ``pull_request`` job: it copies the reports and writes a manifest with the
PR and commit; the job uploads the folder. ``unpack`` runs in the ``workflow_run`` job on the
downloaded folder: it checks it strictly against the event (``GITHUB_EVENT_PATH``) and against
GitHub (the PR's head must be the commit), copies the verified reports out and, inside
Actions, sets the step outputs ``reports``, ``reruns``, ``pr``, ``sha``, ``branch`` and ``device``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from service.cli.overview import DEVICE_HELP, HELP_MARKUP
from service.errors import BadInput
from service.github.actions import set_outputs
from service.github.artifact import pack, read_event, unpack

app = typer.Typer(
    help="Pack reports for the fork-safe pair, or unpack them strictly.",
    rich_markup_mode=HELP_MARKUP,
)

_Opt = typer.Option


@app.command("pack")
def pack_command(
    files: Annotated[list[Path], typer.Argument(help="Report files.", dir_okay=False)],
    output: Annotated[Path, _Opt(help="Folder to write (upload it as the artifact).")],
    pr: Annotated[int, _Opt("--pr", help="Pull-request number.")],
    sha: Annotated[str, _Opt(help="Commit the reports were made on (the PR's head).")],
    device: Annotated[str | None, _Opt(help=DEVICE_HELP)] = None,
    rerun: Annotated[
        list[Path] | None,
        _Opt(
            "--rerun",
            help="The run measured again (repeatable): judged as `check --rerun` re-measurements.",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Copy the reports into OUTPUT/reports and write OUTPUT/roofguard-artifact.json."""
    manifest = pack(files, output, pr=pr, sha=sha, device=device, reruns=rerun or ())
    set_outputs({"artifact-path": str(output)}, os.environ)
    typer.echo(f"packed {len(manifest.files)} report(s) for PR #{pr} at {sha[:12]} in {output}")


@app.command("unpack")
def unpack_command(
    folder: Annotated[Path, typer.Argument(help="The downloaded artifact folder (untrusted).")],
    output: Annotated[Path, _Opt(help="Folder the verified reports are copied to.")],
    repo: Annotated[str, _Opt(help="OWNER/NAME (of this workflow, never of the artifact).")],
    event: Annotated[
        Path | None, _Opt(help="Event payload (default GITHUB_EVENT_PATH).", show_default=False)
    ] = None,
    verify_pr: Annotated[
        bool, _Opt(help="Ask GitHub that the PR's head is the commit (GITHUB_TOKEN).")
    ] = True,
) -> None:
    """Check a downloaded artifact against the workflow_run event and copy its reports out."""
    payload = read_event(str(event) if event else os.environ.get("GITHUB_EVENT_PATH"))
    found = unpack(folder, output, payload)
    if verify_pr:
        try:
            _verify_pr(repo, found.pr, found.sha)
        except BaseException:  # refused or unverified: nothing is left for a later step to read
            for path in (*found.reports, *found.reruns):
                path.unlink(missing_ok=True)
            raise
    outputs = {
        "reports": "\n".join(str(path) for path in found.reports),
        "reruns": "\n".join(str(path) for path in found.reruns),
        "pr": str(found.pr),
        "sha": found.sha,
        "branch": found.branch or "",
        "device": found.device or "",
    }
    set_outputs(outputs, os.environ)
    typer.echo(
        f"verified {len(found.reports)} report(s) of PR #{found.pr} at {found.sha[:12]}", err=True
    )


def _verify_pr(repo: str, pr: int, sha: str) -> None:
    """Refuse an artifact whose PR's head is not its commit; GitHub's failures name the PR.

    Raises:
        BadInput: No such PR, or its head is another commit.
        GitHubFailed: GitHub refused or failed the request (bad credentials, unreachable).
    """
    from github3 import exceptions as gh_exc  # github3 only here

    from service.github.auth import GitHubCredentials, resolve_api_url
    from service.github.client import make_client
    from service.github.publish import moved_head
    from service.github.retry import GitHubFailed

    env = os.environ
    client = make_client(GitHubCredentials.from_env(env), api_url=resolve_api_url(None, env))
    try:
        moved = moved_head(client, repo, pr, sha)
    except gh_exc.NotFoundError:
        raise BadInput(f"roofguard-artifact.json: field pr: {repo}#{pr} does not exist") from None
    except gh_exc.GitHubException as exc:
        raise GitHubFailed(
            f"GitHub: {exc} (reading PR #{pr} of {repo} to check that its head is "
            f"the artifact's commit {sha[:12]})"
        ) from exc
    if moved is not None:
        raise BadInput(
            f"roofguard-artifact.json: field pr: {moved}, not at the artifact's commit "
            f"{sha[:12]}: its reports were made for another commit"
        )


def register(root: typer.Typer) -> None:
    """Add ``roofguard artifact pack|unpack`` to ``root``."""
    root.add_typer(app, name="artifact")
