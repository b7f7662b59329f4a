"""Predict, classify and regress, as both APIs run them."""

import json

import grpc
import grpc.aio
import tensorflow as tf
from google.protobuf import text_format

from .batching import Job
from .errors import ApiError, client_text
from .settings import DEFAULT_SIGNATURE, INT64_MAX
from .tensors import from_base64, is_b64, to_array, to_json


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
        raise ApiError(
            400, f"inputs {' and '.join(wrong)}; the signature takes {names_text(sorted(specs))}"
        )


# A request's own failures while the model runs on it (answered 400 with their text).
REQUEST_ERRORS = (ValueError, TypeError, tf.errors.InvalidArgumentError)


async def run_arrays(servable, signature_name, signature, arrays, digits=False):
    """The outputs of the signature on `arrays` (numpy, of its inputs' dtypes), run by the
    signature's worker with the requests that queued meanwhile; with `digits`, float32 ones
    as JSON writes them (float64, `float32_digits`)."""
    specs = signature.inputs
    for key, array in arrays.items():
        if not specs[key].shape.is_compatible_with(array.shape):
            raise shape_refused(key, array.shape, specs[key].shape.as_list())
    job = Job(arrays, rows_of(arrays), digits)
    servable.worker(signature_name, signature).submit(job)
    try:
        return await job.future
    except REQUEST_ERRORS as error:
        raise ApiError(400, client_text(error)) from None


def shape_refused(key, shape, dims):
    """The 400 for input `key` of `shape` where the signature takes `dims` (None: any)."""
    wanted = [-1 if dim is None else dim for dim in dims]
    return ApiError(400, f"input `{key}` has shape {list(shape)}; the signature takes {wanted}")


def rows_of(arrays):
    """The rows of a request's inputs, which the workers merge by: their common first
    dimension; 0 (never merged) for inputs without one."""
    rows = {array.shape[0] if array.ndim else None for array in arrays.values()}
    return rows.pop() if len(rows) == 1 and None not in rows else 0


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
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
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
        ((name, value),) = outputs.items()
        return {"outputs": to_json(value, name)}
    return {"outputs": {name: to_json(value, name) for name, value in outputs.items()}}


def predict_feeds(body, input_names):
    """Whether the request is in the row format, and its values by input name. As
    TensorFlow Serving, the columnar format's object is read for the signature's inputs
    only (any other key is ignored); the row format's objects must hold them exactly."""
    if ("instances" in body) == ("inputs" in body):
        raise ApiError(
            400, "the request needs one of `instances` (row format) or `inputs` (columnar format)"
        )
    if "instances" in body:
        instances = body["instances"]
        if not isinstance(instances, list):
            raise ApiError(400, "`instances` must be a list")
        if instances and all(isinstance(i, dict) for i in instances) and not is_b64(instances[0]):
            return True, {key: [i.get(key) for i in instances] for key in instances[0]}
        if len(input_names) == 1:
            return True, {input_names[0]: instances}
        raise ApiError(
            400, f"the signature takes {names_text(input_names)}: give each instance as an object"
        )
    inputs = body["inputs"]
    if isinstance(inputs, dict) and not is_b64(inputs):
        return False, {name: inputs[name] for name in input_names if name in inputs}
    if len(input_names) == 1:
        return False, {input_names[0]: inputs}
    raise ApiError(
        400, f"the signature takes {names_text(input_names)}: give `inputs` as an object"
    )


def rows(outputs):
    """Row-format predictions: one value per instance, or one object per instance."""
    if len(outputs) == 1:
        ((name, value),) = outputs.items()
        return to_json(value, name)
    sizes = {value.shape[0] if value.ndim else None for value in outputs.values()}
    if len(sizes) != 1 or None in sizes:
        raise ApiError(
            400, "the outputs differ in their first dimension: use the columnar format (`inputs`)"
        )
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
        400,
        f'feature `{key}` has a value that is no number, string or {{"b64": ...}}: '
        f"{json.dumps(item)[:100]}",
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
        raise ApiError(
            400, f"No {kind} inputs found in SignatureDef: {text_format.MessageToString(proto)}"
        )
    if verb == "classify" and "classes" not in outputs and "scores" not in outputs:
        raise ApiError(
            400,
            "Expected classification signature outputs to contain at least one of "
            '"classes" or "scores". '
            f"Signature was: {text_format.MessageToString(proto)}",
        )
    if verb == "regress" and "outputs" not in outputs:
        raise ApiError(
            400,
            f"No regression outputs found in SignatureDef: {text_format.MessageToString(proto)}",
        )
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


METHODS = {"tensorflow/serving/classify": "classify", "tensorflow/serving/regress": "regress"}


def serialized_examples(source):
    """The serialized tf.train.Examples of a classify, regress or multi-inference Input;
    with a context, the context's features go first in each (an example's own win)."""
    kind = source.WhichOneof("kind")
    if kind == "example_list":
        found = [example.SerializeToString() for example in source.example_list.examples]
    elif kind == "example_list_with_context":
        context = source.example_list_with_context.context.SerializeToString()
        found = [
            context + example.SerializeToString()
            for example in source.example_list_with_context.examples
        ]
    else:
        found = []
    if not found:
        raise ApiError(400, "Input is empty")
    return found
