"""JSON and TensorProto values in and out, as TensorFlow Serving converts them."""

import numpy as np
import tensorflow as tf
from conftest import refused, spec
from tensorflow.core.framework import tensor_pb2

from tfimg_serving.tensors import (
    array_of,
    decode,
    fill_tensor,
    float32_digits,
    tensorflow_serving_float,
    to_array,
    to_json,
)


def test_numbers_become_the_input_dtype_whatever_json_made_of_them():
    array = to_array([[1, 2], [3.5, 4]], spec(tf.float32, (None, 2)), "x")
    assert array.dtype == np.float32
    assert array.tolist() == [[1.0, 2.0], [3.5, 4.0]]
    assert to_array([[True, False]], spec(tf.bool, (None, 2)), "x").dtype == np.bool_


def test_an_integer_past_the_dtype_is_refused_not_wrapped():
    # TensorFlow's own conversion makes 2**32 + 1 the int32 1.
    message = refused(lambda: to_array([1, 2**32 + 1], spec(tf.int32), "x"))
    assert message == "input `x`: 4294967297 is out of int32's range (-2147483648 to 2147483647)"
    too_large = refused(lambda: to_array([2**64], spec(tf.uint64), "x"))
    assert too_large.startswith("input `x`: 18446744073709551616 is out of uint64's range")


def test_booleans_are_no_numbers_and_halves_no_integers():
    message = refused(lambda: to_array([True, 1.0], spec(tf.float32), "x"))
    assert message == "input `x` takes float32 values: true and false are not numbers"
    assert refused(lambda: to_array([1.5], spec(tf.int32), "x")).startswith("input `x`: ")


def test_ragged_and_too_deep_lists_are_refused():
    assert refused(lambda: to_array([[1], [2, 3]], spec(tf.float32), "x")).startswith("input `x`")
    value = 0
    for _ in range(40):
        value = [value]
    message = refused(lambda: to_array(value, spec(tf.float32), "x"))
    assert message == "input `x` has lists nested over 32 deep"


def test_base64_is_read_strictly():
    assert decode([[{"b64": "Zm9v"}], [{"b64": ""}]], "x") == [[b"foo"], [b""]]
    # base64.b64decode without validation read "Zm9v!!!" as b"foo".
    assert '"Zm9v!!!" is not base64' in refused(lambda: decode({"b64": "Zm9v!!!"}, "x"))
    message = refused(lambda: decode({"a": 1}, "input `x`"))
    assert message == 'input `x`: JSON object {"a": 1} is not a tensor value'


def test_float32_is_written_with_tensorflow_serving_s_digits():
    # TensorFlow Serving writes %.9g where %.6g does not read back: 1.43577434e+09.
    assert tensorflow_serving_float(np.float32(1435774380)) == 1435774340.0
    assert tensorflow_serving_float(np.float32(0.1)) == 0.1
    assert tensorflow_serving_float(np.float32(1 / 3)) == 0.333333343
    assert np.isnan(tensorflow_serving_float(np.float32("nan")))


def test_the_vectorised_digits_match_the_one_by_one_form():
    rng = np.random.default_rng(7)
    values = rng.standard_normal(20000) * 10.0 ** rng.integers(-44, 38, 20000)
    specials = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, 3.4e38, 1e-14, 1e28]
    values = np.concatenate([values, specials]).astype(np.float32).reshape(-1, 1)
    expected = [tensorflow_serving_float(value) for value in values.ravel()]
    written = float32_digits(values)
    assert written.shape == values.shape
    np.testing.assert_array_equal(written.ravel(), np.array(expected))


def test_bytes_outputs_are_text_or_base64_for_names_ending_in_bytes():
    array = np.array([b"caf\xc3\xa9", b"\xff"], dtype=object)
    assert to_json(array, "y") == ["café", "\ufffd"]
    assert to_json(array, "y_bytes") == [{"b64": "Y2Fmw6k="}, {"b64": "/w=="}]
    assert to_json(np.array([], dtype=object), "y") == []


def test_a_packed_tensor_proto_is_read_in_place_with_its_shape():
    sent = np.arange(6, dtype=np.float32).reshape(2, 3)
    proto = tf.make_tensor_proto(sent)
    assert proto.tensor_content, "make_tensor_proto packs a numpy array"
    np.testing.assert_array_equal(array_of(proto, "x", spec(tf.float32, (None, 3))), sent)


def test_a_tensor_proto_that_lies_or_claims_too_much_is_refused():
    proto = tf.make_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
    proto.tensor_content = proto.tensor_content[:-4]
    message = refused(lambda: array_of(proto, "x", spec(tf.float32, (None, 3))))
    assert (
        message == "tensor parsing error: x (its tensor_content holds 20 bytes; its shape needs 24)"
    )
    wrong = tf.make_tensor_proto(np.arange(2, dtype=np.int32))
    message = refused(lambda: array_of(wrong, "x", spec(tf.float32)))
    assert message == "input `x` is DT_INT32; the signature takes DT_FLOAT"
    huge = tensor_pb2.TensorProto(dtype=tf.float32.as_datatype_enum)
    for size in (1 << 20, 1 << 20):
        huge.tensor_shape.dim.add(size=size)
    assert "claims 1099511627776 values" in refused(
        lambda: array_of(huge, "x", spec(tf.float32, (None, None))), status=413
    )


def test_outputs_are_written_in_the_dtype_s_field_as_tensorflow_serving_does():
    target = tensor_pb2.TensorProto()
    fill_tensor(target, np.array([[1.5, 2.0]], dtype=np.float32))
    assert list(target.float_val) == [1.5, 2.0]
    assert [dim.size for dim in target.tensor_shape.dim] == [1, 2]
    assert not target.tensor_content
    np.testing.assert_array_equal(tf.make_ndarray(target), [[1.5, 2.0]])
    names = tensor_pb2.TensorProto()
    fill_tensor(names, np.array([b"a", b"b"], dtype=object))
    assert list(names.string_val) == [b"a", b"b"]
