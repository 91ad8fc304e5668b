"""Prometheus metrics of one application instance (its own registry, so tests can make many)."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Upload latencies span a 10-kernel JSON run to a 2,000-kernel multipart upload.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The service's counters and histograms, registered in a private registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "roofguard_http_requests",
            "HTTP requests by route template, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "roofguard_http_request_duration_seconds",
            "HTTP request latency by route template.",
            ["route", "method"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.uploads = Counter(
            "roofguard_uploads",
            "Uploaded runs by outcome (created, duplicate, rejected).",
            ["outcome"],
            registry=self.registry,
        )
        self.checks = Counter(
            "roofguard_upload_checks",
            "Upload checks this process judged: one per upload, whichever replica receives it.",
            registry=self.registry,
        )
        self.kernels = Counter(
            "roofguard_kernels_ingested", "Kernels in newly stored runs.", registry=self.registry
        )
        self.webhooks = Counter(
            "roofguard_webhook_deliveries",
            "GitHub webhook deliveries by event and outcome.",
            ["event", "outcome"],
            registry=self.registry,
        )

    def exposition(self) -> bytes:
        """The registry in the Prometheus text format."""
        return bytes(generate_latest(self.registry))


class MetricsMiddleware:
    """Counts requests and their latency, labelled by route template (not raw path).

    Labelling by template keeps the label set bounded: run ids and kernel keys never become
    label values. Routes of included routers know their path without the router's prefix,
    so the API prefix is added back for paths under it.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics, api_prefix: str) -> None:
        self.app = app
        self.metrics = metrics
        self.api_prefix = api_prefix

    def _route(self, scope: Scope) -> str:
        template = getattr(scope.get("route"), "path", None)
        if template is None:
            return "unmatched"
        under_api = str(scope.get("path", "")).startswith(self.api_prefix + "/")
        return self.api_prefix + template if under_api else str(template)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on and record its status and duration."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = {"code": 500}
        start = time.perf_counter()

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            route = self._route(scope)
            method = _method(scope)
            self.metrics.latency.labels(route, method).observe(time.perf_counter() - start)
            self.metrics.requests.labels(route, method, str(status["code"])).inc()


#: The methods HTTP defines; any other name a client sends is labelled ``other``.
_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"))


def _method(scope: Scope) -> str:
    """The request's method as a label, ``other`` for a method HTTP does not define.

    A made-up method per request grew ``/metrics`` without bound: each request, answered 405
    without a token, added a series.
    """
    method = str(scope.get("method", ""))
    return method if method in _METHODS else "other"
