"""Regenerate the trimmed response fixtures from github3.py's betamax cassettes (run by hand).

Each output file holds one recorded response: ``{"source", "status", "body"}``. Bodies are
kept verbatim (URLs still point at api.github.com; the fake server rewrites them per request).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The cassettes (github3.py 4.0.1, tests/cassettes/), copied into a folder beside the
#: checkout; ROOFGUARD_GITHUB_FIXTURES points elsewhere.
SHARED = Path(
    os.environ.get("ROOFGUARD_GITHUB_FIXTURES", HERE.parents[3] / "shared" / "github-fixtures")
)

#: output name -> (cassette, method, uri suffix)
PICKS = {
    "GET_repos_o_r.json": ("Repository_create_issue", "GET", "/repos/sigmavirus24/github3.py"),
    "GET_repos_o_r_issues_n.json": ("Issue_create_comment", "GET", "/issues/509"),
    "GET_repos_o_r_pulls_n.json": ("PullRequest_issue_comments", "GET", "/pulls/235"),
    "GET_repos_o_r_issues_n_comments.json": ("Issue_comments", "GET", "/comments?per_page=100"),
    "POST_repos_o_r_issues_n_comments.json": ("PullRequest_create_comment", "POST", "/comments"),
    "POST_repos_o_r_statuses_sha.json": ("Repository_create_status", "POST", "/statuses/"),
    "POST_repos_o_r_check-runs.json": ("CheckRun_check_run_annotations", "POST", "/check-runs"),
    "POST_app_installations_id_access_tokens.json": (
        "CheckRun_update_check_run",
        "POST",
        "/access_tokens",
    ),
    "POST_repos_o_r_issues.json": ("Repository_create_issue", "POST", "/issues"),
    "PATCH_repos_o_r_issues_n.json": ("Issue_edit", "PATCH", "/issues/509"),
    "403_resource_not_accessible.json": ("CheckApp_create_check_run", "GET", "/apps/"),
}


def _body(response: dict) -> object:
    body = response["body"]
    if body.get("base64_string"):
        return json.loads(gzip.decompress(base64.b64decode(body["base64_string"])))
    return json.loads(body["string"])


def _status(response: dict) -> int:
    status = response.get("status")
    return int(status["code"]) if isinstance(status, dict) else int(response["status_code"])


def main() -> None:
    for out, (cassette, method, needle) in PICKS.items():
        data = json.loads((SHARED / f"{cassette}.json").read_text())
        for item in data["http_interactions"]:
            req = item["request"]
            if req["method"] == method and needle in req["uri"]:
                record = {
                    "source": f"github3.py tests/cassettes/{cassette}.json {method} {req['uri']}",
                    "status": _status(item["response"]),
                    "body": _body(item["response"]),
                }
                (HERE / out).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
                break
        else:
            sys.exit(f"{cassette}: no {method} *{needle}")


if __name__ == "__main__":
    main()
