"""A .ncu-rep that makes NVIDIA's reader abort is a 422 naming the file; the service stays up."""

from __future__ import annotations

import pytest
from svc_helpers import auth

pytest.importorskip("ncu_report")

SOURCE = "ncu-rep/panjd123_cutlass__report-s4.ncu-rep"
OFFSET, BYTE = 307, 0x92  # see tests/collectors/test_ncu_isolation.py


def test_an_aborting_report_is_422_and_the_next_upload_is_served(service, repo, corpus_dir):
    data = bytearray((corpus_dir / SOURCE).read_bytes())
    data[OFFSET] = BYTE
    form = {"repo": repo, "commit": "5eed", "kind": "nightly"}
    files = [("files", ("damaged.ncu-rep", bytes(data), "application/octet-stream"))]
    h = auth(service.token(repo))
    r = service.client.post("/api/v1/runs", headers=h, data=form, files=files)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail.startswith("damaged.ncu-rep: the report reader crashed (SIGABRT)"), detail
    good = (corpus_dir / SOURCE).read_bytes()
    files = [("files", ("good.ncu-rep", good, "application/octet-stream"))]
    again = service.client.post("/api/v1/runs", headers=h, data=form, files=files)
    assert again.status_code == 201, again.text
