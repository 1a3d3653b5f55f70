"""Keras 3 `model.fit` on a tiny model, for what its progress bar prints:

    KERAS_BACKEND=torch python keras_fit.py VERBOSE [evaluate] [checkpoint DIR] [long]

VERBOSE is fit's `verbose` (1: the bar, redrawn at each step; 2: one line per epoch).  Each step
sleeps 60 ms, longer than the bar's redraw interval (50 ms), so that every step is drawn; step
11 of epoch 2 sleeps 600 ms.  `evaluate` runs `model.evaluate` and `model.predict` after fit,
`checkpoint DIR` adds `ModelCheckpoint(verbose=1)`, and `long` makes an epoch 325 steps (its
bar's line grows past 60 KB before the epoch's newline)."""
import sys
import time

import keras
import numpy as np


class Pace(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        time.sleep(0.6 if (self.epoch, batch) == (1, 10) else 0.06)


def main() -> None:
    args = sys.argv[1:]
    verbose = int(args[0]) if args else 1
    keras.utils.set_random_seed(0)
    rows = 6500 if "long" in args else 320
    x = np.random.rand(rows, 8).astype("float32")
    y = (x.sum(axis=1) > 4).astype("int32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(2, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    callbacks = [Pace()]
    if "checkpoint" in args:
        path = args[args.index("checkpoint") + 1] + "/best.keras"
        callbacks.append(keras.callbacks.ModelCheckpoint(path, save_best_only=True, verbose=1))
    model.fit(x, y, epochs=2, batch_size=16, validation_split=0.2, verbose=verbose, callbacks=callbacks)
    if "evaluate" in args:
        model.evaluate(x, y, batch_size=64)
        model.predict(x, batch_size=64)


if __name__ == "__main__":
    main()
