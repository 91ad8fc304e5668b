"""``/api/v1/devices`` answers with the repository as stored, like the other endpoints."""

from __future__ import annotations

from factories import make_kernel
from svc_helpers import Service, auth, nightly_run


def test_devices_name_the_repository_as_stored_not_as_typed(service: Service, repo: str) -> None:
    """Asked as ``ACME/K-...``, the answer echoed ``ACME/K-...``: not the stored name."""
    answer = service.upload(nightly_run(repo, 0, [make_kernel("gemv")]), service.token(repo))
    assert answer.status_code == 201, answer.text
    typed = repo.upper()
    read = auth(service.token(typed, write=False, name="reader"))
    devices = service.client.get("/api/v1/devices", params={"repo": typed}, headers=read)
    assert devices.status_code == 200, devices.text
    assert devices.json() == {"repo": repo, "data": ["H100-SXM5"]}


def test_devices_of_a_repository_with_no_run_is_404(service: Service, repo: str) -> None:
    """Was 200 with no device and the name as typed, as if the repository were stored."""
    read = auth(service.token(repo, write=False, name="reader"))
    answer = service.client.get("/api/v1/devices", params={"repo": repo}, headers=read)
    assert answer.status_code == 404, answer.text
    assert answer.json()["detail"] == f"no run of {repo} is stored"


def test_kernel_history_names_the_repository_as_stored(service: Service, repo: str) -> None:
    """Asked as ``ACME/K-...``, the history echoed ``ACME/K-...``, unlike ``/devices``."""
    answer = service.upload(nightly_run(repo, 0, [make_kernel("gemv")]), service.token(repo))
    assert answer.status_code == 201, answer.text
    typed = repo.upper()
    read = auth(service.token(typed, write=False, name="reader"))
    params = {"repo": typed, "key": "gemv"}
    history = service.client.get("/api/v1/kernels/history", params=params, headers=read)
    assert history.status_code == 200, history.text
    assert history.json()["repo"] == repo
    assert history.json()["count"] == 1


def test_kernel_history_of_a_repository_with_no_run_is_404(service: Service, repo: str) -> None:
    """Was a 404 on the kernel, as if the repository were stored; now says what /devices says."""
    read = auth(service.token(repo, write=False, name="reader"))
    params = {"repo": repo, "key": "gemv"}
    answer = service.client.get("/api/v1/kernels/history", params=params, headers=read)
    assert answer.status_code == 404, answer.text
    assert answer.json()["detail"] == f"no run of {repo} is stored"
