"""The link to the compiled front (`tfimg-serving-front`, docs/performance.md): predicts the
front decoded, run by the signatures' workers as REST's are, their outputs sent back as raw
arrays for the front to write.

The front holds the published REST and gRPC ports; this process serves its HTTP and its
gRPC on Unix sockets (every request the front does not decode, passed whole) and this link
on another. Both
sockets are in a folder only this container's user can enter; what comes over them is what
the front decoded from clients, so the link checks it as REST checks a request: the model,
version and signature looked up the same way, the inputs' names, shapes and values checked
against the signature (`inference.run_arrays`), errors answered with the same status and
text, and over gRPC with the same code. A request the link cannot answer exactly as the API
it came by would (an input or output that is not a number or a bool; over gRPC an input
whose dtype is not the signature's) is answered FALLBACK before anything runs, and the
front passes the client's request whole to the HTTP or gRPC socket.

The front sends the predicts of one model, version, signature and input shapes (past their
rows) that queue while that signature's frames are being answered as one frame, whose
values are the requests' rows one after another: read, looked up, checked and converted
once, and run as one job where the worker merges rows anyway.

Frames, little-endian, each `u32 length` then its bytes:
  request:  u64 frame id, u32 requests, each: u64 request id, u64 rows; u8 API (REST,
            GRPC), str model, u8 version kind (0 none, 1 number: i64, 2 label: str),
            str signature, u16 inputs, each: str name ("" = the signature's only input),
            u8 dtype (DTYPES), u8 rank, u64 dims[rank] (the first: all requests' rows), the
            values of every request, one after another
            or u32 0, u8 API and str model: a request the front refused as busy (its
            MOST_IN_FLIGHT of the API's requests were held), for the metrics; no answer
  answer:   u64 id (the frame's: the answer of each of its requests, outputs split at their
            rows; or one request's), u8 kind: OK (i64 version, str signature, u16 outputs,
            each as an input: over REST float32 outputs as float64 with TensorFlow
            Serving's digits, ints as int64; over gRPC in their own dtype), ERROR (u16 HTTP
            status, or over gRPC the status code, then the text as UTF-8), FALLBACK
where `str` is u16 length and UTF-8.
"""

import os
import socket
import struct
import threading
import time

import grpc
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import types_pb2

from .batching import Job
from .errors import FAILED, ApiError, client_text, grpc_code_of
from .inference import REQUEST_ERRORS, check_input_names, rows_of, shape_refused, signature_of
from .metrics import record_request, status_name
from .settings import (
    BUSY,
    BUSY_CALLS,
    DEFAULT_SIGNATURE,
    MAX_BATCH_ROWS,
    MAX_DECODED_BYTES,
    MAX_IN_FLIGHT,
    log,
)
from .tensors import PACKED

OK, ERROR, FALLBACK = 0, 1, 2
REST, GRPC = 0, 1
ENTRYPOINTS = {REST: "REST", GRPC: "GRPC"}
# Each API's answer when its MAX_IN_FLIGHT slots are taken (the front holds as many, so
# these are its words too).
BUSY_ERRORS = {
    REST: ApiError(503, BUSY),
    GRPC: ApiError(503, BUSY_CALLS, grpc.StatusCode.RESOURCE_EXHAUSTED),
}
# The link's dtypes, by tag: TensorFlow's DataType numbers (the front writes gRPC's
# TensorProtos with them); what JSON numbers become is float64 and int64.
DTYPES = {tag: dtype for tag, dtype in PACKED.items() if tag != types_pb2.DT_HALF}
TAGS = {dtype: tag for tag, dtype in DTYPES.items()}
MAX_FRAME = MAX_DECODED_BYTES  # what the front sends is at most a body's decoded values
MAX_PARTS = 256  # requests in one frame (the front's MOST_PARTS)
FLOATS = (tf.float16, tf.bfloat16, tf.float32, tf.float64)
INTEGERS = (tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16, tf.uint32, tf.uint64)
# The outputs the front writes as REST writes them (the signature_def's names of dtypes).
WRITTEN = {"DT_FLOAT", "DT_DOUBLE", "DT_BOOL"} | {
    f"DT_{kind}{bits}" for kind in ("INT", "UINT") for bits in (8, 16, 32, 64)
}


class Fallback(Exception):
    """The request is not the link's to answer: the front passes it to REST whole."""


class Reader:
    """The fields of one request frame, in order; a frame that ends early or claims more
    than it holds is a broken front (the link's connection ends)."""

    def __init__(self, data):
        self.data, self.at = memoryview(data), 0

    def take(self, size):
        if size < 0 or self.at + size > len(self.data):
            raise ValueError("a frame shorter than its fields")
        part = self.data[self.at : self.at + size]
        self.at += size
        return part

    def unpack(self, layout):
        return struct.unpack(layout, self.take(struct.calcsize(layout)))

    def text(self):
        (size,) = self.unpack("<H")
        return bytes(self.take(size)).decode("utf-8")

    def array(self):
        name = self.text()
        tag, rank = self.unpack("<BB")
        if tag not in DTYPES:
            raise ValueError(f"dtype tag {tag}")
        shape = self.unpack(f"<{rank}Q")
        count = 1
        for dim in shape:
            count *= dim
        if count * DTYPES[tag].itemsize > MAX_FRAME:
            raise ValueError("an array larger than a frame")
        values = self.take(count * DTYPES[tag].itemsize)
        return name, np.frombuffer(values, dtype=DTYPES[tag]).reshape(shape)


def text_field(value):
    data = value.encode("utf-8")
    return struct.pack("<H", len(data)) + data


def answer_ok(ident, outputs, api, version, signature_name):
    parts = [struct.pack("<QBq", ident, OK, version), text_field(signature_name)]
    parts.append(struct.pack("<H", len(outputs)))
    for name, value in outputs.items():
        value = np.asarray(value)
        if api == GRPC:  # its own dtype: the plan takes only signatures whose are in DTYPES
            value = value.astype(value.dtype.newbyteorder("<"), copy=False)
        elif value.dtype.kind == "f":
            value = value.astype("<f8", copy=False)
        elif value.dtype.kind == "b":
            value = value.astype(bool, copy=False)
        elif value.dtype == np.uint64:
            value = value.astype("<u8", copy=False)
        else:
            value = value.astype("<i8", copy=False)
        parts.append(text_field(name))
        parts.append(struct.pack(f"<BB{value.ndim}Q", TAGS[value.dtype], value.ndim, *value.shape))
        parts.append(np.ascontiguousarray(value).tobytes())
    return b"".join(parts)


def answer_error(ident, status, message):
    data = message.encode("utf-8")
    return struct.pack("<QBH", ident, ERROR, status) + data


class LinkJob(Job):
    """A job whose answer goes back over the link from the worker's thread, with the
    answers of the jobs it ran with, in one write: one request's, or a frame's of
    `requests` that share a signature and shapes (their rows one after another), answered
    together, whose `parts` are their jobs made when each must run alone."""

    def __init__(self, ident, feeds, rows, done, flush, api, requests=1, parts=None):
        self.ident, self.feeds, self.rows, self.digits = ident, feeds, rows, api == REST
        self.done, self.flush = done, flush
        self.requests, self.parts = requests, parts

    def settle(self, outputs, error=None):
        self.done(outputs, error)

    def group_settled(self):
        self.flush()

    def split(self):
        return self.parts() if self.parts is not None else [self]


class Link:
    """Serves the front's connections on `path`, a thread each."""

    def __init__(self, models, path):
        self.models = models
        self.in_flight = {REST: 0, GRPC: 0}  # each API's slots, as before the front
        self.lock = threading.Lock()
        if os.path.exists(path):
            os.unlink(path)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        os.chmod(path, 0o600)
        self.server.listen(8)

    def serve(self):
        while True:
            connection, _ = self.server.accept()
            threading.Thread(
                target=self.serve_connection, args=(connection,), name="link", daemon=True
            ).start()

    def serve_connection(self, connection):
        """Frames in as they come (those the front wrote together read together); answers
        out in one write for the jobs that ran together (`LinkJob.group_settled`), from the
        worker's thread, so no other thread has to get the GIL before an answer leaves."""
        lock, pending = threading.Lock(), []

        def send(payload):
            with lock:
                pending.append(struct.pack("<I", len(payload)) + payload)

        def flush():
            with lock:
                if not pending:
                    return
                data = b"".join(pending)
                pending.clear()
                try:
                    connection.sendall(data)
                except OSError:
                    pass  # the front went away: the reader ends the link

        try:
            for frame in frames(connection):
                self.request(frame, send, flush)
        except (OSError, ValueError, struct.error) as error:
            log.warning("the front's link ended: %s", error)
        finally:
            connection.close()

    def request(self, frame, send, flush):
        """One frame: its requests read, looked up and checked once, then run as one job
        where their signature's worker merges rows (`Worker`, not TensorFlow Serving's
        batching, which counts each request), else a job each; answered to the frame's id
        when all of them have the same answer, else to each request's id."""
        started = time.perf_counter()
        reader = Reader(frame)
        ident, count = reader.unpack("<QI")
        if count > MAX_PARTS:
            raise ValueError(f"a frame of {count} requests")
        parts = list(struct.iter_unpack("<QQ", reader.take(16 * count)))
        (api,) = reader.unpack("<B")
        if api not in ENTRYPOINTS:
            raise ValueError(f"API {api}")
        entrypoint = ENTRYPOINTS[api]
        name = reader.text()
        if count == 0:  # a request of this model the front refused as busy: counted here
            busy = "UNAVAILABLE" if api == REST else "RESOURCE_EXHAUSTED"
            return record_request(self.models, name, "predict", entrypoint, busy, started)

        def answer(to, status, payload, requests):
            record_request(self.models, name, "predict", entrypoint, status, started, requests)
            send(payload)

        def refuse(to, error, requests):
            if api == GRPC:
                code = grpc_code_of(error)
                status, named = code.value[0], code.name
            else:
                status, named = error.status, status_name(error.status)
            answer(to, named, answer_error(to, status, client_text(error)), requests)

        def done_for(to, requests):
            def done(outputs, error):
                with self.lock:
                    self.in_flight[api] -= requests
                if error is None:
                    found = answer_ok(to, outputs, api, servable.version, signature_name)
                    answer(to, "OK", found, requests)
                elif isinstance(error, ApiError):
                    refuse(to, error, requests)
                elif isinstance(error, REQUEST_ERRORS):
                    refuse(to, ApiError(400, client_text(error)), requests)
                else:
                    log.error("a predict over the front's link failed: %r", error)
                    refuse(to, ApiError(500, FAILED), requests)

            return done

        try:
            feeds, plan, servable, signature_name = self.read(reader, name, api)
            worker = servable.worker(signature_name, plan.signature)
            with self.lock:
                if self.in_flight[api] + count > MAX_IN_FLIGHT:
                    raise BUSY_ERRORS[api]
                self.in_flight[api] += count
        except Fallback:
            send(struct.pack("<QB", ident, FALLBACK))
            return flush()
        except ApiError as error:
            refuse(ident, error, count)
            return flush()
        except (ValueError, struct.error):
            raise  # a broken frame: the link ends
        except Exception:  # a bug here: REST answers the requests, as before the front
            log.exception("the front's link could not take a predict")
            send(struct.pack("<QB", ident, FALLBACK))
            return flush()

        def each():
            """A job for each request, its inputs checked alone (a part's first dimension
            is its own rows)."""
            jobs, start = [], 0
            for part, rows in parts:
                own = feeds
                if count > 1:
                    own = {key: value[start : start + rows] for key, value in feeds.items()}
                start += rows
                error = refusal(own, plan)
                if error is None:
                    job = LinkJob(part, own, rows_of(own), done_for(part, 1), flush, api)
                    jobs.append(job)
                else:
                    with self.lock:
                        self.in_flight[api] -= 1
                    refuse(part, error, 1)
            return jobs

        total = sum(rows for _, rows in parts)
        if count > 1 and any(rows_of({k: v}) != total for k, v in feeds.items()):
            raise ValueError("a frame whose inputs do not hold its requests' rows")
        if (
            count > 1
            and worker.merge
            and not worker.per_request
            and total <= MAX_BATCH_ROWS
            and plan.rows_free
            and refusal(feeds, plan) is None
        ):
            done = done_for(ident, count)
            jobs = [LinkJob(ident, feeds, total, done, flush, api, count, each)]
        else:
            jobs = each()
        for job in jobs:
            try:
                worker.submit(job)
            except ApiError as error:  # TensorFlow Serving's batching: too many rows, queue full
                with self.lock:
                    self.in_flight[api] -= job.requests
                refuse(job.ident, error, job.requests)
        flush()

    def read(self, reader, name, api):
        """The frame's inputs converted as the signature's plan says, its plan, the
        servable and the signature's name."""
        (kind,) = reader.unpack("<B")
        version = label = None
        if kind == 1:
            (version,) = reader.unpack("<q")
        elif kind == 2:
            label = reader.text()
        signature_name = reader.text() or DEFAULT_SIGNATURE
        (count,) = reader.unpack("<H")
        arrays = [reader.array() for _ in range(count)]
        servable = self.models.get(name, version, label)
        plan = plan_of(servable, signature_name)
        if plan is None:
            raise Fallback()
        if len(arrays) == 1 and arrays[0][0] == "":
            if len(plan.inputs) != 1:
                raise Fallback()  # REST names what is wrong
            arrays = [(next(iter(plan.inputs)), arrays[0][1])]
        feeds = dict(arrays)
        if feeds.keys() != plan.inputs.keys():
            check_input_names(plan.signature.inputs, feeds)
        converted = {}
        for key, array in feeds.items():
            dtype, limits, _ = plan.inputs[key]
            if api == GRPC:  # typed: the signature's dtype, or gRPC's words for it
                if array.dtype != dtype:
                    raise Fallback()
            elif limits is None:  # a float input
                array = array.astype(dtype)
            elif array.dtype.kind == "i":
                if array.size and (array.min() < limits.min or array.max() > limits.max):
                    raise Fallback()  # REST refuses it in its own words
                array = array.astype(dtype)
            else:
                raise Fallback()
            converted[key] = array
        return converted, plan, servable, signature_name


def refusal(feeds, plan):
    """The 400 of the first input whose shape the signature does not take, or None."""
    for key, array in feeds.items():
        dims = plan.inputs[key][2]
        if dims is not None and (
            len(dims) != array.ndim
            or any(want is not None and want != have for want, have in zip(dims, array.shape))
        ):
            return shape_refused(key, array.shape, dims)
    return None


class Plan:
    """What the link needs of one signature of a servable, worked out once: each input's
    numpy dtype, integer limits (None for floats) and dims (None where the rank is
    unknown); None for a signature the link leaves to REST (an input or output that is not
    a number or a bool)."""

    def __init__(self, signature, inputs):
        self.signature, self.inputs = signature, inputs
        # Whether no input fixes its first dimension: then requests of one frame pass
        # the shape checks together when their concatenation does.
        self.rows_free = all(
            dims is None or (dims and dims[0] is None) for _, _, dims in inputs.values()
        )


def plan_of(servable, signature_name):
    plans = servable.__dict__.setdefault("link_plans", {})
    if signature_name not in plans:
        plans[signature_name] = make_plan(servable, signature_name)
    return plans[signature_name]


def make_plan(servable, signature_name):
    signature = signature_of(servable, signature_name)  # a 400 naming the signatures
    definition = servable.signature_defs.get(signature_name)
    if definition is None or any(
        output["dtype"] not in WRITTEN for output in definition["outputs"].values()
    ):
        return None
    inputs = {}
    for key, spec in signature.inputs.items():
        if spec.dtype in FLOATS:
            limits = None
        elif spec.dtype in INTEGERS:
            limits = np.iinfo(spec.dtype.as_numpy_dtype)
        else:
            return None
        dims = None if spec.shape.rank is None else tuple(spec.shape.as_list())
        inputs[key] = (np.dtype(spec.dtype.as_numpy_dtype), limits, dims)
    return Plan(signature, inputs)


def frames(connection):
    """The request frames from `connection`, read a chunk at a time, until it closes
    between frames; a frame over MAX_FRAME, or a close within one, is a broken front."""
    buffer = bytearray()
    at = 0
    while True:
        while len(buffer) - at >= 4:
            (size,) = struct.unpack_from("<I", buffer, at)
            if size > MAX_FRAME + 65536:
                raise ValueError(f"a frame of {size} bytes")
            if len(buffer) - at < 4 + size:
                break
            yield bytes(buffer[at + 4 : at + 4 + size])
            at += 4 + size
        del buffer[:at]
        at = 0
        chunk = connection.recv(1 << 16)
        if not chunk:
            if buffer:
                raise ValueError("the link ended within a frame")
            return
        buffer += chunk
