"""The gRPC requests of `just bench`'s row 13, written in the `cpu-serving` image (which has
the `tensorflow-serving-api` package): for each JSON body of the REST side
(`{"instances": rows}`), the same rows as a TensorFlow Serving PredictRequest, framed as
gRPC frames a message (a zero flag byte, its length in 4 big-endian bytes, the message), for
h2load to POST to `/tensorflow.serving.PredictionService/Predict`. The tensor is made as a
TensorFlow Serving user's client makes it: `tf.make_tensor_proto` of a float32 array."""
import argparse
import json
import struct

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True, help="the signature's input name")
    parser.add_argument("bodies", nargs="+", help="FILE.json: each writes FILE.grpc beside it")
    args = parser.parse_args()
    for path in args.bodies:
        with open(path) as file:
            rows = np.array(json.load(file)["instances"], np.float32)
        request = predict_pb2.PredictRequest()
        request.model_spec.name = args.model
        request.inputs[args.input].CopyFrom(tf.make_tensor_proto(rows))
        message = request.SerializeToString()
        with open(path.removesuffix(".json") + ".grpc", "wb") as file:
            file.write(struct.pack(">BI", 0, len(message)) + message)


if __name__ == "__main__":
    main()
