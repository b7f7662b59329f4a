"""JSON and TensorProto values to numpy arrays and back, as TensorFlow Serving converts
them."""

import base64
import json
import warnings

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import types_pb2

from .errors import ApiError
from .settings import MAX_DECODED_BYTES, MAX_RANK

# A ragged JSON list is refused by TensorFlow's conversion (to_array), not warned about.
warnings.filterwarnings("ignore", message="Creating an ndarray from ragged")


def with_digits(outputs):
    """Outputs with their float32 arrays as JSON writes them (`float32_digits`)."""
    return {
        key: float32_digits(value) if value.dtype == np.float32 else value
        for key, value in outputs.items()
    }


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
                raise ApiError(
                    400, f"input `{name}` takes {dtype.name} values: true and false are not numbers"
                )
            if dtype.is_integer and numbers <= {int}:
                array = np.asarray(value)
                if array.dtype.kind in "iu" and fits_in(array, dtype):
                    return array.astype(dtype.as_numpy_dtype, copy=False)
                outside = first_outside(value, dtype)
                if outside is not None:
                    raise ApiError(
                        400,
                        f"input `{name}`: {outside} is out of {dtype.name}'s range "
                        f"({dtype.min} to {dtype.max})",
                    )
            if (dtype.is_bool and numbers <= {bool}) or (
                dtype.is_floating and dtype != tf.bfloat16
            ):
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


def is_b64(value):
    return isinstance(value, dict) and set(value) == {"b64"} and isinstance(value["b64"], str)


def array_of(proto, key, spec):
    """A TensorProto as a numpy array of the input's dtype, or 400 (413 when its shape
    claims more values than the server decodes)."""
    if proto.dtype != spec.dtype.as_datatype_enum:
        got = (
            types_pb2.DataType.Name(proto.dtype)
            if proto.dtype in types_pb2.DataType.values()
            else proto.dtype
        )
        raise ApiError(
            400,
            f"input `{key}` is {got}; "
            f"the signature takes {types_pb2.DataType.Name(spec.dtype.as_datatype_enum)}",
        )
    count = 1
    for dim in proto.tensor_shape.dim:
        if dim.size < 0:
            raise ApiError(400, f"input `{key}` has a dimension of size {dim.size}")
        count *= dim.size
    if count * max(spec.dtype.size, 8) > MAX_DECODED_BYTES:
        raise ApiError(
            413, f"input `{key}` claims {count} values, over what the server decodes at once"
        )
    packed = PACKED.get(proto.dtype)
    if proto.tensor_content and packed is not None:
        # What every client's make_tensor_proto sends for a numpy array: the values' bytes,
        # read in place rather than value by value.
        if len(proto.tensor_content) != count * packed.itemsize:
            raise ApiError(
                400,
                f"tensor parsing error: {key} "
                f"(its tensor_content holds {len(proto.tensor_content)} bytes; "
                f"its shape needs {count * packed.itemsize})",
            )
        return np.frombuffer(proto.tensor_content, packed).reshape(
            [dim.size for dim in proto.tensor_shape.dim]
        )
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
