"""`just bench`'s row 13: tfimg's model server against the same model in-process.

The examples' MLP (examples/sweep/code/train.py, 16 inputs) is trained one epoch in
`cpu-headless` and saved as `export/mlp/1`; `tfimg serve ./export/mlp -d` serves it (the
`cpu-serving` image is built first when missing). The ceiling: bench/serving_load.py, in
the `cpu-serving` image with the model mounted read-only, where client threads call the
model's `serving_default` signature in-process. The server: wrk on this machine, the load
tool a user would point at an HTTP service, POSTing `:predict` to the published port on
127.0.0.1 over kept-alive connections, one per client. Both sides run for SECONDS after a
2 s warm-up, at batch 1 and 32 over 8 clients, then at batch 1 over one client; ROUNDS
rounds, alternating which side goes first, and each figure is the median over the rounds
(what the server adds: the median of each round's difference). The issue's target: the
server adds at most 2 ms at p50 for batch 1 over 8 clients.
"""
import json
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
    if shutil.which("wrk") is None:
        raise SystemExit("row 13 drives the server with wrk: install it (`apt-get install wrk`; scripts/setup-machine does)")
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

    def over_grpc(clients, batches):
        done = sh("docker", "run", "--rm", "--label", label, "--name", "tfbench-serving-grpc",
                  "--network", "host", "--user", "root", "--entrypoint", "python3",
                  "-v", f"{root / 'bench'}:/bench:ro", "-w", "/bench",
                  image, "/bench/grpc_load.py", "--address", address, "--model", "mlp",
                  "--clients", str(clients), "--batches", ",".join(map(str, batches)),
                  "--seconds", str(SECONDS))
        measured = json.loads(done.stdout.strip().splitlines()[-1])
        return {batch: measured[f"batch_{batch}"] for batch in batches}

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


def serving_row(rounds, batch, clients, number, target, limit, side="http"):
    def median(side, key):
        return statistics.median(measured[side][batch][key] for measured in rounds)

    def cell(side):
        return (f"p50 {median(side, 'p50_ms'):.2f} ms, p99 {median(side, 'p99_ms'):.2f} ms, "
                f"{median(side, 'rps'):.0f} req/s")

    added = statistics.median(m[side][batch]["p50_ms"] - m["in_process"][batch]["p50_ms"] for m in rounds)
    who = "8 concurrent clients" if clients == 8 else f"{clients} client"
    how = {"http": "POST :predict over HTTP driven by wrk",
           "grpc": "Predict over gRPC driven by tensorflow-serving-api's stubs (bench/grpc_load.py)"}[side]
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
