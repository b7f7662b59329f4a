"""`just bench`'s row 13: tfimg's model server against the same model in-process.

The examples' MLP (examples/sweep/code/train.py, 16 inputs) is trained one epoch in
`cpu-headless` and saved as `export/mlp/1`; `tfimg serve ./export/mlp -d` serves it (the
`cpu-serving` image is built first when missing). bench/serving_load.py then runs in the
`cpu-serving` image on the host's network, with the model mounted read-only: 8 client
threads call the model's `serving_default` signature in-process (the ceiling), then POST
`:predict` to the server's published port on 127.0.0.1, as a user's client would, at batch
1 and batch 32. The issue's target: the server adds at most 2 ms at p50 for batch 1.
"""
import json
import shutil
from pathlib import Path

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


def row(work, runs, sh, tfimg, ca, label, seconds=10):
    """Rows 13a (batch 1) and 13b (batch 32) over 8 clients, 13c (batch 1) over one.
    `runs` is not used: each side runs for `seconds` after a 2 s warm-up, thousands of
    requests."""
    del runs
    root = Path(__file__).resolve().parent.parent
    folder = work / "serving"
    (folder / "code").mkdir(parents=True, exist_ok=True)
    (folder / "export").mkdir(exist_ok=True)
    shutil.copy(root / "examples" / "sweep" / "code" / "train.py", folder / "code" / "train.py")
    (folder / "code" / "save.py").write_text(SAVE)
    sh(tfimg, "run", "cpu-headless", "--ca-cert", ca, "--name", "tfbench-serving-train",
       "--mount", "./code:ro", "--mount", "./export", "--", "python", "code/save.py", cwd=folder)
    image = sh(tfimg, "build", "cpu-serving", "--ca-cert", ca, cwd=folder).stdout.strip()
    served = sh(tfimg, "serve", "./export/mlp", "-d", "--ca-cert", ca, cwd=folder).stdout
    fields = dict(line.split(None, 1) for line in served.splitlines() if line.strip())
    container, url = fields["container"].strip(), fields["model"].strip()
    port = int(url.split(":")[2].split("/")[0])
    def load(clients, batches):
        done = sh("docker", "run", "--rm", "--label", label, "--name", "tfbench-serving-load",
                  "--network", "host", "--user", "root", "--entrypoint", "python3",
                  "-v", f"{folder / 'export' / 'mlp'}:/models/mlp:ro",
                  "-v", f"{root / 'bench'}:/bench:ro",
                  image, "/bench/serving_load.py", "--model-dir", "/models/mlp", "--model", "mlp",
                  "--port", str(port), "--clients", str(clients), "--batches", batches,
                  "--seconds", str(seconds))
        return json.loads(done.stdout.strip().splitlines()[-1])

    try:
        eight = load(8, "1,32")
        # One client: the server's own cost per request, without queueing on the 2 cores
        # the clients, the server and the ceiling share.
        one = load(1, "1")
    finally:
        sh("docker", "rm", "-f", container, check=False)
    return [serving_row(eight, 1, 8, "13a", "<= 2 ms added at p50", 2.0),
            serving_row(eight, 32, 8, "13b", None, None),
            serving_row(one, 1, 1, "13c", None, None)]


def serving_row(results, batch, clients, number, target, limit):
    http, ceiling = results[f"http_batch_{batch}"], results[f"in_process_batch_{batch}"]

    def cell(side):
        return f"p50 {side['p50_ms']:.2f} ms, p99 {side['p99_ms']:.2f} ms, {side['rps']:.0f} req/s"

    added = http["p50_ms"] - ceiling["p50_ms"]
    who = "8 concurrent clients" if clients == 8 else f"{clients} client"
    name = (f"{number}. model server at batch {batch}, {who} (tfimg serve, "
            f"POST :predict over HTTP, vs the SavedModel's signature in-process)")
    print(f"  {name}: {cell(http)} vs {cell(ceiling)}; adds {added:.2f} ms at p50", flush=True)
    return {
        "name": name, "unit": "ms", "target": target, "limit": limit,
        "tfimg": {"median": http["p50_ms"], "min": http["p50_ms"], "max": http["p99_ms"]},
        "alternative": {"median": ceiling["p50_ms"], "min": ceiling["p50_ms"], "max": ceiling["p99_ms"]},
        "cells": {"tfimg": cell(http), "alternative": cell(ceiling)},
        "ratio": added, "ratio_text": f"+{added:.2f} ms at p50",
        "raw": {"http": http, "in_process": ceiling},
    }
