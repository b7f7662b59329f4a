"""TensorFlow Serving's gRPC API: PredictionService and ModelService."""

import asyncio
import os
import time

import grpc
import grpc.aio
import uvloop
from google.protobuf import text_format
from google.protobuf.message import DecodeError
from tensorflow_serving.apis import (
    classification_pb2,
    get_model_metadata_pb2,
    get_model_status_pb2,
    inference_pb2,
    model_management_pb2,
    predict_pb2,
    regression_pb2,
)

from .errors import FAILED, ApiError, client_text, grpc_code_of
from .inference import (
    METHODS,
    check_input_names,
    classifications,
    example_input,
    names_text,
    regressions,
    run,
    run_arrays,
    serialized_examples,
    signature_of,
)
from .metrics import record_request
from .model_config import parse_model_config
from .settings import (
    ALLOW_RELOAD_CONFIG,
    BUSY_CALLS,
    DEFAULT_SIGNATURE,
    FRONT_DIR,
    GRPC_CHANNEL_ARGUMENTS,
    GRPC_PORT,
    MAX_BODY_BYTES,
    MAX_IN_FLIGHT,
    MESSAGE_SECONDS,
    STREAMS_PER_CONNECTION,
    log,
)
from .tensors import array_of, fill_tensor

SLOW_MESSAGE = f"the request message did not arrive within {MESSAGE_SECONDS} s"
RELOAD_OFF = (
    "HandleReloadConfigRequest is turned off: it would let anyone who reaches this port change "
    "the models served; start the server with `tfimg serve --allow-reload-config` to allow it"
)
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
        code = grpc_code_of(error)
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
            arrays = {
                key: array_of(proto, key, signature.inputs[key])
                for key, proto in request.inputs.items()
            }
            outputs = await run_arrays(servable, signature_name, signature, arrays)
            wanted = list(request.output_filter) or sorted(outputs)
            unknown = [name for name in wanted if name not in outputs]
            if unknown:
                raise ApiError(
                    400,
                    f"output_filter names {names_text(unknown)}; "
                    f"the signature's outputs are {names_text(sorted(outputs))}",
                )
            twice = next(
                (name for index, name in enumerate(wanted) if name in wanted[:index]), None
            )
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
                raise ApiError(
                    400,
                    "All ModelSpecs in a MultiInferenceRequest must access the same model name.",
                )
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
                    raise ApiError(
                        400, f"Unsupported signature method_name: {task.method_name[:200]}"
                    )
                outputs = await examples_outputs(servable, signature_name, verb, serialized)
                result = response.results.add()
                answered_spec(result.model_spec, servable, signature_name)
                if verb == "classify":
                    fill_classification(result.classification_result, outputs, len(serialized))
                else:
                    fill_regression(result.regression_result, outputs, len(serialized))
            return response

        return await grpc_answer(
            context,
            self.models,
            "multi_inference",
            request.tasks[0].model_spec.name if request.tasks else "",
            work,
        )

    async def GetModelMetadata(self, request, context):
        async def work():
            servable = grpc_servable(self.models, request.model_spec)
            fields = list(request.metadata_field)
            if not fields:
                raise ApiError(
                    400, "GetModelMetadataRequest must specify at least one metadata_field"
                )
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
            status = self.models.status(
                spec.name, spec.version.value if choice == "version" else None
            )
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
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the call ended without its request message"
            )
        try:
            request = request_type.FromString(data)
        except DecodeError as error:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the request message is no {request_type.DESCRIPTOR.name}: {error}",
            )
        del data
        if slots.in_flight >= MAX_IN_FLIGHT:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, BUSY_CALLS)
        slots.in_flight += 1
        try:
            return await method(request, context)
        finally:
            slots.in_flight -= 1

    return grpc.stream_unary_rpc_method_handler(
        handler, response_serializer=response_type.SerializeToString
    )


def grpc_handlers(models):
    """TensorFlow Serving's two services, each method `unary`, sharing the slots."""
    prediction, model_service, slots = PredictionService(models), ModelService(models), Slots()
    services = {
        "tensorflow.serving.PredictionService": {
            "Predict": (
                prediction.Predict,
                predict_pb2.PredictRequest,
                predict_pb2.PredictResponse,
            ),
            "Classify": (
                prediction.Classify,
                classification_pb2.ClassificationRequest,
                classification_pb2.ClassificationResponse,
            ),
            "Regress": (
                prediction.Regress,
                regression_pb2.RegressionRequest,
                regression_pb2.RegressionResponse,
            ),
            "MultiInference": (
                prediction.MultiInference,
                inference_pb2.MultiInferenceRequest,
                inference_pb2.MultiInferenceResponse,
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
            service,
            {
                name: unary(method, request, response, slots)
                for name, (method, request, response) in methods.items()
            },
        )
        for service, methods in services.items()
    )


def server_options():
    """The gRPC server's channel arguments: its own, then those `tfimg serve
    --grpc-channel-arguments` gave, which replace its own of the same key."""
    options = {
        "grpc.max_receive_message_length": MAX_BODY_BYTES,
        "grpc.max_send_message_length": -1,
        "grpc.max_concurrent_streams": STREAMS_PER_CONNECTION,
    }
    options.update((key, value) for key, value in GRPC_CHANNEL_ARGUMENTS)
    return list(options.items())


def serve_grpc(models):
    """The gRPC server on GRPC_PORT, on this thread's own event loop: uvloop's, as uvicorn's
    (on the examples' MLP with h2load, 8 clients: p50 1.8-1.9 ms at 280-290 µs of CPU a call,
    against 2.35 ms and 360 µs on asyncio's own loop; one loop shared with uvicorn's did no
    better). No `maximum_concurrent_rpcs`: `unary` counts the calls, from their message
    rather than their headers."""

    async def main():
        server = grpc.aio.server(options=server_options())
        server.add_generic_rpc_handlers(grpc_handlers(models))
        if FRONT_DIR:  # the front holds the port (docs/performance.md): its socket
            server.add_insecure_port(f"unix:{os.path.join(FRONT_DIR, 'grpc.sock')}")
        else:
            server.add_insecure_port(f"0.0.0.0:{GRPC_PORT}")
        await server.start()
        await server.wait_for_termination()

    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main())
