"""The upload path resolves the device as `roofguard check` does (issue 15).

A service configured with ``device = "H100-SXM5"`` stored an uploaded V100 run as an H100
nightly. Now the device a report names wins, the config's is the default for reports that
name none, and a conflict with the upload's own ``device`` field is refused naming both, with
nothing stored.
"""

from __future__ import annotations

from factories import make_run
from svc_helpers import auth

from collectors.schema import DeviceInfo
from service.config import RoofguardConfig

V100_PCIE = "ncu-csv/wangzy0327_cuda-roofline__output_V100.csv"


def test_an_upload_naming_another_device_than_its_device_field_is_refused(
    make_service, repo, corpus_dir
) -> None:
    service = make_service(RoofguardConfig())
    h = auth(service.token(repo))
    report = corpus_dir / V100_PCIE
    form = {"repo": repo, "commit": "0123abc", "branch": "main", "kind": "nightly"}
    with report.open("rb") as fh:
        r = service.client.post(
            "/api/v1/runs",
            headers=h,
            data={**form, "device": "H100-SXM5"},
            files=[("files", (report.name, fh, "text/csv"))],
        )
    detail = r.json()["detail"]
    assert r.status_code == 422, r.text
    assert "names device 'Tesla V100-PCIE-32GB'" in detail and "'H100-SXM5'" in detail
    listed = service.client.get("/api/v1/runs", params={"repo": repo}, headers=h)
    assert listed.status_code == 200 and listed.json()["count"] == 0


def test_the_config_device_does_not_override_an_upload_naming_its_own(
    make_service, repo, corpus_dir
) -> None:
    """A service configured for H100 runs still judges a V100 upload on the V100."""
    service = make_service(RoofguardConfig(device="H100-SXM5"))
    h = auth(service.token(repo))
    report = corpus_dir / V100_PCIE
    form = {"repo": repo, "commit": "0123abc", "branch": "main", "kind": "nightly"}
    with report.open("rb") as fh:
        r = service.client.post(
            "/api/v1/runs", headers=h, data=form, files=[("files", (report.name, fh, "text/csv"))]
        )
    assert r.status_code == 201, r.text
    assert r.json()["verdict"]["roof"] == "V100-PCIe-32GB (datasheet)"
    v100 = make_run(repo=repo, commit="0456def", device=DeviceInfo(name="Tesla V100-PCIE-32GB"))
    r = service.client.post(
        "/api/v1/runs",
        content=v100.model_dump_json(),
        headers={**h, "Content-Type": "application/json"},
    )
    assert r.status_code == 201, r.text
    assert r.json()["verdict"]["roof"] == "V100-PCIe-32GB (datasheet)"


def test_the_config_device_names_uploads_that_name_none(make_service, repo) -> None:
    service = make_service(RoofguardConfig(device="H100-SXM5"))
    unnamed = make_run(repo=repo, device=DeviceInfo(name="unknown"))
    r = service.client.post(
        "/api/v1/runs",
        content=unnamed.model_dump_json(),
        headers={**auth(service.token(repo)), "Content-Type": "application/json"},
    )
    assert r.status_code == 201, r.text
    assert r.json()["verdict"]["roof"] == "H100-SXM5 (datasheet)"


def test_a_report_naming_its_device_is_judged_on_it_without_a_config_device(
    service, repo, corpus_dir
) -> None:
    report = corpus_dir / V100_PCIE
    form = {"repo": repo, "commit": "0123abc", "branch": "main", "kind": "nightly"}
    with report.open("rb") as fh:
        r = service.client.post(
            "/api/v1/runs",
            headers=auth(service.token(repo)),
            data=form,
            files=[("files", (report.name, fh, "text/csv"))],
        )
    assert r.status_code == 201, r.text
    assert r.json()["verdict"]["roof"] == "V100-PCIe-32GB (datasheet)"
