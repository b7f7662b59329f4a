"""The link to the compiled front: frames read however the socket splits them, frames that
lie about their size refused, each predict checked against its signature as REST checks
it, and what the link does not answer exactly as REST would given back to REST."""

import socket
import struct
import threading

import numpy as np
import pytest
import tensorflow as tf

from tfimg_serving import link
from tfimg_serving.batching import Worker
from tfimg_serving.errors import ApiError


def text(value):
    data = value.encode()
    return struct.pack("<H", len(data)) + data


def array(name, values, tag=1):
    values = np.asarray(values, dtype=link.DTYPES[tag])
    head = struct.pack(f"<BB{values.ndim}Q", tag, values.ndim, *values.shape)
    return text(name) + head + values.tobytes()


def predict(ident, inputs, model="m", signature=""):
    return (
        struct.pack("<Q", ident)
        + text(model)
        + b"\x00"
        + text(signature)
        + struct.pack("<H", len(inputs))
        + b"".join(inputs)
    )


def test_frames_are_read_whole_however_the_socket_splits_them():
    ours, theirs = socket.socketpair()
    payloads = [b"a" * 10, b"", b"b" * 100_000]
    data = b"".join(struct.pack("<I", len(p)) + p for p in payloads)

    def trickle():
        for at in range(0, len(data), 7777):
            theirs.sendall(data[at : at + 7777])
        theirs.close()

    threading.Thread(target=trickle).start()
    assert list(link.frames(ours)) == payloads


def test_a_frame_cut_short_or_over_the_limit_ends_the_link():
    ours, theirs = socket.socketpair()
    theirs.sendall(struct.pack("<I", 10) + b"abc")
    theirs.close()
    with pytest.raises(ValueError, match="within a frame"):
        list(link.frames(ours))
    ours, theirs = socket.socketpair()
    theirs.sendall(struct.pack("<I", 0xFFFFFFFF))
    with pytest.raises(ValueError, match="a frame of"):
        list(link.frames(ours))


def test_an_array_claiming_more_values_than_its_frame_holds_is_refused():
    head = text("x") + struct.pack("<BB2Q", 1, 2, 1 << 40, 1 << 40)
    with pytest.raises(ValueError):
        link.Reader(head).array()
    with pytest.raises(ValueError):
        link.Reader(text("x") + struct.pack("<BB1Q", 1, 1, 4) + b"\x00" * 8).array()
    with pytest.raises(ValueError):
        link.Reader(text("x") + struct.pack("<BB", 9, 0)).array()


class Servable:
    """A served version with one signature, as `Models.get` gives one."""

    def __init__(self, inputs, outputs, function):
        self.signatures = {"serving_default": Signature(inputs, function)}
        self.signature_defs = {
            "serving_default": {"outputs": {k: {"dtype": v} for k, v in outputs.items()}}
        }
        self.the_worker = Worker(self.signatures["serving_default"], True, "test")

    def worker(self, signature_name, signature):
        return self.the_worker


class Signature:
    def __init__(self, inputs, function):
        self.inputs, self.function = inputs, function

    def __call__(self, feeds):
        return self.function(feeds)


class Models:
    lock = threading.Lock()
    configured = {"m"}

    def __init__(self, servable):
        self.servable = servable

    def get(self, name, version=None, label=None):
        if name != "m":
            raise ApiError(404, f"Servable not found for request: Latest({name})")
        return self.servable


def answers(servable, frames):
    """The link's answers to `frames`, by id."""
    models = Models(servable)
    the_link = link.Link.__new__(link.Link)
    the_link.models, the_link.in_flight, the_link.lock = models, 0, threading.Lock()
    got, done = {}, threading.Semaphore(0)

    def send(payload):
        ident, kind = struct.unpack_from("<QB", payload)
        got[ident] = (kind, payload[9:])
        done.release()

    for frame in frames:
        the_link.request(frame, send, lambda: None)
    for _ in frames:
        assert done.acquire(timeout=10), "an answer never came"
    return got


def doubled(feeds):
    return {"y": feeds["x"] * 2}


def test_rows_run_and_come_back_as_float64_with_tensorflow_servings_digits():
    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    got = answers(servable, [predict(1, [array("", [[0.1, 1435774336.0]])])])
    kind, body = got[1]
    assert kind == link.OK
    reader = link.Reader(body[2:])
    name, values = reader.array()
    assert name == "y" and values.dtype == np.float64
    assert values.tolist() == [[0.2, 2871548670.0]]


def test_a_bad_shape_a_missing_input_and_an_unknown_model_are_refused_as_rest_refuses_them():
    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    got = answers(
        servable,
        [
            predict(1, [array("", [[1.0, 2.0, 3.0]])]),
            predict(2, [array("z", [[1.0, 2.0]])]),
            predict(3, [array("", [[1.0, 2.0]])], model="other"),
        ],
    )
    status, message = struct.unpack_from("<H", got[1][1])[0], got[1][1][2:].decode()
    assert (got[1][0], status) == (link.ERROR, 400)
    assert message == "input `x` has shape [1, 3]; the signature takes [-1, 2]"
    assert got[2][0] == link.ERROR and b"missing" in got[2][1] and b"unknown" in got[2][1]
    assert got[3][0] == link.ERROR and struct.unpack_from("<H", got[3][1])[0] == 404


def test_strings_ints_out_of_range_and_string_outputs_go_back_to_rest():
    words = Servable({"x": tf.TensorSpec([None], tf.string)}, {"y": "DT_FLOAT"}, doubled)
    small = Servable({"x": tf.TensorSpec([None], tf.int8)}, {"y": "DT_INT8"}, doubled)
    named = Servable({"x": tf.TensorSpec([None], tf.float32)}, {"y": "DT_STRING"}, doubled)
    assert answers(words, [predict(1, [array("", [1.0])])])[1][0] == link.FALLBACK
    assert answers(small, [predict(1, [array("", [300], tag=2)])])[1][0] == link.FALLBACK
    assert answers(small, [predict(1, [array("", [1.5])])])[1][0] == link.FALLBACK
    assert answers(named, [predict(1, [array("", [1.0])])])[1][0] == link.FALLBACK
    kind, body = answers(small, [predict(1, [array("", [3, -4], tag=2)])])[1]
    assert kind == link.OK
    name, values = link.Reader(body[2:]).array()
    assert values.dtype == np.int64 and values.tolist() == [6, -8]


def test_one_bad_request_among_merged_ones_fails_alone():
    def refuse_negative(feeds):
        if (feeds["x"] < 0).any():
            raise ValueError("negative rows are refused")
        return {"y": feeds["x"] * 2}

    servable = Servable(
        {"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, refuse_negative
    )
    frames = [predict(i, [array("", [[float(i)]])]) for i in range(1, 5)]
    frames.append(predict(9, [array("", [[-1.0]])]))
    got = answers(servable, frames)
    assert [got[i][0] for i in range(1, 5)] == [link.OK] * 4
    assert got[9][0] == link.ERROR and b"negative rows are refused" in got[9][1]
