"""Prometheus metrics of the server (documented in the README)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

MATCHES = Gauge("cardarena_matches", "Hosted matches by state", ["state"], registry=REGISTRY)
ACTIONS = Counter(
    "cardarena_actions_total", "Actions applied (timeouts included)", registry=REGISTRY
)
ACTION_SECONDS = Histogram(
    "cardarena_action_seconds",
    "SubmitAction latency, from request to durable acknowledgement",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=REGISTRY,
)
COMMIT_SECONDS = Histogram(
    "cardarena_store_commit_seconds",
    "Event store group-commit latency",
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25),
    registry=REGISTRY,
)
COMMIT_BATCH = Histogram(
    "cardarena_store_commit_batch_size",
    "Write requests per group commit",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
    registry=REGISTRY,
)
SUBSCRIBERS = Gauge("cardarena_stream_subscribers", "Open event streams", registry=REGISTRY)
ERRORS = Counter(
    "cardarena_rpc_errors_total", "Refused RPCs by status code", ["code"], registry=REGISTRY
)


def observe_commit(batch_size: int, seconds: float) -> None:
    COMMIT_BATCH.observe(batch_size)
    COMMIT_SECONDS.observe(seconds)


FORWARDED = Counter(
    "cardarena_forwarded_total",
    "Actions and joins forwarded to the replica that owns the match, by method",
    ["method"],
    registry=REGISTRY,
)
LEASES = Gauge(
    "cardarena_leases_held", "Matches this replica owns (replicas only)", registry=REGISTRY
)
