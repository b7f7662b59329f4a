"""The load for `just bench`'s row 13, run inside the `cpu-serving` image on the host's
network: the same SavedModel called in this process (its `serving_default` signature, as
the model server calls it: the ceiling) and through tfimg's model server over HTTP
(`POST /v1/models/NAME:predict`, JSON rows, one kept-alive connection per client), each
by CLIENTS threads for SECONDS after a warm-up, at each batch size. Prints one JSON object:
per side and batch, requests/s and p50/p99 latency in ms.

A threaded standard-library client rather than a load tool (wrk, hey, locust): none is
installable here without a registry, and this way both sides are driven by the same
loop, timer and threads, in the same process, so the difference is the server's. The
GIL is released while a client waits on its socket (and while TensorFlow runs), and a
client's own work per request (sending a prepared body, parsing the answer) is tens of
microseconds, well under the latencies measured.
"""
import argparse
import http.client
import json
import os
import threading
import time

import numpy as np
import tensorflow as tf


def drive(call, clients, seconds, warm_up):
    """CLIENTS threads calling `call(state)` back to back; latencies (s) of the calls that
    started after the warm-up and ended before the deadline, and the measured span."""
    start = time.perf_counter()
    measure_from = start + warm_up
    deadline = measure_from + seconds
    latencies = [[] for _ in range(clients)]
    errors = []

    def client(index):
        state = {}
        try:
            while True:
                began = time.perf_counter()
                if began >= deadline:
                    return
                call(state)
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
    return [value for values in latencies for value in values], seconds


def summary(latencies, seconds):
    values = np.array(latencies) * 1000
    return {
        "requests": len(latencies),
        "rps": len(latencies) / seconds,
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
    }


def in_process(model_dir, rows):
    versions = sorted((int(v) for v in os.listdir(model_dir) if v.isdigit()), reverse=True)
    model = tf.saved_model.load(os.path.join(model_dir, str(versions[0])))
    signature = model.signatures["serving_default"]
    (name,) = signature.structured_input_signature[1].keys()

    def call(state):
        outputs = signature(**{name: tf.constant(rows)})
        for value in outputs.values():
            value.numpy().tolist()

    return call


def over_http(port, model, rows):
    body = json.dumps({"instances": rows.tolist()}).encode()
    path = f"/v1/models/{model}:predict"

    def call(state):
        if "connection" not in state:
            state["connection"] = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection = state["connection"]
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        if response.status != 200:
            raise RuntimeError(f"{response.status}: {answer[:200]!r}")
        if len(json.loads(answer)["predictions"]) != len(rows):
            raise RuntimeError("wrong number of predictions")

    return call


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warm-up", type=float, default=2)
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--features", type=int, default=16)
    args = parser.parse_args()
    results = {}
    for batch in [int(b) for b in args.batches.split(",")]:
        rows = np.random.default_rng(batch).normal(size=(batch, args.features)).astype("float32")
        for side, call in (
            ("in_process", in_process(args.model_dir, rows)),
            ("http", over_http(args.port, args.model, rows)),
        ):
            latencies, seconds = drive(call, args.clients, args.seconds, args.warm_up)
            results[f"{side}_batch_{batch}"] = summary(latencies, seconds)
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()
