#!/usr/bin/env python3
"""What one call of a SavedModel's signature costs, three ways (docs/performance.md, the
session twin): its TF2 function, as `tf.saved_model.load` gives it; its graph in a TF1
session (TensorFlow Serving's way); and in a session that runs each call on the caller's
thread, as the model server's twin does. Run it inside a serving image:

    docker run --rm --entrypoint python3 -v $PWD/export/mlp:/models/mlp:ro \\
        -v $PWD/bench:/bench:ro tfimg/cpu-serving:2.9.3 /bench/serving_call.py /models/mlp/1

Prints each way's wall time and CPU time a call (the process's, all threads), after
checking the three give the same outputs.
"""

import argparse
import time

import numpy as np
import tensorflow as tf


def measured(call, calls, warm_up=200):
    for _ in range(warm_up):
        call()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        call()
    return (time.perf_counter() - wall) / calls * 1e6, (time.process_time() - cpu) / calls * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path", help="a SavedModel's version folder")
    parser.add_argument("--signature", default="serving_default")
    parser.add_argument("--rows", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    function = tf.saved_model.load(args.path).signatures[args.signature]
    (name, spec), *others = function.structured_input_signature[1].items()
    if others:
        raise SystemExit("serving_call.py measures signatures of one input")
    shape = [args.rows] + [dim or 1 for dim in spec.shape.as_list()[1:]]
    value = np.random.default_rng(0).random(shape).astype(spec.dtype.as_numpy_dtype)
    expected = {key: out.numpy() for key, out in function(**{name: tf.constant(value)}).items()}
    ways = {"function": lambda: function(**{name: tf.constant(value)})}
    for label, threads in (("session", 0), ("session, caller's thread", -1)):
        session = tf.compat.v1.Session(
            graph=tf.Graph(),
            config=tf.compat.v1.ConfigProto(inter_op_parallelism_threads=threads),
        )
        graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], args.path)
        signature = graph.signature_def[args.signature]
        keys = sorted(signature.outputs)
        call = session.make_callable(
            [signature.outputs[key].name for key in keys], [signature.inputs[name].name]
        )
        for key, out in zip(keys, call(value)):
            np.testing.assert_array_equal(out, expected[key])
        ways[label] = lambda call=call: call(value)
    for label, call in ways.items():
        wall, cpu = measured(call, args.calls)
        print(f"{label:26} {wall:7.1f} µs wall {cpu:7.1f} µs CPU a call ({args.rows} rows)")


if __name__ == "__main__":
    main()
