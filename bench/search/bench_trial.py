"""What bench row 14's training jobs (train.py, late.py) share: one core per trial, the
epoch log the bench reads, and running one configuration as a tfimg trial."""

import argparse
import json
import os
import time


def threads():
    """One core per trial, for every tool alike (before TensorFlow runs anything)."""
    import tensorflow as tf
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass  # already set in this process


def log_epoch(log, key, params, epoch, accuracy):
    """Appends one epoch, with its params and wall-clock time, to `log` (when given)."""
    if not log:
        return
    line = json.dumps({"trial": key, **params, "epoch": epoch, "val_accuracy": accuracy, "wall": time.time()})
    with open(log, "a") as out:
        out.write(line + "\n")


def tfimg_trial(flags, train):
    """Runs `train(*flags' values, seed, report)` as a tfimg trial: the params from the
    command's flags (`flags`: (name, type) in `train`'s order), the seed from
    `$BENCH_SEED`, one JSON line per epoch to `$TFIMG_TRIAL_DIR/metrics.jsonl`."""
    parser = argparse.ArgumentParser()
    for name, kind in flags:
        parser.add_argument(f"--{name}", type=kind, required=True)
    args = parser.parse_args()
    metrics = os.path.join(os.environ["TFIMG_TRIAL_DIR"], "metrics.jsonl")
    seed = int(os.environ.get("BENCH_SEED", "1"))

    def report(epoch, accuracy):
        with open(metrics, "a") as out:
            out.write(json.dumps({"epoch": epoch, "val_accuracy": accuracy, "wall": time.time()}) + "\n")

    train(*[getattr(args, name) for name, _ in flags], seed, report)
