"""A JSON upload of a run stored before, its kernels listed in another order, is that run.

The upload was stored as a second run and the history counted the night twice. On SQLite
and PostgreSQL.
"""

from __future__ import annotations

from factories import make_kernel
from svc_helpers import nightly_run

from service.store.db import session_scope
from service.store.queries import list_runs


def test_the_same_run_uploaded_in_another_order_is_stored_once(service, repo) -> None:
    kernels = [make_kernel(n, time_s=t) for n, t in (("gemv", 1e-3), ("gemm", 2e-3), ("add", 3e-4))]
    night = nightly_run(repo, 1, kernels)
    token = service.token(repo)
    first = service.upload(night, token)
    again = service.upload(night.model_copy(update={"kernels": night.kernels[::-1]}), token)
    assert (first.status_code, again.status_code) == (201, 200), again.text[:300]
    assert again.json()["run_id"] == first.json()["run_id"] and not again.json()["created"]
    slower = [*kernels[:2], kernels[2].model_copy(update={"duration_s": 3.1e-4})]
    changed = service.upload(night.model_copy(update={"kernels": tuple(slower)}), token)
    assert changed.status_code == 201, "a kernel's figure changed: another run"
    with session_scope(service.engine, readonly=True) as session:
        assert len(list_runs(session=session, repo=repo)) == 2
