"""The ceiling for `just bench`'s row 13, run inside the `cpu-serving` image: the SavedModel
called in this process through its `serving_default` signature (as the model server calls
it), by CLIENTS threads back to back for SECONDS after a warm-up, at each batch size.
Prints one JSON object: per batch, requests/s and p50/p99 latency in ms. The server's side
of the row is driven by wrk from the host (bench/serving_row.py).
"""
import argparse
import json
import os
import threading
import time

import numpy as np
import tensorflow as tf


def drive(call, clients, seconds, warm_up):
    """CLIENTS threads calling `call()` back to back; the latencies (s) of the calls that
    started after the warm-up and ended before the deadline."""
    start = time.perf_counter()
    measure_from = start + warm_up
    deadline = measure_from + seconds
    latencies = [[] for _ in range(clients)]
    errors = []

    def client(index):
        try:
            while True:
                began = time.perf_counter()
                if began >= deadline:
                    return
                call()
                ended = time.perf_counter()
                if began >= measure_from and ended <= deadline:
                    latencies[index].append(ended - began)
        except Exception as error:  # reported, not swallowed
            errors.append(repr(error))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit(f"a client failed: {errors[0]}")
    values = np.array([value for values in latencies for value in values]) * 1000
    return {
        "requests": len(values),
        "rps": len(values) / seconds,
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
    }


def load_arguments(parser):
    """The load's own flags."""
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warm-up", type=float, default=2)
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--features", type=int, default=16)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    load_arguments(parser)
    args = parser.parse_args()
    versions = sorted((int(v) for v in os.listdir(args.model_dir) if v.isdigit()), reverse=True)
    model = tf.saved_model.load(os.path.join(args.model_dir, str(versions[0])))
    signature = model.signatures["serving_default"]
    (name,) = signature.structured_input_signature[1].keys()
    results = {}
    for batch in [int(b) for b in args.batches.split(",")]:
        rows = np.random.default_rng(batch).normal(size=(batch, args.features)).astype("float32")

        def call():
            for value in signature(**{name: tf.constant(rows)}).values():
                value.numpy().tolist()

        results[f"batch_{batch}"] = drive(call, args.clients, args.seconds, args.warm_up)
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
