"""The second training job of bench row 14, whose best settings start slowly and finish on
top ("late bloomers"): a Keras MLP on 10 noisy classes, one configuration (lr, dropout,
width) at a time, 12 epochs, reporting `val_accuracy` after each.

The data (the same for every trial): 10 classes in 64 dimensions, each three Gaussian
clusters, 1500 training points of which 40% have their label replaced by a random one
(the 2000 validation points' labels are clean). What makes late bloomers: without dropout a wide net learns fast and
then fits the wrong labels, so its validation accuracy peaks in the first epochs and
falls; with high dropout it starts lower and climbs to the top by epoch 12. What makes
clear losers: a narrow net (32), high dropout on a narrow one, and a high learning rate
without dropout (it fits the wrong labels first).

As a tfimg trial: `python late.py --lr 1e-3 --dropout 0.5 --width 512` appends one JSON
line per epoch to `$TFIMG_TRIAL_DIR/metrics.jsonl`, as train.py does. `ray_tune.py` and
`optuna_run.py --job late` import it and pass their own `report`. Every epoch is also
logged with its wall-clock time (`wall`) for the bench to read.
"""

from bench_trial import log_epoch, tfimg_trial, threads

EPOCHS = 12
CLASSES, DIM, CLUSTERS = 10, 64, 3
TRAIN, VAL = 1500, 2000
SPREAD = 0.65
FLIPPED = 0.4
BATCH = 16
# The 27-grid: the names as the sweep files, Ray Tune and Optuna use them.
GRID = {"lr": [2e-4, 1e-3, 3e-3], "dropout": [0.0, 0.4, 0.75], "width": [32, 128, 512]}


def data():
    import numpy as np
    rng = np.random.default_rng(4321)
    centres = SPREAD * rng.normal(size=(CLASSES, CLUSTERS, DIM)).astype("float32")

    def make(n, flipped):
        labels = rng.integers(0, CLASSES, n)
        points = centres[labels, rng.integers(0, CLUSTERS, n)] + rng.normal(size=(n, DIM)).astype("float32")
        wrong = rng.random(n) < flipped
        labels = np.where(wrong, rng.integers(0, CLASSES, n), labels)
        return points, labels

    return make(TRAIN, FLIPPED), make(VAL, 0.0)


def model(lr, dropout, width):
    import tensorflow as tf
    layers = tf.keras.layers
    net = tf.keras.Sequential([
        tf.keras.Input((DIM,)),
        layers.Dense(width, activation="relu"),
        layers.Dropout(dropout),
        layers.Dense(width, activation="relu"),
        layers.Dropout(dropout),
        layers.Dense(CLASSES, activation="softmax"),
    ])
    net.compile(optimizer=tf.keras.optimizers.Adam(lr), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return net


def train(lr, dropout, width, seed, report, log=None, key=""):
    """Trains one configuration; `report(epoch, val_accuracy)` after each epoch returns
    False to stop early. `log`: a file each epoch is appended to with its wall time."""
    import tensorflow as tf
    threads()
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(seed)
    (x, y), (vx, vy) = data()
    net = model(lr, dropout, int(width))
    last = []

    class Report(tf.keras.callbacks.Callback):
        def on_epoch_end(self, index, logs=None):
            epoch, accuracy = index + 1, float(logs["val_accuracy"])
            last[:] = [accuracy]
            log_epoch(log, key, {"lr": lr, "dropout": dropout, "width": width}, epoch, accuracy)
            if report(epoch, accuracy) is False:
                self.model.stop_training = True

    # One `fit` for all epochs (its per-call cost is most of a short epoch's).
    net.fit(x, y, batch_size=BATCH, epochs=EPOCHS, validation_data=(vx, vy), validation_batch_size=500,
            callbacks=[Report()], verbose=0)
    return last[0] if last else None


def main():
    tfimg_trial([("lr", float), ("dropout", float), ("width", int)], train)


if __name__ == "__main__":
    main()
