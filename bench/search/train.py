"""The training job of bench row 14: a small Keras CNN on a synthetic image set, one
configuration (lr, wd, aug) at a time, 9 epochs, reporting `val_accuracy` after each.

The data: 4 classes, each a fixed random 16×16 template; an image is its class's
template, faint, under unit Gaussian noise (the same images for every trial). What makes
clear losers: `lr: 1e-4` learns too slowly for 9 epochs, and augmentation that does not
fit the data (`medium` flips the images, whose templates are not symmetric; `high` also
adds noise) costs accuracy; `wd` matters little.

As a tfimg trial: `python train.py --lr 1e-3 --wd 1e-4 --aug low` appends one JSON line
per epoch to `$TFIMG_TRIAL_DIR/metrics.jsonl`. `ray_tune.py` and `optuna_run.py` import
`train` and pass their own `report`. Every epoch is also logged with its wall-clock time
(`wall`) for the bench to read.
"""

from bench_trial import log_epoch, tfimg_trial, threads

EPOCHS = 9
SIDE, CLASSES = 16, 4
TRAIN, VAL = 4000, 1000
SIGNAL = 0.25


def data():
    import numpy as np
    rng = np.random.default_rng(1234)
    templates = rng.normal(size=(CLASSES, SIDE, SIDE, 1)).astype("float32")

    def make(n):
        labels = rng.integers(0, CLASSES, n)
        images = SIGNAL * templates[labels] + rng.normal(size=(n, SIDE, SIDE, 1)).astype("float32")
        return images, labels

    return make(TRAIN), make(VAL)


def model(lr, wd, aug):
    import tensorflow as tf
    layers = tf.keras.layers
    reg = tf.keras.regularizers.l2(wd)
    stack = [tf.keras.Input((SIDE, SIDE, 1))]
    if aug in ("medium", "high"):
        stack.append(layers.RandomFlip("horizontal_and_vertical"))
    if aug == "high":
        stack.append(layers.GaussianNoise(1.0))
    stack += [
        layers.Conv2D(16, 3, activation="relu", kernel_regularizer=reg),
        layers.MaxPooling2D(),
        layers.Conv2D(32, 3, activation="relu", kernel_regularizer=reg),
        layers.Flatten(),
        layers.Dense(CLASSES, activation="softmax", kernel_regularizer=reg),
    ]
    net = tf.keras.Sequential(stack)
    net.compile(optimizer=tf.keras.optimizers.Adam(lr), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return net


def train(lr, wd, aug, seed, report, log=None, key=""):
    """Trains one configuration; `report(epoch, val_accuracy)` after each epoch returns
    False to stop early. `log`: a file each epoch is appended to with its wall time."""
    import tensorflow as tf
    threads()
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(seed)
    (x, y), (vx, vy) = data()
    net = model(lr, wd, aug)
    for epoch in range(1, EPOCHS + 1):
        net.fit(x, y, batch_size=64, epochs=1, verbose=0)
        accuracy = float(net.evaluate(vx, vy, batch_size=256, verbose=0)[1])
        log_epoch(log, key, {"lr": lr, "wd": wd, "aug": aug}, epoch, accuracy)
        if report(epoch, accuracy) is False:
            return accuracy
    return accuracy


def main():
    tfimg_trial([("lr", float), ("wd", float), ("aug", str)], train)


if __name__ == "__main__":
    main()
