# tfimg's model server, generated from spec `@NAME@`: edit the spec, not this file.
#
# TensorFlow Serving's REST API on port @SERVING_PORT@ for every SavedModel under
# @MODELS@/NAME/VERSION/ (numbered folders; the highest version is served, and a new one
# is picked up without a restart), or for the models of a model config file
# (TFIMG_SERVING_MODEL_CONFIG: TensorFlow Serving's text format, its version policies and
# labels; reread when it changes, or sent with gRPC's HandleReloadConfigRequest, which
# only `tfimg serve --allow-reload-config` turns on: TFIMG_SERVING_ALLOW_RELOAD_CONFIG). A
# SavedModel written by TensorFlow 2 runs through its functions; one written by
# TensorFlow 1 (Estimator exports, tf.compat.v1) runs in a session, its tensors fed and
# fetched by name as TensorFlow Serving does (`SessionSignature`):
#
#   GET  /v1/models/NAME[/versions/N|/labels/L]                  status
#   GET  /v1/models/NAME[/versions/N|/labels/L]/metadata         signatures
#   POST /v1/models/NAME[/versions/N|/labels/L]:predict          {"instances": ...} or {"inputs": ...}
#   POST /v1/models/NAME[/versions/N|/labels/L]:classify|regress {"examples": [...], "context": {...}}
#   GET  /monitoring/prometheus/metrics                           TensorFlow Serving's metrics
#
# and its gRPC API on port @GRPC_PORT@ (PredictionService and ModelService, from the
# tensorflow-serving-api package's protos): the same models, the same errors, as
# TensorFlow Serving's status codes.
#
# As TensorFlow Serving's own handler (`http_rest_api_util.cc`) matches them: the path's
# words in any case (`/V1/MODELS/m`), though only a lowercase verb is one; a version too
# large for int64 is a 400; a label names a version only in a model config file (400
# "Unrecognized servable version label" otherwise), and the status answers for every
# version whatever the label.
# Errors are {"error": "..."} with TensorFlow Serving's codes (400 bad request, 404 unknown
# model or version) and HTTP's for the limits below (408 too slow, 413 too large, 431
# headers too large, 503 busy).
#
# Trust boundary, client → server (DESIGN.md): whoever reaches the ports is on the other
# side and controls every byte of a request (and when it arrives, and which calls it
# makes); the model, its folder and this server are on ours. This module is the one place
# that enforces the boundary: its HTTP section takes the bytes (timeouts for headers and
# bodies, caps on their sizes and on what a body may cost decoded, bounded concurrency,
# connections made room for by closing the silent longest, 400, never 500 and never a
# traceback, for any client input), its gRPC section the calls (a deadline for the
# message, streams capped per connection, a slot only once the message is in, no reload
# unless asked), its JSON section the values (refused rather than coerced), and its
# metrics keep series only for the models configured.
#
# The HTTP server is uvicorn (uvloop's event loop, httptools' parser): one event loop reads
# each request whole, then answers it, at most MAX_IN_FLIGHT at once (503 beyond); a
# request takes its slot only once its body is in. The model
# runs on one worker thread per signature of the served version, never on the loop: the
# requests that queued while it ran one call are merged into its next call (their rows
# concatenated, then split back), as TensorFlow Serving's batching does, without waiting
# for more. So 8 clients at batch 1 cost a few model calls, not 8; a lone request runs at
# once. Only signatures whose every input and output has two dimensions or more, the first
# unknown (the batch), are merged, at most MAX_BATCH_ROWS rows; TFIMG_SERVING_MAX_BATCH=1
# turns merging off. A body over LARGE_BODY_BYTES is decoded and answered on a thread of
# its own (LARGE_AT_ONCE such at once), so one big request does not hold up the others'
# small ones.
import asyncio
import base64
import collections
import heapq
import json
import logging
import os
import queue
import re
import struct
import sys
import threading
import time
import warnings

import grpc
import grpc.aio
import numpy as np
import orjson
import prometheus_client
import tensorflow as tf
import uvicorn
import uvloop
from tensorflow.core.framework import types_pb2
from google.protobuf import json_format, text_format
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    inference_pb2,
    model_management_pb2,
    predict_pb2,
    prediction_log_pb2,
    regression_pb2,
)
from tensorflow_serving.config import model_server_config_pb2
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, saved_model_pb2
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MODELS = "@MODELS@"
PORT = int("@SERVING_PORT@")
GRPC_PORT = int("@GRPC_PORT@")
# A model config file (TensorFlow Serving's --model_config_file, `tfimg serve
# --model-config`) instead of every folder under MODELS; and where tfimg mounted each
# base_path it names (JSON: host path -> path here).
MODEL_CONFIG = os.environ.get("TFIMG_SERVING_MODEL_CONFIG", "")
BASE_PATHS = json.loads(os.environ.get("TFIMG_SERVING_BASE_PATHS") or "{}")
MAX_CONFIG_BYTES = 1024 * 1024
MAX_IN_FLIGHT = 256  # requests whose body is in, being answered at once; past it, 503
CONNECTIONS = 1024  # uvicorn's cap: a request that finds them open closes silent ones, or 503
OPEN_CONNECTIONS = 4 * CONNECTIONS  # open at once, silent ones too: past it, a new one
# closes the silent longest (each may hold MAX_HEADER_BYTES: 256 MiB in all)
MESSAGE_SECONDS = 30  # a gRPC call's request message arrives whole within this (the largest
# at 2.2 MB/s), or DEADLINE_EXCEEDED; while it comes, it holds no slot
STREAMS_PER_CONNECTION = 100  # gRPC calls one connection has open at once (HTTP/2's streams)
# HandleReloadConfigRequest: UNIMPLEMENTED unless `tfimg serve --allow-reload-config`.
ALLOW_RELOAD_CONFIG = os.environ.get("TFIMG_SERVING_ALLOW_RELOAD_CONFIG") == "1"
HEADER_SECONDS = 10  # a request's headers arrive whole within this, or 408
WRITE_SECONDS = 30  # an answer the client reads nothing of for this long: the connection is cut
MAX_HEADER_BYTES = 64 * 1024  # its URL and headers together; past it, 431
MAX_BODY_BYTES = 64 * 1024 * 1024
TOO_LARGE = f"the request body is over the server's limit of {MAX_BODY_BYTES} bytes"
BODY_IDLE_SECONDS = 10  # the longest a body may stall
BODY_GRACE_SECONDS = 10  # and past these, it arrives at BODY_BYTES_PER_SECOND on average
BODY_BYTES_PER_SECOND = 64 * 1024
SLOW_BODY = (
    f"the request body stopped arriving, or came slower than {BODY_BYTES_PER_SECOND >> 10} KiB/s "
    f"after its first {BODY_GRACE_SECONDS} s"
)
# A body's JSON may take this much while parsed, its text and its Python values (before
# this limit 24 MB of `[0],` took 1.5 GB and 15 s of CPU); past it, 413 before parsing.
MAX_DECODED_BYTES = 256 * 1024 * 1024
MAX_RANK = 32  # lists nested deeper are no tensor (numpy's limit); refused with 400
LARGE_BODY_BYTES = 256 * 1024  # bodies past this are decoded and answered off the event loop
LARGE_AT_ONCE = 2  # large bodies decoded at once: their JSON holds the GIL anyway
FAILED = "the server failed to answer this request; its log says why"
POLL_SECONDS = 1.0
DEFAULT_SIGNATURE = "serving_default"
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
ROUTE = re.compile(
    r"^/v1/models(?:/(?P<name>[^/:]+))?(?:/versions/(?P<version>[0-9]+)|/labels/(?P<label>[^/:]+))?"
    r"(?:/(?P<metadata>metadata)|:(?P<verb>classify|regress|predict))?$",
    re.IGNORECASE,
)
VERBS = ("predict", "classify", "regress")
INT64_MAX = (1 << 63) - 1
log = logging.getLogger("tfimg.serving")
# A ragged JSON list is refused by TensorFlow's conversion (to_array), not warned about.
warnings.filterwarnings("ignore", message="Creating an ndarray from ragged")


def max_batch_rows():
    value = os.environ.get("TFIMG_SERVING_MAX_BATCH", "256")
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"TFIMG_SERVING_MAX_BATCH must be a whole number of rows, 1 or more; got {value!r}")
    return int(value)


# TensorFlow Serving's batching (`tfimg serve --enable-batching [--batching-parameters
# FILE]`): its parameters as tfimg read and checked them, with its defaults filled in
# (`num_batch_threads` null: a thread per core). Without it, merging as described above.
BATCHING = json.loads(os.environ.get("TFIMG_SERVING_BATCHING") or "null")
MAX_BATCH_ROWS = BATCHING["max_batch_size"] if BATCHING else max_batch_rows()
QUEUE_FULL = "The batch scheduling queue to which this task was submitted is full"
BATCH_THREADS = BATCHING and (BATCHING["num_batch_threads"] or len(os.sched_getaffinity(0)))


def memory_limit():
    """The container's memory limit in bytes (cgroup v2, then v1); None without one."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as file:
                text = file.read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 1 << 60:  # cgroup v1 writes "no limit" as 2**63
            return int(text)
    return None


# The request bodies held at once (arriving, or waiting for their answer): an eighth of the
# memory limit (8 GiB without one), as each may cost about 4 times its size while decoded;
# never less than one body of the largest size.
BODY_BUDGET = max(MAX_BODY_BYTES, (memory_limit() or 8 << 30) // 8)


class ApiError(Exception):
    """An answer's error: its HTTP status, and over gRPC the status code TensorFlow Serving
    gives (`grpc_code`) where it is not the one the HTTP status maps to (GRPC_CODES)."""

    def __init__(self, status, message, grpc_code=None):
        super().__init__(message)
        self.status = status
        self.grpc_code = grpc_code


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
    "The wall time of a request in microseconds, by model, API and entrypoint (TensorFlow Serving's metric)",
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


def record_request(models, name, api, entrypoint, status, started):
    """One answered request in the metrics; `status` the gRPC code's name."""
    took = (time.perf_counter() - started) * 1e6
    with models.lock:  # not between `configure` dropping the model and its series
        label = name if name in models.configured else ""
        REQUESTS.labels(label, status).inc()
        REQUEST_LATENCY.labels(label, api, entrypoint).observe(took)


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


# --- Models: load, watch, look up -------------------------------------------------------


class Servable:
    """One loaded version of a model, with a worker per signature once it is called."""

    def __init__(self, name, version, path):
        self.name, self.version = name, version
        graph = read_meta_graph(path)
        self.signature_defs = signature_defs_of(graph)
        self.signature_def_protos = graph.signature_def
        if graph.object_graph_def.nodes:  # written by TensorFlow 2: its functions
            self.model = tf.saved_model.load(path)
            self.signatures = {key: FunctionSignature(f) for key, f in self.model.signatures.items()}
        else:  # written by TensorFlow 1 (an Estimator, tf.compat.v1): its graph in a session
            self.model = tf.compat.v1.Session(graph=tf.Graph())
            loaded = tf.compat.v1.saved_model.loader.load(self.model, ["serve"], path)
            self.signatures = session_signatures(self.model, loaded)
        self.lock = threading.Lock()
        self.workers = {}
        self.closed = False
        self.warmed_up = warm_up(self, path)

    def worker(self, signature_name, signature):
        with self.lock:
            worker = self.workers.get(signature_name)
            if worker is None:
                definition = self.signature_defs.get(signature_name)
                name = f"{self.name}-{self.version}-{signature_name}"
                if BATCHING:
                    merge = batchable(definition, least_rank=1)
                    how = "batched (--enable-batching)" if merge else "each request runs alone (an input or output has no batch dimension)"
                else:
                    merge = MAX_BATCH_ROWS > 1 and batchable(definition)
                    how = (f"concurrent requests merged, up to {MAX_BATCH_ROWS} rows a call (--max-batch 1: never)"
                           if merge else "each request runs alone")
                log.info("model %s version %d, signature %s: %s", self.name, self.version, signature_name, how)
                worker = self.workers[signature_name] = (Batcher if BATCHING else Worker)(signature, merge, name)
                if self.closed:  # found before the replacement, first called after it
                    worker.close()
            return worker

    def close(self):
        """Replaced by a newer version: its workers end once their queues are empty."""
        with self.lock:
            self.closed = True
            for worker in self.workers.values():
                worker.close()


def batchable(definition, least_rank=2):
    """Rows of different requests may share a call when every input and output of the
    signature has two dimensions or more, the first unknown: the batch, as in every Keras
    model. A one-dimensional input (a sequence of tokens, serialized examples) may be
    anything but rows, so such a signature is never merged. TensorFlow Serving's batching
    (`--enable-batching`, least_rank 1) takes the first dimension of every tensor as the
    batch, one-dimensional ones too, as its own does."""
    if definition is None:
        return False
    tensors = list(definition["inputs"].values()) + list(definition["outputs"].values())
    return bool(tensors) and all(
        not t["tensor_shape"]["unknown_rank"]
        and len(t["tensor_shape"]["dim"]) >= least_rank
        and t["tensor_shape"]["dim"][0]["size"] == "-1"
        for t in tensors
    )


class Job:
    """One request's inputs (numpy arrays of `rows` rows) and the event loop waiting."""

    def __init__(self, feeds, rows, digits=False):
        self.feeds, self.rows = feeds, rows
        # Its float32 outputs as JSON writes them (`float32_digits`), done by the worker once
        # for a merged batch rather than once a request on the event loop.
        self.digits = digits
        self.loop = asyncio.get_running_loop()
        self.future = self.loop.create_future()

    def settle(self, outputs, error=None):
        try:
            self.loop.call_soon_threadsafe(settle, self.future, outputs, error)
        except RuntimeError:  # the loop has ended: the server is stopping
            pass

    def fits(self, other, rows):
        return (
            rows > 0
            and other.rows > 0
            and rows + other.rows <= MAX_BATCH_ROWS
            and self.feeds.keys() == other.feeds.keys()
            and all(
                value.dtype == other.feeds[key].dtype and value.shape[1:] == other.feeds[key].shape[1:]
                for key, value in self.feeds.items()
            )
        )


def settle(future, outputs, error):
    if future.done():  # the client went away
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(outputs)


STOP = object()


class Worker:
    """Runs one signature on its own thread, a call at a time. With `merge`, the jobs that
    queued meanwhile (same inputs, same shapes past the first dimension) go into one call;
    a merged call that fails, or whose outputs do not have one row per input row, is run
    again job by job, so one bad request fails alone."""

    def __init__(self, signature, merge, name):
        self.signature, self.merge = signature, merge
        self.queue = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self.serve, name=name, daemon=True).start()

    def submit(self, job):
        with self.lock:
            if not self.closed:
                self.queue.put(job)
                return
        self.run_alone(job)

    def run_alone(self, job):
        """The version was replaced after the request found it: it still answers."""
        threading.Thread(target=self.run, args=([job],), daemon=True).start()

    def close(self):
        with self.lock:
            if not self.closed:
                self.closed = True
                self.queue.put(STOP)

    def serve(self):
        held = None
        while True:
            job = held if held is not None else self.queue.get()
            held = None
            if job is STOP:
                return
            group, rows = [job], job.rows
            while self.merge:
                try:
                    following = self.queue.get_nowait()
                except queue.Empty:
                    break
                if following is STOP or not job.fits(following, rows):
                    held = following
                    break
                group.append(following)
                rows += following.rows
            self.run_guarded(group)

    def run_guarded(self, group):
        try:
            self.run(group)
        except BaseException as error:  # the thread lives on; nobody is left waiting
            for job in group:
                job.settle(None, RuntimeError(f"the model call failed: {error!r}"))

    def call(self, feeds):
        return self.signature(feeds)

    allowed = ()  # batch sizes a merged call is padded up to (Batcher's)

    def run(self, group):
        rows = sum(job.rows for job in group)
        size = next((size for size in self.allowed if size >= rows), rows) if rows else rows
        if len(group) > 1 or size > rows:
            feeds = [job.feeds for job in group]
            if size > rows:  # padded, as TensorFlow Serving pads, with the last request's first row
                feeds.append({key: np.repeat(value[:1], size - rows, axis=0) for key, value in feeds[-1].items()})
            try:
                outputs = self.call({key: np.concatenate([each[key] for each in feeds]) for key in feeds[0]})
            except Exception:
                outputs = None
            if outputs is not None and all(value.ndim and value.shape[0] == size for value in outputs.values()):
                written = with_digits(outputs) if any(job.digits for job in group) else outputs
                start = 0
                for job in group:
                    given = written if job.digits else outputs
                    job.settle({key: value[start : start + job.rows] for key, value in given.items()})
                    start += job.rows
                return
        for job in group:
            try:
                outputs = self.call(job.feeds)
                job.settle(with_digits(outputs) if job.digits else outputs)
            except Exception as error:  # the request's own error, answered to it
                job.settle(None, error)


class Batch:
    """Requests a Batcher runs in one call: when the first came, their rows, and them."""

    def __init__(self, job):
        self.started, self.rows, self.jobs = time.monotonic(), job.rows, [job]


class Batcher(Worker):
    """TensorFlow Serving's batching of one signature (`--enable-batching`), after its
    shared batch scheduler: a request joins the open batch when its rows fit in
    `max_batch_size` (and its inputs' shapes past the batch match), else a new batch opens,
    refused UNAVAILABLE (503) when `max_enqueued_batches` are waiting already; a request over
    `max_batch_size` rows is refused INVALID_ARGUMENT (400). `num_batch_threads` threads each
    take the oldest batch once it is full, another has opened behind it, or it has waited
    `batch_timeout_micros`; a batch is padded up to the next of `allowed_batch_sizes`. As
    Worker, a merged call that fails is run again request by request."""

    def __init__(self, signature, merge, name):
        self.signature, self.merge = signature, merge
        self.timeout = BATCHING["batch_timeout_micros"] / 1e6
        self.capacity = BATCHING["max_enqueued_batches"]
        self.allowed = BATCHING["allowed_batch_sizes"] if merge else ()
        self.batches = collections.deque()
        self.condition = threading.Condition()
        self.closed = False
        for index in range(BATCH_THREADS):
            threading.Thread(target=self.serve, name=f"{name}-{index}", daemon=True).start()

    def submit(self, job):
        if self.merge and job.rows > MAX_BATCH_ROWS:
            raise ApiError(400, f"Task size {job.rows} is larger than maximum input batch size {MAX_BATCH_ROWS}")
        with self.condition:
            if not self.closed:
                last = self.batches[-1] if self.batches else None
                if self.merge and last is not None and last.jobs[0].fits(job, last.rows):
                    last.jobs.append(job)
                    last.rows += job.rows
                elif len(self.batches) >= self.capacity:
                    raise ApiError(503, QUEUE_FULL)
                else:
                    self.batches.append(Batch(job))
                self.condition.notify()
                return
        self.run_alone(job)

    def close(self):
        with self.condition:
            self.closed = True
            self.condition.notify_all()

    def serve(self):
        while True:
            with self.condition:
                while True:
                    if self.batches:
                        first = self.batches[0]
                        wait = first.started + self.timeout - time.monotonic()
                        if not self.merge or first.rows >= MAX_BATCH_ROWS or len(self.batches) > 1 or wait <= 0 or self.closed:
                            self.batches.popleft()
                            break
                        self.condition.wait(wait)
                    elif self.closed:
                        return
                    else:
                        self.condition.wait()
            self.run_guarded(first.jobs)


def with_digits(outputs):
    """Outputs with their float32 arrays as JSON writes them (`float32_digits`)."""
    return {key: float32_digits(value) if value.dtype == np.float32 else value for key, value in outputs.items()}


class FunctionSignature:
    """A signature of a SavedModel written by TensorFlow 2: a function, called with tensors
    of the dtypes and shapes it declares."""

    def __init__(self, function):
        self.function = function
        self.inputs = dict(function.structured_input_signature[1])  # name -> tf.TensorSpec

    def __call__(self, feeds):
        outputs = self.function(**{key: tf.constant(value) for key, value in feeds.items()})
        return {key: value.numpy() for key, value in outputs.items()}


class SessionSignature:
    """A signature of a SavedModel written by TensorFlow 1, run as TensorFlow Serving runs
    it: its tensors fed and fetched by name in the model's session. What the signature
    declares of them is not enforced: TF1 exports declare shapes their tensors do not have
    (`saved_model_half_plus_three`'s `x` is declared `()` and is `[?, 1]`, and it answers
    `[1.0, 2.0, 5.0]`) and even dtypes (its regress input is declared DT_FLOAT and takes
    serialized examples), so a value is converted to the dtype of the graph's tensor, and
    its shape is the graph's to refuse. The session's callable is used, not `Session.run`,
    which checks the declared shapes in Python."""

    def __init__(self, session, definition):
        graph = session.graph
        self.input_keys, self.output_keys = sorted(definition.inputs), sorted(definition.outputs)
        self.inputs = {
            key: tf.TensorSpec(None, graph.get_tensor_by_name(definition.inputs[key].name).dtype)
            for key in self.input_keys
        }
        for key in self.output_keys:
            graph.get_tensor_by_name(definition.outputs[key].name)  # KeyError when missing
        self.callable = session._make_callable_from_options(
            config_pb2.CallableOptions(
                feed=[definition.inputs[key].name for key in self.input_keys],
                fetch=[definition.outputs[key].name for key in self.output_keys],
            )
        )

    def __call__(self, feeds):
        values = self.callable(*[feeds[key] for key in self.input_keys])
        return dict(zip(self.output_keys, values))


def session_signatures(session, meta_graph):
    """The signatures of a TF1 SavedModel whose tensors are in its graph (a signature
    naming a tensor the graph lacks is logged and left out, as no request could run it)."""
    found = {}
    for key, definition in meta_graph.signature_def.items():
        try:
            found[key] = SessionSignature(session, definition)
        except (KeyError, ValueError) as error:
            log.warning("signature %s names a tensor the graph does not have: %s", key, error)
    return found


# TensorFlow Serving's warm-up: the requests a model carries in this file of its version
# (a TFRecord file of PredictionLogs), each run once before the version is served, at most
# MAX_WARMUP_RECORDS; a request that fails fails the load.
WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")
MAX_WARMUP_RECORDS = 1000


def warm_up(servable, path):
    """Runs the version's warm-up requests; how many. Trust boundary, the model's folder
    → the server: the file is read by TensorFlow's own TFRecord reader only once every
    record's length was found to lie within the file (a length field claiming more, which
    the reader would try to allocate, fails the load instead), and only its first
    MAX_WARMUP_RECORDS + 1 records are looked at."""
    file = os.path.join(path, WARMUP_FILE)
    if not os.path.isfile(file):
        return 0
    check_record_lengths(file)
    count = 0
    for record in tf.data.TFRecordDataset(file):
        record = record.numpy()
        count += 1
        if count > MAX_WARMUP_RECORDS:
            raise ValueError(f"Number of warmup records exceeds the maximum ({MAX_WARMUP_RECORDS}) at {file}")
        try:
            logged = prediction_log_pb2.PredictionLog.FromString(record)
        except DecodeError:
            raise ValueError(f"Failed to parse warmup record {count} from {file}") from None
        try:
            warm_up_one(servable, logged)
        except ApiError as error:
            raise ValueError(f"warm-up request {count} failed: {error}") from None
    return count


def check_record_lengths(file):
    """Every record of the TFRecord file `file` (8-byte length, 4-byte CRC, the data, 4-byte
    CRC) ends within the file; at most MAX_WARMUP_RECORDS + 1 are looked at."""
    size = os.path.getsize(file)
    with open(file, "rb") as records:
        offset = 0
        for _ in range(MAX_WARMUP_RECORDS + 1):
            if offset >= size:
                return
            records.seek(offset)
            header = records.read(8)
            if len(header) < 8:
                raise ValueError(f"the warm-up file {file} ends inside a record's header")
            (length,) = struct.unpack("<Q", header)
            offset += 16 + length
            if offset > size:
                raise ValueError(f"a record of the warm-up file {file} claims {length} bytes, more than the file holds")


def warm_up_one(servable, logged):
    """One PredictionLog's request run on the servable, as its API would run it."""
    kind = logged.WhichOneof("log_type")
    if kind == "predict_log":
        request = logged.predict_log.request
        signature = signature_of(servable, request.model_spec.signature_name or DEFAULT_SIGNATURE)
        check_input_names(signature.inputs, request.inputs)
        signature({key: array_of(proto, key, signature.inputs[key]) for key, proto in request.inputs.items()})
        return
    if kind in ("classify_log", "regress_log"):
        request = getattr(logged, kind).request
        tasks = [(request.model_spec.signature_name, "classify" if kind == "classify_log" else "regress")]
    elif kind == "multi_inference_log":
        request = logged.multi_inference_log.request
        tasks = [(task.model_spec.signature_name, METHODS.get(task.method_name)) for task in request.tasks]
        if not tasks or None in (verb for _, verb in tasks):
            raise ApiError(400, "a MultiInferenceRequest needs tasks of classify or regress methods")
    else:
        raise ApiError(400, f"Unsupported log_type for warmup: {kind}")
    serialized = serialized_examples(request.input)
    for name, verb in tasks:
        name = name or DEFAULT_SIGNATURE
        input_name = example_input(servable, name, verb)
        signature = signature_of(servable, name)
        signature({input_name: to_array(serialized, signature.inputs[input_name], input_name)})


def read_meta_graph(path):
    """The `serve` graph of the SavedModel in `path` (its saved_model.pb)."""
    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as file:
        saved.ParseFromString(file.read())
    graphs = [g for g in saved.meta_graphs if "serve" in g.meta_info_def.tags]
    return (graphs or list(saved.meta_graphs))[0]


def signature_defs_of(graph):
    """The graph's signature_defs as TensorFlow Serving's metadata shows them: every one
    (`__saved_model_init_op`, which no request can call, included), with every field,
    defaults included, as declared (for a TF1 model, what it declares, not what its
    tensors are)."""

    def tensor(info):
        shape = info.tensor_shape
        return {
            "dtype": types_pb2.DataType.Name(info.dtype),
            "tensor_shape": {
                "dim": [{"size": str(d.size), "name": d.name} for d in shape.dim],
                "unknown_rank": shape.unknown_rank,
            },
            "name": info.name,
        }

    def described(signature):
        fields = {
            "inputs": {k: tensor(v) for k, v in signature.inputs.items()},
            "outputs": {k: tensor(v) for k, v in signature.outputs.items()},
            "method_name": signature.method_name,
        }
        # TensorFlow 2.13 added a signature's `defaults` (its inputs' default values), and
        # TensorFlow Serving shows it from then on, empty or not, whichever TensorFlow wrote
        # the model (its own test's metadata file has it for a TF1 model). A line whose
        # protos predate the field serves only models written before it: theirs is empty.
        defaults = signature.defaults.items() if SIGNATURE_DEFAULTS else ()
        fields["defaults"] = {k: json_format.MessageToDict(v, preserving_proto_field_name=True) for k, v in defaults}
        return fields

    return {key: described(signature) for key, signature in graph.signature_def.items()}


SIGNATURE_DEFAULTS = "defaults" in meta_graph_pb2.SignatureDef.DESCRIPTOR.fields_by_name


class Models:
    """The models served: every folder under MODELS (its highest version), or those of the
    model config file MODEL_CONFIG (each its policy's versions, with its labels), reread
    when the file changes. A version that appears later is loaded once its files stopped
    changing; the versions its policy no longer wants are unloaded once one it wants is
    served (TensorFlow Serving's availability-preserving order)."""

    def __init__(self):
        self.lock = threading.Lock()  # the maps below
        self.polling = threading.Lock()  # one poll at a time: the watcher's, a reload's
        self.served = {}  # name -> {version: Servable}
        self.states = {}  # name -> {version: (state, error message)}
        self.labels = {}  # name -> {label: version}
        self.seen = {}  # (name, version) -> its files at the last poll
        self.failed = {}  # (name, version) -> its files when loading them failed
        self.missing = set()  # the configured folders found missing (logged once)
        self.config = None  # the ModelServerConfig in force; None: every folder under MODELS
        self.config_text = None  # the file's text it was read from
        self.configured = set()  # the names configured or served at the last poll: the metrics' labels
        self.held = None  # (models the config dropped, still served; models it names, none served)

    def watch(self):
        first = True
        while True:
            try:
                if MODEL_CONFIG:
                    self.read_config_file()
                with self.polling:
                    self.poll(wait_for_quiet=not first)
            except Exception:  # a poll must never end the watcher
                log.exception("scanning the models failed")
            first = False
            time.sleep(POLL_SECONDS)

    def read_config_file(self):
        """MODEL_CONFIG applied when its text changed; a config that does not parse is
        logged and the one in force kept."""
        try:
            with open(MODEL_CONFIG, encoding="utf-8") as file:
                text = file.read(MAX_CONFIG_BYTES + 1)
        except (OSError, ValueError) as error:
            if self.config_text != "":
                log.error("the model config %s cannot be read: %s", MODEL_CONFIG, error)
                self.config_text = ""
            return
        if text == self.config_text:
            return
        self.config_text = text
        try:
            config = parse_model_config(text)
        except ApiError as error:
            log.error("the model config %s is not applied: %s", MODEL_CONFIG, error)
            return
        self.apply(config)
        log.info("model config %s applied: %s", MODEL_CONFIG, ", ".join(c.name for c in config.model_config_list.config))

    def apply(self, config):
        with self.lock:
            self.config = config
            self.labels = {c.name: dict(c.version_labels) for c in config.model_config_list.config}

    def reload(self, config):
        """A config from HandleReloadConfigRequest, applied and loaded before it returns."""
        self.apply(config)
        with self.polling:
            self.poll(wait_for_quiet=False)

    def entries(self):
        """(name, folder, version policy or None) of each model to serve."""
        with self.lock:
            config = self.config
        if config is None:
            return [(name, os.path.join(MODELS, name), None) for name in model_folders(MODELS)]
        return [
            (c.name, container_path(c.base_path), c.model_version_policy if c.HasField("model_version_policy") else None)
            for c in config.model_config_list.config
        ]

    def poll(self, wait_for_quiet):
        """Loads the versions each model's policy wants that are not served yet, then
        unloads those it no longer wants. After the first poll, a version is loaded only
        once its files are as they were a poll ago (a copy in progress is not read
        half-way), and one that failed only once its files change."""
        entries = self.entries()
        names = {name for name, _, _ in entries}
        with self.lock:
            self.configure(names | set(self.served))
        for name, folder, policy in entries:
            if not os.path.isdir(folder):
                if folder not in self.missing:
                    log.error("model %s: its folder %s is not in the container", name, folder)
                    self.missing.add(folder)
                continue
            self.missing.discard(folder)
            versions = versions_in(folder)
            wanted = served_versions(policy, sorted(versions))
            for version in wanted:
                with self.lock:
                    if version in self.served.get(name, {}):
                        continue
                key = (name, version)
                files = files_of(versions[version])
                changed = self.seen.get(key) != files
                self.seen[key] = files
                if self.failed.get(key) == files or (wait_for_quiet and changed):
                    continue
                self.load(name, version, versions[version], files)
            with self.lock:
                served = list(self.served.get(name, {}))
            if not wanted or any(version in served for version in wanted):
                for version in served:
                    if version not in wanted:
                        self.unload(name, version)
        # The models the config no longer names go once every model it names serves
        # (TensorFlow Serving's order): a config whose models cannot load, or whose folder is
        # not in the container, never leaves the server serving nothing.
        with self.lock:
            dropped = [(name, version) for name in self.served if name not in names for version in self.served[name]]
            waiting = sorted(name for name in names if not self.served.get(name))
        if not waiting:
            for name, version in dropped:
                self.unload(name, version)
        held = (tuple(sorted({name for name, _ in dropped})), tuple(waiting)) if waiting and dropped else None
        if held and held != self.held:
            log.warning("still serving %s until %s load", ", ".join(held[0]), ", ".join(held[1]))
        self.held = held
        with self.lock:
            self.configure(names | set(self.served))

    def load(self, name, version, path, files):
        self.set_state(name, version, "LOADING", "")
        log.info("loading model %s version %d from %s", name, version, path)
        started = time.perf_counter()
        try:
            servable = Servable(name, version, path)
        except Exception as error:  # any broken SavedModel: reported in the status
            LOAD_ATTEMPTS.labels(path, "fail").inc()
            self.failed[(name, version)] = files
            self.set_state(name, version, "END", f"loading failed: {error}")
            log.error("model %s version %d could not be loaded: %s", name, version, error)
            return
        LOAD_ATTEMPTS.labels(path, "success").inc()
        LOAD_LATENCY.labels(path).inc((time.perf_counter() - started) * 1e6)
        with self.lock:
            self.served.setdefault(name, {})[version] = servable
            self.states.setdefault(name, {})[version] = ("AVAILABLE", "")
        if servable.warmed_up:
            log.info("model %s version %d warmed up with %d requests", name, version, servable.warmed_up)
        log.info("serving model %s version %d", name, version)

    def unload(self, name, version):
        with self.lock:
            servable = self.served.get(name, {}).pop(version, None)
            if not self.served.get(name):
                self.served.pop(name, None)
            self.states.setdefault(name, {})[version] = ("END", "")
        if servable is not None:
            servable.close()
            log.info("model %s version %d unloaded", name, version)

    def configure(self, names):
        """`names` are the models configured or served now (the lock held); the metrics'
        series of any other go."""
        for name in self.configured - names:
            forget_series(name)
        self.configured = names

    def set_state(self, name, version, state, message):
        with self.lock:
            self.states.setdefault(name, {})[version] = (state, message)

    def status(self, name, version):
        """Every version's state, or the one asked for (a label is not looked at: TensorFlow
        Serving's status answers for every version then too)."""
        with self.lock:
            states = dict(self.states.get(name, {}))
        if version is not None:
            if version not in states:
                raise ApiError(404, f"Could not find version {version} of model {name}")
            states = {version: states[version]}
        if not states:
            raise ApiError(404, f"Could not find any versions of model {name}")
        return {
            "model_version_status": [
                {
                    "version": str(number),
                    "state": state,
                    "status": {"error_code": "UNKNOWN" if message else "OK", "error_message": message},
                }
                for number, (state, message) in sorted(states.items(), reverse=True)
            ]
        }

    def get(self, name, version=None, label=None):
        """The servable of `name` a request names: by `version`, by `label`, or its highest."""
        with self.lock:
            if label is not None:
                version = self.labels.get(name, {}).get(label)
                if version is None:
                    raise ApiError(400, f"Unrecognized servable version label: {label[:200]}")
            versions = self.served.get(name, {})
            if version is None:
                servable = versions[max(versions)] if versions else None
            else:
                servable = versions.get(version)
        if servable is None:
            wanted = "Latest" if version is None else "Specific"
            detail = name if version is None else f"{name}, {version}"
            raise ApiError(404, f"Servable not found for request: {wanted}({detail})")
        return servable


def served_versions(policy, available):
    """The versions of `available` (lowest first) that a ModelVersionPolicy serves, as
    TensorFlow Serving's: `latest` (the default) its num_versions highest (1 unless
    given), `all`, or `specific` those listed."""
    choice = policy.WhichOneof("policy_choice") if policy is not None else None
    if choice == "all":
        return list(available)
    if choice == "specific":
        listed = set(policy.specific.versions)
        return [version for version in available if version in listed]
    count = policy.latest.num_versions if choice == "latest" and policy.latest.num_versions > 0 else 1
    return list(available[-count:])


def parse_model_config(text):
    """A ModelServerConfig from TensorFlow Serving's text format, checked as its server
    checks one (and as tfimg did before starting this one); ApiError 400 when it is not."""
    config = model_server_config_pb2.ModelServerConfig()
    try:
        text_format.Parse(text, config)
    except text_format.ParseError as error:
        raise ApiError(400, f"the model config does not parse: {error}") from None
    if config.WhichOneof("config") != "model_config_list":
        raise ApiError(400, "the model config has no model_config_list")
    names = set()
    for model in config.model_config_list.config:
        if not MODEL_NAME.match(model.name):
            raise ApiError(400, f"the model config names a model {model.name[:200]!r}, which is no model name")
        if model.name in names:
            raise ApiError(400, f"the model config names model {model.name} twice")
        names.add(model.name)
        if model.model_platform not in ("", "tensorflow"):
            raise ApiError(400, f"model {model.name}: platform {model.model_platform[:200]!r} is not served here")
        if not model.base_path:
            raise ApiError(400, f"model {model.name} has no base_path")
    return config


def container_path(base_path):
    """Where a config's base_path is in this container: tfimg mounts each at /models/NAME
    and names them in TFIMG_SERVING_BASE_PATHS (host path, trailing `/` dropped → path
    here); a path it did not mount is read as it is."""
    return BASE_PATHS.get(base_path.rstrip("/") or "/", base_path)


def model_folders(folder):
    """The model folders under `folder`, by name."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [name for name in names if MODEL_NAME.match(name) and os.path.isdir(os.path.join(folder, name))]


def versions_in(base):
    """{version: path} of the numbered SavedModel folders under a model's folder."""
    try:
        entries = os.listdir(base)
    except OSError:
        return {}
    found = {}
    for entry in entries:
        path = os.path.join(base, entry)
        if entry.isdigit() and os.path.isfile(os.path.join(path, "saved_model.pb")):
            found[int(entry)] = path
    return found


def files_of(path):
    """Every file under `path` with its size and time: equal on two polls, the copy is done."""
    listing = []
    for root, _, files in os.walk(path):
        for file in files:
            stat = os.stat(os.path.join(root, file))
            listing.append((root, file, stat.st_size, stat.st_mtime_ns))
    return sorted(listing)


# --- JSON <-> tensors --------------------------------------------------------------------


def decode(value, what):
    """{"b64": ...} objects (anywhere in a nested list) become bytes; `what` names the
    input or feature in errors."""
    if isinstance(value, list):
        return [decode(item, what) for item in value]
    if isinstance(value, dict):
        if is_b64(value):
            return from_base64(value["b64"], what)
        raise ApiError(400, f"{what}: JSON object {json.dumps(value)[:200]} is not a tensor value")
    return value


def from_base64(text, what):
    """The bytes of a {"b64": ...} value, decoded strictly (RFC 4648's alphabet and
    padding, nothing else: base64.b64decode without `validate` skips any other character,
    so `"Zm9v!!!"` was read as `foo` and `"****"` as no bytes at all)."""
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as error:  # binascii.Error
        raise ApiError(400, f"{what}: {json.dumps(text)[:100]} is not base64 ({error})") from None


def to_array(value, spec, name):
    """A JSON value as a numpy array of the input's dtype, as TensorFlow Serving reads it
    (`json_tensor.cc`): an integer must fit the dtype (TensorFlow's own conversion wraps
    2**32 + 1 to 1 for int32), true and false are booleans only, 1.5 is no int32. Numbers
    go through numpy directly, which costs a fraction of TensorFlow's conversion; anything
    else through TensorFlow."""
    dtype = spec.dtype
    try:
        numbers = number_types(value, name)
        if numbers is not None:
            if bool in numbers and not dtype.is_bool:
                raise ApiError(400, f"input `{name}` takes {dtype.name} values: true and false are not numbers")
            if dtype.is_integer and numbers <= {int}:
                array = np.asarray(value)
                if array.dtype.kind in "iu" and fits_in(array, dtype):
                    return array.astype(dtype.as_numpy_dtype, copy=False)
                outside = first_outside(value, dtype)
                if outside is not None:
                    raise ApiError(
                        400, f"input `{name}`: {outside} is out of {dtype.name}'s range ({dtype.min} to {dtype.max})"
                    )
            if (dtype.is_bool and numbers <= {bool}) or (dtype.is_floating and dtype != tf.bfloat16):
                array = np.asarray(value)
                if array.dtype.kind in ("b" if dtype.is_bool else "iuf"):
                    return array.astype(dtype.as_numpy_dtype, copy=False)
        return tf.constant(decode(value, f"input `{name}`"), dtype=dtype).numpy()
    except ApiError:
        raise
    except (ValueError, TypeError, OverflowError, tf.errors.InvalidArgumentError) as error:
        raise ApiError(400, f"input `{name}`: {error}") from None
    except SystemError as error:  # TensorFlow's wrapping of an int past uint64's range
        if not isinstance(error.__cause__, OverflowError):
            raise
        raise ApiError(400, f"input `{name}`: {error.__cause__}") from None


NUMBERS = {int, float, bool}


def number_types(value, name):
    """The types of the numbers (and booleans) in `value` when it is one, or regular
    nested lists of them; None otherwise. numpy converts only such values, as no string
    array then is made (its size is the longest string times the count: a 1 MB string
    among 1 000 empty ones would take 4 GB). Walked level by level, without recursion;
    lists nested past MAX_RANK are refused."""
    if type(value) in NUMBERS:
        return {type(value)}
    if type(value) is not list:
        return None
    level, depth = [value], 1
    while True:
        if depth > MAX_RANK:
            raise ApiError(400, f"input `{name}` has lists nested over {MAX_RANK} deep")
        kinds = set()
        for item in level:
            kinds.update(map(type, item))
        if list not in kinds:
            return kinds if kinds <= NUMBERS else None
        if len(kinds) > 1:  # lists beside numbers: ragged, for TensorFlow to refuse
            return None
        level = [child for item in level for child in item]
        depth += 1


def fits_in(array, dtype):
    # Python ints: numpy 1.23 compares uint64 with int64 as floats (2**63 would pass).
    return array.size == 0 or (dtype.min <= int(array.min()) and int(array.max()) <= dtype.max)


def first_outside(value, dtype):
    """The first integer in `value` (regular nested lists of ints, as `number_types` found
    them) outside the dtype's range; None when all fit. Only walked for a value numpy could
    not show to fit."""
    level = [value]
    while level:
        following = []
        for item in level:
            if type(item) is list:
                following.extend(item)
            elif not dtype.min <= item <= dtype.max:
                return item
        level = following
    return None


def to_json(array, name, as_lists=False):
    """A numpy array as JSON values: float32 with TensorFlow Serving's digits
    (`float32_digits`), bytes as text (or base64 objects for outputs named `*_bytes`, as
    TensorFlow Serving does). Numbers stay a numpy array (C-contiguous), which `encode`
    writes, unless `as_lists`."""
    if array.dtype == np.float32:
        array = float32_digits(array)
    if array.dtype != object and not as_lists:
        return array if array.flags.c_contiguous else array.copy(order="C")
    if array.dtype == object:
        as_text = name.endswith("_bytes")

        def text(item):
            if as_text:
                return {"b64": base64.b64encode(item).decode()}
            return item.decode("utf-8", "replace")

        return np.vectorize(text, otypes=[object])(array).tolist() if array.size else []
    return array.tolist()


def float32_digits(array):
    """float32 values as TensorFlow Serving writes them (json_tensor.cc's WriteDecimal):
    six significant digits where they read back as the same float32, else nine; as float64
    whose shortest form is those digits, which `encode` writes (`1435774336` is
    `1435774340.0` as TensorFlow Serving's `1.43577434e+09`, where float32's own shortest
    form, 8 digits, made `1435774300.0`; 0.1 stays `0.1`). Vectorised, rounding by exact
    powers of ten looked up, never computed (np.clip, np.round and np.errstate cost more than
    the arithmetic on a batch: 53 µs for 32 values, now 13 µs); a small array one by one, and
    the rare values beyond those powers (under 1e-14 or from 1e28 in size) too. It matched
    the one-by-one form on 1.1 million values from 1e-45 to 3.4e38, 0, NaN and infinities."""
    if array.size <= SMALL_FLOATS:
        written = [tensorflow_serving_float(value) for value in array.reshape(-1)]
        return np.array(written, dtype=np.float64).reshape(array.shape)
    flat = array.ravel()
    wide = flat.astype(np.float64)
    magnitude = np.abs(wide)
    inside = (magnitude >= 1e-14) & (magnitude < 1e28)  # false for 0, NaN, infinities
    magnitude = np.where(inside, magnitude, 1.0)
    exponent = np.floor(np.log10(magnitude)).astype(np.intp)
    exponent += magnitude >= POWERS[exponent + 31]
    exponent -= magnitude < POWERS[exponent + 30]
    six = exponent + 17  # the index (of SCALE_UP, SCALE_DOWN) of the step to six digits

    def rounded(index):
        # To the float64 nearest the decimal, whose shortest form is its digits.
        up, down = SCALE_UP[index], SCALE_DOWN[index]
        return np.rint(wide / up * down) * up / down  # one of the two is 1

    written = rounded(six)
    written = np.where(written.astype(np.float32) == flat, written, rounded(six - 3))
    outside = ~inside
    if outside.any():
        written[outside] = wide[outside]
        beyond = outside & (wide != 0) & np.isfinite(wide)
        if beyond.any():
            written[beyond] = [tensorflow_serving_float(value) for value in flat[beyond]]
    return written.reshape(array.shape)


# Exact powers of ten for a rounding step k from -22 to 22 (index k + 22): a value is
# multiplied by SCALE_DOWN's and divided by SCALE_UP's, one of which is 1. POWERS: 10**e
# at e + 30, to find a value's decimal exponent.
SCALE_UP = np.array([10.0 ** max(k, 0) for k in range(-22, 23)])
SCALE_DOWN = np.array([10.0 ** max(-k, 0) for k in range(-22, 23)])
POWERS = 10.0 ** np.arange(-30, 40)


def tensorflow_serving_float(value):
    """One float32 as TensorFlow Serving writes it: `%.6g` where it reads back, else `%.9g`
    (NaN and infinities as they are)."""
    if not np.isfinite(value):
        return float(value)
    six = float(f"{value:.6g}")
    return six if np.float32(six) == value else float(f"{value:.9g}")


# Up to this many float32 values, `float32_digits` writes them one by one (1 µs each).
SMALL_FLOATS = 12


async def run(servable, signature_name, feeds):
    """The outputs of the signature on `feeds`, JSON values by input name."""
    signature = signature_of(servable, signature_name)
    specs = signature.inputs
    check_input_names(specs, feeds)
    arrays = {key: to_array(value, specs[key], key) for key, value in feeds.items()}
    feeds.clear()  # the caller's decoded JSON, let go of while the model runs
    return await run_arrays(servable, signature_name, signature, arrays, digits=True)


def check_input_names(specs, feeds):
    missing = sorted(set(specs) - set(feeds))
    extra = sorted(set(feeds) - set(specs))
    if missing or extra:
        wrong = [f"{names_text(missing)} missing"] if missing else []
        wrong += [f"{names_text(extra)} unknown"] if extra else []
        raise ApiError(400, f"inputs {' and '.join(wrong)}; the signature takes {names_text(sorted(specs))}")


async def run_arrays(servable, signature_name, signature, arrays, digits=False):
    """The outputs of the signature on `arrays` (numpy, of its inputs' dtypes), run by the
    signature's worker with the requests that queued meanwhile; with `digits`, float32 ones
    as JSON writes them (float64, `float32_digits`)."""
    specs = signature.inputs
    for key, array in arrays.items():
        if not specs[key].shape.is_compatible_with(array.shape):
            wanted = [d if d is not None else -1 for d in specs[key].shape.as_list()]
            raise ApiError(400, f"input `{key}` has shape {list(array.shape)}; the signature takes {wanted}")
    rows = {array.shape[0] if array.ndim else None for array in arrays.values()}
    # Inputs without one common first dimension (0 rows here) are never merged.
    job = Job(arrays, rows.pop() if len(rows) == 1 and None not in rows else 0, digits)
    servable.worker(signature_name, signature).submit(job)
    try:
        return await job.future
    except (ValueError, TypeError, tf.errors.InvalidArgumentError) as error:
        raise ApiError(400, client_text(error)) from None


def signature_name_of(body):
    """The signature a request names; an empty name, as an absent one, is the default
    (TensorFlow Serving's)."""
    name = body.get("signature_name", DEFAULT_SIGNATURE)
    if not isinstance(name, str):
        raise ApiError(400, f"`signature_name` must be a string, not {json_type(name)}")
    return name or DEFAULT_SIGNATURE


def signature_of(servable, signature_name):
    """The served version's signature `signature_name`, or a 400 that names the
    signatures it has (after TensorFlow Serving's words)."""
    signature = servable.signatures.get(signature_name)
    if signature is None:
        raise ApiError(
            400,
            f'Serving signature name: "{signature_name}" not found in signature def; '
            f"the model's signatures are {names_text(sorted(servable.signatures))}",
            grpc_code=grpc.StatusCode.FAILED_PRECONDITION,
        )
    return signature


def names_text(names):
    """Names for a message: `a`, `b` (or `none`)."""
    return ", ".join(f"`{name}`" for name in names) or "none"


def json_type(value):
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


async def predict(servable, body):
    signature_name = signature_name_of(body)
    signature = signature_of(servable, signature_name)
    input_names = sorted(signature.inputs)
    row_format, feeds = predict_feeds(body, input_names)
    body.clear()  # the values live on in `feeds` only, until they are converted
    outputs = await run(servable, signature_name, feeds)
    if row_format:
        return {"predictions": rows(outputs)}
    if len(outputs) == 1:
        (name, value), = outputs.items()
        return {"outputs": to_json(value, name)}
    return {"outputs": {name: to_json(value, name) for name, value in outputs.items()}}


def predict_feeds(body, input_names):
    """Whether the request is in the row format, and its values by input name. As
    TensorFlow Serving, the columnar format's object is read for the signature's inputs
    only (any other key is ignored); the row format's objects must hold them exactly."""
    if ("instances" in body) == ("inputs" in body):
        raise ApiError(400, "the request needs one of `instances` (row format) or `inputs` (columnar format)")
    if "instances" in body:
        instances = body["instances"]
        if not isinstance(instances, list):
            raise ApiError(400, "`instances` must be a list")
        if instances and all(isinstance(i, dict) for i in instances) and not is_b64(instances[0]):
            return True, {key: [i.get(key) for i in instances] for key in instances[0]}
        if len(input_names) == 1:
            return True, {input_names[0]: instances}
        raise ApiError(400, f"the signature takes {names_text(input_names)}: give each instance as an object")
    inputs = body["inputs"]
    if isinstance(inputs, dict) and not is_b64(inputs):
        return False, {name: inputs[name] for name in input_names if name in inputs}
    if len(input_names) == 1:
        return False, {input_names[0]: inputs}
    raise ApiError(400, f"the signature takes {names_text(input_names)}: give `inputs` as an object")


def is_b64(value):
    return isinstance(value, dict) and set(value) == {"b64"} and isinstance(value["b64"], str)


def rows(outputs):
    """Row-format predictions: one value per instance, or one object per instance."""
    if len(outputs) == 1:
        (name, value), = outputs.items()
        return to_json(value, name)
    sizes = {value.shape[0] if value.ndim else None for value in outputs.values()}
    if len(sizes) != 1 or None in sizes:
        raise ApiError(400, "the outputs differ in their first dimension: use the columnar format (`inputs`)")
    columns = {name: to_json(value, name) for name, value in outputs.items()}
    return [{name: column[row] for name, column in columns.items()} for row in range(sizes.pop())]


def example(features):
    """One tf.train.Example from a JSON object of feature values, as TensorFlow Serving
    makes it (`json_tensor.cc`): a feature's values are all of one kind, which its first
    value sets: whole numbers, true and false (1 and 0) are int64; numbers written with a
    point or an exponent float; strings and {"b64": ...} bytes. Anything else, or values
    of two kinds (`[1, 2.5]`), is refused."""
    built = tf.train.Example()
    for key, value in features.items():
        kind, values = None, []
        for item in value if isinstance(value, list) else [value]:
            item_kind, item = feature_value(key, item)
            if kind is not None and item_kind != kind:
                raise ApiError(
                    400,
                    f"feature `{key}` mixes {kind} and {item_kind} values "
                    f"({json.dumps(value)[:100]}): give each feature values of one kind",
                )
            kind = item_kind
            values.append(item)
        feature = built.features.feature[key]
        try:
            if kind is not None:
                getattr(feature, f"{kind}_list").value.extend(values)
        except (ValueError, OverflowError) as error:  # 1e400 as a float
            raise ApiError(400, f"feature `{key}`: {error}") from None
    return built.SerializeToString()


def feature_value(key, item):
    """One value of feature `key`: its kind (`int64`, `float`, `bytes`) and the value."""
    if isinstance(item, bool):
        return "int64", int(item)
    if isinstance(item, int):
        if not -(1 << 63) <= item <= INT64_MAX:
            raise ApiError(400, f"feature `{key}`: {item} is out of int64's range")
        return "int64", item
    if isinstance(item, float):
        return "float", item
    if isinstance(item, str):
        try:
            return "bytes", item.encode()
        except UnicodeEncodeError as error:  # a lone surrogate (\ud800)
            raise ApiError(400, f"feature `{key}`: {error}") from None
    if is_b64(item):
        return "bytes", from_base64(item["b64"], f"feature `{key}`")
    raise ApiError(
        400, f"feature `{key}` has a value that is no number, string or {{\"b64\": ...}}: {json.dumps(item)[:100]}"
    )


def example_input(servable, signature_name, verb):
    """The input of the signature Classify or Regress runs, which takes serialized
    tf.Examples (`inputs`), checked as TensorFlow Serving checks it by default: its inputs
    and outputs, not its method_name (only `--enable_signature_method_name_check` does), so
    a TensorFlow 2 signature, which is always a predict one, classifies and regresses."""
    signature_of(servable, signature_name)
    proto = servable.signature_def_protos[signature_name]
    inputs, outputs = proto.inputs, proto.outputs
    kind = "classification" if verb == "classify" else "regression"
    if len(inputs) != 1:
        raise ApiError(400, "Expected one input Tensor.")
    if verb == "classify" and len(outputs) not in (1, 2):
        raise ApiError(400, f"Expected one or two output Tensors, found {len(outputs)}")
    if verb == "regress" and len(outputs) != 1:
        raise ApiError(400, "Expected one output Tensor.")
    if "inputs" not in inputs:
        raise ApiError(400, f"No {kind} inputs found in SignatureDef: {text_format.MessageToString(proto)}")
    if verb == "classify" and "classes" not in outputs and "scores" not in outputs:
        raise ApiError(
            400,
            'Expected classification signature outputs to contain at least one of "classes" or "scores". '
            f"Signature was: {text_format.MessageToString(proto)}",
        )
    if verb == "regress" and "outputs" not in outputs:
        raise ApiError(400, f"No regression outputs found in SignatureDef: {text_format.MessageToString(proto)}")
    return "inputs"


def classifications(outputs, count):
    """Per example, its (label, score) pairs from a classify signature's `classes` and
    `scores` (labels empty without `classes`, scores 0 without `scores`)."""
    scores = outputs.get("scores")
    classes = outputs.get("classes")
    if scores is None and classes is None:
        raise ApiError(400, "the classify signature has neither `classes` nor `scores` outputs")
    found = []
    for row in range(count):
        width = (scores if scores is not None else classes).shape[-1]
        labels = [c.decode() for c in classes[row]] if classes is not None else [""] * width
        values = to_json(scores[row], "scores") if scores is not None else [0.0] * width
        found.append(list(zip(labels, values)))
    return found


def regressions(outputs):
    if "outputs" not in outputs:
        raise ApiError(400, "the regress signature has no `outputs` output")
    return to_json(outputs["outputs"].reshape(-1), "outputs")


async def classify_or_regress(servable, body, verb):
    signature_name = signature_name_of(body)
    input_name = example_input(servable, signature_name, verb)
    examples = body.get("examples")
    context = body.get("context", {})
    if not isinstance(examples, list) or not all(isinstance(e, dict) for e in examples):
        raise ApiError(400, "`examples` must be a list of objects")
    if not isinstance(context, dict):
        raise ApiError(400, "`context` must be an object")
    if not examples:  # as TensorFlow Serving; the model would fail on an empty batch
        raise ApiError(400, "Input is empty: `examples` needs at least one example")
    serialized = [example({**context, **item}) for item in examples]
    count = len(examples)
    del examples, context
    body.clear()
    outputs = await run(servable, signature_name, {input_name: serialized})
    if verb == "regress":
        return {"results": regressions(outputs)}
    return {"results": [[list(pair) for pair in row] for row in classifications(outputs, count)]}


# --- HTTP: the client → server boundary ---------------------------------------------------
#
# Clients are on the other side: anyone who reaches the port sends whatever bytes they
# like, as slowly or as fast as they like. What they control is the request's bytes
# (headers, body, the JSON in it) and when those arrive. This section is the one place
# that takes them, and each costs the server no more than the limits above:
#   - headers: whole within HEADER_SECONDS and MAX_HEADER_BYTES, else 408 or 431
#     (`Protocol`: uvicorn has neither limit);
#   - the body: at most MAX_BODY_BYTES (413), arriving with no gap over BODY_IDLE_SECONDS
#     and, after BODY_GRACE_SECONDS, at BODY_BYTES_PER_SECOND on average (408); the bodies
#     held at once at most BODY_BUDGET bytes (503);
#   - a request slot (MAX_IN_FLIGHT, 503 beyond) only once the body is in, so a slow client
#     holds one connection until a timeout frees it, never a slot;
#   - the answer: a client that reads nothing of it for WRITE_SECONDS (the server's
#     buffers full) loses its connection, and with it the request slot (`Protocol`:
#     uvicorn waits for such a reader forever);
#   - connections: a request whose headers are in, finding CONNECTIONS open, closes those
#     the server waits on that went longest without a byte (`make_room`; 408), so a slow
#     client that reconnects each connection as it is cut keeps no one out, from whatever
#     address (every client on the host comes through Docker's proxy, from one address:
#     a cap per address would put them all with the attacker); past OPEN_CONNECTIONS a new
#     connection does the same, which bounds what silent connections hold;
#   - the JSON: refused (413) before it is parsed when its values would take over
#     MAX_DECODED_BYTES, its text and bytes let go of once parsed, its lists of numbers
#     given to numpy as they are (no second copy, never a string array), and let go of
#     before the model runs; large bodies LARGE_AT_ONCE at a time;
#   - the answer to any client input is 2xx or 4xx with {"error": ...}; no response carries
#     a Python traceback (`client_text`), and a failure of the server itself is logged
#     here and answered 500 without its details.


class Request:
    """One request: its method and path, then its body once read whole (handed over to
    the JSON parser, which lets go of it) and the bytes it holds in the body budget."""

    def __init__(self, method, path):
        self.method, self.path = method, path
        self.body = None
        self.held = 0


class Capacity:
    """What the server gives its clients at once: the bytes of the request bodies it holds
    (being received, or waiting for their answer) and the requests it answers. Used on the
    event loop only."""

    def __init__(self):
        self.held = 0
        self.in_flight = 0

    def hold(self, request, size):
        if self.held + size > BODY_BUDGET:
            busy = f"the server holds {BODY_BUDGET} bytes of request bodies already: try again shortly"
            raise ApiError(503, busy)
        self.held += size
        request.held += size

    def release(self, request):
        self.held -= request.held
        request.held = 0


EVICTED = (
    "the server closed this connection for another client: it holds {connections} connections, and this "
    "request had gone longest without a byte ({silent:.1f} s)"
)


def raw_answer(status, message):
    """A whole HTTP/1.1 error response that closes the connection, for the protocol, which
    answers before there is a request for the application."""
    reasons = {408: "Request Timeout", 431: "Request Header Fields Too Large"}
    payload = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {reasons[status]}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + payload


class Protocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 connection (httptools' parser) with the two limits it lacks on a
    request's headers: they arrive whole within HEADER_SECONDS, counted from the connection
    or from the first byte of a later request on a kept-alive one, and take at most
    MAX_HEADER_BYTES. Past either the client gets 408 or 431 (a connection that sent
    nothing is just closed) and the connection ends. uvicorn's own timeout only runs between
    requests: without this, clients that never finish their headers hold their connections
    forever, and CONNECTIONS of them lock everyone out; and a URL or header of gigabytes
    would be kept in memory whole.

    And a request whose headers are in, finding CONNECTIONS open (where uvicorn answers
    503), makes room (`make_room`): the connections the server waits on that have gone
    longest without a byte are closed. A timeout alone frees a slow connection only for the
    client that held it to open the next one: a client that reconnected each as it was cut
    kept everyone else at 503. Only a whole request makes room, so slow clients do not
    close each other's connections over and over; past OPEN_CONNECTIONS (silent ones
    included) a new connection makes room too, which bounds what they may hold."""

    header_timer = None
    write_timer = None  # runs while the client reads nothing of an answer (`pause_writing`)
    header_bytes = 0
    begun = False  # some of a request's head arrived
    refused = False  # answered here: what else arrives is ignored
    last_heard = 0.0  # the loop's time of the client's last bytes (or of the connection)

    def connection_made(self, transport):
        super().connection_made(transport)
        self.last_heard = self.loop.time()
        self.start_header_timer()
        if len(self.connections) > OPEN_CONNECTIONS:
            make_room(self, len(self.connections) - OPEN_CONNECTIONS)

    def data_received(self, data):
        self.last_heard = self.loop.time()
        if self.refused:
            return
        idle = self.cycle is None or self.cycle.response_complete
        if idle and self.header_timer is None:  # bytes after an answer: a request is due
            self.start_header_timer()
        super().data_received(data)

    def on_message_begin(self):
        if self.refused:
            return
        super().on_message_begin()
        self.begun, self.header_bytes = True, 0
        if self.header_timer is None:  # a pipelined request
            self.start_header_timer()

    def on_url(self, url):
        if self.count_header_bytes(len(url)):
            super().on_url(url)

    def on_header(self, name, value):
        if self.count_header_bytes(len(name) + len(value)):
            super().on_header(name, value)

    def on_headers_complete(self):
        if self.refused:
            return
        self.stop_header_timer()
        self.begun = False
        if len(self.connections) >= CONNECTIONS:
            make_room(self, len(self.connections) - CONNECTIONS + 1)
        super().on_headers_complete()

    def on_body(self, body):
        if not self.refused:
            super().on_body(body)

    def on_message_complete(self):
        if not self.refused:
            super().on_message_complete()

    def connection_lost(self, exc):
        self.stop_header_timer()
        self.stop_write_timer()
        super().connection_lost(exc)

    def pause_writing(self):
        # The transport's buffer is full: the client has stopped reading its answer.
        super().pause_writing()
        if self.write_timer is None:
            self.write_timer = self.loop.call_later(WRITE_SECONDS, self.reads_too_slowly)

    def resume_writing(self):
        super().resume_writing()
        self.stop_write_timer()

    def stop_write_timer(self):
        if self.write_timer is not None:
            self.write_timer.cancel()
            self.write_timer = None

    def reads_too_slowly(self):
        """The client read nothing of its answer for WRITE_SECONDS: the connection is cut,
        which ends the answer (uvicorn's `send` returns once the connection is lost) and
        frees its request slot."""
        self.write_timer = None
        log.warning("a client read nothing of its answer for %d s: its connection is closed", WRITE_SECONDS)
        self.transport.abort()

    def start_header_timer(self):
        self.header_timer = self.loop.call_later(HEADER_SECONDS, self.headers_too_slow)

    def stop_header_timer(self):
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def count_header_bytes(self, size):
        if self.refused:
            return False
        self.header_bytes += size
        if self.header_bytes > MAX_HEADER_BYTES:
            self.refuse(431, f"the request's headers are over the server's limit of {MAX_HEADER_BYTES} bytes")
            return False
        return True

    def headers_too_slow(self):
        self.header_timer = None
        if self.begun:
            self.refuse(408, f"the request's headers did not arrive within {HEADER_SECONDS} s")
        else:
            self.refuse(None, None)

    def refuse(self, status, message):
        self.refused = True
        self.stop_header_timer()
        if not self.transport.is_closing():
            if status is not None:
                self.transport.write(raw_answer(status, message))
            self.transport.close()

    def waits_for_client(self):
        """Whether the server waits on the client: for a request (an idle kept-alive
        connection, or headers on their way) or for the rest of a body. A request whose
        body is in is being answered, and its connection is not the client's to lose."""
        if self.refused or self.transport.is_closing() or self.pipeline:
            return False
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return True
        return cycle.more_body and not cycle.response_started

    def close_for_room(self):
        """Closed for another client: 408 for a request on its way (one that had not begun
        is just closed, as the keep-alive timeout closes it)."""
        silent = self.loop.time() - self.last_heard
        on_its_way = self.begun or (self.cycle is not None and not self.cycle.response_complete)
        message = EVICTED.format(connections=len(self.connections), silent=silent)
        self.refuse(408 if on_its_way else None, message if on_its_way else None)
        self.connections.discard(self)


def make_room(making, count):
    """Closes `count` of the connections the server waits on (`waits_for_client`), those
    that have gone longest without a byte, for the connection `making` room. A client that
    sends its request is not closed while others wait silently: stalled or trickled headers
    and bodies and idle kept-alive connections go first, whatever address they come from.
    When too few connections wait (every one has a request being answered), fewer are
    closed, and uvicorn answers 503."""
    waiting = (connection for connection in making.connections if connection is not making and connection.waits_for_client())
    for connection in heapq.nsmallest(count, waiting, key=lambda connection: connection.last_heard):
        connection.close_for_room()


def client_text(text):
    """An error's text as a client may read it: without the Python frames TensorFlow puts
    in a failing op's message (`defined at (most recent call last): File ...`; only what
    follows its `Node:` line is about the request) or any other traceback, at most 1000
    characters."""
    lines = str(text).splitlines()
    nodes = [index for index, line in enumerate(lines) if line.startswith("Node: ")]
    if nodes:
        lines = lines[nodes[-1] + 1 :]
    kept, after_frame = [], False
    for line in lines:
        if PYTHON_FRAME.match(line):
            after_frame = True
            continue
        if after_frame and line[:1].isspace():  # the frame's source line
            continue
        after_frame = False
        line = TENSORFLOW_NODE.sub("", line).strip()
        if line and not TRACEBACK_LINE.match(line):
            kept.append(line)
    return " ".join(kept)[:1000] or "the request was refused"


PYTHON_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')
TENSORFLOW_NODE = re.compile(r"\[\[\{\{node [^}]*\}\}\]\]|\[Op:[^\]]*\]")
TRACEBACK_LINE = re.compile(
    r"^(Traceback \(most recent call last\)|Graph execution error|Detected at node|<stack traces unavailable>)"
)


async def handle(models, request, match):
    """The answer to one request of the API; `match` is ROUTE's match of its path."""
    method, path = request.method, request.path
    verb = match and match["verb"]
    # A POST needs a model and a verb, written in lowercase (the route matches `:PREDICT`,
    # as TensorFlow Serving's does, which then knows no such verb); a GET has no verb.
    if match is None or method != ("POST" if verb else "GET") or (verb and (verb not in VERBS or not match["name"])):
        # As TensorFlow Serving: its API's paths are bad requests, others are not found.
        status = 400 if path[:4].lower() == "/v1/" else 404
        raise ApiError(status, f"Malformed request: {method} {path[:200]}")
    name = match["name"]
    if not name:
        raise ApiError(400, "Missing model name in request.")
    version = path_version(match["version"])
    if verb is None and match["metadata"] != "metadata":
        # The status, for every version when a label is given. `/METADATA` asks for it too:
        # TensorFlow Serving matches the word in any case but compares it in lowercase.
        return models.status(name, version)
    servable = models.get(name, version, match["label"])
    if verb is None:
        return {
            "model_spec": {"name": name, "signature_name": "", "version": str(servable.version)},
            "metadata": {"signature_def": {"signature_def": servable.signature_defs}},
        }
    body = parse_json(request)
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if verb == "predict":
        return await predict(servable, body)
    return await classify_or_regress(servable, body, verb)


def path_version(text):
    """The version a path names, as TensorFlow Serving reads it: one that does not fit an
    int64 is refused (never looked for: no version that large can exist)."""
    if text is None:
        return None
    if len(text.lstrip("0")) > 19 or int(text) > INT64_MAX:
        raise ApiError(400, f"Failed to convert version: {text[:200]} to numeric.")
    return int(text)


def parse_json(request):
    """The request's body as JSON; the body's bytes and text are let go of as soon as they
    are parsed. Refused before parsing: a body whose values would take over
    MAX_DECODED_BYTES as Python objects (413), as `decoded_size` estimates it. JSON nested
    past Python's recursion limit is refused (400) by the parser itself.

    orjson parses it (a batch of 32 rows in a tenth of the json module's time), unless it
    cannot: JSON's extensions TensorFlow Serving reads (NaN, Infinity, -Infinity), another
    encoding than UTF-8, a lone surrogate, nesting past 1024, a number past float64 (1e400)
    go to the json module, which reads them as before or names what is wrong. So does a
    body with a run of 20 digits, which may be an integer past uint64: orjson reads one as
    a float, json as the integer it is (then refused for an int input, as it was)."""
    data, request.body = request.body or b"null", None
    size = decoded_size(data) if len(data) * MOST_PER_BYTE > MAX_DECODED_BYTES else 0
    if size > MAX_DECODED_BYTES:
        raise ApiError(
            413,
            f"the request's JSON holds too many values: about {size >> 20} MiB once decoded, over "
            f"the server's limit of {MAX_DECODED_BYTES >> 20} MiB; send fewer rows a request",
        )
    if b"0" * 20 not in data.translate(ZEROED_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the json module reads it (NaN, UTF-16, a lone surrogate) or says why not
    try:
        text = data.decode(json.detect_encoding(data), "surrogatepass")
        del data
        return json.loads(text)
    except ValueError as error:
        raise ApiError(400, f"JSON Parse error: {error}") from None
    except RecursionError:
        raise ApiError(400, "JSON Parse error: the JSON is nested too deeply") from None


# Every digit made 0: a run of 20 digits is then a plain substring search (a regex for it
# backtracks at every digit, 500 µs on a batch of 32 rows).
ZEROED_DIGITS = bytes.maketrans(b"123456789", b"000000000")


# The most `decoded_size` counts for one byte of text (a `{`: an object and a value, and
# the byte): a body shorter than MAX_DECODED_BYTES / MOST_PER_BYTE (about 930 KiB) is
# never over the limit, and is not counted (5 passes over a batch of 32 rows, 70 µs).
MOST_PER_BYTE = 240 + 40 + 1


def decoded_size(data):
    """An upper estimate of what json.loads makes of `data` (CPython, 64-bit), from the
    characters that open or separate values (those inside strings too, so it never falls
    short): a list takes 56 bytes and a slot of 8 per item, an object 240 and about 100 a
    key, a number 32 (a float, or an int, and its slot), a string 56 and its text. So
    `[[0],[0],...]` (3 bytes of text for 64 of list) is refused unparsed, and rows of
    floats are estimated at 3 to 5 times their text."""
    lists, objects = data.count(b"["), data.count(b"{")
    values = data.count(b",") + lists + objects + 1
    strings = data.count(b'"') // 2
    return 64 * lists + 240 * objects + 100 * data.count(b":") + 40 * values + 56 * strings + len(data)


async def read_body(scope, receive, request, capacity):
    """The request's body into `request.body` (left None when the client goes away), each
    chunk counted in the body budget as it arrives. Refused, and the connection closed with
    the answer: a body over MAX_BODY_BYTES (413, from its Content-Length alone when it has
    one); a body that stalls for BODY_IDLE_SECONDS, or arrives slower than
    BODY_BYTES_PER_SECOND once BODY_GRACE_SECONDS are spent (408: every byte that arrives
    buys 1/BODY_BYTES_PER_SECOND s more, so a client that trickles a byte at a time is cut
    off within seconds, and a large body on a slow link is not); a chunk past the budget
    (503)."""
    length = dict(scope["headers"]).get(b"content-length", b"")
    if length.isdigit() and (len(length) > 12 or int(length) > MAX_BODY_BYTES):
        raise ApiError(413, TOO_LARGE)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BODY_GRACE_SECONDS
    buffer = bytearray()
    while True:
        wait = min(BODY_IDLE_SECONDS, deadline - loop.time())
        if wait <= 0:
            raise ApiError(408, SLOW_BODY)
        message = await within(wait, receive)
        if message["type"] == "http.disconnect":
            return
        chunk = message.get("body", b"")
        if len(buffer) + len(chunk) > MAX_BODY_BYTES:
            raise ApiError(413, TOO_LARGE)
        capacity.hold(request, len(chunk))
        buffer += chunk
        deadline += len(chunk) / BODY_BYTES_PER_SECOND
        if not message.get("more_body"):
            request.body = buffer
            return


async def within(seconds, receive):
    """`await receive()`, or ApiError 408 after `seconds`. asyncio.wait_for would do, but it
    makes a task (and takes a turn of the loop) for every chunk of every request."""
    task = asyncio.current_task()
    expired = []

    def expire():
        expired.append(True)
        task.cancel()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        return await receive()
    except asyncio.CancelledError:
        if expired:
            if hasattr(task, "uncancel"):  # Python 3.11+: the task is not being cancelled
                task.uncancel()
            raise ApiError(408, SLOW_BODY) from None
        raise
    finally:
        timer.cancel()


async def respond(models, request):
    """The status, bytes and content type that answer one request whose body is in: JSON,
    or the metrics in Prometheus' text format."""
    if request.path == METRICS_PATH and request.method == "GET":
        return 200, prometheus_client.generate_latest(REGISTRY), prometheus_client.CONTENT_TYPE_LATEST
    started = time.perf_counter()
    match = ROUTE.match(request.path)
    status, payload = await respond_json(models, request, match)
    if match and match["name"]:
        api = match["verb"] or ("metadata" if match["metadata"] else "status")
        record_request(models, match["name"], api.lower(), "REST", status_name(status), started)
    return status, payload, JSON


JSON = "application/json"


async def respond_json(models, request, match):
    """The status and JSON bytes that answer one request of the API."""
    try:
        status, answer = 200, await handle(models, request, match)
    except ApiError as error:
        status, answer = error.status, {"error": client_text(error)}
    except RecursionError:  # only the client's JSON is walked recursively
        status, answer = 400, {"error": "the request's JSON is nested too deeply"}
    except Exception:  # a bug, or a model failing on its own: logged, never shown
        log.exception("%s %s failed", request.method, request.path[:200])
        status, answer = 500, {"error": FAILED}
    return status, encode(answer)


def encode(answer):
    """The answer's JSON bytes. orjson writes them, numpy arrays included (float32 in its
    shortest form, as `to_json` writes it), some 20 times faster than lists through the json
    module. But orjson writes NaN and ±Infinity as `null`, where TensorFlow Serving writes
    NaN, Infinity and -Infinity: an answer whose text holds `null` (only such a value makes
    one, or a string that holds the word) is written again by the json module."""
    payload = orjson.dumps(answer, default=as_json, option=orjson.OPT_SERIALIZE_NUMPY)
    if b"null" in payload:
        payload = json.dumps(answer, default=as_json).encode()
    return payload


def as_json(value):
    """What orjson and json do not write themselves: a numpy array that is not C-contiguous
    or holds objects, a numpy scalar (for json)."""
    if isinstance(value, np.ndarray):
        return to_json(value, "", as_lists=True)
    if isinstance(value, np.generic):
        return to_json(np.asarray(value), "", as_lists=True)
    raise TypeError(f"{type(value).__name__} is not JSON")


def answer_apart(models, request):
    """`respond` on an event loop of this worker thread's own: a large body's JSON is read,
    converted and written here, while the main loop goes on serving everyone else."""
    return asyncio.run(respond(models, request))


def application(models):
    capacity = Capacity()
    large = None  # made on the server's loop, at its first request

    async def app(scope, receive, send):
        nonlocal large
        if scope["type"] != "http":
            return
        if large is None:
            large = asyncio.Semaphore(LARGE_AT_ONCE)
        started = []

        async def tracked_send(message):
            started.append(True)
            await send(message)

        try:
            await serve_one(models, capacity, large, scope, receive, tracked_send)
        except Exception:  # last resort: the client learns that it failed, not how
            log.exception("%s %s failed", scope.get("method"), str(scope.get("path"))[:200])
            if not started:
                await answer(send, 500, json.dumps({"error": FAILED}).encode(), close=True)

    return app


async def serve_one(models, capacity, large, scope, receive, send):
    """One request: its body read whole (no slot is taken while it arrives), then a slot,
    then the answer. The body counts in the budget until its answer is ready."""
    request = Request(scope["method"], scope["path"])
    try:
        try:
            await read_body(scope, receive, request, capacity)
        except ApiError as error:  # the rest of the body is not read: the connection ends
            await answer(send, error.status, json.dumps({"error": str(error)}).encode(), close=True)
            return
        if request.body is None:  # the client went away
            return
        if capacity.in_flight >= MAX_IN_FLIGHT:
            busy = f"the server is answering {MAX_IN_FLIGHT} requests already: try again shortly"
            await answer(send, 503, json.dumps({"error": busy}).encode(), close=False)
            return
        capacity.in_flight += 1
        try:
            if len(request.body) > LARGE_BODY_BYTES:  # on the default executor's bounded pool
                async with large:
                    status, payload, kind = await asyncio.to_thread(answer_apart, models, request)
            else:
                status, payload, kind = await respond(models, request)
        finally:
            capacity.in_flight -= 1
        capacity.release(request)  # a client slow to read its answer holds neither
        await answer(send, status, payload, close=False, kind=kind)
    finally:
        capacity.release(request)


async def answer(send, status, payload, close, kind=JSON):
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(payload)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


# --- gRPC: TensorFlow Serving's PredictionService and ModelService ----------------------
#
# The same servables as REST, through TensorFlow Serving's own protos (the
# tensorflow-serving-api package at the image's TensorFlow line) on grpcio's asyncio
# server, on a thread and event loop of its own. The same errors, as TensorFlow Serving's
# gRPC status codes (400 INVALID_ARGUMENT, 404 NOT_FOUND, 413 RESOURCE_EXHAUSTED, 503
# UNAVAILABLE, anything else INTERNAL without its details), and where TensorFlow Serving
# answers otherwise its code (an unknown signature: FAILED_PRECONDITION).
#
# Trust boundary, client → server, as for REST: a message is at most MAX_BODY_BYTES
# (grpcio refuses larger ones, RESOURCE_EXHAUSTED); a call's message arrives within
# MESSAGE_SECONDS (DEADLINE_EXCEEDED), holding nothing but its stream while it comes (a
# connection has STREAMS_PER_CONNECTION at most), and takes one of MAX_IN_FLIGHT slots only
# once it is in (RESOURCE_EXHAUSTED beyond): `unary`; a tensor's shape may not claim more
# values than MAX_DECODED_BYTES holds (a TensorProto of shape [10**9] with one value would
# be broadcast to all of them). The dtype of each input is the signature's, exactly: gRPC's
# tensors are typed, and TensorFlow Serving refuses a float64 for a float32 input.
# HandleReloadConfigRequest, which changes the models served for anyone who reaches the
# port, is UNIMPLEMENTED unless the server was started with it (ALLOW_RELOAD_CONFIG).

GRPC_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    404: grpc.StatusCode.NOT_FOUND,
    408: grpc.StatusCode.DEADLINE_EXCEEDED,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    501: grpc.StatusCode.UNIMPLEMENTED,
    503: grpc.StatusCode.UNAVAILABLE,
}
SLOW_MESSAGE = f"the request message did not arrive within {MESSAGE_SECONDS} s"
BUSY_CALLS = f"the server is answering {MAX_IN_FLIGHT} calls already: try again shortly"
RELOAD_OFF = (
    "HandleReloadConfigRequest is turned off: it would let anyone who reaches this port change "
    "the models served; start the server with `tfimg serve --allow-reload-config` to allow it"
)
METHODS = {"tensorflow/serving/classify": "classify", "tensorflow/serving/regress": "regress"}
ERROR_CODES = {"OK": 0, "UNKNOWN": 2}  # tensorflow.error.Code, as a status names them


async def grpc_answer(context, models, what, name, work):
    """The answer of `work()`, or the call aborted with the status its error maps to; the
    call counted in the metrics under model `name` and API `what`."""
    started = time.perf_counter()
    try:
        answer = await work()
        record_request(models, name, what, "GRPC", "OK", started)
        return answer
    except ApiError as error:
        code = error.grpc_code or GRPC_CODES.get(error.status, grpc.StatusCode.INTERNAL)
        message = client_text(error)
    except RecursionError:
        code, message = grpc.StatusCode.INVALID_ARGUMENT, "the request is nested too deeply"
    except Exception:  # a bug, or a model failing on its own: logged, never shown
        log.exception("gRPC %s failed", what)
        code, message = grpc.StatusCode.INTERNAL, FAILED
    record_request(models, name, what, "GRPC", code.name, started)
    await context.abort(code, message)


def grpc_servable(models, spec):
    """The servable a ModelSpec names: its name, and its version or label."""
    if not spec.name:
        raise ApiError(400, "Missing model name in request.")
    choice = spec.WhichOneof("version_choice")
    version = spec.version.value if choice == "version" else None
    return models.get(spec.name, version, spec.version_label if choice == "version_label" else None)


def answered_spec(target, servable, signature_name):
    target.name = servable.name
    target.version.value = servable.version
    target.signature_name = signature_name


def array_of(proto, key, spec):
    """A TensorProto as a numpy array of the input's dtype, or 400 (413 when its shape
    claims more values than the server decodes)."""
    if proto.dtype != spec.dtype.as_datatype_enum:
        got = types_pb2.DataType.Name(proto.dtype) if proto.dtype in types_pb2.DataType.values() else proto.dtype
        raise ApiError(400, f"input `{key}` is {got}; the signature takes {types_pb2.DataType.Name(spec.dtype.as_datatype_enum)}")
    count = 1
    for dim in proto.tensor_shape.dim:
        if dim.size < 0:
            raise ApiError(400, f"input `{key}` has a dimension of size {dim.size}")
        count *= dim.size
    if count * max(spec.dtype.size, 8) > MAX_DECODED_BYTES:
        raise ApiError(413, f"input `{key}` claims {count} values, over what the server decodes at once")
    packed = PACKED.get(proto.dtype)
    if proto.tensor_content and packed is not None:
        # What every client's make_tensor_proto sends for a numpy array: the values' bytes,
        # read in place rather than value by value.
        if len(proto.tensor_content) != count * packed.itemsize:
            raise ApiError(
                400,
                f"tensor parsing error: {key} (its tensor_content holds {len(proto.tensor_content)} bytes; "
                f"its shape needs {count * packed.itemsize})",
            )
        return np.frombuffer(proto.tensor_content, packed).reshape([dim.size for dim in proto.tensor_shape.dim])
    try:
        return tf.make_ndarray(proto)
    except (ValueError, TypeError) as error:
        raise ApiError(400, f"input `{key}`: {error}") from None


# The dtypes whose TensorProto `tensor_content` is their values' little-endian bytes.
PACKED = {
    types_pb2.DT_FLOAT: np.dtype("<f4"),
    types_pb2.DT_DOUBLE: np.dtype("<f8"),
    types_pb2.DT_HALF: np.dtype("<f2"),
    types_pb2.DT_INT8: np.dtype("i1"),
    types_pb2.DT_UINT8: np.dtype("u1"),
    types_pb2.DT_INT16: np.dtype("<i2"),
    types_pb2.DT_UINT16: np.dtype("<u2"),
    types_pb2.DT_INT32: np.dtype("<i4"),
    types_pb2.DT_UINT32: np.dtype("<u4"),
    types_pb2.DT_INT64: np.dtype("<i8"),
    types_pb2.DT_UINT64: np.dtype("<u8"),
    types_pb2.DT_BOOL: np.dtype("?"),
}

# TensorProto's field for the values of each dtype, as TensorFlow Serving writes its
# outputs (Tensor::AsProtoField, not tensor_content), and the dtype its values are read as
# (None: their own): clients that read `outputs["y"].float_val` get what they get from
# TensorFlow Serving.
FIELDS = {
    types_pb2.DT_FLOAT: ("float_val", None),
    types_pb2.DT_DOUBLE: ("double_val", None),
    types_pb2.DT_HALF: ("half_val", np.uint16),
    types_pb2.DT_BFLOAT16: ("half_val", np.uint16),
    types_pb2.DT_INT8: ("int_val", None),
    types_pb2.DT_UINT8: ("int_val", None),
    types_pb2.DT_INT16: ("int_val", None),
    types_pb2.DT_UINT16: ("int_val", None),
    types_pb2.DT_INT32: ("int_val", None),
    types_pb2.DT_UINT32: ("uint32_val", None),
    types_pb2.DT_INT64: ("int64_val", None),
    types_pb2.DT_UINT64: ("uint64_val", None),
    types_pb2.DT_BOOL: ("bool_val", None),
    types_pb2.DT_STRING: ("string_val", None),
    types_pb2.DT_COMPLEX64: ("scomplex_val", np.float32),
    types_pb2.DT_COMPLEX128: ("dcomplex_val", np.float64),
}


def fill_tensor(target, array):
    """`target`, a TensorProto, holding `array` as TensorFlow Serving writes an output: its
    dtype, its shape, its values in the dtype's field, in one C-level copy of the list."""
    dtype = tf.as_dtype(array.dtype).as_datatype_enum
    found = FIELDS.get(dtype)
    if found is None:  # no output of a served model has another dtype; kept as TensorFlow writes it
        target.CopyFrom(tf.make_tensor_proto(array))
        return
    field, view = found
    target.dtype = dtype
    for size in array.shape:
        target.tensor_shape.dim.add(size=size)
    getattr(target, field).extend((array if view is None else array.view(view)).ravel().tolist())


def serialized_examples(source):
    """The serialized tf.train.Examples of a classify, regress or multi-inference Input;
    with a context, the context's features go first in each (an example's own win)."""
    kind = source.WhichOneof("kind")
    if kind == "example_list":
        found = [example.SerializeToString() for example in source.example_list.examples]
    elif kind == "example_list_with_context":
        context = source.example_list_with_context.context.SerializeToString()
        found = [context + example.SerializeToString() for example in source.example_list_with_context.examples]
    else:
        found = []
    if not found:
        raise ApiError(400, "Input is empty")
    return found


async def examples_outputs(servable, signature_name, verb, serialized):
    input_name = example_input(servable, signature_name, verb)
    return await run(servable, signature_name, {input_name: serialized})


def fill_classification(result, outputs, count):
    for row in classifications(outputs, count):
        classes = result.classifications.add()
        for label, score in row:
            classes.classes.add(label=label, score=float(score))


def fill_regression(result, outputs, _count):
    for value in regressions(outputs):
        result.regressions.add(value=float(value))


class PredictionService:
    def __init__(self, models):
        self.models = models

    async def Predict(self, request, context):
        async def work():
            servable = grpc_servable(self.models, request.model_spec)
            signature_name = request.model_spec.signature_name or DEFAULT_SIGNATURE
            signature = signature_of(servable, signature_name)
            check_input_names(signature.inputs, request.inputs)
            arrays = {key: array_of(proto, key, signature.inputs[key]) for key, proto in request.inputs.items()}
            outputs = await run_arrays(servable, signature_name, signature, arrays)
            wanted = list(request.output_filter) or sorted(outputs)
            unknown = [name for name in wanted if name not in outputs]
            if unknown:
                raise ApiError(
                    400, f"output_filter names {names_text(unknown)}; the signature's outputs are {names_text(sorted(outputs))}"
                )
            twice = next((name for index, name in enumerate(wanted) if name in wanted[:index]), None)
            if twice is not None:
                raise ApiError(400, f"duplicate output tensor alias: {twice}")
            response = predict_pb2.PredictResponse()
            answered_spec(response.model_spec, servable, signature_name)
            for name in wanted:
                fill_tensor(response.outputs[name], outputs[name])
            return response

        return await grpc_answer(context, self.models, "predict", request.model_spec.name, work)

    async def Classify(self, request, context):
        response = classification_pb2.ClassificationResponse()
        return await self.on_examples(request, context, "classify", response, fill_classification)

    async def Regress(self, request, context):
        response = regression_pb2.RegressionResponse()
        return await self.on_examples(request, context, "regress", response, fill_regression)

    async def on_examples(self, request, context, verb, response, fill):
        """Classify or Regress: the signature run on the request's examples, its outputs
        written into `response` by `fill`."""

        async def work():
            servable = grpc_servable(self.models, request.model_spec)
            signature_name = request.model_spec.signature_name or DEFAULT_SIGNATURE
            serialized = serialized_examples(request.input)
            outputs = await examples_outputs(servable, signature_name, verb, serialized)
            answered_spec(response.model_spec, servable, signature_name)
            fill(response.result, outputs, len(serialized))
            return response

        return await grpc_answer(context, self.models, verb, request.model_spec.name, work)

    async def MultiInference(self, request, context):
        """Each task a classify or regress signature of one model, on the same examples,
        each signature once (TensorFlow Serving's rules)."""

        async def work():
            if not request.tasks:
                raise ApiError(400, "MultiInferenceRequest must have at least one task")
            if len({task.model_spec.name for task in request.tasks}) > 1:
                raise ApiError(400, "All ModelSpecs in a MultiInferenceRequest must access the same model name.")
            servable = grpc_servable(self.models, request.tasks[0].model_spec)
            serialized = serialized_examples(request.input)
            response = inference_pb2.MultiInferenceResponse()
            seen = set()
            for task in request.tasks:
                signature_name = task.model_spec.signature_name or DEFAULT_SIGNATURE
                if signature_name in seen:
                    raise ApiError(400, f"Duplicate evaluation of signature: {signature_name}")
                seen.add(signature_name)
                verb = METHODS.get(task.method_name)
                if verb is None:
                    raise ApiError(400, f"Unsupported signature method_name: {task.method_name[:200]}")
                outputs = await examples_outputs(servable, signature_name, verb, serialized)
                result = response.results.add()
                answered_spec(result.model_spec, servable, signature_name)
                if verb == "classify":
                    fill_classification(result.classification_result, outputs, len(serialized))
                else:
                    fill_regression(result.regression_result, outputs, len(serialized))
            return response

        return await grpc_answer(context, self.models, "multi_inference", request.tasks[0].model_spec.name if request.tasks else "", work)

    async def GetModelMetadata(self, request, context):
        async def work():
            servable = grpc_servable(self.models, request.model_spec)
            fields = list(request.metadata_field)
            if not fields:
                raise ApiError(400, "GetModelMetadataRequest must specify at least one metadata_field")
            for field in fields:
                if field != "signature_def":
                    raise ApiError(400, f"Metadata field {field[:200]} is not supported")
            definitions = get_model_metadata_pb2.SignatureDefMap()
            for key, definition in servable.signature_def_protos.items():
                definitions.signature_def[key].CopyFrom(definition)
            response = get_model_metadata_pb2.GetModelMetadataResponse()
            answered_spec(response.model_spec, servable, "")
            response.model_spec.ClearField("signature_name")
            response.metadata["signature_def"].Pack(definitions)
            return response

        return await grpc_answer(context, self.models, "metadata", request.model_spec.name, work)


class ModelService:
    def __init__(self, models):
        self.models = models

    async def GetModelStatus(self, request, context):
        async def work():
            spec = request.model_spec
            if not spec.name:
                raise ApiError(400, "Missing model name in request.")
            choice = spec.WhichOneof("version_choice")
            status = self.models.status(spec.name, spec.version.value if choice == "version" else None)
            response = get_model_status_pb2.GetModelStatusResponse()
            for entry in status["model_version_status"]:
                found = response.model_version_status.add()
                found.version = int(entry["version"])
                found.state = get_model_status_pb2.ModelVersionStatus.State.Value(entry["state"])
                found.status.error_code = ERROR_CODES[entry["status"]["error_code"]]
                found.status.error_message = entry["status"]["error_message"]
            return response

        return await grpc_answer(context, self.models, "status", request.model_spec.name, work)

    async def HandleReloadConfigRequest(self, request, context):
        """The config applied and its models loaded before the answer, as TensorFlow
        Serving's; it stays in force until the model config file changes."""

        async def work():
            if not ALLOW_RELOAD_CONFIG:
                raise ApiError(501, RELOAD_OFF)
            config = parse_model_config(text_format.MessageToString(request.config))
            await asyncio.to_thread(self.models.reload, config)
            response = model_management_pb2.ReloadConfigResponse()
            response.status.error_code = 0
            return response

        return await grpc_answer(context, self.models, "reload", "", work)


class Slots:
    """The gRPC calls being answered (their message in), at most MAX_IN_FLIGHT. Used on the
    gRPC loop only."""

    in_flight = 0


def unary(method, request_type, response_type, slots):
    """A unary method of the API, served as grpcio serves a stream of requests: the bytes on
    the wire are the same (headers, one message, the end). grpcio hands a unary call over
    once its message is in, but counts it against `maximum_concurrent_rpcs` from its
    headers: 300 calls that never sent a message held every slot, and every other client
    was told RESOURCE_EXHAUSTED for as long as they liked. Here the call waits at most
    MESSAGE_SECONDS for its message (DEADLINE_EXCEEDED), holding its stream and nothing
    else, then takes a slot (RESOURCE_EXHAUSTED when all are taken) until it is answered.
    The message is parsed here, so bytes that are no `request_type` are INVALID_ARGUMENT
    (grpcio's parser answered UNKNOWN and logged a traceback)."""

    async def handler(_requests, context):
        try:
            data = await asyncio.wait_for(context.read(), MESSAGE_SECONDS)
        except asyncio.TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, SLOW_MESSAGE)
        if data is grpc.aio.EOF:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call ended without its request message")
        try:
            request = request_type.FromString(data)
        except DecodeError as error:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"the request message is no {request_type.DESCRIPTOR.name}: {error}"
            )
        del data
        if slots.in_flight >= MAX_IN_FLIGHT:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, BUSY_CALLS)
        slots.in_flight += 1
        try:
            return await method(request, context)
        finally:
            slots.in_flight -= 1

    return grpc.stream_unary_rpc_method_handler(handler, response_serializer=response_type.SerializeToString)


def grpc_handlers(models):
    """TensorFlow Serving's two services, each method `unary`, sharing the slots."""
    prediction, model_service, slots = PredictionService(models), ModelService(models), Slots()
    services = {
        "tensorflow.serving.PredictionService": {
            "Predict": (prediction.Predict, predict_pb2.PredictRequest, predict_pb2.PredictResponse),
            "Classify": (
                prediction.Classify, classification_pb2.ClassificationRequest, classification_pb2.ClassificationResponse
            ),
            "Regress": (prediction.Regress, regression_pb2.RegressionRequest, regression_pb2.RegressionResponse),
            "MultiInference": (
                prediction.MultiInference, inference_pb2.MultiInferenceRequest, inference_pb2.MultiInferenceResponse
            ),
            "GetModelMetadata": (
                prediction.GetModelMetadata,
                get_model_metadata_pb2.GetModelMetadataRequest,
                get_model_metadata_pb2.GetModelMetadataResponse,
            ),
        },
        "tensorflow.serving.ModelService": {
            "GetModelStatus": (
                model_service.GetModelStatus,
                get_model_status_pb2.GetModelStatusRequest,
                get_model_status_pb2.GetModelStatusResponse,
            ),
            "HandleReloadConfigRequest": (
                model_service.HandleReloadConfigRequest,
                model_management_pb2.ReloadConfigRequest,
                model_management_pb2.ReloadConfigResponse,
            ),
        },
    }
    return tuple(
        grpc.method_handlers_generic_handler(
            service, {name: unary(method, request, response, slots) for name, (method, request, response) in methods.items()}
        )
        for service, methods in services.items()
    )


def serve_grpc(models):
    """The gRPC server on GRPC_PORT, on this thread's own event loop: uvloop's, as uvicorn's
    (on the examples' MLP with h2load, 8 clients: p50 1.8-1.9 ms at 280-290 µs of CPU a call,
    against 2.35 ms and 360 µs on asyncio's own loop; one loop shared with uvicorn's did no
    better). No `maximum_concurrent_rpcs`: `unary` counts the calls, from their message
    rather than their headers."""

    async def main():
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_BODY_BYTES),
                ("grpc.max_send_message_length", -1),
                ("grpc.max_concurrent_streams", STREAMS_PER_CONNECTION),
            ],
        )
        server.add_generic_rpc_handlers(grpc_handlers(models))
        server.add_insecure_port(f"0.0.0.0:{GRPC_PORT}")
        await server.start()
        await server.wait_for_termination()

    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main())


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="tfimg: %(message)s")
    models = Models()
    threading.Thread(target=models.watch, name="models", daemon=True).start()
    threading.Thread(target=serve_grpc, args=(models,), name="grpc", daemon=True).start()
    batches = f"batches of up to {MAX_BATCH_ROWS} rows"
    if BATCHING:
        batches = (
            f"TensorFlow Serving's batching: {batches}, waiting up to {BATCHING['batch_timeout_micros']} µs for them, "
            f"{BATCHING['max_enqueued_batches']} queued, {BATCH_THREADS} "
            f"threads, padded to {BATCHING['allowed_batch_sizes'] or 'no allowed sizes'}"
        )
    log.info(
        "model server on port %d (REST) and %d (gRPC): models %s, at most %d requests at once, %s, "
        "%d MiB of request bodies held at once",
        PORT, GRPC_PORT, f"of {MODEL_CONFIG}" if MODEL_CONFIG else f"under {MODELS}", MAX_IN_FLIGHT, batches, BODY_BUDGET >> 20,
    )
    uvicorn.run(
        application(models),
        host="0.0.0.0",
        port=PORT,
        loop="uvloop",
        http=Protocol,
        lifespan="off",
        proxy_headers=False,
        server_header=False,
        access_log=False,
        log_level="warning",
        limit_concurrency=CONNECTIONS,
        timeout_keep_alive=60,
    )


if __name__ == "__main__":
    main()
