"""A CI-sized load test on loopback: concurrent clients, retries and identical-content races
leave every run stored exactly once. The full-size run is tests/bench/bench_service_load.py."""

from __future__ import annotations

from load_driver import audit, run_load
from svc_helpers import Service, start_live


def test_concurrent_uploads_store_each_run_exactly_once(service: Service, repo) -> None:
    live = start_live(service.app)
    try:
        result, runs = run_load(
            live.url, {repo: service.token(repo)}, clients=6, kernels=50, pairs=2, timeout=120
        )
    finally:
        live.stop()
    assert len(result.answers) == 6 * 2 + 2
    audit(service.engine, runs, result)
    metrics = service.app.state.roofguard.metrics
    created = metrics.uploads.labels("created")._value.get()
    duplicate = metrics.uploads.labels("duplicate")._value.get()
    assert (created, duplicate) == (6, 6 + 2)
