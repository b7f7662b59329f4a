"""TensorFlow Serving's metrics, in Prometheus' text format."""

import time

import grpc
import grpc.aio
import prometheus_client

from .errors import GRPC_CODES

# --- Metrics: TensorFlow Serving's, in the Prometheus text format ------------------------
#
# GET METRICS_PATH on the REST port, as TensorFlow Serving with a monitoring config
# answers it, with its metric names (prometheus_client adds `_total` to a counter's):
# requests by model and status (a gRPC status code's name, OK for success), their wall
# time in microseconds by model, API and entrypoint (REST or GRPC), and each SavedModel's
# load attempts and time by path. A model name is a label only while it names a model the
# server is configured with (a folder under MODELS, or the model config in force): a client
# that asks for a million made-up names adds one series (""), not a million, and a model the
# config drops takes its series with it (`forget_series`), so no sequence of configs leaves
# more series than the models in force have.

METRICS_PATH = "/monitoring/prometheus/metrics"
prometheus_client.disable_created_metrics()
REGISTRY = prometheus_client.CollectorRegistry()
REQUESTS = prometheus_client.Counter(
    ":tensorflow:serving:request_count",
    "The requests answered, by model and status (TensorFlow Serving's metric)",
    ["model_name", "status"],
    registry=REGISTRY,
)
REQUEST_LATENCY = prometheus_client.Histogram(
    ":tensorflow:serving:request_latency",
    "The wall time of a request in microseconds, by model, API and entrypoint "
    "(TensorFlow Serving's metric)",
    ["model_name", "API", "entrypoint"],
    buckets=[10 * 1.8**power for power in range(33)],  # TensorFlow Serving's buckets
    registry=REGISTRY,
)
LOAD_ATTEMPTS = prometheus_client.Counter(
    ":tensorflow:cc:saved_model:load_attempt_count",
    "The attempts to load a SavedModel, by its path and their outcome (TensorFlow's metric)",
    ["model_path", "status"],
    registry=REGISTRY,
)
LOAD_LATENCY = prometheus_client.Counter(
    ":tensorflow:cc:saved_model:load_latency",
    "The microseconds spent loading SavedModels, by path (TensorFlow's metric)",
    ["model_path"],
    registry=REGISTRY,
)


def record_request(models, name, api, entrypoint, status, started, requests=1):
    """Answered requests in the metrics (`requests` answered alike together); `status` the
    gRPC code's name."""
    took = (time.perf_counter() - started) * 1e6
    with models.lock:  # not between `configure` dropping the model and its series
        label = name if name in models.configured else ""
        REQUESTS.labels(label, status).inc(requests)
        latency = REQUEST_LATENCY.labels(label, api, entrypoint)
        for _ in range(requests):
            latency.observe(took)


API_NAMES = ("predict", "classify", "regress", "multi_inference", "metadata", "status", "reload")


def forget_series(name):
    """Every request series of model `name` removed (the labels they can have are few)."""
    for status in grpc.StatusCode:
        try:
            REQUESTS.remove(name, status.name)
        except KeyError:
            pass
    for api in API_NAMES:
        for entrypoint in ("REST", "GRPC"):
            try:
                REQUEST_LATENCY.remove(name, api, entrypoint)
            except KeyError:
                pass


def status_name(http_status):
    """An HTTP answer's status as TensorFlow Serving's metrics name it: a gRPC code's name."""
    if http_status < 400:
        return "OK"
    return GRPC_CODES.get(http_status, grpc.StatusCode.INTERNAL).name
