# tfimg's model server, generated from spec `@NAME@`: edit the spec, not this file.
#
# TensorFlow Serving's REST API on port @SERVING_PORT@ for every SavedModel under
# @MODELS@/NAME/VERSION/ (numbered folders; the highest version is served, and a new one
# is picked up without a restart):
#
#   GET  /v1/models/NAME[/versions/N]                  status
#   GET  /v1/models/NAME[/versions/N]/metadata         signatures
#   POST /v1/models/NAME[/versions/N]:predict          {"instances": ...} or {"inputs": ...}
#   POST /v1/models/NAME[/versions/N]:classify|regress {"examples": [...], "context": {...}}
#
# Errors are {"error": "..."} with TensorFlow Serving's codes (400 bad request, 404 unknown
# model or version, 413 a body over the cap).
#
# The HTTP server is uvicorn (uvloop's event loop, httptools' parser): one event loop reads
# each request whole and answers it, at most MAX_IN_FLIGHT at once (503 beyond). The model
# runs on one worker thread per signature of the served version, never on the loop: the
# requests that queued while it ran one call are merged into its next call (their rows
# concatenated, then split back), as TensorFlow Serving's batching does, without waiting
# for more. So 8 clients at batch 1 cost a few model calls, not 8; a lone request runs at
# once. Only signatures whose every input and output has two dimensions or more, the first
# unknown (the batch), are merged, at most MAX_BATCH_ROWS rows; TFIMG_SERVING_MAX_BATCH=1
# turns merging off. A body over LARGE_BODY_BYTES is decoded and answered on a thread of
# its own, so one big request does not hold up the others' small ones.
import asyncio
import base64
import json
import logging
import os
import queue
import re
import sys
import threading
import time
import warnings

import numpy as np
import tensorflow as tf
import uvicorn
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2

MODELS = "@MODELS@"
PORT = int("@SERVING_PORT@")
MAX_IN_FLIGHT = 256  # requests being answered at once; past it, 503 with an error
CONNECTIONS = 1024  # uvicorn's own cap on connections (its 503 is plain text)
MAX_BODY_BYTES = 64 * 1024 * 1024
TOO_LARGE = f"the request body is over the server's limit of {MAX_BODY_BYTES} bytes"
LARGE_BODY_BYTES = 256 * 1024  # bodies past this are decoded and answered off the event loop
POLL_SECONDS = 1.0
DEFAULT_SIGNATURE = "serving_default"
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
ROUTE = re.compile(
    r"^/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>[0-9]+))?"
    r"(?:(?P<metadata>/metadata)|:(?P<verb>predict|classify|regress))?$"
)
log = logging.getLogger("tfimg.serving")
# A ragged JSON list is refused by TensorFlow's conversion (to_array), not warned about.
warnings.filterwarnings("ignore", message="Creating an ndarray from ragged")


def max_batch_rows():
    value = os.environ.get("TFIMG_SERVING_MAX_BATCH", "256")
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"TFIMG_SERVING_MAX_BATCH must be a whole number of rows, 1 or more; got {value!r}")
    return int(value)


MAX_BATCH_ROWS = max_batch_rows()


class ApiError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# --- Models: load, watch, look up -------------------------------------------------------


class Servable:
    """One loaded version of a model, with a worker per signature once it is called."""

    def __init__(self, name, version, path):
        self.name, self.version = name, version
        self.model = tf.saved_model.load(path)
        self.signature_defs = read_signature_defs(path)
        self.lock = threading.Lock()
        self.workers = {}
        self.closed = False

    def worker(self, signature_name, signature):
        with self.lock:
            worker = self.workers.get(signature_name)
            if worker is None:
                merge = MAX_BATCH_ROWS > 1 and batchable(self.signature_defs.get(signature_name))
                name = f"{self.name}-{self.version}-{signature_name}"
                log.info(
                    "model %s version %d, signature %s: %s",
                    self.name, self.version, signature_name,
                    f"concurrent requests merged, up to {MAX_BATCH_ROWS} rows a call (--max-batch 1: never)"
                    if merge else "each request runs alone",
                )
                worker = self.workers[signature_name] = Worker(signature, merge, name)
                if self.closed:  # found before the replacement, first called after it
                    worker.close()
            return worker

    def close(self):
        """Replaced by a newer version: its workers end once their queues are empty."""
        with self.lock:
            self.closed = True
            for worker in self.workers.values():
                worker.close()


def batchable(definition):
    """Rows of different requests may share a call when every input and output of the
    signature has two dimensions or more, the first unknown: the batch, as in every Keras
    model. A one-dimensional input (a sequence of tokens, serialized examples) may be
    anything but rows, so such a signature is never merged."""
    if definition is None:
        return False
    tensors = list(definition["inputs"].values()) + list(definition["outputs"].values())
    return bool(tensors) and all(
        not t["tensor_shape"]["unknown_rank"]
        and len(t["tensor_shape"]["dim"]) >= 2
        and t["tensor_shape"]["dim"][0]["size"] == "-1"
        for t in tensors
    )


class Job:
    """One request's inputs (numpy arrays of `rows` rows) and the event loop waiting."""

    def __init__(self, feeds, rows):
        self.feeds, self.rows = feeds, rows
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
        # The version was replaced after the request found it: it still answers.
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
            try:
                self.run(group)
            except BaseException as error:  # the thread lives on; nobody is left waiting
                for job in group:
                    job.settle(None, RuntimeError(f"the model call failed: {error!r}"))

    def call(self, feeds):
        outputs = self.signature(**{key: tf.constant(value) for key, value in feeds.items()})
        return {key: value.numpy() for key, value in outputs.items()}

    def run(self, group):
        if len(group) > 1:
            rows = sum(job.rows for job in group)
            try:
                outputs = self.call({key: np.concatenate([job.feeds[key] for job in group]) for key in group[0].feeds})
            except Exception:
                outputs = None
            if outputs is not None and all(value.ndim and value.shape[0] == rows for value in outputs.values()):
                start = 0
                for job in group:
                    job.settle({key: value[start : start + job.rows] for key, value in outputs.items()})
                    start += job.rows
                return
        for job in group:
            try:
                job.settle(self.call(job.feeds))
            except Exception as error:  # the request's own error, answered to it
                job.settle(None, error)


def read_signature_defs(path):
    """The `serve` graph's signature_defs from saved_model.pb, as TensorFlow Serving's
    metadata shows them (every field, defaults included)."""
    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as file:
        saved.ParseFromString(file.read())
    graphs = [g for g in saved.meta_graphs if "serve" in g.meta_info_def.tags]
    graph = (graphs or list(saved.meta_graphs))[0]

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

    return {
        key: {
            "inputs": {k: tensor(v) for k, v in signature.inputs.items()},
            "outputs": {k: tensor(v) for k, v in signature.outputs.items()},
            "method_name": signature.method_name,
        }
        for key, signature in graph.signature_def.items()
        if not key.startswith("__")
    }


class Models:
    """The models under MODELS: the highest version of each is served; a version that
    appears later is loaded once its files stopped changing, then replaces the old one."""

    def __init__(self):
        self.lock = threading.Lock()
        self.served = {}  # name -> Servable
        self.states = {}  # name -> {version: (state, error message)}
        self.seen = {}  # (name, version) -> its files at the last poll
        self.failed = {}  # (name, version) -> its files when loading them failed

    def watch(self):
        first = True
        while True:
            try:
                self.poll(wait_for_quiet=not first)
            except Exception:  # a poll must never end the watcher
                log.exception("scanning %s failed", MODELS)
            first = False
            time.sleep(POLL_SECONDS)

    def poll(self, wait_for_quiet):
        """Loads each model's highest version when it is not served yet. After the first
        poll, a version is loaded only once its files are as they were a poll ago (a copy
        in progress is not read half-way), and one that failed only once its files change."""
        for name, versions in scan(MODELS).items():
            if not versions:
                continue
            version = max(versions)
            current = self.served.get(name)
            if current is not None and current.version == version:
                continue
            key = (name, version)
            files = files_of(versions[version])
            changed = self.seen.get(key) != files
            self.seen[key] = files
            if self.failed.get(key) == files or (wait_for_quiet and changed):
                continue
            self.load(name, version, versions[version], files)

    def load(self, name, version, path, files):
        self.set_state(name, version, "LOADING", "")
        log.info("loading model %s version %d from %s", name, version, path)
        try:
            servable = Servable(name, version, path)
        except Exception as error:  # any broken SavedModel: reported in the status
            self.failed[(name, version)] = files
            self.set_state(name, version, "END", f"loading failed: {error}")
            log.error("model %s version %d could not be loaded: %s", name, version, error)
            return
        with self.lock:
            old = self.served.get(name)
            self.served[name] = servable
            states = self.states.setdefault(name, {})
            states[version] = ("AVAILABLE", "")
            if old is not None:
                states[old.version] = ("END", "")
        if old is not None:
            old.close()
        log.info("serving model %s version %d", name, version)

    def set_state(self, name, version, state, message):
        with self.lock:
            self.states.setdefault(name, {})[version] = (state, message)

    def status(self, name, version):
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

    def get(self, name, version):
        with self.lock:
            servable = self.served.get(name)
        if servable is None or (version is not None and servable.version != version):
            wanted = "Latest" if version is None else "Specific"
            detail = name if version is None else f"{name}, {version}"
            raise ApiError(404, f"Servable not found for request: {wanted}({detail})")
        return servable


def scan(folder):
    """{model name: {version: path}} for the numbered SavedModel folders under `folder`."""
    found = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        base = os.path.join(folder, name)
        if not MODEL_NAME.match(name) or not os.path.isdir(base):
            continue
        found[name] = {}
        for entry in os.listdir(base):
            path = os.path.join(base, entry)
            if entry.isdigit() and os.path.isfile(os.path.join(path, "saved_model.pb")):
                found[name][int(entry)] = path
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


def decode(value):
    """{"b64": ...} objects (anywhere in a nested list) become bytes."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"b64"} and isinstance(value["b64"], str):
            return base64.b64decode(value["b64"])
        raise ApiError(400, f"JSON object {json.dumps(value)[:200]} is not a tensor value")
    return value


def to_array(value, spec, name):
    """A JSON value as a numpy array of the input's dtype, by TensorFlow's conversion rules
    (1.5 is no int32, 2**40 no int32, true no float). Numbers go through numpy directly,
    which costs a fraction of TensorFlow's conversion; anything else through TensorFlow."""
    dtype = spec.dtype
    try:
        decoded = decode(value)
        if dtype.is_bool or dtype.is_integer or (dtype.is_floating and dtype != tf.bfloat16):
            array = np.asarray(decoded)
            kind = array.dtype.kind
            if (
                (dtype.is_bool and kind == "b")
                or (dtype.is_integer and kind in "iu" and fits_in(array, dtype))
                or (dtype.is_floating and kind in "iuf")
            ):
                return array.astype(dtype.as_numpy_dtype, copy=False)
        return tf.constant(decoded, dtype=dtype).numpy()
    except ApiError:
        raise
    except (ValueError, TypeError, tf.errors.InvalidArgumentError) as error:
        raise ApiError(400, f"input `{name}`: {error}") from None


def fits_in(array, dtype):
    # Python ints: numpy 1.23 compares uint64 with int64 as floats (2**63 would pass).
    return array.size == 0 or (dtype.min <= int(array.min()) and int(array.max()) <= dtype.max)


def to_json(array, name):
    """A numpy array as JSON values: float32 in its shortest form, bytes as text (or
    base64 objects for outputs named `*_bytes`, as TensorFlow Serving does)."""
    if array.dtype == np.float32:
        shortest = [float(str(x)) for x in array.reshape(-1)]
        return np.array(shortest, dtype=np.float64).reshape(array.shape).tolist()
    if array.dtype == object:
        as_text = name.endswith("_bytes")

        def text(item):
            if as_text:
                return {"b64": base64.b64encode(item).decode()}
            return item.decode("utf-8", "replace")

        return np.vectorize(text, otypes=[object])(array).tolist() if array.size else []
    return array.tolist()


async def run(servable, signature_name, feeds):
    signature = servable.model.signatures.get(signature_name)
    if signature is None:
        raise ApiError(400, f'Serving signature name: "{signature_name}" not found in signature def')
    specs = signature.structured_input_signature[1]
    missing = sorted(set(specs) - set(feeds))
    extra = sorted(set(feeds) - set(specs))
    if missing or extra:
        raise ApiError(
            400,
            f"inputs {missing} missing and {extra} unknown; the signature takes {sorted(specs)}",
        )
    arrays = {key: to_array(value, specs[key], key) for key, value in feeds.items()}
    for key, array in arrays.items():
        if not specs[key].shape.is_compatible_with(array.shape):
            wanted = [d if d is not None else -1 for d in specs[key].shape.as_list()]
            raise ApiError(400, f"input `{key}` has shape {list(array.shape)}; the signature takes {wanted}")
    rows = {array.shape[0] if array.ndim else None for array in arrays.values()}
    # Inputs without one common first dimension (0 rows here) are never merged.
    job = Job(arrays, rows.pop() if len(rows) == 1 and None not in rows else 0)
    servable.worker(signature_name, signature).submit(job)
    try:
        return await job.future
    except (ValueError, TypeError, tf.errors.InvalidArgumentError) as error:
        lines = [line.strip() for line in str(error).splitlines()]
        detail = [line for line in lines if line and not line.startswith(("Graph execution error", "Detected at node"))]
        raise ApiError(400, " ".join(detail)[:1000] or "the model refused the input") from None


async def predict(servable, body):
    signature_name = body.get("signature_name", DEFAULT_SIGNATURE)
    signature = servable.model.signatures.get(signature_name)
    input_names = sorted(signature.structured_input_signature[1]) if signature else []
    if ("instances" in body) == ("inputs" in body):
        raise ApiError(400, "the request needs one of `instances` (row format) or `inputs` (columnar format)")
    if "instances" in body:
        instances = body["instances"]
        if not isinstance(instances, list):
            raise ApiError(400, "`instances` must be a list")
        if instances and all(isinstance(i, dict) for i in instances) and not is_b64(instances[0]):
            feeds = {key: [i.get(key) for i in instances] for key in instances[0]}
        elif len(input_names) == 1:
            feeds = {input_names[0]: instances}
        else:
            raise ApiError(400, f"the signature takes {input_names}: give each instance as an object")
        outputs = await run(servable, signature_name, feeds)
        return {"predictions": rows(outputs)}
    inputs = body["inputs"]
    if isinstance(inputs, dict) and not is_b64(inputs):
        feeds = inputs
    elif len(input_names) == 1:
        feeds = {input_names[0]: inputs}
    else:
        raise ApiError(400, f"the signature takes {input_names}: give `inputs` as an object")
    outputs = await run(servable, signature_name, feeds)
    if len(outputs) == 1:
        (name, value), = outputs.items()
        return {"outputs": to_json(value, name)}
    return {"outputs": {name: to_json(value, name) for name, value in outputs.items()}}


def is_b64(value):
    return isinstance(value, dict) and set(value) == {"b64"}


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
    """One tf.train.Example from a JSON object of feature values."""
    built = tf.train.Example()
    for key, value in features.items():
        values = decode(value if isinstance(value, list) else [value])
        feature = built.features.feature[key]
        if all(isinstance(v, bool) or isinstance(v, int) for v in values):
            feature.int64_list.value.extend(int(v) for v in values)
        elif all(isinstance(v, (int, float)) for v in values):
            feature.float_list.value.extend(float(v) for v in values)
        elif all(isinstance(v, (str, bytes)) for v in values):
            feature.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
        else:
            raise ApiError(400, f"feature `{key}` mixes numbers and strings")
    return built.SerializeToString()


async def classify_or_regress(servable, body, verb):
    signature_name = body.get("signature_name", DEFAULT_SIGNATURE)
    method = f"tensorflow/serving/{verb}"
    definition = servable.signature_defs.get(signature_name)
    if definition is None:
        raise ApiError(400, f'Serving signature name: "{signature_name}" not found in signature def')
    if definition["method_name"] != method:
        raise ApiError(
            400,
            f"Expected {verb} signature method_name to be {method}. Was: {definition['method_name']}",
        )
    examples = body.get("examples")
    context = body.get("context", {})
    if not isinstance(examples, list) or not all(isinstance(e, dict) for e in examples):
        raise ApiError(400, "`examples` must be a list of objects")
    if not isinstance(context, dict):
        raise ApiError(400, "`context` must be an object")
    serialized = [example({**context, **item}) for item in examples]
    (input_name,) = definition["inputs"]
    outputs = await run(servable, signature_name, {input_name: serialized})
    if verb == "regress":
        return {"results": to_json(outputs["outputs"].reshape(-1), "outputs")}
    scores = outputs.get("scores")
    classes = outputs.get("classes")
    count = len(examples)
    results = []
    for row in range(count):
        width = (scores if scores is not None else classes).shape[-1]
        labels = [c.decode() for c in classes[row]] if classes is not None else [""] * width
        values = to_json(scores[row], "scores") if scores is not None else [0.0] * width
        results.append([[label, score] for label, score in zip(labels, values)])
    return {"results": results}


# --- HTTP ---------------------------------------------------------------------------------


async def handle(models, method, path, body):
    match = ROUTE.match(path)
    verb = match and match["verb"]
    if match is None or method != ("POST" if verb else "GET"):
        # As TensorFlow Serving: its API's paths are bad requests, others are not found.
        status = 400 if path.startswith("/v1/") else 404
        raise ApiError(status, f"Malformed request: {method} {path}")
    name = match["name"]
    version = int(match["version"]) if match["version"] else None
    if verb is None:
        if match["metadata"]:
            servable = models.get(name, version)
            return {
                "model_spec": {"name": name, "signature_name": "", "version": str(servable.version)},
                "metadata": {"signature_def": {"signature_def": servable.signature_defs}},
            }
        return models.status(name, version)
    servable = models.get(name, version)
    try:
        body = json.loads(body or b"null")
    except ValueError as error:
        raise ApiError(400, f"JSON Parse error: {error}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if verb == "predict":
        return await predict(servable, body)
    return await classify_or_regress(servable, body, verb)


async def read_body(receive):
    """The request's body, or ApiError 413 past MAX_BODY_BYTES (counted as it arrives, so a
    chunked body without a length is capped too)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, TOO_LARGE)
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def respond(models, method, path, body):
    """The status and JSON bytes that answer one request."""
    try:
        status, answer = 200, await handle(models, method, path, body)
    except ApiError as error:
        status, answer = error.status, {"error": str(error)}
    except Exception as error:  # a bug or a TensorFlow failure: the client learns it
        log.exception("request failed")
        status, answer = 500, {"error": f"{type(error).__name__}: {error}"}
    return status, json.dumps(answer).encode()


def answer_apart(models, method, path, body):
    """`respond` on an event loop of this worker thread's own: a large body's JSON is read,
    converted and written here, while the main loop goes on serving everyone else."""
    return asyncio.run(respond(models, method, path, body))


def application(models):
    in_flight = 0

    async def app(scope, receive, send):
        nonlocal in_flight
        if scope["type"] != "http":
            return
        if in_flight >= MAX_IN_FLIGHT:
            busy = f"the server is answering {MAX_IN_FLIGHT} requests already: try again shortly"
            await answer(send, 503, json.dumps({"error": busy}).encode(), close=False)
            return
        in_flight += 1
        try:
            await serve_one(models, scope, receive, send)
        finally:
            in_flight -= 1

    return app


async def serve_one(models, scope, receive, send):
    close = False
    try:
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise ApiError(413, TOO_LARGE)
        body = await read_body(receive)
    except ApiError as error:
        body, close = None, True  # the rest of the body is not read
        status, payload = error.status, json.dumps({"error": str(error)}).encode()
    else:
        if body is None:  # the client went away
            return
        method, path = scope["method"], scope["path"]
        if len(body) > LARGE_BODY_BYTES:  # on the default executor's bounded pool
            status, payload = await asyncio.to_thread(answer_apart, models, method, path, body)
        else:
            status, payload = await respond(models, method, path, body)
    await answer(send, status, payload, close)


async def answer(send, status, payload, close):
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="tfimg: %(message)s")
    models = Models()
    threading.Thread(target=models.watch, name="models", daemon=True).start()
    log.info(
        "model server on port %d: models under %s, at most %d requests at once, batches of up to %d rows",
        PORT, MODELS, MAX_IN_FLIGHT, MAX_BATCH_ROWS,
    )
    uvicorn.run(
        application(models),
        host="0.0.0.0",
        port=PORT,
        loop="uvloop",
        http="httptools",
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
