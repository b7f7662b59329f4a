"""A loaded version of a model: its signatures, TF2 functions or a TF1 session, and its
warm-up requests; and the ops beyond TensorFlow's own that a SavedModel may need."""

import importlib
import os
import struct
import threading

import numpy as np
import tensorflow as tf
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from tensorflow.core.framework import types_pb2
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, saved_model_pb2
from tensorflow.python.framework import op_def_registry
from tensorflow_serving.apis import prediction_log_pb2

from .batching import Batcher, Worker, batchable
from .errors import ApiError
from .inference import METHODS, check_input_names, example_input, serialized_examples, signature_of
from .settings import BATCHING, DEFAULT_SIGNATURE, MAX_BATCH_ROWS, log
from .tensors import array_of, to_array

# --- Models: load, watch, look up -------------------------------------------------------


def register_text_ops():
    """TensorFlow Text's ops, registered before any model loads, as TensorFlow Serving's
    build links them in: a SavedModel that tokenizes with them (its `tf_text_regression`
    test model) loads only where they are. The serving images carry tensorflow-text at
    their TensorFlow line; where it is missing or does not import (a build for another
    TensorFlow, a missing dependency), the server says so and serves every other model.
    Returns the version registered, or None."""
    try:
        text = importlib.import_module("tensorflow_text")
    except ModuleNotFoundError as error:
        if error.name == "tensorflow_text":
            log.info("TensorFlow Text's ops are not registered: tensorflow_text is not installed")
        else:
            log.warning("TensorFlow Text's ops are not registered: %s", error)
        return None
    except Exception as error:  # whatever it raises, the other models are still served
        log.warning(
            "TensorFlow Text's ops are not registered: importing tensorflow_text failed: %s: %s",
            type(error).__name__,
            error,
        )
        return None
    version = getattr(text, "__version__", "of an unknown version")
    log.info("TensorFlow Text %s: its ops are registered", version)
    return version


class Servable:
    """One loaded version of a model, with a worker per signature once it is called."""

    def __init__(self, name, version, path):
        self.name, self.version = name, version
        graph = read_meta_graph(path)
        self.signature_defs = signature_defs_of(graph)
        self.signature_def_protos = graph.signature_def
        if graph.object_graph_def.nodes:  # written by TensorFlow 2: its functions
            self.model = tf.saved_model.load(path)
            self.signatures = {
                key: FunctionSignature(f) for key, f in self.model.signatures.items()
            }
            self.twin = load_twin(path, graph, self.signatures)
        else:  # written by TensorFlow 1 (an Estimator, tf.compat.v1): its graph in a session
            self.model = tf.compat.v1.Session(graph=tf.Graph())
            loaded = tf.compat.v1.saved_model.loader.load(self.model, ["serve"], path)
            self.signatures = session_signatures(self.model, loaded)
            self.twin = None
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
                    how = (
                        "batched (--enable-batching)"
                        if merge
                        else "each request runs alone (an input or output has no batch dimension)"
                    )
                else:
                    merge = MAX_BATCH_ROWS > 1 and batchable(definition)
                    how = (
                        f"concurrent requests merged, up to {MAX_BATCH_ROWS} rows a call "
                        "(--max-batch 1: never)"
                        if merge
                        else "each request runs alone"
                    )
                log.info(
                    "model %s version %d, signature %s: %s",
                    self.name,
                    self.version,
                    signature_name,
                    how,
                )
                worker = self.workers[signature_name] = (Batcher if BATCHING else Worker)(
                    signature, merge, name
                )
                if self.closed:  # found before the replacement, first called after it
                    worker.close()
            return worker

    def close(self):
        """Replaced by a newer version: its workers end once their queues are empty."""
        with self.lock:
            self.closed = True
            for worker in self.workers.values():
                worker.close()


class FunctionSignature:
    """A signature of a SavedModel written by TensorFlow 2: a function, called with tensors
    of the dtypes and shapes it declares. Where it has a twin (`load_twin`), feeds the
    function takes as they are run there, and any error there is the function's to word."""

    def __init__(self, function):
        self.function = function
        self.inputs = dict(function.structured_input_signature[1])  # name -> tf.TensorSpec
        # What `takes` checks a call's feeds against, worked out once: each input's numpy
        # dtype and spec shape.
        self.feed_specs = {
            key: (spec.dtype.as_numpy_dtype, spec.shape) for key, spec in self.inputs.items()
        }
        self.twin = None  # a SessionSignature

    def __call__(self, feeds):
        if self.twin is not None and self.takes(feeds):
            try:
                return self.twin(feeds)
            except tf.errors.OpError:
                pass  # the function's own error, in its words
        outputs = self.function(**{key: tf.constant(value) for key, value in feeds.items()})
        return {key: value.numpy() for key, value in outputs.items()}

    def takes(self, feeds):
        """Whether the function would take `feeds` as they are: its inputs, each a numpy
        array of its dtype and a shape its spec allows (nothing the twin's feeding would
        convert or let through)."""
        specs = self.feed_specs
        return feeds.keys() == specs.keys() and all(
            isinstance(value, np.ndarray)
            and value.dtype == specs[key][0]
            and specs[key][1].is_compatible_with(value.shape)
            for key, value in feeds.items()
        )


# A TF2 model's twin: its `serve` graph loaded again into a TF1 session that runs each call
# on the caller's thread (`inter_op_parallelism_threads` -1), as TensorFlow Serving runs a
# SavedModel in a session. A call there costs the examples' MLP 47 µs of CPU against 122 µs
# for the function (bench: docs/performance.md), and hands nothing to TensorFlow's pools. A
# twin holds a second copy of the variables, so only models whose variables take at most
# TWIN_MAX_VARIABLE_BYTES have one (past that, computing outweighs the call), on CPU only,
# and only signatures that change nothing (`changes_nothing`) run there: either copy gives
# the same answer, whichever runs a request.
TWIN_MAX_VARIABLE_BYTES = 64 << 20
# Stateful ops that only read: variables and lookup tables read, functions called (the
# functions themselves are looked through).
READ_ONLY_OPS = frozenset(
    {
        "ReadVariableOp",
        "VarHandleOp",
        "StatefulPartitionedCall",
        "LookupTableFindV2",
        "LookupTableSizeV2",
    }
)


def load_twin(path, graph, signatures):
    """The twin session of the TF2 model in `path`, given to each signature that changes
    nothing; None where the model has none. A twin that cannot be made leaves the model as
    it is, logged."""
    variables = os.path.join(path, "variables")
    size = sum(
        os.path.getsize(os.path.join(variables, name))
        for name in (os.listdir(variables) if os.path.isdir(variables) else ())
    )
    if size > TWIN_MAX_VARIABLE_BYTES or tf.config.list_physical_devices("GPU"):
        return None
    pure = [key for key, each in signatures.items() if changes_nothing(each.function)]
    if not pure:
        return None
    try:
        session = tf.compat.v1.Session(
            graph=tf.Graph(),
            config=tf.compat.v1.ConfigProto(inter_op_parallelism_threads=-1),
        )
        loaded = tf.compat.v1.saved_model.loader.load(session, list(graph.meta_info_def.tags), path)
        for key in pure:
            signatures[key].twin = SessionSignature(session, loaded.signature_def[key])
        log.info("the model in %s runs signatures %s in a session too", path, ", ".join(pure))
    except Exception as error:  # any failure: the functions serve alone
        log.warning("the model in %s runs as functions only: %r", path, error)
        for key in pure:
            signatures[key].twin = None
        return None
    return session


def changes_nothing(function):
    """Whether every op the function runs, through the functions it calls, is stateless or
    only reads (READ_ONLY_OPS): then a call changes no state, and two copies of the model
    answer alike."""
    graph = function.graph.as_graph_def()
    library = {each.signature.name: each for each in graph.library.function}
    nodes = list(graph.node) + [node for each in library.values() for node in each.node_def]
    for node in nodes:
        if node.op in ("PartitionedCall", "StatefulPartitionedCall") and (
            node.attr["f"].func.name not in library
        ):
            return False
        definition = op_def_registry.get(node.op)
        if definition is None or (definition.is_stateful and node.op not in READ_ONLY_OPS):
            return False
    return True


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
            raise ValueError(
                f"Number of warmup records exceeds the maximum ({MAX_WARMUP_RECORDS}) at {file}"
            )
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
                raise ValueError(
                    f"a record of the warm-up file {file} claims {length} bytes, "
                    "more than the file holds"
                )


def warm_up_one(servable, logged):
    """One PredictionLog's request run on the servable, as its API would run it."""
    kind = logged.WhichOneof("log_type")
    if kind == "predict_log":
        request = logged.predict_log.request
        signature = signature_of(servable, request.model_spec.signature_name or DEFAULT_SIGNATURE)
        check_input_names(signature.inputs, request.inputs)
        signature(
            {
                key: array_of(proto, key, signature.inputs[key])
                for key, proto in request.inputs.items()
            }
        )
        return
    if kind in ("classify_log", "regress_log"):
        request = getattr(logged, kind).request
        tasks = [
            (request.model_spec.signature_name, "classify" if kind == "classify_log" else "regress")
        ]
    elif kind == "multi_inference_log":
        request = logged.multi_inference_log.request
        tasks = [
            (task.model_spec.signature_name, METHODS.get(task.method_name))
            for task in request.tasks
        ]
        if not tasks or None in (verb for _, verb in tasks):
            raise ApiError(
                400, "a MultiInferenceRequest needs tasks of classify or regress methods"
            )
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
        fields["defaults"] = {
            k: json_format.MessageToDict(v, preserving_proto_field_name=True) for k, v in defaults
        }
        return fields

    return {key: described(signature) for key, signature in graph.signature_def.items()}


SIGNATURE_DEFAULTS = "defaults" in meta_graph_pb2.SignatureDef.DESCRIPTOR.fields_by_name
