"""A small Keras model on generated data, for `tfimg sweep`'s example: trains on the CPU
in seconds, so the 3 x 3 x 3 grid of examples/sweep/sweep.yaml runs anywhere.

The trial's folder comes in as TFIMG_TRIAL_DIR (tfimg mounts it): one JSON line per epoch
goes to metrics.jsonl there, TensorBoard's events to tensorboard/ beside it.
"""
import argparse
import json
import os
import time

import numpy as np
import tensorflow as tf

AUGMENT = {"low": 0.05, "medium": 0.15, "high": 0.3}


def data(seed=7, count=4000, features=16):
    """Two overlapping classes: a noisy linear boundary, the same on every machine."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(count, features)).astype("float32")
    weights = rng.normal(size=(features,)).astype("float32")
    y = ((x @ weights + 0.5 * rng.normal(size=count)) > 0).astype("float32")
    split = int(count * 0.8)
    return (x[:split], y[:split]), (x[split:], y[split:])


def model(lr, wd):
    l2 = tf.keras.regularizers.l2(wd)
    net = tf.keras.Sequential([
        tf.keras.layers.Dense(32, activation="relu", kernel_regularizer=l2),
        tf.keras.layers.Dense(16, activation="relu", kernel_regularizer=l2),
        tf.keras.layers.Dense(1, activation="sigmoid"),
    ])
    net.compile(optimizer=tf.keras.optimizers.Adam(lr), loss="binary_crossentropy",
                metrics=["accuracy"])
    return net


class Metrics(tf.keras.callbacks.Callback):
    """Appends each epoch's metrics to metrics.jsonl as one JSON object."""

    def __init__(self, path):
        super().__init__()
        self.path = path

    def on_epoch_end(self, epoch, logs=None):
        line = {"epoch": epoch + 1, **{k: float(v) for k, v in (logs or {}).items()}}
        with open(self.path, "a") as f:
            f.write(json.dumps(line) + "\n")
        print(f"epoch {epoch + 1}: " + " ".join(f"{k}={v:.4f}" for k, v in line.items() if k != "epoch"),
              flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--wd", type=float, default=1e-4)
    parser.add_argument("--aug", choices=sorted(AUGMENT), default="low")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    out = os.environ.get("TFIMG_TRIAL_DIR", ".")
    # Which GPUs tfimg gave this trial (the NVIDIA runtime sets the variable).
    print(f"NVIDIA_VISIBLE_DEVICES={os.environ.get('NVIDIA_VISIBLE_DEVICES', 'none')} "
          f"GPUs seen by TensorFlow: {len(tf.config.list_physical_devices('GPU'))}", flush=True)
    # Seeds Python, NumPy and TensorFlow, and under Keras 3 (TensorFlow 2.16 and later) also
    # Keras' own generator, which draws the initial weights and which tf.random.set_seed
    # alone does not reach: without it the current line trains differently on every run.
    tf.keras.utils.set_random_seed(0)
    (x, y), (vx, vy) = data()
    # Augmentation: noise on the training inputs, more for "high".
    noise = np.random.default_rng(1).normal(scale=AUGMENT[args.aug], size=x.shape).astype("float32")
    started = time.time()
    model(args.lr, args.wd).fit(
        x + noise, y, validation_data=(vx, vy), epochs=args.epochs, batch_size=64, verbose=0,
        callbacks=[Metrics(os.path.join(out, "metrics.jsonl")),
                   tf.keras.callbacks.TensorBoard(os.path.join(out, "tensorboard"))],
    )
    print(f"trained in {time.time() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
