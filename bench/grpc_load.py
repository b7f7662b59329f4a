"""The gRPC side of `just bench`'s row 13, run in the `cpu-serving` image on the host's
network: CLIENTS threads, each with a channel of its own, calling TensorFlow Serving's
`PredictionService.Predict` through the `tensorflow-serving-api` package's stubs (the
client a TensorFlow Serving user has) back to back for SECONDS after a warm-up, at each
batch size, with the same rows as the in-process ceiling (bench/serving_load.py). No gRPC
load tool installs here (wrk speaks HTTP/1.1 only), so this is one of our own on grpcio.
Prints one JSON object: per batch, requests/s and p50/p99 latency in ms."""
import argparse
import itertools
import json
import threading

import grpc
import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import get_model_metadata_pb2, predict_pb2, prediction_service_pb2_grpc

from serving_load import drive, load_arguments


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--model", required=True)
    load_arguments(parser)
    args = parser.parse_args()
    stubs = [prediction_service_pb2_grpc.PredictionServiceStub(grpc.insecure_channel(args.address))
             for _ in range(args.clients)]
    asked = get_model_metadata_pb2.GetModelMetadataRequest()
    asked.model_spec.name = args.model
    asked.metadata_field.append("signature_def")
    definitions = get_model_metadata_pb2.SignatureDefMap()
    stubs[0].GetModelMetadata(asked, 30).metadata["signature_def"].Unpack(definitions)
    (name,) = definitions.signature_def["serving_default"].inputs
    results = {}
    for batch in [int(b) for b in args.batches.split(",")]:
        rows = np.random.default_rng(batch).normal(size=(batch, args.features)).astype("float32")
        request = predict_pb2.PredictRequest()
        request.model_spec.name = args.model
        request.inputs[name].CopyFrom(tf.make_tensor_proto(rows))
        turn = itertools.count()
        local = threading.local()

        def call():
            # Each thread its own stub (channel); the answer decoded as a client would.
            if not hasattr(local, "stub"):
                local.stub = stubs[next(turn) % len(stubs)]
            for value in local.stub.Predict(request, 30).outputs.values():
                tf.make_ndarray(value).tolist()

        results[f"batch_{batch}"] = drive(call, args.clients, args.seconds, args.warm_up)
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
