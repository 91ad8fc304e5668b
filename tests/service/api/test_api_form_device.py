"""An upload's unknown device is named as the form field it came from, as every form error is.

``-F device=H1000`` with a report of an H100 was answered ``unknown device 'H1000'; closest
known: ...``, where every other form error starts ``form field <name>: ``.
"""

from __future__ import annotations

from svc_helpers import auth

REPORT = (
    "# device: NVIDIA H100 80GB HBM3\n"
    "name,duration_s,flops_fp32,bytes_dram,launches\n"
    "k0,0.001,1e9,1e6,1\n"
)


def test_an_unknown_device_field_is_named_as_the_form_field(service, repo) -> None:
    answer = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc", "device": "H1000"},
        files=[("files", ("run.csv", REPORT.encode(), "text/csv"))],
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith("form field device: unknown device 'H1000'; closest known: H100"), (
        detail
    )


def test_an_unknown_device_field_for_a_report_naming_none_is_named_as_the_form_field(
    service, repo
) -> None:
    """The report names no device, so the field's H1000 is its card: the answer named the
    report (``run.csv: unknown device 'H1000'``), which says nothing of H1000."""
    report = REPORT.split("\n", 1)[1]  # the same rows, no device line
    answer = service.client.post(
        "/api/v1/runs",
        headers=auth(service.token(repo)),
        data={"repo": repo, "commit": "abc", "device": "H1000"},
        files=[("files", ("run.csv", report.encode(), "text/csv"))],
    )
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith("form field device: unknown device 'H1000'; closest known: H100"), (
        detail
    )
    assert "run.csv" not in detail and '[devices."H1000"]' in detail
    runs = service.client.get(
        "/api/v1/runs", params={"repo": repo}, headers=auth(service.token(repo))
    )
    assert runs.json()["count"] == 0
