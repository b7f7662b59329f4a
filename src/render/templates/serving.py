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
# model or version). The HTTP server is waitress: a fixed pool of worker threads behind
# one I/O thread that reads each request whole (a slow client holds no worker), and a
# request body cap (413).
import base64
import json
import logging
import os
import re
import sys
import threading
import time

import numpy as np
import tensorflow as tf
import waitress
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import saved_model_pb2

MODELS = "@MODELS@"
PORT = int("@SERVING_PORT@")
THREADS = 8
MAX_BODY_BYTES = 64 * 1024 * 1024
POLL_SECONDS = 1.0
DEFAULT_SIGNATURE = "serving_default"
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
ROUTE = re.compile(
    r"^/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>[0-9]+))?"
    r"(?:(?P<metadata>/metadata)|:(?P<verb>predict|classify|regress))?$"
)
log = logging.getLogger("tfimg.serving")


class ApiError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# --- Models: load, watch, look up -------------------------------------------------------


class Servable:
    """One loaded version of a model."""

    def __init__(self, name, version, path):
        self.name, self.version = name, version
        self.model = tf.saved_model.load(path)
        self.signature_defs = read_signature_defs(path)


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


def to_tensor(value, spec, name):
    try:
        return tf.constant(decode(value), dtype=spec.dtype)
    except ApiError:
        raise
    except (ValueError, TypeError, tf.errors.InvalidArgumentError) as error:
        raise ApiError(400, f"input `{name}`: {error}") from None


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


def run(servable, signature_name, feeds):
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
    tensors = {key: to_tensor(value, specs[key], key) for key, value in feeds.items()}
    for key, tensor in tensors.items():
        if not specs[key].shape.is_compatible_with(tensor.shape):
            wanted = [d if d is not None else -1 for d in specs[key].shape.as_list()]
            raise ApiError(400, f"input `{key}` has shape {tensor.shape.as_list()}; the signature takes {wanted}")
    try:
        outputs = signature(**tensors)
    except (ValueError, TypeError, tf.errors.InvalidArgumentError) as error:
        lines = [line.strip() for line in str(error).splitlines()]
        detail = [line for line in lines if line and not line.startswith(("Graph execution error", "Detected at node"))]
        raise ApiError(400, " ".join(detail)[:1000] or "the model refused the input") from None
    return {key: value.numpy() for key, value in outputs.items()}


def predict(servable, body):
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
        outputs = run(servable, signature_name, feeds)
        return {"predictions": rows(outputs)}
    inputs = body["inputs"]
    if isinstance(inputs, dict) and not is_b64(inputs):
        feeds = inputs
    elif len(input_names) == 1:
        feeds = {input_names[0]: inputs}
    else:
        raise ApiError(400, f"the signature takes {input_names}: give `inputs` as an object")
    outputs = run(servable, signature_name, feeds)
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


def classify_or_regress(servable, body, verb):
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
    outputs = run(servable, signature_name, {input_name: serialized})
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


def handle(models, method, path, read_body):
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
        body = json.loads(read_body() or b"null")
    except ValueError as error:
        raise ApiError(400, f"JSON Parse error: {error}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    if verb == "predict":
        return predict(servable, body)
    return classify_or_regress(servable, body, verb)


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}


def application(models):
    def app(environ, start_response):
        def read_body():
            length = int(environ.get("CONTENT_LENGTH") or 0)
            return environ["wsgi.input"].read(length)

        try:
            status, answer = 200, handle(models, environ["REQUEST_METHOD"], environ["PATH_INFO"], read_body)
        except ApiError as error:
            status, answer = error.status, {"error": str(error)}
        except Exception as error:  # a bug or a TensorFlow failure: the client learns it
            log.exception("request failed")
            status, answer = 500, {"error": f"{type(error).__name__}: {error}"}
        payload = json.dumps(answer).encode()
        start_response(
            f"{status} {REASONS[status]}",
            [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))],
        )
        return [payload]

    return app


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="tfimg: %(message)s")
    models = Models()
    threading.Thread(target=models.watch, name="models", daemon=True).start()
    log.info("model server on port %d: models under %s, %d worker threads", PORT, MODELS, THREADS)
    waitress.serve(
        application(models),
        host="0.0.0.0",
        port=PORT,
        threads=THREADS,
        max_request_body_size=MAX_BODY_BYTES,
        connection_limit=256,
        channel_timeout=60,
        ident="tfimg-serving",
    )


if __name__ == "__main__":
    main()
