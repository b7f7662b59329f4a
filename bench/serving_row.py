"""`just bench`'s row 13: tfimg's model server against the same model in-process.

The examples' MLP (examples/sweep/code/train.py, 16 inputs) is trained one epoch in
`cpu-headless` and saved as `export/mlp/1`; `tfimg serve ./export/mlp -d` serves it (the
`cpu-serving` image is built first when missing). The ceiling: bench/serving_load.py, in
the `cpu-serving` image with the model mounted read-only, where client threads call the
model's `serving_default` signature in-process. The server, from this machine over kept-alive
connections to the published ports on 127.0.0.1, one per client, by the load tools a user
would point at it, both in C: wrk POSTing `:predict` (REST), and h2load (nghttp2's HTTP/2
load tool) POSTing TensorFlow Serving's `PredictionService/Predict` (gRPC) with the same
rows (bench/grpc_body.py writes the requests). h2load checks HTTP's status only, and gRPC
answers its errors with 200: each gRPC run is checked by the server's own metrics, which
must count as many gRPC predicts as h2load sent and no new error. Every side runs for
SECONDS after a 2 s warm-up, at batch 1 and 32 over 8 clients, then at batch 1 over one
client; ROUNDS rounds, alternating which side goes first, and each figure is the median
over the rounds (what the server adds: the median of each round's difference). The
targets: the server adds at most 2 ms at p50 for batch 1 over 8 clients, 1 ms at batch 32.
"""
import json
import os
import random
import re
import shutil
import statistics
import urllib.request
from pathlib import Path

ROUNDS = 3
SECONDS = 8

SAVE = """
import sys
sys.path.insert(0, "/tf/code")
import tensorflow as tf
from train import data, model

tf.keras.utils.set_random_seed(0)
(x, y), _ = data()
net = model(1e-3, 1e-4)
net.fit(x, y, epochs=1, batch_size=64, verbose=0)
net.save("/tf/export/mlp/1")
"""

# wrk's request: the body from the file TFIMG_BENCH_BODY names.
WRK_SCRIPT = """
local file = assert(io.open(os.getenv("TFIMG_BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
"""

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def row(work, runs, sh, tfimg, ca, label):
    """Rows 13a (batch 1) and 13b (batch 32) over 8 clients, 13c (batch 1) over one.
    `runs` is not used: each side runs ROUNDS times for SECONDS, thousands of requests."""
    del runs
    for tool, package in (("wrk", "wrk"), ("h2load", "nghttp2-client")):
        if shutil.which(tool) is None:
            raise SystemExit(f"row 13 drives the server with {tool}: install it (`apt-get install {package}`; "
                             "scripts/setup-machine does)")
    root = Path(__file__).resolve().parent.parent
    folder = work / "serving"
    (folder / "code").mkdir(parents=True, exist_ok=True)
    shutil.copy(root / "examples" / "sweep" / "code" / "train.py", folder / "code" / "train.py")
    (folder / "code" / "save.py").write_text(SAVE)
    (folder / "post.lua").write_text(WRK_SCRIPT)
    bodies = {}
    for batch in (1, 32):
        rows = [[random.Random(batch * 1000 + i).gauss(0, 1) for _ in range(16)] for i in range(batch)]
        bodies[batch] = folder / f"batch{batch}.json"
        bodies[batch].write_text(json.dumps({"instances": rows}))
    sh(tfimg, "run", "cpu-headless", "--ca-cert", ca, "--name", "tfbench-serving-train",
       "--mount", "./code:ro", "--mount", "./export", "--", "python", "code/save.py", cwd=folder)
    image = sh(tfimg, "build", "cpu-serving", "--ca-cert", ca, cwd=folder).stdout.strip()
    served = sh(tfimg, "serve", "./export/mlp", "-d", "--ca-cert", ca, cwd=folder).stdout
    fields = dict(line.split(None, 1) for line in served.splitlines() if line.strip())
    container, url, address = fields["container"].strip(), fields["model"].strip(), fields["grpc"].strip()

    def in_process(clients, batches):
        done = sh("docker", "run", "--rm", "--label", label, "--name", "tfbench-serving-load",
                  "--user", "root", "--entrypoint", "python3",
                  "-v", f"{folder / 'export' / 'mlp'}:/models/mlp:ro",
                  "-v", f"{root / 'bench'}:/bench:ro",
                  image, "/bench/serving_load.py", "--model-dir", "/models/mlp",
                  "--clients", str(clients), "--batches", ",".join(map(str, batches)),
                  "--seconds", str(SECONDS))
        measured = json.loads(done.stdout.strip().splitlines()[-1])
        return {batch: measured[f"batch_{batch}"] for batch in batches}

    root_url = url.split("/v1/")[0]
    with urllib.request.urlopen(f"{url}/metadata", timeout=30) as response:
        inputs = json.loads(response.read())["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"]
    (input_name,) = inputs
    sh("docker", "run", "--rm", "--label", label, "--name", "tfbench-serving-bodies",
       "--user", f"{os.getuid()}:{os.getgid()}", "--entrypoint", "python3",
       "-v", f"{root / 'bench'}:/bench:ro", "-v", f"{folder}:/bodies",
       image, "/bench/grpc_body.py", "--model", "mlp", "--input", input_name,
       *[f"/bodies/{path.name}" for path in bodies.values()])

    def over_grpc(clients, batches):
        measured = {}
        for batch in batches:
            log = folder / f"h2load-{batch}.tsv"
            log.unlink(missing_ok=True)  # h2load appends to it

            def h2load(seconds, warm_up):
                return sh("h2load", "-D", str(seconds), "--warm-up-time", str(warm_up),
                          "-c", str(clients), "-t", str(min(clients, 2)), "-m", "1",
                          "-d", str(folder / f"batch{batch}.grpc"),
                          "-H", "content-type: application/grpc", "-H", "te: trailers",
                          "--log-file", str(log),
                          f"http://{address}/tensorflow.serving.PredictionService/Predict")

            before = grpc_counts(root_url)
            done = h2load(SECONDS, 2)
            after = grpc_counts(root_url)
            measured[batch] = parse_h2load(done.stdout, log.read_text(), before, after)
        return measured

    def over_http(clients, batches):
        measured = {}
        for batch in batches:
            check(url, bodies[batch], batch)
            env = {"TFIMG_BENCH_BODY": str(bodies[batch]), "PATH": "/usr/bin:/bin"}

            def wrk(seconds):
                return sh("wrk", "-d", str(seconds), "--latency", "-t", str(min(clients, 2)),
                          "-c", str(clients), "-s", str(folder / "post.lua"), f"{url}:predict", env=env)

            wrk(2)  # the warm-up
            measured[batch] = parse_wrk(wrk(SECONDS).stdout)
        return measured

    plans = [(8, (1, 32)), (1, (1,))]
    results = {plan: [] for plan in plans}
    try:
        for round_number in range(ROUNDS):
            for clients, batches in plans:
                sides = [("in_process", in_process), ("http", over_http)]
                if clients == 8:
                    sides.append(("grpc", over_grpc))
                if round_number % 2:
                    sides.reverse()
                measured = {side: run(clients, batches) for side, run in sides}
                results[(clients, batches)].append(measured)
                for batch in batches:
                    shown = ", ".join(f"{side} p50 {measured[side][batch]['p50_ms']:.2f} ms" for side, _ in sides)
                    print(f"  round {round_number + 1}, {clients} client(s), batch {batch}: {shown}", flush=True)
    finally:
        sh("docker", "rm", "-f", container, check=False)
    eight, one = results[plans[0]], results[plans[1]]
    return [serving_row(eight, 1, 8, "13a", "<= 2 ms added at p50", 2.0),
            serving_row(eight, 32, 8, "13b", "<= 1 ms added at p50", 1.0),
            serving_row(one, 1, 1, "13c", None, None),
            serving_row(eight, 1, 8, "13d", None, None, side="grpc"),
            serving_row(eight, 32, 8, "13e", None, None, side="grpc")]


def check(url, body, batch):
    """One request before the load: the server answers it with one prediction per row."""
    request = urllib.request.Request(f"{url}:predict", data=body.read_bytes(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        predictions = json.loads(response.read())["predictions"]
    if len(predictions) != batch:
        raise SystemExit(f"the server answered {len(predictions)} predictions for {batch} rows")


def parse_wrk(text):
    """Requests/s and the p50/p99 latency (ms) of wrk's `--latency` report; a non-2xx
    answer or a socket error fails the row."""
    if "Non-2xx" in text or re.search(r"Socket errors: .*[1-9]", text):
        raise SystemExit(f"wrk saw errors:\n{text}")

    def latency(percent):
        value, unit = re.search(rf"^\s+{percent}%\s+([0-9.]+)(us|ms|s)\s*$", text, re.M).groups()
        return float(value) * UNITS[unit]

    requests = int(re.search(r"^\s+(\d+) requests in", text, re.M).group(1))
    rps = float(re.search(r"^Requests/sec:\s+([0-9.]+)", text, re.M).group(1))
    return {"requests": requests, "rps": rps, "p50_ms": latency(50), "p99_ms": latency(99)}


def grpc_counts(root_url):
    """From the server's metrics: its gRPC predicts so far, and its answers that were not OK."""
    with urllib.request.urlopen(f"{root_url}/monitoring/prometheus/metrics", timeout=30) as response:
        text = response.read().decode()
    predicts = sum(float(value) for value in re.findall(
        r'^:tensorflow:serving:request_latency_count\{(?=[^}]*API="predict")(?=[^}]*entrypoint="GRPC")[^}]*\} (\S+)$',
        text, re.M))
    failed = sum(float(value) for value in re.findall(
        r'^:tensorflow:serving:request_count_total\{(?=[^}]*status="(?!OK")[^"]*")[^}]*\} (\S+)$', text, re.M))
    return predicts, failed


def parse_h2load(text, log, before, after):
    """Requests/s and p50/p99 latency (ms) from h2load's per-request log, the requests the
    main duration measured; a failed stream, another status than 200, fewer gRPC predicts
    counted by the server than h2load sent, or a new error in its metrics fails the row."""
    if not re.search(r"^requests: \d+ total, \d+ started, (\d+) done, \1 succeeded, 0 failed, 0 errored", text, re.M):
        raise SystemExit(f"h2load saw errors:\n{text}")
    rows = [line.split("\t") for line in log.splitlines() if line.strip()]
    if not rows or any(row[1] != "200" for row in rows):
        raise SystemExit(f"h2load's log holds a stream that did not end in 200:\n{text}")
    sent = int(re.search(r"^requests: (\d+) total", text, re.M).group(1))
    if after[0] - before[0] < sent or after[1] != before[1]:
        raise SystemExit(f"the server counted {after[0] - before[0]:.0f} gRPC predicts for h2load's {sent}, "
                         f"{after[1] - before[1]:.0f} of its answers not OK")
    latencies = sorted(int(row[2]) / 1000 for row in rows)
    seconds = (max(int(row[0]) + int(row[2]) for row in rows) - min(int(row[0]) for row in rows)) / 1e6

    def percentile(share):
        return latencies[min(len(latencies) - 1, int(share * len(latencies)))]

    return {"requests": len(latencies), "rps": len(latencies) / seconds,
            "p50_ms": percentile(0.5), "p99_ms": percentile(0.99)}


def serving_row(rounds, batch, clients, number, target, limit, side="http"):
    def median(side, key):
        return statistics.median(measured[side][batch][key] for measured in rounds)

    def cell(side):
        return (f"p50 {median(side, 'p50_ms'):.2f} ms, p99 {median(side, 'p99_ms'):.2f} ms, "
                f"{median(side, 'rps'):.0f} req/s")

    added = statistics.median(m[side][batch]["p50_ms"] - m["in_process"][batch]["p50_ms"] for m in rounds)
    who = "8 concurrent clients" if clients == 8 else f"{clients} client"
    how = {"http": "POST :predict over HTTP driven by wrk",
           "grpc": "Predict over gRPC driven by h2load"}[side]
    name = f"{number}. model server at batch {batch}, {who} (tfimg serve, {how}, vs the SavedModel's signature in-process)"
    print(f"  {name}: {cell(side)} vs {cell('in_process')}; adds {added:.2f} ms at p50", flush=True)
    return {
        "name": name, "unit": "ms", "target": target, "limit": limit,
        "tfimg": {"median": median(side, "p50_ms"), "min": median(side, "p50_ms"), "max": median(side, "p99_ms")},
        "alternative": {"median": median("in_process", "p50_ms"), "min": median("in_process", "p50_ms"),
                        "max": median("in_process", "p99_ms")},
        "cells": {"tfimg": cell(side), "alternative": cell("in_process")},
        "ratio": added, "ratio_text": f"{added:+.2f} ms at p50",
        "raw": {"rounds": [{side: {str(b): v for b, v in m[side].items()} for side in m} for m in rounds]},
    }
