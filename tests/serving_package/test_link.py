"""The link to the compiled front: frames read however the socket splits them, frames that
lie about their size refused, each predict checked against its signature as REST checks
it, and what the link does not answer exactly as REST would given back to REST."""

import socket
import struct
import threading

import grpc
import numpy as np
import pytest
import tensorflow as tf

from tfimg_serving import link, metrics
from tfimg_serving.batching import Worker
from tfimg_serving.errors import ApiError


def text(value):
    data = value.encode()
    return struct.pack("<H", len(data)) + data


def array(name, values, tag=2):  # 2: DT_DOUBLE, 9: DT_INT64, 1: DT_FLOAT
    values = np.asarray(values, dtype=link.DTYPES[tag])
    head = struct.pack(f"<BB{values.ndim}Q", tag, values.ndim, *values.shape)
    return text(name) + head + values.tobytes()


def first_dim(encoded):
    """The first dimension of an array as `array` encodes it (0 for a scalar)."""
    size = struct.unpack_from("<H", encoded)[0]
    _, rank = struct.unpack_from("<BB", encoded, 2 + size)
    return struct.unpack_from("<Q", encoded, 4 + size)[0] if rank else 0


def predict(ident, inputs, model="m", signature="", parts=None, api=link.REST):
    """A frame of one request (`ident` its id too), or of `parts`: (id, rows) each."""
    if parts is None:
        parts = [(ident, first_dim(inputs[0]))]
    return (
        struct.pack("<QI", ident, len(parts))
        + b"".join(struct.pack("<QQ", *part) for part in parts)
        + struct.pack("<B", api)
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
        self.version = 7

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


def answers(servable, frames, expected=None, in_flight=None):
    """The link's answers to `frames` (`expected` of them: one a frame unless said), by
    id."""
    models = Models(servable)
    the_link = link.Link.__new__(link.Link)
    the_link.models, the_link.lock = models, threading.Lock()
    the_link.in_flight = in_flight or {link.REST: 0, link.GRPC: 0}
    got, done = {}, threading.Semaphore(0)

    def send(payload):
        ident, kind = struct.unpack_from("<QB", payload)
        got[ident] = (kind, payload[9:])
        done.release()

    for frame in frames:
        the_link.request(frame, send, lambda: None)
    for _ in range(len(frames) if expected is None else expected):
        assert done.acquire(timeout=10), "an answer never came"
    return got


def doubled(feeds):
    return {"y": feeds["x"] * 2}


def test_rows_run_and_come_back_as_float64_with_tensorflow_servings_digits():
    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    got = answers(servable, [predict(1, [array("", [[0.1, 1435774336.0]])])])
    kind, body = got[1]
    assert kind == link.OK
    ((name, values),) = outputs_of(body).items()
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
    assert answers(small, [predict(1, [array("", [300], tag=9)])])[1][0] == link.FALLBACK
    assert answers(small, [predict(1, [array("", [1.5])])])[1][0] == link.FALLBACK
    assert answers(named, [predict(1, [array("", [1.0])])])[1][0] == link.FALLBACK
    kind, body = answers(small, [predict(1, [array("", [3, -4], tag=9)])])[1]
    assert kind == link.OK
    values = outputs_of(body)["y"]
    assert values.dtype == np.int64 and values.tolist() == [6, -8]


def refuse_negative(feeds):
    """A model that fails on a request with a negative row."""
    if (feeds["x"] < 0).any():
        raise ValueError("negative rows are refused")
    return {"y": feeds["x"] * 2}


def test_one_bad_request_among_merged_ones_fails_alone():
    servable = Servable(
        {"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, refuse_negative
    )
    frames = [predict(i, [array("", [[float(i)]])]) for i in range(1, 5)]
    frames.append(predict(9, [array("", [[-1.0]])]))
    got = answers(servable, frames)
    assert [got[i][0] for i in range(1, 5)] == [link.OK] * 4
    assert got[9][0] == link.ERROR and b"negative rows are refused" in got[9][1]


def outputs_of(body):
    """An OK answer's outputs, after its version (7, the test servable's) and signature."""
    reader = link.Reader(body)
    assert reader.unpack("<q") == (7,) and reader.text() == "serving_default"
    (count,) = reader.unpack("<H")
    return dict(reader.array() for _ in range(count))


def test_a_frame_of_several_requests_runs_once_and_is_answered_once_with_all_rows():
    calls = []

    def counted(feeds):
        calls.append(feeds["x"].shape)
        return doubled(feeds)

    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, counted)
    rows = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    frame = predict(10, [array("", rows)], parts=[(11, 1), (12, 2)])
    got = answers(servable, [frame])
    assert list(got) == [10] and got[10][0] == link.OK
    assert outputs_of(got[10][1])["y"].tolist() == [[2.0, 4.0], [6.0, 8.0], [10.0, 12.0]]
    assert calls == [(3, 2)]


def test_one_bad_request_in_a_frame_fails_alone_the_others_answered_each():
    servable = Servable(
        {"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, refuse_negative
    )
    frame = predict(20, [array("", [[1.0], [-1.0], [3.0]])], parts=[(21, 1), (22, 1), (23, 1)])
    got = answers(servable, [frame], expected=3)
    assert sorted(got) == [21, 22, 23]
    assert outputs_of(got[21][1])["y"].tolist() == [[2.0]]
    assert got[22][0] == link.ERROR and b"negative rows are refused" in got[22][1]
    assert outputs_of(got[23][1])["y"].tolist() == [[6.0]]


def test_a_frame_of_the_wrong_shape_is_refused_to_each_request_with_its_own_shape():
    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    frame = predict(30, [array("", [[1.0, 2.0, 3.0]] * 3)], parts=[(31, 1), (32, 2)])
    got = answers(servable, [frame], expected=2)
    assert got[31][1][2:].decode() == "input `x` has shape [1, 3]; the signature takes [-1, 2]"
    assert got[32][1][2:].decode() == "input `x` has shape [2, 3]; the signature takes [-1, 2]"


def test_tensorflow_servings_batching_gets_each_request_of_a_frame_as_its_own_task():
    servable = Servable({"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    servable.the_worker.per_request = True  # as Batcher: it counts requests, not frames
    frame = predict(40, [array("", [[1.0], [2.0]])], parts=[(41, 1), (42, 1)])
    got = answers(servable, [frame], expected=2)
    assert outputs_of(got[41][1])["y"].tolist() == [[2.0]]
    assert outputs_of(got[42][1])["y"].tolist() == [[4.0]]


def test_a_frame_whose_rows_do_not_add_up_ends_the_link():
    servable = Servable({"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    frame = predict(50, [array("", [[1.0], [2.0]])], parts=[(51, 1), (52, 5)])
    with pytest.raises(ValueError, match="rows"):
        answers(servable, [frame])
    with pytest.raises(ValueError, match="requests"):
        answers(servable, [struct.pack("<QI", 60, 257) + b"\x00" * 16 * 257 + b"\x00" + text("m")])


def test_a_request_the_front_answered_busy_is_counted_in_the_metrics():
    servable = Servable({"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, doubled)

    def busy():
        return metrics.REQUESTS.labels("m", "UNAVAILABLE")._value.get()

    before = busy()
    answers(servable, [struct.pack("<QIB", 0, 0, link.REST) + text("m")], expected=0)
    assert busy() == before + 1


def test_over_grpc_inputs_must_have_the_signatures_dtype_and_outputs_keep_theirs():
    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    good = predict(1, [array("x", [[0.1, 2.0]], tag=1)], api=link.GRPC)
    wide = predict(2, [array("x", [[0.1, 2.0]], tag=2)], api=link.GRPC)
    got = answers(servable, [good, wide])
    values = outputs_of(got[1][1])["y"]
    assert values.dtype == np.float32 and values.tolist() == [[np.float32(0.2), 4.0]]
    assert got[2][0] == link.FALLBACK  # gRPC's own server says DT_DOUBLE is not DT_FLOAT


def test_over_grpc_an_error_carries_the_status_code_tensorflow_serving_gives():
    servable = Servable({"x": tf.TensorSpec([None, 2], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    shaped = predict(1, [array("x", [[1.0, 2.0, 3.0]], tag=1)], api=link.GRPC)
    unknown = predict(2, [array("x", [[1.0, 2.0]], tag=1)], model="other", api=link.GRPC)
    got = answers(servable, [shaped, unknown])
    assert struct.unpack_from("<H", got[1][1]) == (grpc.StatusCode.INVALID_ARGUMENT.value[0],)
    assert struct.unpack_from("<H", got[2][1]) == (grpc.StatusCode.NOT_FOUND.value[0],)


def test_rest_and_grpc_each_have_their_own_slots_and_words_when_they_are_taken():
    servable = Servable({"x": tf.TensorSpec([None, 1], tf.float32)}, {"y": "DT_FLOAT"}, doubled)
    rest = predict(1, [array("", [[1.0]])])
    call = predict(2, [array("x", [[1.0]], tag=1)], api=link.GRPC)
    full = {link.REST: link.MAX_IN_FLIGHT, link.GRPC: 0}
    got = answers(servable, [rest, call], in_flight=full)
    assert got[1][0] == link.ERROR and struct.unpack_from("<H", got[1][1]) == (503,)
    assert b"256 requests already" in got[1][1]
    assert got[2][0] == link.OK
    full = {link.REST: 0, link.GRPC: link.MAX_IN_FLIGHT}
    got = answers(servable, [call], in_flight=full)
    code = grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
    assert got[2][0] == link.ERROR and struct.unpack_from("<H", got[2][1]) == (code,)
    assert b"256 calls already" in got[2][1]
