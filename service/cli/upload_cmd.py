"""``roofguard upload``: the Action's server mode. Send reports to a roofguard service.

The service ingests and evaluates the run and answers with the verdict, which this command
writes as JSON or markdown. Uploads are idempotent on content, so a retry after a dropped
connection or a 503 is safe and returns the first result. A check that takes long is
answered 202: the command uploads the same files again after ``Retry-After`` and gets that
check's verdict (the service runs it once).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from rules import Conclusion, Verdict, shown_conclusion
from service.cli.overview import DEVICE_HELP
from service.cli.suspects import RerunOpt, SuspectsOpt, SuspectsRegexOpt, write_suspects
from service.cli.verdict_output import refuse_unwritable_outputs
from service.errors import BadInput, ServiceError
from service.github.actions import append_verdict_summary, emit_annotations, in_actions

#: Seconds to wait before each retry of a failed upload (the length is the retry count).
RETRY_DELAYS_S: tuple[float, ...] = (1.0, 3.0, 9.0)
_RETRY_STATUSES = frozenset({502, 503, 504})
#: Seconds one request waits for an answer: longer than the service waits for its check
#: before it answers 202 (ROOFGUARD_UPLOAD_ANSWER_S, at most 110 s), so a check that takes
#: long is a 202 to upload again after, never a timeout that uploads it again at once.
CLIENT_TIMEOUT_S = 120.0
#: Seconds to keep uploading again after 202s before giving up.
WAIT_S = 1800.0
EXIT_FAIL = 1


#: One upload's outcome: the service's answer, or why the connection failed.
_Attempt = httpx.Response | httpx.TransportError


class UploadFailed(ServiceError):
    """The service refused the upload or could not be reached."""

    exit_code = 2


def _form(**fields: str | int | None) -> dict[str, str]:
    return {name: str(value) for name, value in fields.items() if value is not None}


def _post(
    client: httpx.Client, url: str, data: dict[str, str], files: list[tuple[str, Path]]
) -> httpx.Response:
    """One multipart POST of ``files`` (form field, path) with the fields ``data``."""
    handles = [path.open("rb") for _, path in files]
    try:
        parts = [
            (field, (path.name, handle))
            for (field, path), handle in zip(files, handles, strict=True)
        ]
        return client.post(url, data=data, files=parts)
    finally:
        for handle in handles:
            handle.close()


def upload(
    *,
    server: str,
    token: str,
    files: list[Path],
    data: dict[str, str],
    client: httpx.Client | None = None,
    delays: tuple[float, ...] = RETRY_DELAYS_S,
    post: bool = False,
    base_sha: str | None = None,
    base_time: str | None = None,
    base_branch: str | None = None,
    reruns: list[Path] | None = None,
    reruns_expected: bool = False,
) -> dict[str, Any]:
    """Upload ``files`` with the form ``data``; return the service's answer (the verdict).

    ``reruns``: rerun files, re-measurements of the same commit; ``reruns_expected``: the
    caller re-measures the suspects (``roofguard check --rerun`` and ``--suspects``, on the
    service; the query's ``remeasure``).

    Raises:
        UploadFailed: The service answered with an error, or stayed unreachable after retries.
    """
    query = {
        k: v
        for k, v in (
            ("post", "true" if post else None),
            ("base_sha", base_sha),
            ("base_time", base_time),
            ("base_branch", base_branch),
            ("remeasure", "true" if reruns_expected else None),
        )
        if v
    }
    parts = [*(("files", f) for f in files), *(("reruns", f) for f in reruns or [])]
    url = str(httpx.URL(_service_url(server) + "/api/v1/runs", params=query))
    headers = {"Authorization": f"Bearer {token}"}
    own = client or httpx.Client(timeout=CLIENT_TIMEOUT_S, headers=headers)
    try:
        response = _until_judged(server, partial(_with_retries, own, url, data, parts, delays))
    finally:
        if client is None:
            own.close()
    if isinstance(response, httpx.TransportError):
        raise UploadFailed(
            f"{server}: cannot reach the service (gave up after retries): {response}"
        )
    return _answer(server, response)


def _service_url(server: str) -> str:
    """``server`` without a trailing slash; refused at once when it names no http(s) service.

    A URL without a scheme (``127.0.0.1:8000``) was retried for 14 s as a network outage; one
    ending in the API's path (``/api/v1``) got a bare 404.
    """
    try:
        url = httpx.URL(server)
    except httpx.InvalidURL:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise UploadFailed(
            f"--server {server!r}: give the service's URL with its scheme, e.g. "
            "https://roofguard.example.com or http://127.0.0.1:8000"
        )
    root = server.rstrip("/")
    for api in ("/api/v1", "/api/v1/runs"):  # the API's own path: a bare 404 followed
        if url.path.rstrip("/").endswith(api):
            raise UploadFailed(
                f"--server {server!r}: give the service's root URL, without {api} (upload adds "
                f"the API's path): {root.removesuffix(api)}"
            )
    return root


def _until_judged(server: str, post: Callable[[], _Attempt]) -> _Attempt:
    """The answer; after a 202 (still judging) the same upload again, which gets that verdict.

    ``post``: one upload of the run, with its retries (``_with_retries``).
    """
    response = post()
    deadline = time.monotonic() + WAIT_S
    while isinstance(response, httpx.Response) and response.status_code == 202:
        if time.monotonic() > deadline:
            raise UploadFailed(f"{server}: no verdict after {WAIT_S:g} s (HTTP 202)")
        time.sleep(_retry_after(response))
        response = post()
    return response


def _with_retries(
    client: httpx.Client,
    url: str,
    data: dict[str, str],
    parts: list[tuple[str, Path]],
    delays: tuple[float, ...],
) -> _Attempt:
    """The first answer that is no 502-504, retrying dropped connections; else the last error."""
    for delay in delays:
        response = _try_post(client, url, data, parts)
        if isinstance(response, httpx.Response) and response.status_code not in _RETRY_STATUSES:
            return response
        time.sleep(delay)
    return _try_post(client, url, data, parts)


def _retry_after(response: httpx.Response) -> float:
    """The seconds a 202 asks to wait (at most a minute)."""
    try:
        return min(60.0, max(0.0, float(response.headers.get("Retry-After", "5"))))
    except ValueError:
        return 5.0


def _try_post(
    client: httpx.Client, url: str, data: dict[str, str], files: list[tuple[str, Path]]
) -> _Attempt:
    """One attempt; the error when the connection failed (the upload is safe to retry)."""
    try:
        return _post(client, url, data, files)
    except httpx.TransportError as exc:
        return exc


#: The keys of the service's answer that ``upload`` reads.
_ANSWER_KEYS = ("run_id", "url", "verdict", "markdown")


def _answer(server: str, response: httpx.Response) -> dict[str, Any]:
    if response.is_success:
        return _service_answer(server, response)
    try:
        detail = response.json().get("detail", response.text)
    except ValueError:
        detail = response.text
    # The router's own 404, not one of roofguard's answers: no upload API at that URL.
    routed = response.status_code == 404 and detail == "Not Found"
    hint = "; is --server the service's root URL (where its pages are)?" if routed else ""
    raise UploadFailed(f"{server}: upload refused with HTTP {response.status_code}: {detail}{hint}")


def _service_answer(server: str, response: httpx.Response) -> dict[str, Any]:
    """The answer's JSON, or one error naming what answered instead (a sign-on proxy's page)."""
    try:
        result = response.json()
    except ValueError:
        result = None
    if not isinstance(result, dict) or not all(key in result for key in _ANSWER_KEYS):
        kind = response.headers.get("content-type", "no content type")
        raise UploadFailed(
            f"{server}: HTTP {response.status_code} ({kind}) is not roofguard's answer to an "
            "upload: is --server the service's URL, not a proxy's sign-on page?"
        )
    return result


def _write(result: dict[str, Any], verdict: Verdict, fmt: str, output: Path | None) -> None:
    # json is the verdict alone, as `roofguard check --format json` writes it, so that
    # `roofguard comment --verdict` and the Action read either; the run's URL goes to stderr.
    text = result["markdown"] if fmt == "markdown" else json.dumps(result["verdict"], indent=2)
    if output is None:
        typer.echo(text)
    else:
        output.write_text(text + "\n", encoding="utf-8")
    conclusion = shown_conclusion(verdict.conclusion, verdict.judged_nothing)
    typer.echo(f"verdict ({conclusion}) of run {result['run_id']}: {result['url']}", err=True)


_Files = Annotated[
    list[Path],
    typer.Argument(help="Report files (any collector format).", exists=True, dir_okay=False),
]
_Token = Annotated[
    str,
    typer.Option(
        envvar=["ROOFGUARD_TOKEN", "ROOFGUARD_SERVER_TOKEN"],
        show_default=False,
        help="API token with write scope; better from env ROOFGUARD_TOKEN (not argv).",
    ),
]
_Opt = typer.Option


def _in_actions(verdict: Verdict, url: str | None) -> None:
    """Inside GitHub Actions: the verdict in the job summary and annotations, as check does.

    The summary is rendered here from the verdict JSON: the answer's markdown is the comment,
    which only counts what the summary has room to list.
    """
    if not in_actions(os.environ):
        return
    from service.render.markdown import VerdictLinks  # jinja2, on demand

    append_verdict_summary(verdict, os.environ, links=VerdictLinks(run_url=url))
    emit_annotations(verdict, sys.stdout, os.environ)


def upload_command(
    files: _Files,
    server: Annotated[str, _Opt(help="Root URL of the roofguard service (without /api/v1).")],
    token: _Token,
    repo: Annotated[str, _Opt(help="OWNER/NAME of the repository measured.")],
    commit: Annotated[str, _Opt(help="Commit SHA measured.")],
    branch: Annotated[str | None, _Opt(help="Branch name.")] = None,
    kind: Annotated[str | None, _Opt(help="pr, nightly or local (default: pr with --pr).")] = None,
    pr: Annotated[int | None, _Opt(help="Pull-request number, for pr runs.")] = None,
    device: Annotated[str | None, _Opt(help=DEVICE_HELP)] = None,
    runner: Annotated[str | None, _Opt(help="The CI runner's name.")] = None,
    timestamp: Annotated[
        str | None, _Opt(help="When measured, ISO-8601 (default: what the reports say).")
    ] = None,
    fmt: Annotated[str, _Opt("--format", help="json or markdown.")] = "markdown",
    output: Annotated[Path | None, _Opt(help="Write the verdict here, not to stdout.")] = None,
    post: Annotated[bool, _Opt(help="Let the service post the verdict to GitHub.")] = False,
    base_sha: Annotated[str | None, _Opt(help="PR merge base: the baseline stops there.")] = None,
    base_time: Annotated[
        str | None, _Opt(help="The merge base's commit time, ISO-8601: see `check --base-time`.")
    ] = None,
    base_branch: Annotated[str | None, _Opt(help="Baseline branch (default: server's).")] = None,
    suspects: SuspectsOpt = None,
    suspects_regex: SuspectsRegexOpt = None,
    rerun: RerunOpt = None,
) -> None:
    """Upload reports to a roofguard service and write the verdict it returns.

    ``--suspects`` and ``--rerun`` run the PR gate's re-measure step as ``roofguard check``
    does: the service judges, this command writes the suspects it names.
    """
    if fmt not in ("json", "markdown"):
        raise BadInput(f"--format: expected json or markdown, got {fmt!r}")
    refuse_unwritable_outputs(output, suspects, suspects_regex)
    _refuse_bad_merge_base(base_sha, base_time)
    data = _form(
        repo=repo,
        commit=commit,
        branch=branch,
        kind=kind,
        pr=pr,
        device=device,
        runner=runner,
        timestamp=_measured_at(timestamp),
    )
    result = upload(
        server=server,
        token=token,
        files=files,
        data=data,
        post=post,
        base_sha=base_sha,
        base_time=base_time,
        base_branch=base_branch,
        reruns=rerun,
        reruns_expected=suspects is not None,
    )
    verdict = Verdict.model_validate(result["verdict"])
    _in_actions(verdict, result.get("url"))
    if post and not result.get("posted"):
        typer.echo(f"not posted: {result.get('post_detail')}", err=True)
    _write(result, verdict, fmt, output)
    if suspects is not None:
        write_suspects(verdict, suspects, suspects_regex)
    if verdict.conclusion == Conclusion.FAIL:
        raise typer.Exit(EXIT_FAIL)


def _refuse_bad_merge_base(base_sha: str | None, base_time: str | None) -> None:
    """Refuse a merge base the service would, before any report is sent: as ``check`` does."""
    from service.pipeline.intake import merge_base, parse_timestamp  # collectors, on demand

    merge_base(base_sha, parse_timestamp(base_time, flag="--base-time"))


def _measured_at(timestamp: str | None) -> str | None:
    """``--timestamp`` as the form sends it (UTC when it names no zone), checked as ``check`` does.

    Refused here, a time the service would refuse sends no report; sent with its zone, a
    naive time is the UTC one ``check`` would store, whatever the service's clock.
    """
    from service.pipeline.intake import parse_timestamp, refuse_impossible_time

    measured = parse_timestamp(timestamp)
    if measured is None:
        return None
    refuse_impossible_time(measured, where="--timestamp")
    return measured.isoformat()


def register(app: typer.Typer) -> None:
    """Add ``roofguard upload`` to ``app``."""
    app.command("upload")(upload_command)
